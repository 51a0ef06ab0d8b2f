"""The store's contract on both backends (issue 15, item 8): each test takes `backend` (a
DuckDB file, then a PostgreSQL database on the session's server) and asserts the same
behaviour on each — the demo, the commands over stored runs, the harness's replies and
LLM cache, the vector cache, prompt evaluations, query history, flagged items, and the
dashboard's pages. Sign-off and the audit chain are test_signoff.py's, the store API's
round trip test_store.py's, on both backends as well.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from termgate.governance import signoff as so
from termgate import store
from termgate.cli import main
from termgate.errors import UsageError
from termgate.dashboard import APP as DASHBOARD_APP

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parent.parent


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


# ---------------------------------------------------------------- the demo


def _demo_store(db: str, folder: Path) -> str:
    """`termgate demo` into a new store, the drift judge off (CI time); its output."""
    config = folder / "termgate.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TERMGATE_CONFIG", str(config))
        result = cli("demo", "--db", db, "--data", ROOT / "data" / "demo")
    assert result.exit_code == 0, result.output + result.stderr
    return result.output


@pytest.fixture
def demo(request, backend, store_templates, tmp_path, monkeypatch):
    """(a store of its own holding the demo runs, the demo's output when it made them);
    the demo runs once per backend and session. TERMGATE_DB names the store (the dashboard)."""
    db, output = store_templates.copy(request, backend, "demo", _demo_store, tmp_path)
    monkeypatch.setenv("TERMGATE_DB", db)
    return db, output


def demo_ids(db: str) -> dict[tuple[str, str], str]:
    """(domain, prompt version) -> run id."""
    return {(r.name.split()[0], r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}


GATES = {"v1": {"medical": "review", "legal": "review", "ecommerce": "pass"},
         "v2": {"medical": "fail", "legal": "fail", "ecommerce": "fail"},
         "v3": {"medical": "review", "legal": "review", "ecommerce": "review"}}
"""SPEC §8: per domain a baseline that meets every threshold (high-risk ones await sign-off),
a candidate that regresses (fail), one that regresses nothing on the terms (review, or pass).
E-commerce v3 goes to review on retrieval: its 'wearable' for 'smartwatch' floods ecom-045's
top ten in the demo corpus (issue 34: better terms, worse search)."""


@pytest.mark.slow
def test_the_demo_stores_nine_runs_once_and_its_chain_verifies(demo, tmp_path, monkeypatch):
    db, output = demo
    made = re.findall(r"^(\w+)\s+(v\d)\s+gate (\w+)\s+run (\S+)\s+\((stored)\)$", output, re.M)
    assert [(d, v, g) for d, v, g, _, _ in made] == [(d, v, GATES[v][d]) for d in ("medical", "legal", "ecommerce")
                                                    for v in ("v1", "v2", "v3")]
    assert {r for *_, r, _ in made} == set(demo_ids(db).values())
    config = tmp_path / "termgate.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    again = cli("demo", "--db", db, "--data", ROOT / "data" / "demo")
    # nine runs and three prompt evaluations, all found
    assert again.exit_code == 0 and again.output.count("(already stored)") == 12 and "(stored)" not in again.output
    assert len(store.list_runs(db)) == 9 and len(store.list_prompt_evals(db)) == 3
    verify = cli("audit", "verify", "--db", db)
    assert verify.exit_code == 0 and "intact: 9 records" in verify.output, verify.output


def test_the_demo_stores_its_prompt_evaluations_and_the_prompts_page_compares_them(demo):
    db, output = demo
    made = re.findall(r"^prompts\s+(v\d)\s+average\s+(\S+)\s+pass rate\s+(\d+)%\s+eval (\S+)\s+\(stored\)$",
                      output, re.M)
    assert [(v, a, r) for v, a, r, _ in made] == [("v1", "3.9", "0"), ("v2", "6.8", "40"), ("v3", "8.6", "90")]
    digest = store.list_prompt_evals(db)["dataset_hash"].iloc[0]
    assert f"/prompts?dataset={digest[:12]}" in output
    at = page("prompts")
    assert at.selectbox(key="prompts_dataset").value == digest
    table = at.dataframe[0].value
    assert list(table["version"]) == ["v1", "v2", "v3"] and set(table["eval_id"]) == {e for *_, e in made}
    assert list(table["average"]) == ["3.90 ± 1.20", "6.80 ± 2.10", "8.60 ± 0.97"]
    assert any("Demo data" in i.value for i in at.info)


# ---------------------------------------------------------------- runs, show, compare, gate


@pytest.mark.slow
def test_runs_show_compare_and_gate_commands(demo):
    db, _ = demo
    ids = demo_ids(db)
    listed = cli("runs", "--db", db)
    assert listed.exit_code == 0 and all(rid in listed.output for rid in ids.values())
    newest = cli("runs", "--db", db, "--limit", "2")
    rows = [line.split()[0] for line in newest.output.splitlines()[2:]]
    assert rows == [ids[("ecommerce", "v3")], ids[("ecommerce", "v2")]]  # newest first

    shown = cli("show", ids[("medical", "v2")], "--db", db, "--failed-only")
    assert shown.exit_code == 0 and "gate: FAIL" in shown.output and "passed 41/48" in shown.output
    assert len(re.findall(r"^med-\d{3} .* FAIL ", shown.output, re.M)) == 7  # the seven failed queries only
    assert "panic attack" in shown.output and "forbidden term" in shown.output  # its drift terms

    compared = cli("compare", ids[("medical", "v2")], "--baseline", ids[("medical", "v1")], "--db", db)
    assert compared.exit_code == 0
    statuses = re.findall(r"^med-\d{3} .*?\b(regressed|improved|unchanged)\b", compared.output, re.M)
    assert len(statuses) == 48 and statuses.count("regressed") == 11

    for (domain, version), rid in ids.items():
        gate = cli("gate", rid, "--db", db)
        want = {"pass": 0, "fail": 1, "review": 3}[GATES[version][domain]]
        assert gate.exit_code == want and f"gate: {GATES[version][domain]}" in gate.output, (domain, version,
                                                                                               gate.output)
        assert "audit head: 9:" in gate.output
    unknown = cli("gate", "no-such-run", "--db", db)
    assert unknown.exit_code == 2 and "unknown run 'no-such-run'" in unknown.stderr
    assert cli("show", "no-such-run", "--db", db).exit_code == 2


def test_evaluate_against_a_stored_baseline(demo, tmp_path):
    """--baseline RUN reads the stored run's rows (and the paired statistics) from either store."""
    db, _ = demo
    ids = demo_ids(db)
    folder = ROOT / "data" / "demo" / "medical"
    result = cli("evaluate", "--golden", folder / "golden.jsonl", "--generated", folder / "v2-candidate.jsonl",
                 "--baseline", ids[("medical", "v1")], "--db", db, "--drift-judge", "none", "--json",
                 tmp_path / "r.json")
    assert result.exit_code == 1, result.output  # the regressing candidate fails, as it did in the demo
    report = json.loads((tmp_path / "r.json").read_text())
    stored = store.get_run(db, ids[("medical", "v2")])
    assert sorted(report["regression_analysis"]["regressed_queries"]) == sorted(stored["regressed_queries"])
    assert report["statistics"]["f1"]["n"] == 48 and report["statistics"]["f1"]["mean_delta"] < 0
    assert store.get_run(db, report["evaluation_id"])["baseline_id"] == ids[("medical", "v1")]


def test_runs_overview_query_history_and_flagged_items(demo):
    db, _ = demo
    overview = store.runs_overview(db)
    assert len(overview) == 9 and list(overview["created_at"]) == sorted(overview["created_at"], reverse=True)
    ids = demo_ids(db)
    for (domain, version), rid in ids.items():
        row = overview.set_index("run_id").loc[rid]
        assert row.gate_decision == GATES[version][domain] and row.total_queries == 48
    medical = overview.set_index("run_id").loc[ids[("medical", "v2")]]
    assert medical.regressed == 11 and medical.baseline_id == ids[("medical", "v1")]

    trend = store.metric_trend(db, store.get_run(db, ids[("medical", "v1")])["golden_name"])
    assert list(trend["prompt_version"]) == ["v1", "v2", "v3"] and list(trend["gate_decision"]) == ["review", "fail",
                                                                                                   "review"]
    found = store.find_query_ids(db, "MED-00")
    assert list(found["query_id"]) == [f"med-00{i}" for i in range(1, 10)] and set(found["runs"]) == {3}
    history = store.query_history(db, "med-001")
    assert list(history["prompt_version"]) == ["v1", "v2", "v3"]
    assert "panic attack" in list(history["drift_terms"].iloc[1]) and not history["passed"].iloc[1]
    assert set(history["missed"].iloc[1]) <= set(store.query_rows(db, ids[("medical", "v2")]).set_index(
        "query_id").loc["med-001", "expected_terms"])

    run_id = ids[("medical", "v2")]
    flagged = store.flagged_items(db, [run_id])
    run = store.get_run(db, run_id)
    queries = store.query_rows(db, run_id)
    by_kind = {k: list(g["query_id"]) for k, g in flagged.groupby("kind")}
    assert len(run["regressed_queries"]) == 11
    assert sorted(by_kind["regressed query"]) == sorted(run["regressed_queries"])
    assert by_kind["failed critical query"] == list(queries[queries["critical"] & ~queries["passed"]]["query_id"])
    assert sorted(flagged[flagged["kind"] == "drift term"]["term"]) == sorted(store.drift_terms(db, run_id)["term"])
    detail = flagged[flagged["kind"] == "regressed query"]["detail"].iloc[0]
    assert re.fullmatch(r"F1 \d\.\d{3} → \d\.\d{3}; lost correct: .+; new wrong: .+", detail)
    # sign-off shows exactly these, and for this high-risk run its golden revision nobody approved
    assert [i.kind for i in so.flagged_items(db, run_id)] == list(flagged["kind"]) + ["golden"]
    assert store.flagged_items(db, [ids[("medical", "v1")]]).empty  # a baseline: nothing to flag


def test_a_urls_password_is_never_printed(pg, pgdb, tmp_path):
    """PostgreSQL only (a file path has no password): every message naming the store shows
    the URL with its password blanked (SPEC §5)."""
    url = pg.url(pgdb.rsplit("/", 1)[1], password="s3kr1t-pass")  # the test server trusts any password
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "x", ["a"])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["a"]}])
    said = [cli("runs", "--db", url),
            cli("evaluate", "--golden", golden, "--generated", generated, "--db", url, "--drift-judge", "none"),
            cli("show", "no-such-run", "--db", url), cli("gate", "no-such-run", "--db", url),
            cli("evaluate", "--golden", golden, "--generated", generated, "--db", url, "--drift-judge", "none",
                "--baseline", "no-such-run")]
    assert [r.exit_code for r in said] == [0, 0, 2, 2, 2]
    assert "no runs in postgresql://***@127.0.0.1" in said[0].output
    assert "stored in postgresql://***@127.0.0.1" in said[1].output
    for result in said:
        assert "s3kr1t" not in result.output + result.stderr, result.output + result.stderr
    with pytest.raises(UsageError, match=r"postgresql://\*\*\*@") as refused:
        store.prompt_eval_results(url, "nope")
    assert "s3kr1t" not in str(refused.value)


