"""Rule 8 has one implementation: the evaluation's compare_to_baseline and the dashboard's
paged comparison of two stored runs must give every query the same status."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from termgate import comparison, store
from termgate.scoring.metrics import EPSILON
from termgate.scoring.regression import Baseline, BaselineRow, compare_to_baseline, pair_queries

TINY = EPSILON / 2   # inside the tolerance: counts in the query's favour
OVER = EPSILON * 2   # beyond it

# (base f1, base passed, f1, passed, regression_delta, status)
CASES = [
    (0.9, True, 0.8, True, 0.1, "unchanged"),             # dropped exactly delta (0.09999999999999998)
    (0.9, True, 0.8 - TINY, True, 0.1, "unchanged"),      # dropped delta + 0.5e-9: within the tolerance
    (0.9, True, 0.8 - OVER, True, 0.1, "regressed"),      # dropped delta + 2e-9
    (0.9, True, 0.75, True, 0.1, "regressed"),            # dropped 0.15
    (0.5, False, 0.6, False, 0.1, "improved"),            # rose exactly delta: an improvement
    (0.5, False, 0.6 - TINY, False, 0.1, "improved"),     # rose delta − 0.5e-9: within the tolerance
    (0.5, False, 0.6 - OVER, False, 0.1, "unchanged"),    # rose delta − 2e-9
    (0.7, True, 0.75, False, 0.1, "regressed"),           # passed, fails now, though F1 rose
    (0.3, True, 0.5, False, 0.1, "regressed"),            # passed, fails now: wins over a rise > delta
    (0.7, False, 0.65, True, 0.1, "improved"),            # failed, passes now, small drop
    (0.9, False, 0.7, True, 0.1, "regressed"),            # failed, passes now, but dropped 0.2
    (0.8, True, 0.8, True, 0.1, "unchanged"),
    (1.0, True, 0.0, False, 0.1, "regressed"),
    (0.0, False, 1.0, True, 0.1, "improved"),
    (0.5, True, 0.25, True, 0.25, "unchanged"),           # dropped exactly a delta of 0.25
    (0.5, True, 0.25 - OVER, True, 0.25, "regressed"),
    # delta 0: a drop inside the tolerance reads as a rise of exactly delta, i.e. improved
    (0.5, True, 0.5 - TINY, True, 0.0, "improved"),
    (0.5, True, 0.5 - OVER, True, 0.0, "regressed"),      # delta 0: any real drop
    (0.5, False, 0.5 + OVER, False, 0.0, "improved"),
]
DELTAS = sorted({c[4] for c in CASES})


def _insert_run(con, run_id: str, rows: list[tuple[str, float, bool]], thresholds: dict | None) -> None:
    con.execute("INSERT INTO runs (run_id, created_at, content_hash, gate_decision, thresholds) "
                "VALUES (?, '2026-01-01T00:00:00Z', ?, 'pass', ?)",
                [run_id, run_id, None if thresholds is None else json.dumps(thresholds)])
    for position, (query_id, f1, passed) in enumerate(rows):
        con.execute("INSERT INTO query_results (run_id, position, query_id, query, f1, passed, generated_terms, "
                    "expected_terms, true_positives, drift_terms, n_drift) VALUES (?, ?, ?, ?, ?, ?, [], [], [], [], 0)",
                    [run_id, position, query_id, f"query {query_id}", f1, passed])


def _sides(delta: float) -> tuple[list, list]:
    """Baseline and candidate rows of every case with this delta, plus one query on each side only."""
    cases = [(f"q{i}", c) for i, c in enumerate(CASES) if c[4] == delta]
    base = [(q, c[0], c[1]) for q, c in cases] + [("only-in-baseline", 1.0, True)]
    cand = [("only-in-candidate", 0.0, False)] + [(q, c[2], c[3]) for q, c in cases]
    return base, cand


@pytest.fixture
def stored(db: Path) -> Path:
    """A real store holding, per delta, a baseline run and a candidate run of the cases."""
    store.ensure_store(db)
    with store.connect(db, write=True) as con:
        for delta in DELTAS:
            base, cand = _sides(delta)
            _insert_run(con, f"base-{delta}", base, {})
            # the default delta (0.1) is also read when the run stored no regression_delta
            _insert_run(con, f"cand-{delta}", cand, {} if delta == 0.1 else {"regression_delta": delta})
    return db


def _expected(delta: float) -> dict[str, str]:
    out = {f"q{i}": c[5] for i, c in enumerate(CASES) if c[4] == delta}
    return out | {"only-in-candidate": "added", "only-in-baseline": "removed"}


@pytest.mark.parametrize("delta", DELTAS)
def test_evaluation_and_dashboard_agree_at_the_boundaries(stored, delta):
    base, cand = _sides(delta)
    baseline = Baseline(f"base-{delta}", "test", {q: BaselineRow(f1, passed) for q, f1, passed in base})
    evaluation = compare_to_baseline(cand, baseline, delta)
    from_evaluation = evaluation.status | {q: "removed" for q in evaluation.removed}

    df, total = comparison.compare_page(stored, f"cand-{delta}", f"base-{delta}",
                                        comparison.CompareFilter(sort="golden order"), 0, None)
    from_dashboard = dict(zip(df["query_id"], df["status"]))

    assert from_dashboard == from_evaluation == _expected(delta)
    assert total == len(base) + 1
    head = comparison.pair_runs(stored, f"cand-{delta}", f"base-{delta}").headline()
    assert {s: head[s] for s in comparison.STATUSES} == {
        s: sum(v == s for v in from_evaluation.values()) for s in comparison.STATUSES}


def test_dashboard_filter_by_status_uses_the_same_statuses(stored):
    wanted = comparison.CompareFilter(statuses=("regressed",))
    df, total = comparison.compare_page(stored, "cand-0.1", "base-0.1", wanted, 0, None)
    assert set(df["query_id"]) == {q for q, s in _expected(0.1).items() if s == "regressed"} and total == len(df)


def test_compare_to_baseline_keeps_golden_order_and_its_figures():
    rows = [("c", 0.5, True), ("new", 0.0, False), ("a", 0.2, False), ("b", 0.9, True)]
    baseline = Baseline("base", "test", {"b": BaselineRow(0.9, True), "gone": BaselineRow(1.0, True),
                                         "a": BaselineRow(0.5, True), "c": BaselineRow(0.3, False)})
    result = compare_to_baseline(rows, baseline, 0.1)
    assert list(result.status) == ["c", "new", "a", "b"]
    assert result.status == {"c": "improved", "new": "added", "a": "regressed", "b": "unchanged"}
    assert result.regressed == ["a"] and result.improved == ["c"]
    assert result.added == ["new"] and result.removed == ["gone"]
    assert result.baseline_f1 == {"c": 0.3, "a": 0.5, "b": 0.9}
    assert result.mean_f1_delta == ((0.5 - 0.3) + (0.2 - 0.5) + (0.9 - 0.9)) / 3  # summed in golden order
    assert result.summary.startswith("Against baseline base: 1 regressed, 1 improved, 1 unchanged of 3 shared")


def test_pair_queries_refuses_columns_it_would_shadow():
    import pyarrow as pa
    side = pa.table({"query_id": ["q"], "f1": [1.0], "passed": [True]})
    with pytest.raises(ValueError, match="status"):
        pair_queries(side.append_column("status", pa.array(["x"])), side, 0.1)


@pytest.mark.slow
def test_stored_statuses_equal_the_dashboards_for_each_run_and_its_baseline(demo_store):
    """What the evaluation stored (compare_to_baseline at scoring time) is what Compare shows."""
    runs = store.runs_overview(demo_store)
    pairs = [(r.run_id, r.baseline_id) for r in runs.itertuples() if isinstance(r.baseline_id, str)]
    assert pairs
    for run_id, baseline_id in pairs:
        stored = store.query_rows(demo_store, run_id)
        df, _ = comparison.compare_page(demo_store, run_id, baseline_id, comparison.CompareFilter(), 0, None)
        shown = dict(zip(df["query_id"], df["status"]))
        assert {q: shown[q] for q in stored["query_id"]} == dict(zip(stored["query_id"], stored["regression_status"]))


@pytest.mark.slow
def test_pair_statistics_equal_the_ones_the_evaluation_stored(demo_store):
    """Compare's intervals and p-values (PairedRuns.statistics over the stored rows) are the
    report's statistics block, computed at scoring time from the in-memory run."""
    runs = store.runs_overview(demo_store)
    pairs = [(r.run_id, r.baseline_id) for r in runs.itertuples() if isinstance(r.baseline_id, str)]
    assert pairs
    for run_id, baseline_id in pairs:
        stored = json.loads(store.get_run(demo_store, run_id)["statistics"])
        stored.pop("noise", None)
        shown = comparison.pair_runs(demo_store, run_id, baseline_id).statistics()
        assert shown["f1"]["n"] > 0
        assert shown == stored


