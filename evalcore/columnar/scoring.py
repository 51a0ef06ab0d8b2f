"""Scoring for the columnar engine (SPEC §2 rules 2–6): per golden query, one row of lists
(a part of j, see loading._normalise), matched, judged and scored with list functions: no
row per term is ever built, so the work grows linearly with the number of queries.

List positions are 1-based in SQL: `e_at[i]` is the position in `gt` of expected term i
(NULL when not generated), `g_at[k]` the position in `et` of generated term k.
"""

from __future__ import annotations

import hashlib

import duckdb
import numpy as np
import pyarrow as pa

from ..drift import DriftCandidate, DriftJudge
from ..metrics import EPSILON
from ..models import Thresholds
from .engine import ColumnarScores, ScoreFacts


def _matched(source: str) -> str:
    """Rule 2 over the rows of `source` (a table like j): where each term sits in the other
    list, which terms are true positives, and which generated terms are forbidden."""
    return f"""SELECT *, list_transform(e_at, lambda a, i: a IS NOT NULL AND gw[a] >= ew[i] - $eps) AS e_tp,
                      list_transform(g_at, lambda a, i: a IS NOT NULL AND gw[i] >= ew[a] - $eps) AS g_tp
        FROM (SELECT *, list_transform(et, lambda x: list_position(gt, x)) AS e_at,
                        list_transform(gt, lambda x: list_position(et, x)) AS g_at,
                        list_transform(gt, lambda x: list_contains(ft, x)) AS g_forb
              FROM {source})"""


def _judge(con: duckdb.DuckDBPyConnection, judge: DriftJudge, parts: list[str]) -> bool:
    """Rule 5: forbidden terms always drift; the judge decides the other false positives
    whose text is not expected. Leaves its verdicts per query in table vd (positions in
    gt, 0-based); False when there is nothing to look up (judge `none`)."""
    if judge.name == "none":
        return False
    source = " UNION ALL ".join(f"SELECT * FROM {part}" for part in parts)
    rows = con.execute(f"""
        SELECT pos, query_id, query, gt[k + 1], domain, intent, et, k FROM (
            SELECT pos, query_id, query, domain, intent, et, gt,
                   unnest(list_filter(range(len(gt)), lambda k: NOT g_tp[k + 1] AND NOT g_forb[k + 1]
                                                                AND g_at[k + 1] IS NULL)) AS k
            FROM ({_matched(f'({source})')}))
        ORDER BY pos, k""", {"eps": EPSILON}).fetchall()
    candidates = [DriftCandidate(qid, query, term, domain, intent, tuple(terms))
                  for _, qid, query, term, domain, intent, terms, _ in rows]
    verdicts = judge.judge(candidates) if candidates else []
    con.register("_verdicts_arrow", pa.table({
        "pos": pa.array([r[0] for r in rows], pa.int64()),
        "k": pa.array([r[7] for r in rows], pa.int64()),
        "verdict": pa.array([v.drift for v in verdicts], pa.bool_()),
        "why": pa.array([v.reason for v in verdicts], pa.string()),
    }))
    con.execute("""CREATE TABLE vd AS SELECT pos, list(k) AS vk, list(verdict) AS vv, list(why) AS vw
                   FROM _verdicts_arrow GROUP BY pos""")
    con.unregister("_verdicts_arrow")
    return True


def _drift_lists(verdicts: bool) -> str:
    """Per generated term: drift, unjudged and the drift reason (SQL select items over s)."""
    if not verdicts:
        return ("g_forb AS g_drift, list_transform(gt, lambda x: false) AS g_unjudged, "
                "list_transform(g_forb, lambda x: CASE WHEN x THEN 'forbidden term' END) AS g_reason")
    at = "list_position(vd.vk, i - 1)"
    return (f"list_transform(gt, lambda x, i: g_forb[i] OR coalesce(vd.vv[{at}], false)) AS g_drift, "
            f"list_transform(gt, lambda x, i: coalesce({at} IS NOT NULL AND vd.vv[{at}] IS NULL, false))"
            " AS g_unjudged, "
            f"list_transform(gt, lambda x, i: CASE WHEN g_forb[i] THEN 'forbidden term' "
            f"WHEN vd.vv[{at}] THEN vd.vw[{at}] END) AS g_reason")


