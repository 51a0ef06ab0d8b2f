"""The paged comparison of two stored runs: what the dashboard's Compare page and
`evalcore compare` show, query by query.

The store returns both runs' per-query rows (`store.comparison_rows`);
`regression.pair_queries`, the one implementation of SPEC §2 rule 8, pairs them and decides
every status; this module filters, sorts, pages and counts in an in-process DuckDB over that
Arrow table, and adds the term diff for the rows a page shows. So a second store backend needs only to return the
rows, and the dashboard's statuses cannot drift from the evaluation's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from . import store
from .models import Thresholds
from .regression import pair_queries

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STATUSES", "SORTS", "CompareFilter", "PairedRuns", "pair_runs", "compare_page"]

STATUSES = ("regressed", "improved", "unchanged", "added", "removed")
SORTS = {
    "regressions first": "status_rank, delta_f1 NULLS LAST, pos",
    "largest F1 drop": "delta_f1 NULLS LAST, pos",
    "largest F1 gain": "delta_f1 DESC NULLS LAST, pos",
    "golden order": "pos",
}

# The scalar keys every filter, sort, count and plot reads, over `pairs` (pair_queries'
# output, the baseline's columns prefixed base_, plus pair_row). No rule here: status is given.
_KEYS = """SELECT pair_row, query_id, coalesce(query, base_query) AS query, coalesce(domain, base_domain) AS domain,
       coalesce(critical, base_critical, false) AS critical, status, delta_f1, f1, base_f1, passed, base_passed,
       precision, base_precision, recall, base_recall, term_drift_score, base_term_drift_score,
       coalesce(n_drift, 0) AS n_drift, coalesce(position, 1000000000 + base_position) AS pos,
       CASE status WHEN 'regressed' THEN 0 WHEN 'improved' THEN 1 WHEN 'added' THEN 2
                   WHEN 'removed' THEN 3 ELSE 4 END AS status_rank
FROM pairs"""

# The rows a page shows, side by side with the term diff; over `picked`, the page's rows of
# `pairs` with their place on the page.
_NEW_DRIFT = "list_filter(drift_terms, lambda t: NOT list_contains(coalesce(base_drift_terms, []), t))"
"""Drift terms the baseline did not have."""

_SIDE_BY_SIDE = f"""
SELECT query_id, coalesce(query, base_query) AS query, coalesce(domain, base_domain) AS domain,
       coalesce(critical, base_critical, false) AS critical,
       base_precision, precision, base_recall, recall, base_f1, f1, delta_f1, base_passed, passed, status,
       true_positives AS tp,
       list_filter(generated_terms, lambda t: NOT list_contains(true_positives, t)) AS fp,
       list_filter(expected_terms, lambda t: NOT list_contains(true_positives, t)) AS fn,
       base_true_positives AS base_tp,
       list_filter(base_generated_terms, lambda t: NOT list_contains(base_true_positives, t)) AS base_fp,
       list_filter(base_expected_terms, lambda t: NOT list_contains(base_true_positives, t)) AS base_fn,
       drift_terms, base_drift_terms,
       list_filter(true_positives, lambda t: NOT list_contains(coalesce(base_true_positives, []), t)) AS gained_correct,
       list_filter(base_true_positives, lambda t: NOT list_contains(coalesce(true_positives, []), t)) AS lost_correct,
       list_filter(generated_terms, lambda t: NOT list_contains(true_positives, t)
                   AND NOT list_contains(coalesce(base_generated_terms, []), t)) AS new_wrong,
       {_NEW_DRIFT} AS new_drift,
       coalesce(n_drift, 0) AS n_drift, failure_reasons, term_drift_score, base_term_drift_score
