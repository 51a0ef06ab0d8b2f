"""Loading for the scorer (SPEC §1.1–1.2): the input files read typed by DuckDB while a
Python thread vouches for every line, or the Python validator's parse handed over as
Arrow; then terms normalised and merged (rule 1) and the golden set's hash.

Both routes fill the same two tables, one row per input line in file order:
- golden_lines: query_id, query, domain_raw, intent, critical, expected (list of
  {term, min_weight}), forbidden (list of terms), all as parsed;
- generated_lines: query_id, terms and weights (aligned lists, as parsed), error (the
  reason an item could not be produced, else NULL).
"""

from __future__ import annotations

import codecs
import hashlib
from pathlib import Path

import duckdb
import orjson
import pyarrow as pa

from ...io import GENERATED_SCHEMA, GOLDEN_SCHEMA, plain_golden_fields, query_id_problem, unique_keys
from ..metrics import normalize_term
from ...sql import sql_literal

__all__ = ["HandOver", "vouch_for_file", "plain_golden", "plain_generated",
           "source_path", "read_golden", "read_generated", "load_arrow", "check_links", "golden_hash", "normalise"]


class HandOver(Exception):
    """DuckDB cannot read this input as it is, or found something wrong with it: the Python
    validator names the problem, or parses the input and hands it over as Arrow."""


def plain_golden(obj: object) -> int | None:
    """A golden line the Python validator accepts as it is (termgate.io.plain_golden_fields),
    with a query that is not blank: every type the typed DuckDB read below relies on.
    Returns how many keys its objects hold (a lower bound: keys nested in a value the
    validator ignores are not counted), else None."""
    fields = plain_golden_fields(obj)
    if fields is None or not fields[1].strip():
        return None
    return len(obj) + len(fields[2]) + sum(map(len, obj["expected_expansions"]))


def plain_generated(obj: object) -> int | None:
    """A JSONL generated line of the plainest valid kind (termgate.io.generated rules): how
    many keys its objects hold (a lower bound, as plain_golden), else None."""
    if type(obj) is not dict:
        return None
    query_id, terms = obj.get("query_id"), obj.get("terms")
    if type(query_id) is not str or not query_id or type(terms) is not list or query_id_problem(query_id):
        return None
    keys = len(obj)
    for entry in terms:
        kind = type(entry)
        if kind is str:
            continue
        if kind is not dict:
            return None
        weight = entry.get("weight", 1.0)
        if type(entry.get("term")) is not str or type(weight) not in (int, float) or not 0.0 <= weight <= 1.0:
            return None
        keys += len(entry)
    return keys


def _vouch_line(line: bytes, plain, loads) -> bool:
    """One line plainly valid, with no key repeated in any of its objects. Each key in the
    text carries a colon: when the line has no more colons than the keys `plain` counted,
    none can be a repeat (a repeat is dropped from the parsed object, so the text would
    have more). Otherwise (a colon inside a string) termgate.io.unique_keys decides."""
    obj = loads(line)
    keys = plain(obj)
    return keys is not None and (line.count(b":") == keys or unique_keys(line, obj))