# ---------------------------------------------------------------- harness replies and the LLM cache

EXPANSIONS = {"heart attack": ["myocardial infarction", "MI"], "stroke": ["cerebrovascular accident", "CVA"],
              "flu": ["influenza"]}


@pytest.fixture
def llm():
    server = LoopbackLLM()
    yield server
    server.close()


@pytest.mark.slow
def test_harness_replies_and_llm_cache(llm, backend, tmp_path, monkeypatch):
    """The harness stores each item's prompt and reply with the run; `termgate replies`
    reads them; parseable replies are cached (a rerun asks nothing), an unparseable one
    is not (a rerun asks exactly it again)."""
    monkeypatch.chdir(tmp_path)
    db = backend
    golden = write_jsonl(tmp_path / "golden.jsonl", [golden_row(f"q{i}", q, t) for i, (q, t) in
                                                     enumerate(EXPANSIONS.items())])
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Expand: {query}\nAnswer a JSON list.\n", encoding="utf-8")
    fixed = {"flu": False}

    def reply(body):
        query = body["messages"][-1]["content"].split("Expand: ")[1].split("\n")[0]
        if query == "flu" and not fixed["flu"]:
            return ("text", '["unclosed')
        return ("json", EXPANSIONS[query])
    llm.default = ("callable", reply)
    args = ["harness", "--golden", golden, "--prompt", prompt, "--model", "sut-model", "--base-url", llm.url,
            "--db", db, "--drift-judge", "none", "--max-tries", "1", "--concurrency", "2"]
    env = {"OPENAI_API_KEY": "test-key"}
    first = cli(*args, "--json", "r1.json", env=env)
    assert first.exit_code == 5, first.output  # incomplete: flu's reply is unparseable
    assert llm.chat_calls == 3
    run1 = json.loads((tmp_path / "r1.json").read_text())["evaluation_id"]

    replies = cli("replies", run1, "--db", db)
    assert replies.exit_code == 0 and f"run {run1}" in replies.output and "3 items, 1 errored" in replies.output
    assert "    Expand: heart attack" in replies.output and '["unclosed' in replies.output
    errored = json.loads(cli("replies", run1, "--errored", "--json", "--db", db).stdout)
    assert [(i["query_id"], i["reply"], i["terms"]) for i in errored] == [("q2", '["unclosed', [])]
    assert "unparseable reply" in errored[0]["error"]
    assert store.errored_queries(db, run1)[["query_id", "query"]].values.tolist() == [["q2", "flu"]]
    plain = cli("replies", "no-such-run", "--db", db)
    assert plain.exit_code == 2 and "unknown run" in plain.stderr

    fixed["flu"] = True
    second = cli(*args, "--json", "r2.json", env=env)
    assert second.exit_code == 0, second.output
    assert llm.chat_calls == 4  # only the errored item was asked again: the others came from the cache
    run2 = json.loads((tmp_path / "r2.json").read_text())["evaluation_id"]
    history = store.query_replies(db, "q2")
    assert list(history["run_id"]) == [run2, run1]  # newest first
    assert list(history["terms"].iloc[0]) == ["influenza"] and history["error"].iloc[1].startswith("unparseable")
    outputs = store.harness_outputs(db, run2)
    assert list(outputs["query_id"]) == ["q0", "q1", "q2"] and outputs["error"].isna().all()
    third = cli(*args, env=env)
    assert third.exit_code == 0 and llm.chat_calls == 4 and "0 calls, 3 from cache" in third.output


