"""The paged comparison of two stored runs: what the dashboard's Compare page and
`termgate compare` show, query by query.

The store returns both runs' per-query rows (`store.comparison_rows`);
`regression.pair_queries`, the one implementation of SPEC §2 rule 8, pairs them and decides
every status; this module filters, sorts, pages and counts in an in-process DuckDB over that
Arrow table, and adds the term diff for the rows a page shows. So a second store backend needs only to return the
rows, and the dashboard's statuses cannot drift from the evaluation's.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from . import store
from .scoring.metrics import normalize_term
from .models import Thresholds
from .models import recorded_rule
from .scoring.regression import (DIFFERENT_GOLDEN_SET, OTHER_REVISION, names_differ, other_name_note, pair_queries,
                                 passed_under, revisions_of_one_set, rules_note)
from .scoring.stats import describe_pairs

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STATUSES", "SORTS", "RETRIEVAL_SORTS", "CompareFilter", "PairedRuns", "Walk", "BaselineChoice", "pair_runs",
           "compare_page", "default_baseline", "golden_sets_differ", "golden_note", "pair_notes"]

STATUSES = ("regressed", "improved", "unchanged", "added", "removed", "golden_changed")
SORTS = {
    "regressions first": "status_rank, delta_f1 NULLS LAST, pos",
    "largest F1 drop": "delta_f1 NULLS LAST, pos",
    "largest F1 gain": "delta_f1 DESC NULLS LAST, pos",
    "golden order": "pos",
    "largest nDCG drop": "ndcg_delta NULLS LAST, pos",
    "largest nDCG gain": "ndcg_delta DESC NULLS LAST, pos",
}
RETRIEVAL_SORTS = ("largest nDCG drop", "largest nDCG gain")
"""The sorts by the candidate's retrieval change: offered for a run that measured one."""

# The scalar keys every filter, sort, count and plot reads, over `pairs` (pair_queries'
# output, the baseline's columns prefixed base_, plus pair_row). No rule here: status is given.
_KEYS = """SELECT pair_row, query_id, coalesce(query, base_query) AS query, coalesce(domain, base_domain) AS domain,
       coalesce(critical, base_critical, false) AS critical, status, delta_f1, f1, base_f1, passed, base_passed,
       precision, base_precision, recall, base_recall, term_drift_score, base_term_drift_score,
       coalesce(n_drift, 0) AS n_drift, ndcg_delta, coalesce(position, 1000000000 + base_position) AS pos,
       CASE status WHEN 'regressed' THEN 0 WHEN 'improved' THEN 1 WHEN 'golden_changed' THEN 2
                   WHEN 'added' THEN 3 WHEN 'removed' THEN 4 ELSE 5 END AS status_rank
FROM pairs"""

# The rows a page shows, side by side with the term diff; over `picked`, the page's rows of
# `pairs` with their place on the page.
_NEW_DRIFT = "list_filter(drift_terms, lambda t: NOT list_contains(coalesce(base_drift_terms, []), t))"
"""Drift terms the baseline did not have."""

_SIDE_BY_SIDE = f"""
SELECT query_id, coalesce(query, base_query) AS query, coalesce(domain, base_domain) AS domain,
       coalesce(critical, base_critical, false) AS critical,
       base_precision, precision, base_recall, recall, base_f1, f1, delta_f1, base_passed, passed, status,
       ndcg_delta, retrieval_status, true_positives AS tp,
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
    count(*) FILTER (status = 'golden_changed') AS golden_changed,
    count(*) FILTER (passed IS NOT NULL AND NOT passed) AS failed,
    count(*) FILTER (critical AND passed IS NOT NULL AND NOT passed) AS critical_failed,
    sum(n_drift) AS drift_terms, (SELECT n FROM new_drift) AS new_drift_queries,
    avg(precision) AS precision, avg(base_precision) AS base_precision,
    avg(recall) AS recall, avg(base_recall) AS base_recall, avg(f1) AS f1, avg(base_f1) AS base_f1,
    avg(term_drift_score) AS drift, avg(base_term_drift_score) AS base_drift,
    avg(delta_f1) FILTER (status <> 'golden_changed') AS mean_delta_f1 FROM k"""