def vouch_for_file(path: Path, plain) -> int:
    """The file's non-blank line count (as termgate.io.jsonl_lines sees lines); HandOver for
    anything DuckDB's reader would take differently from the Python validator: bytes that
    are not UTF-8, lines that are not strict JSON (DuckDB forgives trailing commas, NaN,
    numbers out of range, form feeds, any nesting depth), a key repeated within any object
    (DuckDB refuses a repeat of a key it reads, but keeps one of two keys it does not, and
    orjson keeps the last), and values of a type the typed read would coerce (`"0.5"` as a
    weight, `123` as a query_id, an explicit null). Reads in blocks, keeping nothing:
    memory stays flat."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    loads = orjson.loads  # strict JSON, the parser the Python validator uses
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
                        obj = loads(part)
                        keys = plain(obj)  # _vouch_line, inline: this loop runs once per line
                        if keys is None or (part.count(b":") != keys and not unique_keys(part, obj)):
                            raise HandOver(f"{path}: line {lines + 1} is not plainly valid")
                        lines += 1
        decoder.decode(b"", final=True)
        if tail.strip():
            if not _vouch_line(tail, plain, loads):
                raise HandOver(f"{path}: the last line is not plainly valid")
            lines += 1
    except OSError as exc:
        raise HandOver(str(exc)) from None
    except UnicodeDecodeError:
        raise HandOver(f"{path}: not UTF-8") from None
    except orjson.JSONDecodeError:
        raise HandOver(f"{path}: a line is not strict JSON") from None
    return lines


def source_path(path: str | Path) -> Path:
    """The absolute path: DuckDB would expand a leading `~` and glob `*?[{`, Python does not."""
    resolved = Path(path).resolve()
    if any(ch in str(resolved) for ch in "*?[{"):
        raise HandOver(f"{path}: glob characters in the file name")
    return resolved


def _typed_read(con: duckdb.DuckDBPyConnection, path: Path, sql: str) -> None:
    """Run a typed read; a line it refuses (repeated keys, a type it cannot transform) goes
    to the Python validator."""
    try:
        con.execute(sql)
    except duckdb.InvalidInputException as exc:
        raise HandOver(f"{path}: DuckDB's typed reader refused a line ({str(exc).splitlines()[0][:120]})") from None


def read_golden(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """golden_lines read typed from the file: the Python check beside this read (plain_golden)
    has vouched for every type and for keys repeated anywhere (DuckDB's typed reader
    refuses a repeat only of the keys it reads), and DuckDB matches keys case-sensitively.
    Returns the line count."""
    _typed_read(con, path, f"""CREATE TABLE golden_lines AS SELECT query_id, query, context.domain AS domain_raw,
        context.intent AS intent, coalesce(critical, false) AS critical,
        list_transform(expected_expansions, lambda x: {{'term': x.term,
                                                       'min_weight': coalesce(x.min_weight, 0.0::DOUBLE)}}) AS expected,
        coalesce(forbidden_terms, []) AS forbidden
        FROM read_json({sql_literal(str(path))}, format='newline_delimited', records=true, columns={{
            query_id: 'VARCHAR', query: 'VARCHAR', context: 'STRUCT(domain VARCHAR, intent VARCHAR)',
            expected_expansions: 'STRUCT(term VARCHAR, min_weight DOUBLE)[]', forbidden_terms: 'VARCHAR[]',
            critical: 'BOOLEAN'}})""")
    total, distinct = con.execute("SELECT count(*), count(DISTINCT query_id) FROM golden_lines").fetchall()[0]
    if distinct != total:
        raise HandOver("golden set: duplicate query_id")
    return total


def _blank_file(path: Path) -> bool:
    with path.open("rb") as handle:
        head = handle.read(1 << 16)
    return len(head) < 1 << 16 and not head.strip()


def read_generated(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    """generated_lines read typed from a JSONL file; returns the line count."""
    if _blank_file(path):  # nothing generated: every golden query has an empty expansion
        con.execute("CREATE TABLE generated_lines (query_id VARCHAR, terms VARCHAR[], weights DOUBLE[], "
                    "error VARCHAR)")
        return 0
    # The Python check (plain_generated) has vouched for every type; terms stay JSON
    # because a list may mix strings and objects. DuckDB hands each element over
    # re-serialised (keys unescaped, no spaces), so a key occurs as `"term":` exactly.
    reader = (f"read_json({sql_literal(str(path))}, format='newline_delimited', records=true, "
              "columns={query_id: 'VARCHAR', terms: 'JSON[]'})")
    _typed_read(con, path, f"""CREATE TABLE generated_lines AS
        SELECT query_id, list_transform(parts, lambda x: coalesce(x[2], x[1])) AS terms,
               list_transform(parts, lambda x: coalesce(TRY_CAST(x[3] AS DOUBLE), 1.0::DOUBLE)) AS weights,
               NULL::VARCHAR AS error, repeated
        FROM (SELECT query_id,
                     -- each term as [its JSON as a string, $.term, $.weight]
                     list_transform(terms, lambda x: json_extract_string(x, ['$', '$.term', '$.weight'])) AS parts,
                     -- json_extract_string keeps the first of two equal keys, orjson the last
                     list_bool_or(list_transform(terms, lambda x: strlen(x) - strlen(replace(x, '"term":', '')) > 7
                                  OR strlen(x) - strlen(replace(x, '"weight":', '')) > 9)) AS repeated
              FROM {reader})""")
    total, distinct, repeated = con.execute(
        "SELECT count(*), count(DISTINCT query_id), count(*) FILTER (WHERE repeated) FROM generated_lines").fetchall()[0]
    if distinct != total:
        raise HandOver("generated: a duplicate query_id")
    if repeated:
        raise HandOver(f"generated: {repeated} lines with a repeated key in a term object")
    con.execute("ALTER TABLE generated_lines DROP COLUMN repeated")
    return total


def load_arrow(con: duckdb.DuckDBPyConnection, golden: pa.Table | None, generated: pa.Table | None) -> None:
    """golden_lines and/or generated_lines from Arrow tables (GOLDEN_SCHEMA, GENERATED_SCHEMA),
    replacing whatever a direct read left."""
    for name, table, schema in (("golden_lines", golden, GOLDEN_SCHEMA),
                                ("generated_lines", generated, GENERATED_SCHEMA)):
        if table is None:
            continue
        con.register("_handed_over", table.cast(schema))
        con.execute(f"CREATE OR REPLACE TABLE {name} AS SELECT * FROM _handed_over")
        con.unregister("_handed_over")


def check_links(con: duckdb.DuckDBPyConnection) -> None:
    """Every generated query_id must be a golden one."""
    unknown = con.execute("SELECT count(*) FROM generated_lines g ANTI JOIN golden_lines USING (query_id)"
                          ).fetchall()[0][0]
    if unknown:
        raise HandOver(f"{unknown} generated query_ids not in the golden set")


def golden_hash(con: duckdb.DuckDBPyConnection) -> str:
    """termgate.hashing's golden-set hash over the parsed (raw) values, in line order.
    Each entry's own digest is kept in table golden_entries (position, golden_entry_hash):
    the entry a comparison across revisions checks (SPEC §2 rule 8, golden_changed)."""
    con.execute("""
        CREATE OR REPLACE TABLE golden_entries AS
            SELECT rowid AS position, sha256(length_prefixed(query_id) || length_prefixed(query)
                || optional_prefixed(domain_raw) || optional_prefixed(intent) || len(expected) || ':'
                || array_to_string(list_transform(expected, lambda x:
                       length_prefixed(x.term) || CAST(x.min_weight AS VARCHAR) || ';'), '')
                || len(forbidden) || ':' || array_to_string(list_transform(forbidden, lambda x: length_prefixed(x)), '')
                || CASE WHEN critical THEN 'T' ELSE 'F' END) AS golden_entry_hash
            FROM golden_lines""")
    digests = con.execute("SELECT string_agg(golden_entry_hash, '' ORDER BY position) FROM golden_entries"
                          ).fetchall()[0][0]
    return hashlib.sha256((digests or "").encode()).hexdigest()


def _merge_duplicates(terms: str, weights: str) -> str:
    """Rule 1: terms equal after normalisation are one, in first-seen order, keeping the
    highest weight; among equal highest weights the first (as -0.0 and 0.0 are)."""
    first = f"list_filter(range(1, len({terms}) + 1), lambda i: list_position({terms}, {terms}[i]) = i)"
    twins = f"list_filter(range(1, len({terms}) + 1), lambda k: {terms}[k] = {terms}[i])"
    highest = f"list_max(list_transform({twins}, lambda k: {weights}[k]))"
    kept = f"{weights}[list_filter({twins}, lambda k: {weights}[k] = {highest})[1]]"
    return (f"{terms} = list_filter({terms}, lambda x, i: list_position({terms}, x) = i), "
            f"{weights} = list_transform({first}, lambda i: {kept})")


def normalise(con: duckdb.DuckDBPyConnection, domain_context: str | None, part: str, lo: int, hi: int) -> bool:
    """Golden lines lo..hi-1 into table `part`: one row per golden query, in golden order,
    its generated line joined, every term normalised as the row is built (rule 1: the macro
    normalise_text, termgate.scoring.scorer.database) and duplicates merged. Queries are
    scored in parts so both cores work. True when rows were updated, which may leave `part`
    out of golden order."""
    context = normalize_term(domain_context) if domain_context is not None else None
    con.execute(f"""CREATE TABLE {part} AS SELECT golden.rowid AS position, golden.query_id, golden.query,
            golden.intent, golden.critical, golden.domain_raw,
            nullif(CASE WHEN golden.domain_raw IS NULL THEN $context ELSE normalise_text(golden.domain_raw) END, '')
                AS domain,
            list_transform(golden.expected, lambda x: normalise_text(x.term)) AS expected_terms,
            list_transform(golden.expected, lambda x: x.min_weight) AS expected_min_weights,
            list_transform(golden.forbidden, lambda x: normalise_text(x)) AS forbidden_terms,
            coalesce(list_transform(generated.terms, lambda x: normalise_text(x)), []::VARCHAR[]) AS generated_terms,
            coalesce(generated.weights, []::DOUBLE[]) AS generated_weights, generated.error,
            -- no line at all (an errored item has its line): scored as an empty list, noted apart
            generated.query_id IS NULL AS no_line, entry.golden_entry_hash
        FROM golden_lines golden LEFT JOIN generated_lines generated USING (query_id)
        JOIN golden_entries entry ON entry.position = golden.rowid
        WHERE golden.rowid >= $lo AND golden.rowid < $hi ORDER BY golden.rowid""",
                {"context": context, "lo": lo, "hi": hi})
    reordered = False  # DuckDB updates a row of lists by moving it to the end
    empty = con.execute(f"SELECT count(*) FROM {part} WHERE list_contains(expected_terms, '') "
                        "OR list_contains(forbidden_terms, '') OR list_contains(generated_terms, '')").fetchall()[0][0]
    if empty:
        raise HandOver(f"{empty} lines with a term empty after normalisation")
    duplicated = con.execute(
        f"SELECT count(*) FILTER (WHERE list_unique(expected_terms) <> len(expected_terms)), "
        f"count(*) FILTER (WHERE list_unique(generated_terms) <> len(generated_terms)) FROM {part}").fetchall()[0]
    for (terms, weights), count in zip((("expected_terms", "expected_min_weights"),
                                        ("generated_terms", "generated_weights")), duplicated):
        if count:
            reordered = True
            con.execute(f"UPDATE {part} SET {_merge_duplicates(terms, weights)} "
                        f"WHERE list_unique({terms}) <> len({terms})")
    both = con.execute(f"SELECT count(*) FROM {part} WHERE list_has_any(expected_terms, forbidden_terms)"
                       ).fetchall()[0][0]
    if both:
        raise HandOver(f"{both} lines with a term both expected and forbidden")
    return reordered
