"""The columnar scoring engine: SPEC §1.1–1.2 and §2 rules 1–6 as DuckDB SQL.

`evaluate` runs here: DuckDB's JSON reader parses both files on every core, terms are
normalised once per row in SQL (non-ASCII terms once per distinct text, in Python), and
TP/FP/FN, P/R/F1, drift and pass/fail come from joins and aggregates. Nothing is built
per query in Python, so a million queries fit in a few GB and a few tens of seconds.

The engine accepts only input it can vouch for: any line that is not plainly valid raises
`Fallback`, and the caller then runs the Python loaders (`evalcore.io`), which name the
file, line and field of every problem, and the Python scorer (`evalcore.scoring`), which
is the reference implementation. Tests hold the two engines to the same reports and hashes.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from .drift import DriftCandidate, DriftJudge
from .metrics import EPSILON, normalize_term
from .models import Thresholds

__all__ = ["Fallback", "ColumnarScores", "ScoreFacts", "score_files"]

_NUMBER_TYPES = "('UBIGINT', 'BIGINT', 'DOUBLE')"
# str.isspace() characters: a query made only of these is blank (what str.strip() removes).
_SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}"

_MACROS = [
    # rule 1 for ASCII text: NFKC leaves it alone and casefold() is lower(); split() splits
    # on these characters. Non-ASCII text is normalised in Python (see _normalise_non_ascii).
    "CREATE MACRO norm_ascii(t) AS trim(regexp_replace(lower(t), '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f ]+', ' ', 'g'), ' ')",
    "CREATE MACRO lp(t) AS strlen(t) || ':' || t",
    "CREATE MACRO opt(t) AS CASE WHEN t IS NULL THEN '-' ELSE lp(t) END",
    # evalcore.metrics.format_pair: two decimals, more while both sides print the same.
    "CREATE MACRO fmt_pair(v, l) AS CASE "
    + " ".join(f"WHEN printf('%.{d}f', v) <> printf('%.{d}f', l) THEN printf('%.{d}f', v) || ' < ' || printf('%.{d}f', l)"
               for d in range(2, 10))
    + " ELSE CAST(v AS VARCHAR) || ' < ' || CAST(l AS VARCHAR) END",
]


class Fallback(Exception):
    """The engine cannot vouch for this input; use the Python loaders and scorer."""


@dataclass(slots=True)
class ScoreFacts:
    """Per-query columns the gate and the recommendations read (golden-set order)."""

    query_ids: pa.Array
    n_expected: np.ndarray
    n_generated: np.ndarray
    recall: np.ndarray
    critical: np.ndarray
    passed: np.ndarray
    errored: np.ndarray
    n_drift: np.ndarray
    term_drift_score: np.ndarray
    n_unjudged: np.ndarray
    n_forbidden: np.ndarray
    n_underweight: np.ndarray

    def ids(self, mask: np.ndarray, limit: int | None = None) -> list[str]:
        index = np.flatnonzero(mask)
        if limit is not None:
            index = index[:limit]
        return self.query_ids.take(pa.array(index, pa.int64())).to_pylist()


@dataclass(slots=True)
class ColumnarScores:
    """A scored golden set held in an in-memory DuckDB database (tables g, t, q)."""

    con: duckdb.DuckDBPyConnection
    total: int
    golden_hash: str
    generated_hash: str
    domains: list[str]
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    term_drift_score: np.ndarray
    n_tp: np.ndarray
    n_fp: np.ndarray
    n_fn: np.ndarray
    facts: ScoreFacts
    side_columns: list[str] = field(default_factory=list)
    """Columns of table `side` (query_id -> regression status, baseline F1, noise) to report."""

    def rows(self) -> list[tuple[str, float, bool]]:
        """(query_id, f1, passed) in golden-set order, for the baseline comparison."""
        return self.con.execute("SELECT query_id, f1, passed FROM q ORDER BY pos").fetchall()

    def set_side(self, table: pa.Table) -> None:
        """Attach per-query regression and noise columns (keyed by query_id)."""
        self.con.register("_side_arrow", table)
        self.con.execute("CREATE OR REPLACE TABLE side AS SELECT * FROM _side_arrow")
        self.con.unregister("_side_arrow")
        self.side_columns = [c for c in table.column_names if c != "query_id"]

    def close(self) -> None:
        self.con.close()


def _quote(path: str) -> str:
    return "'" + path.replace("'", "''") + "'"


def _count_lines(data: bytes) -> int:
    """Non-blank lines, as evalcore.io.jsonl_lines would see them."""
    return sum(1 for line in data.split(b"\n") if line.strip())


def _check_file(path: Path) -> int:
    """The file's non-blank line count; Fallback for anything the JSON reader may treat
    differently from the Python loader (not UTF-8, glob characters in the name...)."""
    if any(ch in str(path) for ch in "*?[{"):
        raise Fallback(f"{path}: glob characters in the file name")
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Fallback(str(exc)) from None
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        raise Fallback(f"{path}: not UTF-8") from None
    return _count_lines(data)


def _bad(con: duckdb.DuckDBPyConnection, what: str, sql: str, params: list | None = None) -> None:
    count = con.execute(sql, params or []).fetchall()[0][0]
    if count:
        raise Fallback(f"{count} {what}")


def _connect() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect(":memory:", config={
        "preserve_insertion_order": True,
        "memory_limit": os.environ.get("EVALCORE_ENGINE_MEMORY", "2GB"),
    })
    for macro in _MACROS:
        con.execute(macro)
    return con


def _read(con: duckdb.DuckDBPyConnection, path: Path, table: str, columns: str, paths: list[str]) -> int:
    """One JSON object per line into `table` (rowid = line order among non-blank lines)."""
    lines = _check_file(path)
    if lines == 0:
        raise Fallback(f"{path}: no lines")
    con.execute(f"""CREATE TABLE {table} AS SELECT {columns}
                    FROM (SELECT json_type(json) AS jt, json_extract(json, {paths!r}) AS x
                          FROM read_json_objects({_quote(str(path))}, format='newline_delimited'))""")
    total = con.execute(f"SELECT count(*) FROM {table}").fetchall()[0][0]
    if total != lines:
        raise Fallback(f"{path}: {lines} lines but {total} objects")
    return total


def _term_sql(raw: str) -> str:
    """Rule 1 for ASCII text (NFKC leaves it alone, casefold() is lower(), split() splits on
    these characters); NULL for non-ASCII text, which _normalise_non_ascii fills in."""
    return (f"CASE WHEN strlen({raw}) <> length({raw}) THEN NULL "
            f"WHEN regexp_matches({raw}, '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f]|  |^ | $') THEN norm_ascii({raw}) "
            f"ELSE lower({raw}) END")


def _load_golden(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    total = _read(con, path, "g1", f"""
        coalesce(jt = 'OBJECT'
            AND json_type(x[1]) = 'VARCHAR' AND x[1]->>'$' <> ''
            AND json_type(x[2]) = 'VARCHAR' AND regexp_matches(x[2]->>'$', '[^{_SPACE}]')
            AND json_type(x[4]) = 'ARRAY'
            AND (x[3] IS NULL OR (json_type(x[3]) = 'OBJECT'
                 AND coalesce(json_type(x[3], '$.domain') IN ('NULL', 'VARCHAR'), true)
                 AND coalesce(json_type(x[3], '$.intent') IN ('NULL', 'VARCHAR'), true)))
            AND (x[5] IS NULL OR json_type(x[5]) = 'ARRAY')
            AND (x[6] IS NULL OR json_type(x[6]) = 'BOOLEAN'), false) AS ok,
        x[1]->>'$' AS query_id, x[2]->>'$' AS query, x[3]->>'$.domain' AS domain_raw,
        x[3]->>'$.intent' AS intent, coalesce(TRY_CAST(x[6] AS BOOLEAN), false) AS critical,
        json_extract(x[4], '$[*]') AS ee_list,
        CASE WHEN x[5] IS NULL THEN []::JSON[] ELSE json_extract(x[5], '$[*]') END AS ft_list""",
        ["$.query_id", "$.query", "$.context", "$.expected_expansions", "$.forbidden_terms", "$.critical"])
    con.execute("SET preserve_insertion_order = false")  # only g1's rowid needs the file's order
    _bad(con, "golden lines not plainly valid", "SELECT count(*) FILTER (WHERE NOT ok) FROM g1")
    if con.execute("SELECT count(DISTINCT query_id) FROM g1").fetchall()[0][0] != total:
        raise Fallback("golden set: duplicate query_id")
    con.execute(f"""CREATE TABLE e1 AS SELECT pos, k, raw, w, ok, {_term_sql('raw')} AS term FROM (
        SELECT pos, k, x[1]->>'$' AS raw, coalesce(TRY_CAST(x[2] AS DOUBLE), 0.0::DOUBLE) AS w,
            coalesce(json_type(e) = 'OBJECT' AND json_type(x[1]) = 'VARCHAR' AND x[1]->>'$' <> ''
                AND (x[2] IS NULL OR (json_type(x[2]) IN {_NUMBER_TYPES}
                     AND TRY_CAST(x[2] AS DOUBLE) BETWEEN 0 AND 1)), false) AS ok
        FROM (SELECT pos, e, k, json_extract(e, ['$.term', '$.min_weight']) AS x
              FROM (SELECT rowid AS pos, unnest(ee_list) AS e, unnest(range(len(ee_list))) AS k
                    FROM g1 WHERE len(ee_list) > 0)))""")
    _bad(con, "expected expansions not plainly valid", "SELECT count(*) FILTER (WHERE NOT ok) FROM e1")
    con.execute(f"""CREATE TABLE f1 AS SELECT pos, k, raw, ok, {_term_sql('raw')} AS term FROM (
        SELECT pos, k, f->>'$' AS raw, coalesce(json_type(f) = 'VARCHAR', false) AS ok
        FROM (SELECT rowid AS pos, unnest(ft_list) AS f, unnest(range(len(ft_list))) AS k
              FROM g1 WHERE len(ft_list) > 0))""")
    _bad(con, "forbidden terms not strings", "SELECT count(*) FILTER (WHERE NOT ok) FROM f1")
    return total


def _load_generated(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    if _check_file(path) == 0:
        con.execute("CREATE TABLE c1 (pos BIGINT, k BIGINT, raw VARCHAR, w DOUBLE, term VARCHAR)")
        return
    total = _read(con, path, "c0", """
        coalesce(jt = 'OBJECT' AND json_type(x[1]) = 'VARCHAR' AND x[1]->>'$' <> ''
                 AND json_type(x[2]) = 'ARRAY', false) AS ok,
        x[1]->>'$' AS query_id, json_extract(x[2], '$[*]') AS tl""", ["$.query_id", "$.terms"])
    _bad(con, "generated lines not plainly valid", "SELECT count(*) FILTER (WHERE NOT ok) FROM c0")
    matched, distinct = con.execute("SELECT count(g1.query_id), count(DISTINCT c0.query_id) FROM c0 "
                                    "LEFT JOIN (SELECT query_id FROM g1) g1 USING (query_id)").fetchall()[0]
    if matched != total or distinct != total:
        raise Fallback("generated: query_id duplicated or not in the golden set")
    con.execute(f"""CREATE TABLE c1 AS SELECT pos, k, raw, w, ok, {_term_sql('raw')} AS term FROM (
        SELECT pos, k,
            CASE WHEN json_type(t) = 'VARCHAR' THEN t->>'$' ELSE x[1]->>'$' END AS raw,
            CASE WHEN json_type(t) = 'VARCHAR' THEN 1.0::DOUBLE
                 ELSE coalesce(TRY_CAST(x[2] AS DOUBLE), 1.0::DOUBLE) END AS w,
            coalesce(json_type(t) = 'VARCHAR' OR (json_type(t) = 'OBJECT' AND json_type(x[1]) = 'VARCHAR'
                AND (x[2] IS NULL OR (json_type(x[2]) IN {_NUMBER_TYPES}
                     AND TRY_CAST(x[2] AS DOUBLE) BETWEEN 0 AND 1))), false) AS ok
        FROM (SELECT pos, t, k, json_extract(t, ['$.term', '$.weight']) AS x
              FROM (SELECT g1.rowid AS pos, unnest(c0.tl) AS t, unnest(range(len(c0.tl))) AS k
                    FROM c0 JOIN g1 USING (query_id) WHERE len(c0.tl) > 0)))""")
    con.execute("DROP TABLE c0")
    _bad(con, "generated terms not plainly valid", "SELECT count(*) FILTER (WHERE NOT ok) FROM c1")


def _normalise(con: duckdb.DuckDBPyConnection, domain_context: str | None) -> None:
    """Rule 1 for non-ASCII terms and domains: in Python, once per distinct text."""
    non_ascii = [r[0] for r in con.execute("""
        SELECT DISTINCT raw FROM (SELECT raw FROM e1 WHERE term IS NULL UNION ALL
            SELECT raw FROM f1 WHERE term IS NULL UNION ALL SELECT raw FROM c1 WHERE term IS NULL UNION ALL
            SELECT domain_raw FROM g1 WHERE domain_raw IS NOT NULL AND strlen(domain_raw) <> length(domain_raw))
        """).fetchall()]
    con.register("_nonascii_arrow", pa.table({"raw": pa.array(non_ascii, pa.string()),
                                              "norm": pa.array([normalize_term(t) for t in non_ascii], pa.string())}))
    con.execute("CREATE TABLE nonascii AS SELECT * FROM _nonascii_arrow")
    con.unregister("_nonascii_arrow")
    if non_ascii:
        for table in ("e1", "f1", "c1"):
            con.execute(f"UPDATE {table} SET term = n.norm FROM nonascii n WHERE {table}.term IS NULL "
                        f"AND n.raw = {table}.raw")
    context = normalize_term(domain_context) if domain_context is not None else None
    con.execute(f"""CREATE TABLE g AS SELECT x.rowid AS pos, x.query_id, x.query, x.intent, x.critical,
                    nullif(CASE WHEN x.domain_raw IS NULL THEN ?
                                ELSE coalesce(n.norm, {_term_sql('x.domain_raw')}) END, '') AS domain
                    FROM g1 x LEFT JOIN nonascii n ON n.raw = x.domain_raw ORDER BY x.rowid""", [context])
    _bad(con, "terms empty after normalisation", """
        SELECT (SELECT count(*) FROM e1 WHERE term = '') + (SELECT count(*) FROM f1 WHERE term = '')
             + (SELECT count(*) FROM c1 WHERE term = '')""")


def _golden_hash(con: duckdb.DuckDBPyConnection) -> str:
    """evalcore.hashing.golden_item_digest in SQL, over the parsed (raw) values."""
    digests = con.execute("""
        SELECT string_agg(h, '' ORDER BY pos) FROM (
            SELECT rowid AS pos, sha256(lp(query_id) || lp(query) || opt(domain_raw) || opt(intent)
                || len(ee_list) || ':' || array_to_string(list_transform(ee_list, lambda e: lp(e->>'$.term')
                       || CAST(coalesce(TRY_CAST(e->'$.min_weight' AS DOUBLE), 0.0::DOUBLE) AS VARCHAR) || ';'), '')
                || len(ft_list) || ':' || array_to_string(list_transform(ft_list, lambda f: lp(f->>'$')), '')
                || CASE WHEN critical THEN 'T' ELSE 'F' END) AS h
            FROM g1)""").fetchall()[0][0]
    return hashlib.sha256(digests.encode()).hexdigest()


def _generated_hash(con: duckdb.DuckDBPyConnection) -> str:
    """evalcore.hashing.generated_item_digest in SQL, over the merged, normalised terms."""
    digests = con.execute("""
        SELECT string_agg(h, '' ORDER BY pos) FROM (
            SELECT pos, sha256(lp(query_id) || len(generated_terms) || ':'
                || array_to_string(list_transform(list_zip(generated_terms, generated_weights),
                       lambda p: lp(p[1]) || CAST(p[2] AS VARCHAR) || ';'), '') || '-') AS h
            FROM q)""").fetchall()[0][0]
    return hashlib.sha256(digests.encode()).hexdigest()


def _match(con: duckdb.DuckDBPyConnection) -> None:
    """Rules 1–2: merge duplicates (highest weight, first position), then match."""
    con.execute("CREATE TABLE em AS SELECT pos, term, max(w) AS min_weight, min(k) AS ek FROM e1 GROUP BY pos, term")
    con.execute("CREATE TABLE fm AS SELECT DISTINCT pos, term FROM f1")
    con.execute("CREATE TABLE cm AS SELECT pos, term, max(w) AS weight, min(k) AS gk FROM c1 GROUP BY pos, term")
    _bad(con, "terms both expected and forbidden", "SELECT count(*) FROM em JOIN fm USING (pos, term)")
    con.execute("""CREATE TABLE t1 AS
        SELECT coalesce(em.pos, cm.pos) AS pos, coalesce(em.term, cm.term) AS term, em.min_weight, em.ek,
               cm.weight, cm.gk, coalesce(cm.weight >= em.min_weight - ?, false) AS tp,
               fm.term IS NOT NULL AND cm.gk IS NOT NULL AS forbidden
        FROM em FULL OUTER JOIN cm ON em.pos = cm.pos AND em.term = cm.term
        LEFT JOIN fm ON fm.pos = coalesce(em.pos, cm.pos) AND fm.term = coalesce(em.term, cm.term)""", [EPSILON])
    for name in ("cm", "fm"):
        con.execute(f"DROP TABLE {name}")


def _judge(con: duckdb.DuckDBPyConnection, judge: DriftJudge) -> None:
    """Rule 5: forbidden terms always drift; the judge decides the other false positives
    whose text is not expected."""
    if judge.name == "none":
        con.execute("""CREATE TABLE t AS SELECT *, forbidden AS drift, false AS unjudged,
                       CASE WHEN forbidden THEN 'forbidden term' END AS reason FROM t1""")
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
    con.execute("""CREATE TABLE t AS
        SELECT t1.*, t1.forbidden OR coalesce(v.verdict, false) AS drift,
               v.pos IS NOT NULL AND v.verdict IS NULL AS unjudged,
               CASE WHEN t1.forbidden THEN 'forbidden term' WHEN v.verdict THEN v.why END AS reason
        FROM t1 LEFT JOIN _verdicts_arrow v ON v.pos = t1.pos AND v.term = t1.term""")
    con.unregister("_verdicts_arrow")
    con.execute("DROP TABLE t1")


_BY_GENERATED = "list_transform(list_filter(gen, lambda r: {cond}), lambda r: r.{field})"
_BY_EXPECTED = "list_transform(list_filter(exp, lambda r: {cond}), lambda r: r.{field})"


def _score(con: duckdb.DuckDBPyConnection, thresholds: Thresholds) -> None:
    """Rules 3, 4 and 6 per query, in one pass over the term rows."""
    gen = lambda cond, fld: _BY_GENERATED.format(cond=cond, field=fld)  # noqa: E731
    exp = lambda cond, fld: _BY_EXPECTED.format(cond=cond, field=fld)  # noqa: E731
    p, r, d = float(thresholds.precision_min), float(thresholds.recall_min), float(thresholds.drift_min)
    con.execute(f"""CREATE TABLE q AS
    WITH a AS (
        SELECT pos,
            list_sort(list({{'gk': gk, 'term': term, 'weight': weight, 'tp': tp, 'drift': drift,
                'reason': reason, 'unjudged': unjudged}}) FILTER (WHERE gk IS NOT NULL)) AS gen,
            list_sort(list({{'ek': ek, 'term': term, 'weight': weight, 'min_weight': min_weight, 'tp': tp}})
                FILTER (WHERE ek IS NOT NULL)) AS exp,
            count(*) FILTER (WHERE forbidden) AS n_forbidden
        FROM t GROUP BY pos),
    b AS (
        SELECT g.pos, g.query_id, g.query, g.domain, g.critical,
            coalesce({gen('true', 'term')}, []) AS generated_terms,
            coalesce({gen('true', 'weight')}, []) AS generated_weights,
            coalesce({exp('true', 'term')}, []) AS expected_terms,
            coalesce({exp('true', 'min_weight')}, []) AS expected_min_weights,
            coalesce({exp('r.tp', 'term')}, []) AS true_positives,
            coalesce({gen('NOT r.tp', 'term')}, []) AS false_positives,
            coalesce({exp('NOT r.tp', 'term')}, []) AS false_negatives,
            coalesce({gen('r.drift', 'term')}, []) AS drift_terms,
            coalesce({gen('r.drift', 'reason')}, []) AS drift_reasons,
            coalesce({gen('r.unjudged', 'term')}, []) AS unjudged_terms,
            coalesce(list_filter(exp, lambda r: NOT r.tp AND r.weight IS NOT NULL), []) AS underweight,
            coalesce(a.n_forbidden, 0) AS n_forbidden
        FROM g LEFT JOIN a ON a.pos = g.pos),
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
            CASE WHEN n_generated = 0 THEN ['empty expansion'] ELSE []::VARCHAR[] END,
            list_transform(underweight, lambda u: 'underweight: ' || u.term || ' ' || fmt_pair(u.weight, u.min_weight))),
            CASE WHEN precision >= $p - $eps THEN []::VARCHAR[] ELSE ['precision ' || fmt_pair(precision, $p)] END),
            CASE WHEN recall >= $r - $eps THEN []::VARCHAR[] ELSE ['recall ' || fmt_pair(recall, $r)] END),
            CASE WHEN term_drift_score >= $d - $eps THEN []::VARCHAR[]
                 ELSE ['term_drift_score ' || fmt_pair(term_drift_score, $d)] END) AS failure_reasons,
        CASE WHEN n_expected = 0 THEN ['no golden terms provided'] ELSE []::VARCHAR[] END AS notes
    FROM d ORDER BY pos""", {"p": p, "r": r, "d": d, "eps": EPSILON})


def _collect(con: duckdb.DuckDBPyConnection, total: int, hashes: tuple[str, str]) -> ColumnarScores:
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
    return ColumnarScores(con, total, hashes[0], hashes[1], domains, arrays["precision"], arrays["recall"],
                          arrays["f1"], arrays["term_drift_score"], arrays["n_tp"], arrays["n_fp"],
                          arrays["n_fn"], facts)


def score_files(golden_path: str | Path, generated_path: str | Path, thresholds: Thresholds,
                judge: DriftJudge, domain_context: str | None = None) -> ColumnarScores:
    """Load, validate and score both files in DuckDB; Fallback when the input is not plainly valid."""
    con = _connect()
    try:
        total = _load_golden(con, Path(golden_path))
        _load_generated(con, Path(generated_path))
        _normalise(con, domain_context)
        golden_hash = _golden_hash(con)
        _match(con)
        for name in ("e1", "f1", "c1", "g1"):
            con.execute(f"DROP TABLE {name}")
        _judge(con, judge)
        con.execute("DROP TABLE em")
        _score(con, thresholds)
        return _collect(con, total, (golden_hash, _generated_hash(con)))
    except duckdb.Error as exc:
        con.close()
        raise Fallback(f"DuckDB: {exc}") from None
    except BaseException:
        con.close()
        raise


def fsum(values: np.ndarray) -> float:
    return math.fsum(values.tolist())
