"""Nothing appended to a broken chain (SPEC §4, issue 32): a command that stores a run or
changes an account verifies the chain first, and its write links only onto the head that
verification found intact.

The check costs one read of the records and the accounts (verify_chain with runs=None: no
stored run is re-digested). Inside the write's transaction the store hands the head it
links to to `extends`: the verified head goes ahead. Any other head means the chain moved
since it was verified: on PostgreSQL it is verified again there and then (another
connection; the append function itself refuses a head that moves after that, and the
transaction is retried); a DuckDB file is attached by the writer and cannot be opened a
second time in its process, so the write is rolled back and tried again, verification
first. A broken chain raises ChainBroken, before anything is written or from inside the
transaction, which then rolls back.
"""

from __future__ import annotations

from ..errors import ChainBroken, TermgateError
from ..store.postgres import is_postgres, schema_version_pg
from ..store.records import GENESIS
from .audit_chain import ChainReport, parse_head, verify_chain

__all__ = ["ChainBroken", "require_intact", "append_intact", "MAX_TRIES"]

MAX_TRIES = 10
"""Writes tried before giving up on a chain that moves under every one (other writers)."""


class _Moved(Exception):
    """The chain's head moved between verification and the write: verify and write again."""


def require_intact(db, expect_head: str | None = None) -> ChainReport:
    """The chain's records and accounts verified (and `expect_head`, COUNT:HASH, still
    held), or ChainBroken naming the first bad record. A store file not made yet is
    intact, and so is a PostgreSQL database without termgate's schema."""
    if is_postgres(db) and schema_version_pg(str(db))[0] is None:  # no schema yet: the write makes it
        if expect_head:
            count, prefix = parse_head(expect_head)
            raise ChainBroken(f"audit chain broken: record {count}: expected (hash {prefix[:16]}…), the store has "
                              "no records — the store was rewritten or truncated")
        return ChainReport(True, 0, None, "audit chain intact: 0 records", f"0:{GENESIS}")
    return _verified(db, expect_head)


def _verified(db, expect_head: str | None) -> ChainReport:
    report = verify_chain(db, expect_head, runs=None)
    if not report.ok:
        raise ChainBroken(f"audit chain broken: {report.message}")
    return report


def _head(report: ChainReport) -> tuple[int, str]:
    count, _, digest = (report.head or f"0:{GENESIS}").partition(":")
    return int(count), digest


def append_intact(db, write, expect_head: str | None = None):
    """write(extends): a store write given `extends` (store.save_run, store.write_account),
    made only onto a chain verified intact; its result. ChainBroken, nothing written, when
    the chain is broken before or while writing."""
    for _ in range(MAX_TRIES):
        verified = [_head(require_intact(db, expect_head))]

        def extends(head: tuple[int, str]) -> None:
            if tuple(head) == verified[0]:
                return
            if not is_postgres(db):
                raise _Moved
            verified[0] = _head(_verified(db, expect_head))  # an older head: the append refuses it

        try:
            return write(extends)
        except _Moved:
            continue
    raise TermgateError(f"the audit chain kept moving under {MAX_TRIES} tries (other writers); nothing was stored, "
                        "try again")
