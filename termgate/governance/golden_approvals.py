"""Which revisions of a golden set are approved (issue 19; docs/golden.md), as the audit
chain records them: the `golden_proposal` and `golden_approval` records. Proposing and
approving are termgate.governance.golden_revisions'; this module only reads, so sign-off
(signoff.flagged_items) and evaluation ask it without depending on either.

Authority comes from the chain (issue 32): an approval counts by its approver's account as
the chain stated it at that record (audit_chain.actor_states), never by what the record
claims, and each proposal's base is the set's latest approved revision the chain shows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import UsageError
from ..identity import fold_name, same_person
from ..store.golden import GOLDEN_KINDS
from .audit_chain import actor_states, covers
from .flagged import FlaggedItem

CAN_APPROVE = frozenset({"approver", "admin"})

__all__ = ["Approval", "Revision", "NO_DOMAIN", "approvals_needed", "may_approve", "list_revisions", "latest_approved",
           "find_revision", "is_approved", "revision_state", "GOLDEN_ITEM", "golden_flag"]


@dataclass(frozen=True)
class Approval:
    approver: str
    approved_at: str
    comment: str
    seq: int
    domains: list[str]
    """The revision's domains, every one covered by the approver's scope (derived, never the record's claim)."""
    scope: list[str] = field(default_factory=list)
    """The approver's domains as the chain stated the account at the approval ([]: every domain)."""


@dataclass(frozen=True)
class Revision:
    """One proposed revision of a named golden set, as the audit chain records it."""

    name: str
    revision: str
    """The golden hash (what runs record as golden_hash)."""
    base_revision: str | None
    """The approved base: the set's latest approved revision when it was proposed, as the chain
    says (None: the first revision, its diff the whole file)."""
    proposer: str
    proposed_at: str
    diff: str
    """What changed from the approved base (golden_diff.review_diff)."""
    changes: list[dict]
    domains: list[str]
    seq: int
    """The golden_proposal record (the first, when the same revision was proposed again)."""
    proposers: list[str]
    """Every account that proposed this revision: none of them may approve it."""
    approvals: list[Approval]
    """Approvals that count: by an account the chain states as an enabled approver or admin
    covering every domain of the revision, that proposed it under no name or alias."""
    approved: bool
    proposed_over: str | None = None
    """The revision of the file the proposal was made over, when it is not the approved base."""
    proposer_names: list[str] = field(default_factory=list)
    """Every name and alias of the proposers, at their proposal and now, as the chain states them."""
    approved_seq: int | None = None
    """The approval record that made it approved (the latest approved revision is the base of the next)."""


NO_DOMAIN = ("names no domain: add \"context\": {\"domain\": \"...\"} (e.g. \"medical\") to its golden entries "
             "(SPEC §1.1), propose that revision, and approve it")
"""Why a revision with no domain cannot be approved (issue 32): no approver's scope could be checked."""


def approvals_needed(domains, settings=None) -> int:
    """How many distinct approvers a revision with these domains needs: `approvals_required`
    of its most demanding high-risk domain (default 1), and at least one. `settings`: the
    store's policy (governance.policy), or anything with its high_risk_domains and
    approvals_for; the default policy, tightened by local settings, when not given."""
    if settings is None:
        from ..config import load_settings
        from .policy import effective_policy

        settings = effective_policy([], load_settings())
    return max([settings.approvals_for(d) for d in domains if d in settings.high_risk_domains] or [1])


def may_approve(state: dict | None, domains) -> bool:
    """Whether a chained account state (audit_chain.actor_states) may approve a revision with
    these domains: it exists, is enabled, is an approver or admin, and covers every domain of
    a revision that names at least one."""
    return (state is not None and state.get("role") in CAN_APPROVE and bool(domains)
            and all(covers(state, d) for d in domains))


def _names(actor: str, *states) -> set[str]:
    """An actor's name and every alias the given chained states hold."""
    return {actor, *(a for s in states if s for a in (s.get("aliases") or ()))}


def _counted(approvals: list[dict], domains, proposer_names, states, final) -> list[Approval]:
    latest = {fold_name(r["actor"]): r for r in approvals}  # each approver's latest approval
    out = []
    for rec in sorted(latest.values(), key=lambda r: r["seq"]):
        state = states.get(rec["seq"])
        names = _names(rec["actor"], state, final.get(rec["actor"]))
        if not may_approve(state, domains) or any(same_person(p, rec["actor"], names) for p in proposer_names):
            continue
        out.append(Approval(rec["actor"], rec["created_at"], rec["comment"] or "", rec["seq"], list(domains),
                            list(state.get("domains") or [])))
    return out


def list_revisions(db, golden_name: str | None = None, settings=None, records=None) -> list[Revision]:
    """Every proposed revision (of one golden set, or all), oldest proposal first, with the
    approvals that count by the chain's account states (`records`: the audit log, read when
    not given). Approved: counted approvals by at least as many distinct approvers as the most
    demanding high-risk domain of the set needs (`approvals_required`, default 1), at least one."""
    from .. import store
    from ..config import load_settings
    from .policy import effective_policy

    records = store.audit_records(db) if records is None else list(records)
    golden = [r for r in records if r["kind"] in GOLDEN_KINDS
              and (golden_name is None or (r["payload"] or {}).get("golden_name") == golden_name)]
    if not golden:
        return []
    settings = settings or effective_policy(records, load_settings())
    final: dict[str, dict] = {}
    states = actor_states(records, final)
    proposals: dict[tuple[str, str], list[dict]] = {}
    approvals: dict[tuple[str, str], list[dict]] = {}
    for rec in golden:
        key = ((rec["payload"] or {}).get("golden_name"), rec["content_hash"])
        (proposals if rec["kind"] == "golden_proposal" else approvals).setdefault(key, []).append(rec)
    found = []
    for key, recs in proposals.items():
        domains = list((recs[0]["payload"] or {}).get("domains") or [])
        names = sorted({n for r in recs for n in _names(r["actor"], states.get(r["seq"]), final.get(r["actor"]))})
        counted = _counted(approvals.get(key, []), domains, names, states, final)
        need = approvals_needed(domains, settings)
        found.append((key, recs, names, counted, counted[need - 1].seq if len(counted) >= need else None))
    return [_revision(db, key, recs, names, counted, done, found) for key, recs, names, counted, done in found]


def _revision(db, key, recs, names, counted, approved_seq, found) -> Revision:
    """One revision, its base the latest revision of its set approved before its first proposal."""
    first, payload = recs[0], recs[0]["payload"] or {}
    approved = [(done, k[1]) for k, _, _, _, done in found if k[0] == key[0] and done is not None
                and done < first["seq"]]
    base = max(approved)[1] if approved else None
    diff, over = payload.get("diff", ""), payload.get("proposed_over")
    if "proposed_over" not in payload or payload.get("base_revision") != base:
        diff, over = _diff_from_chain(db, key, base, payload)
    return Revision(key[0], key[1], base, first["actor"], first["created_at"], diff, list(payload.get("changes", [])),
                    list(payload.get("domains", [])), first["seq"], sorted({r["actor"] for r in recs}), counted,
                    approved_seq is not None, over, names, approved_seq)


def _diff_from_chain(db, key, base, payload) -> tuple[str, str | None]:
    """A proposal recorded with another base than the chain's (made before this rule, or
    written by a process that claims one): the diff from the chain's approved base, from the
    texts the store holds."""
    from .. import store
    from .golden_diff import review_diff

    claimed = payload.get("base_revision")
    over = payload.get("proposed_over") or (claimed if claimed not in (None, base, key[1]) else None)
    note = (f"(the diff recorded with this proposal was taken against {claimed[:12] if claimed else 'nothing'}; "
            "shown here from the approved base, as the chain says)")
    new_text = store.golden_content(db, key[1])
    base_text = store.golden_content(db, base) if base else ""
    if new_text is None or base_text is None:
        missing = key[1] if new_text is None else base
        return (f"no diff: the file of revision {missing[:12]} is not in the store\n", over)
    return review_diff(key[0], base, base_text, new_text, f"{key[0]}@{key[1][:12]}", proposed_over=over,
                       note=note), over


def latest_approved(db, golden_name: str, settings=None, records=None) -> Revision | None:
    """The golden set's latest approved revision in the chain (the base of its next proposal)."""
    approved = [r for r in list_revisions(db, golden_name, settings, records) if r.approved_seq is not None]
    return max(approved, key=lambda r: r.approved_seq) if approved else None


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
    golden revision is not approved in the chain now, or not by enough approvers covering
    each of the run's high-risk domains (a domain `--domain` gave entries without one is the
    run's, not the revision's); None otherwise. Read at sign-off, not as recorded at
    evaluation: an approval given since counts, and none can be forged in a report
    (docs/decisions.md)."""
    from ..store.runs import stored_golden_name
    from .policy import Policy, policy_of_store

    settings = settings if isinstance(settings, Policy) else policy_of_store(db, settings)
    high_risk = settings.high_risk_of(run)
    if not high_risk or not run.get("golden_hash"):
        return None
    name = stored_golden_name(run)
    proposed = [r for r in (list_revisions(db, name, settings) if name else []) if r.revision == run["golden_hash"]]
    why = _unapproved_for(proposed[0], high_risk, settings) if proposed else \
        "never proposed: `termgate golden propose` it, then an approver approves it"
    if why is None:
        return None
    return FlaggedItem(f"{GOLDEN_ITEM}:-:{run['golden_hash']}", GOLDEN_ITEM, "-", name or "",
                       f"golden set {name!r} revision {run['golden_hash'][:12]} is not approved ({why})")


def _unapproved_for(rev: Revision, high_risk: list[str], settings) -> str | None:
    """Why this revision's approvals do not count for a run with these high-risk domains (None: they do)."""
    if not rev.approved:
        return f"proposed by {', '.join(rev.proposers)}, awaiting approval"
    need = approvals_needed(sorted(set(rev.domains) | set(high_risk)), settings)
    for domain in high_risk:
        have = {a.approver for a in rev.approvals if covers({"domains": a.scope}, domain)}
        if len(have) < need:
            return (f"approved for {', '.join(rev.domains)}, but not for this run's {domain} queries: "
                    f"{len(have)} of {need} approvals cover {domain}")
    return None
