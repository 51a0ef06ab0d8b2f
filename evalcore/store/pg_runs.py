"""Runs on the PostgreSQL team store: store one (with its header in the audit chain),
read one, read the accounts.

A run's rows are built by the same code as for a DuckDB file (store.runs.stage_run) into a
private in-memory DuckDB store, so they are exactly the rows a file would hold; its header
is computed there by store.records.header_record (the same digests `audit verify` later
recomputes from PostgreSQL, store.chain); then the rows are copied into PostgreSQL and the
header is appended through `evalcore_append_run_header` (store.postgres), all in one
transaction. A head that moved meanwhile (another writer) makes the function refuse with
SQLSTATE 40001, and a first append racing another hits the key on `seq`: the whole
transaction is tried again, so the chain stays one linear chain.
"""

from __future__ import annotations

import json
import time

from ..errors import EvalcoreError, UnknownRunError
from .copy import TABLES
from .postgres import connect_pg, migrate_pg, shown
from .records import GENESIS, record_hash

__all__ = ["save_run_pg", "get_run_pg", "users_rows_pg"]

MAX_TRIES = 20


def _staged(run, extra_rows, usage):
    """(the rows to store per table as Arrow, the header record) built in a private
    in-memory DuckDB store by the DuckDB store's own code."""
    from .connection import migrate
    from .records import header_record
    from .runs import stage_run

    con = run.queries.con.cursor()
    try:
        con.execute("ATTACH ':memory:' AS store")
        try:
            con.execute("USE store")
            migrate(con)
            con.execute("USE memory")
            stage_run(con, run, extra_rows, usage)
            header = header_record(con, run.evaluation_id, "store.")
            tables = {t: con.sql(f"SELECT * FROM store.{t}").to_arrow_table() for t in TABLES}
        finally:
            con.execute("USE memory")
            con.execute("DETACH store")
    finally:
        con.close()
    return {t: rows for t, rows in tables.items() if rows.num_rows and t in _RUN_TABLES}, header


_RUN_TABLES = ("runs", "query_results", "term_rows", "harness_outputs", "judge_log", "golden_files")
"""What stage_run writes (the chain, the accounts and the caches are never staged)."""


def save_run_pg(url: str, run, before_commit=None, extra_rows=None, usage=None) -> None:
    import psycopg

    migrate_pg(url)  # first use initialises an empty database when this role may create tables
    tables, header = _staged(run, extra_rows, usage)
    payload = json.dumps(header["payload"], sort_keys=True)
    for attempt in range(MAX_TRIES):
        try:
            with connect_pg(url) as conn, conn.transaction(), conn.cursor() as cur:
                for table, rows in tables.items():
                    columns = ", ".join(rows.column_names)
                    if table == "golden_files":  # once per golden revision: another run may have stored it
                        cur.executemany(f"INSERT INTO golden_files ({columns}) VALUES (%s, %s, %s, %s) "
                                        "ON CONFLICT (golden_hash) DO NOTHING",
                                        [list(r.values()) for r in rows.to_pylist()])
                        continue
                    with cur.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                        for row in rows.to_pylist():
                            copy.write_row(list(row.values()))
                cur.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1")
                head = cur.fetchone()
                seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS)
                stored = dict(header, seq=seq, prev_hash=prev)
                cur.execute("SELECT evalcore_append_run_header(%s, %s, %s, %s, %s, %s, %s, %s)",
                            [seq, prev, header["created_at"], header["actor"], header["run_id"],
                             header["content_hash"], payload, record_hash(stored, prev)])
                if before_commit is not None:
                    before_commit()
            return
        except (psycopg.errors.SerializationFailure, psycopg.errors.UniqueViolation) as exc:
            if isinstance(exc, psycopg.errors.UniqueViolation) and "audit_log" not in str(exc):
                raise EvalcoreError(f"--db {shown(url)}: {' '.join(str(exc).split())}") from None
            time.sleep(min(0.02 * 2 ** attempt, 0.5))  # another writer moved the head: read it again
    raise EvalcoreError(f"--db {shown(url)}: the audit chain kept moving under {MAX_TRIES} tries; nothing was stored")


def get_run_pg(url: str, run_id: str) -> dict:
    with connect_pg(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT * FROM runs WHERE run_id = %s", [run_id])
        row = cur.fetchone()
        if row is None:
            raise UnknownRunError(f"unknown run '{run_id}' in {shown(url)} (see `evalcore runs`)")
        return dict(zip([d.name for d in cur.description], row))


def users_rows_pg(url: str) -> list[dict]:
    from .records import USER_COLUMNS

    with connect_pg(url) as conn, conn.cursor() as cur:
        cur.execute(f"SELECT {', '.join(USER_COLUMNS)} FROM users ORDER BY name")
        return [dict(zip(USER_COLUMNS, r)) for r in cur.fetchall()]
