"""The production scorer (termgate.scoring.scorer, DuckDB SQL) against the independent oracle
(tests/oracle.py): differential tests over random and awkward inputs, the way ranx is
checked against trec_eval. A new rule is written once in termgate/ and once in the
oracle; these tests say whether the two agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import oracle
from termgate.scoring import scorer as scorer_module
from termgate.config import Settings
from termgate.drift.judge import NoDriftJudge
from termgate.drift.embeddings import packaged_model_available
from termgate.errors import InputError
from termgate.evaluation import evaluate
from termgate.io import load_generated, load_golden_set
from termgate.scoring.metrics import format_pair
from termgate.models import Thresholds
from termgate.report import build_report, iter_report_json
from termgate.store import save_run

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
                  "drift_min": draw(st.sampled_from([0.5, 0.8, 1.0])),
                  "forbidden_fails": draw(st.sampled_from(["critical", "all", "none"]))}
    return golden, generated, thresholds


def _write(folder: Path, name: str, rows: list, bom: bool = False, crlf: bool = False) -> Path:
    path = folder / name
    text = "".join(json.dumps(r, ensure_ascii=bool(len(name) % 2)) + ("\r\n" if crlf else "\n") for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def _report(run) -> dict:
    report = json.loads(b"".join(iter_report_json(run)))
    for key in ("evaluation_id", "timestamp"):
        report.pop(key)
    return report


def _agrees(golden: Path, generated, thresholds: Thresholds | None = None, judge=None, errors=None,
            domain=None, **kw) -> dict:
    """Score with termgate and with the oracle; assert every per-query value and both hashes
    agree (floats to the last bit); return the production report."""
    thresholds = thresholds or Thresholds()
    judge = judge or NoDriftJudge()
    golden_set = load_golden_set(golden, domain)
    generated_set = load_generated(generated, golden_set.query_ids())
    expected_rows, generated_hash = oracle.score(golden_set, generated_set, thresholds, judge, errors, domain)
    source = generated_set.table(errors) if errors else generated
    run = evaluate(golden, source, thresholds=thresholds, drift_judge=judge, domain_context=domain,
                   settings=Settings(), author="t", source="test", **kw)
    try:
        report = _report(run)
        rows = report["per_query_results"]
        comparison = {"regression_status", "baseline_f1", "noise_floor", "within_noise"}
        assert [{k: v for k, v in r.items() if k not in comparison} for r in rows] == expected_rows
        assert run.golden_hash == oracle.golden_hash(golden_set)
        assert run.generated_hash == generated_hash
        assert report["summary"]["aggregate_f1"] == oracle.macro(expected_rows, "f1")
        assert report["summary"]["aggregate_precision"] == oracle.macro(expected_rows, "precision")
        assert _report(run)["per_query_results"] == build_report(run)["per_query_results"]
    finally:
        run.close()
    return report


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=dataset(), bom=st.booleans(), crlf=st.booleans(),
       domain=st.sampled_from([None, "Medical", "ＬＥＧＡＬ records", ""]),
       split=st.sampled_from([2, scorer_module.SPLIT]), mapping=st.booleans())
def test_scorer_agrees_with_the_oracle(tmp_path_factory, monkeypatch, data, bom, crlf, domain, split, mapping):
    """Also scored in two parts (as golden sets of scorer.SPLIT queries or more are), with a
    BOM, CRLF line ends and the mapping form (the validator hands those over as Arrow)."""
    monkeypatch.setattr(scorer_module, "SPLIT", split)
    folder = tmp_path_factory.mktemp("x")
    golden_rows, generated_rows, limits = data
    golden = _write(folder, "golden.jsonl", golden_rows, bom, crlf)
    if mapping:
        generated = folder / "gen.json"
        generated.write_text(json.dumps({r["query_id"]: r["terms"] for r in generated_rows}), encoding="utf-8")
    else:
        generated = _write(folder, "gen.jsonl", generated_rows)
    _agrees(golden, generated, Thresholds(**limits), domain=domain)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=dataset(), errored=st.sets(st.integers(0, 7), max_size=3))
def test_errored_items_agree_with_the_oracle(tmp_path_factory, data, errored):
    """The harness's route: generated rows handed over as Arrow, some items errored."""
    folder = tmp_path_factory.mktemp("e")
    golden_rows, generated_rows, limits = data
    golden = _write(folder, "golden.jsonl", golden_rows)
    generated = _write(folder, "gen.jsonl", generated_rows)
    errors = {f"q{i}": f"HTTP 500 after {i + 1} tries" for i in errored if i < len(golden_rows)}
    _agrees(golden, generated, Thresholds(**limits), errors=errors)