def test_llm_cache_keeps_existing_keys(backend):
    db = backend
    assert store.load_llm_cache(db, ["k1"]) == {}
    store.save_llm_cache(db, [("k1", "m", "first reply", 3, 4)])
    store.save_llm_cache(db, [("k1", "m", "another process's reply", 3, 4), ("k2", "m", "second", 1, 1)])
    assert store.load_llm_cache(db, ["k1", "k2", "k3"]) == {"k1": "first reply", "k2": "second"}


# ---------------------------------------------------------------- the vector cache


def test_vector_cache_round_trip_keeps_existing_keys(backend):
    db = backend
    cache = store.StoredVectors(db)
    assert cache.load("model-a", ["heart attack"]) == {}
    first = np.array([[0.25, -1.5, 3.0], [1.0, 0.0, 0.5]], dtype=np.float32)
    store.save_vectors(db, "model-a", ["heart attack", "x'); DROP TABLE embedding_cache; --"], first)
    store.save_vectors(db, "model-a", ["heart attack", "stroke"], np.array([[9, 9, 9], [7, 7, 7]], dtype=np.float32))
    store.save_vectors(db, "model-b", ["heart attack"], np.array([[5, 5, 5]], dtype=np.float32))
    got = store.load_vectors(db, "model-a", ["heart attack", "stroke", "x'); DROP TABLE embedding_cache; --",
                                            "absent"])
    assert set(got) == {"heart attack", "stroke", "x'); DROP TABLE embedding_cache; --"}
    assert got["heart attack"].tolist() == [0.25, -1.5, 3.0]  # the first vector stored is kept
    assert got["heart attack"].dtype == np.float32 and got["stroke"].tolist() == [7, 7, 7]
    assert got["x'); DROP TABLE embedding_cache; --"].tolist() == [1.0, 0.0, 0.5]
    assert cache.load("model-b", ["heart attack"])["heart attack"].tolist() == [5, 5, 5]


