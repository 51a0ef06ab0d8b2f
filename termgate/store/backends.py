"""The store's writes, each choosing by the `--db` value: a DuckDB file (store.runs,
store.audit) or a PostgreSQL URL (store.pg_runs). Reads need no choice: on PostgreSQL they
run the same DuckDB SQL over the rows they name (store.connection.connect, store.pg_rows)."""

from __future__ import annotations

from pathlib import Path

from . import audit, pg_runs, runs
from .postgres import is_postgres

__all__ = ["save_run", "write_account", "append_audit", "claim_signin", "clear_signin_failures", "put_sealed_key"]


def save_run(db_path: str | Path, run, before_commit=None, extra_rows=None, usage=None, extends=None) -> None:
    """Store a run with its rows and its header in the audit chain, in one transaction
    (see store.runs.save_run and store.pg_runs). `extends(head)`, when given, is called
    inside that transaction with the chain's head (seq, hash) the header will link to;
    whatever it raises rolls everything back (termgate.governance.chain_guard)."""
    if is_postgres(db_path):
        return pg_runs.save_run_pg(str(db_path), run, before_commit, extra_rows, usage, extends)
    return runs.save_run(db_path, run, before_commit, extra_rows, usage, extends)


def write_account(db_path: str | Path, name: str, changes: dict, record: dict, *, new: bool = False,
                  extends=None) -> dict:
    """Insert or update an account and append its chain record in one transaction
    (`extends`: as for save_run)."""
    if is_postgres(db_path):
        return pg_runs.write_account_pg(str(db_path), name, changes, record, new=new, extends=extends)
    return audit.write_account(db_path, name, changes, record, new=new, extends=extends)


def append_audit(db_path: str | Path, record: dict) -> dict:
    """Append one record in its own transaction; returns the stored record."""
    return pg_runs.append_audit_pg(str(db_path), record) if is_postgres(db_path) else audit.append_audit(db_path, record)


def claim_signin(db_path: str | Path, name: str, delay_of) -> float:
    """A sign-in attempt's turn, taken atomically: 0.0 when it may check its password (it is
    counted as a failed try until clear_signin_failures), else the seconds to wait
    (`delay_of(failures)`: the delay after that many tries; store.records.signin_turn)."""
    if is_postgres(db_path):
        return pg_runs.claim_signin_pg(str(db_path), name, delay_of)
    return audit.claim_signin(db_path, name, delay_of)


def clear_signin_failures(db_path: str | Path, name: str) -> None:
    if is_postgres(db_path):
        return pg_runs.clear_signin_failures_pg(str(db_path), name)
    return audit.clear_signin_failures(db_path, name)


def put_sealed_key(db_path: str | Path, fingerprint: str, holder: str, sealed: str) -> None:
    """Keep an account's signing key sealed by its password, outside the chain (the chain
    registers its public key). Written before the record that registers it: a key whose
    record never came is sealed and unused."""
    if is_postgres(db_path):
        from ..clock import utc_now
        from .postgres import migrate_pg

        migrate_pg(str(db_path))
        return pg_runs.retrying(str(db_path), lambda cur: cur.execute(
            "INSERT INTO sealed_keys VALUES (%s, %s, %s, %s)", [fingerprint, holder, sealed, utc_now()]),
            "keep a sealed key (accounts stay with the store's owner)")
    return audit.put_sealed_key(db_path, fingerprint, holder, sealed)
