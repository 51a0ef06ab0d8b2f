"""The columnar engine against the Python scorer, its reference implementation.

Both engines score the same files; their reports, stored rows and hashes must be equal
(floats to the last bit). Input the engine cannot vouch for must fall back to the Python
loaders, which name the problem.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalcore import columnar as engine_module
from evalcore.columnar import Fallback, score_files
from evalcore.config import Settings
from evalcore.drift import NoDriftJudge
from evalcore.embeddings import packaged_model_available
from evalcore.evaluation import evaluate
from evalcore.metrics import format_pair
from evalcore.models import Thresholds
from evalcore.report import build_report, iter_report_json
from evalcore.store import save_run

EXPECTED = ["heart attack", "Heart  Attack", "MI", "mi", "ＭＩ", "myocardial infarction", "cafe\u0301", "CAFÉ",
            "\tstroke ", "cva", "Straße", "STRASSE", "a/b <b>", "x'; DROP TABLE runs; --"]
FORBIDDEN = ["panic attack", "Panic Attack", "ｂａｎａｎａ", "banana"]
OTHER = ["angina", "chest pain", "Ölpest", "renal", "   spaced   out  "]
WEIGHTS = [0, 1, 0.0, 0.3, 0.5, 0.7, 1.0, 0.123456789, 1 / 3, 2 / 3, 0.6]

weights = st.sampled_from(WEIGHTS)
expected_entry = st.one_of(st.builds(lambda t: {"term": t}, st.sampled_from(EXPECTED)),
                           st.builds(lambda t, w: {"term": t, "min_weight": w}, st.sampled_from(EXPECTED), weights))
generated_entry = st.one_of(st.sampled_from(EXPECTED + FORBIDDEN + OTHER),
                            st.builds(lambda t, w: {"term": t, "weight": w},
                                      st.sampled_from(EXPECTED + FORBIDDEN + OTHER), weights),
                            st.builds(lambda t: {"term": t}, st.sampled_from(EXPECTED + OTHER)))
context = st.one_of(st.none(), st.just({}), st.builds(lambda d: {"domain": d}, st.sampled_from(
    ["medical", "Legal", "ＭＥＤＩＣＡＬ", "e-commerce", None, ""])),
    st.builds(lambda d, i: {"domain": d, "intent": i}, st.sampled_from(["legal", "Ärzte"]),
              st.sampled_from(["lookup", None])))


@st.composite
def dataset(draw):
    n = draw(st.integers(1, 8))
    golden, generated = [], []
    for i in range(n):
        row = {"query_id": f"q{i}", "query": draw(st.sampled_from(["heart attack", "Herzinfarkt ", "<i>mi</i>"])),
               "expected_expansions": draw(st.lists(expected_entry, max_size=5))}
        ctx = draw(context)
        if ctx is not None:
            row["context"] = ctx
        if draw(st.booleans()):
            row["forbidden_terms"] = draw(st.lists(st.sampled_from(FORBIDDEN), max_size=3))
        if draw(st.booleans()):
            row["critical"] = draw(st.booleans())
        golden.append(row)
        if draw(st.integers(0, 4)):  # sometimes no line at all: an empty expansion
            generated.append({"query_id": f"q{i}", "terms": draw(st.lists(generated_entry, max_size=7))})
    draw(st.randoms()).shuffle(generated)
    thresholds = {"precision_min": draw(st.sampled_from([0.0, 0.5, 0.6, 2 / 3, 1.0])),
                  "recall_min": draw(st.sampled_from([0.0, 0.5, 0.6, 1.0])),
                  "drift_min": draw(st.sampled_from([0.5, 0.8, 1.0]))}
    return golden, generated, thresholds


def _write(folder: Path, name: str, rows: list, bom: bool = False) -> Path:
    path = folder / name
    text = "".join(json.dumps(r, ensure_ascii=bool(len(name) % 2)) + "\n" for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def _both(monkeypatch, golden: Path, generated: Path, thresholds: Path | None, llm_settings=None, **kw):
    runs = []
    for engine in ("python", "columnar"):
        monkeypatch.setenv("EVALCORE_ENGINE", engine)
        runs.append(evaluate(golden, generated, thresholds_path=thresholds, settings=llm_settings or Settings(),
                             author="t", **kw))
    return runs


def _report(run) -> dict:
    report = json.loads(b"".join(iter_report_json(run)))
    for key in ("evaluation_id", "timestamp"):
        report.pop(key)
    return report


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=dataset(), bom=st.booleans(), domain=st.sampled_from([None, "Medical", "ＬＥＧＡＬ records", ""]),
       split=st.sampled_from([2, engine_module.SPLIT]))
def test_columnar_engine_equals_python_reference(tmp_path_factory, monkeypatch, data, bom, domain, split):
    """Also scored in two parts (as golden sets of engine_module.SPLIT queries or more are)."""
    monkeypatch.setattr(engine_module, "SPLIT", split)
    folder = tmp_path_factory.mktemp("x")
    golden_rows, generated_rows, thresholds = data
    golden = _write(folder, "golden.jsonl", golden_rows, bom)
    generated = _write(folder, "gen.jsonl", generated_rows)
    limits = folder / "t.json"
    limits.write_text(json.dumps(thresholds))
    reference, columnar = _both(monkeypatch, golden, generated, limits, drift_judge="none", domain_context=domain)
    assert reference.engine is None and columnar.engine is not None  # no fallback on valid input
    assert _report(columnar) == _report(reference)
    assert build_report(columnar)["per_query_results"] == build_report(reference)["per_query_results"]
    assert columnar.content_hash == reference.content_hash
    save_run(folder / "p.duckdb", reference)
    save_run(folder / "c.duckdb", columnar)
    assert _stored(folder / "c.duckdb") == _stored(folder / "p.duckdb")


def _stored(db: Path) -> tuple[list, list]:
    with duckdb.connect(str(db), read_only=True) as con:
        queries = con.execute("SELECT * EXCLUDE (run_id) FROM query_results ORDER BY position").fetchall()
        terms = con.execute("SELECT * EXCLUDE (run_id) FROM term_rows ORDER BY ALL").fetchall()
    return queries, terms


def test_columnar_store_rows_equal_python_store_rows(tmp_path, monkeypatch):
    golden = _write(tmp_path, "golden.jsonl", [
        {"query_id": "q1", "query": "heart attack", "context": {"domain": "medical"},
         "expected_expansions": [{"term": "MI", "min_weight": 0.5}, {"term": "myocardial infarction"}],
         "forbidden_terms": ["panic attack"], "critical": True},
        {"query_id": "q2", "query": "stroke", "expected_expansions": []},
        {"query_id": "q3", "query": "angina", "expected_expansions": [{"term": "chest pain"}]}])
    generated = _write(tmp_path, "gen.jsonl", [
        {"query_id": "q1", "terms": [{"term": "mi", "weight": 0.3}, "Myocardial  Infarction", "Panic Attack"]},
        {"query_id": "q2", "terms": ["CVA", "cva", {"term": "Cva", "weight": 0.4}, "stroke"]},
        {"query_id": "q3", "terms": ["X", "x", "chest pain", "angina"]}])
    reference, columnar = _both(monkeypatch, golden, generated, None, drift_judge="none")
    save_run(tmp_path / "p.duckdb", reference)
    save_run(tmp_path / "c.duckdb", columnar)
    assert _stored(tmp_path / "c.duckdb") == _stored(tmp_path / "p.duckdb")
    queries, terms = _stored(tmp_path / "c.duckdb")
    assert ("q1", "mi", "FP", 0.3, 0.5, False, False, None, 0, 0) in terms  # underweight: FP ...
    assert ("q1", "mi", "FN", 0.3, 0.5, False, False, None, None, 0) in terms  # ... and its FN twin
    assert ("q1", "panic attack", "FP", 1.0, None, True, False, "forbidden term", 2, None) in terms
    # positions index the merged lists: "x" twice is one term, so "chest pain" is generated_terms[1]
    assert ("q3", "chest pain", "TP", 1.0, 0.0, False, False, None, 1, 0) in terms
    assert ("q2", "stroke", "FP", 1.0, None, False, False, None, 1, None) in terms


def test_columnar_with_baseline_and_llm_judge_equals_python(tmp_path, monkeypatch):
    """Unjudged terms (an LLM that never answers usefully) and a baseline run, in two parts."""
    from llm_server import LoopbackLLM

    monkeypatch.setattr(engine_module, "SPLIT", 2)
    golden = _write(tmp_path, "golden.jsonl", [
        {"query_id": f"q{i}", "query": "heart attack", "context": {"domain": "medical"},
         "expected_expansions": [{"term": "MI"}, {"term": "myocardial infarction"}]} for i in range(6)])
    generated = _write(tmp_path, "gen.jsonl", [
        {"query_id": f"q{i}", "terms": ["mi", "banana"] if i % 2 else ["mi", "myocardial infarction"]}
        for i in range(6)])
    server = LoopbackLLM()
    try:
        server.default = ("text", "not json")
        llm = Settings(llm={"base_url": server.url, "model": "judge-model", "max_tries": 1, "backoff": 0.01})
        monkeypatch.setenv("EVALCORE_ENGINE", "python")
        base = evaluate(golden, generated, drift_judge="none", settings=llm, author="t")
        from evalcore.regression import Baseline, BaselineRow
        baseline = Baseline("base", "test", {s.query_id: BaselineRow(s.f1 + 0.2 * (i % 3) - 0.2, i % 2 == 0,
                                                                     s.precision, s.recall)
                                             for i, s in enumerate(base.scores)})
        reference, columnar = _both(monkeypatch, golden, generated, None, drift_judge="llm", baseline=baseline,
                                    llm_settings=llm)
    finally:
        server.close()
    assert columnar.engine is not None
    report = _report(columnar)
    assert report == _report(reference)
    assert report["per_query_results"][1]["unjudged_terms"] == ["banana"]
    assert report["per_query_results"][1]["regression_status"] in {"regressed", "improved", "unchanged"}
    assert any("could not be judged" in r for r in report["gate"]["reasons"]) or report["gate"]["decision"] == "fail"


BAD_LINES = [
    ('{"query_id": 7, "query": "a", "expected_expansions": []}', "number as query_id"),
    ('{"query_id": "q1", "query": "  ", "expected_expansions": []}', "blank query"),
    ('{"query_id": "q1", "query": "\\u3000", "expected_expansions": []}', "ideographic space query"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "x", "min_weight": "0.5"}]}', "string weight"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "x", "min_weight": true}]}', "bool weight"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "x", "min_weight": null}]}', "null weight"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "x", "min_weight": 1.5}]}', "weight > 1"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": " \\t "}]}', "term empty after normalising"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "x"}], "forbidden_terms": ["X"]}',
     "expected and forbidden"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [], "context": null}', "null context"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [], "critical": "yes"}', "string critical"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": {}}', "object as list"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": []} {"query_id": "q2"}', "two objects on a line"),
    ('[1, 2]', "not an object"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [', "malformed"),
    # DuckDB's reader forgives these; the Python loader (orjson) does not
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "mi"},],}', "trailing commas"),
    ('\f{"query_id": "q1", "query": "a", "expected_expansions": []}', "form feed before the object"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [], "score": NaN}', "NaN in an unknown key"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [], "score": 1e400}', "number out of range"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [], "x": ' + "[" * 1100 + "]" * 1100 + "}",
     "nesting deeper than 1024"),
    # duplicate keys: orjson keeps the last value, DuckDB's json_extract the first
    ('{"query_id": "q1", "query": "a", "expected_expansions": [], "critical": true, "critical": false}',
     "duplicate key"),
    ('{"query_id": "q1", "query": "a", "context": {"domain": "retail", "domain": "medical"}, '
     '"expected_expansions": []}', "duplicate key in context"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "mi", "term": "x"}]}',
     "duplicate key in an expected term"),
    ('{"query_id": "q1", "query": "a", "expected_expansions": [{"term": "mi", "min_weight": -0.0}]}',
     "negative zero"),
]


def _declines(golden: Path, generated: Path) -> None:
    """The engine hands over on purpose, not because a query of its own failed."""
    with pytest.raises(Fallback) as caught:
        score_files(golden, generated, Thresholds(), NoDriftJudge())
    assert not re.match(r"\w+(Error|Exception):", str(caught.value)), caught.value


@pytest.mark.parametrize("line,why", BAD_LINES, ids=[b[1] for b in BAD_LINES])
def test_engine_falls_back_on_golden_it_cannot_vouch_for(tmp_path, line, why):
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"query_id": "q0", "query": "a", "expected_expansions": []}\n' + line + "\n")
    _declines(golden, _write(tmp_path, "gen.jsonl", []))


BAD_GENERATED = [
    ('{"query_id": "q9", "terms": []}', "unknown query_id"),
    ('{"query_id": "q0", "terms": []}\n{"query_id": "q0", "terms": []}', "duplicate query_id"),
    ('{"query_id": "q0", "terms": [{"term": "x", "weight": true}]}', "bool weight"),
    ('{"query_id": "q0", "terms": [{"term": "x", "weight": null}]}', "null weight"),
    ('{"query_id": "q0", "terms": [{"term": 5}]}', "number term"),
    ('{"query_id": "q0", "terms": [""]}', "empty term"),
    ('{"query_id": "q0"}', "terms missing"),
    ('{"q0": ["x"]}', "mapping form"),
    ('{\n "q0": ["x"]\n}', "pretty mapping form"),
    ('{"query_id": "q0", "terms": ["mi",]}', "trailing comma"),
    ('\v{"query_id": "q0", "terms": ["mi"]}', "vertical tab before the object"),
    ('{"query_id": "q0", "terms": ["mi"], "score": NaN}', "NaN in an unknown key"),
    ('{"query_id": "q0", "terms": [{"term": "mi", "weight": 0.1, "weight": 0.9}]}', "duplicate weight key"),
    ('{"query_id": "q0", "terms": [{"term": "a", "weight": -0.0}, {"term": "A", "weight": 0.0}]}',
     "negative zero"),
]


@pytest.mark.parametrize("text,why", BAD_GENERATED, ids=[b[1] for b in BAD_GENERATED])
def test_engine_falls_back_on_generated_it_cannot_vouch_for(tmp_path, text, why):
    golden = _write(tmp_path, "golden.jsonl", [{"query_id": "q0", "query": "a", "expected_expansions": []}])
    generated = tmp_path / "gen.jsonl"
    generated.write_text(text + "\n")
    _declines(golden, generated)


def test_not_utf8_falls_back_and_cli_names_the_line(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(b'{"query_id": "q0", "query": "caf\xe9", "expected_expansions": []}\n')
    _declines(golden, _write(tmp_path, "gen.jsonl", []))


@given(value=st.floats(0, 1), limit=st.floats(0, 1))
@settings(max_examples=300, deadline=None)
def test_sql_fmt_pair_matches_python(value, limit):
    from evalcore.columnar import _connect

    con = _connect()
    try:
        shown = con.execute("SELECT fmt_pair(?::DOUBLE, ?::DOUBLE)", [value, limit]).fetchall()[0][0]
    finally:
        con.close()
    assert shown == " < ".join(format_pair(value, limit))


@pytest.mark.skipif(not packaged_model_available(), reason="embedding extra not installed")
def test_columnar_with_embedding_judge_equals_python(tmp_path, monkeypatch):
    """The default judge: candidates go out of DuckDB, verdicts come back in (two parts)."""
    monkeypatch.setattr(engine_module, "SPLIT", 2)
    golden = _write(tmp_path, "golden.jsonl", [
        {"query_id": "q1", "query": "heart attack", "context": {"domain": "medical"},
         "expected_expansions": [{"term": "myocardial infarction"}, {"term": "MI"}], "forbidden_terms": ["panic attack"]},
        {"query_id": "q2", "query": "breach of contract", "context": {"domain": "legal"},
         "expected_expansions": [{"term": "contract violation"}]}])
    generated = _write(tmp_path, "gen.jsonl", [
        {"query_id": "q2", "terms": ["contract violation", "banana bread", "breach of agreement"]},
        {"query_id": "q1", "terms": ["MI", "cardiac arrest", "banana", "panic attack", {"term": "mi", "weight": 0.2}]}])
    reference, columnar = _both(monkeypatch, golden, generated, None, drift_judge="embedding")
    assert columnar.engine is not None
    report = _report(columnar)
    assert report == _report(reference)
    drift = {r["query_id"]: r["drift_terms"] for r in report["per_query_results"]}
    assert "banana" in drift["q1"] and "panic attack" in drift["q1"] and "banana bread" in drift["q2"]


def test_a_path_starting_with_tilde_is_read_literally(tmp_path, monkeypatch):
    """DuckDB expands a leading ~; the engine must read the file the user named."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~").mkdir()
    _write(tmp_path / "~", "golden.jsonl", [{"query_id": "q0", "query": "a", "expected_expansions": [{"term": "mi"}]}])
    _write(tmp_path / "~", "gen.jsonl", [{"query_id": "q0", "terms": ["mi"]}])
    scored = score_files("~/golden.jsonl", "~/gen.jsonl", Thresholds(), NoDriftJudge())
    assert scored.total == 1 and scored.facts.passed.tolist() == [True]


