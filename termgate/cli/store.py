"""`termgate store init|migrate|info`: the store's owner creates and upgrades it, on either
backend (a DuckDB file, or PostgreSQL by URL)."""

from __future__ import annotations

import click

from ..config import default_db_path
from ..store.postgres import PG_SCHEMA_VERSION, is_postgres, migrate_pg, roles_sql, schema_version_pg, shown
from .common import echo, run_cli, store_option

__all__ = ["store_group"]


def _upgrade(db: str, create: bool) -> tuple[int, list[int] | None]:
    """(version now, versions applied or None when not told)."""
    if is_postgres(db):
        return migrate_pg(db, create)
    from ..store.connection import SCHEMA_VERSION, check_store_path, ensure_store, schema_version

    before, _ = schema_version(db)
    if before is None and not create:
        from ..errors import UsageError
        raise UsageError(f"--db {db}: no store there: run `termgate store init` first")
    check_store_path(db)
    ensure_store(db)
    return SCHEMA_VERSION, list(range((before or 0) + 1, SCHEMA_VERSION + 1)) if (before or 0) < SCHEMA_VERSION else []


def _say(db: str, version: int, applied: list[int] | None, verb: str) -> None:
    where = shown(db) if is_postgres(db) else db
    backend = "PostgreSQL" if is_postgres(db) else "DuckDB"
    if applied:
        echo(f"{verb} {backend} store {where}: schema version {version} (applied {', '.join(map(str, applied))})")
    else:
        echo(f"{backend} store {where}: schema version {version}, up to date")


@click.group("store")
def store_group() -> None:
    """Create, upgrade and inspect the store: a DuckDB file (the embedded default) or a
    PostgreSQL database (the team store; `--db postgresql://…`).

    Run `store init` and `store migrate` as the database's owner: migrations are numbered,
    each in its own transaction (on PostgreSQL under an advisory lock, so two runners
    meeting an empty database create it once). A store whose schema is newer than this
    termgate is refused (exit 2) with the version to install.

    Every command runs on either backend. `store roles` prints least-privilege SQL for a CI
    role and a dashboard role; `store copy` moves a whole store to or from a DuckDB file.
    See docs/deploy.md.

    Exit codes: 0 done, 2 usage error (unreachable server, no permission, newer schema).

    \b
    Example:
      PGPASSWORD=… termgate store init --db postgresql://termgate_owner@db.internal/termgate
      termgate store info --db data/termgate.duckdb
    """


@store_group.command("init")
@store_option
def init_command(db):
    """Create the store (or say it is there already)."""
    db = db or default_db_path()
    version, applied = run_cli(_upgrade, db, True)
    _say(db, version, applied, "initialised")


@store_group.command("migrate")
@store_option
def migrate_command(db):
    """Apply pending migrations to an existing store."""
    db = db or default_db_path()
    version, applied = run_cli(_upgrade, db, False)
    _say(db, version, applied, "migrated")


@store_group.command("info")
@store_option
def info_command(db):
    """The backend, the schema version and which termgate applied it."""
    db = db or default_db_path()
    from ..store.connection import schema_version

    version, by = run_cli(schema_version_pg if is_postgres(db) else schema_version, db)
    backend = "PostgreSQL" if is_postgres(db) else "DuckDB"
    where = shown(db) if is_postgres(db) else db
    if version is None:
        echo(f"{backend} {where}: no termgate store (run `termgate store init`)")
        return
    known = PG_SCHEMA_VERSION if is_postgres(db) else None
    echo(f"{backend} store {where}: schema version {version}"
         + (f", applied by termgate {by}" if by else "") + (f" (this termgate knows {known})" if known else ""))


@store_group.command("roles")
@click.option("--ci", "ci", default="evalcore_ci", show_default=True, help="The CI runners' role.")
@click.option("--dashboard", "dashboard", default="evalcore_dashboard", show_default=True,
              help="The dashboard server's role.")
@click.option("--grants", "grants_only", is_flag=True,
              help="Only the grants, which the store's owner runs once a superuser has created the roles.")
def roles_command(ci, dashboard, grants_only):
    """Print the SQL that creates a CI role and a dashboard role with least privilege on a
    PostgreSQL store: the CI role stores runs and appends their headers only through one
    SECURITY DEFINER function, the dashboard records sign-offs only through another;
    neither can write the audit log, the accounts or the decisions directly. Creating the
    roles needs a superuser (or CREATEROLE), the grants the store's owner (docs/deploy.md).

    \b
    Example:
      sudo -u postgres createuser --pwprompt evalcore_ci
      sudo -u postgres createuser --pwprompt evalcore_dashboard
      termgate store roles --grants | psql -v ON_ERROR_STOP=1 postgresql://termgate_owner@db.internal/termgate
    """
    echo(run_cli(roles_sql, ci, dashboard, grants_only).rstrip("\n"))


@store_group.command("copy")
@click.option("--from", "source", required=True, metavar="PATH|URL", help="The store to copy.")
@click.option("--to", "target", required=True, metavar="PATH|URL", help="An empty store (or a new file).")
def copy_command(source, target):
    """Copy a store to another backend (DuckDB file ⇄ PostgreSQL) with its runs, accounts,
    caches and audit chain, ids and hashes unchanged, into an empty store only, in one
    transaction; `audit verify` passes on the copy.

    \b
    Example:
      termgate store copy --from data/termgate.duckdb --to postgresql://termgate_owner@db.internal/termgate
    """
    from ..store.copy import copy_store

    counts = run_cli(copy_store, source, target)
    where = shown(target) if is_postgres(target) else target
    echo(f"copied {sum(counts.values())} rows into {where}: "
         + ", ".join(f"{table} {n}" for table, n in counts.items() if n))
