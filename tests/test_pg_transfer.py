"""store.transfer against a real server (tests/pg_server.py): every column type the store
uses, filled with the values that break hand-made CSV and array literals, goes into
PostgreSQL by copy_in and comes back by copy_out value for value (floats bit for bit); each
direction is also checked against psycopg's own adaptation (and the bits the server holds),
so no mistake can cancel out; and a run whose texts are all hostile is stored and verified
by `audit verify`."""

from __future__ import annotations

import math
import struct

import numpy as np
import pyarrow as pa
import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.errors import TermgateError
from termgate.store.transfer import copy_in, copy_out

from pg_server import PostgresServer, binaries

pytestmark = pytest.mark.skipif(binaries() is None, reason="PostgreSQL binaries are not installed "
                                "(apt-get install postgresql; .ci/run installs them)")

HOSTILE = [
    "", " ", "a\nb", "a\r\nb", "\r", "\t", "a\tb", "\\", "\\\\", "\\.", "a\n\\.\nb", "\\.\n", "\\N", "\\n",
    "NULL", "null", '"', '""', "'", ",", ",,", '","', "{", "}", "{}", "{a,b}", '{"a"}', "[1, 2]", '["x"]',
    " lead", "trail ", "ünï©ødé 中文 🎉", "\x01\x1f\x7f", '\\"', 'end\\', "e\u0301", "\u2028\u2029",
]
"""Texts a CSV, COPY text or array-literal encoder gets wrong when it cuts a corner."""

DOUBLES = [0.0, -0.0, math.inf, -math.inf, math.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
           1.7976931348623157e308, 0.1, 1 / 3, 2 / 3, 1e23, 9007199254740993.0, 123456789.123456789]
FLOATS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, 1.1754944e-38, 3.4028235e38, 0.1, 1 / 3],
                  dtype=np.float32)

SCHEMA = pa.schema([("id", pa.int32()), ("t", pa.string()), ("tl", pa.list_(pa.string())), ("d", pa.float64()),
                    ("dl", pa.list_(pa.float64())), ("fl", pa.list_(pa.float32())), ("i", pa.int32()),
                    ("b", pa.int64()), ("o", pa.bool_())])
CREATE = ("CREATE TABLE hostile (id integer, t text, tl text[], d double precision, dl double precision[], "
          "fl real[], i integer, b bigint, o boolean)")


@pytest.fixture(scope="session")
def pg():
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture
def cur(pg):
    import psycopg

    with psycopg.connect(pg.url(pg.create_database())) as conn, conn.cursor() as cursor:
        cursor.execute(CREATE)
        yield cursor


def _finite_bits(rng, n: int, dtype) -> list:
    """n values of random bit patterns (every exponent, subnormals), NaNs left out: NaN
    payloads are not kept by PostgreSQL's text (any NaN comes back as the one NaN)."""
    raw = rng.integers(0, 2 ** 63, n, dtype=np.uint64) if dtype == np.float64 else rng.integers(0, 2 ** 32, n,
                                                                                                 dtype=np.uint32)
    values = raw.view(dtype)
    return [v.item() for v in values if not np.isnan(v)]


def hostile_rows() -> pa.Table:
    rng = np.random.default_rng(15)
    n = len(HOSTILE) + 4
    texts = HOSTILE + [None, "x", "NULL", None]
    text_lists = [[h, None, "", "NULL", h] for h in HOSTILE] + [None, [], [None], [""]]
    doubles = (DOUBLES + _finite_bits(rng, n, np.float64))[:n - 1] + [None]
    double_lists = [DOUBLES, [], None, [None, 1.5, None]] + [_finite_bits(rng, 6, np.float64) for _ in range(n - 4)]
    float_lists = [FLOATS.tolist(), [], None, [None]] + [_finite_bits(rng, 8, np.float32) for _ in range(n - 4)]
    return pa.table({
        "id": list(range(n)), "t": texts, "tl": text_lists, "d": doubles, "dl": double_lists, "fl": float_lists,
        "i": [2 ** 31 - 1, -2 ** 31, None, 0] + list(range(n - 4)),
        "b": [2 ** 63 - 1, -2 ** 63, None, 0] + list(range(n - 4)),
        "o": [True, False, None] + [True] * (n - 3)}, schema=SCHEMA)


