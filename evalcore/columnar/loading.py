"""Loading for the columnar engine (SPEC §1.1–1.2): both files read typed by DuckDB while a
Python thread vouches for every line; terms normalised (rule 1); the golden-set hash."""

from __future__ import annotations

import codecs
import hashlib
from pathlib import Path

import duckdb
import orjson

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


def _typed_read(con: duckdb.DuckDBPyConnection, path: Path, sql: str) -> None:
    """Run a typed read; a line it refuses (repeated keys, a type it cannot transform) goes
    to the Python loader."""
    try:
        con.execute(sql)
    except duckdb.InvalidInputException as exc:
        raise Fallback(f"{path}: DuckDB's typed reader refused a line ({str(exc).splitlines()[0][:120]})") from None


def _load_golden(con: duckdb.DuckDBPyConnection, path: Path) -> tuple[int, str]:
    """Golden lines (g1, rowid = line order) read typed: the Python check beside this read
    (_plain_golden) has vouched for every type, and DuckDB's typed reader refuses duplicate
    keys and matches keys case-sensitively. Returns the line count and the golden hash."""
    _typed_read(con, path, f"""CREATE TABLE g1 AS SELECT query_id, query, context.domain AS domain_raw, context.intent AS intent,
        coalesce(critical, false) AS critical, expected_expansions AS ee_list,
        coalesce(forbidden_terms, []) AS ft_list
        FROM read_json({sql_literal(str(path))}, format='newline_delimited', records=true, columns={{
            query_id: 'VARCHAR', query: 'VARCHAR', context: 'STRUCT(domain VARCHAR, intent VARCHAR)',
            expected_expansions: 'STRUCT(term VARCHAR, min_weight DOUBLE)[]', forbidden_terms: 'VARCHAR[]',
            critical: 'BOOLEAN'}})""")
    total, distinct = con.execute("SELECT count(*), count(DISTINCT query_id) FROM g1").fetchall()[0]
    if distinct != total:
        raise Fallback("golden set: duplicate query_id")
    # evalcore.hashing.golden_item_digest over the parsed (raw) values. -0.0 and 0.0 are
    # equal, so which one a merge of duplicates keeps is arbitrary while the hashes see the
    # sign: rare enough to leave to the Python loader.
    digests, negative_zero = con.execute("""
        SELECT string_agg(h, '' ORDER BY pos), count(*) FILTER (WHERE negative_zero) FROM (
            SELECT rowid AS pos, sha256(lp(query_id) || lp(query) || opt(domain_raw) || opt(intent)
                || len(ee_list) || ':' || array_to_string(list_transform(ee_list, lambda x:
                       lp(x.term) || CAST(coalesce(x.min_weight, 0.0::DOUBLE) AS VARCHAR) || ';'), '')
                || len(ft_list) || ':' || array_to_string(list_transform(ft_list, lambda x: lp(x)), '')
                || CASE WHEN critical THEN 'T' ELSE 'F' END) AS h,
                list_bool_or(list_transform(ee_list, lambda x: x.min_weight = 0
                             AND starts_with(CAST(x.min_weight AS VARCHAR), '-'))) AS negative_zero
            FROM g1)""").fetchall()[0]
    if negative_zero:
        raise Fallback(f"{negative_zero} golden lines with a negative zero min_weight")
    return total, hashlib.sha256((digests or "").encode()).hexdigest()