_POINTS = f"""WITH k AS ({_KEYS}),
    shared AS (SELECT query_id, query, base_f1, f1, delta_f1, status FROM k
               WHERE status IN ('regressed', 'improved', 'unchanged'))
    SELECT *, (SELECT count(*) FROM shared) AS n FROM shared
    WHERE status <> 'unchanged' OR hash(query_id) % greatest(1, (SELECT count(*) FROM shared) // $max) = 0
    ORDER BY status, query_id LIMIT $max"""

# Per shared query (both sides scored, neither errored), in the candidate's golden-set order:
# what the paired statistics read.
_DELTAS = """SELECT domain, precision - base_precision AS d_precision, recall - base_recall AS d_recall,
       f1 - base_f1 AS d_f1
FROM pairs WHERE position IS NOT NULL AND base_position IS NOT NULL AND error IS NULL AND base_error IS NULL
      AND status <> 'golden_changed'
ORDER BY position"""


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
        if self.search:
            # over search_keys (PairedRuns.search_keys): the query text and id as terms are compared
            clauses.append("pair_row IN (SELECT pair_row FROM search_keys WHERE contains(key, $text))")
            params["text"] = self.search
        return " AND ".join(clauses), params

    @property
    def search(self) -> str:
        """The search text normalised as terms are (SPEC §2 rule 1), so `CAFÉ`, a decomposed
        `café` and `café` find each other; empty when there is nothing to search."""
        return normalize_term(self.text)


@dataclass(frozen=True)
class Walk:
    """Where one query sits in a filtered, sorted list: what Previous and Next open."""

    position: int | None
    """1-based place in the list; None when the query is not in it."""
    total: int
    """How many queries the list holds."""
    previous: str | None
    next: str | None
    """The neighbours' query ids (None at either end; `next` is the list's first query when
    this one is not in the list)."""