def test_lexicon_cache_round_trip_keeps_existing_entries_and_is_copied(backend, tmp_path, monkeypatch):
    db = backend
    cache = store.StoredLexicon(db)
    assert cache.load("wordnet-3.0/v1", ["stroke"]) == {}
    cache.save("wordnet-3.0/v1", {"stroke": '{"synsets": ["stroke.n.01"]}', "x'); DROP TABLE lexicon_cache; --": "{}"})
    cache.save("wordnet-3.0/v1", {"stroke": '{"synsets": []}', "café": '{"synsets": ["cafe.n.01"]}'})
    cache.save("wordnet-3.0/v2", {"stroke": '{"v": 2}'})
    got = cache.load("wordnet-3.0/v1", ["stroke", "café", "x'); DROP TABLE lexicon_cache; --", "absent", "stroke"])
    assert got == {"stroke": '{"synsets": ["stroke.n.01"]}', "café": '{"synsets": ["cafe.n.01"]}',
                   "x'); DROP TABLE lexicon_cache; --": "{}"}  # the first entry stored is kept
    assert cache.load("wordnet-3.0/v2", ["stroke"]) == {"stroke": '{"v": 2}'}
    copy = str(tmp_path / "copy.duckdb")
    result = CliRunner().invoke(main, ["store", "copy", "--from", db, "--to", copy])
    assert result.exit_code == 0, result.output
    # the copy keeps each entry's writer: on a file, a PostgreSQL role's entries are used once trusted
    from termgate.store.cache_writers import own_writer
    monkeypatch.setenv("TERMGATE_CACHE_TRUST", own_writer(db))
    assert store.StoredLexicon(copy).load("wordnet-3.0/v1", list(got)) == got


