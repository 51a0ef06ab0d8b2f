"""Read models for the dashboard: filtering, paging and aggregation run in DuckDB.

Every statement is a constant; filters add constant fragments and bind their values.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .connection import connect

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CompareFilter", "compare_page", "compare_headline", "compare_points", "compare_domains",
           "runs_overview", "metric_trend", "query_history", "find_query_ids", "flagged_items",
           "STATUSES", "SORTS"]

STATUSES = ("regressed", "improved", "unchanged", "added", "removed")
SORTS = {
    "regressions first": "status_rank, delta_f1 NULLS LAST, pos",
    "largest F1 drop": "delta_f1 NULLS LAST, pos",
    "largest F1 gain": "delta_f1 DESC NULLS LAST, pos",
    "golden order": "pos",
}

_PAIR = """
WITH d AS (SELECT coalesce(CAST(json_extract(thresholds, '$.regression_delta') AS DOUBLE), 0.1) AS delta
           FROM runs WHERE run_id = $run),
     c AS (SELECT * FROM query_results WHERE run_id = $run),
     b AS (SELECT * FROM query_results WHERE run_id = $baseline),
j AS (
  SELECT coalesce(c.query_id, b.query_id) AS query_id, coalesce(c.query, b.query) AS query,
         coalesce(c.domain, b.domain) AS domain, coalesce(c.critical, b.critical, false) AS critical,
         b.precision AS base_precision, c.precision AS precision,
         b.recall AS base_recall, c.recall AS recall, b.f1 AS base_f1, c.f1 AS f1,
         c.f1 - b.f1 AS delta_f1, b.passed AS base_passed, c.passed AS passed,
         CASE WHEN c.query_id IS NULL THEN 'removed' WHEN b.query_id IS NULL THEN 'added'
              WHEN b.f1 - c.f1 > (SELECT delta FROM d) + 1e-9 OR (b.passed AND NOT c.passed) THEN 'regressed'
              WHEN c.f1 - b.f1 > (SELECT delta FROM d) - 1e-9 OR (NOT b.passed AND c.passed) THEN 'improved'
              ELSE 'unchanged' END AS status,
         c.true_positives AS tp,
         list_filter(c.generated_terms, lambda t: NOT list_contains(c.true_positives, t)) AS fp,
         list_filter(c.expected_terms, lambda t: NOT list_contains(c.true_positives, t)) AS fn,
         b.true_positives AS base_tp,
         list_filter(b.generated_terms, lambda t: NOT list_contains(b.true_positives, t)) AS base_fp,
         list_filter(b.expected_terms, lambda t: NOT list_contains(b.true_positives, t)) AS base_fn,
         c.drift_terms AS drift_terms, b.drift_terms AS base_drift_terms,
         list_filter(c.true_positives, lambda t: NOT list_contains(coalesce(b.true_positives, []), t)) AS gained_correct,
         list_filter(b.true_positives, lambda t: NOT list_contains(coalesce(c.true_positives, []), t)) AS lost_correct,
         list_filter(c.generated_terms, lambda t: NOT list_contains(c.true_positives, t)
                     AND NOT list_contains(coalesce(b.generated_terms, []), t)) AS new_wrong,
         list_filter(c.drift_terms, lambda t: NOT list_contains(coalesce(b.drift_terms, []), t)) AS new_drift,
         coalesce(c.n_drift, 0) AS n_drift, c.failure_reasons AS failure_reasons,
         c.term_drift_score AS term_drift_score, b.term_drift_score AS base_term_drift_score,
         coalesce(c.position, 1000000000 + b.position) AS pos
  FROM c FULL OUTER JOIN b ON c.query_id = b.query_id),
k AS (SELECT *, CASE status WHEN 'regressed' THEN 0 WHEN 'improved' THEN 1 WHEN 'added' THEN 2
                           WHEN 'removed' THEN 3 ELSE 4 END AS status_rank FROM j)