@dataclass(frozen=True)
class PairedRuns:
    """Two stored runs paired query by query, statuses decided; immutable, so a cache may
    hand the same one to every caller."""

    db_path: str
    """The store both runs were read from: the rows a page shows read their term lists there."""
    run_id: str
    baseline_id: str
    regression_delta: float
    """The candidate run's own regression_delta, which every status here used."""
    table: pa.Table
    """pair_queries' rows (the baseline's columns prefixed base_) and their index `pair_row`."""
    rules_changed: str | None = None
    """rules_note: the baseline was scored under other pass rules (SPEC §2 rule 8)."""

    @cached_property
    def search_keys(self) -> pa.Table:
        """(pair_row, key): each query's text and id normalised as terms are, joined by a line
        break (which a normalised text never holds); built on the first search, then kept."""
        texts = [t if t is not None else b for t, b in zip(self.table.column("query").to_pylist(),
                                                           self.table.column("base_query").to_pylist())]
        keys = [normalize_term(t or "") + "\n" + normalize_term(q or "")
                for t, q in zip(texts, self.table.column("query_id").to_pylist())]
        return pa.table({"pair_row": self.table.column("pair_row"), "key": pa.array(keys, pa.string())})

    def _connect(self, flt: CompareFilter) -> duckdb.DuckDBPyConnection:
        con = duckdb.connect(":memory:")
        con.register("pairs", self.table)
        if flt.search:
            con.register("search_keys", self.search_keys)
        return con

    def page(self, flt: CompareFilter, offset: int = 0, limit: int | None = 50) -> tuple[pd.DataFrame, int]:
        """One page of side-by-side rows matching `flt` (every row when limit is None), and
        how many rows match in all."""
        where, params = flt.where()
        order = SORTS.get(flt.sort, SORTS["regressions first"])
        params.update(limit=2 ** 62 if limit is None else int(limit), offset=int(offset))
        sql = (f"WITH k AS ({_KEYS}) SELECT pair_row, count(*) OVER () AS total_rows FROM k "  # noqa: S608
               f"WHERE {where} ORDER BY {order} LIMIT $limit OFFSET $offset")  # constants; values bound
        with self._connect(flt) as con:
            found = con.sql(sql, params=params).to_arrow_table()
            # the term diff only for the rows shown, gathered by position rather than scanned
            picked = self.table.take(found.column("pair_row"))
            self._with_term_lists(con, picked.append_column("page_row", pa.array(range(picked.num_rows), pa.int64())),
                                  None if limit is None else picked.column("query_id").to_pylist())
            df = con.sql(_SIDE_BY_SIDE).df()
        return df, int(found.column("total_rows")[0].as_py()) if found.num_rows else 0

    def walk(self, flt: CompareFilter, query_id: str) -> Walk:
        """The query's place in the rows `flt` matches, in its sort order (the order `page`
        shows), and its neighbours there."""
        where, params = flt.where()
        order = SORTS.get(flt.sort, SORTS["regressions first"])
        params["query_id"] = query_id
        sql = (f"WITH k AS ({_KEYS}), o AS (SELECT query_id, row_number() OVER w AS n, "  # noqa: S608
               f"lag(query_id) OVER w AS previous, lead(query_id) OVER w AS next FROM k WHERE {where} "
               f"WINDOW w AS (ORDER BY {order})) "  # constants; values bound
               "SELECT (SELECT count(*) FROM o), o.n, o.previous, o.next, (SELECT query_id FROM o WHERE n = 1) "
               "FROM (SELECT 1) LEFT JOIN o ON o.query_id = $query_id")
        with self._connect(flt) as con:
            total, n, previous, nxt, first = con.execute(sql, params).fetchall()[0]
        if n is None:
            return Walk(None, int(total), None, first)
        return Walk(int(n), int(total), previous, nxt)

    def _with_term_lists(self, con, rows: pa.Table, query_ids: list[str] | None, terms: pa.Table | None = None) -> None:
        """Register `picked`: these rows of the pair with both sides' store.TERM_LISTS, read
        from the store for these queries (None: every query) — the lists the pair leaves out —
        unless `terms` holds them already (store.comparison_terms of these queries)."""
        con.register("_rows", rows)
        if terms is None:
            terms = store.comparison_terms(self.db_path, [self.run_id, self.baseline_id], query_ids)
        con.register("_terms", terms)
        lists = ", ".join(f"c.{n}, b.{n} AS base_{n}" for n in store.TERM_LISTS)
        picked = con.sql(f"SELECT r.*, {lists} FROM _rows r "  # noqa: S608 constants
                         "LEFT JOIN _terms c ON r.position IS NOT NULL AND c.run_id = $run AND c.query_id = r.query_id "
                         "LEFT JOIN _terms b ON r.base_position IS NOT NULL AND b.run_id = $base "
                         "AND b.query_id = r.query_id", params={"run": self.run_id, "base": self.baseline_id})
        con.register("picked", picked.to_arrow_table())

    def query(self, query_id: str, terms: pa.Table | None = None) -> dict | None:
        """Both sides' stored values of one query (the baseline's prefixed base_), its term
        lists included (`terms`: store.comparison_terms of this query, when read already),
        and its status; None when neither run has it."""
        with duckdb.connect(":memory:") as con:
            con.register("pairs", self.table)
            row = con.sql("SELECT * FROM pairs WHERE query_id = $q", params={"q": query_id}).to_arrow_table()
            self._with_term_lists(con, row, [query_id], terms)
            cur = con.execute("SELECT * EXCLUDE (pair_row) FROM picked")
            rows = cur.fetchall()
            return dict(zip([d[0] for d in cur.description], rows[0])) if rows else None

    def headline(self) -> dict:
        """Counts per status and the macro means of both sides over shared queries."""
        with duckdb.connect(":memory:") as con:
            con.register("pairs", self.table)
            cur = con.execute(_HEADLINE)
            return dict(zip([d[0] for d in cur.description], cur.fetchall()[0]))

    @cached_property
    def domains(self) -> list[str]:
        """The domains the pair's queries name (either side), sorted: the domain filter's
        choices (as _KEYS' domain); computed once per pair."""
        import pyarrow.compute as pc

        named = pc.unique(pc.coalesce(self.table.column("domain"), self.table.column("base_domain"))).to_pylist()
        return sorted(d for d in named if d is not None)

    def statistics(self) -> dict:
        """The report's `statistics` block for this pair (stats.describe_pairs over the shared,
        unerrored queries, with the candidate's regression_delta and its domains), without
        the noise-floor part, which needs the run's repeats."""
        with duckdb.connect(":memory:") as con:
            con.register("pairs", self.table)
            deltas = con.execute(_DELTAS).fetchnumpy()
            named = [r[0] for r in con.execute("SELECT DISTINCT domain FROM pairs WHERE position IS NOT NULL "
                                               "AND domain <> '' ORDER BY 1").fetchall()]
        return describe_pairs(deltas["d_f1"].astype(float), deltas["d_precision"].astype(float),
                              deltas["d_recall"].astype(float), list(deltas["domain"]), self.regression_delta, named)

    def points(self, max_points: int = 5000) -> tuple[pd.DataFrame, int]:
        """(baseline F1, F1, delta, status, query) per shared query for plots; a reproducible
        sample when there are more than `max_points` (regressed and improved always kept)."""
        with duckdb.connect(":memory:") as con:
            con.register("pairs", self.table)
            df = con.execute(_POINTS, {"max": int(max_points)}).df()
        total = int(df["n"].iloc[0]) if len(df) else 0
        return df.drop(columns=["n"]), total