def test_columnar_run_on_a_busy_store_times_out_and_writes_nothing(tmp_path, monkeypatch):
    import subprocess
    import sys

    from evalcore.errors import StoreBusyError
    from evalcore.store import list_runs

    golden = _write(tmp_path, "golden.jsonl", [{"query_id": "q0", "query": "a", "expected_expansions": [{"term": "mi"}]}])
    generated = _write(tmp_path, "gen.jsonl", [{"query_id": "q0", "terms": ["mi"]}])
    monkeypatch.setenv("EVALCORE_ENGINE", "columnar")
    run = evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t")
    assert run.engine is not None
    db = tmp_path / "s.duckdb"
    save_run(db, run)
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb,time; c=duckdb.connect({str(db)!r}); "
                               "print('locked', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("EVALCORE_STORE_TIMEOUT", "1")
        again = evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t")
        with pytest.raises(StoreBusyError, match="store busy"):
            save_run(db, again)
    finally:
        holder.kill()
        holder.wait()
    assert len(list_runs(db)) == 1
    save_run(db, again)  # once the lock is gone the same run stores normally
    assert len(list_runs(db)) == 2


def test_a_fault_after_the_llm_judge_is_an_error_not_a_second_judging(tmp_path, monkeypatch):
    """Falling back to the Python engine then would call the model again (SPEC §5: exact counts)."""
    import duckdb as _duckdb

    from evalcore import columnar
    from evalcore.columnar import EngineError
    from llm_server import LoopbackLLM

    golden = _write(tmp_path, "golden.jsonl", [{"query_id": "q0", "query": "heart attack",
                                                "expected_expansions": [{"term": "mi"}]}])
    generated = _write(tmp_path, "gen.jsonl", [{"query_id": "q0", "terms": ["mi", "banana"]}])

    def out_of_memory(*args, **kwargs):  # fault injection: the scoring step fails as under the memory cap
        raise _duckdb.OutOfMemoryException("could not allocate block")

    monkeypatch.setattr(columnar, "_score", out_of_memory)
    monkeypatch.setenv("EVALCORE_ENGINE", "columnar")
    server = LoopbackLLM()
    try:
        server.default = ("text", "not json")
        llm = Settings(llm={"base_url": server.url, "model": "judge-model", "max_tries": 1, "backoff": 0.01})
        with pytest.raises(EngineError, match="EVALCORE_ENGINE=python"):
            evaluate(golden, generated, drift_judge="llm", settings=llm, author="t")
        assert server.chat_calls == 1
    finally:
        server.close()


