"""Read models for the dashboard and comparisons: data access only, in DuckDB.

Every statement is a constant with bound values. The paged comparison of two runs
(statuses, filters, sorting) is termgate.comparison's, over the rows `comparison_rows` returns.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from .postgres import is_postgres
from .reading import connect
from .pg_rows import Rows, every, of_runs

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["StoredPair", "TERM_LISTS", "comparison_rows", "comparison_terms", "pass_lists", "runs_overview", "metric_trend", "query_history",
           "find_query_ids", "flagged_items"]

# What a comparison reads of each side, in golden-set order: the scalars every filter, sort,
# count and plot needs, and the drift terms (the headline counts new ones). The other term
# lists are read only for the rows shown (comparison_terms): they are most of the bytes.
# Statuses are not computed here: termgate.scoring.regression holds the rule.
_SIDE_COLUMNS = ("query_id", "position", "query", "domain", "critical", "precision", "recall", "f1", "passed",
                 "term_drift_score", "n_drift", "drift_terms", "error", "golden_entry_hash")
TERM_LISTS = ("failure_reasons", "generated_terms", "expected_terms", "true_positives")
"""The per-query lists comparison_terms reads, for the rows a page or panel shows."""


@dataclass(frozen=True)
class StoredPair:
    """Two stored runs' per-query rows, as the store holds them."""

    thresholds: str | None
    """The candidate run's thresholds as stored (JSON); None for an unknown run."""
    current: pa.Table
    """The candidate run's rows (empty for an unknown run)."""
    baseline: pa.Table
    """The baseline run's rows (empty for an unknown run)."""
    golden: tuple[tuple[str | None, str | None], tuple[str | None, str | None]] = ((None, None), (None, None))
    """(golden-set name, revision) of the candidate and of the baseline (None when unknown)."""
    base_thresholds: str | None = None
    """The baseline run's thresholds as stored (JSON); None for an unknown run or none stored."""


def comparison_rows(db_path: str | Path, run_id: str, baseline_id: str) -> StoredPair:
    """Both runs' per-query rows (_SIDE_COLUMNS) and the candidate's thresholds. The golden
    entries' hashes are read only when the two runs scored different golden files: they can
    tell changed queries apart only then, and they are a third of the bytes. (The runs, then
    each side's rows, are read on their own — on PostgreSQL both sides at once: a stored run
    never changes, so the separate reads see one state.)"""
    from .runs import stored_golden_name

    with connect(db_path, rows=of_runs([run_id, baseline_id], "runs")) as con:
        cur = con.execute("SELECT * FROM runs WHERE run_id = ? OR run_id = ?", [run_id, baseline_id])
        found = {r[0]: dict(zip([d[0] for d in cur.description], r)) for r in cur.fetchall()}
    hashes = {found[r]["golden_hash"] if r in found else None for r in (run_id, baseline_id)}
    columns = _SIDE_COLUMNS if len(hashes) > 1 else tuple(c for c in _SIDE_COLUMNS if c != "golden_entry_hash")
    side = f"SELECT {', '.join(columns)} FROM query_results WHERE run_id = ? ORDER BY position"  # noqa: S608 constants

    def rows_of(rid: str) -> pa.Table:
        with connect(db_path, rows={"query_results": Rows("run_id = %s", (rid,), columns + ("run_id",))}) as con:
            return con.sql(side, params=[rid]).to_arrow_table()

    if is_postgres(db_path):  # two server queries at once (each side's rows never change)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            current, baseline = pool.map(rows_of, [run_id, baseline_id])
    else:  # a store file: one thread (see dashboard.data._started)
        current, baseline = rows_of(run_id), rows_of(baseline_id)
    golden = tuple((stored_golden_name(found[rid]), found[rid]["golden_hash"]) if rid in found else (None, None)
                   for rid in (run_id, baseline_id))
    return StoredPair(found[run_id]["thresholds"] if run_id in found else None, current, baseline, golden,
                      found[baseline_id]["thresholds"] if baseline_id in found else None)