# ---------------------------------------------------------------- the side-by-side view's reads


@pytest.mark.slow
def test_walk_follows_the_pages_order_and_says_when_a_query_is_not_in_it(stored):
    pair = comparison.pair_runs(stored, "cand-0.1", "base-0.1")
    for flt in (comparison.CompareFilter(), comparison.CompareFilter(statuses=("regressed",), sort="golden order")):
        order = list(pair.page(flt, 0, None)[0]["query_id"])
        walks = [pair.walk(flt, q) for q in order]
        assert [w.position for w in walks] == list(range(1, len(order) + 1))
        assert {w.total for w in walks} == {len(order)}
        assert [w.next for w in walks] == order[1:] + [None]
        assert [w.previous for w in walks] == [None] + order[:-1]
    regressed = comparison.CompareFilter(statuses=("regressed",))
    outside = pair.walk(regressed, "only-in-candidate")  # added: not in the regressed list
    first = pair.page(regressed, 0, 1)[0]["query_id"].iloc[0]
    assert outside == comparison.Walk(None, pair.page(regressed, 0, 1)[1], None, first)


def test_query_reads_both_sides_of_one_query(stored):
    pair = comparison.pair_runs(stored, "cand-0.1", "base-0.1")
    row = pair.query("q3")  # (0.9, True) -> (0.75, True): regressed
    assert (row["base_f1"], row["f1"], row["status"]) == (0.9, 0.75, "regressed")
    assert pair.query("only-in-baseline")["status"] == "removed" and pair.query("nope") is None


