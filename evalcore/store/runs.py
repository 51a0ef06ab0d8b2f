"""Writing and reading runs, per-query rows and per-term rows."""

from __future__ import annotations

import json
from itertools import accumulate, chain
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from .. import __version__
from ..errors import UnknownRunError
from ..regression import Baseline, BaselineRow
from .connection import attach, connect, migrate

if TYPE_CHECKING:
    import pandas as pd

    from ..evaluation import EvaluationRun

CHUNK_QUERIES = 100_000

# ---------------------------------------------------------------- writing


RUN_INSERT_COLUMNS = (
    "run_id", "created_at", "name", "prompt_version", "golden_path", "generated_path", "golden_hash",
    "generated_hash", "content_hash", "domains", "high_risk_domains", "domain_context", "drift_judge",
    "drift_judge_config", "author", "evalcore_version", "baseline_id", "gate_decision", "gate_reasons",
    "total_queries", "passed", "failed", "errored", "aggregate_precision", "aggregate_recall", "aggregate_f1",
    "mean_term_drift_score", "micro_precision", "micro_recall", "micro_f1", "micro_tp", "micro_fp", "micro_fn",
    "regression_detected", "regressed_queries", "improved_queries", "added_queries", "removed_queries",
    "delta_summary", "golden_set_changed", "mean_f1_delta", "thresholds", "recommendations", "statistics")


def _run_row(run: EvaluationRun) -> list:
    agg, reg = run.aggregate, run.regression
    return [
        run.evaluation_id, run.timestamp, run.name, run.prompt_version, run.golden.path,
        run.generated_path, run.golden.content_hash, run.generated_hash, run.content_hash,
        run.domains, run.high_risk_domains, run.domain_context, run.judge.name,
        json.dumps(run.judge.config(), sort_keys=True), run.author,
        __version__, reg.baseline_id, run.gate.decision, run.gate.reasons,
        run.total, run.passed, run.total - run.passed, run.errored,
        agg.macro_precision, agg.macro_recall, agg.macro_f1, agg.macro_drift,
        agg.micro_precision, agg.micro_recall, agg.micro_f1, agg.tp, agg.fp, agg.fn,
        reg.detected, reg.regressed, reg.improved, reg.added, reg.removed, reg.summary,
        reg.golden_set_changed, reg.mean_f1_delta, run.thresholds.model_dump_json(),
        run.recommendations, None if run.statistics is None else json.dumps(run.statistics),
    ]


# Term rows are derived in DuckDB from the list columns, so Python never loops per term.
_INSERT_GENERATED_TERMS = """
INSERT INTO term_rows
SELECT run_id, query_id, term,
       CASE WHEN list_contains(true_positives, term) THEN 'TP' ELSE 'FP' END,
       weight, expected_min_weights[list_position(expected_terms, term)],
       list_contains(drift_terms, term), list_contains(unjudged_terms, term),
       drift_reasons[list_position(drift_terms, term)], gen_pos,
       list_position(expected_terms, term) - 1
FROM (SELECT run_id, query_id, true_positives, expected_terms, expected_min_weights, drift_terms,
             unjudged_terms, drift_reasons, unnest(generated_terms) AS term,
             unnest(generated_weights) AS weight,
             unnest(range(len(generated_terms))) AS gen_pos
      FROM query_results WHERE run_id = ?)"""
_INSERT_MISSED_TERMS = """
INSERT INTO term_rows
SELECT run_id, query_id, term, 'FN', generated_weights[list_position(generated_terms, term)],
       expected_min_weights[list_position(expected_terms, term)], false, false, NULL, NULL,
       list_position(expected_terms, term) - 1
FROM (SELECT run_id, query_id, generated_terms, generated_weights, expected_terms,
             expected_min_weights,
             unnest(list_filter(expected_terms, lambda t: NOT list_contains(true_positives, t))) AS term
      FROM query_results WHERE run_id = ?)"""


def _list_column(lists: list, kind: pa.DataType) -> pa.Array:
    """A list<kind> column from per-query iterables, built from one flat array plus offsets
    (far faster in pyarrow than converting a list of lists)."""
    offsets = pa.array(list(accumulate((len(x) for x in lists), initial=0)), pa.int32())
    return pa.ListArray.from_arrays(offsets, pa.array(list(chain.from_iterable(lists)), kind))