def _score(con: duckdb.DuckDBPyConnection, thresholds: Thresholds, verdicts: bool, source: str, target: str,
           reordered: bool) -> None:
    """Rules 2–6 per query of table `source` (a part of j) into table `target`, in golden-set
    order so the report's rows stream out of q without another sort. Besides the report's
    columns, q keeps the per-term lists the store's term rows unfold from (g_*, e_*)."""
    p, r, d = float(thresholds.precision_min), float(thresholds.recall_min), float(thresholds.drift_min)
    join = " LEFT JOIN vd ON vd.pos = s.pos" if verdicts else ""
    sql = f"""
    WITH s AS ({_matched(source)}),
    v AS (SELECT s.*, {_drift_lists(verdicts)} FROM s{join}),
    b AS (
        SELECT pos, query_id, query, domain, critical,
            gt AS generated_terms, gw AS generated_weights, et AS expected_terms, ew AS expected_min_weights,
            list_where(et, e_tp) AS true_positives,
            list_where(gt, list_transform(g_tp, lambda x: NOT x)) AS false_positives,
            list_where(et, list_transform(e_tp, lambda x: NOT x)) AS false_negatives,
            list_where(gt, g_drift) AS drift_terms, list_where(g_reason, g_drift) AS drift_reasons,
            list_where(gt, g_unjudged) AS unjudged_terms,
            -- underweight: generated, expected, not a true positive (rare: only those rows format)
            CASE WHEN list_count(e_at) = len(list_filter(e_tp, lambda x: x)) THEN []::VARCHAR[]
                 ELSE list_filter(list_transform(e_at, lambda a, i: CASE WHEN a IS NOT NULL AND NOT e_tp[i]
                     THEN 'underweight: ' || et[i] || ' ' || fmt_pair(gw[a], ew[i]) END), lambda x: x IS NOT NULL)
                 END AS underweight,
            len(list_filter(g_forb, lambda x: x)) AS n_forbidden,
            g_tp, g_drift, g_unjudged, g_reason,
            list_transform(g_at, lambda a: a - 1) AS g_exp_pos, list_transform(g_at, lambda a: ew[a]) AS g_min_weight,
            e_tp, list_transform(e_at, lambda a: gw[a]) AS e_weight
        FROM v),
    c AS (
        SELECT *, len(generated_terms) AS n_generated, len(expected_terms) AS n_expected,
            len(true_positives) AS n_tp, len(false_positives) AS n_fp, len(false_negatives) AS n_fn,
            len(drift_terms) AS n_drift, len(unjudged_terms) AS n_unjudged, len(underweight) AS n_underweight
        FROM b),
    d AS (
        SELECT *,
            CASE WHEN n_generated = 0 THEN 0.0::DOUBLE ELSE n_tp / (n_tp + n_fp) END AS precision,
            CASE WHEN n_generated = 0 THEN 0.0::DOUBLE WHEN n_expected = 0 THEN 1.0::DOUBLE
                 ELSE n_tp / (n_tp + n_fn) END AS recall,
            CASE WHEN n_generated = 0 THEN 1.0::DOUBLE ELSE 1.0::DOUBLE - n_drift / n_generated END
                AS term_drift_score
        FROM c)
    SELECT * EXCLUDE (underweight),
        CASE WHEN n_generated > 0 AND precision + recall <> 0 THEN 2 * precision * recall / (precision + recall)
             ELSE 0.0::DOUBLE END AS f1,
        n_generated > 0 AND precision >= $p - $eps AND recall >= $r - $eps AND term_drift_score >= $d - $eps
            AS passed,
        list_concat(list_concat(list_concat(list_concat(
            CASE WHEN n_generated = 0 THEN ['empty expansion'] ELSE []::VARCHAR[] END, underweight),
            CASE WHEN precision >= $p - $eps THEN []::VARCHAR[] ELSE ['precision ' || fmt_pair(precision, $p)] END),
            CASE WHEN recall >= $r - $eps THEN []::VARCHAR[] ELSE ['recall ' || fmt_pair(recall, $r)] END),
            CASE WHEN term_drift_score >= $d - $eps THEN []::VARCHAR[]
                 ELSE ['term_drift_score ' || fmt_pair(term_drift_score, $d)] END) AS failure_reasons,
        CASE WHEN n_expected = 0 THEN ['no golden terms provided'] ELSE []::VARCHAR[] END AS notes,
        -- evalcore.hashing.generated_item_digest of the merged, normalised terms
        sha256(lp(query_id) || n_generated || ':' || array_to_string(list_transform(
            list_zip(generated_terms, generated_weights), lambda x: lp(x[1]) || CAST(x[2] AS VARCHAR) || ';'), '')
            || '-') AS generated_digest
    FROM d{" ORDER BY pos" if verdicts or reordered else ""}"""
    # the part is in golden-set order unless rows were updated; a join needs the sort too
    con.execute(f"CREATE TABLE {target} AS " + sql, {"p": p, "r": r, "d": d, "eps": EPSILON})
    con.execute(f"DROP TABLE {source}")


def _collect(con: duckdb.DuckDBPyConnection, total: int, golden_hash: str) -> ColumnarScores:
    arrays = con.execute("""SELECT precision, recall, f1, term_drift_score, n_tp, n_fp, n_fn, n_expected,
                            n_generated, critical, passed, n_drift, n_unjudged, n_forbidden, n_underweight
                            FROM q""").fetchnumpy()
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    ids = con.sql("SELECT query_id FROM q").to_arrow_table().column(0).combine_chunks()
    facts = ScoreFacts(ids, arrays["n_expected"], arrays["n_generated"], arrays["recall"],
                       arrays["critical"].astype(bool), arrays["passed"].astype(bool), np.zeros(total, bool),
                       arrays["n_drift"], arrays["term_drift_score"], arrays["n_unjudged"],
                       arrays["n_forbidden"], arrays["n_underweight"])
    domains = [r[0] for r in con.execute("SELECT DISTINCT domain FROM q WHERE domain IS NOT NULL "
                                         "ORDER BY domain").fetchall()]
    digests = "".join(con.sql("SELECT generated_digest FROM q").to_arrow_table().column(0).to_pylist())
    generated_hash = hashlib.sha256(digests.encode()).hexdigest()  # q is in golden-set order
    return ColumnarScores(con, total, golden_hash, generated_hash, domains, arrays["precision"], arrays["recall"],
                          arrays["f1"], arrays["term_drift_score"], arrays["n_tp"], arrays["n_fp"],
                          arrays["n_fn"], facts)
