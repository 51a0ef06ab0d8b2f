"""The PostgreSQL team store's writes: a run (with its header in the audit chain),
accounts, decisions, sign-in counts, and unchained rows (caches, prompt evaluations), each
in one transaction retried when another writer moved the chain (reads: store.reading).

A run's rows are built by the same code as for a DuckDB file (store.runs.stage_run) into a
private in-memory DuckDB store, so they are exactly the rows a file would hold; its header
is computed there by store.records.header_record (the same digests `audit verify` later
recomputes from PostgreSQL, store.chain) while the rows are copied into PostgreSQL by COPY
(store.transfer); then the header is appended through `termgate_append_run_header`
(store.postgres), all in one transaction. Every record is hash version 2 (store.records.linked):
the server recomputes its hash and refuses one that does not match. A head that moved meanwhile (another writer)
makes the function refuse with SQLSTATE 40001, and a first append racing another hits the
key on `seq`: the whole transaction is tried again, so the chain stays one linear chain.
"""

from __future__ import annotations

import json
import time
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..errors import TermgateError, UsageError
from .postgres import connect_pg, migrate_pg, shown
from .records import GENESIS, linked
from .transfer import copy_in

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["save_run_pg", "append_audit_pg", "write_account_pg", "claim_signin_pg",
           "clear_signin_failures_pg", "insert_rows", "retrying"]

MAX_TRIES = 20


def _denied(url: str, what: str, exc: BaseException) -> UsageError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return UsageError(f"--db {shown(url)}: this database role may not {what} ({first}); use a role that may "
                      "(see `termgate store roles` and docs/deploy.md)")


@contextmanager
def _staged(run, extra_rows, usage):
    """(the rows to store per table as Arrow, a Future of the header record) built in a
    private in-memory DuckDB store by the DuckDB store's own code. The header's digests are
    computed on a second cursor while the caller sends the rows (it needs them only at the
    end); the store is dropped once both are done."""
    from concurrent.futures import ThreadPoolExecutor

    from .connection import migrate
    from .runs import stage_run

    con = run.queries.con.cursor()
    try:
        con.execute("ATTACH ':memory:' AS store")
        try:
            con.execute("USE store")
            migrate(con)
            con.execute("USE memory")
            stage_run(con, run, extra_rows, usage)
            tables = {t: con.sql(f"SELECT * FROM store.{t}").to_arrow_table() for t in _RUN_TABLES}
            with ThreadPoolExecutor(1) as pool:
                header = pool.submit(_header, run.queries.con, run.evaluation_id)
                yield {t: rows for t, rows in tables.items() if rows.num_rows}, header
        finally:
            con.execute("USE memory")
            con.execute("DETACH store")
    finally:
        con.close()


def _header(parent, run_id: str) -> dict:
    """The run's header record from the staged store (on a cursor of its own)."""
    from .records import header_record

    con = parent.cursor()
    try:
        return header_record(con, run_id, "store.")
    finally:
        con.close()


_RUN_TABLES = ("runs", "query_results", "term_rows", "retrieval_results", "harness_outputs", "judge_log", "golden_files")
"""What stage_run writes (the chain, the accounts and the caches are never staged)."""


def save_run_pg(url: str, run, before_commit=None, extra_rows=None, usage=None, extends=None) -> None:
    migrate_pg(url)  # first use initialises an empty database when this role may create tables
    with _staged(run, extra_rows, usage) as (tables, header):
        retrying(url, lambda cur: _store_staged(cur, tables, header.result, before_commit, extends), "store runs")


def _head(cur, lock: bool = False) -> tuple[int, str]:
    """(seq, hash) of the chain's head as this transaction sees it; `lock`: held until it
    ends (the owner's writes; the append functions lock it themselves)."""
    cur.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1" + (" FOR UPDATE" if lock else ""))
    head = cur.fetchone()
    return (head[0], head[1]) if head else (0, GENESIS)


def _store_staged(cur, tables: dict, header, before_commit, extends=None) -> None:
    """The staged rows, then the run's header onto the chain (header() waits for its
    digests); extends(head) sees the head it links to (store.backends.save_run)."""
    for table, rows in tables.items():
        if table == "golden_files":
            _store_golden(cur, rows)
        else:
            copy_in(cur, table, rows)
    record = header()
    head = _head(cur)
    if extends is not None:
        extends(head)
    stored = linked(record, head[0] + 1, head[1])
    cur.execute("SELECT termgate_append_run_header(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [*_door_args(stored), stored["run_id"], stored["content_hash"], _payload(stored), stored["record_hash"],
                 stored["canonical"]])
    if before_commit is not None:
        before_commit()