def pass_lists(db_path: str | Path, run_id: str) -> pa.Table:
    """A run's failure_reasons and drift_reasons in golden-set order: what reads its pass/fail
    under another forbidden_fails (termgate.scoring.regression.passed_under)."""
    columns = ("run_id", "query_id", "position", "failure_reasons", "drift_reasons")
    with connect(db_path, rows={"query_results": Rows("run_id = %s", (run_id,), columns)}) as con:
        return con.sql("SELECT failure_reasons, drift_reasons FROM query_results WHERE run_id = ? ORDER BY position",
                       params=[run_id]).to_arrow_table()


def comparison_terms(db_path: str | Path, run_ids: list[str], query_ids: list[str] | None) -> pa.Table:
    """(run_id, query_id, TERM_LISTS…) of these queries (None: every query) in these runs."""
    runs, where = list(run_ids), "run_id = ANY(%s)"
    params: tuple = (runs,)
    if query_ids is not None:
        where, params = "run_id = ANY(%s) AND query_id = ANY(%s)", (runs, list(query_ids))
    with connect(db_path, rows={"query_results": Rows(where, params, ("run_id", "query_id") + TERM_LISTS)}) as con:
        con.register("_termgate_wanted", pa.table({"query_id": pa.array(
            [] if query_ids is None else list(query_ids), pa.string())}))
        return con.sql(
            f"SELECT run_id, query_id, {', '.join(TERM_LISTS)} FROM query_results "  # noqa: S608 constants
            "WHERE list_contains($runs, run_id) AND ($every OR query_id IN (SELECT query_id FROM _termgate_wanted))",
            params={"runs": runs, "every": query_ids is None}).to_arrow_table()


def runs_overview(db_path: str | Path) -> pd.DataFrame:
    """Every run with what the Runs page shows, newest first; `golden_name` is the name it
    recorded, else (stored before names were kept) its golden path tidied."""
    with connect(db_path, rows=every("runs")) as con:
        df = con.execute(
            """SELECT run_id, created_at, name, prompt_version, gate_decision, domains, high_risk_domains,
                      total_queries, passed, failed, errored, aggregate_precision, aggregate_recall,
                      aggregate_f1, mean_term_drift_score, micro_f1, regression_detected,
                      len(regressed_queries) AS regressed, len(improved_queries) AS improved,
                      baseline_id, author, golden_path, golden_hash, golden_name, content_hash, drift_judge
               FROM runs ORDER BY created_at DESC, run_id DESC""").df()
    df["golden_name"] = [_name(n, p) for n, p in zip(df["golden_name"], df["golden_path"])]
    return df


def _name(name, path) -> str:
    from .runs import stored_golden_name

    return stored_golden_name({"golden_name": name if isinstance(name, str) else None,
                               "golden_path": path if isinstance(path, str) else None})


def metric_trend(db_path: str | Path, golden_name: str) -> pd.DataFrame:
    """Macro metrics of every run on one golden set (by name, SPEC §1.1, every revision),
    oldest first (for the trend chart)."""
    with connect(db_path, rows=every("runs")) as con:
        df = con.execute(
            """SELECT run_id, created_at, coalesce(prompt_version, run_id) AS prompt_version, name,
                      aggregate_precision, aggregate_recall, aggregate_f1, mean_term_drift_score, gate_decision,
                      golden_name, golden_path, golden_hash
               FROM runs ORDER BY created_at, run_id""").df()
    named = [_name(n, p) == golden_name for n, p in zip(df["golden_name"], df["golden_path"])]
    return df[named].drop(columns=["golden_name", "golden_path"]).reset_index(drop=True)


def query_history(db_path: str | Path, query_id: str) -> pd.DataFrame:
    """One query across every run, oldest first: metrics and expansions as they changed."""
    with connect(db_path, rows=every("runs") | {"query_results": Rows("query_id = %s", (query_id,))}) as con:
        return con.execute(
            """SELECT r.run_id, r.created_at, r.name, r.prompt_version, q.query, q.precision, q.recall, q.f1,
                      q.term_drift_score, q.passed, q.generated_terms, q.true_positives, q.drift_terms,
                      list_filter(q.expected_terms, lambda t: NOT list_contains(q.true_positives, t)) AS missed,
                      q.failure_reasons, q.regression_status, q.baseline_f1, q.error
               FROM query_results q JOIN runs r USING (run_id)
               WHERE q.query_id = ? ORDER BY r.created_at, r.run_id""", [query_id]).df()


