"""SPEC §2 rules 2–6 as SQL: per golden query, one row of lists (a part from
loading.normalise), matched, judged and scored with list functions. No row per term is
ever built, so the work grows linearly with the number of queries.

List positions are 1-based in SQL: `expected_at[i]` is the position in generated_terms
of expected term i (NULL when not generated), `generated_at[k]` the position in
expected_terms of generated term k.
"""

from __future__ import annotations

import hashlib

import duckdb
import numpy as np
import pyarrow as pa

from ...drift.judge import DriftCandidate, DriftJudge
from ..metrics import EPSILON, FORBIDDEN_FAILS, FORBIDDEN_REASON
from ...models import Thresholds
from .database import ScoredQueries, ScoreFacts

__all__ = ["judge_drift", "score_part", "collect"]


def _matched(source: str) -> str:
    """Rule 2 over the rows of `source`: where each term sits in the other list, which terms
    are true positives, and which generated terms are forbidden."""
    return f"""SELECT *,
            list_transform(expected_at, lambda a, i: a IS NOT NULL
                           AND generated_weights[a] >= expected_min_weights[i] - $eps) AS expected_matched,
            list_transform(generated_at, lambda a, i: a IS NOT NULL
                           AND generated_weights[i] >= expected_min_weights[a] - $eps) AS generated_matched
        FROM (SELECT *, list_transform(expected_terms, lambda x: list_position(generated_terms, x)) AS expected_at,
                        list_transform(generated_terms, lambda x: list_position(expected_terms, x)) AS generated_at,
                        list_transform(generated_terms, lambda x: list_contains(forbidden_terms, x))
                            AS generated_forbidden
              FROM {source})"""


JUDGED = ("NOT generated_matched[k + 1] AND NOT generated_forbidden[k + 1] AND generated_at[k + 1] IS NULL "
          "AND generated_terms[k + 1] IS DISTINCT FROM query_normalised")
"""Rule 5: which generated term k (0-based) the drift judge is asked about, whatever the
judge: a false positive that is not forbidden (always drift), whose text is not expected
(an underweight term) and is not the query's own text after rule 1 (never drift; column
query_normalised)."""


def judge_drift(con: duckdb.DuckDBPyConnection, judge: DriftJudge, parts: list[str]) -> bool:
    """Rule 5: forbidden terms always drift; the judge decides the other false positives
    whose text is neither expected nor the query's own (JUDGED). Leaves its verdicts per
    query in table `verdicts` (term indexes into generated_terms, 0-based); False when
    there is nothing to look up (judge `none`)."""
    if judge.name == "none":
        return False
    source = " UNION ALL ".join(f"SELECT * FROM {part}" for part in parts)
    rows = con.execute(f"""
        SELECT position, query_id, query, generated_terms[k + 1], domain, intent, expected_terms, k FROM (
            SELECT position, query_id, query, domain, intent, expected_terms, generated_terms,
                   unnest(list_filter(range(len(generated_terms)), lambda k: {JUDGED})) AS k
            FROM (SELECT *, normalise_text(query) AS query_normalised FROM ({_matched(f'({source})')})))
        ORDER BY position, k""", {"eps": EPSILON}).fetchall()
    candidates = [DriftCandidate(qid, query, term, domain, intent, tuple(terms))
                  for _, qid, query, term, domain, intent, terms, _ in rows]
    verdicts = judge.judge(candidates) if candidates else []
    con.register("_verdicts_arrow", pa.table({
        "position": pa.array([r[0] for r in rows], pa.int64()),
        "term_index": pa.array([r[7] for r in rows], pa.int64()),
        "drift": pa.array([v.drift for v in verdicts], pa.bool_()),
        "reason": pa.array([v.reason for v in verdicts], pa.string()),
    }))
    con.execute("""CREATE TABLE verdicts AS SELECT position, list(term_index) AS term_indexes,
                   list(drift) AS drift, list(reason) AS reasons FROM _verdicts_arrow GROUP BY position""")
    con.unregister("_verdicts_arrow")
    return True