@dataclass(frozen=True)
class BaselineChoice:
    """The baseline Compare opens a run against when the link names none."""

    baseline_id: str | None
    """None when the run records no baseline and no earlier run shares its golden set."""
    why: str
    """How it was chosen, for the page to say."""


def default_baseline(runs: pd.DataFrame, run_id: str) -> BaselineChoice:
    """The run's recorded baseline (`evaluate --baseline`) when it is stored, else the latest
    earlier run on the same golden set (the same name, SPEC §1.1: any revision), else none:
    never a run on another golden set. `runs` is store.runs_overview's frame."""
    by_id = runs.set_index("run_id")
    run = by_id.loc[run_id]
    recorded = run["baseline_id"] if isinstance(run["baseline_id"], str) else None
    if recorded in by_id.index and recorded != run_id:
        return BaselineChoice(recorded, "the run's recorded baseline")
    missing = (f"its recorded baseline {recorded} is not in this store" if recorded else
               "the run records no baseline")
    earlier = runs[(runs["golden_name"] == run["golden_name"]) & runs["golden_name"].notna()
                   & (runs["run_id"] != run_id)
                   & ((runs["created_at"] < run["created_at"])
                      | ((runs["created_at"] == run["created_at"]) & (runs["run_id"] < run_id)))]
    if earlier.empty:
        return BaselineChoice(None, f"{missing}, and no earlier run shares its golden set")
    latest = earlier.sort_values(["created_at", "run_id"]).iloc[-1]["run_id"]
    return BaselineChoice(latest, f"the latest earlier run on the same golden set ({missing})")


def golden_sets_differ(runs: pd.DataFrame, run_id: str, baseline_id: str) -> str | None:
    """The warning when the two runs were scored on different golden sets, a note when on
    two revisions of one set or on the same content under two names, else None. `runs` is
    store.runs_overview's frame."""
    by_id = runs.set_index("run_id")
    if run_id not in by_id.index or baseline_id not in by_id.index:
        return None
    here, there = by_id.loc[run_id], by_id.loc[baseline_id]
    return golden_note(*((r["golden_name"] if isinstance(r["golden_name"], str) else None,
                          r["golden_hash"] if isinstance(r["golden_hash"], str) else None) for r in (here, there)))


def golden_note(current: tuple[str | None, str | None], baseline: tuple[str | None, str | None]) -> str | None:
    """golden_sets_differ over two runs' (golden name, golden hash)."""
    (name, digest), (base_name, base_digest) = current, baseline
    if digest is None or base_digest is None:
        return None
    if digest == base_digest:
        return other_name_note(name, base_name) if names_differ(name, base_name) else None
    return OTHER_REVISION if revisions_of_one_set(current, baseline) else DIFFERENT_GOLDEN_SET