def errored_queries(db_path: str | Path, run_id: str) -> pd.DataFrame:
    """A run's errored items (query_id, query, error), in golden-set order."""
    with connect(db_path, rows={"query_results": Rows("run_id = %s AND error IS NOT NULL", (run_id,))}) as con:
        return con.execute("SELECT query_id, query, error FROM query_results WHERE run_id = ? AND error IS NOT NULL "
                           "ORDER BY position", [run_id]).df()


def find_query_ids(db_path: str | Path, text: str = "", limit: int = 200) -> pd.DataFrame:
    """Distinct query ids (with their latest text) matching `text`, for pickers."""
    with connect(db_path, rows={"query_results": Rows(columns=("query_id", "query", "position"))}) as con:
        return con.execute(
            """SELECT query_id, arg_max(query, position) AS query, count(*) AS runs FROM query_results
               WHERE $text = '' OR contains(lower(query_id), lower($text)) OR contains(lower(query), lower($text))
               GROUP BY query_id ORDER BY query_id LIMIT $limit""", {"text": text.strip(), "limit": limit}).df()


def flagged_items(db_path: str | Path, run_ids: list[str]) -> pd.DataFrame:
    """Every flagged item of the given runs (SPEC §4): regressed queries with their term diff
    against the run's baseline, failed critical queries, and drift terms with their reason.
    The Regressions page and sign-off both read this one definition."""
    ids = list(run_ids)
    with connect(db_path, rows={t: Rows("run_id = ANY(%s) OR run_id IN (SELECT baseline_id FROM runs WHERE "
                                        "run_id = ANY(%s))", (ids, ids)) for t in ("runs", "query_results",
                                                                                  "term_rows")}) as con:
        return flagged_items_on(con, run_ids)


def flagged_items_on(con, run_ids: list[str]) -> pd.DataFrame:
    """flagged_items on a connection holding runs, query_results and term_rows. A regressed
    query whose F1 did not fall says so first in its detail (regression_label)."""
    from ..scoring.regression import NEWLY_FAILING, regression_label

    df = con.execute(
            """WITH r AS (SELECT run_id, name, prompt_version, gate_decision, baseline_id FROM runs
                          WHERE list_contains($runs, run_id)),
                    c AS (SELECT q.* FROM query_results q JOIN r USING (run_id))
               SELECT r.*, 'regressed query' AS kind, c.query_id, c.query, NULL AS term,
                      printf('F1 %.3f → %.3f; lost correct: %s; new wrong: %s', c.baseline_f1, c.f1,
                             coalesce(nullif(array_to_string(list_filter(b.true_positives,
                                 lambda t: NOT list_contains(c.true_positives, t)), ', '), ''), '-'),
                             coalesce(nullif(array_to_string(list_filter(c.generated_terms,
                                 lambda t: NOT list_contains(c.true_positives, t)
                                           AND NOT list_contains(coalesce(b.generated_terms, []), t)), ', '), ''), '-'))
                      AS detail, c.position, 0 AS rank, c.f1, c.baseline_f1
               FROM c JOIN r USING (run_id)
               LEFT JOIN query_results b ON b.run_id = r.baseline_id AND b.query_id = c.query_id
               WHERE c.regression_status = 'regressed'
               UNION ALL
               SELECT r.*, 'failed critical query', c.query_id, c.query, NULL,
                      array_to_string(c.failure_reasons, '; '), c.position, 1, NULL, NULL
               FROM c JOIN r USING (run_id) WHERE c.critical AND NOT c.passed
               UNION ALL
               SELECT r.*, 'drift term', t.query_id, c.query, t.term, t.term || ' — ' || coalesce(t.reason, ''),
                      c.position, 2, NULL, NULL
               FROM term_rows t JOIN c ON c.run_id = t.run_id AND c.query_id = t.query_id
               JOIN r ON r.run_id = t.run_id WHERE t.drift
               ORDER BY run_id, rank, position, term""", {"runs": list(run_ids)}).df()
    newly = [k == "regressed query" and regression_label("regressed", f1, base) == NEWLY_FAILING
             for k, f1, base in zip(df["kind"], df["f1"], df["baseline_f1"])]
    df["detail"] = [f"{NEWLY_FAILING} (passed in the baseline, fails now): {d}" if n else d
                    for n, d in zip(newly, df["detail"])]
    return df.drop(columns=["f1", "baseline_f1"])