"""


@dataclass(frozen=True)
class CompareFilter:
    """What the Compare page narrows the rows to; empty means everything."""

    statuses: tuple[str, ...] = ()
    failed_only: bool = False
    critical_only: bool = False
    drift_only: bool = False
    domain: str | None = None
    text: str = ""
    sort: str = "regressions first"

    def where(self) -> tuple[str, dict]:
        clauses, params = ["true"], {}
        if self.statuses:
            clauses.append("list_contains($statuses, status)")
            params["statuses"] = list(self.statuses)
        if self.failed_only:
            clauses.append("passed IS NOT NULL AND NOT passed")
        if self.critical_only:
            clauses.append("critical")
        if self.drift_only:
            clauses.append("n_drift > 0")
        if self.domain:
            clauses.append("domain = $domain")
            params["domain"] = self.domain
        if self.text.strip():
            clauses.append("(contains(lower(query), lower($text)) OR contains(lower(query_id), lower($text)))")
            params["text"] = self.text.strip()
        return " AND ".join(clauses), params


def compare_page(db_path: str | Path, run_id: str, baseline_id: str, flt: CompareFilter,
                 offset: int = 0, limit: int | None = 50) -> tuple[pd.DataFrame, int]:
    """One page of side-by-side rows matching `flt` (every row when limit is None), and how
    many rows match in all. Statuses use the candidate run's regression_delta."""
    where, params = flt.where()
    order = SORTS.get(flt.sort, SORTS["regressions first"])
    params.update(run=run_id, baseline=baseline_id, limit=2 ** 62 if limit is None else int(limit),
                  offset=int(offset))
    sql = (_PAIR + f"SELECT *, count(*) OVER () AS total_rows FROM k WHERE {where} "  # noqa: S608 (constants)
           f"ORDER BY {order} LIMIT $limit OFFSET $offset")
    with connect(db_path) as con:
        df = con.execute(sql, params).df()
    total = int(df["total_rows"].iloc[0]) if len(df) else 0
    return df.drop(columns=["total_rows", "status_rank", "pos"]), total


def compare_headline(db_path: str | Path, run_id: str, baseline_id: str) -> dict:
    """Counts per status and the macro means of both sides over shared queries."""
    sql = _PAIR + """SELECT count(*) FILTER (status = 'regressed') AS regressed,
        count(*) FILTER (status = 'improved') AS improved, count(*) FILTER (status = 'unchanged') AS unchanged,
        count(*) FILTER (status = 'added') AS added, count(*) FILTER (status = 'removed') AS removed,
        count(*) FILTER (passed IS NOT NULL AND NOT passed) AS failed,
        count(*) FILTER (critical AND passed IS NOT NULL AND NOT passed) AS critical_failed,
        sum(n_drift) AS drift_terms, count(*) FILTER (len(new_drift) > 0) AS new_drift_queries,
        avg(precision) AS precision, avg(base_precision) AS base_precision,
        avg(recall) AS recall, avg(base_recall) AS base_recall, avg(f1) AS f1, avg(base_f1) AS base_f1,
        avg(term_drift_score) AS drift, avg(base_term_drift_score) AS base_drift,
        avg(delta_f1) AS mean_delta_f1 FROM k"""
    with connect(db_path) as con:
        cur = con.execute(sql, {"run": run_id, "baseline": baseline_id})
        row = cur.fetchall()[0]
        return dict(zip([d[0] for d in cur.description], row))


def compare_points(db_path: str | Path, run_id: str, baseline_id: str, max_points: int = 5000) -> tuple[pd.DataFrame, int]:
    """(baseline F1, F1, delta, status, query) per shared query for plots; a reproducible
    sample when there are more than `max_points` (regressed and improved always kept)."""
    sql = _PAIR + """, shared AS (SELECT query_id, query, base_f1, f1, delta_f1, status FROM k
                                 WHERE status IN ('regressed', 'improved', 'unchanged'))
        SELECT *, (SELECT count(*) FROM shared) AS n FROM shared
        WHERE status <> 'unchanged' OR hash(query_id) % greatest(1, (SELECT count(*) FROM shared) // $max) = 0
        ORDER BY status, query_id LIMIT $max"""
    with connect(db_path) as con:
        df = con.execute(sql, {"run": run_id, "baseline": baseline_id, "max": int(max_points)}).df()
    total = int(df["n"].iloc[0]) if len(df) else 0
    return df.drop(columns=["n"]), total