def _stored(db: Path) -> tuple[list, list]:
    with duckdb.connect(str(db), read_only=True) as con:
        queries = con.execute("SELECT * EXCLUDE (run_id) FROM query_results ORDER BY position").fetchall()
        terms = con.execute("SELECT * EXCLUDE (run_id) FROM term_rows ORDER BY ALL").fetchall()
    return queries, terms


def test_stored_term_rows_by_hand(tmp_path):
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
    run = evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t")
    save_run(tmp_path / "c.duckdb", run)
    queries, terms = _stored(tmp_path / "c.duckdb")
    assert ("q1", "mi", "FP", 0.3, 0.5, False, False, None, 0, 0) in terms  # underweight: FP ...
    assert ("q1", "mi", "FN", 0.3, 0.5, False, False, None, None, 0) in terms  # ... and its FN twin
    assert ("q1", "panic attack", "FP", 1.0, None, True, False, "forbidden term", 2, None) in terms
    # positions index the merged lists: "x" twice is one term, so "chest pain" is generated_terms[1]
    assert ("q3", "chest pain", "TP", 1.0, 0.0, False, False, None, 1, 0) in terms
    assert ("q2", "stroke", "FP", 1.0, None, False, False, None, 1, None) in terms
    assert len(terms) == 3 + 1 + 2 + 3  # q1: 3 generated + 1 missed, q2: 2 merged, q3: 3 merged
    assert [q[1] for q in queries] == ["q1", "q2", "q3"]


def test_with_baseline_and_llm_judge_agrees_with_the_oracle(tmp_path, monkeypatch):
    """Unjudged terms (an LLM that never answers usefully) and a baseline run, in two parts."""
    from termgate.scoring.regression import Baseline, BaselineRow
    from termgate.drift.resolve import resolve_judge
    from llm_server import LoopbackLLM

    monkeypatch.setattr(scorer_module, "SPLIT", 2)
    golden = _write(tmp_path, "golden.jsonl", [
        {"query_id": f"q{i}", "query": "heart attack", "context": {"domain": "medical"},
         "expected_expansions": [{"term": "MI"}, {"term": "myocardial infarction"}]} for i in range(6)])
    generated = _write(tmp_path, "gen.jsonl", [
        {"query_id": f"q{i}", "terms": ["mi", "banana"] if i % 2 else ["mi", "myocardial infarction"]}
        for i in range(6)])
    baseline = Baseline("base", "test", {f"q{i}": BaselineRow(0.8 + 0.2 * (i % 3) - 0.2, i % 2 == 0, 1.0, 1.0)
                                         for i in range(6)})
    server = LoopbackLLM()
    try:
        server.default = ("text", "not json")
        llm = Settings(llm={"base_url": server.url, "model": "judge-model", "max_tries": 1, "backoff": 0.01})
        judge = resolve_judge("llm", llm)
        report = _agrees(golden, generated, judge=judge, baseline=baseline)
    finally:
        server.close()
    rows = report["per_query_results"]
    assert rows[1]["unjudged_terms"] == ["banana"]
    # q1: F1 2/3 against a baseline 0.8 that failed: a drop of 0.133 > 0.1 regresses it
    assert rows[1]["regression_status"] == "regressed" and rows[1]["baseline_f1"] == 0.8
    assert report["gate"]["decision"] == "fail"
    assert any("regressed against baseline base" in r for r in report["gate"]["reasons"])


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




