"""The columnar scoring engine: SPEC §1.1–1.2 and §2 rules 1–6 as DuckDB SQL.

`evaluate` runs here: DuckDB's JSON reader parses both files on every core, terms are
normalised once per row in SQL (non-ASCII terms once per distinct text, in Python), and
TP/FP/FN, P/R/F1, drift and pass/fail come from joins and aggregates. Nothing is built
per query in Python: a million queries score in about 2 GB (docs/performance.md).

The engine accepts only input it can vouch for: any line that is not plainly valid raises
`Fallback`, and the caller then runs the Python loaders (`evalcore.io`), which name the
file, line and field of every problem, and the Python scorer (`evalcore.scoring`), which
is the reference implementation. Tests hold the two engines to the same reports and hashes.
"""

from __future__ import annotations

import codecs
import hashlib
import os
import re
import secrets
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import orjson
import pyarrow as pa

from .drift import DriftCandidate, DriftJudge
from .io.golden import _fast_fields
from .errors import EvalcoreError, UsageError
from .metrics import EPSILON, normalize_term
from .models import Thresholds

__all__ = ["Fallback", "ColumnarScores", "ScoreFacts", "score_files"]


_MACROS = [
    # rule 1 for ASCII text: NFKC leaves it alone and casefold() is lower(); split() splits
    # on these characters. Non-ASCII text is normalised in Python (see _normalise).
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


class EngineError(EvalcoreError):
    """The engine failed after the drift judge ran: falling back would judge twice."""


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


def _plain_golden(obj: object) -> bool:
    """What the Python loader accepts without pydantic (evalcore.io.golden._fast_fields),
    with a query that is not blank: every type the typed DuckDB read below relies on."""
    fields = _fast_fields(obj)
    return fields is not None and bool(fields[1].strip())


def _plain_generated(obj: object) -> bool:
    """A JSONL generated line of the plainest valid kind (evalcore.io.generated rules)."""
    if type(obj) is not dict:
        return False
    query_id, terms = obj.get("query_id"), obj.get("terms")
    if type(query_id) is not str or not query_id or type(terms) is not list:
        return False
    for entry in terms:
        kind = type(entry)
        if kind is str:
            continue
        if kind is not dict:
            return False
        weight = entry.get("weight", 1.0)
        if type(entry.get("term")) is not str or type(weight) not in (int, float) or not 0.0 <= weight <= 1.0:
            return False
    return True


def _check_file(path: Path, plain) -> int:
    """The file's non-blank line count (as evalcore.io.jsonl_lines sees lines); Fallback for
    anything DuckDB's reader would take differently from the Python loader: bytes that are
    not UTF-8, lines that are not strict JSON (DuckDB forgives trailing commas, NaN, numbers
    out of range, form feeds, any nesting depth), and values of a type the typed read
    would coerce (`"0.5"` as a weight, `123` as a query_id, an explicit null). Reads in
    blocks, keeping nothing: memory stays flat."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    loads = orjson.loads  # strict JSON, the parser the Python loaders use
    lines, tail, first = 0, b"", True
    try:
        with path.open("rb") as handle:
            while block := handle.read(1 << 23):
                decoder.decode(block)
                if first and block.startswith(codecs.BOM_UTF8):
                    block = block[len(codecs.BOM_UTF8):]
                first = False
                parts = (tail + block).split(b"\n")
                tail = parts.pop()
                for part in parts:
                    if part.strip():
                        if not plain(loads(part)):
                            raise Fallback(f"{path}: line {lines + 1} is not plainly valid")
                        lines += 1
        decoder.decode(b"", final=True)
        if tail.strip():
            if not plain(loads(tail)):
                raise Fallback(f"{path}: the last line is not plainly valid")
            lines += 1
    except OSError as exc:
        raise Fallback(str(exc)) from None
    except UnicodeDecodeError:
        raise Fallback(f"{path}: not UTF-8") from None
    except orjson.JSONDecodeError:
        raise Fallback(f"{path}: a line is not strict JSON") from None
    return lines


def _source(path: str | Path) -> Path:
    """The absolute path: DuckDB would expand a leading `~` and glob `*?[{`, Python does not."""
    resolved = Path(path).resolve()
    if any(ch in str(resolved) for ch in "*?[{"):
        raise Fallback(f"{path}: glob characters in the file name")
    return resolved


def _bad(con: duckdb.DuckDBPyConnection, what: str, sql: str, params: list | None = None) -> None:
    count = con.execute(sql, params or []).fetchall()[0][0]
    if count:
        raise Fallback(f"{count} {what}")


def _memory_limit() -> str:
    value = os.environ.get("EVALCORE_ENGINE_MEMORY", "2GB")
    if not re.fullmatch(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value.strip(), re.IGNORECASE):
        raise UsageError(f"EVALCORE_ENGINE_MEMORY={value!r}: expected a size such as 2GB")
    return value.strip()


def _connect() -> duckdb.DuckDBPyConnection:
    """A private in-memory database; what exceeds the memory limit spills to a temporary
    folder of its own (DuckDB's default would be `.tmp` in the user's working directory),
    which DuckDB creates when it first spills and which goes with the connection."""
    limit = _memory_limit()
    spill = os.path.join(tempfile.gettempdir(), f"evalcore-engine-{os.getpid()}-{secrets.token_hex(4)}")
    con = duckdb.connect(":memory:", config={
        "preserve_insertion_order": True, "memory_limit": limit, "temp_directory": spill})
    weakref.finalize(con, shutil.rmtree, spill, True)
    for macro in _MACROS:
        con.execute(macro)
    return con


def _term_sql(raw: str) -> str:
    """Rule 1 for ASCII text (NFKC leaves it alone, casefold() is lower(), split() splits on
    these characters); NULL for non-ASCII text, which _normalise fills in."""
    return (f"CASE WHEN strlen({raw}) <> length({raw}) THEN NULL "
            f"WHEN regexp_matches({raw}, '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f]|  |^ | $') THEN norm_ascii({raw}) "
            f"ELSE lower({raw}) END")


# -0.0 and 0.0 are equal, so which one a merge keeps is up to DuckDB; the Python loader keeps
# the first seen, and the hashes see the sign. Rare enough to leave to the Python loader.
_NEGATIVE_ZERO = "SELECT count(*) FROM {table} WHERE w = 0 AND starts_with(CAST(w AS VARCHAR), '-')"


def _typed_read(con: duckdb.DuckDBPyConnection, path: Path, sql: str) -> None:
    """Run a typed read; a line it refuses (repeated keys, a type it cannot transform) goes
    to the Python loader."""
    try:
        con.execute(sql)
    except duckdb.InvalidInputException as exc:
        raise Fallback(f"{path}: DuckDB's typed reader refused a line ({str(exc).splitlines()[0][:120]})") from None


def _load_golden(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Golden lines (g1, rowid = line order), expected (e1) and forbidden (f1) terms, read
    typed: the Python check beside this read (_plain_golden) has vouched for every type, and
    DuckDB's typed reader refuses duplicate keys and matches keys case-sensitively."""
    _typed_read(con, path, f"""CREATE TABLE g1 AS SELECT query_id, query, context.domain AS domain_raw, context.intent AS intent,
        coalesce(critical, false) AS critical, expected_expansions AS ee_list,
        coalesce(forbidden_terms, []) AS ft_list
        FROM read_json({_quote(str(path))}, format='newline_delimited', records=true, columns={{
            query_id: 'VARCHAR', query: 'VARCHAR', context: 'STRUCT(domain VARCHAR, intent VARCHAR)',
            expected_expansions: 'STRUCT(term VARCHAR, min_weight DOUBLE)[]', forbidden_terms: 'VARCHAR[]',
            critical: 'BOOLEAN'}})""")
    total = con.execute("SELECT count(*) FROM g1").fetchall()[0][0]
    if con.execute("SELECT count(DISTINCT query_id) FROM g1").fetchall()[0][0] != total:
        raise Fallback("golden set: duplicate query_id")
    con.execute(f"""CREATE TABLE e1 AS SELECT pos, k, raw, w, {_term_sql('raw')} AS term,
                                      lp(raw) || CAST(w AS VARCHAR) || ';' AS hs FROM (
        SELECT pos, k, e.term AS raw, coalesce(e.min_weight, 0.0::DOUBLE) AS w
        FROM (SELECT rowid AS pos, unnest(ee_list) AS e, unnest(range(len(ee_list))) AS k
              FROM g1 WHERE len(ee_list) > 0))""")
    _bad(con, "negative zero min_weights", _NEGATIVE_ZERO.format(table="e1"))
    con.execute(f"""CREATE TABLE f1 AS SELECT pos, k, raw, {_term_sql('raw')} AS term, lp(raw) AS hs
        FROM (SELECT rowid AS pos, unnest(ft_list) AS raw, unnest(range(len(ft_list))) AS k
              FROM g1 WHERE len(ft_list) > 0)""")
    return total


def _blank_file(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(1 << 16)
    return len(head) < 1 << 16 and not head.strip()


def _load_generated(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Generated lines (c0) and terms (c1), keyed by query_id; returns the line count."""
    if _blank_file(path):  # nothing generated: every golden query has an empty expansion
        con.execute("CREATE TABLE c0 (qid VARCHAR, ok BOOLEAN)")
        con.execute("CREATE TABLE c1 (qid VARCHAR, k BIGINT, raw VARCHAR, w DOUBLE, ok BOOLEAN, term VARCHAR)")
        return 0
    # The Python check (_plain_generated) has vouched for every type; terms stay JSON
    # because a list may mix strings and objects.
    reader = (f"read_json({_quote(str(path))}, format='newline_delimited', records=true, "
              "columns={query_id: 'VARCHAR', terms: 'JSON[]'})")
    _typed_read(con, path, f"CREATE TABLE c0 AS SELECT query_id AS qid FROM {reader}")
    total, distinct = con.execute("SELECT count(*), count(DISTINCT qid) FROM c0").fetchall()[0]
    if distinct != total:
        raise Fallback("generated: a duplicate query_id")
    con.execute(f"""CREATE TABLE c1 AS SELECT qid, k, raw, w, ok, {_term_sql('raw')} AS term FROM (
        SELECT qid, k, coalesce(v[2], v[1]) AS raw, coalesce(TRY_CAST(v[3] AS DOUBLE), 1.0::DOUBLE) AS w,
            -- json_extract_string keeps the first of two equal keys, orjson the last
            v[2] IS NULL OR len(json_keys(t)) = len(list_distinct(json_keys(t))) AS ok
        FROM (SELECT qid, k, t, json_extract_string(t, ['$', '$.term', '$.weight']) AS v
              FROM (SELECT query_id AS qid, unnest(terms) AS t, unnest(range(len(terms))) AS k
                    FROM {reader} WHERE len(terms) > 0)))""")
    _bad(con, "generated term objects with repeated keys", "SELECT count(*) FILTER (WHERE NOT ok) FROM c1")
    _bad(con, "negative zero weights", _NEGATIVE_ZERO.format(table="c1"))
    return total


def _link_generated(con: duckdb.DuckDBPyConnection) -> None:
    """Every generated query_id must be a golden one (the lines were read beside the golden set)."""
    _bad(con, "generated query_ids not in the golden set",
         "SELECT count(*) FROM c0 ANTI JOIN (SELECT query_id FROM g1) g1 ON g1.query_id = c0.qid")
    con.execute("DROP TABLE c0")


def _parallel(con: duckdb.DuckDBPyConnection, *jobs) -> list:
    """Run jobs on their own cursors at once: many steps scan one row group, which DuckDB
    gives one thread, so two independent chains keep both cores busy."""
    results: list = [None] * len(jobs)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        cursor = con.cursor()
        try:
            results[index] = jobs[index](cursor)
        except BaseException as exc:  # re-raised below, in the caller's thread
            errors.append(exc)
        finally:
            cursor.close()

    threads = [threading.Thread(target=run, args=(i,), name=f"evalcore-engine-{i}") for i in range(1, len(jobs))]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise next((e for e in errors if isinstance(e, Fallback)), errors[0])
    return results


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
    digests = con.execute(f"""
        SELECT string_agg(h, '' ORDER BY pos) FROM (
            SELECT g1.rowid AS pos, sha256(lp(g1.query_id) || lp(g1.query) || opt(g1.domain_raw) || opt(g1.intent)
                || len(g1.ee_list) || ':' || coalesce(ex.s, '') || len(g1.ft_list) || ':' || coalesce(fx.s, '')
                || CASE WHEN g1.critical THEN 'T' ELSE 'F' END) AS h
            FROM g1
            LEFT JOIN ({_in_order('e1', 'hs')}) ex ON ex.pos = g1.rowid
            LEFT JOIN ({_in_order('f1', 'hs')}) fx ON fx.pos = g1.rowid)""").fetchall()[0][0]
    return hashlib.sha256((digests or "").encode()).hexdigest()


def _in_order(table: str, column: str) -> str:
    """Per pos, `column` concatenated in k order. list() aggregates of one GROUP BY see the
    rows in the same order, so list_grade_up of the k list reorders the values list."""
    return (f"SELECT pos, array_to_string(list_select(list({column}), list_grade_up(list(k))), '') AS s "
            f"FROM {table} GROUP BY pos")


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


def score_files(golden_path: str | Path, generated_path: str | Path, thresholds: Thresholds,
                judge: DriftJudge, domain_context: str | None = None) -> ColumnarScores:
    """Load, validate and score both files in DuckDB; Fallback when the input is not plainly valid."""
    con = _connect()
    judged = False
    try:
        golden, generated = _source(golden_path), _source(generated_path)
        # DuckDB loads both files while Python checks them for what DuckDB's reader forgives
        (total, golden_hash), generated_total, (golden_lines, generated_lines) = _parallel(
            con, lambda cur: (_load_golden(cur, golden), _golden_hash(cur)),
            lambda cur: _load_generated(cur, generated),
            lambda cur: (_check_file(golden, _plain_golden), _check_file(generated, _plain_generated)))
        if golden_lines == 0 or total != golden_lines or generated_total != generated_lines:
            raise Fallback("a line DuckDB read differently from the Python loader (or an empty golden set)")
        con.execute("SET preserve_insertion_order = false")  # only g1's rowid needed the file's order
        _link_generated(con)
        _normalise(con, domain_context)
        _match(con)
        for name in ("e1", "f1", "c1", "g1"):
            con.execute(f"DROP TABLE {name}")

        con.execute("DROP TABLE cm")
        judged = True  # past this point a fallback would ask the drift judge again
        _judge(con, judge, total)
        con.execute("DROP TABLE em")
        _score(con, thresholds, total)
        return _collect(con, total, golden_hash)
    except Fallback:
        con.close()
        raise
    except Exception as exc:  # DuckDB refused the input, or an engine fault: the reference decides
        con.close()
        if judged and judge.name != "none":
            raise EngineError(f"scoring failed after drift judging ({type(exc).__name__}: {exc}); "
                              "set EVALCORE_ENGINE=python to score with the Python engine") from exc
        raise Fallback(f"{type(exc).__name__}: {exc}") from None
    except BaseException:
        con.close()
        raise