# ---------------------------------------------------------------- prompt evaluations


def _prompt_eval(db, eval_id, created_at, version, scores, dataset="d" * 64):
    save_row = {"eval_id": eval_id, "created_at": created_at, "name": f"{version} <b>run</b>",
                "dataset_path": "cases.json", "dataset_hash": dataset, "prompt_version": version, "model": "sut",
                "judge_model": "judge", "pass_threshold": 7.0, "total_cases": len(scores),
                "scored_cases": sum(s is not None for s in scores),
                "average_score": float(np.mean([s for s in scores if s is not None])),
                "pass_rate": sum(s is not None and s >= 7 for s in scores) / len(scores)}
    store.save_prompt_eval(db, save_row, [
        {"eval_id": eval_id, "case_index": i, "scenario": f"case {i}", "score": s, "passed": s is not None and s >= 7,
         "error": None if s is not None else "judge: unparseable", "strengths": json.dumps(["clear"])}
        for i, s in enumerate(scores)])


def test_prompt_evaluations_stored_and_read(backend):
    db = backend
    _prompt_eval(db, "e1", "2026-01-01T00:00:00Z", "v1", [7.0, 7.0, 7.0])
    _prompt_eval(db, "e2", "2026-01-02T00:00:00Z", "v2", [9.0, None, 3.0])
    _prompt_eval(db, "e3", "2026-01-03T00:00:00Z", "v1", [8.0, 8.0, 2.0])  # v1 again: its newest run counts
    _prompt_eval(db, "e4", "2026-01-04T00:00:00Z", "v9", [1.0], dataset="e" * 64)
    versions = store.prompt_eval_versions(db, "d" * 64)
    assert list(versions["version"]) == ["v2", "v1"] and list(versions["eval_id"]) == ["e2", "e3"]
    assert versions.set_index("version").loc["v2", "errored_cases"] == 1
    assert versions.set_index("version").loc["v1", "average_score"] == pytest.approx(6.0)
    matrix = store.prompt_eval_matrix(db, "d" * 64)
    assert matrix["v1"].tolist() == [8, 8, 2] and np.isnan(matrix["v2"].iloc[1])
    cases = store.prompt_eval_results(db, "e2")
    assert cases["case_index"].tolist() == [0, 1, 2] and cases["error"].iloc[1] == "judge: unparseable"
    assert json.loads(cases["strengths"].iloc[0]) == ["clear"]
    assert store.list_prompt_evals(db)["eval_id"].tolist() == ["e4", "e3", "e2", "e1"]
    assert store.list_prompt_evals(db, "e" * 64)["name"].tolist() == ["v9 <b>run</b>"]
    assert store.find_dataset_hash(db, "ddd") == "d" * 64 and store.find_dataset_hash(db, "f") is None
    with pytest.raises(UsageError, match="unknown prompt evaluation 'nope'"):
        store.prompt_eval_results(db, "nope")


