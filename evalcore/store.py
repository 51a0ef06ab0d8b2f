"""The DuckDB store: the only module with SQL, always with bound parameters (SPEC §3, §5).

Every operation opens its own connection and closes it: an open DuckDB connection blocks
other processes, so nothing holds one across calls. A busy store is retried for up to
`EVALCORE_STORE_TIMEOUT` seconds (default 30), then StoreBusyError.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from . import __version__
from .errors import StoreBusyError, UnknownRunError, UsageError
from .regression import Baseline, BaselineRow

if TYPE_CHECKING:
    import pandas as pd

    from .evaluation import EvaluationRun

__all__ = ["connect", "save_run", "list_runs", "get_run", "load_baseline", "query_rows",
           "term_rows", "compare_runs", "find_run_by_content", "SCHEMA_VERSION"]

MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, [
        """CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY, created_at VARCHAR NOT NULL, name VARCHAR,
            prompt_version VARCHAR, golden_path VARCHAR, generated_path VARCHAR,
            golden_hash VARCHAR, generated_hash VARCHAR, content_hash VARCHAR NOT NULL,
            domains VARCHAR[], high_risk_domains VARCHAR[], domain_context VARCHAR,
            drift_judge VARCHAR, drift_judge_config VARCHAR, author VARCHAR,
            evalcore_version VARCHAR, baseline_id VARCHAR, gate_decision VARCHAR NOT NULL,
            gate_reasons VARCHAR[], total_queries INTEGER, passed INTEGER, failed INTEGER,
            errored INTEGER, aggregate_precision DOUBLE, aggregate_recall DOUBLE,
            aggregate_f1 DOUBLE, mean_term_drift_score DOUBLE, micro_precision DOUBLE,
            micro_recall DOUBLE, micro_f1 DOUBLE, micro_tp BIGINT, micro_fp BIGINT,
            micro_fn BIGINT, regression_detected BOOLEAN, regressed_queries VARCHAR[],
            improved_queries VARCHAR[], added_queries VARCHAR[], removed_queries VARCHAR[],
            delta_summary VARCHAR, golden_set_changed BOOLEAN, mean_f1_delta DOUBLE,
            thresholds VARCHAR, recommendations VARCHAR[])""",
        """CREATE TABLE query_results (
            run_id VARCHAR NOT NULL, position INTEGER NOT NULL, query_id VARCHAR NOT NULL,
            query VARCHAR, domain VARCHAR, critical BOOLEAN, precision DOUBLE, recall DOUBLE,
            f1 DOUBLE, term_drift_score DOUBLE, passed BOOLEAN, failure_reasons VARCHAR[],
            notes VARCHAR[], error VARCHAR, n_generated INTEGER, n_expected INTEGER,
            n_tp INTEGER, n_fp INTEGER, n_fn INTEGER, n_drift INTEGER,
            regression_status VARCHAR, baseline_f1 DOUBLE)""",
        """CREATE TABLE term_rows (
            run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, term VARCHAR NOT NULL,
            kind VARCHAR NOT NULL, weight DOUBLE, min_weight DOUBLE, drift BOOLEAN,
            unjudged BOOLEAN, reason VARCHAR, gen_pos INTEGER, exp_pos INTEGER)""",
    ]),
]
SCHEMA_VERSION = MIGRATIONS[-1][0]
CHUNK_QUERIES = 100_000


def _timeout() -> float:
    return float(os.environ.get("EVALCORE_STORE_TIMEOUT", "30"))


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text or "conflicting" in text


def _open(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    deadline = time.monotonic() + _timeout()
    delay = 0.05
    while True:
        try:
            return duckdb.connect(path, read_only=read_only)
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            if not _is_lock_error(exc):
                raise UsageError(f"cannot open store {path}: {exc}") from None
            if time.monotonic() >= deadline:
                raise StoreBusyError(f"store busy: {path} is locked by another process "
                                     f"(waited {_timeout():.0f} s); try again") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at VARCHAR)")
    current = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()[0]
    for version, statements in MIGRATIONS:
        if version <= current:
            continue
        con.execute("BEGIN TRANSACTION")
        for sql in statements:
            con.execute(sql)
        con.execute("INSERT INTO schema_migrations VALUES (?, CAST(current_timestamp AS VARCHAR))", [version])
        con.execute("COMMIT")


@contextmanager
def connect(db_path: str | Path, write: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived connection; a writer creates and migrates the store when needed."""
    path = str(db_path)
    if not write and not Path(path).exists():
        raise UsageError(f"no store at {path}: run `evalcore evaluate` first or pass --db")
    if write:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    con = _open(path, read_only=not write)
    try:
        if write:
            _migrate(con)
        else:
            version = con.execute(
                "SELECT max(version) FROM schema_migrations").fetchone()[0] if _has_table(con, "schema_migrations") else 0
            if (version or 0) < SCHEMA_VERSION:
                con.close()
                con = _open(path, read_only=False)
                _migrate(con)
        yield con
    finally:
        con.close()


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                            [name]).fetchone()[0])