def _errors_or_agrees(golden: Path, generated: Path) -> None:
    """Bad input is an InputError naming file and line; input the validator accepts (a
    repeated key, a negative zero) is scored, and agrees with the oracle."""
    try:
        load_golden_set(golden)
        load_generated(generated, load_golden_set(golden).query_ids())
    except InputError as exc:
        with pytest.raises(InputError) as caught:
            evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t")
        assert caught.value.lines() == exc.lines()
        assert all(line.startswith(f"{p}:") for line in caught.value.lines() for p in [line.split(":")[0]])
        assert any(str(golden) in line or str(generated) in line for line in caught.value.lines())
        return
    _agrees(golden, generated)


@pytest.mark.parametrize("line,why", BAD_LINES, ids=[b[1] for b in BAD_LINES])
def test_awkward_golden_lines_are_named_or_agree(tmp_path, line, why):
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"query_id": "q0", "query": "a", "expected_expansions": []}\n' + line + "\n")
    _errors_or_agrees(golden, _write(tmp_path, "gen.jsonl", [{"query_id": "q0", "terms": ["a"]}]))


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
def test_awkward_generated_lines_are_named_or_agree(tmp_path, text, why):
    golden = _write(tmp_path, "golden.jsonl", [{"query_id": "q0", "query": "a", "expected_expansions": []}])
    generated = tmp_path / "gen.jsonl"
    generated.write_text(text + "\n")
    _errors_or_agrees(golden, generated)


def test_not_utf8_is_named(tmp_path):
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(b'{"query_id": "q0", "query": "caf\xe9", "expected_expansions": []}\n')
    with pytest.raises(InputError, match="encoding: not UTF-8"):
        evaluate(golden, _write(tmp_path, "gen.jsonl", []), drift_judge="none", settings=Settings(), author="t")


@given(value=st.floats(0, 1), limit=st.floats(0, 1))
@settings(max_examples=300, deadline=None)
def test_sql_fmt_pair_matches_python(value, limit):
    from termgate.scoring.scorer.database import connect_scorer

    con = connect_scorer()
    try:
        shown = con.execute("SELECT fmt_pair(?::DOUBLE, ?::DOUBLE)", [value, limit]).fetchall()[0][0]
    finally:
        con.close()
    assert shown == " < ".join(format_pair(value, limit))


@pytest.mark.skipif(not packaged_model_available(), reason="embedding extra not installed")
def test_embedding_judge_agrees_with_the_oracle(tmp_path, monkeypatch):
    """The default judge: candidates go out of DuckDB, verdicts come back in (two parts)."""
    from termgate.drift.resolve import resolve_judge

    monkeypatch.setattr(scorer_module, "SPLIT", 2)
    golden = _write(tmp_path, "golden.jsonl", [
        {"query_id": "q1", "query": "heart attack", "context": {"domain": "medical"},
         "expected_expansions": [{"term": "myocardial infarction"}, {"term": "MI"}], "forbidden_terms": ["panic attack"]},
        {"query_id": "q2", "query": "breach of contract", "context": {"domain": "legal"},
         "expected_expansions": [{"term": "contract violation"}]}])
    generated = _write(tmp_path, "gen.jsonl", [
        {"query_id": "q2", "terms": ["contract violation", "banana bread", "breach of agreement"]},
        {"query_id": "q1", "terms": ["MI", "cardiac arrest", "banana", "panic attack", {"term": "mi", "weight": 0.2}]}])
    report = _agrees(golden, generated, judge=resolve_judge("embedding", Settings()))
    drift = {r["query_id"]: r["drift_terms"] for r in report["per_query_results"]}
    assert "banana" in drift["q1"] and "panic attack" in drift["q1"] and "banana bread" in drift["q2"]


