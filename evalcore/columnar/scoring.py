"""Scoring for the columnar engine (SPEC §2 rules 1–6): merge, match, judge drift, and
per-query P/R/F1, pass/fail and failure reasons, in chunks of queries."""

from __future__ import annotations

import hashlib

import duckdb
import numpy as np
import pyarrow as pa

from ..drift import DriftCandidate, DriftJudge
from ..metrics import EPSILON
from ..models import Thresholds
from .engine import ColumnarScores, ScoreFacts, _bad

def _match(con: duckdb.DuckDBPyConnection) -> None:
    """Rules 1–2: merge duplicates (highest weight, first position), then match."""
    con.execute("CREATE TABLE em AS SELECT pos, term, max(w) AS min_weight, min(k) AS ek FROM e1 GROUP BY pos, term")
    con.execute("CREATE TABLE fm AS SELECT DISTINCT pos, term FROM f1")
    con.execute("CREATE TABLE cm AS SELECT g.pos, c1.term, max(c1.w) AS weight, min(c1.k) AS gk "
                "FROM c1 JOIN g ON g.query_id = c1.qid GROUP BY g.pos, c1.term")
    # ek/gk are first positions in the raw lists; where terms merged, renumber them as
    # positions in the merged lists (what the store's exp_pos/gen_pos mean).
    for merged, raw, key in (("em", "e1", "ek"), ("cm", "c1", "gk")):
        if con.execute(f"SELECT (SELECT count(*) FROM {merged}) <> (SELECT count(*) FROM {raw})").fetchall()[0][0]:
            con.execute(f"CREATE OR REPLACE TABLE {merged} AS SELECT * REPLACE "
                        f"(row_number() OVER (PARTITION BY pos ORDER BY {key}) - 1 AS {key}) FROM {merged}")
    _bad(con, "terms both expected and forbidden", "SELECT count(*) FROM em JOIN fm USING (pos, term)")
    con.execute("""CREATE TABLE t1 AS
        SELECT coalesce(em.pos, cm.pos) AS pos, coalesce(em.term, cm.term) AS term, em.min_weight, em.ek,
               cm.weight, cm.gk, coalesce(cm.weight >= em.min_weight - ?, false) AS tp,
               fm.term IS NOT NULL AND cm.gk IS NOT NULL AS forbidden
        FROM em FULL OUTER JOIN cm ON em.pos = cm.pos AND em.term = cm.term
        LEFT JOIN fm ON fm.pos = coalesce(em.pos, cm.pos) AND fm.term = coalesce(em.term, cm.term)""", [EPSILON])
    con.execute("DROP TABLE fm")


def _judge(con: duckdb.DuckDBPyConnection, judge: DriftJudge, total: int) -> None:
    """Rule 5: forbidden terms always drift; the judge decides the other false positives
    whose text is not expected. Table t comes out sorted by pos when it will be scored in
    several chunks, so each chunk reads only its own row groups."""
    order = ""
    if total > CHUNK:
        con.execute("SET preserve_insertion_order = true")
        order = " ORDER BY pos"
    if judge.name == "none":
        con.execute(f"""CREATE TABLE t AS SELECT *, forbidden AS drift, false AS unjudged,
                       CASE WHEN forbidden THEN 'forbidden term' END AS reason FROM t1{order}""")
        con.execute("DROP TABLE t1")
        return
    rows = con.execute("""
        SELECT t1.pos, g.query_id, g.query, t1.term, g.domain, g.intent, ex.terms
        FROM t1 JOIN g ON g.pos = t1.pos
        LEFT JOIN (SELECT pos, list(term ORDER BY ek) AS terms FROM em GROUP BY pos) ex ON ex.pos = t1.pos
        WHERE t1.gk IS NOT NULL AND NOT t1.tp AND NOT t1.forbidden AND t1.ek IS NULL
        ORDER BY t1.pos, t1.gk""").fetchall()
    candidates = [DriftCandidate(qid, query, term, domain, intent, tuple(terms or ()))
                  for _, qid, query, term, domain, intent, terms in rows]
    verdicts = judge.judge(candidates) if candidates else []
    con.register("_verdicts_arrow", pa.table({
        "pos": pa.array([r[0] for r in rows], pa.int64()),
        "term": pa.array([r[3] for r in rows], pa.string()),
        "verdict": pa.array([v.drift for v in verdicts], pa.bool_()),
        "why": pa.array([v.reason for v in verdicts], pa.string()),
    }))
    con.execute(f"""CREATE TABLE t AS
        SELECT t1.*, t1.forbidden OR coalesce(v.verdict, false) AS drift,
               v.pos IS NOT NULL AND v.verdict IS NULL AS unjudged,
               CASE WHEN t1.forbidden THEN 'forbidden term' WHEN v.verdict THEN v.why END AS reason
        FROM t1 LEFT JOIN _verdicts_arrow v ON v.pos = t1.pos AND v.term = t1.term{order.replace('pos', 't1.pos')}""")
    con.unregister("_verdicts_arrow")
    con.execute("DROP TABLE t1")


CHUNK = 131_072
"""Queries scored per statement: big enough for DuckDB's vectors, small enough that the
list aggregates stay in cache (a million queries at once is twice as slow per query)."""