# ---------------------------------------------------------------- writing


def _run_row(run: EvaluationRun) -> list:
    agg, reg = run.aggregate, run.regression
    return [
        run.evaluation_id, run.timestamp, run.name, run.prompt_version, run.golden.path,
        run.generated_path, run.golden.content_hash, run.generated_hash, run.content_hash,
        run.domains, run.high_risk_domains, run.domain_context, run.judge.name,
        json.dumps(run.judge.config(), sort_keys=True), run.author,
        __version__, reg.baseline_id, run.gate.decision, run.gate.reasons,
        len(run.scores), run.passed, len(run.scores) - run.passed, run.errored,
        agg.macro_precision, agg.macro_recall, agg.macro_f1, agg.macro_drift,
        agg.micro_precision, agg.micro_recall, agg.micro_f1, agg.tp, agg.fp, agg.fn,
        reg.detected, reg.regressed, reg.improved, reg.added, reg.removed, reg.summary,
        reg.golden_set_changed, reg.mean_f1_delta, run.thresholds.model_dump_json(),
        run.recommendations,
    ]


def _chunk_tables(run: EvaluationRun, start: int, stop: int) -> tuple[pa.Table, pa.Table]:
    q_cols: dict[str, list] = {k: [] for k in (
        "run_id", "position", "query_id", "query", "domain", "critical", "precision", "recall",
        "f1", "term_drift_score", "passed", "failure_reasons", "notes", "error", "n_generated",
        "n_expected", "n_tp", "n_fp", "n_fn", "n_drift", "regression_status", "baseline_f1")}
    t_cols: dict[str, list] = {k: [] for k in (
        "query_id", "term", "kind", "weight", "min_weight", "drift", "unjudged", "reason",
        "gen_pos", "exp_pos")}
    status, base_f1 = run.regression.status, run.regression.baseline_f1
    tq, tt, tk, tw, tm, td, tu, tr, tg, te = (t_cols[k] for k in t_cols)
    for position in range(start, stop):
        s = run.scores[position]
        qid = s.query_id
        values = (run.evaluation_id, position, qid, s.query, s.domain, s.critical, s.precision,
                  s.recall, s.f1, s.term_drift_score, s.passed, s.failure_reasons, s.notes, s.error,
                  len(s.generated), len(s.expected), len(s.true_positives), len(s.false_positives),
                  len(s.false_negatives), len(s.drift_terms), status.get(qid), base_f1.get(qid))
        for column, value in zip(q_cols.values(), values):
            column.append(value)
        matched = set(s.true_positives)
        drift, unjudged, reasons = set(s.drift_terms), set(s.unjudged_terms), s.drift_reasons
        exp_pos = {t: i for i, t in enumerate(s.expected)}
        for i, (term, weight) in enumerate(s.generated.items()):
            tq.append(qid); tt.append(term); tk.append("TP" if term in matched else "FP")
            tw.append(weight); tm.append(s.expected.get(term)); td.append(term in drift)
            tu.append(term in unjudged); tr.append(reasons.get(term)); tg.append(i)
            te.append(exp_pos.get(term))
        for term in s.false_negatives:
            tq.append(qid); tt.append(term); tk.append("FN"); tw.append(s.generated.get(term))
            tm.append(s.expected[term]); td.append(False); tu.append(False); tr.append(None)
            tg.append(None); te.append(exp_pos[term])
    terms = pa.table(t_cols)
    terms = terms.add_column(0, "run_id", pa.array([run.evaluation_id] * terms.num_rows, pa.string()))
    queries = pa.table({k: (pa.array(v, pa.list_(pa.string())) if k in ("failure_reasons", "notes")
                            else v) for k, v in q_cols.items()})
    return queries, terms