def _store_golden(cur, rows) -> None:
    """The golden file's row, once per golden revision: one another run stored already is
    not sent again, and one another run stores meanwhile makes the COPY meet the key, which
    rolls back only its savepoint (as ON CONFLICT DO NOTHING would). The text is long (50 MB
    for 100k queries): compressed with lz4 where the server has it, 3× faster than pglz."""
    import psycopg
    import pyarrow as pa
    import pyarrow.compute as pc

    cur.execute("SELECT golden_hash FROM golden_files WHERE golden_hash = ANY(%s)", [rows["golden_hash"].to_pylist()])
    stored = pa.array([r[0] for r in cur.fetchall()], pa.string())
    new = rows.filter(pc.invert(pc.is_in(rows["golden_hash"], value_set=stored)))
    if not new.num_rows:
        return
    cur.execute("SELECT set_config('default_toast_compression', 'lz4', true) FROM pg_settings "
                "WHERE name = 'default_toast_compression' AND 'lz4' = ANY(enumvals)")
    try:
        with cur.connection.transaction():
            copy_in(cur, "golden_files", new)
    except psycopg.errors.UniqueViolation:
        pass  # another run stored this golden revision meanwhile: its row is the same


def retrying(url: str, work, what: str):
    """work(cur) in one transaction, tried again when another writer moved the chain's head
    (SQLSTATE 40001 from an append function, or two first appends meeting on `seq`)."""
    import psycopg

    for attempt in range(MAX_TRIES):
        try:
            with connect_pg(url) as conn, conn.transaction(), conn.cursor() as cur:
                return work(cur)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise _denied(url, what, exc) from None
        except (psycopg.errors.CheckViolation, psycopg.errors.RaiseException) as exc:
            # the server's check of a record (store.postgres, schema 15), or a door's refusal
            # (an account that may not decide, a run header twice): one line, not a traceback
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise TermgateError(f"--db {shown(url)}: the store refused it: {first}; nothing was stored") from None
        except (psycopg.errors.SerializationFailure, psycopg.errors.UniqueViolation) as exc:
            if isinstance(exc, psycopg.errors.UniqueViolation) and "audit_log" not in str(exc):
                raise TermgateError(f"--db {shown(url)}: {' '.join(str(exc).split())}") from None
            time.sleep(min(0.02 * 2 ** attempt, 0.5))
    raise TermgateError(f"--db {shown(url)}: the audit chain kept moving under {MAX_TRIES} tries; nothing was stored")


def _linked(cur, record: dict) -> dict:
    """The record as it goes onto the chain's head now: its seq, prev_hash, canonical text
    and record_hash (hash version 2, which the server checks)."""
    cur.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1")
    head = cur.fetchone()
    seq, prev = (head[0] + 1, head[1]) if head else (1, GENESIS)
    return linked(record, seq, prev)


def _payload(stored: dict) -> str:
    return json.dumps(stored.get("payload"), sort_keys=True)  # the text canonical_text states


def _door_args(stored: dict) -> list:
    return [stored["seq"], stored["prev_hash"], stored["created_at"], stored["actor"]]


def append_record(cur, record: dict) -> dict:
    """Link one record onto the head inside the caller's transaction: a decision through
    termgate_append_decision, a verdict on a term through termgate_append_verdict (the
    dashboard role's doors), anything else directly (the owner's: accounts), where the
    table's trigger checks the record as the doors do."""
    stored = _linked(cur, record)
    seq, prev = stored["seq"], stored["prev_hash"]
    payload = _payload(stored)
    if record["kind"] == "decision":
        cur.execute("SELECT termgate_append_decision(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [*_door_args(stored), stored["run_id"], stored["content_hash"], payload, stored["record_hash"],
                     stored["canonical"], stored["decision"], stored["comment"]])
        return stored
    if record["kind"] == "verdict":
        cur.execute("SELECT termgate_append_verdict(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [*_door_args(stored), stored["run_id"], stored["content_hash"], payload, stored["record_hash"],
                     stored["canonical"], stored["comment"]])
        return stored
    cur.execute("SELECT seq FROM audit_head WHERE id = 1 FOR UPDATE")
    locked = cur.fetchone()
    if (locked[0] if locked else 0) != seq - 1:
        import psycopg
        raise psycopg.errors.SerializationFailure("the audit chain moved")
    cur.execute("INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, "
                "payload, prev_hash, record_hash, hash_version, canonical) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [seq, stored["created_at"], stored["kind"], stored["actor"], stored.get("run_id"),
                 stored.get("content_hash"), stored.get("decision"), stored.get("comment"), payload, prev,
                 stored["record_hash"], stored["hash_version"], stored["canonical"]])
    cur.execute("INSERT INTO audit_head VALUES (1, %s, %s) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, "
                "record_hash = excluded.record_hash", [seq, stored["record_hash"]])
    return stored


def append_audit_pg(url: str, record: dict) -> dict:
    return retrying(url, lambda cur: append_record(cur, record), f"record a {record.get('kind', 'chain')} record")