def _blank_file(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(1 << 16)
    return len(head) < 1 << 16 and not head.strip()


def _load_generated(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """Generated lines (c0: query_id, and per term [raw JSON, term, weight] as text), keyed
    by query_id; returns the line count."""
    if _blank_file(path):  # nothing generated: every golden query has an empty expansion
        con.execute("CREATE TABLE c0 (qid VARCHAR, v VARCHAR[][])")
        return 0
    # The Python check (_plain_generated) has vouched for every type; terms stay JSON
    # because a list may mix strings and objects. DuckDB hands each element over
    # re-serialised (keys unescaped, no spaces), so a key occurs as `"term":` exactly.
    reader = (f"read_json({sql_literal(str(path))}, format='newline_delimited', records=true, "
              "columns={query_id: 'VARCHAR', terms: 'JSON[]'})")
    _typed_read(con, path, f"""CREATE TABLE c0 AS SELECT query_id AS qid,
        list_transform(terms, lambda x: json_extract_string(x, ['$', '$.term', '$.weight'])) AS v,
        -- json_extract_string keeps the first of two equal keys, orjson the last
        list_bool_or(list_transform(terms, lambda x: strlen(x) - strlen(replace(x, '"term":', '')) > 7
                                    OR strlen(x) - strlen(replace(x, '"weight":', '')) > 9)) AS repeated
        FROM {reader}""")
    total, distinct, repeated = con.execute(
        "SELECT count(*), count(DISTINCT qid), count(*) FILTER (WHERE repeated) FROM c0").fetchall()[0]
    if distinct != total:
        raise Fallback("generated: a duplicate query_id")
    if repeated:
        raise Fallback(f"generated: {repeated} lines with a repeated key in a term object")
    # A weight the Python check let through and that reads with a sign is -0.0 (see above)
    _bad(con, "generated lines with a negative zero weight",
         "SELECT count(*) FROM c0 WHERE list_bool_or(list_transform(v, lambda x: starts_with(x[3], '-')))")
    return total


def _link_generated(con: duckdb.DuckDBPyConnection) -> None:
    """Every generated query_id must be a golden one (the lines were read beside the golden set)."""
    _bad(con, "generated query_ids not in the golden set",
         "SELECT count(*) FROM c0 ANTI JOIN (SELECT query_id FROM g1) g1 ON g1.query_id = c0.qid")


def _normalise(con: duckdb.DuckDBPyConnection, domain_context: str | None, part: str, lo: int, hi: int) -> bool:
    """Rule 1 on every list of golden lines lo..hi-1 (table `part`, like j: one row per
    golden query, in golden order, with its expected terms et/ew, forbidden terms ft, and
    generated terms gt/gw; queries are scored in parts so both cores work). Non-ASCII text is
    normalised in Python, once per distinct text; duplicates are merged (rule 1). True when
    rows were updated, which may leave j out of golden order."""
    context = normalize_term(domain_context) if domain_context is not None else None
    con.execute(f"""CREATE TABLE {part} AS SELECT g1.rowid AS pos, g1.query_id, g1.query, g1.intent, g1.critical,
            g1.domain_raw,
            nullif(CASE WHEN g1.domain_raw IS NULL THEN $context ELSE {_term_sql('g1.domain_raw')} END, '') AS domain,
            list_transform(g1.ee_list, lambda x: {_term_sql('x.term')}) AS et,
            list_transform(g1.ee_list, lambda x: coalesce(x.min_weight, 0.0::DOUBLE)) AS ew,
            list_transform(g1.ft_list, lambda x: {_term_sql('x')}) AS ft,
            coalesce(list_transform(c0.v, lambda x: {_term_sql('coalesce(x[2], x[1])')}), []::VARCHAR[]) AS gt,
            coalesce(list_transform(c0.v, lambda x: coalesce(TRY_CAST(x[3] AS DOUBLE), 1.0::DOUBLE)),
                     []::DOUBLE[]) AS gw
        FROM g1 LEFT JOIN c0 ON c0.qid = g1.query_id WHERE g1.rowid >= $lo AND g1.rowid < $hi
        ORDER BY g1.rowid""", {"context": context, "lo": lo, "hi": hi})
    reordered = _non_ascii(con, part)  # DuckDB updates a row of lists by moving it to the end
    _bad(con, "terms empty after normalisation", f"SELECT count(*) FROM {part} "
         "WHERE list_contains(et, '') OR list_contains(ft, '') OR list_contains(gt, '')")
    # rule 1: terms equal after normalisation are one, in first-seen order, keeping the
    # highest (min_)weight; positions (the store's exp_pos/gen_pos) are in the merged lists
    duplicated = con.execute("SELECT count(*) FILTER (WHERE list_unique(et) <> len(et)), "
                             f"count(*) FILTER (WHERE list_unique(gt) <> len(gt)) FROM {part}").fetchall()[0]
    for (terms, weights), count in zip((("et", "ew"), ("gt", "gw")), duplicated):
        if not count:
            continue
        reordered = True
        first = f"list_filter(range(1, len({terms}) + 1), lambda i: list_position({terms}, {terms}[i]) = i)"
        twins = f"list_filter(range(1, len({terms}) + 1), lambda k: {terms}[k] = {terms}[i])"
        con.execute(f"""UPDATE {part} SET {terms} = list_filter({terms}, lambda x, i: list_position({terms}, x) = i),
            {weights} = list_transform({first}, lambda i: list_max(list_transform({twins}, lambda k: {weights}[k])))
            WHERE list_unique({terms}) <> len({terms})""")
    _bad(con, "terms both expected and forbidden", f"SELECT count(*) FROM {part} WHERE list_has_any(et, ft)")
    return reordered


def _non_ascii(con: duckdb.DuckDBPyConnection, j: str) -> bool:
    """Fill in the terms and domains _term_sql left NULL (non-ASCII): in Python, once per
    distinct text, for the rows that have any."""
    fix = f"fix_{j}"
    con.execute(f"""CREATE TEMP TABLE {fix} AS SELECT j.pos, g1.ee_list, g1.ft_list, c0.v, j.domain_raw
        FROM {j} j JOIN g1 ON g1.rowid = j.pos LEFT JOIN c0 ON c0.qid = g1.query_id
        WHERE list_count(j.et) <> len(j.et) OR list_count(j.ft) <> len(j.ft) OR list_count(j.gt) <> len(j.gt)
           OR (j.domain_raw IS NOT NULL AND strlen(j.domain_raw) <> length(j.domain_raw))""")
    if not con.execute(f"SELECT count(*) FROM {fix}").fetchall()[0][0]:
        con.execute(f"DROP TABLE {fix}")
        return False
    non_ascii = [r[0] for r in con.execute(f"""
        SELECT DISTINCT raw FROM (
            SELECT unnest(list_transform(ee_list, lambda x: x.term)) AS raw FROM {fix} UNION ALL
            SELECT unnest(ft_list) FROM {fix} UNION ALL
            SELECT unnest(list_transform(v, lambda x: coalesce(x[2], x[1]))) FROM {fix} UNION ALL
            SELECT domain_raw FROM {fix} WHERE domain_raw IS NOT NULL)
        WHERE strlen(raw) <> length(raw)""").fetchall()]
    normalised = [normalize_term(t) for t in non_ascii]
    con.execute(f"""UPDATE {j} SET
            et = list_transform(list_zip(f.ee_list, {j}.et),
                                lambda x: coalesce(x[2], map_extract_value(n.m, x[1].term))),
            ft = list_transform(list_zip(f.ft_list, {j}.ft), lambda x: coalesce(x[2], map_extract_value(n.m, x[1]))),
            gt = list_transform(list_zip(coalesce(f.v, []::VARCHAR[][]), {j}.gt),
                                lambda x: coalesce(x[2], map_extract_value(n.m, coalesce(x[1][2], x[1][1])))),
            domain = CASE WHEN {j}.domain_raw IS NOT NULL AND strlen({j}.domain_raw) <> length({j}.domain_raw)
                          THEN nullif(map_extract_value(n.m, {j}.domain_raw), '') ELSE {j}.domain END
        FROM {fix} f, (SELECT map($raw, $norm) AS m) n WHERE f.pos = {j}.pos""", {"raw": non_ascii, "norm": normalised})
    con.execute(f"DROP TABLE {fix}")
    return True