@pytest.mark.slow
def test_search_normalises_text_and_fields_with_the_term_rule(db):
    """`CAFÉ`, a decomposed `café` and full-width letters find what rule 1 makes equal. Rule 1
    keeps accents (NFKC, casefold), so `cafe` is another word and finds only itself."""
    store.ensure_store(db)
    with store.connect(db, write=True) as con:
        for run_id in ("base", "cand"):
            _insert_run(con, run_id, [("drink-1", 1.0, True), ("ＤＲＩＮＫ-2", 1.0, True), ("plain", 1.0, True)], {})
        con.execute("UPDATE query_results SET query = 'Café  Crème' WHERE query_id = 'drink-1'")
        con.execute("UPDATE query_results SET query = 'cafe latte' WHERE query_id = 'plain'")
    pair = comparison.pair_runs(db, "cand", "base")
    found = lambda text: set(pair.page(comparison.CompareFilter(text=text), 0, None)[0]["query_id"])  # noqa: E731
    assert found("CAFÉ") == found("cafe\u0301 crème") == found("  café   CRÈME ") == {"drink-1"}
    assert found("drink-2") == found("ＤＲＩＮＫ") - {"drink-1"} == {"ＤＲＩＮＫ-2"}
    assert found("drink") == {"drink-1", "ＤＲＩＮＫ-2"}
    assert found("cafe") == {"plain"}  # no accent folding: not a rule of SPEC §2
    assert found("") == found("   ") == {"drink-1", "ＤＲＩＮＫ-2", "plain"}