FROM picked ORDER BY page_row
"""

_HEADLINE = f"""WITH k AS ({_KEYS}),
    new_drift AS (SELECT count(*) AS n FROM pairs
                  WHERE len({_NEW_DRIFT}) > 0)
    SELECT count(*) FILTER (status = 'regressed') AS regressed,
    count(*) FILTER (status = 'improved') AS improved, count(*) FILTER (status = 'unchanged') AS unchanged,
    count(*) FILTER (status = 'added') AS added, count(*) FILTER (status = 'removed') AS removed,
    count(*) FILTER (passed IS NOT NULL AND NOT passed) AS failed,
    count(*) FILTER (critical AND passed IS NOT NULL AND NOT passed) AS critical_failed,
    sum(n_drift) AS drift_terms, (SELECT n FROM new_drift) AS new_drift_queries,
    avg(precision) AS precision, avg(base_precision) AS base_precision,
    avg(recall) AS recall, avg(base_recall) AS base_recall, avg(f1) AS f1, avg(base_f1) AS base_f1,
    avg(term_drift_score) AS drift, avg(base_term_drift_score) AS base_drift,
    avg(delta_f1) AS mean_delta_f1 FROM k"""

_POINTS = f"""WITH k AS ({_KEYS}),
    shared AS (SELECT query_id, query, base_f1, f1, delta_f1, status FROM k
               WHERE status IN ('regressed', 'improved', 'unchanged'))
    SELECT *, (SELECT count(*) FROM shared) AS n FROM shared
    WHERE status <> 'unchanged' OR hash(query_id) % greatest(1, (SELECT count(*) FROM shared) // $max) = 0
    ORDER BY status, query_id LIMIT $max"""


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


@dataclass(frozen=True)
class PairedRuns:
    """Two stored runs paired query by query, statuses decided; immutable, so a cache may
    hand the same one to every caller."""

    run_id: str
    baseline_id: str
    regression_delta: float
    """The candidate run's own regression_delta, which every status here used."""
    table: pa.Table
    """pair_queries' rows (the baseline's columns prefixed base_) and their index `pair_row`."""

    def page(self, flt: CompareFilter, offset: int = 0, limit: int | None = 50) -> tuple[pd.DataFrame, int]:
        """One page of side-by-side rows matching `flt` (every row when limit is None), and
        how many rows match in all."""
        where, params = flt.where()
        order = SORTS.get(flt.sort, SORTS["regressions first"])
        params.update(limit=2 ** 62 if limit is None else int(limit), offset=int(offset))
        sql = (f"WITH k AS ({_KEYS}) SELECT pair_row, count(*) OVER () AS total_rows FROM k "  # noqa: S608
               f"WHERE {where} ORDER BY {order} LIMIT $limit OFFSET $offset")  # constants; values bound
        with duckdb.connect(":memory:") as con:
            con.register("pairs", self.table)
            found = con.sql(sql, params=params).to_arrow_table()
            # the term diff only for the rows shown, gathered by position rather than scanned
            picked = self.table.take(found.column("pair_row"))
            con.register("picked", picked.append_column("page_row", pa.array(range(picked.num_rows), pa.int64())))
            df = con.sql(_SIDE_BY_SIDE).df()
        return df, int(found.column("total_rows")[0].as_py()) if found.num_rows else 0

    def headline(self) -> dict:
        """Counts per status and the macro means of both sides over shared queries."""
        with duckdb.connect(":memory:") as con:
            con.register("pairs", self.table)
            cur = con.execute(_HEADLINE)
            return dict(zip([d[0] for d in cur.description], cur.fetchall()[0]))

    def points(self, max_points: int = 5000) -> tuple[pd.DataFrame, int]:
        """(baseline F1, F1, delta, status, query) per shared query for plots; a reproducible
        sample when there are more than `max_points` (regressed and improved always kept)."""
        with duckdb.connect(":memory:") as con:
            con.register("pairs", self.table)
            df = con.execute(_POINTS, {"max": int(max_points)}).df()
        total = int(df["n"].iloc[0]) if len(df) else 0
        return df.drop(columns=["n"]), total


def _regression_delta(thresholds: str | None) -> float:
    """The candidate's stored regression_delta; the model's default when it stored none."""
    value = json.loads(thresholds).get("regression_delta") if thresholds else None
    return Thresholds().regression_delta if value is None else float(value)


def pair_runs(db_path: str | Path, run_id: str, baseline_id: str) -> PairedRuns:
    """Read both runs from the store and pair them with the candidate's regression_delta.
    An unknown id reads as a run with no queries."""
    stored = store.comparison_rows(db_path, run_id, baseline_id)
    delta = _regression_delta(stored.thresholds)
    paired = pair_queries(stored.current, stored.baseline, delta)
    return PairedRuns(run_id, baseline_id, delta,
                      paired.append_column("pair_row", pa.array(range(paired.num_rows), pa.int64())))


def compare_page(db_path: str | Path, run_id: str, baseline_id: str, flt: CompareFilter,
                 offset: int = 0, limit: int | None = 50) -> tuple[pd.DataFrame, int]:
    """PairedRuns.page of a freshly read pair (`evalcore compare`)."""
    return pair_runs(db_path, run_id, baseline_id).page(flt, offset, limit)