def _user(cur, name: str) -> dict | None:
    from .records import USER_COLUMNS

    cur.execute(f"SELECT {', '.join(USER_COLUMNS)} FROM users WHERE name = %s", [name])
    row = cur.fetchone()
    return dict(zip(USER_COLUMNS, row)) if row else None


SSO_BIND_KIND = "user_sso_bind"
"""termgate.governance.sso.BIND_KIND: an account change the dashboard role makes through termgate_bind_sso."""


def _bind_sso(cur, name: str, changes: dict, record: dict) -> dict:
    """A first single sign-on's alias, through termgate_bind_sso (the dashboard role's door;
    the owner goes the same way): the function checks what the change may be."""
    from ..identity import oidc_issuer_prefix
    from .records import account_state

    row = _user(cur, name)
    if row is None or set(changes) != {"aliases"}:
        raise TermgateError(f"a first single sign-on changes only an existing account's aliases, not {sorted(changes)}")
    alias = record["payload"]["alias"]
    stored = _linked(cur, dict(record, payload=dict(record["payload"], account=account_state(dict(row, **changes)))))
    cur.execute("SELECT termgate_bind_sso(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                [*_door_args(stored), _payload(stored), stored["record_hash"], stored["canonical"], alias,
                 oidc_issuer_prefix(record["payload"]["sso"]["iss"]), list(changes["aliases"])])
    return stored


def write_account_pg(url: str, name: str, changes: dict, record: dict, *, new: bool = False,
                     extends=None) -> dict:
    from .records import USER_COLUMNS, account_state

    def work(cur):
        if extends is not None:
            extends(_head(cur, lock=True))
        if record["kind"] == SSO_BIND_KIND and not new:
            return _bind_sso(cur, name, changes, record)
        if new:
            columns = [c for c in changes if c in USER_COLUMNS]  # constant names, values bound
            cur.execute(f"INSERT INTO users ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})",
                        [changes[c] for c in columns])
        else:
            for column, value in changes.items():
                if column not in USER_COLUMNS:
                    raise TermgateError(f"unknown account column {column!r}")
                cur.execute(f"UPDATE users SET {column} = %s WHERE name = %s", [value, name])
        row = _user(cur, name)
        return append_record(cur, dict(record, payload=dict(record.get("payload") or {}, account=account_state(row))))
    return retrying(url, work, "change accounts (accounts stay with the store's owner)")


def claim_signin_pg(url: str, name: str, delay_of) -> float:
    """store.audit.claim_signin on PostgreSQL: the account's row (made first when missing) is
    locked FOR UPDATE, so parallel attempts (any process, any host) take turns; the time is
    the server's, one clock for every client."""
    import psycopg

    from .records import signin_turn

    try:
        with connect_pg(url) as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute("INSERT INTO signin_failures VALUES (%s, 0, 0) ON CONFLICT (name) DO NOTHING", [name])
            cur.execute("SELECT failures, last_at, extract(epoch FROM clock_timestamp())::double precision "
                        "FROM signin_failures WHERE name = %s FOR UPDATE", [name])
            failures, last_at, now = cur.fetchone()
            wait, row = signin_turn(failures, last_at, now, delay_of)
            if row is not None:
                cur.execute("UPDATE signin_failures SET failures = %s, last_at = %s WHERE name = %s", [*row, name])
            return wait
    except psycopg.errors.InsufficientPrivilege as exc:
        raise _denied(url, "count sign-in attempts (sign in through the dashboard role)", exc) from None


def clear_signin_failures_pg(url: str, name: str) -> None:
    import psycopg

    try:
        with connect_pg(url) as conn:
            conn.execute("DELETE FROM signin_failures WHERE name = %s", [name])
    except psycopg.errors.InsufficientPrivilege as exc:
        raise _denied(url, "record sign-ins (sign off through the dashboard role)", exc) from None


def insert_rows(url: str, table: str, rows: pa.Table, key: tuple[str, ...] | None = None) -> None:
    """Add rows in one transaction, by binary COPY; with `key`, rows whose key is stored
    already are kept as they are (another process cached the same entry): the rows go
    into a temporary copy of the table first, then across with ON CONFLICT DO NOTHING."""
    if rows.num_rows == 0:
        return
    columns = ", ".join(f'"{name}"' for name in rows.column_names)

    def work(cur):
        if key is None:
            return copy_in(cur, table, rows)
        # with the table's defaults: a cache's writer is the server's (session_user)
        cur.execute(f"CREATE TEMP TABLE _termgate_new (LIKE {table} INCLUDING DEFAULTS) ON COMMIT DROP")
        copy_in(cur, "_termgate_new", rows)
        cur.execute(f"INSERT INTO {table} ({columns}) SELECT {columns} FROM _termgate_new "
                    f"ON CONFLICT ({', '.join(key)}) DO NOTHING")
    migrate_pg(url)
    retrying(url, work, f"add rows to {table}")