def _query_table(run: EvaluationRun, start: int, stop: int) -> pa.Table:
    """One column at a time with comprehensions: no per-query Python bookkeeping."""
    scores = run.scores[start:stop]
    status, base_f1 = run.regression.status, run.regression.baseline_f1
    text, floats = pa.string(), pa.float64()
    columns = {
        "run_id": pa.array([run.evaluation_id] * len(scores), text),
        "position": pa.array(range(start, stop), pa.int32()),
        "query_id": [s.query_id for s in scores],
        "query": [s.query for s in scores],
        "domain": pa.array([s.domain for s in scores], text),
        "critical": [s.critical for s in scores],
        "precision": [s.precision for s in scores],
        "recall": [s.recall for s in scores],
        "f1": [s.f1 for s in scores],
        "term_drift_score": [s.term_drift_score for s in scores],
        "passed": [s.passed for s in scores],
        "error": pa.array([s.error for s in scores], text),
        "n_generated": [len(s.generated) for s in scores],
        "n_expected": [len(s.expected) for s in scores],
        "n_tp": [len(s.true_positives) for s in scores],
        "n_fp": [len(s.false_positives) for s in scores],
        "n_fn": [len(s.false_negatives) for s in scores],
        "n_drift": [len(s.drift_terms) for s in scores],
        "regression_status": pa.array([status.get(s.query_id) for s in scores], text),
        "noise_floor": pa.array([s.noise_floor for s in scores], pa.float64()),
        "within_noise": pa.array([s.within_noise if s.noise_floor is not None else None for s in scores], pa.bool_()),
        "baseline_f1": pa.array([base_f1.get(s.query_id) for s in scores], floats),
        "failure_reasons": _list_column([s.failure_reasons for s in scores], text),
        "notes": _list_column([s.notes for s in scores], text),
        "generated_terms": _list_column([s.generated for s in scores], text),
        "generated_weights": _list_column([s.generated.values() for s in scores], floats),
        "expected_terms": _list_column([s.expected for s in scores], text),
        "expected_min_weights": _list_column([s.expected.values() for s in scores], floats),
        "true_positives": _list_column([s.true_positives for s in scores], text),
        "drift_terms": _list_column([s.drift_terms for s in scores], text),
        "drift_reasons": _list_column([[s.drift_reasons.get(t, "") for t in s.drift_terms]
                                       for s in scores], text),
        "unjudged_terms": _list_column([s.unjudged_terms for s in scores], text),
    }
    return pa.table(columns)


def _insert_judge_log(con, run: EvaluationRun, prefix: str = "") -> None:
    log = getattr(run.judge, "log", None)
    if not log:
        return
    con.register("_evalcore_log", pa.table({
        "run_id": [run.evaluation_id] * len(log), "query_id": [e["query_id"] for e in log],
        "judge": [run.judge.name] * len(log),
        "prompt": [json.dumps(e["prompt"], ensure_ascii=False) for e in log],
        "reply": pa.array([e["reply"] for e in log], pa.string()),
        "verdicts": pa.array([None if e["verdicts"] is None else json.dumps(e["verdicts"])
                              for e in log], pa.string()),
        "error": pa.array([e["error"] for e in log], pa.string())}))
    con.execute(f"INSERT INTO {prefix}judge_log SELECT * FROM _evalcore_log")
    con.unregister("_evalcore_log")


# The columnar engine's tables go to the store without leaving DuckDB: g (golden), t (one
# row per query and term) and q (one row per query), plus `side` when a baseline was given.
_COLUMNAR_QUERIES = """
INSERT INTO store.query_results BY NAME
SELECT $run AS run_id, q.pos::INTEGER AS position, q.query_id, q.query, q.domain, q.critical, q.precision,
       q.recall, q.f1, q.term_drift_score, q.passed, q.failure_reasons, q.notes, NULL AS error,
       q.n_generated, q.n_expected, q.n_tp, q.n_fp, q.n_fn, q.n_drift, {side}
       q.generated_terms, q.generated_weights, q.expected_terms, q.expected_min_weights,
       q.true_positives, q.drift_terms, q.drift_reasons, q.unjudged_terms
FROM q {join}"""
_COLUMNAR_TERMS = """
INSERT INTO store.term_rows
SELECT $run, query_id, term, CASE WHEN tp THEN 'TP' ELSE 'FP' END, weight, min_weight, drift, unjudged, reason,
       k, exp_pos
FROM (SELECT query_id, unnest(generated_terms) AS term, unnest(generated_weights) AS weight, unnest(g_tp) AS tp,
             unnest(g_min_weight) AS min_weight, unnest(g_drift) AS drift, unnest(g_unjudged) AS unjudged,
             unnest(g_reason) AS reason, unnest(range(n_generated)) AS k, unnest(g_exp_pos) AS exp_pos FROM q)
UNION ALL  -- expected terms not matched (an underweight term's expected twin among them)
SELECT $run, query_id, term, 'FN', weight, min_weight, false, false, NULL, NULL, k
FROM (SELECT query_id, unnest(expected_terms) AS term, unnest(e_weight) AS weight,
             unnest(expected_min_weights) AS min_weight, unnest(e_tp) AS tp, unnest(range(n_expected)) AS k FROM q)
WHERE NOT tp"""