def _score(con: duckdb.DuckDBPyConnection, thresholds: Thresholds, total: int) -> None:
    """Rules 3, 4 and 6 per query, in one pass over the term rows.

    Lists are aggregated unordered and put in generated (gk) or expected (ek) order with
    list_grade_up: every list() of one GROUP BY sees the rows in the same order (the same
    FILTER selects the same rows), and plain lists are far cheaper than ORDER BY inside
    the aggregate.
    """
    p, r, d = float(thresholds.precision_min), float(thresholds.recall_min), float(thresholds.drift_min)
    on_gen = "FILTER (WHERE gk IS NOT NULL)"
    on_exp = "FILTER (WHERE ek IS NOT NULL)"
    sql = f"""
    WITH a AS (
        SELECT pos,
            list(gk) {on_gen} AS gk, list(term) {on_gen} AS g_term, list(weight) {on_gen} AS g_weight,
            list(NOT tp) {on_gen} AS g_fp, list(drift) {on_gen} AS g_drift, list(reason) {on_gen} AS g_reason,
            list(unjudged) {on_gen} AS g_unjudged,
            list(ek) {on_exp} AS ek, list(term) {on_exp} AS e_term, list(min_weight) {on_exp} AS e_min,
            list(tp) {on_exp} AS e_tp, list(NOT tp) {on_exp} AS e_fn,
            list(CASE WHEN gk IS NOT NULL AND NOT tp
                      THEN 'underweight: ' || term || ' ' || fmt_pair(weight, min_weight) END) {on_exp} AS e_under,
            count(*) FILTER (WHERE forbidden) AS n_forbidden
        FROM t WHERE pos >= $lo AND pos < $hi GROUP BY pos),
    o AS (
        SELECT pos, list_grade_up(gk) AS go, list_grade_up(ek) AS eo, * EXCLUDE (pos, gk, ek) FROM a),
    s AS (
        SELECT pos, list_select(g_term, go) AS generated_terms, list_select(g_weight, go) AS generated_weights,
            list_where(list_select(g_term, go), list_select(g_fp, go)) AS false_positives,
            list_where(list_select(g_term, go), list_select(g_drift, go)) AS drift_terms,
            list_where(list_select(g_reason, go), list_select(g_drift, go)) AS drift_reasons,
            list_where(list_select(g_term, go), list_select(g_unjudged, go)) AS unjudged_terms,
            list_select(e_term, eo) AS expected_terms, list_select(e_min, eo) AS expected_min_weights,
            list_where(list_select(e_term, eo), list_select(e_tp, eo)) AS true_positives,
            list_where(list_select(e_term, eo), list_select(e_fn, eo)) AS false_negatives,
            list_filter(list_select(e_under, eo), lambda u: u IS NOT NULL) AS underweight, n_forbidden
        FROM o),
    b AS (
        SELECT g.pos, g.query_id, g.query, g.domain, g.critical,
            coalesce(s.generated_terms, []) AS generated_terms,
            coalesce(s.generated_weights, []) AS generated_weights,
            coalesce(s.expected_terms, []) AS expected_terms,
            coalesce(s.expected_min_weights, []) AS expected_min_weights,
            coalesce(s.true_positives, []) AS true_positives,
            coalesce(s.false_positives, []) AS false_positives,
            coalesce(s.false_negatives, []) AS false_negatives,
            coalesce(s.drift_terms, []) AS drift_terms,
            coalesce(s.drift_reasons, []) AS drift_reasons,
            coalesce(s.unjudged_terms, []) AS unjudged_terms,
            coalesce(s.underweight, []) AS underweight,
            coalesce(s.n_forbidden, 0) AS n_forbidden
        FROM (SELECT * FROM g WHERE pos >= $lo AND pos < $hi) g LEFT JOIN s ON s.pos = g.pos),
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
            list_zip(generated_terms, generated_weights), lambda p: lp(p[1]) || CAST(p[2] AS VARCHAR) || ';'), '')
            || '-') AS generated_digest
    FROM d ORDER BY pos"""
    # q is kept in golden-set order (rows are inserted sorted, and insertion order is kept)
    # so the report's rows stream out of it without another sort.
    con.execute("SET preserve_insertion_order = true")
    for lo in range(0, total, CHUNK):
        params = {"p": p, "r": r, "d": d, "eps": EPSILON, "lo": lo, "hi": lo + CHUNK}
        con.execute(("CREATE TABLE q AS " if lo == 0 else "INSERT INTO q ") + sql, params)


def _collect(con: duckdb.DuckDBPyConnection, total: int, golden_hash: str) -> ColumnarScores:
    arrays = con.execute("""SELECT precision, recall, f1, term_drift_score, n_tp, n_fp, n_fn, n_expected,
                            n_generated, critical, passed, n_drift, n_unjudged, n_forbidden, n_underweight
                            FROM q ORDER BY pos""").fetchnumpy()
    arrays = {k: np.asarray(v) for k, v in arrays.items()}
    ids = con.sql("SELECT query_id FROM q ORDER BY pos").to_arrow_table().column(0).combine_chunks()
    facts = ScoreFacts(ids, arrays["n_expected"], arrays["n_generated"], arrays["recall"],
                       arrays["critical"].astype(bool), arrays["passed"].astype(bool), np.zeros(total, bool),
                       arrays["n_drift"], arrays["term_drift_score"], arrays["n_unjudged"],
                       arrays["n_forbidden"], arrays["n_underweight"])
    domains = [r[0] for r in con.execute("SELECT DISTINCT domain FROM g WHERE domain IS NOT NULL "
                                         "ORDER BY domain").fetchall()]
    digests = "".join(con.sql("SELECT generated_digest FROM q").to_arrow_table().column(0).to_pylist())
    generated_hash = hashlib.sha256(digests.encode()).hexdigest()  # q is in golden-set order
    return ColumnarScores(con, total, golden_hash, generated_hash, domains, arrays["precision"], arrays["recall"],
                          arrays["f1"], arrays["term_drift_score"], arrays["n_tp"], arrays["n_fp"],
                          arrays["n_fn"], facts)
