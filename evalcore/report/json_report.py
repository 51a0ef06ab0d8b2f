"""The JSON report (SPEC §3): the schema's fields plus extension keys."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
from pydantic_core import to_json

from .. import __version__
from ..store.connection import sql_literal

if TYPE_CHECKING:
    from ..evaluation import EvaluationRun
    from ..scoring import QueryScore

__all__ = ["build_report", "report_json", "iter_report_json", "query_row"]


def query_row(s: QueryScore, status: str | None = None, baseline_f1: float | None = None) -> dict:
    """One per_query_results entry."""
    row = {
        "query_id": s.query_id,
        "original_query": s.query,
        "generated_terms": list(s.generated),
        "expected_terms": list(s.expected),
        "true_positives": s.true_positives,
        "false_positives": s.false_positives,
        "false_negatives": s.false_negatives,
        "precision": s.precision,
        "recall": s.recall,
        "f1": s.f1,
        "term_drift_score": s.term_drift_score,
        "drift_terms": s.drift_terms,
        "passed": s.passed,
        "failure_reasons": s.failure_reasons,
        "critical": s.critical,
        "domain": s.domain,
        "notes": s.notes,
        "weights": list(s.generated.values()),
        "drift_reasons": [s.drift_reasons[t] for t in s.drift_terms],
        "unjudged_terms": s.unjudged_terms,
        "error": s.error,
    }
    if status is not None:
        row["regression_status"] = status
        row["baseline_f1"] = baseline_f1
        if s.noise_floor is not None:
            row["noise_floor"] = s.noise_floor
            row["within_noise"] = s.within_noise
    return row


def build_report(run: EvaluationRun, rows: bool = True) -> dict:
    """The report as plain data, ready for JSON; rows follow the golden set's order."""
    agg = run.aggregate
    reg = run.regression
    return {
        "evaluation_id": run.evaluation_id,
        "timestamp": run.timestamp,
        "summary": {
            "total_queries": run.total,
            "passed": run.passed,
            "failed": run.total - run.passed,
            "aggregate_precision": agg.macro_precision,
            "aggregate_recall": agg.macro_recall,
            "aggregate_f1": agg.macro_f1,
            "mean_term_drift_score": agg.macro_drift,
            "regression_detected": reg.detected,
            "errored": run.errored,
        },
        "per_query_results": (_python_rows(run) if run.engine is None else _columnar_rows(run)) if rows else [],
        "regression_analysis": {
            "regression_detected": reg.detected,
            "regressed_queries": reg.regressed,
            "improved_queries": reg.improved,
            "delta_summary": reg.summary,
            "baseline_id": reg.baseline_id,
            "added_queries": reg.added,
            "removed_queries": reg.removed,
            "golden_set_changed": reg.golden_set_changed,
            "mean_f1_delta": reg.mean_f1_delta,
        },
        "recommendations": run.recommendations,
        **({"statistics": run.statistics} if run.statistics is not None else {}),
        "gate": run.gate.model_dump(),
        "thresholds": run.thresholds.model_dump(),
        "micro": {
            "precision": agg.micro_precision, "recall": agg.micro_recall, "f1": agg.micro_f1,
            "true_positives": agg.tp, "false_positives": agg.fp, "false_negatives": agg.fn,
        },
        "run": {
            "name": run.name,
            "prompt_version": run.prompt_version,
            "golden_path": run.golden.path,
            "generated_path": run.generated_path,
            "golden_hash": run.golden.content_hash,
            "generated_hash": run.generated_hash,
            "content_hash": run.content_hash,
            "domains": run.domains,
            "domain_context": run.domain_context,
            "high_risk": bool(run.high_risk_domains),
            "high_risk_domains": run.high_risk_domains,
            "drift_judge": run.judge.name,
            "drift_judge_config": run.judge.config(),
            "author": run.author,
            "evalcore_version": __version__,
        },
    }


def report_json(report: dict) -> bytes:
    """Serialise a whole report dict (compact UTF-8 JSON)."""
    return to_json(report)


_ROWS_MARK = "__evalcore_rows__"
CHUNK_ROWS = 20_000


def _python_rows(run: EvaluationRun) -> list[dict]:
    status, base_f1 = run.regression.status, run.regression.baseline_f1
    return [query_row(s, status.get(s.query_id), base_f1.get(s.query_id)) if status else query_row(s)
            for s in run.scores]


# query_row's keys, in its order, from the columnar engine's tables (see evalcore.columnar).
_COLUMNAR_ROWS = """
SELECT q.query_id, q.query AS original_query, q.generated_terms, q.expected_terms, q.true_positives,
       q.false_positives, q.false_negatives, q.precision, q.recall, q.f1, q.term_drift_score, q.drift_terms,
       q.passed, q.failure_reasons, q.critical, q.domain, q.notes,
       q.generated_weights AS weights, q.drift_reasons,
       q.unjudged_terms, NULL::VARCHAR AS error{side}
FROM q{join}{order}"""


def _columnar_rows_file(run: EvaluationRun) -> Path:
    """The per-query rows as one JSON array in a temporary file, written by DuckDB."""
    engine = run.engine
    side = "".join(f", s.{c}" for c in engine.side_columns)
    join = " LEFT JOIN side s USING (query_id)" if engine.side_columns else ""
    fd, name = tempfile.mkstemp(prefix="evalcore-rows-", suffix=".json")
    os.close(fd)
    path = Path(name)
    con = engine.con.cursor()  # its own connection: runs beside the store's insert
    try:
        # q is stored in golden-set order and DuckDB keeps insertion order, so only a join needs a sort
        order = " ORDER BY q.pos" if join else ""
        con.execute(f"COPY ({_COLUMNAR_ROWS.format(side=side, join=join, order=order)}) TO {sql_literal(name)} "
                    "(FORMAT json, ARRAY true)")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    return path


def _columnar_rows(run: EvaluationRun) -> list[dict]:
    path = _columnar_rows_file(run)
    try:
        return orjson.loads(path.read_bytes())
    finally:
        path.unlink(missing_ok=True)


def iter_report_json(run: EvaluationRun) -> Iterator[bytes]:
    """The JSON report of a run as byte chunks, so a million-query report never sits in
    memory whole. The same document as report_json(build_report(run))."""
    head = build_report(run, rows=False)
    head["per_query_results"] = _ROWS_MARK
    before, after = to_json(head).split(to_json(_ROWS_MARK), 1)
    if run.engine is not None:
        path = _columnar_rows_file(run)
        try:
            yield before
            with path.open("rb") as rows:
                while chunk := rows.read(1 << 22):
                    yield chunk  # DuckDB's array: JSON with tabs and newlines between rows
            yield after
        finally:
            path.unlink(missing_ok=True)
        return
    yield before + b"["
    status, base_f1 = run.regression.status, run.regression.baseline_f1
    for start in range(0, len(run.scores), CHUNK_ROWS):
        chunk = run.scores[start:start + CHUNK_ROWS]
        rows = [query_row(s, status.get(s.query_id), base_f1.get(s.query_id)) if status
                else query_row(s) for s in chunk]
        yield (b"," if start else b"") + orjson.dumps(rows)[1:-1]
    yield b"]" + after
