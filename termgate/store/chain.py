"""The audit chain's view of a store file, read in one connection (so one consistent
state: a run another process stores meanwhile is either wholly in it or not at all)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .audit import audit_head_on, audit_records_on, integrity_problems_on, users_rows_on
from .reading import connect
from .pg_rows import Rows, every, table_kind_problems_pg
from .digest import run_header

__all__ = ["ChainSnapshot", "chain_snapshot"]


@dataclass
class ChainSnapshot:
    """What `audit verify` checks, as the store held it at one moment."""

    problems: list[str] = field(default_factory=list)
    records: list[dict] = field(default_factory=list)
    head: tuple[int, str] | None = None
    users: list[dict] = field(default_factory=list)
    run_ids: list[str] = field(default_factory=list)
    """Every stored run, oldest first."""
    headers: dict[str, dict] = field(default_factory=dict)
    """Headers recomputed from the stored rows, for the runs asked for that exist."""


def chain_snapshot(db_path: str | Path, runs="all") -> ChainSnapshot:
    """Records, head, accounts and run headers (`runs`: "all", a list of run ids, or None)
    of one store, all from one connection (on PostgreSQL: one repeatable-read transaction
    whose rows are checked by the same code, in an in-memory DuckDB)."""
    from .postgres import is_postgres

    if is_postgres(str(db_path)):
        problems = _table_kinds_pg(str(db_path))
        if problems:
            return ChainSnapshot(problems)
        wanted = Rows() if runs == "all" else Rows("FALSE") if runs is None else Rows("run_id = ANY(%s)", (list(runs),))
        with connect(db_path, rows=every("runs", "users", "audit_log", "audit_head")
                     | {"query_results": wanted, "term_rows": wanted, "retrieval_results": wanted}) as con:
            # a key constraint dropped by hand could let a name or run id be stored twice
            problems = integrity_problems_on(con)
            return ChainSnapshot(problems) if problems else _snapshot_on(con, runs)
    if not Path(str(db_path)).exists():
        return ChainSnapshot()
    with connect(db_path) as con:
        problems = integrity_problems_on(con)
        if problems:
            return ChainSnapshot(problems)
        return _snapshot_on(con, runs)


def _table_kinds_pg(url: str) -> list[str]:
    """table_kind_problems_pg, after migrating a store whose schema is older than this
    termgate's (a table it reads, such as retrieval_results at schema 17, is added then), as
    every read does first; a role that may not migrate it is told to ask the owner."""
    from .postgres import PG_SCHEMA_VERSION, migrate_pg, schema_version_pg

    problems = table_kind_problems_pg(url)
    version = schema_version_pg(url)[0] if problems else None
    if version is not None and version < PG_SCHEMA_VERSION:
        migrate_pg(url)
        problems = table_kind_problems_pg(url)
    return problems


def _snapshot_on(con, runs) -> ChainSnapshot:
    ids = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at, run_id").fetchall()]
    present = set(ids)
    wanted = [] if runs is None else ids if runs == "all" else [rid for rid in runs if rid in present]
    return ChainSnapshot([], audit_records_on(con), audit_head_on(con), users_rows_on(con), ids,
                         {rid: run_header(con, rid) for rid in wanted})
