"""The audit chain's view of a store file: run headers recomputed from its stored rows."""

from __future__ import annotations

from pathlib import Path

from .connection import connect
from .digest import run_header

__all__ = ["stored_headers", "stored_run_ids"]


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