def save_run(db_path: str | Path, run: EvaluationRun) -> None:
    """Store the run, its per-query rows and per-term rows in one transaction."""
    with connect(db_path, write=True) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f"INSERT INTO runs VALUES ({', '.join('?' * len(_run_row(run)))})", _run_row(run))
            for start in range(0, len(run.scores), CHUNK_QUERIES):
                queries, terms = _chunk_tables(run, start, min(len(run.scores), start + CHUNK_QUERIES))
                con.register("_evalcore_queries", queries)
                con.register("_evalcore_terms", terms)
                con.execute("INSERT INTO query_results BY NAME SELECT * FROM _evalcore_queries")
                con.execute("INSERT INTO term_rows BY NAME SELECT * FROM _evalcore_terms")
                con.unregister("_evalcore_queries")
                con.unregister("_evalcore_terms")
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
        row = cur.fetchone()
        if row is None:
            raise UnknownRunError(f"unknown run '{run_id}' in {db_path} (see `evalcore runs`)")
        return dict(zip([d[0] for d in cur.description], row))


def find_run_by_content(db_path: str | Path, content_hash: str) -> str | None:
    """The newest run with this content hash, if any."""
    if not Path(str(db_path)).exists():
        return None
    with connect(db_path) as con:
        row = con.execute("SELECT run_id FROM runs WHERE content_hash = ? ORDER BY created_at DESC LIMIT 1",
                          [content_hash]).fetchone()
        return row[0] if row else None


def find_run(db_path: str | Path, name: str) -> str | None:
    """The newest run with this name, if any."""
    if not Path(str(db_path)).exists():
        return None
    with connect(db_path) as con:
        row = con.execute("SELECT run_id FROM runs WHERE name = ? ORDER BY created_at DESC LIMIT 1",
                          [name]).fetchone()
        return row[0] if row else None


def query_rows(db_path: str | Path, run_id: str) -> pd.DataFrame:
    """Per-query rows of a run in golden-set order."""
    get_run(db_path, run_id)
    with connect(db_path) as con:
        return con.execute("SELECT * EXCLUDE (run_id) FROM query_results WHERE run_id = ? ORDER BY position",
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


def load_baseline(db_path: str | Path, run_id: str) -> Baseline:
    """A stored run as a baseline: its stored per-query values, used as they are."""
    run = get_run(db_path, run_id)
    with connect(db_path) as con:
        rows = con.execute("SELECT query_id, f1, passed, precision, recall, error IS NOT NULL "
                           "FROM query_results WHERE run_id = ? ORDER BY position", [run_id]).fetchall()
    return Baseline(run_id, f"store {db_path}",
                    {q: BaselineRow(f1, passed, p, r, err) for q, f1, passed, p, r, err in rows},
                    run["golden_hash"], run["content_hash"])


def compare_runs(db_path: str | Path, run_id: str, baseline_id: str) -> pd.DataFrame:
    """Per-query side by side: candidate and baseline P/R/F1, joined on query_id."""
    get_run(db_path, run_id)
    get_run(db_path, baseline_id)
    with connect(db_path) as con:
        return con.execute(
            """SELECT coalesce(c.query_id, b.query_id) AS query_id, coalesce(c.query, b.query) AS query,
                      b.precision AS base_precision, c.precision AS precision,
                      b.recall AS base_recall, c.recall AS recall, b.f1 AS base_f1, c.f1 AS f1,
                      c.f1 - b.f1 AS delta_f1, b.passed AS base_passed, c.passed AS passed,
                      c.critical, c.n_drift, coalesce(c.position, 1e9 + b.position) AS pos
               FROM (SELECT * FROM query_results WHERE run_id = ?) c
               FULL OUTER JOIN (SELECT * FROM query_results WHERE run_id = ?) b ON c.query_id = b.query_id
               ORDER BY pos""", [run_id, baseline_id]).df().drop(columns=["pos"])