# ---------------------------------------------------------------- the dashboard


def page(view: str, **params):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=60)
    at.switch_page(f"views/{view}.py")
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def test_dashboard_runs_and_compare_pages(demo):
    db, _ = demo
    ids = demo_ids(db)
    runs = page("runs").dataframe[0].value
    assert len(runs) == 9 and set(runs["gate"]) == {"PASS", "FAIL", "REVIEW"}
    assert (runs["gate"] == "FAIL").sum() == 3
    at = page("compare", run=ids[("medical", "v2")], baseline=ids[("medical", "v1")])
    rows = at.dataframe[0].value
    assert len(rows) == 48 and rows["status"].iloc[0] == "regressed"
    at.multiselect(key="cmp_status").set_value(["regressed"]).run()
    regressed = at.dataframe[0].value
    assert len(regressed) == 11 and set(regressed["query_id"]) == set(store.get_run(
        db, ids[("medical", "v2")])["regressed_queries"])


def test_dashboard_side_by_side_panel_and_its_next_query(demo):
    """The panel's reads (term rows, term lists, golden entry) run beside the pair's on the
    team store and read ahead for Next: what it shows is the store's, on both backends."""
    from test_side_by_side import badges, expected_chips, label_term, side_columns

    db, _ = demo
    data_clear()
    ids = demo_ids(db)
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    from termgate import comparison

    rows, _ = comparison.compare_page(db, run, base, comparison.CompareFilter(statuses=("regressed",)), 0, None)
    regressed = list(rows["query_id"])  # in the page's order
    at = page("compare", run=run, baseline=base, query=regressed[0])
    at.multiselect(key="cmp_status").set_value(["regressed"]).run()
    golden_hash = store.get_run(db, run)["golden_hash"]
    for query_id in regressed[:3]:  # the first as the link opens it, then two Nexts (read ahead)
        assert any(m.value == f"query {regressed.index(query_id) + 1} of {len(regressed)} in the filtered list"
                   for m in at.markdown)
        left, right = side_columns(at)
        for column, run_id in ((left, base), (right, run)):
            assert [(c, label_term(c, label)) for c, label, _ in badges(column)] == expected_chips(db, run_id, query_id)
        line, text = store.golden_entry(db, golden_hash, query_id)
        assert [c.value for c in at.code] == [text]
        assert any(e.label == f"Golden entry as stored: line {line:,} of the run's golden file" for e in at.expander)
        at.button(key="cmp_next").click().run()
        assert not at.exception