def test_a_path_starting_with_tilde_is_read_literally(tmp_path, monkeypatch):
    """DuckDB expands a leading ~; the scorer must read the file the user named."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "~").mkdir()
    _write(tmp_path / "~", "golden.jsonl", [{"query_id": "q0", "query": "a", "expected_expansions": [{"term": "mi"}]}])
    _write(tmp_path / "~", "gen.jsonl", [{"query_id": "q0", "terms": ["mi"]}])
    report = _agrees(Path("~/golden.jsonl"), Path("~/gen.jsonl"))
    assert [r["passed"] for r in report["per_query_results"]] == [True]


def test_a_run_on_a_busy_store_times_out_and_writes_nothing(tmp_path, monkeypatch):
    import subprocess
    import sys

    from termgate.errors import StoreBusyError
    from termgate.store import list_runs

    golden = _write(tmp_path, "golden.jsonl", [{"query_id": "q0", "query": "a", "expected_expansions": [{"term": "mi"}]}])
    generated = _write(tmp_path, "gen.jsonl", [{"query_id": "q0", "terms": ["mi"]}])
    run = evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t")
    db = tmp_path / "s.duckdb"
    save_run(db, run)
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb,time; c=duckdb.connect({str(db)!r}); "
                               "print('locked', flush=True); time.sleep(30)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("TERMGATE_STORE_TIMEOUT", "1")
        again = evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t")
        with pytest.raises(StoreBusyError, match="store busy"):
            save_run(db, again)
    finally:
        holder.kill()
        holder.wait()
    assert len(list_runs(db)) == 1
    save_run(db, again)  # once the lock is gone the same run stores normally
    assert len(list_runs(db)) == 2


def test_input_paths_are_recorded_tidied(tmp_path, monkeypatch):
    """A path Path() tidies (`./`, `//`) is stored and reported tidied."""
    golden = _write(tmp_path, "golden.jsonl", [{"query_id": "q1", "query": "mi", "expected_expansions": [{"term": "mi"}]}])
    _write(tmp_path, "gen.jsonl", [{"query_id": "q1", "terms": ["mi"]}])
    monkeypatch.chdir(tmp_path)
    run = evaluate("./golden.jsonl", ".//gen.jsonl", drift_judge="none", settings=Settings(), author="t")
    assert (run.golden_path, run.generated_path) == ("golden.jsonl", "gen.jsonl")
    assert golden.exists()


def test_a_large_set_is_scored_in_halves_and_agrees(tmp_path):
    """40,000 queries: past scorer.SPLIT, so scored in two halves on two cursors; every row
    still agrees with the oracle and is stored once, in golden order."""
    n = 40_000
    assert n >= scorer_module.SPLIT
    golden = _write(tmp_path, "golden.jsonl", [
        {"query_id": f"q{i}", "query": f"query {i}", "expected_expansions": [{"term": f"t{i % 97}"}, {"term": "Common"}],
         "forbidden_terms": ["bad"]} for i in range(n)])
    generated = _write(tmp_path, "gen.jsonl", [
        {"query_id": f"q{i}", "terms": ["common", "bad"] if i % 3 == 0 else [f"T{i % 97}", {"term": "x", "weight": 0.5}]}
        for i in range(n)])
    _agrees(golden, generated)
    run = evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t")
    save_run(tmp_path / "c.duckdb", run)
    with duckdb.connect(str(tmp_path / "c.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT count(*), count(DISTINCT position), min(position), max(position), "
                           "bool_and(query_id = 'q' || position) FROM query_results").fetchall()
    assert rows[0] == (n, n, 0, n - 1, True)


@pytest.mark.parametrize("golden_line", [
    '{"query_id": "q0", "query": "a", "expected_expansions": []}',                         # read directly
    '{"query_id": "q0", "query": "a:b\\u003ac", "expected_expansions": []}',  # handed over
])
def test_a_generated_table_for_unknown_queries_is_refused(tmp_path, golden_line):
    """The harness's route: rows for query_ids the golden set does not have are a usage
    error, whichever way the golden set is read, never silently dropped."""
    from termgate.errors import UsageError
    from termgate.io import GeneratedSet

    golden = tmp_path / "golden.jsonl"
    golden.write_text(golden_line + "\n", encoding="utf-8")
    table = GeneratedSet("test", {"q0": [("a", 1.0)], "q9": [("b", 1.0)]}).table()
    with pytest.raises(UsageError, match="1 query_ids not in the golden set"):
        evaluate(golden, table, drift_judge="none", settings=Settings(), author="t", source="test")
