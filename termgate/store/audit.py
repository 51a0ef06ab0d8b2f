"""Accounts and the append-only, hash-chained audit log (sign-off decisions, account changes)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import duckdb

from .connection import connect as connect_file, exists
from .reading import connect
from .pg_rows import Rows, every, of_runs
from .records import (AUDIT_COLUMNS, GENESIS, SSO_PASSWORD_HASH, USER_COLUMNS, account_state, append_on, head_on,
                      record_hash,
                      signin_turn, table_kind_problems)

__all__ = ["AUDIT_COLUMNS", "GENESIS", "record_hash", "append_on", "append_audit", "write_account", "account_state",
           "get_user", "list_users", "users_rows", "audit_records", "audit_head", "decisions_for", "signin_failures",
           "claim_signin", "clear_signin_failures", "in_transaction", "records_of"]



def in_transaction(db_path: str | Path, work):
    """work(con) in one write transaction; a conflict with a concurrent writer in this
    process is retried (for up to 30 s), so nothing is lost or duplicated."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with connect_file(db_path, write=True) as con:
                con.execute("BEGIN TRANSACTION")
                try:
                    result = work(con)
                except BaseException:
                    con.execute("ROLLBACK")
                    raise
                con.execute("COMMIT")
                return result
        except (duckdb.TransactionException, duckdb.ConstraintException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def append_audit(db_path: str | Path, record: dict) -> dict:
    """Append one record in its own transaction; returns the stored record."""
    return in_transaction(db_path, lambda con: append_on(con, record))


def _user(con, name: str) -> dict | None:
    cur = con.execute(f"SELECT {', '.join(USER_COLUMNS)} FROM users WHERE name = ?", [name])
    rows = cur.fetchall()
    return dict(zip(USER_COLUMNS, rows[0])) if rows else None


def write_account(db_path: str | Path, name: str, changes: dict, record: dict, *, new: bool = False,
                  extends=None) -> dict:
    """Insert (new) or update an account and append its chain record (kind, actor in
    `record`; payload gains the account's resulting state) in one transaction, which
    extends(head) (store.backends.write_account) may stop before anything is written."""
    def work(con):
        if extends is not None:
            extends(head_on(con))
        if new:
            con.execute(f"INSERT INTO users ({', '.join(changes)}) VALUES ({', '.join('?' * len(changes))})",
                        list(changes.values()))
        else:
            for column, value in changes.items():
                con.execute(f"UPDATE users SET {column} = ? WHERE name = ?", [value, name])
        row = _user(con, name)
        return append_on(con, dict(record, payload=dict(record.get("payload") or {}, account=account_state(row))))
    return in_transaction(db_path, work)


def get_user(db_path: str | Path, name: str) -> dict | None:
    if not exists(db_path):
        return None
    with connect(db_path, rows={"users": Rows("name = %s", (name,))}) as con:
        return _user(con, name)


def users_rows(db_path: str | Path) -> list[dict]:
    """Every account with every column (password hash included), by name."""
    if not exists(db_path):
        return []
    with connect(db_path, rows=every("users")) as con:
        return users_rows_on(con)


def users_rows_on(con) -> list[dict]:
    cur = con.execute(f"SELECT {', '.join(USER_COLUMNS)} FROM users ORDER BY name")
    return [dict(zip(USER_COLUMNS, r)) for r in cur.fetchall()]


def list_users(db_path: str | Path) -> list[dict]:
    """Every account without its password hash; `sso` says it signs in only through the identity provider."""
    with connect(db_path, rows={"users": Rows(columns=("name", "role", "domains", "aliases", "disabled",
                                                       "created_at", "password_hash"))}) as con:
        cur = con.execute("SELECT name, role, domains, aliases, disabled, created_at, password_hash = ? AS sso "
                          "FROM users ORDER BY name", [SSO_PASSWORD_HASH])
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def signin_failures(db_path: str | Path, name: str) -> tuple[int, float]:
    """(failed sign-ins since the last success, time.time() of the last one) for a name."""
    if not exists(db_path):
        return 0, 0.0
    with connect(db_path, rows={"signin_failures": Rows("name = %s", (name,))}) as con:
        rows = con.execute("SELECT failures, last_at FROM signin_failures WHERE name = ?", [name]).fetchall()
    return (rows[0][0], rows[0][1]) if rows else (0, 0.0)


def claim_signin(db_path: str | Path, name: str, delay_of) -> float:
    """A sign-in attempt's turn (store.records.signin_turn), read and counted in one write
    transaction: 0.0 when it may check its password (counted as a failure until cleared),
    else the seconds to wait (nothing counted). Two transactions that both find the turn
    free both write the row: DuckDB lets one commit and the other conflicts, is retried and
    finds the turn taken; another process waits for the file's write lock."""
    def work(con):
        rows = con.execute("SELECT failures, last_at FROM signin_failures WHERE name = ?", [name]).fetchall()
        wait, row = signin_turn(*(rows[0] if rows else (0, 0.0)), time.time(), delay_of)
        if row is not None:
            con.execute("INSERT INTO signin_failures VALUES (?, ?, ?) ON CONFLICT (name) DO UPDATE SET "
                        "failures = excluded.failures, last_at = excluded.last_at", [name, *row])
        return wait
    return in_transaction(db_path, work)


def clear_signin_failures(db_path: str | Path, name: str) -> None:
    in_transaction(db_path, lambda con: con.execute("DELETE FROM signin_failures WHERE name = ?", [name]))


def records_of(rows: list[tuple]) -> list[dict]:
    out = []
    for row in rows:
        rec = dict(zip(AUDIT_COLUMNS, row))
        rec["payload"] = json.loads(rec["payload"]) if rec["payload"] else {}
        out.append(rec)
    return out


def audit_records(db_path: str | Path, run_id: str | None = None) -> list[dict]:
    """Audit records in chain order (all, or those of one run)."""
    if not exists(db_path):
        return []
    with connect(db_path, rows=every("audit_log") if run_id is None else of_runs([run_id], "audit_log")) as con:
        return audit_records_on(con, run_id)


def audit_records_on(con, run_id: str | None = None) -> list[dict]:
    sql = f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit_log"
    params: list = []
    if run_id is not None:
        sql += " WHERE run_id = ?"
        params.append(run_id)
    return records_of(con.execute(sql + " ORDER BY seq", params).fetchall())


def audit_head(db_path: str | Path) -> tuple[int, str] | None:
    """(seq, record_hash) of the last record appended, as recorded at append time."""
    if not exists(db_path):
        return None
    with connect(db_path, rows=every("audit_head")) as con:
        return audit_head_on(con)


def audit_head_on(con) -> tuple[int, str] | None:
    rows = con.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1").fetchall()
    return (rows[0][0], rows[0][1]) if rows else None




def integrity_problems_on(con) -> list[str]:
    kinds = dict(con.execute("SELECT table_name, table_type FROM information_schema.tables "
                             "WHERE table_schema = 'main'").fetchall())
    out = table_kind_problems(kinds)
    if out:
        return out
    for table, key in (("users", "name"), ("runs", "run_id"), ("audit_log", "seq")):
        twice = con.execute(f"SELECT {key} FROM {table} GROUP BY {key} HAVING count(*) > 1 LIMIT 1").fetchall()
        if twice:
            out.append(f"{table}: {key} {twice[0][0]!r} is stored twice")
    return out


def decisions_for(db_path: str | Path, content_hash: str) -> list[dict]:
    """Sign-off decisions bound to this content hash, oldest first."""
    if not exists(db_path):
        return []
    with connect(db_path, rows={"audit_log": Rows("content_hash = %s", (content_hash,))}) as con:
        rows = con.execute(f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit_log WHERE kind = 'decision' "
                           "AND content_hash = ? ORDER BY seq", [content_hash]).fetchall()
    return records_of(rows)


def put_sealed_key(db_path: str | Path, fingerprint: str, holder: str, sealed: str) -> None:
    """Keep an account's sealed signing key (store.backends.put_sealed_key)."""
    from ..clock import utc_now

    in_transaction(db_path, lambda con: con.execute("INSERT INTO sealed_keys VALUES (?, ?, ?, ?)",
                                                    [fingerprint, holder, sealed, utc_now()]))


def sealed_keys(db_path: str | Path) -> dict[str, str]:
    """fingerprint -> sealed key text, every one the store keeps."""
    if not exists(db_path):
        return {}
    with connect(db_path, rows=every("sealed_keys")) as con:
        return dict(con.execute("SELECT fingerprint, sealed FROM sealed_keys").fetchall())