def compare_domains(db_path: str | Path, run_id: str) -> list[str]:
    with connect(db_path) as con:
        rows = con.execute("SELECT DISTINCT domain FROM query_results WHERE run_id = ? AND domain IS NOT NULL "
                           "ORDER BY 1", [run_id]).fetchall()
    return [r[0] for r in rows]


def runs_overview(db_path: str | Path) -> pd.DataFrame:
    """Every run with what the Runs page shows, newest first."""
    with connect(db_path) as con:
        return con.execute(
            """SELECT run_id, created_at, name, prompt_version, gate_decision, domains, high_risk_domains,
                      total_queries, passed, failed, errored, aggregate_precision, aggregate_recall,
                      aggregate_f1, mean_term_drift_score, micro_f1, regression_detected,
                      len(regressed_queries) AS regressed, len(improved_queries) AS improved,
                      baseline_id, author, golden_path, golden_hash, content_hash, drift_judge
               FROM runs ORDER BY created_at DESC, run_id DESC""").df()


def metric_trend(db_path: str | Path, golden_hash: str) -> pd.DataFrame:
    """Macro metrics of every run on one golden set, oldest first (for the trend chart)."""
    with connect(db_path) as con:
        return con.execute(
            """SELECT run_id, created_at, coalesce(prompt_version, run_id) AS prompt_version, name,
                      aggregate_precision, aggregate_recall, aggregate_f1, mean_term_drift_score, gate_decision
               FROM runs WHERE golden_hash = ? ORDER BY created_at, run_id""", [golden_hash]).df()


def query_history(db_path: str | Path, query_id: str) -> pd.DataFrame:
    """One query across every run, oldest first: metrics and expansions as they changed."""
    with connect(db_path) as con:
        return con.execute(
            """SELECT r.run_id, r.created_at, r.name, r.prompt_version, q.query, q.precision, q.recall, q.f1,
                      q.term_drift_score, q.passed, q.generated_terms, q.true_positives, q.drift_terms,
                      list_filter(q.expected_terms, lambda t: NOT list_contains(q.true_positives, t)) AS missed,
                      q.failure_reasons, q.regression_status
               FROM query_results q JOIN runs r USING (run_id)
               WHERE q.query_id = ? ORDER BY r.created_at, r.run_id""", [query_id]).df()


def find_query_ids(db_path: str | Path, text: str = "", limit: int = 200) -> pd.DataFrame:
    """Distinct query ids (with their latest text) matching `text`, for pickers."""
    with connect(db_path) as con:
        return con.execute(
            """SELECT query_id, arg_max(query, position) AS query, count(*) AS runs FROM query_results
               WHERE $text = '' OR contains(lower(query_id), lower($text)) OR contains(lower(query), lower($text))
               GROUP BY query_id ORDER BY query_id LIMIT $limit""", {"text": text.strip(), "limit": limit}).df()


def flagged_items(db_path: str | Path, run_ids: list[str]) -> pd.DataFrame:
    """Every flagged item of the given runs (SPEC §4): regressed queries with their term diff
    against the run's baseline, failed critical queries, and drift terms with their reason.
    The Regressions page and sign-off both read this one definition."""
    with connect(db_path) as con:
        return con.execute(
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
                      AS detail, c.position, 0 AS rank
               FROM c JOIN r USING (run_id)
               LEFT JOIN query_results b ON b.run_id = r.baseline_id AND b.query_id = c.query_id
               WHERE c.regression_status = 'regressed'
               UNION ALL
               SELECT r.*, 'failed critical query', c.query_id, c.query, NULL,
                      array_to_string(c.failure_reasons, '; '), c.position, 1
               FROM c JOIN r USING (run_id) WHERE c.critical AND NOT c.passed
               UNION ALL
               SELECT r.*, 'drift term', t.query_id, c.query, t.term, t.term || ' — ' || coalesce(t.reason, ''),
                      c.position, 2
               FROM term_rows t JOIN c ON c.run_id = t.run_id AND c.query_id = t.query_id
               JOIN r ON r.run_id = t.run_id WHERE t.drift
               ORDER BY run_id, rank, position, term""", {"runs": list(run_ids)}).df()
