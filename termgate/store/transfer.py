"""The one way rows travel between Arrow (typed as the DuckDB store types them,
store.copy.store_schemas) and PostgreSQL: in bulk by COPY, with no Python work per row
(but taking the one message per row that COPY TO sends, in psycopg's loop).

In (copy_in): `COPY ... FROM STDIN (FORMAT binary)`, built column by column with numpy and
pyarrow.compute: every field is its length and its bytes (numbers in network byte order,
text as UTF-8, arrays in array_send's layout), and a row is its fields joined. Numbers go
as their bits, so every double and float4 arrives exactly (-0, inf, nan and its payload
included), and text needs no quoting or escaping at all. Binary, not CSV: the server
reads query_results in half the time (parsing array literals is its costly part), which
the store's goal (a 100k-query run in ≤ 5 s) needs. A block is sent while the next is built.

Out (copy_out): `COPY (SELECT ...) TO STDOUT (FORMAT csv)`, text arrays as JSON
(array_to_json: exact strings, null elements as null), numeric arrays as PostgreSQL's array
text. The server sends a message per row; they are gathered in blocks of whole rows, each
parsed by pyarrow's CSV reader (in a second thread, while the next block arrives) with its
arrays turned into lists by DuckDB. Floats come as their shortest exact text
(extra_float_digits 3), so they come back bit for bit; a NaN comes back as NaN (text keeps
no payload).

The chain's digests (DuckDB's JSON of each row, store.digest) therefore come out the same
on rows read back (tests/test_pg_transfer.py; `audit verify`).
"""

from __future__ import annotations

import io
import queue
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import TermgateError

__all__ = ["copy_in", "copy_out"]

BATCH_ROWS = 65_536
"""Rows per block sent: the server ingests one block while the next is built."""
BLOCK_BYTES = 1 << 23
"""Bytes per block received: one block is parsed while the next arrives."""

_TEXT_OID = 25
_FIXED = {pa.bool_(): (16, "u1", "BOOLEAN"), pa.int32(): (23, ">i4", "INTEGER"), pa.int64(): (20, ">i8", "BIGINT"),
          pa.float32(): (700, ">f4", "FLOAT"), pa.float64(): (701, ">f8", "DOUBLE")}
"""Each fixed-width type the store's columns (or their elements) have: PostgreSQL's type
oid (array_recv checks an array's), numpy's type in network byte order, DuckDB's name."""


def _is_text(arrow_type) -> bool:
    return pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type)


def _is_list(arrow_type) -> bool:
    return pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)


def _holds_text(arrow_type) -> bool:
    return _is_text(arrow_type) or (_is_list(arrow_type) and _is_text(arrow_type.value_type))


def _check(schema: pa.Schema) -> None:
    for field in schema:
        element = field.type.value_type if _is_list(field.type) else field.type
        if not _is_text(element) and element not in _FIXED:
            raise TermgateError(f"no PostgreSQL transfer for the store column type {field.type} ({field.name})")


# ---------------------------------------------------------------- in

_NULL_FIELD = pa.scalar(b"\xff\xff\xff\xff", pa.large_binary())
"""A NULL field: length -1 and nothing after."""
_NOTHING = pa.scalar(b"", pa.large_binary())
_SIGNATURE = b"PGCOPY\n\xff\r\n\x00" + bytes(8)
"""Binary COPY's header: the signature, no flags, no header extension."""
_END = b"\xff\xff"


def _offsets(array: pa.Array) -> np.ndarray:
    """A large_binary array's value offsets (into its data buffer)."""
    return np.frombuffer(array.buffers()[1], np.int64)[array.offset:array.offset + len(array) + 1]


def _over(data: np.ndarray, offsets: np.ndarray) -> pa.Array:
    """A large_binary array whose value i is data's bytes offsets[i]:offsets[i + 1] (no copy)."""
    return pa.Array.from_buffers(pa.large_binary(), len(offsets) - 1, [None, pa.py_buffer(offsets),
                                                                       pa.py_buffer(data)])


def _fixed(records: np.ndarray) -> pa.Array:
    """A large_binary array holding each of numpy's records as its bytes."""
    width = records.dtype.itemsize
    return _over(records, np.arange(0, (len(records) + 1) * width, width, dtype=np.int64))


def _numbers(values: pa.Array) -> pa.Array:
    """Binary COPY fields of fixed-width values: length and value in network order, bits
    as they are (so every double, float4 and NaN is sent exactly)."""
    zero = False if pa.types.is_boolean(values.type) else 0
    network = pc.fill_null(values, zero).to_numpy(zero_copy_only=False).astype(_FIXED[values.type][1])
    records = np.empty(len(values), dtype=[("length", ">i4"), ("value", network.dtype)])
    records["length"], records["value"] = network.dtype.itemsize, network
    fields = _fixed(records)
    return pc.if_else(pc.is_valid(values), fields, _NULL_FIELD) if values.null_count else fields


