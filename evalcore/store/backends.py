"""The store operations that run on both backends, each choosing by the `--db` value: a
DuckDB file (store.runs, store.audit) or a PostgreSQL URL (store.pg_runs). The rest of the
store package is DuckDB-only so far, and refuses a URL (connection.connect)."""

from __future__ import annotations

from pathlib import Path

from . import audit, pg_runs, runs
from .postgres import is_postgres

__all__ = ["save_run", "get_run", "users_rows"]


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
