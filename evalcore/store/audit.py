"""Accounts and the append-only, hash-chained audit log (sign-off decisions, account changes)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import duckdb

from .connection import connect

__all__ = ["AUDIT_COLUMNS", "insert_user", "update_user", "get_user", "list_users", "append_audit",
           "audit_records", "decisions_for"]

AUDIT_COLUMNS = ("seq", "created_at", "kind", "actor", "run_id", "content_hash", "decision", "comment",
                 "payload", "prev_hash", "record_hash")


def insert_user(db_path: str | Path, row: dict) -> None:
    with connect(db_path, write=True) as con:
        con.execute("INSERT INTO users (name, role, domains, password_hash, disabled, created_at) "
                    "VALUES ($name, $role, $domains, $password_hash, false, $created_at)", row)


def update_user(db_path: str | Path, name: str, *, role: str | None = None, domains: list[str] | None = None,
                disabled: bool | None = None) -> None:
    with connect(db_path, write=True) as con:
        if role is not None:
            con.execute("UPDATE users SET role = ? WHERE name = ?", [role, name])
        if domains is not None:
            con.execute("UPDATE users SET domains = ? WHERE name = ?", [domains, name])
        if disabled is not None:
            con.execute("UPDATE users SET disabled = ? WHERE name = ?", [disabled, name])


def get_user(db_path: str | Path, name: str) -> dict | None:
    if not Path(str(db_path)).exists():
        return None
    with connect(db_path) as con:
        cur = con.execute("SELECT * FROM users WHERE name = ?", [name])
        rows = cur.fetchall()
        return dict(zip([d[0] for d in cur.description], rows[0])) if rows else None


def list_users(db_path: str | Path) -> list[dict]:
    with connect(db_path) as con:
        cur = con.execute("SELECT name, role, domains, disabled, created_at FROM users ORDER BY name")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]


def append_audit(db_path: str | Path, record: dict, chain_hash) -> dict:
    """Append one record after the current last one, in one transaction; `chain_hash(record,
    prev_hash)` computes its hash. Concurrent appenders retry on conflict, so nothing is
    lost or duplicated. Returns the stored record."""
    deadline = time.monotonic() + 30
    while True:
        try:
            with connect(db_path, write=True) as con:
                con.execute("BEGIN TRANSACTION")
                last = con.execute("SELECT seq, record_hash FROM audit_log ORDER BY seq DESC LIMIT 1").fetchall()
                seq, prev = (last[0][0] + 1, last[0][1]) if last else (1, "0" * 64)
                stored = dict(record, seq=seq, prev_hash=prev)
                stored["record_hash"] = chain_hash(stored, prev)
                con.execute(f"INSERT INTO audit_log ({', '.join(AUDIT_COLUMNS)}) VALUES "
                            f"({', '.join('$' + c for c in AUDIT_COLUMNS)})",
                            {c: (json.dumps(stored[c], sort_keys=True) if c == "payload" else stored[c])
                             for c in AUDIT_COLUMNS})
                con.execute("INSERT OR REPLACE INTO audit_head VALUES (1, ?, ?)", [seq, stored["record_hash"]])
                con.execute("COMMIT")
                return stored
        except (duckdb.TransactionException, duckdb.ConstraintException):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _records(rows: list[tuple]) -> list[dict]:
    out = []
    for row in rows:
        rec = dict(zip(AUDIT_COLUMNS, row))
        rec["payload"] = json.loads(rec["payload"]) if rec["payload"] else {}
        out.append(rec)
    return out


def audit_records(db_path: str | Path, run_id: str | None = None) -> list[dict]:
    """Audit records in chain order (all, or those of one run)."""
    if not Path(str(db_path)).exists():
        return []
    with connect(db_path) as con:
        sql = f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit_log"
        params: list = []
        if run_id is not None:
            sql += " WHERE run_id = ?"
            params.append(run_id)
        rows = con.execute(sql + " ORDER BY seq", params).fetchall()
    return _records(rows)


def audit_head(db_path: str | Path) -> tuple[int, str] | None:
    """(seq, record_hash) of the last record appended, as recorded at append time."""
    if not Path(str(db_path)).exists():
        return None
    with connect(db_path) as con:
        rows = con.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1").fetchall()
    return (rows[0][0], rows[0][1]) if rows else None


def decisions_for(db_path: str | Path, content_hash: str) -> list[dict]:
    """Sign-off decisions bound to this content hash, oldest first."""
    if not Path(str(db_path)).exists():
        return []
    with connect(db_path) as con:
        rows = con.execute(f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit_log WHERE kind = 'decision' "
                           "AND content_hash = ? ORDER BY seq", [content_hash]).fetchall()
    return _records(rows)
