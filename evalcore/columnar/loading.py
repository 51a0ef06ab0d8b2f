"""Loading for the columnar engine (SPEC §1.1–1.2): both files read typed by DuckDB while a
Python thread vouches for every line; terms normalised (rule 1); the golden-set hash."""

from __future__ import annotations

import codecs
import hashlib
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa

from ..io.golden import _fast_fields
from ..metrics import normalize_term
from ..store.connection import sql_literal
from .engine import Fallback, _bad

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
        FROM read_json({sql_literal(str(path))}, format='newline_delimited', records=true, columns={{
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
    reader = (f"read_json({sql_literal(str(path))}, format='newline_delimited', records=true, "
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
