"""The audit chain's records, on a connection the caller holds (inside its transaction):
hashing and appending a record, an account's chained state, a run's header, and the one
record that adopts what a store held before the chain covered accounts and runs."""

from __future__ import annotations

import getpass
import hashlib
import json

import duckdb

from ..identity import fold_name
from .digest import run_header

__all__ = ["AUDIT_COLUMNS", "GENESIS", "USER_COLUMNS", "SSO_PASSWORD_HASH", "CHAINED_TABLES", "record_hash", "head_on", "append_on", "account_state", "header_record",
           "canonical_account_names", "adopt_unchained", "signin_turn"]

AUDIT_COLUMNS = ("seq", "created_at", "kind", "actor", "run_id", "content_hash", "decision", "comment",
                 "payload", "prev_hash", "record_hash")
GENESIS = "0" * 64
"""prev_hash of the first record."""
USER_COLUMNS = ("name", "role", "domains", "aliases", "password_hash", "disabled", "created_at")
SSO_PASSWORD_HASH = "sso:"
"""password_hash of an account that signs in only through the identity provider: no scrypt
hash has this form, so no password verifies against it (and no schema change was needed)."""
CHAINED_TABLES = ("audit_log", "audit_head", "users", "runs", "query_results", "term_rows")
"""The tables the gate reads: each must be a plain table (a view could show verify and the gate different rows)."""


def signin_turn(failures: int, last_at: float, now: float, delay_of) -> tuple[float, tuple[int, float] | None]:
    """One sign-in attempt's turn, decided under the row's lock: (seconds it must wait, the
    row's new (failures, last_at) or None to leave it). An attempt that may go ahead is
    counted as a failure before its password is checked (success clears the row), so every
    attempt pushes the next one back and parallel attempts get one turn per delay. A
    last_at in the future (a clock set back, an edited row) is moved to now: the wait is
    never longer than `delay_of(failures)` from now."""
    if failures > 0:
        delay = delay_of(failures)
        if last_at > now:
            return delay, (failures, now)
        if last_at + delay > now:
            return last_at + delay - now, None
    return 0.0, (max(failures, 0) + 1, now)


def table_kind_problems(kinds: dict[str, str]) -> list[str]:
    """What is wrong with the tables the gate reads, from {table name: table type} as the
    database's information_schema tells it."""
    return [f"{t} is {'missing' if t not in kinds else 'a ' + kinds[t].lower()}, not termgate's table"
            for t in CHAINED_TABLES if kinds.get(t) != "BASE TABLE"]

def record_hash(record: dict, prev_hash: str) -> str:
    """SHA-256 over the canonical JSON of a record's fields and the previous record's hash."""
    fields = {k: record.get(k) for k in AUDIT_COLUMNS if k != "record_hash"}
    fields["prev_hash"] = prev_hash
    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def head_on(con, schema: str = "") -> tuple[int, str]:
    """(seq, record_hash) of the record the next append_on links to, read inside the
    caller's transaction: the recorded head, else the last record, else (0, GENESIS)."""
    head = con.execute(f"SELECT seq, record_hash FROM {schema}audit_head WHERE id = 1").fetchall()
    last = head or con.execute(f"SELECT seq, record_hash FROM {schema}audit_log ORDER BY seq DESC LIMIT 1").fetchall()
    return (last[0][0], last[0][1]) if last else (0, GENESIS)


def append_on(con: duckdb.DuckDBPyConnection, record: dict, schema: str = "") -> dict:
    """Append one record after the last one, inside the caller's transaction on `con`
    (`schema`: "store." when the store is attached to another database). Moves the head."""
    # chain onto the recorded head, not onto whatever record is last now: an append after
    # records were removed by hand leaves the gap visible instead of healing it
    head = con.execute(f"SELECT seq, record_hash FROM {schema}audit_head WHERE id = 1").fetchall()
    last = head or con.execute(f"SELECT seq, record_hash FROM {schema}audit_log ORDER BY seq DESC LIMIT 1").fetchall()
    seq, prev = (last[0][0] + 1, last[0][1]) if last else (1, GENESIS)
    stored = dict(record, seq=seq, prev_hash=prev)
    stored["record_hash"] = record_hash(stored, prev)
    con.execute(f"INSERT INTO {schema}audit_log ({', '.join(AUDIT_COLUMNS)}) VALUES "
                f"({', '.join('$' + c for c in AUDIT_COLUMNS)})",
                {c: (json.dumps(stored.get(c), sort_keys=True) if c == "payload" else stored.get(c)) for c in AUDIT_COLUMNS})
    con.execute(f"INSERT OR REPLACE INTO {schema}audit_head VALUES (1, ?, ?)", [seq, stored["record_hash"]])
    return stored


def account_state(row: dict) -> dict:
    """What the chain records about an account: everything the gate reads, with the
    password hash itself replaced by its SHA-256."""
    return {"name": row["name"], "role": row["role"], "domains": sorted(row["domains"] or []),
            "aliases": sorted(row["aliases"] or []), "disabled": bool(row["disabled"]),
            "password": hashlib.sha256(str(row["password_hash"]).encode()).hexdigest()}


def _now() -> str:
    from ..clock import utc_now
    return utc_now()


def header_record(con: duckdb.DuckDBPyConnection, run_id: str, schema: str = "") -> dict:
    """The `run` record for a run just stored (its header; see store.digest)."""
    header = run_header(con, run_id, schema)
    return {"created_at": _now(), "kind": "run", "actor": header["author"] or "", "run_id": run_id,
            "content_hash": header["content_hash"], "decision": None, "comment": None, "payload": header}


def canonical_account_names(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 8: account names in the canonical form (identity.canonical_name) where
    that is possible without merging two accounts; others are left as they were."""
    from ..identity import canonical_name
    from ..errors import UsageError

    names = [r[0] for r in con.execute("SELECT name FROM users").fetchall()]
    taken = set(names)
    for name in names:
        try:
            canonical = canonical_name(name)
        except UsageError:
            continue
        if canonical != name and canonical not in taken:
            con.execute("UPDATE users SET name = ? WHERE name = ?", [canonical, name])
            taken.add(canonical)
            taken.discard(name)


def adopt_unchained(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 8: one chained `adopt` record with the state of every account and the
    header of every run stored before the chain covered them (nothing when there are none)."""
    chained = con.execute("SELECT count(*) FROM audit_log WHERE kind IN ('adopt', 'run') OR "
                          "(kind LIKE 'user_%' AND payload LIKE '%\"account\"%')").fetchall()[0][0]
    if chained:
        return  # the chain already covers this store: migrations re-run by hand adopt nothing
    columns = ("name", "role", "domains", "aliases", "password_hash", "disabled")
    users = [dict(zip(columns, r)) for r in con.execute(
        f"SELECT {', '.join(columns)} FROM users ORDER BY name").fetchall()]
    runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at, run_id").fetchall()]
    if not users and not runs:
        return
    payload = {"accounts": [account_state(u) for u in users], "runs": [run_header(con, rid) for rid in runs]}
    append_on(con, {"created_at": _now(), "kind": "adopt", "actor": fold_name(getpass.getuser()), "run_id": None,
                    "content_hash": None, "decision": None,
                    "comment": f"adopted {len(users)} accounts and {len(runs)} runs stored before the audit "
                               "chain covered them", "payload": payload})
