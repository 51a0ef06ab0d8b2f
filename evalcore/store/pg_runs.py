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

from ..errors import EvalcoreError, UnknownRunError, UsageError
from .copy import TABLES
from .postgres import connect_pg, migrate_pg, shown
from .records import GENESIS, record_hash

__all__ = ["save_run_pg", "get_run_pg", "users_rows_pg", "append_audit_pg", "get_user_pg", "list_users_pg",
           "write_account_pg", "signin_failures_pg", "record_signin_failure_pg", "clear_signin_failures_pg",
           "flagged_items_pg"]

MAX_TRIES = 20


def _denied(url: str, what: str, exc: BaseException) -> UsageError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return UsageError(f"--db {shown(url)}: this database role may not {what} ({first}); use a role that may "
                      "(see `evalcore store roles` and docs/deploy.md)")


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


def _pg_type(arrow_type) -> str:
    """The PostgreSQL type of a store column's Arrow type (binary COPY needs them named)."""
    import pyarrow as pa

    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type):
        return _pg_type(arrow_type.value_type) + "[]"
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return "text"
    if pa.types.is_boolean(arrow_type):
        return "bool"
    if pa.types.is_int64(arrow_type):
        return "int8"
    if pa.types.is_integer(arrow_type):
        return "int4"
    if pa.types.is_float32(arrow_type):
        return "float4"
    if pa.types.is_floating(arrow_type):
        return "float8"
    raise EvalcoreError(f"no PostgreSQL type for the store column type {arrow_type}")


def save_run_pg(url: str, run, before_commit=None, extra_rows=None, usage=None) -> None:
    migrate_pg(url)  # first use initialises an empty database when this role may create tables
    tables, header = _staged(run, extra_rows, usage)
    payload = json.dumps(header["payload"], sort_keys=True)

    def work(cur):
        for table, rows in tables.items():
            columns = ", ".join(rows.column_names)
            if table == "golden_files":  # once per golden revision: another run may have stored it
                cur.executemany(f"INSERT INTO golden_files ({columns}) VALUES (%s, %s, %s, %s) "
                                "ON CONFLICT (golden_hash) DO NOTHING", [list(r.values()) for r in rows.to_pylist()])
                continue
            with cur.copy(f"COPY {table} ({columns}) FROM STDIN (FORMAT BINARY)") as copy:
                copy.set_types([_pg_type(field.type) for field in rows.schema])
                for row in zip(*(column.to_pylist() for column in rows.columns)):  # no dict per row
                    copy.write_row(row)
        cur.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1")
        head = cur.fetchone()
        seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS)
        stored = dict(header, seq=seq, prev_hash=prev)
        cur.execute("SELECT evalcore_append_run_header(%s, %s, %s, %s, %s, %s, %s, %s)",
                    [seq, prev, header["created_at"], header["actor"], header["run_id"], header["content_hash"],
                     payload, record_hash(stored, prev)])
        if before_commit is not None:
            before_commit()
    _retrying(url, work, "store runs")


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


# ---------------------------------------------------------------- accounts, sign-ins, decisions


def _retrying(url: str, work, what: str):
    """work(cur) in one transaction, tried again when another writer moved the chain's head
    (SQLSTATE 40001 from an append function, or two first appends meeting on `seq`)."""
    import psycopg

    for attempt in range(MAX_TRIES):
        try:
            with connect_pg(url) as conn, conn.transaction(), conn.cursor() as cur:
                return work(cur)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise _denied(url, what, exc) from None
        except (psycopg.errors.SerializationFailure, psycopg.errors.UniqueViolation) as exc:
            if isinstance(exc, psycopg.errors.UniqueViolation) and "audit_log" not in str(exc):
                raise EvalcoreError(f"--db {shown(url)}: {' '.join(str(exc).split())}") from None
            time.sleep(min(0.02 * 2 ** attempt, 0.5))
    raise EvalcoreError(f"--db {shown(url)}: the audit chain kept moving under {MAX_TRIES} tries; nothing was stored")


def _append(cur, record: dict) -> dict:
    """Link one record onto the head inside the caller's transaction: a decision through
    evalcore_append_decision (the dashboard role's only door), anything else directly (the
    owner's: accounts)."""
    cur.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1")
    head = cur.fetchone()
    seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS)
    stored = dict(record, seq=seq, prev_hash=prev)
    stored["record_hash"] = record_hash(stored, prev)
    payload = json.dumps(stored.get("payload"), sort_keys=True)
    if record["kind"] == "decision":
        cur.execute("SELECT evalcore_append_decision(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [seq, prev, stored["created_at"], stored["actor"], stored["run_id"], stored["content_hash"],
                     payload, stored["record_hash"], stored["decision"], stored["comment"]])
        return stored
    cur.execute("SELECT seq FROM audit_head WHERE id = 1 FOR UPDATE")
    locked = cur.fetchone()
    if (locked[0] if locked else 0) != seq - 1:
        import psycopg
        raise psycopg.errors.SerializationFailure("the audit chain moved")
    cur.execute("INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, "
                "payload, prev_hash, record_hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [seq, stored["created_at"], stored["kind"], stored["actor"], stored.get("run_id"),
                 stored.get("content_hash"), stored.get("decision"), stored.get("comment"), payload, prev,
                 stored["record_hash"]])
    cur.execute("INSERT INTO audit_head VALUES (1, %s, %s) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, "
                "record_hash = excluded.record_hash", [seq, stored["record_hash"]])
    return stored


