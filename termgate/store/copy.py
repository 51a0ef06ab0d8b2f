"""`termgate store copy`: move a store between backends (a DuckDB file, a PostgreSQL
database) with its runs, accounts, caches and audit chain, ids and hashes unchanged.

The target must be empty (a new file, or a database with termgate's schema and no rows, or
none); everything is written in one transaction, so a failure leaves it as it was. Rows
travel as Arrow tables typed exactly as the DuckDB store types them, so the chain's digests
(DuckDB's JSON of each row, store.digest) come out byte for byte the same on the copy:
`audit verify` passes on it.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from ..errors import UsageError
from .postgres import connect_pg, is_postgres, migrate_pg, shown
from .transfer import copy_in, copy_out

__all__ = ["TABLES", "copy_store", "fetch_pg", "in_memory", "pg_snapshot", "store_schemas"]

TABLES = ("runs", "query_results", "term_rows", "retrieval_results", "harness_outputs", "judge_log", "golden_files",
          "users", "audit_log", "audit_head", "signin_failures", "llm_cache", "embedding_cache", "lexicon_cache",
          "prompt_eval_runs", "prompt_eval_results", "sealed_keys")
"""Every table with data (schema_migrations is each store's own)."""


def store_schemas() -> dict[str, pa.Schema]:
    """Each table's Arrow schema as the DuckDB store types it (an in-memory store)."""
    import duckdb

    from .connection import migrate

    con = duckdb.connect()
    try:
        migrate(con)
        return {t: con.sql(f"SELECT * FROM {t} LIMIT 0").to_arrow_table().schema for t in TABLES}
    finally:
        con.close()


def _where(db: str) -> str:
    return shown(db) if is_postgres(db) else db


def fetch_pg(cur, schemas: dict[str, pa.Schema], where: str = "TRUE", params: list | None = None
             ) -> dict[str, pa.Table]:
    """The rows of these tables on a PostgreSQL cursor (those matching one constant
    condition), as Arrow typed like the DuckDB store."""
    return {table: copy_out(cur, table, schema, where, params) for table, schema in schemas.items()}


def in_memory(tables: dict[str, pa.Table]):
    """An in-memory DuckDB holding these tables: the store's DuckDB SQL then runs on rows
    fetched from PostgreSQL as it runs on a store file."""
    import duckdb

    con = duckdb.connect()
    for table, data in tables.items():
        con.register("_termgate_rows", data)
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM _termgate_rows")
        con.unregister("_termgate_rows")
    return con


def pg_snapshot(url: str, tables: tuple[str, ...]):
    """(an in-memory DuckDB holding these tables of a PostgreSQL store as one snapshot,
    integrity problems): the chain's checks then run on it exactly as on a store file."""
    from .records import CHAINED_TABLES

    with connect_pg(url) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")  # one consistent state
        cur.execute("SELECT table_name, table_type FROM information_schema.tables WHERE table_schema = 'public'")
        kinds = dict(cur.fetchall())
        problems = [f"{t} is {'missing' if t not in kinds else 'a ' + kinds[t].lower()}, not termgate's table"
                    for t in CHAINED_TABLES if kinds.get(t) != "BASE TABLE"]
        if problems:
            return None, problems
        schemas = store_schemas()
        rows = fetch_pg(cur, {t: schemas[t] for t in tables})
    con = in_memory(rows)
    return con, []


def _read(db: str, schemas: dict[str, pa.Schema]) -> dict[str, pa.Table]:
    if is_postgres(db):
        from .postgres import PG_SCHEMA_VERSION, schema_version_pg

        version = schema_version_pg(db)[0]
        if version is None:
            raise UsageError(f"--from {_where(db)}: not a termgate store")
        if version < PG_SCHEMA_VERSION:  # it lacks tables or columns this termgate copies
            raise UsageError(f"--from {_where(db)}: the store's schema is version {version}, this termgate copies "
                             f"version {PG_SCHEMA_VERSION}: run `termgate store migrate` on it as its owner first; "
                             "nothing was written")
        with connect_pg(db) as conn, conn.cursor() as cur:
            return fetch_pg(cur, schemas)
    from .connection import connect

    if not Path(db).exists():
        raise UsageError(f"--from {db}: no store there")
    with connect(db) as con:
        return {t: con.sql(f"SELECT {', '.join(s.names)} FROM {t}").to_arrow_table().cast(s) for t, s in schemas.items()}


def _count(db: str) -> int:
    if is_postgres(db):
        with connect_pg(db) as conn:
            return sum(conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES)
    from .connection import connect
    with connect(db) as con:
        return sum(con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES)


def copy_store(source: str, target: str) -> dict[str, int]:
    """Copy every row of `source` into the empty store `target`, in one transaction;
    rows per table."""
    if str(source) == str(target):
        raise UsageError("--from and --to name the same store")
    schemas = store_schemas()
    tables = _read(str(source), schemas)
    target = str(target)
    if is_postgres(target):
        migrate_pg(target)
    else:
        from .connection import check_store_path, ensure_store
        check_store_path(target)
        ensure_store(target)
    if _count(target):
        raise UsageError(f"--to {_where(target)}: the store holds data already; copy only into an empty store "
                         "(nothing was written)")
    if is_postgres(target):
        _copy_into_pg(target, tables)
    else:
        from .connection import connect
        with connect(target, write=True) as con:
            con.execute("BEGIN TRANSACTION")
            try:
                for table, rows in tables.items():
                    con.register("_termgate_rows", rows)
                    con.execute(f"INSERT INTO {table} ({', '.join(rows.column_names)}) "
                                f"SELECT {', '.join(rows.column_names)} FROM _termgate_rows")
                    con.unregister("_termgate_rows")
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
    return {t: rows.num_rows for t, rows in tables.items()}


def _copy_into_pg(target: str, tables: dict[str, pa.Table]) -> None:
    """Every table's rows into the empty PostgreSQL store, in one transaction. The server
    checks each version-2 audit record as it checks every append (store.postgres): one it
    refuses (a record edited in the source file) is exit 2 and nothing is written."""
    import psycopg

    try:
        with connect_pg(target) as conn, conn.transaction(), conn.cursor() as cur:
            # the caches' writers as the source recorded them: honoured for the tables' owner only
            cur.execute("SELECT set_config('termgate.keep_writer', 'on', true)")
            # and its audit records as they are: version-1 records (appended before schema 15, with
            # no canonical text the server could check) are taken from the tables' owner only
            cur.execute("SELECT set_config('termgate.legacy_chain', 'on', true)")
            for table, rows in tables.items():
                copy_in(cur, table, rows)
    except psycopg.errors.CheckViolation as exc:
        first = str(exc).strip().splitlines()[0]
        raise UsageError(f"--to {_where(target)}: {first} (run `termgate audit verify` on the source); "
                         "nothing was written") from None