def test_default_baseline_never_picks_another_golden_set():
    import pandas as pd

    runs = pd.DataFrame([  # run_id, created_at, golden_name, golden_hash (its revision), baseline_id
        ("a1", "2026-01-01T00:00:01Z", "set-a", "g-a", None), ("b1", "2026-01-01T00:00:02Z", "set-b", "g-b", None),
        ("a2", "2026-01-01T00:00:03Z", "set-a", "g-a2", None), ("a3", "2026-01-01T00:00:03Z", "set-a", "g-a", None),
        ("a4", "2026-01-01T00:00:04Z", "set-a", "g-a", "gone"), ("b2", "2026-01-01T00:00:05Z", "set-b", "g-b", "a1"),
        ("x", "2026-01-01T00:00:06Z", None, None, None),
    ], columns=["run_id", "created_at", "golden_name", "golden_hash", "baseline_id"]).iloc[::-1]  # newest first
    choose = lambda rid: comparison.default_baseline(runs, rid)  # noqa: E731
    assert choose("b2").baseline_id == "a1"  # recorded, though on another golden set ...
    assert comparison.golden_sets_differ(runs, "b2", "a1")  # ... and said so
    assert choose("a4").baseline_id == "a3"  # recorded one gone: latest earlier on set-a (a3 after a2 at a tie)
    assert "gone is not in this store" in choose("a4").why
    assert choose("a3").baseline_id == "a2" and choose("a2").baseline_id == "a1"  # any revision of the set
    assert choose("b1").baseline_id is None and choose("a1").baseline_id is None  # no earlier run on its set
    assert choose("x").baseline_id is None  # no golden set named: nothing shares it
    assert comparison.golden_sets_differ(runs, "a4", "a1") is None  # one revision
    assert comparison.golden_sets_differ(runs, "a2", "a1") == comparison.OTHER_REVISION
    assert comparison.golden_sets_differ(runs, "x", "a1") is None  # unknown is not "different"


# ---------------------------------------------------------------- golden names (issue 31 item 16)


@pytest.mark.slow
def test_the_same_content_under_two_golden_names_is_reported(db, tmp_path):
    """SPEC §1.1: two names are two golden sets, whatever the content; the evaluation's
    summary and recommendations, and `termgate compare`, say so."""
    from click.testing import CliRunner

    from termgate.cli import main
    from conftest import golden_row, write_jsonl

    golden = write_jsonl(tmp_path / "golden.jsonl", [golden_row("q1", "one", ["a", "b"])])
    generated = write_jsonl(tmp_path / "generated.jsonl", [{"query_id": "q1", "terms": ["a", "b"]}])

    def evaluate(*extra):
        result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                           "--db", str(db), "--drift-judge", "none", *extra])
        assert result.exit_code == 0, result.output
        return result

    evaluate("--golden-name", "cardio", "-q")
    base_id = store.runs_overview(db)["run_id"].iloc[0]
    shown = evaluate("--golden-name", "cardiology", "--baseline", base_id, "--json", str(tmp_path / "r.json"))
    report = json.loads((tmp_path / "r.json").read_text())
    analysis = report["regression_analysis"]
    assert analysis["golden_set_changed"] and analysis["regressed_queries"] == []
    assert "another name ('cardio', this run's 'cardiology') and the same content" in analysis["delta_summary"]
    assert "another name ('cardio'" in shown.output  # the CLI's summary line
    assert any("--golden-name 'cardio'" in r for r in report["recommendations"])
    compared = CliRunner().invoke(main, ["compare", report["evaluation_id"], "--baseline", base_id, "--db", str(db)])
    assert compared.exit_code == 0
    assert "named 'cardio', this run's 'cardiology', with the same content" in compared.stderr