def data_clear() -> None:
    from termgate.dashboard import data

    data.clear()


def test_dashboard_regressions_and_query_history_pages(demo):
    db, _ = demo
    ids = demo_ids(db)
    at = page("regressions")
    assert len(at.expander) == 5  # medical, legal v2 and v3, ecommerce v2: the runs with flagged items
    assert any(ids[("medical", "v2")] in re.sub(r"\\(.)", r"\1", e.label) for e in at.expander)  # label escaped
    kinds = set().union(*(set(frame.value["kind"]) for frame in at.dataframe))
    assert kinds == {"regressed query", "failed critical query", "drift term"}
    history = page("query", query_id="med-001").dataframe[0].value
    assert list(history["prompt_version"]) == ["v1", "v2", "v3"]
    assert "panic attack" in history["drift_terms"].iloc[1]


class Upload:
    """What st.file_uploader hands the Import page: a name and the bytes."""

    def __init__(self, name: str, content: bytes):
        self.name, self._content = name, content

    def getvalue(self) -> bytes:
        return self._content


@pytest.mark.slow
def test_dashboard_import_records_a_run_in_the_store(demo, monkeypatch):
    """The Import page's child process writes to the dashboard's store (TERMGATE_DB)."""
    from termgate.dashboard.importer import run_import

    db, _ = demo
    golden = Upload("golden.jsonl", b'{"query_id": "q1", "query": "sneakers", "context": {"domain": "ecommerce"}, '
                                    b'"expected_expansions": [{"term": "trainers"}]}\n')
    result = run_import(golden, Upload("gen.jsonl", b'{"query_id": "q1", "terms": ["trainers"]}\n'),
                        name="uploaded", judge="none", author="carol")
    assert result.gate == "pass" and result.problems == [], result.problems
    assert store.get_run(db, result.run_id)["name"] == "uploaded" and len(store.list_runs(db)) == 10


def test_dashboard_signoff_page_approves_and_the_gate_sees_it(demo):
    db, _ = demo
    so.add_user(db, "alice", "approver", "alice-password", "medical")
    run_id = demo_ids(db)[("medical", "v3")]
    assert cli("gate", run_id, "--db", db).exit_code == 3
    at = page("signoff", run=run_id)
    assert "Audit chain" in at.success[0].value and "intact" in at.success[0].value
    at.text_input(key="auth_name").input("alice")
    at.text_input(key="auth_password").input("alice-password")
    next(b for b in at.sidebar.button if b.label == "Sign in").click()
    at.run()
    assert any("Signed in as **alice**" in c.value for c in at.sidebar.caption)
    boxes = [c for c in at.checkbox if c.key.startswith("so_ack_")]
    assert len(boxes) == len(so.flagged_items(db, run_id)) > 0
    for box in boxes:
        box.check()
    at.text_area(key=f"so_comment_{run_id}").input("reviewed the drift terms").run()
    assert not at.button(key="so_approve").disabled
    at.button(key="so_approve").click().run()
    assert any("Recorded approve" in s.value for s in at.success)
    gate = cli("gate", run_id, "--db", db)
    assert gate.exit_code == 0 and "releasable" in gate.output and "audit head: 11:" in gate.output, gate.output
    assert [r["actor"] for r in store.audit_records(db) if r["kind"] == "decision"] == ["alice"]


def test_dashboard_on_an_unreachable_server_says_so_in_one_line(pg, monkeypatch):
    monkeypatch.setenv("TERMGATE_DB", f"postgresql://dash:S3CRETPW@127.0.0.1:{pg.port + 1}/none")
    for name in ("runs", "compare", "signoff"):
        at = page(name)
        assert [e.value for e in at.error if "The store cannot be read" in e.value], name
        shown = " ".join(e.value for e in at.error) + " ".join(c.value for c in at.caption)
        assert "cannot connect to PostgreSQL" in shown.replace("\\", "") and "S3CRETPW" not in shown