def _texts(values: pa.Array) -> list[pa.Array]:
    """Binary COPY fields of texts, as two pieces: the lengths, and the UTF-8 bytes."""
    data = values.cast(pa.large_binary())
    lengths = pc.fill_null(pc.binary_length(data), -1).to_numpy(zero_copy_only=False).astype(">i4")
    return [_fixed(lengths), pc.fill_null(data, b"") if values.null_count else data]


def _arrays(lists: pa.Array) -> list[pa.Array]:
    """Binary COPY fields of a list column (array_send's layout), as two pieces: length
    and the 20-byte header (one dimension, from 1, of the element type), and the elements."""
    offsets = lists.offsets.to_numpy()
    values = lists.values.slice(offsets[0], offsets[-1] - offsets[0])
    if _is_text(values.type):
        elements = pc.binary_join_element_wise(*_texts(values), _NOTHING)
    else:
        elements = _numbers(values)
    bounds = np.ascontiguousarray(_offsets(elements)[offsets - offsets[0]])
    bodies = _over(elements.buffers()[2] or pa.py_buffer(b""), bounds)  # a row's elements lie side by side
    heads = np.empty(len(lists), dtype=[(f, ">i4") for f in ("length", "ndim", "flags", "oid", "dim", "lower")])
    heads["length"], heads["dim"] = 20 + np.diff(bounds), np.diff(offsets)
    oid = _TEXT_OID if _is_text(values.type) else _FIXED[values.type][0]
    heads["ndim"], heads["flags"], heads["oid"], heads["lower"] = 1, 0, oid, 1
    if not lists.null_count:
        return [_fixed(heads), bodies]
    valid = pc.is_valid(lists)
    return [pc.if_else(valid, _fixed(heads), _NULL_FIELD), pc.if_else(valid, bodies, _NOTHING)]


def _tuples(batch: pa.RecordBatch) -> pa.Array:
    """Each row as one binary COPY tuple: the field count, then every field."""
    pieces = [pa.scalar(np.array(batch.num_columns, ">i2").tobytes(), pa.large_binary())]
    for field, column in zip(batch.schema, batch.columns):
        if _is_list(field.type):
            pieces += _arrays(column)
        elif _is_text(field.type):
            pieces += _texts(column)
        else:
            pieces.append(_numbers(column))
    return pc.binary_join_element_wise(*pieces, _NOTHING)


def _blocks(rows: pa.Table):
    """The rows in binary COPY format, a block of BATCH_ROWS tuples at a time."""
    yield _SIGNATURE
    for batch in rows.to_batches(BATCH_ROWS):
        tuples = _tuples(batch)
        bounds = _offsets(tuples)
        yield memoryview(tuples.buffers()[2])[bounds[0]:bounds[-1]]
    yield _END


def _holds_nul(column: pa.ChunkedArray) -> bool:
    """Whether a text (or list of texts) column holds the character NUL: one scan of the
    characters its values use, straight from Arrow's buffers."""
    for chunk in column.chunks:
        if _is_list(chunk.type):
            chunk = chunk.flatten()
        if not len(chunk) or chunk.buffers()[2] is None:
            continue
        width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        offsets = np.frombuffer(chunk.buffers()[1], width)[chunk.offset:chunk.offset + len(chunk) + 1]
        if not np.frombuffer(chunk.buffers()[2], np.uint8)[offsets[0]:offsets[-1]].all():
            return True
    return False


def _refuse_nul(rows: pa.Table) -> None:
    """PostgreSQL text cannot hold NUL: say which column before anything is sent."""
    for field, column in zip(rows.schema, rows.columns):
        if _holds_text(field.type) and _holds_nul(column):
            raise TermgateError(f"{field.name}: a text holds the character NUL, which PostgreSQL cannot store; "
                                "remove it from the input")


def _utf8(cur) -> None:
    """Texts travel as UTF-8 both ways: the session says so (psycopg follows)."""
    if cur.connection.info.encoding != "utf-8":
        cur.execute("SET client_encoding TO 'UTF8'")


def copy_in(cur, table: str, rows: pa.Table) -> None:
    """COPY `rows` into `table` (into the columns named as rows' are) in the cursor's
    transaction. `table` is a constant name from our code. A text holding NUL is refused
    (TermgateError) before anything is sent."""
    from psycopg.copy import QueuedLibpqWriter

    _check(rows.schema)
    if not rows.num_rows:
        return
    _refuse_nul(rows)
    _utf8(cur)
    columns = ", ".join(f'"{name}"' for name in rows.column_names)
    with cur.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT binary)", writer=QueuedLibpqWriter(cur)) as copy:
        for block in _blocks(rows):
            copy.write(block)


