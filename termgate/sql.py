"""What the scorer and the store share about DuckDB: SQL text for the few places DuckDB
takes no bound parameter (file paths of ATTACH, COPY and table functions; every value
anywhere else is a bound parameter), and the memory cap."""

from __future__ import annotations

import re

from .environment import setting, setting_source
from .errors import UsageError

__all__ = ["sql_literal", "duckdb_memory_limit"]

_SIZE = re.compile(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)


def duckdb_memory_limit(default: str) -> str:
    """TERMGATE_DUCKDB_MEMORY (a size such as 2GB), else `default`; UsageError when it is
    not a size (so it is safe to put into a SET statement)."""
    value = setting("DUCKDB_MEMORY", default).strip()
    if not _SIZE.fullmatch(value):
        raise UsageError(f"{setting_source('DUCKDB_MEMORY')}={value!r}: expected a size such as {default}")
    return value


def sql_literal(text: str) -> str:
    """A string as a SQL literal."""
    return "'" + text.replace("'", "''") + "'"
