"""Golden-set revisions in the store (issue 19 item 2): proposals and approvals are audit
records (kinds `golden_proposal`, `golden_approval`), a revision's text is a golden_files row
under its golden hash — both tables every backend has, `store copy` copies and the chain
covers. Nothing here needs a table of its own."""

from __future__ import annotations

from pathlib import Path

from .connection import exists
from .pg_rows import Rows
from .postgres import is_postgres
from .reading import connect
from .records import AUDIT_COLUMNS

__all__ = ["GOLDEN_KINDS", "golden_records", "save_golden_proposal"]

GOLDEN_KINDS = ("golden_proposal", "golden_approval")


def golden_records(db_path: str | Path) -> list[dict]:
    """The golden_proposal and golden_approval records, in chain order."""
    from .audit import records_of

    if not exists(db_path):
        return []
    with connect(db_path, rows={"audit_log": Rows("kind = ANY(%s)", (list(GOLDEN_KINDS),))}) as con:
        rows = con.execute(f"SELECT {', '.join(AUDIT_COLUMNS)} FROM audit_log WHERE list_contains(?, kind) "
                           "ORDER BY seq", [list(GOLDEN_KINDS)]).fetchall()
    return records_of(rows)


def save_golden_proposal(db_path: str | Path, files: list[tuple[str, str, str, str]], record: dict) -> dict:
    """In one transaction: each golden file (golden_hash, path, content, stored_at) not yet
    stored under its hash, then `record` appended to the chain. Returns the stored record."""
    if is_postgres(db_path):
        return _save_pg(str(db_path), files, record)
    from .audit import in_transaction
    from .records import append_on

    def work(con):
        for golden_hash, path, content, stored_at in files:
            if not con.execute("SELECT count(*) FROM golden_files WHERE golden_hash = ?", [golden_hash]).fetchall()[0][0]:
                con.execute("INSERT INTO golden_files VALUES (?, ?, ?, ?)", [golden_hash, path, content, stored_at])
        return append_on(con, record)
    return in_transaction(db_path, work)


def _save_pg(url: str, files, record: dict) -> dict:
    from .pg_runs import append_record, retrying
    from .postgres import migrate_pg

    migrate_pg(url)

    def work(cur):
        for golden_hash, path, content, stored_at in files:
            cur.execute("INSERT INTO golden_files (golden_hash, path, content, stored_at) VALUES (%s, %s, %s, %s) "
                        "ON CONFLICT (golden_hash) DO NOTHING", [golden_hash, path, content, stored_at])
        return append_record(cur, record)  # not a decision: the owner appends directly
    return retrying(url, work, "record a golden-set proposal")
