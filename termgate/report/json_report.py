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
from ..models import QUERY_COLUMNS
from ..sql import sql_literal

if TYPE_CHECKING:
    from ..scoring.run import EvaluationRun

__all__ = ["build_report", "report_json", "iter_report_json", "query_rows"]


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
            "terms_put_to_judge": int(run.facts.n_asked.sum()) if run.facts.n_asked is not None else 0,
            "terms_unjudged": int(run.facts.n_unjudged.sum()),
        },
        "per_query_results": query_rows(run) if rows else [],
        "regression_analysis": {
            "regression_detected": reg.detected,
            "regressed_queries": reg.regressed,
            "improved_queries": reg.improved,
            "delta_summary": reg.summary,
            "baseline_id": reg.baseline_id,
            "added_queries": reg.added,
            "removed_queries": reg.removed,
            "golden_set_changed": reg.golden_set_changed,
            "golden_changed_queries": reg.golden_changed,
            "mean_f1_delta": reg.mean_f1_delta,
        },
        "recommendations": run.recommendations,
        **({"statistics": run.statistics} if run.statistics is not None else {}),
        **({"retrieval": run.retrieval.report()} if run.retrieval is not None else {}),
        "gate": run.gate.model_dump(),
        "thresholds": run.thresholds.model_dump(),
        "micro": {
            "precision": agg.micro_precision, "recall": agg.micro_recall, "f1": agg.micro_f1,
            "true_positives": agg.tp, "false_positives": agg.fp, "false_negatives": agg.fn,
        },
        "run": {
            "name": run.name,
            "prompt_version": run.prompt_version,
            "golden_path": run.golden_path,
            "golden_name": run.golden_name,
            "generated_path": run.generated_path,
            "golden_hash": run.golden_hash,
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
            "termgate_version": __version__,
            "no_expansion": run.no_expansion,
            **({"golden_revision": run.golden_revision} if run.golden_revision is not None else {}),
            **({"cache": run.cache_use} if run.cache_use is not None else {}),
            **({"policy": run.policy} if run.policy is not None else {}),
        },
    }


def report_json(report: dict) -> bytes:
    """Serialise a whole report dict (compact UTF-8 JSON)."""
    return to_json(report)


_ROWS_MARK = "__termgate_rows__"


def _row_columns(run: EvaluationRun) -> str:
    """The per-query entry's keys (termgate.models.QUERY_COLUMNS) in the report's order; the
    comparison's only when the run has a baseline (and the noise floor's with repeats)."""
    present = set(run.queries.comparison_columns)
    return ", ".join(f"{column.name} AS {column.report}" for column in QUERY_COLUMNS
                     if column.report is not None and (not column.comparison or column.name in present))


def _rows_file(run: EvaluationRun) -> Path:
    """The per-query rows as one JSON array in a temporary file, written by DuckDB."""
    fd, name = tempfile.mkstemp(prefix="termgate-rows-", suffix=".json")
    os.close(fd)
    path = Path(name)
    con = run.queries.con.cursor()  # its own cursor: runs beside the store's insert
    try:
        con.execute(f"COPY ({run.queries.select_rows(_row_columns(run))}) TO {sql_literal(name)} "
                    "(FORMAT json, ARRAY true)")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    return path


def query_rows(run: EvaluationRun) -> list[dict]:
    """The report's per_query_results, in golden-set order."""
    path = _rows_file(run)
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
    path = _rows_file(run)
    try:
        yield before
        with path.open("rb") as rows:
            while chunk := rows.read(1 << 22):
                yield chunk  # DuckDB's array: JSON with tabs and newlines between rows
        yield after
    finally:
        path.unlink(missing_ok=True)