# ---------------------------------------------------------------- out


def _selected(field: pa.Field) -> str:
    """PostgreSQL SQL: one column as COPY TO writes it for _typed to read back."""
    column = f'"{field.name}"'
    if _is_list(field.type) and _is_text(field.type.value_type):
        return f"array_to_json({column})"
    return column


def _read_block(block: bytes, rows: int, longest: int, schema: pa.Schema) -> pa.Table:
    """One block of whole rows of PostgreSQL's CSV as Arrow: lists as their text, booleans
    t/f, a quoted empty string '' and an unquoted empty field NULL. A block whose line ends
    are exactly its rows' (no text holds a newline) is split anywhere, 2× faster."""
    import pyarrow.csv as csv

    plain = block.count(b"\n") == rows and b"\r" not in block
    return csv.read_csv(
        pa.BufferReader(block),
        read_options=csv.ReadOptions(column_names=schema.names, block_size=max(1 << 22, 2 * longest)),
        parse_options=csv.ParseOptions(newlines_in_values=not plain, ignore_empty_lines=False),  # a row of NULL
        convert_options=csv.ConvertOptions(
            column_types={f.name: pa.string() if _is_list(f.type) else f.type for f in schema},
            true_values=["t"], false_values=["f"], null_values=[""], strings_can_be_null=True,
            quoted_strings_can_be_null=False))


def _list_from_text(field: pa.Field) -> str:
    """DuckDB SQL: a list column back from what _selected wrote."""
    column = f'"{field.name}"'
    element = field.type.value_type
    if _is_text(element):
        return f"""CAST(from_json({column}, '["VARCHAR"]') AS VARCHAR[])"""
    # {1.5,NaN,-Infinity,NULL} -> [1.5,NaN,-Infinity,NULL]: DuckDB reads each element as its type
    return f"CAST(translate({column}, '{{}}', '[]') AS {_FIXED[element][2]}[])"


def _typed(con, raw: pa.Table, schema: pa.Schema) -> pa.Table:
    """Parsed CSV with its lists decoded (on DuckDB connection con), as `schema`."""
    if any(_is_list(f.type) for f in schema):
        selected = ", ".join(f'{_list_from_text(f)} AS "{f.name}"' if _is_list(f.type) else f'"{f.name}"'
                             for f in schema)
        con.register("_termgate_rows", raw)
        try:
            raw = con.sql(f"SELECT {selected} FROM _termgate_rows").to_arrow_table()
        finally:
            con.unregister("_termgate_rows")
    return raw.cast(schema)


def _parse(blocks: queue.Queue, schema: pa.Schema) -> list[pa.Table]:
    """Each block handed over (until None) parsed as it comes, while the next arrives."""
    import duckdb

    con = duckdb.connect()
    try:
        parsed = []
        while (block := blocks.get()) is not None:
            parsed.append(_typed(con, _read_block(*block, schema), schema))
        return parsed
    finally:
        con.close()


def _receive(copy, blocks: queue.Queue) -> None:
    """COPY TO's messages (one per row) in blocks of whole rows, about BLOCK_BYTES each,
    handed over as (the bytes, their rows, their longest row)."""
    block = io.BytesIO()
    write, size, rows, longest = block.write, 0, 0, 0
    for message in copy:
        length = write(message)
        size += length
        rows += 1
        if length > longest:
            longest = length
        if size >= BLOCK_BYTES:
            blocks.put((block.getvalue(), rows, longest))
            block = io.BytesIO()
            write, size, rows, longest = block.write, 0, 0, 0
    if rows:
        blocks.put((block.getvalue(), rows, longest))


def copy_out(cur, table: str, schema: pa.Schema, where: str = "TRUE", params: list | None = None) -> pa.Table:
    """The rows of `SELECT <schema's columns> FROM table WHERE where`, as Arrow with
    exactly `schema`, in no particular order. `table` and `where` are constant text from
    our code; values go in `params` (`%s` placeholders, bound by psycopg). Sets the
    session's extra_float_digits to 3 (shortest exact text; PostgreSQL 12's default is 1,
    which is the same, but a server may be configured lower)."""
    _check(schema)
    _utf8(cur)
    cur.execute("SET extra_float_digits = 3")
    statement = f"COPY (SELECT {', '.join(_selected(f) for f in schema)} FROM {table} WHERE {where}) TO STDOUT " \
                "(FORMAT csv)"
    blocks: queue.Queue = queue.Queue()  # unbounded: a parser that failed never holds the reader up
    with ThreadPoolExecutor(1) as pool:
        parsed = pool.submit(_parse, blocks, schema)
        try:
            with cur.copy(statement, params) as copy:
                _receive(copy, blocks)
        finally:
            blocks.put(None)
        tables = parsed.result()
    return pa.concat_tables(tables) if tables else schema.empty_table()