def _save_columnar(db_path: str | Path, run: EvaluationRun, before_commit) -> None:
    engine = run.engine
    Path(str(db_path)).parent.mkdir(parents=True, exist_ok=True)
    con = engine.con.cursor()
    # rows go to the store in any order (readers sort by position): inserting in parallel
    # is faster, and this session's setting leaves the report's ordered reads alone
    con.execute("SET SESSION preserve_insertion_order = false")
    try:
        attach(con, str(db_path), "store")  # one wait for a busy store, like connect()
        try:
            con.execute("USE store")  # create or migrate the store's schema, as connect() would
            migrate(con)
            con.execute("USE memory")
            con.execute("BEGIN TRANSACTION")
            con.execute(f"INSERT INTO store.runs ({', '.join(RUN_INSERT_COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(RUN_INSERT_COLUMNS))})", _run_row(run))
            side = engine.side_columns
            picked = ", ".join(f"s.{c}" for c in side)
            con.execute(_COLUMNAR_QUERIES.format(side=picked + "," if side else "",
                                                 join="LEFT JOIN side s USING (query_id)" if side else ""),
                        {"run": run.evaluation_id})
            con.execute(_COLUMNAR_TERMS, {"run": run.evaluation_id})
            _insert_judge_log(con, run, "store.")
            if before_commit is not None:
                before_commit()
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            con.execute("DETACH store")
    finally:
        con.close()


def save_run(db_path: str | Path, run: EvaluationRun, before_commit=None) -> None:
    """Store the run, its per-query rows and per-term rows in one transaction.
    before_commit() runs last inside it: if it raises, nothing is stored."""
    if run.engine is not None:
        _save_columnar(db_path, run, before_commit)
        return
    with connect(db_path, write=True) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f"INSERT INTO runs ({', '.join(RUN_INSERT_COLUMNS)}) "  # constant column names
                        f"VALUES ({', '.join('?' * len(RUN_INSERT_COLUMNS))})", _run_row(run))
            for start in range(0, len(run.scores), CHUNK_QUERIES):
                table = _query_table(run, start, min(len(run.scores), start + CHUNK_QUERIES))
                con.register("_evalcore_queries", table)
                con.execute("INSERT INTO query_results BY NAME SELECT * FROM _evalcore_queries")
                con.unregister("_evalcore_queries")
                del table
            _insert_judge_log(con, run)
            con.execute(_INSERT_GENERATED_TERMS, [run.evaluation_id])
            con.execute(_INSERT_MISSED_TERMS, [run.evaluation_id])
            if before_commit is not None:
                before_commit()
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise


# ---------------------------------------------------------------- reading

RUN_COLUMNS = ("run_id, created_at, name, prompt_version, gate_decision, domains, total_queries, "
               "passed, failed, errored, aggregate_precision, aggregate_recall, aggregate_f1, "
               "mean_term_drift_score, regression_detected, baseline_id, author, golden_path")


def list_runs(db_path: str | Path, limit: int | None = None) -> pd.DataFrame:
    """Runs, newest first."""
    with connect(db_path) as con:
        sql = f"SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, run_id DESC"
        if limit is not None:
            return con.execute(sql + " LIMIT ?", [limit]).df()
        return con.execute(sql).df()


def get_run(db_path: str | Path, run_id: str) -> dict:
    """Every stored column of one run; UnknownRunError when absent."""
    with connect(db_path) as con:
        cur = con.execute("SELECT * FROM runs WHERE run_id = ?", [run_id])
        rows = cur.fetchall()  # always drain a result: DuckDB 2 refuses new work otherwise
        row = rows[0] if rows else None
        if row is None:
            raise UnknownRunError(f"unknown run '{run_id}' in {db_path} (see `evalcore runs`)")
        return dict(zip([d[0] for d in cur.description], row))