def test_golden_note_for_each_pair_of_names_and_revisions():
    same = comparison.golden_note(("a", "h1"), ("a", "h1"))
    assert same is None
    assert comparison.golden_note(("a", "h1"), ("b", "h1")) == \
        "The baseline's golden set is named 'b', this run's 'a', with the same content: under two names they are " \
        "two golden sets (the trend, the noise floor, approvals and the comment marker go by name); run with " \
        "--golden-name 'b' to keep one set."
    assert comparison.golden_note(("a", "h2"), ("a", "h1")) == comparison.OTHER_REVISION
    assert comparison.golden_note(("a", "h2"), ("b", "h1")) == comparison.DIFFERENT_GOLDEN_SET
    assert comparison.golden_note((None, "h1"), ("b", "h1")) is None  # a name not recorded: cannot tell


# ---------------------------------------------------------------- "newly failing" (issue 31 item 9)


@pytest.fixture
def newly_failing(db, tmp_path):
    """Stored: a baseline where q1 passes with F1 0.8 (a, b of a, b, c) and a run where it
    fails with F1 0.857 (a, b, c and the forbidden x: drift score 0.75 < 0.8)."""
    from click.testing import CliRunner

    from termgate.cli import main
    from conftest import golden_row, write_jsonl

    golden = write_jsonl(tmp_path / "golden.jsonl", [golden_row("q1", "one", ["a", "b", "c"], forbidden=["x"]),
                                                     golden_row("q2", "two", ["d"])])
    ids = []
    for n, terms in enumerate((["a", "b"], ["a", "b", "c", "x"])):
        generated = write_jsonl(tmp_path / f"c{n}.jsonl", [{"query_id": "q1", "terms": terms},
                                                           {"query_id": "q2", "terms": ["d"]}])
        base = ["--baseline", ids[0]] if ids else []
        result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                           "--db", str(db), "--drift-judge", "none", "-q", *base])
        assert result.exit_code in (0, 1), result.output  # the gate fails on macro recall: no matter
        ids.append(store.runs_overview(db)["run_id"].iloc[0])
    return db, ids[1], ids[0]


@pytest.mark.slow
def test_cli_and_dashboard_say_newly_failing_where_f1_did_not_fall(newly_failing):
    from click.testing import CliRunner

    from termgate.cli import main
    from termgate.dashboard import compare_view

    db, run_id, base_id = newly_failing
    assert list(store.get_run(db, run_id)["regressed_queries"]) == ["q1"]  # the rule and the stored list
    shown = CliRunner().invoke(main, ["show", run_id, "--db", str(db)])
    assert "newly failing" in shown.output and "1 of them newly failing" in shown.output
    compared = CliRunner().invoke(main, ["compare", run_id, "--baseline", base_id, "--db", str(db)])
    assert "newly failing" in compared.output
    df, _ = comparison.compare_page(db, run_id, base_id, comparison.CompareFilter(), 0, None)
    assert list(df["status"]) == ["regressed", "unchanged"]  # the status value stays
    assert list(compare_view._table(df)["status"]) == ["newly failing", "unchanged"]  # Compare's table
    detail = store.flagged_items(db, [run_id]).set_index("kind").loc["regressed query", "detail"]
    assert detail.startswith("newly failing (passed in the baseline, fails now): F1 0.800 → 0.857")
    history = store.query_history(db, "q1")
    assert list(history["baseline_f1"].isna()) == [True, False]  # what the Query page labels by


# ---------------------------------------------------------------- forbidden_fails (issue 31 item 14)


