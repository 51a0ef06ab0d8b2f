"""The per-query result row is defined once (termgate.models.QUERY_COLUMNS): the scorer's
table, the store's DDL and the JSON report's keys are held to it here."""

from __future__ import annotations

import duckdb

from termgate.report import query_rows
from termgate.config import Settings
from termgate.evaluation import evaluate
from termgate.models import QUERY_COLUMNS, PerQueryResult
from termgate.scoring.regression import Baseline, BaselineRow
from termgate.store import save_run

from conftest import golden_row, write_jsonl


def _run(tmp_path, baseline=None):
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "heart attack", ["mi"]), golden_row("q2", "x", [])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["mi", "banana"]}])
    return evaluate(golden, generated, drift_judge="none", settings=Settings(), author="t", baseline=baseline)


def test_the_scorer_computes_every_column_of_the_row(tmp_path):
    run = _run(tmp_path)
    scored = {r[0]: r[1] for r in run.queries.con.execute("DESCRIBE query_scores").fetchall()}
    for column in QUERY_COLUMNS:
        if column.comparison:
            continue
        assert column.name in scored, column.name
        wanted = "INTEGER" if column.name.startswith("n_") or column.name == "position" else column.sql_type
        assert scored[column.name].replace("BIGINT", "INTEGER") == wanted, column.name


def test_the_store_keeps_exactly_the_stored_columns(tmp_path):
    run = _run(tmp_path)
    save_run(tmp_path / "s.duckdb", run)
    with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
        ddl = {r[0]: r[1] for r in con.execute("DESCRIBE query_results").fetchall()}
    assert set(ddl) - {"run_id"} == {c.name for c in QUERY_COLUMNS if c.stored}
    for column in QUERY_COLUMNS:
        if column.stored:
            assert ddl[column.name] == column.sql_type, column.name


def test_the_report_has_exactly_the_report_columns(tmp_path):
    baseline = Baseline("b", "test", {"q1": BaselineRow(1.0, True, 1.0, 1.0), "q2": BaselineRow(0.0, False)})
    plain, compared = query_rows(_run(tmp_path)), query_rows(_run(tmp_path, baseline))
    report_keys = [c.report for c in QUERY_COLUMNS if c.report is not None and not c.comparison]
    assert list(plain[0]) == report_keys
    assert list(compared[0]) == report_keys + ["regression_status", "baseline_f1"]
    assert set(report_keys) == set(PerQueryResult.model_fields)
    assert compared[0]["regression_status"] == "regressed"  # F1 2/3 < 1.0 - 0.1