def _bits(value, column: str):
    """A value with every float as its bit pattern (float4 for `fl`), lists element-wise."""
    if isinstance(value, list):
        return [_bits(v, column) for v in value]
    if isinstance(value, float):
        return struct.pack("<f" if column == "fl" else "<d", value)
    return value


def assert_same(got: pa.Table, want: pa.Table) -> None:
    assert got.schema == want.schema
    got = got.sort_by("id")  # a server may scan in parallel: rows come in any order
    for name in want.column_names:
        for row, (g, w) in enumerate(zip(got.column(name).to_pylist(), want.column(name).to_pylist())):
            assert _bits(g, name) == _bits(w, name), (name, row, w, g)
    assert got.num_rows == want.num_rows


def test_every_hostile_value_round_trips_exactly(cur):
    rows = hostile_rows()
    copy_in(cur, "hostile", rows)
    assert_same(copy_out(cur, "hostile", SCHEMA), rows)


def test_copy_in_stores_what_psycopg_reads_back(cur):
    """The server holds the values themselves (checked through psycopg's own adaptation)."""
    rows = hostile_rows()
    copy_in(cur, "hostile", rows)
    cur.execute("SELECT t, tl, d, dl, fl::float8[], i, b, o FROM hostile ORDER BY id")
    stored = cur.fetchall()
    for name, index in (("t", 0), ("tl", 1), ("d", 2), ("dl", 3), ("i", 5), ("b", 6), ("o", 7)):
        assert [_bits(r[index], name) for r in stored] == _bits(rows.column(name).to_pylist(), name), name
    assert [_bits(r[4], "fl") for r in stored] == _bits(rows.column("fl").to_pylist(), "fl")


def test_copy_out_reads_rows_psycopg_wrote(cur):
    """copy_out decodes what the server holds, whoever wrote it."""
    rows = hostile_rows()
    cur.executemany("INSERT INTO hostile VALUES (%s, %s, %s, %s, %s, %s::real[], %s, %s, %s)",
                    [list(r.values()) for r in rows.to_pylist()])
    assert_same(copy_out(cur, "hostile", SCHEMA), rows)


def test_copy_in_sends_the_bits_of_every_float(cur):
    """Binary COPY: what the server holds is the very bits, a NaN's payload and -0 included."""
    odd_nan = struct.unpack("<d", struct.pack("<Q", 0xFFF8_0000_DEAD_BEEF))[0]
    doubles = DOUBLES + [odd_nan]
    rows = pa.table({"id": list(range(len(doubles))), "d": doubles, "dl": [doubles] * len(doubles)},
                    schema=pa.schema([SCHEMA.field("id"), SCHEMA.field("d"), SCHEMA.field("dl")]))
    copy_in(cur, "hostile", rows)
    cur.execute("SELECT float8send(d), (SELECT array_agg(float8send(x)) FROM unnest(dl) x) FROM hostile ORDER BY id")
    stored = cur.fetchall()
    want = [struct.pack(">d", v) for v in doubles]
    assert [bytes(r[0]) for r in stored] == want
    assert all([bytes(x) for x in r[1]] == want for r in stored)


@pytest.mark.parametrize("block_bytes", [8192, 256])
def test_slices_chunks_and_many_blocks_both_ways(cur, monkeypatch, block_bytes):
    """A table sliced, in several chunks, and longer than a block each way (blocks of
    8 KiB, and of 256 bytes: shorter than a row, as the golden file's 50 MB row is longer
    than any block)."""
    from termgate.store import transfer

    monkeypatch.setattr(transfer, "BATCH_ROWS", 7)
    monkeypatch.setattr(transfer, "BLOCK_BYTES", block_bytes)
    rows = hostile_rows()
    pieces = pa.concat_tables([rows.slice(0, 10), rows.slice(10, 5), rows.slice(15)])
    assert pieces.column("t").num_chunks == 3
    copy_in(cur, "hostile", pieces.slice(2))
    assert_same(copy_out(cur, "hostile", SCHEMA), rows.slice(2))


def test_lists_all_empty_or_null_and_texts_all_null(cur):
    schema = pa.schema([SCHEMA.field(n) for n in ("id", "t", "tl", "dl", "fl")])
    rows = pa.table({"id": [1, 2, 3], "t": [None] * 3, "tl": [[], None, []], "dl": [None, [], None],
                     "fl": [None, None, None]}, schema=schema)
    copy_in(cur, "hostile", rows)
    assert_same(copy_out(cur, "hostile", schema), rows)


