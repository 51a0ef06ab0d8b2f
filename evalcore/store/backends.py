"""The store operations that run on both backends, each choosing by the `--db` value: a
DuckDB file (store.runs, store.audit) or a PostgreSQL URL (store.pg_runs). The rest of the
store package is DuckDB-only so far, and refuses a URL (connection.connect)."""

from __future__ import annotations

from pathlib import Path

from . import audit, pg_runs, runs, views
from .postgres import is_postgres

__all__ = ["save_run", "get_run", "users_rows", "get_user", "list_users", "write_account", "append_audit",
           "signin_failures", "record_signin_failure", "clear_signin_failures", "flagged_items"]


def save_run(db_path: str | Path, run, before_commit=None, extra_rows=None, usage=None) -> None:
    """Store a run with its rows and its header in the audit chain, in one transaction
    (see store.runs.save_run and store.pg_runs)."""
    if is_postgres(db_path):
        return pg_runs.save_run_pg(str(db_path), run, before_commit, extra_rows, usage)
    return runs.save_run(db_path, run, before_commit, extra_rows, usage)


def get_run(db_path: str | Path, run_id: str) -> dict:
    """Every stored column of one run; UnknownRunError when absent."""
    return pg_runs.get_run_pg(str(db_path), run_id) if is_postgres(db_path) else runs.get_run(db_path, run_id)


def users_rows(db_path: str | Path) -> list[dict]:
    """Every account with every column (password hash included), by name."""
    return pg_runs.users_rows_pg(str(db_path)) if is_postgres(db_path) else audit.users_rows(db_path)


def get_user(db_path: str | Path, name: str) -> dict | None:
    return pg_runs.get_user_pg(str(db_path), name) if is_postgres(db_path) else audit.get_user(db_path, name)


def list_users(db_path: str | Path) -> list[dict]:
    return pg_runs.list_users_pg(str(db_path)) if is_postgres(db_path) else audit.list_users(db_path)


def write_account(db_path: str | Path, name: str, changes: dict, record: dict, *, new: bool = False) -> dict:
    """Insert or update an account and append its chain record in one transaction."""
    if is_postgres(db_path):
        return pg_runs.write_account_pg(str(db_path), name, changes, record, new=new)
    return audit.write_account(db_path, name, changes, record, new=new)


def append_audit(db_path: str | Path, record: dict) -> dict:
    """Append one record in its own transaction; returns the stored record."""
    return pg_runs.append_audit_pg(str(db_path), record) if is_postgres(db_path) else audit.append_audit(db_path, record)


def signin_failures(db_path: str | Path, name: str) -> tuple[int, float]:
    return pg_runs.signin_failures_pg(str(db_path), name) if is_postgres(db_path) else audit.signin_failures(db_path, name)


def record_signin_failure(db_path: str | Path, name: str) -> int:
    if is_postgres(db_path):
        return pg_runs.record_signin_failure_pg(str(db_path), name)
    return audit.record_signin_failure(db_path, name)


def clear_signin_failures(db_path: str | Path, name: str) -> None:
    if is_postgres(db_path):
        return pg_runs.clear_signin_failures_pg(str(db_path), name)
    return audit.clear_signin_failures(db_path, name)


def flagged_items(db_path: str | Path, run_ids: list[str]):
    """Every flagged item of the given runs, by the one definition (store.views.flagged_items_on)."""
    if is_postgres(db_path):
        return pg_runs.flagged_items_pg(str(db_path), list(run_ids))
    return views.flagged_items(db_path, run_ids)
