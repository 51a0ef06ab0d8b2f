"""What a reviewer must look at and acknowledge before approving a run (SPEC §4): one
flagged item. Who finds them is termgate.governance.signoff.flagged_items."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FlaggedItem"]


@dataclass(frozen=True)
class FlaggedItem:
    """Something a reviewer must look at and acknowledge before approving."""

    key: str
    kind: str
    query_id: str
    query: str
    detail: str
