"""What verdicts on terms read (issue 19 items 1 and 4): the verdict records of the audit
log, the query and term rows a verdict names, and the unflagged false positives of a run.

Verdicts are audit records (kind `verdict`), appended as every chain record is
(store.backends.append_audit; on PostgreSQL through `evalcore_append_verdict`): this module
only reads. Every statement is a constant with bound values.
"""

from __future__ import annotations

from pathlib import Path

from .pg_rows import Rows
from .reading import connect

__all__ = ["verdict_query", "unflagged_false_positives", "verdict_context"]

_QUERY_COLUMNS = ("run_id", "query_id", "position", "query", "domain", "generated_terms", "expected_terms",
                  "true_positives")
_TERM_COLUMNS = ("run_id", "query_id", "term", "kind", "drift", "unjudged", "reason", "gen_pos")


def verdict_query(db_path: str | Path, run_id: str, query_id: str) -> tuple[dict | None, list[dict]]:
    """(the query's row — query, domain, generated, expected and matched terms — or None when
    the run has no such query, its generated terms' rows: term, kind, drift, unjudged, reason)."""
    wanted = Rows("run_id = %s AND query_id = %s", (run_id, query_id))
    with connect(db_path, rows={"query_results": wanted._replace(columns=_QUERY_COLUMNS),
                                "term_rows": wanted._replace(columns=_TERM_COLUMNS)}) as con:
        cur = con.execute(f"SELECT {', '.join(_QUERY_COLUMNS)} FROM query_results WHERE run_id = ? AND query_id = ?",
                          [run_id, query_id])
        found = cur.fetchall()
        terms = con.execute(f"SELECT {', '.join(_TERM_COLUMNS)} FROM term_rows WHERE run_id = ? AND query_id = ? "
                            "AND gen_pos IS NOT NULL ORDER BY gen_pos", [run_id, query_id]).fetchall()
    row = dict(zip(_QUERY_COLUMNS, found[0])) if found else None
    return row, [dict(zip(_TERM_COLUMNS, t)) for t in terms]


def unflagged_false_positives(db_path: str | Path, run_id: str) -> list[tuple[str, str]]:
    """(query_id, term) of every false positive of a run that the drift judge was asked
    about and did not flag (not drift, not unjudged; forbidden and underweight terms are
    never the judge's), in golden-set order then generated order."""
    wanted = Rows("run_id = %s", (run_id,))
    with connect(db_path, rows={"query_results": wanted._replace(columns=("run_id", "query_id", "position",
                                                                          "expected_terms")),
                                "term_rows": wanted._replace(columns=_TERM_COLUMNS)}) as con:
        return [tuple(r) for r in con.execute(
            """SELECT t.query_id, t.term FROM term_rows t JOIN query_results q
                   ON q.run_id = t.run_id AND q.query_id = t.query_id
               WHERE t.run_id = ? AND t.kind = 'FP' AND NOT coalesce(t.drift, false)
                 AND NOT coalesce(t.unjudged, false)
                 AND NOT list_contains(coalesce(q.expected_terms, []), t.term)
               ORDER BY q.position, t.gen_pos""", [run_id]).fetchall()]


def verdict_context(db_path: str | Path, run_ids: list[str]) -> tuple[dict[str, dict], dict[tuple[str, str], dict]]:
    """What re-judging verdict terms needs, in one read: ({run_id: domain_context,
    golden_hash, drift_judge_config}, {(run_id, query_id): query, domain, expected_terms})."""
    ids = list(run_ids)
    run_cols = ("run_id", "domain_context", "golden_hash", "drift_judge_config")
    query_cols = ("run_id", "query_id", "query", "domain", "expected_terms")
    with connect(db_path, rows={"runs": Rows("run_id = ANY(%s)", (ids,), run_cols),
                                "query_results": Rows("run_id = ANY(%s)", (ids,), query_cols)}) as con:
        runs = con.execute(f"SELECT {', '.join(run_cols)} FROM runs WHERE list_contains(?::VARCHAR[], run_id)",
                           [ids]).fetchall()
        queries = con.execute(f"SELECT {', '.join(query_cols)} FROM query_results "
                              "WHERE list_contains(?::VARCHAR[], run_id)", [ids]).fetchall()
    return ({r[0]: dict(zip(run_cols, r)) for r in runs},
            {(q[0], q[1]): dict(zip(query_cols, q)) for q in queries})