def pair_notes(run: dict, baseline: dict) -> list[str]:
    """What a comparison of two stored runs says besides its statuses (`termgate compare`):
    the golden-set note and the pass-rules note. `run`, `baseline`: store.get_run's rows."""
    note = golden_note(*((store.stored_golden_name(r), r.get("golden_hash")) for r in (run, baseline)))
    current, base = _thresholds(run.get("thresholds")), _thresholds(baseline.get("thresholds"))
    rules = rules_note(current, base) if current is not None else None
    return [n for n in (note, rules) if n]


def _thresholds(stored: str | None) -> dict | None:
    """A run's thresholds as stored (JSON); None when it stored none."""
    value = json.loads(stored) if stored else None
    return value if isinstance(value, dict) else None


def _regression_delta(thresholds: dict | None) -> float:
    """The candidate's stored regression_delta; the model's default when it stored none."""
    value = thresholds.get("regression_delta") if thresholds else None
    return Thresholds().regression_delta if value is None else float(value)


def pair_runs(db_path: str | Path, run_id: str, baseline_id: str) -> PairedRuns:
    """Read both runs from the store and pair them with the candidate's regression_delta.
    An unknown id reads as a run with no queries. When the baseline was scored under another
    forbidden_fails, the candidate's pass/fail is read as that rule reads it (SPEC §2 rule 8)."""
    stored = store.comparison_rows(db_path, run_id, baseline_id)
    current, base = _thresholds(stored.thresholds), _thresholds(stored.base_thresholds)
    delta = _regression_delta(current)
    as_baseline = None
    if base is not None and recorded_rule(base, "forbidden_fails") != recorded_rule(current or {}, "forbidden_fails"):
        lists = store.pass_lists(db_path, run_id)
        side = pa.table({"passed": stored.current.column("passed"), "critical": stored.current.column("critical"),
                         "failure_reasons": lists.column("failure_reasons"),
                         "drift_reasons": lists.column("drift_reasons")})
        as_baseline = passed_under(side, recorded_rule(base, "forbidden_fails"))
    paired = pair_queries(stored.current, stored.baseline, delta, revisions_of_one_set(*stored.golden), as_baseline)
    paired = _with_retrieval(db_path, run_id, paired)
    return PairedRuns(str(db_path), run_id, baseline_id, delta,
                      paired.append_column("pair_row", pa.array(range(paired.num_rows), pa.int64())),
                      rules_note(current or {}, base) if stored.thresholds is not None else None)


def _with_retrieval(db_path: str | Path, run_id: str, paired: pa.Table) -> pa.Table:
    """The pair with the candidate's retrieval change per query, as its report has it
    (RetrievalOutcome.per_query): `ndcg_delta`, its nDCG@k minus its reference's (the
    baseline it was evaluated against, else the unexpanded query), and `retrieval_status`;
    null for a query not measured and throughout for a run without retrieval."""
    from .errors import UnknownRunError

    try:
        outcome = store.retrieval_outcome(db_path, store.get_run(db_path, run_id))
    except UnknownRunError:  # an unknown id reads as a run with no queries
        outcome = None
    found = {e["query_id"]: e for e in outcome.per_query()} if outcome is not None else {}
    entries = [found.get(qid) if position is not None else None for qid, position in
               zip(paired.column("query_id").to_pylist(), paired.column("position").to_pylist())]
    return (paired.append_column("ndcg_delta", pa.array([e and e["ndcg_delta"] for e in entries], pa.float64()))
            .append_column("retrieval_status", pa.array([e and e["status"] for e in entries], pa.string())))


def compare_page(db_path: str | Path, run_id: str, baseline_id: str, flt: CompareFilter,
                 offset: int = 0, limit: int | None = 50) -> tuple[pd.DataFrame, int]:
    """PairedRuns.page of a freshly read pair (`termgate compare`)."""
    return pair_runs(db_path, run_id, baseline_id).page(flt, offset, limit)