def _drift_lists(judged: bool) -> str:
    """Per generated term: drift, unjudged and the drift reason, and how many terms were put
    to the judge (n_asked) (select items over `matched`)."""
    if not judged:
        return ("0 AS n_asked, generated_forbidden AS generated_drift, "
                "list_transform(generated_terms, lambda x: false) AS generated_unjudged, "
                "list_transform(generated_forbidden, lambda x: CASE WHEN x THEN 'forbidden term' END) "
                "AS generated_reason")
    at = "list_position(verdicts.term_indexes, i - 1)"
    return (f"coalesce(len(verdicts.term_indexes), 0) AS n_asked, list_transform(generated_terms, lambda x, i: generated_forbidden[i] "
            f"OR coalesce(verdicts.drift[{at}], false)) AS generated_drift, "
            f"list_transform(generated_terms, lambda x, i: coalesce({at} IS NOT NULL "
            f"AND verdicts.drift[{at}] IS NULL, false)) AS generated_unjudged, "
            f"list_transform(generated_terms, lambda x, i: CASE WHEN generated_forbidden[i] THEN 'forbidden term' "
            f"WHEN verdicts.drift[{at}] THEN verdicts.reasons[{at}] END) AS generated_reason")


def score_part(con: duckdb.DuckDBPyConnection, thresholds: Thresholds, judged: bool, source: str, target: str,
               reordered: bool) -> None:
    """Rules 2–6 per query of table `source` into table `target`, in golden-set order so
    the report's rows stream out without another sort. Besides the row's columns
    (termgate.models.QUERY_COLUMNS), it keeps the per-term lists the store's term rows
    unfold from (generated_*, expected_*)."""
    join = " LEFT JOIN verdicts USING (position)" if judged else ""
    sql = f"""
    WITH matched AS ({_matched(source)}),
    judged AS (SELECT matched.*, {_drift_lists(judged)} FROM matched{join}),
    listed AS (
        SELECT position, query_id, query, domain, critical, error, no_line, golden_entry_hash, n_asked,
            generated_terms, generated_weights, expected_terms, expected_min_weights,
            list_where(expected_terms, expected_matched) AS true_positives,
            list_where(generated_terms, list_transform(generated_matched, lambda x: NOT x)) AS false_positives,
            list_where(expected_terms, list_transform(expected_matched, lambda x: NOT x)) AS false_negatives,
            list_where(generated_terms, generated_drift) AS drift_terms,
            list_where(generated_reason, generated_drift) AS drift_reasons,
            list_where(generated_terms, generated_unjudged) AS unjudged_terms,
            -- underweight: generated, expected, not a true positive (rare: only those rows format)
            CASE WHEN list_count(expected_at) = len(list_filter(expected_matched, lambda x: x)) THEN []::VARCHAR[]
                 ELSE list_filter(list_transform(expected_at, lambda a, i: CASE WHEN a IS NOT NULL
                     AND NOT expected_matched[i] THEN 'underweight: ' || expected_terms[i] || ' '
                     || fmt_pair(generated_weights[a], expected_min_weights[i]) END), lambda x: x IS NOT NULL)
                 END AS underweight,
            len(list_filter(generated_forbidden, lambda x: x)) AS n_forbidden,
            list_where(generated_terms, generated_forbidden) AS forbidden_generated,
            generated_matched, generated_drift, generated_unjudged, generated_reason,
            list_transform(generated_at, lambda a: a - 1) AS generated_expected_pos,
            list_transform(generated_at, lambda a: expected_min_weights[a]) AS generated_min_weight,
            expected_matched, list_transform(expected_at, lambda a: generated_weights[a]) AS expected_generated_weight
        FROM judged),
    counted AS (
        SELECT *, len(generated_terms) AS n_generated, len(expected_terms) AS n_expected,
            len(true_positives) AS n_tp, len(false_positives) AS n_fp, len(false_negatives) AS n_fn,
            len(drift_terms) AS n_drift, len(unjudged_terms) AS n_unjudged, len(underweight) AS n_underweight
        FROM listed),
    ratios AS (
        SELECT *,
            CASE WHEN n_generated = 0 THEN 0.0::DOUBLE ELSE n_tp / (n_tp + n_fp) END AS precision,
            CASE WHEN n_generated = 0 THEN 0.0::DOUBLE WHEN n_expected = 0 THEN 1.0::DOUBLE
                 ELSE n_tp / (n_tp + n_fn) END AS recall,
            CASE WHEN n_generated = 0 THEN 1.0::DOUBLE ELSE 1.0::DOUBLE - n_drift / n_generated END
                AS term_drift_score,
            {FORBIDDEN_FAILS} AS forbidden_fail
        FROM counted)
    SELECT * EXCLUDE (underweight, forbidden_generated, forbidden_fail),
        CASE WHEN n_generated > 0 AND precision + recall <> 0 THEN 2 * precision * recall / (precision + recall)
             ELSE 0.0::DOUBLE END AS f1,
        error IS NULL AND n_generated > 0 AND precision >= $p - $eps AND recall >= $r - $eps
            AND term_drift_score >= $d - $eps AND NOT forbidden_fail AS passed,
        list_concat(
            CASE WHEN error IS NULL THEN []::VARCHAR[] ELSE ['error: ' || error] END,
            CASE WHEN n_generated = 0 THEN ['empty expansion'] ELSE []::VARCHAR[] END, underweight,
            CASE WHEN precision >= $p - $eps THEN []::VARCHAR[] ELSE ['precision ' || fmt_pair(precision, $p)] END,
            CASE WHEN recall >= $r - $eps THEN []::VARCHAR[] ELSE ['recall ' || fmt_pair(recall, $r)] END,
            CASE WHEN term_drift_score >= $d - $eps THEN []::VARCHAR[]
                 ELSE ['term_drift_score ' || fmt_pair(term_drift_score, $d)] END,
            CASE WHEN forbidden_fail THEN list_transform(forbidden_generated, lambda t: '{FORBIDDEN_REASON}' || t)
                 ELSE []::VARCHAR[] END) AS failure_reasons,
        list_concat(CASE WHEN n_expected = 0 THEN ['no golden terms provided'] ELSE []::VARCHAR[] END,
                    CASE WHEN no_line THEN ['no expansion generated'] ELSE []::VARCHAR[] END) AS notes,
        -- termgate.hashing's digest of one query's generated terms, merged and normalised
        sha256(length_prefixed(query_id) || n_generated || ':' || array_to_string(list_transform(
            list_zip(generated_terms, generated_weights), lambda x: length_prefixed(x[1]) || CAST(x[2] AS VARCHAR)
            || ';'), '') || optional_prefixed(error)) AS generated_digest
    FROM ratios{" ORDER BY position" if judged or reordered else ""}"""
    # the part is in golden-set order unless rows were updated; a join needs the sort too
    con.execute(f"CREATE TABLE {target} AS " + sql, {"p": float(thresholds.precision_min),
                                                     "r": float(thresholds.recall_min),
                                                     "d": float(thresholds.drift_min), "eps": EPSILON,
                                                     "ff": thresholds.forbidden_fails})
    con.execute(f"DROP TABLE {source}")