def test_a_condition_with_bound_values_and_a_subset_of_columns(cur):
    rows = hostile_rows()
    copy_in(cur, "hostile", rows)
    schema = pa.schema([SCHEMA.field("id"), SCHEMA.field("t")])
    got = copy_out(cur, "hostile", schema, "t = ANY(%s) OR t = %s", [["a\nb", "'", '"'], "\\."])
    assert got.schema == schema
    assert sorted(got.column("t").to_pylist()) == sorted(["a\nb", "'", '"', "\\."])


def test_a_single_column_of_nulls_and_empty_strings(cur):
    """A row of one NULL is an empty line in CSV: it is a row, not a line to skip."""
    schema = pa.schema([SCHEMA.field("t")])
    rows = pa.table({"t": [None, "", None, "\\.", None]}, schema=schema)
    copy_in(cur, "hostile", rows)
    assert sorted(copy_out(cur, "hostile", schema).column("t").to_pylist(), key=repr) == sorted(
        rows.column("t").to_pylist(), key=repr)


def test_an_empty_table_both_ways(cur):
    copy_in(cur, "hostile", SCHEMA.empty_table())
    got = copy_out(cur, "hostile", SCHEMA)
    assert got.num_rows == 0 and got.schema == SCHEMA
    assert copy_out(cur, "hostile", SCHEMA, "FALSE").equals(SCHEMA.empty_table())


def test_a_text_holding_nul_is_refused_before_anything_is_sent(cur):
    rows = pa.table({"id": [1, 2], "tl": [["ok"], ["a\x00b"]]}, schema=pa.schema([SCHEMA.field("id"),
                                                                                SCHEMA.field("tl")]))
    with pytest.raises(TermgateError, match="NUL"):
        copy_in(cur, "hostile", rows)
    cur.execute("SELECT count(*) FROM hostile")
    assert cur.fetchone()[0] == 0


def test_a_run_of_hostile_texts_is_stored_and_verifies(pg, tmp_path):
    """evaluate --db URL, then audit verify --db URL: the digests recomputed from the
    PostgreSQL rows are those of the DuckDB rows the header vouched for."""
    from conftest import golden_row, write_jsonl

    url = pg.url(pg.create_database())
    texts = [h for h in HOSTILE if h.strip()]
    golden = write_jsonl(tmp_path / "golden.jsonl", [
        golden_row(f"q{i}", f"query {text}", [f"term {text}", text, "plain"], domain=f"d{i % 3}")
        for i, text in enumerate(texts)])
    generated = write_jsonl(tmp_path / "gen.jsonl", [
        {"query_id": f"q{i}", "terms": [f"term {text}", "plain", f"extra {text}"]} for i, text in enumerate(texts)])
    stored = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated), "--db",
                                       url, "--drift-judge", "none"])
    assert stored.exit_code in (0, 1, 3), stored.output
    verify = CliRunner().invoke(main, ["audit", "verify", "--db", url])
    assert verify.exit_code == 0 and "audit chain intact" in verify.output, verify.output


def test_a_golden_file_stored_meanwhile_by_another_run_is_kept(pg):
    """Two runs of one golden revision: the second's COPY waits on the first's key, then
    keeps the first's row and goes on (as ON CONFLICT DO NOTHING would)."""
    import threading

    import psycopg

    from termgate.store.pg_runs import _store_golden
    from termgate.store.postgres import migrate_pg

    url = pg.url(pg.create_database())
    migrate_pg(url)
    row = pa.table({"golden_hash": ["h1"], "path": ["g.jsonl"], "content": ["a\n" * 1000], "stored_at": ["t"]})
    with psycopg.connect(url) as first, psycopg.connect(url) as second:
        first.execute("INSERT INTO golden_files VALUES ('h1', 'first.jsonl', 'x', 't')")  # not committed yet
        failures = []

        def store():
            try:
                with second.transaction(), second.cursor() as cur:
                    _store_golden(cur, row)
                    cur.execute("SELECT 1")  # the transaction goes on
            except Exception as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        waiting = threading.Thread(target=store)
        waiting.start()
        waiting.join(0.5)
        assert waiting.is_alive()  # held on the first's key
        first.commit()
        waiting.join(30)
        assert not failures and not waiting.is_alive()
        assert second.execute("SELECT path FROM golden_files").fetchall() == [("first.jsonl",)]
