"""The one door readers use, on either backend: a DuckDB connection on which the store's
DuckDB SQL runs — the store file itself, or, on PostgreSQL, an in-memory DuckDB holding the
rows the read names (store.pg_rows.snapshot: every reader says which rows its SQL reads)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from . import connection
from .pg_rows import Rows, snapshot
from .postgres import is_postgres

__all__ = ["connect"]


@contextmanager
def connect(db_path: str | Path, rows: dict[str, Rows] | None = None) -> Iterator:
    """A read-only view of the store for one read; `rows` names what the read's SQL uses
    (ignored by a store file, which holds everything)."""
    if is_postgres(db_path):
        if rows is None:
            from ..errors import TermgateError
            raise TermgateError("internal: a read of a PostgreSQL store names the rows it needs")
        with snapshot(str(db_path), rows) as con:
            yield con
        return
    with connection.connect(db_path) as con:
        yield con
