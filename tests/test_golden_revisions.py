"""Golden-set identity and revisions (SPEC §1.1, §2 rule 8): a golden set is named by
--golden-name (default: its path as given, tidied) and its content hash is the revision.
Compared across two revisions of one set, a query whose golden entry changed is
golden_changed: never regressed or improved, listed, left out of the statistics. On both
store backends, and with a baseline report file."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from click.testing import CliRunner

from termgate import comparison, store
from termgate.governance import signoff as so
from termgate.cli import main
from termgate.scoring.regression import pair_queries, revisions_of_one_set
from termgate.dashboard import APP as DASHBOARD_APP

from conftest import golden_row, run_sql, write_jsonl


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# ---------------------------------------------------------------- the rule


def side(f1: list[float], entries: list[str | None]) -> pa.Table:
    return pa.table({"query_id": [f"q{i}" for i in range(len(f1))], "f1": f1, "passed": [f >= 0.5 for f in f1],
                     "golden_entry_hash": pa.array(entries, pa.string())})


def test_a_changed_entry_is_golden_changed_only_between_revisions_of_one_set():
    base = side([1.0, 1.0, 1.0, 1.0], ["a", "b", "c", None])
    cand = side([0.0, 0.0, 1.0, 0.0], ["a", "B", "C", "d"])  # q1 and q2 changed; q3 has no recorded entry
    across = dict(zip(*(pair_queries(cand, base, 0.1, revisions=True).column(n).to_pylist()
                        for n in ("query_id", "status"))))
    # q0 dropped on the same entry: regressed; q1 dropped on a changed one: golden_changed
    assert across == {"q0": "regressed", "q1": "golden_changed", "q2": "golden_changed", "q3": "regressed"}
    within = pair_queries(cand, base, 0.1, revisions=False).column("status").to_pylist()
    assert within == ["regressed", "regressed", "unchanged", "regressed"]


@pytest.mark.parametrize("current, baseline, expected", [
    (("g", "h2"), ("g", "h1"), True),
    (("g", "h1"), ("g", "h1"), False),    # one revision
    (("g", "h2"), ("other", "h1"), False),  # two golden sets
    ((None, "h2"), (None, "h1"), False),   # unnamed: no set to be a revision of
])
def test_revisions_of_one_set(current, baseline, expected):
    assert revisions_of_one_set(current, baseline) is expected


# ---------------------------------------------------------------- end to end


ROWS = [golden_row("q1", "heart attack", ["myocardial infarction", "mi"], domain="medical"),
        golden_row("q2", "stroke", ["cerebrovascular accident", "cva"], domain="medical"),
        golden_row("q3", "flu", ["influenza"], domain="medical")]
GENERATED = [{"query_id": "q1", "terms": ["myocardial infarction", "mi"]},
             {"query_id": "q2", "terms": ["cerebrovascular accident", "cva"]},
             {"query_id": "q3", "terms": ["influenza"]}]


def revise(path, rows):
    """The next revision: q2 expects a term the model never generates (its F1 drops)."""
    changed = [dict(r) for r in rows]
    changed[1] = golden_row("q2", "stroke", ["cerebrovascular accident", "cva", "brain attack"], domain="medical")
    return write_jsonl(path, changed)


@pytest.fixture
def two_revisions(backend, tmp_path):
    (tmp_path / "v1").mkdir()
    golden = write_jsonl(tmp_path / "v1" / "golden.jsonl", ROWS)
    generated = write_jsonl(tmp_path / "generated.jsonl", GENERATED)
    first = cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "medical-golden",
                "--db", backend, "--drift-judge", "none", "--json", tmp_path / "base.json", "-q")
    assert first.exit_code in (0, 3), first.output
    (tmp_path / "v2").mkdir()
    return backend, revise(tmp_path / "v2" / "golden.jsonl", ROWS), generated, store.list_runs(backend)["run_id"].iloc[0]


def test_across_revisions_the_changed_query_is_listed_not_regressed(two_revisions, tmp_path):
    db, golden, generated, base_id = two_revisions
    result = cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "medical-golden",
                 "--baseline", base_id, "--db", db, "--drift-judge", "none", "--json", tmp_path / "r.json", "-q")
    report = json.loads((tmp_path / "r.json").read_text())
    analysis = report["regression_analysis"]
    assert analysis["golden_changed_queries"] == ["q2"] and analysis["regressed_queries"] == []
    assert not analysis["regression_detected"] and result.exit_code in (0, 3), result.output
    assert report["run"]["golden_name"] == "medical-golden"
    assert "another revision of this golden set" in analysis["delta_summary"]
    assert any("golden_changed" in r for r in report["recommendations"])
    rows = {q["query_id"]: q for q in report["per_query_results"]}
    assert rows["q2"]["regression_status"] == "golden_changed" and rows["q2"]["f1"] < 1.0
    assert rows["q1"]["golden_entry_hash"] == json.loads((tmp_path / "base.json").read_text())[
        "per_query_results"][0]["golden_entry_hash"]  # an unchanged entry keeps its digest
    assert report["statistics"]["f1"]["n"] == 2  # q2 left out of the paired statistics
    # the store keeps the name, the entry digests and the list; Compare shows the same statuses
    run_id = report["evaluation_id"]
    stored = store.get_run(db, run_id)
    assert stored["golden_name"] == "medical-golden" and list(stored["golden_changed_queries"]) == ["q2"]
    df, _ = comparison.compare_page(db, run_id, base_id, comparison.CompareFilter(), 0, None)
    assert dict(zip(df["query_id"], df["status"])) == {"q1": "unchanged", "q2": "golden_changed", "q3": "unchanged"}
    assert comparison.pair_runs(db, run_id, base_id).statistics()["f1"]["n"] == 2
    assert so.verify_chain(db).ok


def test_the_same_revisions_under_two_names_are_two_golden_sets(two_revisions, tmp_path):
    db, golden, generated, base_id = two_revisions
    cli("evaluate", "--golden", golden, "--generated", generated, "--baseline", base_id, "--db", db,
        "--drift-judge", "none", "--json", tmp_path / "r.json", "-q")  # default name: the v2 path
    analysis = json.loads((tmp_path / "r.json").read_text())["regression_analysis"]
    assert analysis["golden_changed_queries"] == [] and analysis["regressed_queries"] == ["q2"]
    assert analysis["golden_set_changed"] and "a different golden set" in analysis["delta_summary"]


def test_compare_picks_and_names_the_baseline_by_the_golden_sets_name(two_revisions, tmp_path):
    db, golden, generated, base_id = two_revisions
    cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "medical-golden", "--db", db,
        "--drift-judge", "none", "-q")  # no --baseline: Compare falls back to the latest run on the set
    cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none", "-q")
    runs = store.runs_overview(db)
    other, named = runs["run_id"].iloc[0], runs["run_id"].iloc[1]
    assert list(runs["golden_name"].iloc[:3]) == [str(golden), "medical-golden", "medical-golden"]
    assert comparison.default_baseline(runs, named).baseline_id == base_id  # another revision, same name
    assert comparison.default_baseline(runs, other).baseline_id is None  # its own name: no earlier run
    assert comparison.golden_sets_differ(runs, named, base_id) == comparison.OTHER_REVISION
    assert comparison.golden_sets_differ(runs, other, base_id) == comparison.DIFFERENT_GOLDEN_SET
    assert list(store.metric_trend(db, "medical-golden")["run_id"]) == [base_id, named]


def test_a_baseline_report_file_carries_the_name_and_entries(two_revisions, tmp_path):
    db, golden, generated, _ = two_revisions
    cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "medical-golden",
        "--baseline", tmp_path / "base.json", "--no-store", "--drift-judge", "none", "--json", tmp_path / "r.json",
        "-q")
    assert json.loads((tmp_path / "r.json").read_text())["regression_analysis"]["golden_changed_queries"] == ["q2"]


def test_the_chain_notices_a_golden_name_cleared_in_the_store(two_revisions):
    db, _, _, base_id = two_revisions
    assert so.verify_chain(db).ok
    run_sql(db, ("UPDATE runs SET golden_name = NULL WHERE run_id = ?", [base_id]))  # back to the older form
    assert not so.verify_chain(db).ok


def test_an_entry_digest_cleared_in_the_store_is_caught(two_revisions):
    db, _, _, base_id = two_revisions
    run_sql(db, ("UPDATE query_results SET golden_entry_hash = NULL WHERE run_id = ? AND query_id = 'q2'",
                 [base_id]))
    report = so.verify_chain(db)
    assert not report.ok and "rows differ" in report.message


def test_an_empty_golden_name_is_refused(tmp_path):
    golden = write_jsonl(tmp_path / "golden.jsonl", ROWS)
    generated = write_jsonl(tmp_path / "generated.jsonl", GENERATED)
    result = cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "  ", "--no-store",
                 "--drift-judge", "none")
    assert result.exit_code == 2 and "--golden-name: empty" in result.output


def test_compare_page_lists_golden_changed_apart_and_says_why(two_revisions, tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    db, golden, generated, base_id = two_revisions
    cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "medical-golden",
        "--baseline", base_id, "--db", db, "--drift-judge", "none", "-q")
    run_id = store.list_runs(db)["run_id"].iloc[0]
    monkeypatch.setenv("TERMGATE_DB", db)
    at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=60)
    at.switch_page("views/compare.py")
    at.query_params.update(run=run_id, baseline=base_id)
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert any("another revision of this golden set" in w.value for w in at.warning), [w.value for w in at.warning]
    assert any("1 golden_changed" in m.value.replace("\\_", "_") for m in at.markdown)
    rows = at.dataframe[0].value
    assert dict(zip(rows["query_id"], rows["status"]))["q2"] == "golden_changed"
