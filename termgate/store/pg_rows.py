"""Reading rows of the PostgreSQL team store with the DuckDB store's own SQL.

A read names the rows it needs (`Rows`: a table, a constant condition with bound values,
optionally a few columns); `snapshot` fetches them in one repeatable-read transaction into
an in-memory DuckDB holding tables of the same names and types, and the read's DuckDB SQL
runs there exactly as on a store file. So every rule (statuses, flagged items, headers,
digests) has one implementation, and PostgreSQL's SQL only selects and filters.
(Writes are store.pg_runs.)
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NamedTuple

import pyarrow as pa

from .postgres import PG_SCHEMA_VERSION, connect_pg, migrate_pg

__all__ = ["Rows", "every", "of_runs", "snapshot", "schemas", "table_kind_problems_pg", "golden_lines_pg"]


class Rows(NamedTuple):
    """Which rows of a table a read needs: `where` is constant SQL with %s placeholders."""

    where: str = "TRUE"
    params: tuple | list = ()
    columns: tuple[str, ...] | None = None
    """Only these columns (the rest are absent from the snapshot's table)."""


def every(*tables: str) -> dict[str, Rows]:
    return {t: Rows() for t in tables}


def of_runs(run_ids, *tables: str) -> dict[str, Rows]:
    """The rows of these runs in each table (every table with a run_id column)."""
    ids = [r for r in run_ids if r is not None]
    return {t: Rows("run_id = ANY(%s)", (ids,)) for t in tables}


@functools.cache
def schemas() -> dict[str, pa.Schema]:
    """Each table's Arrow schema as the DuckDB store types it (computed once)."""
    from .copy import store_schemas

    return store_schemas()


@contextmanager
def snapshot(url: str, rows: dict[str, Rows]) -> Iterator:
    """An in-memory DuckDB connection holding `rows` of a PostgreSQL store, read as one
    consistent state. A database without termgate's schema is initialised first when this
    role may create tables (as a new store file is); a newer schema is refused."""
    from .copy import fetch_pg, in_memory

    for attempt in (1, 2):
        with connect_pg(url) as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            cur.execute("SELECT to_regclass('schema_migrations') IS NOT NULL")
            if cur.fetchone()[0]:
                cur.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
                current = cur.fetchone()[0]
            else:
                current = None
            if current == PG_SCHEMA_VERSION or attempt == 2:
                fetched = {}
                for table, want in rows.items():
                    schema = schemas()[table]
                    if want.columns is not None:
                        schema = pa.schema([schema.field(c) for c in want.columns])
                    fetched |= fetch_pg(cur, {table: schema}, want.where, list(want.params))
                break
        migrate_pg(url)  # initialise, upgrade, or refuse a newer schema with the version to install
    con = in_memory(fetched)
    try:
        yield con
    finally:
        con.close()


def table_kind_problems_pg(url: str) -> list[str]:
    """A table the gate reads that is not a plain table in PostgreSQL (a view could show
    verify and the gate different rows), worded as for a store file."""
    from .records import table_kind_problems

    with connect_pg(url) as conn:
        return table_kind_problems(dict(conn.execute("SELECT table_name, table_type FROM information_schema.tables "
                                                     "WHERE table_schema = 'public'").fetchall()))


GOLDEN_LINES_PG = """SELECT t.n, t.line FROM golden_files g, string_to_table(g.content, chr(10)) WITH ORDINALITY AS t(line, n)
    WHERE g.golden_hash = %s AND (strpos(t.line, %s) > 0 OR strpos(t.line, chr(92)) > 0) ORDER BY t.n"""


def golden_lines_pg(url: str, golden_hash: str, needle: str) -> list[tuple[int, str]]:
    """store.runs.golden_entry's candidate lines (runs.GOLDEN_LINES), split and filtered on
    the server: the one read here that is not a snapshot of whole rows, because the row is
    one golden file of up to tens of megabytes and the reader wants one line of it."""
    with connect_pg(url) as conn, conn.cursor() as cur:
        cur.execute(GOLDEN_LINES_PG, [golden_hash, needle])
        return cur.fetchall()