@pytest.fixture
def rule_change(db, tmp_path):
    """A baseline stored as a run recorded before forbidden_fails existed (its thresholds lack
    the key: it was scored under `none`), and the same expansions evaluated against it under
    the new default `critical`. q1 is critical and generates the forbidden x: drift score
    0.8 = drift_min, so it passed under `none` and fails under `critical`."""
    import duckdb
    from click.testing import CliRunner

    from termgate.cli import main
    from conftest import golden_row, write_jsonl

    golden = write_jsonl(tmp_path / "golden.jsonl", [
        golden_row("q1", "one", ["a", "b", "c", "d"], forbidden=["x"], critical=True),
        golden_row("q2", "two", ["e"])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["a", "b", "c", "d", "x"]},
                                                   {"query_id": "q2", "terms": ["e"]}])
    none = tmp_path / "none.json"
    none.write_text('{"forbidden_fails": "none"}', encoding="utf-8")

    def evaluate(*extra):
        result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                           "--db", str(db), "--drift-judge", "none", *extra])
        assert result.exit_code in (0, 1), result.output
        return result

    evaluate("--thresholds", str(none), "-q")
    base_id = store.runs_overview(db)["run_id"].iloc[0]
    with duckdb.connect(str(db)) as con:  # as a run stored before the key existed
        (stored,), = con.execute("SELECT thresholds FROM runs WHERE run_id = ?", [base_id]).fetchall()
        old = {k: v for k, v in json.loads(stored).items() if k != "forbidden_fails"}
        con.execute("UPDATE runs SET thresholds = ? WHERE run_id = ?", [json.dumps(old), base_id])
    shown = evaluate("--baseline", base_id, "--json", str(tmp_path / "r.json"))
    return db, json.loads((tmp_path / "r.json").read_text()), base_id, shown


@pytest.mark.slow
def test_a_baseline_scored_under_another_forbidden_rule_is_said_not_regressed(rule_change):
    db, report, base_id, shown = rule_change
    assert store.load_baseline(db, base_id).forbidden_fails == "none"  # an old stored run still loads
    q1 = report["per_query_results"][0]
    assert (q1["passed"], q1["failure_reasons"]) == (False, ["forbidden term: x"])  # fails under the new rule
    assert report["gate"]["decision"] == "fail"  # a critical query failed: the gate says so …
    assert report["gate"]["reasons"] == ["1 critical query failed: q1"]  # … and not as a regression
    analysis = report["regression_analysis"]
    assert analysis["regressed_queries"] == [] and q1["regression_status"] == "unchanged"
    said = "the baseline was scored under other pass rules (forbidden_fails none, this run critical)"
    assert said in analysis["delta_summary"] and said in shown.output
    assert any(r.startswith("The baseline was scored under other pass rules (forbidden_fails none, this run "
                            "critical)") for r in report["recommendations"])
    # the dashboard's Compare and `termgate compare` read the rule change the same way
    paired = comparison.pair_runs(db, report["evaluation_id"], base_id)
    assert paired.table.column("status").to_pylist() == ["unchanged", "unchanged"]
    assert paired.rules_changed.startswith("The baseline was scored under other pass rules (forbidden_fails none")
    from click.testing import CliRunner
    from termgate.cli import main
    compared = CliRunner().invoke(main, ["compare", report["evaluation_id"], "--baseline", base_id, "--db", str(db)])
    assert "note: The baseline was scored under other pass rules (forbidden_fails none" in compared.stderr


@pytest.mark.slow
def test_under_one_rule_there_is_no_note(rule_change, tmp_path):
    db, report, _, _ = rule_change
    invoke_cli(["evaluate", "--golden", str(tmp_path / "golden.jsonl"), "--generated", str(tmp_path / "c.jsonl"),
                "--db", str(db), "--drift-judge", "none", "--baseline", report["evaluation_id"],
                "--json", str(tmp_path / "r2.json")])
    analysis = json.loads((tmp_path / "r2.json").read_text())["regression_analysis"]
    assert "pass rules" not in analysis["delta_summary"]  # both under `critical`: no note
    assert analysis["regressed_queries"] == []  # q1 failed in both