def append_audit_pg(url: str, record: dict) -> dict:
    return _retrying(url, lambda cur: _append(cur, record), f"record a {record.get('kind', 'chain')} record")


def _user(cur, name: str) -> dict | None:
    from .records import USER_COLUMNS

    cur.execute(f"SELECT {', '.join(USER_COLUMNS)} FROM users WHERE name = %s", [name])
    row = cur.fetchone()
    return dict(zip(USER_COLUMNS, row)) if row else None


def get_user_pg(url: str, name: str) -> dict | None:
    with connect_pg(url) as conn, conn.cursor() as cur:
        return _user(cur, name)


def list_users_pg(url: str) -> list[dict]:
    with connect_pg(url) as conn, conn.cursor() as cur:
        cur.execute("SELECT name, role, domains, aliases, disabled, created_at FROM users ORDER BY name")
        return [dict(zip([d.name for d in cur.description], r)) for r in cur.fetchall()]


def write_account_pg(url: str, name: str, changes: dict, record: dict, *, new: bool = False) -> dict:
    from .records import USER_COLUMNS, account_state

    def work(cur):
        if new:
            columns = [c for c in changes if c in USER_COLUMNS]  # constant names, values bound
            cur.execute(f"INSERT INTO users ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})",
                        [changes[c] for c in columns])
        else:
            for column, value in changes.items():
                if column not in USER_COLUMNS:
                    raise EvalcoreError(f"unknown account column {column!r}")
                cur.execute(f"UPDATE users SET {column} = %s WHERE name = %s", [value, name])
        row = _user(cur, name)
        return _append(cur, dict(record, payload=dict(record.get("payload") or {}, account=account_state(row))))
    return _retrying(url, work, "change accounts (accounts stay with the store's owner)")


def signin_failures_pg(url: str, name: str) -> tuple[int, float]:
    with connect_pg(url) as conn:
        row = conn.execute("SELECT failures, last_at FROM signin_failures WHERE name = %s", [name]).fetchone()
    return (row[0], row[1]) if row else (0, 0.0)


def record_signin_failure_pg(url: str, name: str) -> int:
    import psycopg

    try:
        return _count_failure(url, name)
    except psycopg.errors.InsufficientPrivilege as exc:
        raise _denied(url, "count failed sign-ins (sign off through the dashboard role)", exc) from None


def _count_failure(url: str, name: str) -> int:
    with connect_pg(url) as conn:
        return conn.execute("INSERT INTO signin_failures VALUES (%s, 1, %s) ON CONFLICT (name) DO UPDATE SET "
                            "failures = signin_failures.failures + 1, last_at = excluded.last_at RETURNING failures",
                            [name, time.time()]).fetchone()[0]


def clear_signin_failures_pg(url: str, name: str) -> None:
    import psycopg

    try:
        with connect_pg(url) as conn:
            conn.execute("DELETE FROM signin_failures WHERE name = %s", [name])
    except psycopg.errors.InsufficientPrivilege as exc:
        raise _denied(url, "record sign-ins (sign off through the dashboard role)", exc) from None


def flagged_items_pg(url: str, run_ids: list[str]):
    """The flagged items by the one definition (store.views.flagged_items_on), over the
    runs' rows and their baselines' fetched from PostgreSQL into an in-memory DuckDB."""
    from .copy import fetch_pg, in_memory, store_schemas
    from .views import flagged_items_on

    schemas = store_schemas()
    with connect_pg(url) as conn, conn.transaction(), conn.cursor() as cur:
        cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        cur.execute("SELECT baseline_id FROM runs WHERE run_id = ANY(%s) AND baseline_id IS NOT NULL", [run_ids])
        wanted = list(run_ids) + [r[0] for r in cur.fetchall()]
        rows = fetch_pg(cur, {t: schemas[t] for t in ("runs", "query_results", "term_rows")},
                        "run_id = ANY(%s)", [wanted])
    con = in_memory(rows)
    try:
        return flagged_items_on(con, run_ids)
    finally:
        con.close()