def find_run_by_content(db_path: str | Path, content_hash: str) -> str | None:
    """The newest run with this content hash, if any."""
    if not Path(str(db_path)).exists():
        return None
    with connect(db_path) as con:
        row = con.execute("SELECT run_id FROM runs WHERE content_hash = ? ORDER BY created_at DESC LIMIT 1",
                          [content_hash]).fetchall()
        row = row[0] if row else None
        return row[0] if row else None


def query_rows(db_path: str | Path, run_id: str) -> pd.DataFrame:
    """Per-query rows of a run in golden-set order."""
    get_run(db_path, run_id)
    with connect(db_path) as con:
        return con.execute("SELECT * EXCLUDE (run_id) FROM query_results WHERE run_id = ? ORDER BY position",
                           [run_id]).df()


def drift_terms(db_path: str | Path, run_id: str, limit: int | None = None) -> pd.DataFrame:
    """Drift terms of a run with their query and explanation, in golden order."""
    with connect(db_path) as con:
        sql = ("SELECT t.query_id, q.query, t.term, t.reason FROM term_rows t JOIN query_results q "
               "ON q.run_id = t.run_id AND q.query_id = t.query_id WHERE t.run_id = ? AND t.drift "
               "ORDER BY q.position, t.gen_pos")
        if limit is not None:
            return con.execute(sql + " LIMIT ?", [run_id, limit]).df()
        return con.execute(sql, [run_id]).df()


def judge_log(db_path: str | Path, run_id: str) -> pd.DataFrame:
    """Prompt, raw reply and parsed verdicts of an LLM drift judge, per query."""
    with connect(db_path) as con:
        return con.execute("SELECT * EXCLUDE (run_id) FROM judge_log WHERE run_id = ? ORDER BY query_id",
                           [run_id]).df()


def term_rows(db_path: str | Path, run_id: str, query_id: str | None = None) -> pd.DataFrame:
    """Per-term rows (TP/FP/FN with weight, drift flag and reason) of a run."""
    with connect(db_path) as con:
        sql = "SELECT * EXCLUDE (run_id) FROM term_rows WHERE run_id = ?"
        params: list = [run_id]
        if query_id is not None:
            sql += " AND query_id = ?"
            params.append(query_id)
        return con.execute(sql + " ORDER BY query_id, coalesce(gen_pos, 100000 + exp_pos)", params).df()


def repeat_runs(db_path: str | Path, golden_hash: str, prompt_version: str, limit: int = 10) -> list[Baseline]:
    """Earlier runs of this prompt version on this golden set (for the noise floor)."""
    if not Path(str(db_path)).exists():
        return []
    with connect(db_path) as con:
        ids = [r[0] for r in con.execute("SELECT run_id FROM runs WHERE golden_hash = ? AND prompt_version = ? "
                                         "ORDER BY created_at DESC LIMIT ?", [golden_hash, prompt_version, limit]).fetchall()]
    return [load_baseline(db_path, rid) for rid in ids]


def paired_metrics(db_path: str | Path, run_id: str, baseline_id: str):
    """(domain, ΔP, ΔR, ΔF1) per query on both sides, errored ones left out."""
    with connect(db_path) as con:
        return con.execute(
            """SELECT c.domain, c.precision - b.precision AS d_precision, c.recall - b.recall AS d_recall,
                      c.f1 - b.f1 AS d_f1
               FROM query_results c JOIN query_results b ON b.query_id = c.query_id
               WHERE c.run_id = ? AND b.run_id = ? AND c.error IS NULL AND b.error IS NULL
               ORDER BY c.position""", [run_id, baseline_id]).df()


def load_baseline(db_path: str | Path, run_id: str) -> Baseline:
    """A stored run as a baseline: its stored per-query values, used as they are."""
    run = get_run(db_path, run_id)
    with connect(db_path) as con:
        rows = con.execute("SELECT query_id, f1, passed, precision, recall, error IS NOT NULL "
                           "FROM query_results WHERE run_id = ? ORDER BY position", [run_id]).fetchall()
    return Baseline(run_id, f"store {db_path}",
                    {q: BaselineRow(f1, passed, p, r, err) for q, f1, passed, p, r, err in rows},
                    run["golden_hash"], run["content_hash"])
