"""SQL text for the few places DuckDB takes no bound parameter (file paths of ATTACH, COPY
and table functions); every value anywhere else is a bound parameter."""

from __future__ import annotations

__all__ = ["sql_literal"]


def sql_literal(text: str) -> str:
    """A string as a SQL literal."""
    return "'" + text.replace("'", "''") + "'"
