"""Which revisions of a golden set are approved (issue 19; docs/golden.md), as the audit
chain records them: the `golden_proposal` and `golden_approval` records. Proposing and
approving are termgate.governance.golden_revisions'; this module only reads, so sign-off
(signoff.flagged_items) and evaluation ask it without depending on either.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UsageError
from .flagged import FlaggedItem
from ..identity import same_person

__all__ = ["Approval", "Revision", "approvals_needed", "list_revisions", "find_revision", "is_approved",
           "revision_state", "GOLDEN_ITEM", "golden_flag"]


@dataclass(frozen=True)
class Approval:
    approver: str
    approved_at: str
    comment: str
    seq: int
    domains: list[str]
    """The domains the approver's scope covered (all of the revision's)."""


@dataclass(frozen=True)
class Revision:
    """One proposed revision of a named golden set, as the audit chain records it."""

    name: str
    revision: str
    """The golden hash (what runs record as golden_hash)."""
    base_revision: str | None
    proposer: str
    proposed_at: str
    diff: str
    changes: list[dict]
    domains: list[str]
    seq: int
    """The golden_proposal record (the first, when the same revision was proposed again)."""
    proposers: list[str]
    """Everyone who proposed this revision: none of them may approve it."""
    approvals: list[Approval]
    """Approvals that count: by an approver or admin who proposed it under no name or alias."""
    approved: bool


def _approval(rec: dict) -> Approval:
    return Approval(rec["actor"], rec["created_at"], rec["comment"] or "", rec["seq"],
                    list((rec["payload"] or {}).get("approves_domains", [])))


def approvals_needed(domains, settings=None) -> int:
    """How many distinct approvers a revision with these domains needs: `approvals_required`
    of its most demanding high-risk domain (default 1), and at least one."""
    from ..config import load_settings

    settings = settings or load_settings()
    return max([settings.approvals_for(d) for d in domains if d in settings.high_risk_domains] or [1])


def list_revisions(db, golden_name: str | None = None, settings=None) -> list[Revision]:
    """Every proposed revision (of one golden set, or all), oldest proposal first, with its
    approvals. Approved: approvals by at least as many distinct approvers as the most
    demanding high-risk domain of the set needs (`approvals_required`, default 1), at least one."""
    from .. import store
    from ..config import load_settings
    from ..store.golden import golden_records

    records = golden_records(db)
    if not records:
        return []
    settings = settings or load_settings()
    aliases = {row["name"]: row["aliases"] or [] for row in store.users_rows(db)}
    proposals: dict[tuple[str, str], list[dict]] = {}
    approvals: dict[tuple[str, str], list[dict]] = {}
    for rec in records:
        key = ((rec["payload"] or {}).get("golden_name"), rec["content_hash"])
        if golden_name is not None and key[0] != golden_name:
            continue
        (proposals if rec["kind"] == "golden_proposal" else approvals).setdefault(key, []).append(rec)
    out = []
    for key, recs in proposals.items():
        first, proposers = recs[0], sorted({r["actor"] for r in recs})
        latest = {r["actor"]: r for r in approvals.get(key, [])}  # each approver's latest approval
        counted = [_approval(r) for r in sorted(latest.values(), key=lambda r: r["seq"])
                   if not any(same_person(p, r["actor"], aliases.get(r["actor"], ())) for p in proposers)]
        payload = first["payload"] or {}
        need = approvals_needed(payload.get("domains", []), settings)
        out.append(Revision(key[0], key[1], payload.get("base_revision"), first["actor"], first["created_at"],
                            payload.get("diff", ""), list(payload.get("changes", [])), list(payload.get("domains", [])),
                            first["seq"], proposers, counted, len({a.approver for a in counted}) >= need))
    return out


def find_revision(db, golden_name: str, revision: str) -> Revision:
    """The proposed revision of this golden set whose hash is or starts with `revision` (at
    least 8 hex digits); UsageError when none or several match."""
    prefix = (revision or "").strip().lower()
    if len(prefix) < 8:
        raise UsageError(f"revision {revision!r}: give the golden hash or at least its first 8 hex digits "
                         "(see `termgate golden list`)")
    found = [r for r in list_revisions(db, golden_name) if r.revision.startswith(prefix)]
    if not found:
        raise UsageError(f"no proposed revision {prefix[:16]} of golden set {golden_name!r}: propose it first with "
                         "`termgate golden propose` (see `termgate golden list`)")
    if len(found) > 1:
        raise UsageError(f"revision {prefix!r} matches {len(found)} revisions of {golden_name!r}: give more digits")
    return found[0]


def is_approved(db, golden_name: str | None, golden_hash: str | None, settings=None) -> bool:
    """Whether this revision (golden hash) of the named golden set is approved in the chain."""
    if not golden_name or not golden_hash:
        return False
    return any(r.approved for r in list_revisions(db, golden_name, settings) if r.revision == golden_hash)


def revision_state(db, golden_name: str | None, golden_hash: str | None, settings=None) -> dict:
    """{"name", "revision", "approved", "approved_by"}: a run's golden revision as the chain says now."""
    found = [r for r in (list_revisions(db, golden_name, settings) if golden_name else []) if r.revision == golden_hash]
    approved_by = sorted({a.approver for r in found for a in r.approvals})
    return {"name": golden_name, "revision": golden_hash, "approved": any(r.approved for r in found),
            "approved_by": approved_by}


GOLDEN_ITEM = "golden"
"""The flagged-item kind of a high-risk run on an unapproved golden revision."""


def golden_flag(db, run: dict, settings=None):
    """A stored high-risk run's flagged item (signoff.FlaggedItem, kind `golden`) when its
    golden revision is not approved in the chain now; None otherwise. Read at sign-off, not
    as recorded at evaluation: an approval given since counts, and none can be forged in a
    report (docs/decisions.md)."""
    from ..store.runs import stored_golden_name

    if not list(run.get("high_risk_domains") or []) or not run.get("golden_hash"):
        return None
    name = stored_golden_name(run)
    proposed = [r for r in (list_revisions(db, name, settings) if name else []) if r.revision == run["golden_hash"]]
    if any(r.approved for r in proposed):
        return None
    why = (f"proposed by {', '.join(proposed[0].proposers)}, awaiting approval" if proposed
           else "never proposed: `termgate golden propose` it, then an approver approves it")
    return FlaggedItem(f"{GOLDEN_ITEM}:-:{run['golden_hash']}", GOLDEN_ITEM, "-", name or "",
                       f"golden set {name!r} revision {run['golden_hash'][:12]} is not approved ({why})")