@pytest.mark.parametrize("current, baseline, as_baseline", [
    # passed, failure_reasons, drift_reasons, critical -> pass/fail under the baseline's rule
    ("critical", "none", [True, True, False, True]),    # q0 failed only by the rule; q2 by its recall too
    ("none", "critical", [False, True, False, True]),   # only the critical q0 holds a forbidden term
    ("critical", "all", [False, False, False, True]),   # q3's drift term is not forbidden
])
def test_passed_under_reads_a_row_as_another_rule_would(current, baseline, as_baseline):
    import pyarrow as pa
    from termgate.scoring.regression import passed_under

    rows = {  # as scored under `current`
        "critical": {"passed": [False, True, False, True],
                     "failure_reasons": [["forbidden term: x"], [], ["recall 0.50 < 0.60", "forbidden term: x"],
                                         ["underweight: a 0.10 < 0.50"]]},
        "none": {"passed": [True, True, False, True],
                 "failure_reasons": [[], [], ["recall 0.50 < 0.60"], ["underweight: a 0.10 < 0.50"]]},
    }[current]
    side = pa.table({**rows, "drift_reasons": [["forbidden term"], ["forbidden term"], ["forbidden term"], ["x"]],
                     "critical": [True, False, True, True]})
    assert passed_under(side, baseline).to_pylist() == as_baseline


def invoke_cli(args):
    from click.testing import CliRunner
    from termgate.cli import main

    result = CliRunner().invoke(main, args)
    assert result.exit_code in (0, 1), result.output
    return result


@pytest.mark.slow
def test_a_baseline_report_reads_a_missing_forbidden_fails_as_none_and_refuses_a_bad_one(rule_change, tmp_path):
    from termgate.errors import InputError
    from termgate.io import load_baseline_report

    _, report, _, _ = rule_change
    assert report["thresholds"]["forbidden_fails"] == "critical"
    path = tmp_path / "base.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    assert load_baseline_report(path).forbidden_fails == "critical"
    del report["thresholds"]["forbidden_fails"]  # a report written before the key existed
    path.write_text(json.dumps(report), encoding="utf-8")
    assert load_baseline_report(path).forbidden_fails == "none"
    report["thresholds"]["forbidden_fails"] = "sometimes"
    path.write_text(json.dumps(report, indent=1), encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_baseline_report(path)
    problem, = info.value.problems
    assert (problem.file, problem.field) == (str(path), "thresholds.forbidden_fails") and problem.line > 1
    assert '"critical", "all" or "none" (got "sometimes")' in problem.message


@pytest.mark.slow
def test_a_run_stored_by_the_last_evalcore_is_a_baseline_scored_under_none(tmp_path):
    """Issue 31 item 14: a stored run whose thresholds lack forbidden_fails loads as a
    baseline scored under `none`; against it, the new default `critical` gives every query
    the status `none` gives (only the pass/fail rule changed), and the summary says why."""
    from termgate.config import Settings
    from termgate.drift.judge import NoDriftJudge
    from termgate.evaluation import evaluate
    from termgate.models import Thresholds
    from test_legacy_stores import APPROVED, unpack

    db = str(unpack(tmp_path / "legacy.duckdb"))
    base = store.load_baseline(db, APPROVED)  # medical v3
    assert "forbidden_fails" not in base.thresholds and base.forbidden_fails == "none"
    demo = Path(__file__).resolve().parent.parent / "termgate" / "demo_data" / "medical"
    runs = {rule: evaluate(demo / "golden.jsonl", demo / "v2-candidate.jsonl", thresholds=Thresholds(forbidden_fails=rule),
                           drift_judge=NoDriftJudge(), baseline=base, settings=Settings(), author="t",
                           golden_name="demo/medical") for rule in ("critical", "none")}
    try:
        assert runs["critical"].regression.status == runs["none"].regression.status
        assert "other pass rules (forbidden_fails none, this run critical)" in runs["critical"].regression.summary
        assert "pass rules" not in runs["none"].regression.summary
    finally:
        for run in runs.values():
            run.close()