def test_both_engines_record_the_input_paths_alike(tmp_path, monkeypatch):
    """A path Path() tidies (`./`, `//`) is stored and reported the same by both engines."""
    golden = _write(tmp_path, "golden.jsonl", [{"query_id": "q1", "query": "mi", "expected_expansions": [{"term": "mi"}]}])
    generated = _write(tmp_path, "gen.jsonl", [{"query_id": "q1", "terms": ["mi"]}])
    monkeypatch.chdir(tmp_path)
    reference, columnar = _both(monkeypatch, "./golden.jsonl", ".//gen.jsonl", None, drift_judge="none")
    assert columnar.engine is not None
    assert (columnar.golden.path, columnar.generated_path) == (reference.golden.path, reference.generated_path)
    assert (columnar.golden.path, columnar.generated_path) == ("golden.jsonl", "gen.jsonl")


def test_a_large_set_is_scored_in_halves_and_stored_in_small_row_groups(tmp_path, monkeypatch):
    """40,000 queries: past columnar.SPLIT (two halves on two cursors) and past the store's
    write row-group size, so the run's rows fill several row groups (compressed on every
    core as they are inserted). The report still equals the reference's."""
    from evalcore.store.connection import WRITE_ROW_GROUP

    n = 40_000
    assert n >= engine_module.SPLIT and n > WRITE_ROW_GROUP
    golden = _write(tmp_path, "golden.jsonl", [
        {"query_id": f"q{i}", "query": f"query {i}", "expected_expansions": [{"term": f"t{i % 97}"}, {"term": "Common"}],
         "forbidden_terms": ["bad"]} for i in range(n)])
    generated = _write(tmp_path, "gen.jsonl", [
        {"query_id": f"q{i}", "terms": ["common", "bad"] if i % 3 == 0 else [f"T{i % 97}", {"term": "x", "weight": 0.5}]}
        for i in range(n)])
    reference, columnar = _both(monkeypatch, golden, generated, None, drift_judge="none")
    assert columnar.engine is not None
    assert _report(columnar) == _report(reference)
    save_run(tmp_path / "c.duckdb", columnar)
    with duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True) as con:
        groups = con.execute("SELECT count(DISTINCT row_group_id) FROM pragma_storage_info('query_results')").fetchall()
        rows = con.execute("SELECT count(*), min(position), max(position) FROM query_results").fetchall()
    assert groups[0][0] >= 2
    assert rows[0] == (n, 0, n - 1)