def collect(con: duckdb.DuckDBPyConnection, total: int, golden_hash: str) -> ScoredQueries:
    """The scored table query_scores as the columns the gate, aggregates and hashes read."""
    arrays = con.execute("""SELECT precision, recall, f1, term_drift_score, n_tp, n_fp, n_fn, n_expected,
                            n_generated, critical, passed, error IS NOT NULL AS errored, n_drift, n_unjudged,
                            n_forbidden, n_underweight, no_line, n_asked FROM query_scores""").fetchnumpy()
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    ids = con.sql("SELECT query_id FROM query_scores").to_arrow_table().column(0).combine_chunks()
    facts = ScoreFacts(ids, arrays["n_expected"], arrays["n_generated"], arrays["recall"],
                       arrays["critical"].astype(bool), arrays["passed"].astype(bool), arrays["errored"].astype(bool),
                       arrays["n_drift"], arrays["term_drift_score"], arrays["n_unjudged"],
                       arrays["n_forbidden"], arrays["n_underweight"], arrays["no_line"].astype(bool),
                       arrays["n_asked"])
    domains = [r[0] for r in con.execute("SELECT DISTINCT domain FROM query_scores WHERE domain IS NOT NULL "
                                         "ORDER BY domain").fetchall()]
    digests = "".join(con.sql("SELECT generated_digest FROM query_scores").to_arrow_table().column(0).to_pylist())
    generated_hash = hashlib.sha256(digests.encode()).hexdigest()  # query_scores is in golden-set order
    return ScoredQueries(con, total, golden_hash, generated_hash, domains, arrays["precision"], arrays["recall"],
                         arrays["f1"], arrays["term_drift_score"], arrays["n_tp"], arrays["n_fp"],
                         arrays["n_fn"], facts)
