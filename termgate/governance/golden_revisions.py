"""Golden-set revisions under sign-off (issue 19 items 2 and 3; docs/golden.md).

A reviewer's verdicts on terms become the golden set's next revision (`propose`, a pure
function over the file's bytes: untouched lines stay byte for byte); proposing records the
revision in the audit chain (kind `golden_proposal`) with its text in golden_files, and an
approver scoped to the set's domains, who is not its proposer, approves it (kind
`golden_approval`). Neither kind is a release decision. A revision is its golden hash, the
one termgate computes for runs (termgate.scoring.scorer.loading.golden_hash).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UsageError
from .golden_approvals import (GOLDEN_ITEM, Approval, Revision, approvals_needed, find_revision, golden_flag,
                               is_approved, latest_approved, list_revisions, revision_state)
from ..identity import same_person
from ..scoring.metrics import normalize_term

__all__ = ["DEFAULT_MIN_WEIGHT", "verdicts_for", "QueryChange", "Proposal", "RevisionFile", "Approval", "Revision",
           "propose", "load_revision", "Prepared", "prepare", "record_proposal", "approve", "list_revisions",
           "latest_approved", "find_revision", "is_approved", "approvals_needed", "revision_state", "GOLDEN_ITEM",
           "golden_flag"]

DEFAULT_MIN_WEIGHT = 0.0
"""min_weight of an expected term a synonym verdict adds (SPEC §1.1's default): any weight matches."""
BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class QueryChange:
    """What a revision changes in one golden entry (terms normalised)."""

    query_id: str
    line: int
    query: str
    added_expected: list[str] = field(default_factory=list)
    added_forbidden: list[str] = field(default_factory=list)
    removed_expected: list[str] = field(default_factory=list)
    """Expected terms a forbid verdict moved to the forbidden terms."""
    removed_forbidden: list[str] = field(default_factory=list)
    """Forbidden terms a synonym verdict (without --forbid) moved to the expected terms."""
    verdict_seqs: list[int] = field(default_factory=list)
    """The audit records of the verdicts that made these changes (when they carry one)."""

    def as_dict(self) -> dict:
        return {"query_id": self.query_id, "line": self.line, "added_expected": self.added_expected,
                "added_forbidden": self.added_forbidden, "removed_expected": self.removed_expected,
                "removed_forbidden": self.removed_forbidden, "verdict_seqs": self.verdict_seqs}


@dataclass(frozen=True)
class Proposal:
    """The next revision's bytes, a readable diff, and the changes per query."""

    new_bytes: bytes
    diff: str
    changes: list[QueryChange]
    skipped: list[str] = field(default_factory=list)
    """Why some verdicts changed nothing they could (a query not in this golden set)."""
    summary: str = ""
    """One line per changed query (the head of `diff`), for the diff from the approved base."""


# ---------------------------------------------------------------- the transform (pure)


def _split_lines(data: bytes) -> list[bytes]:
    """Lines as the loader numbers them (ending at \\n), each with its ending."""
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _body(line: bytes, first: bool) -> tuple[bytes, bytes, bytes]:
    """(a BOM it starts with, the JSON text, its line ending)."""
    bom = BOM if first and line.startswith(BOM) else b""
    line = line[len(bom):]
    ending = b"\r\n" if line.endswith(b"\r\n") else b"\n" if line.endswith(b"\n") else b""
    return bom, line[:len(line) - len(ending)], ending


def _latest(verdicts: Iterable) -> dict[tuple[str, str], object]:
    """The latest verdict per (query_id, normalised term): a later verdict overrides an earlier one."""
    ordered = sorted(verdicts, key=lambda v: (str(getattr(v, "created_at", "") or ""), getattr(v, "seq", 0) or 0))
    return {(v.query_id, normalize_term(v.term)): v for v in ordered}


def _apply(obj: dict, wanted: list, min_weight: float) -> tuple[list[str], list[str], list[str], list[str], list]:
    """Change one parsed entry in place; returns (added expected, added forbidden, removed
    expected, removed forbidden, the verdicts that changed something)."""
    added_e, added_f, removed_e, removed_f, used = [], [], [], [], []
    for term, verdict in wanted:
        expected = obj["expected_expansions"]
        forbidden = obj.get("forbidden_terms", [])
        is_expected = any(normalize_term(e["term"]) == term for e in expected)
        is_forbidden = any(normalize_term(t) == term for t in forbidden)
        if bool(verdict.forbid):
            if is_expected:  # the forbid verdict wins: the term leaves the expected terms
                obj["expected_expansions"] = [e for e in expected if normalize_term(e["term"]) != term]
                removed_e.append(term)
            if not is_forbidden:
                obj["forbidden_terms"] = [*forbidden, term]  # a new key goes at the end
                added_f.append(term)
            changed = is_expected or not is_forbidden
        elif verdict.label == "synonym":
            if is_forbidden:
                obj["forbidden_terms"] = [t for t in forbidden if normalize_term(t) != term]
                removed_f.append(term)
            if not is_expected:
                obj["expected_expansions"] = [*obj["expected_expansions"], {"term": term, "min_weight": min_weight}]
                added_e.append(term)
            changed = is_forbidden or not is_expected
        else:  # related or drift without --forbid: the golden set need not change
            changed = False
        if changed:
            used.append(verdict)
    return added_e, added_f, removed_e, removed_f, used


def _summary(change: QueryChange, min_weight: float) -> str:
    parts = [f"+ expected {t!r} (min_weight {min_weight})" for t in change.added_expected]
    parts += [f"+ forbidden {t!r}" for t in change.added_forbidden]
    parts += [f"- expected {t!r} (now forbidden)" for t in change.removed_expected]
    parts += [f"- forbidden {t!r} (now expected)" for t in change.removed_forbidden]
    return f"{change.query_id} (line {change.line}, {change.query!r}): " + "; ".join(parts)


def propose(golden_bytes: bytes, verdicts: Iterable, min_weight: float = DEFAULT_MIN_WEIGHT, *,
            old_label: str = "a/golden.jsonl", new_label: str = "b/golden.jsonl") -> Proposal:
    """The next revision of a golden file (its bytes as read) from verdicts (objects with
    query_id, term, label, forbid, created_at and optionally seq), the latest per query and term:
    a `synonym` verdict adds the term as expected (min_weight `min_weight`), a `forbid` one
    adds it to forbidden_terms. A term never ends up both: a forbid verdict on an expected term
    removes it from expected; a synonym verdict (without forbid) on a forbidden term removes it
    from forbidden. Untouched lines stay byte for byte; a changed line keeps its key order and
    unknown keys, gains new keys at the end and keeps its line ending. The file is expected to
    be a valid golden set (termgate.io.load_golden_set says why not)."""
    if not 0.0 <= min_weight <= 1.0:
        raise UsageError(f"--min-weight {min_weight}: must be in [0, 1]")
    by_query: dict[str, list] = {}
    for (query_id, term), verdict in _latest(verdicts).items():
        by_query.setdefault(query_id, []).append((term, verdict))
    lines, out, changes = _split_lines(golden_bytes), [], []
    for number, line in enumerate(lines, start=1):
        bom, body, ending = _body(line, number == 1)
        if not body.strip():
            out.append(line)
            continue
        obj = json.loads(body.decode("utf-8"))
        wanted = by_query.pop(obj.get("query_id"), None) if isinstance(obj, dict) else None
        if not wanted:
            out.append(line)
            continue
        added_e, added_f, removed_e, removed_f, used = _apply(obj, wanted, min_weight)
        if not used:
            out.append(line)
            continue
        out.append(bom + json.dumps(obj, ensure_ascii=False).encode("utf-8") + ending)
        changes.append(QueryChange(obj["query_id"], number, obj["query"], added_e, added_f, removed_e, removed_f,
                                   sorted(s for s in (getattr(v, "seq", None) for v in used) if s is not None)))
    skipped = [f"{len(left)} verdict{'s' if len(left) != 1 else ''} on query {qid!r}, which is not in this golden set"
               for qid, left in by_query.items()]
    new_bytes = b"".join(out)
    diff = _diff(golden_bytes, new_bytes, changes, min_weight, old_label, new_label)
    return Proposal(new_bytes, diff, changes, skipped, diff.split("\n\n", 1)[0] + "\n" if changes else "")


def _diff(old: bytes, new: bytes, changes: list[QueryChange], min_weight: float, old_label: str,
          new_label: str) -> str:
    """One line per changed query, then the changed lines as a unified diff (no context)."""
    if not changes:
        return "no changes: the verdicts add nothing this golden set does not already say\n"
    head = [f"{len(changes)} quer{'ies' if len(changes) != 1 else 'y'} changed:"]
    head += ["  " + _summary(c, min_weight) for c in changes]
    text = lambda data: [ln.decode("utf-8").rstrip("\r\n") for ln in _split_lines(data.removeprefix(BOM))]  # noqa: E731
    unified = difflib.unified_diff(text(old), text(new), old_label, new_label, n=0, lineterm="")
    return "\n".join(head + [""] + list(unified)) + "\n"


# ---------------------------------------------------------------- revisions in the store


def verdicts_for(db, run_ids=(), golden_name: str | None = None) -> list:
    """The verdicts a proposal reads: those on these runs, or (no runs) every verdict on runs
    of the named golden set (termgate.governance.verdicts.list_verdicts)."""
    try:
        from .verdicts import list_verdicts
    except ImportError:
        raise UsageError("this termgate has no term verdicts yet (termgate.governance.verdicts): nothing to propose from; "
                         "propose the file as it is without --from-verdicts") from None
    run_ids = list(run_ids or ())
    return list_verdicts(db, run_ids=run_ids or None, golden_name=None if run_ids else golden_name)


@dataclass(frozen=True)
class RevisionFile:
    """A golden file as termgate reads it for a run: its text, revision (golden hash) and domains."""

    path: str
    text: str
    revision: str
    domains: list[str]


def load_revision(path: str | Path) -> RevisionFile:
    """Validate a golden file (InputError naming line and field) and compute its revision
    exactly as `evaluate` does (the scorer's golden hash over the parsed values)."""
    from ..io import load_golden_set
    from ..scoring.scorer.database import connect_scorer
    from ..scoring.scorer.loading import golden_hash, load_arrow

    golden = load_golden_set(path)
    con = connect_scorer()
    try:
        load_arrow(con, golden.table(), None)
        revision = golden_hash(con)
    finally:
        con.close()
    domains = sorted({item.domain for item in golden.items if item.domain})
    return RevisionFile(str(path), Path(path).read_text(encoding="utf-8-sig"), revision, domains)


@dataclass(frozen=True)
class Prepared:
    """A proposal's place in the chain: its approved base, the file it was made over when that
    is not the base, and the diff an approver reads (golden_diff.review_diff)."""

    base_revision: str | None
    proposed_over: str | None
    diff: str


def prepare(db, golden_name: str, over: RevisionFile | None, new: RevisionFile, proposal: Proposal | None,
            records=None) -> Prepared:
    """The diff of `new` from the golden set's latest approved revision as the chain stores
    it (the whole file for a first revision); `over` is the file the verdicts were applied to
    (None: `new` proposed as it is), named when it is not that approved revision."""
    from .. import store
    from .golden_approvals import latest_approved
    from .golden_diff import review_diff

    latest = latest_approved(db, golden_name, records=records)
    base = latest.revision if latest else None
    base_text = store.golden_content(db, base) if base else ""
    if base_text is None:
        raise UsageError(f"the approved revision {base[:12]} of {golden_name!r} has no file in the store: "
                         "nothing to diff against; `termgate store copy` from the store that holds it")
    proposed_over = over.revision if over is not None and over.revision != base else None
    diff = review_diff(golden_name, base, base_text, new.text, new.path, proposed_over=proposed_over,
                       summary=proposal.summary if proposal else "")
    return Prepared(base, proposed_over, diff)


def record_proposal(db, golden_name: str, over: RevisionFile | None, new: RevisionFile, proposal: Proposal | None,
                    account, expected: Prepared | None = None) -> dict:
    """Store the revision's text (and the text it was made over) in golden_files and append
    a `golden_proposal` record (content_hash = the revision; actor = `account`, an account
    signed in: signoff.authenticate, or single sign-on) in one transaction. `over` None: the
    file itself is proposed as a revision (no verdicts). Its base and diff are `prepare`'s,
    from the chain; `expected`, what the caller showed, must still be them. SignoffRefused
    (nothing recorded) for an unknown, disabled or viewer account, or a broken chain."""
    from ..clock import utc_now
    from ..store.golden import save_golden_proposal
    from .signoff import SignoffRefused, current_account, verify_chain
    from .verdicts import CAN_RECORD

    if not golden_name or not golden_name.strip():
        raise UsageError("--golden-name: empty; give the golden set a name, or leave the option out")
    golden_name, via = golden_name.strip(), getattr(account, "via", None)
    account = current_account(db, account.name)
    if account.role not in CAN_RECORD:
        raise SignoffRefused(f"role '{account.role}' may not propose a golden-set revision "
                             "(needs engineer, approver or admin)")
    chain = verify_chain(db, runs=None)
    if not chain.ok:
        raise SignoffRefused(f"the audit chain is broken, nothing can be recorded on it: {chain.message}")
    prepared = prepare(db, golden_name, over, new, proposal, chain.log)
    if expected is not None and expected != prepared:
        raise UsageError(f"the approved revision of {golden_name!r} changed while proposing: nothing recorded; "
                         "propose again")
    now, changes = utc_now(), proposal.changes if proposal else []
    payload = {"golden_name": golden_name, "revision": new.revision, "base_revision": prepared.base_revision,
               "proposed_over": prepared.proposed_over, "domains": new.domains, "diff": prepared.diff,
               "changes": [c.as_dict() for c in changes],
               "verdict_seqs": sorted({s for c in changes for s in c.verdict_seqs}), "path": new.path}
    if via is not None:
        payload["sso"] = via.claims()
    files = [(f.revision, f.path, f.text, now) for f in (over, new) if f is not None]
    what = f"{len(changes)} queries changed by verdicts" if proposal else "revision proposed as it is"
    where = (f"over unapproved {prepared.proposed_over[:12]}, " if prepared.proposed_over else "") + (
        f"from approved {prepared.base_revision[:12]}" if prepared.base_revision else "first revision")
    record = {"created_at": now, "kind": "golden_proposal", "actor": account.name, "run_id": None,
              "content_hash": new.revision, "decision": None, "comment": f"{what} ({where})", "payload": payload}
    return save_golden_proposal(db, files, record)


def approve(db, golden_name: str, revision: str, account, comment: str) -> dict:
    """Record `account`'s approval of a proposed revision (kind `golden_approval`,
    content_hash = the revision). SignoffRefused (nothing recorded) unless the revision names
    its domains, the account, as stored now, is an approver or admin whose scope covers every
    one of them, proposed it under none of its names or aliases (four-eyes, against every
    name and alias the chain gave its proposers), gives a comment, and the audit chain is
    intact. Whether the approval counts is read from the chain (golden_approvals.list_revisions),
    so the record claims no role or domains."""
    from .. import store
    from .golden_approvals import NO_DOMAIN
    from .signoff import CAN_APPROVE, SignoffRefused, current_account, verify_chain

    found = find_revision(db, golden_name, revision)
    via = getattr(account, "via", None)
    account = current_account(db, account.name)
    if account.role not in CAN_APPROVE:
        raise SignoffRefused(f"role '{account.role}' may not approve a golden-set revision (needs approver or admin)")
    proposer = next((p for p in found.proposer_names if same_person(p, account.name, account.aliases)), None)
    if proposer is not None:
        raise SignoffRefused(f"'{account.name}' proposed revision {found.revision[:12]} of {golden_name!r} "
                             f"(as {proposer!r}) and cannot approve it (four-eyes rule)")
    if not found.domains:
        raise SignoffRefused(f"golden set {golden_name!r} revision {found.revision[:12]} {NO_DOMAIN}")
    outside = [d for d in found.domains if not account.covers(d)]
    if outside:
        raise SignoffRefused(f"'{account.name}' may approve {', '.join(account.domains)} only; golden set "
                             f"{golden_name!r} also holds {', '.join(outside)} queries")
    if not comment or not comment.strip():
        raise SignoffRefused("a comment is required for every approval")
    chain = verify_chain(db, runs=None)
    if not chain.ok:
        raise SignoffRefused(f"the audit chain is broken, nothing can be recorded on it: {chain.message}")
    from ..clock import utc_now

    payload = {"golden_name": found.name, "revision": found.revision, "proposal_seq": found.seq}
    if via is not None:
        payload["sso"] = via.claims()
    return store.append_audit(db, {"created_at": utc_now(), "kind": "golden_approval", "actor": account.name,
                                   "run_id": None, "content_hash": found.revision, "decision": None,
                                   "comment": comment.strip(), "payload": payload})
