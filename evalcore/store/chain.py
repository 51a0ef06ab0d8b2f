"""The audit chain's view of the store: run headers recomputed from stored rows, and the
one record that adopts what a store held before the chain covered accounts and runs."""

from __future__ import annotations

import getpass
from pathlib import Path

import duckdb

from ..identity import fold_name
from .audit import account_state, append_on
from .connection import connect
from .digest import run_header

__all__ = ["header_record", "stored_headers", "stored_run_ids", "adopt_unchained", "canonical_account_names"]


def _now() -> str:
    from ..evaluation import utc_now
    return utc_now()


def header_record(con: duckdb.DuckDBPyConnection, run_id: str, schema: str = "") -> dict:
    """The `run` record for a run just stored (its header; see store.digest)."""
    header = run_header(con, run_id, schema)
    return {"created_at": _now(), "kind": "run", "actor": header["author"] or "", "run_id": run_id,
            "content_hash": header["content_hash"], "decision": None, "comment": None, "payload": header}


def stored_run_ids(db_path: str | Path) -> list[str]:
    if not Path(str(db_path)).exists():
        return []
    with connect(db_path) as con:
        return [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at, run_id").fetchall()]


def stored_headers(db_path: str | Path, run_ids: list[str]) -> dict[str, dict]:
    """Headers recomputed from the store now, for the runs that exist among `run_ids`."""
    with connect(db_path) as con:
        present = {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}
        return {rid: run_header(con, rid) for rid in run_ids if rid in present}


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
