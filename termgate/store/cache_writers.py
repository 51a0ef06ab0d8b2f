"""Who wrote each entry of the shared caches (embedding_cache, llm_cache, lexicon_cache), and
whose entries a run may use (issue 31 item 3; docs/security.md "Shared caches").

Every entry carries its `writer`. On PostgreSQL the server fills it in from `session_user`
(a column default and a trigger that overwrites whatever a client sends, store.postgres
migration 14); on a DuckDB file it is the operating-system user termgate runs as. Entries
stored before writers were recorded have the writer "" (unknown).

A run reads its own entries, and another writer's only when `TERMGATE_CACHE_TRUST` names
that writer (comma-separated; `*` trusts every writer, the unknown one included): anything
else is recomputed and stored again under the run's own writer, beside the other entry
(the key includes the writer). Where several trusted writers hold one key, the run's own
entry wins, then the writers in the order the setting lists them. `CacheUse` records whose
entries a run used; the run stores it with its usage and shows it in the JSON report.
"""

from __future__ import annotations

import functools
import getpass
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..environment import setting
from .postgres import is_postgres

__all__ = ["UNKNOWN_WRITER", "UNKNOWN_SHOWN", "Trust", "CacheUse", "own_writer", "trusted_writers", "shown_writer",
           "TRUST_TABLE", "trust_filter_pg", "pick_trusted"]

UNKNOWN_WRITER = ""
"""The writer of an entry stored before writers were recorded (no role or user has this name)."""
UNKNOWN_SHOWN = "(unknown)"
"""How a record of the cache writers a run used names UNKNOWN_WRITER."""
TRUST_TABLE = "_termgate_trust"
"""The (writer, rank) table pick_trusted registers for a read's SQL."""


@dataclass(frozen=True)
class Trust:
    """Whose cache entries a run uses: `writers` in order of preference (the run's own
    first), and with `everyone` any other writer's too, after them."""

    writers: tuple[str, ...]
    everyone: bool = False


def _local_user() -> str:
    from ..identity import fold_name

    try:
        return fold_name(getpass.getuser()) or f"uid-{os.getuid()}"
    except OSError:  # no user name in the environment or the password database (a bare container)
        return f"uid-{os.getuid()}"


@functools.lru_cache(maxsize=16)
def _session_user(url: str) -> str:
    from .postgres import connect_pg

    with connect_pg(url) as conn:
        return conn.execute("SELECT session_user").fetchone()[0]


def own_writer(db_path: str | Path) -> str:
    """The writer this process's entries get: PostgreSQL's `session_user` (what the server
    records), else the operating-system user (case-folded)."""
    return _session_user(str(db_path)) if is_postgres(db_path) else _local_user()


def trusted_writers(own: str, fold: bool = False) -> Trust:
    """`own`, then the writers TERMGATE_CACHE_TRUST lists (`*`: every writer); with `fold`
    (a store file, whose writers are case-folded user names) the listed names folded alike,
    so `Alice` names the writer `alice` (PostgreSQL role names are compared as written)."""
    from ..identity import fold_name

    listed = [fold_name(name) if fold else name.strip() for name in (setting("CACHE_TRUST") or "").split(",")]
    names = [own] + [name for name in listed if name and name != "*" and name != own]
    return Trust(tuple(dict.fromkeys(names)), "*" in listed)


def shown_writer(writer: str) -> str:
    return UNKNOWN_SHOWN if writer == UNKNOWN_WRITER else writer


def trust_filter_pg(trust: Trust) -> tuple[str, tuple]:
    """A PostgreSQL read's condition on `writer` (bound values), so untrusted entries never
    leave the server."""
    return "(writer = ANY(%s) OR %s)", (list(trust.writers), trust.everyone)


def pick_trusted(con, trust: Trust, partition: str) -> str:
    """SQL clauses for a read of cache entries `c`: join TRUST_TABLE (registered here),
    keep trusted writers' entries, and of several for one key (`partition`, columns of `c`)
    the most preferred. Append after the read's FROM … JOIN …; bind `trust.everyone` once."""
    con.register(TRUST_TABLE, pa.table({"writer": pa.array(trust.writers, pa.string()),
                                        "rank": pa.array(range(len(trust.writers)), pa.int32())}))
    return (f" LEFT JOIN {TRUST_TABLE} t ON c.writer = t.writer WHERE (t.rank IS NOT NULL OR ?)"
            f" QUALIFY row_number() OVER (PARTITION BY {partition} ORDER BY t.rank NULLS LAST, c.writer) = 1")


class CacheUse:
    """Whose cache entries one run used, over every cache of one store it reads (the
    embedding, lexicon and LLM caches share one): `used` holds the writers of the entries it
    read and, once it stored entries of its own, its own writer."""

    def __init__(self, db_path: str | Path):
        self.db_path = db_path
        self.used: set[str] = set()
        self._writer: str | None = None

    @property
    def writer(self) -> str:
        if self._writer is None:
            self._writer = own_writer(self.db_path)
        return self._writer

    def trust(self) -> Trust:
        """Read at each load: the setting as it is now."""
        return trusted_writers(self.writer, fold=not is_postgres(self.db_path))

    def read(self, writers) -> None:
        self.used.update(writers)

    def wrote(self) -> None:
        self.used.add(self.writer)

    def record(self) -> dict | None:
        """{"writer": this run's writer, "used": the writers whose entries it used, sorted};
        None when it used no cache entry."""
        if not self.used:
            return None
        return {"writer": self.writer, "used": sorted(shown_writer(w) for w in self.used)}
