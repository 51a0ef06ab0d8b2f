"""Verdicts on terms (issue 19 item 1): a reviewer's label on one generated term of one
query of one run — a correct synonym the golden set lacks, a related term, or confirmed
drift, optionally forbidden from now on.

Each verdict is one record in the hash-chained audit log (kind `verdict`, actor the
reviewer, bound to the run's content hash), so who said what about which term is as
traceable as a release decision. A verdict is never a decision: release state ignores it.
Every verdict stays in the log; for each reviewer, run, query and term the latest counts.
It also records what the run's drift judge said of the term, so the judge's agreement with
reviewers can be measured (termgate.governance.agreement).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass

from .. import store
from .accounts import Account, current_account
from .audit_chain import actor_states, verify_chain
from ..clock import utc_now
from ..errors import SignoffRefused, UsageError
from ..identity import fold_name
from ..scoring.metrics import normalize_term
from ..store.runs import stored_golden_name
from ..store.verdicts import unflagged_false_positives, verdict_query

__all__ = ["LABELS", "CAN_RECORD", "Verdict", "VerdictTarget", "check_target", "record_verdict", "list_verdicts",
           "unflagged_sample", "judge_name"]

LABELS = ("synonym", "related", "drift")
"""synonym: a correct synonym missing from the golden set; related: not drift, not a
synonym either; drift: confirmed drift."""
CAN_RECORD = {"engineer", "approver", "admin"}
"""Roles that may record verdicts."""
KIND = "verdict"


@dataclass(frozen=True)
class Verdict:
    """One reviewer's standing verdict on one term (the latest of theirs on it)."""

    seq: int
    """Its audit record."""
    created_at: str
    """When it was recorded (UTC ISO 8601)."""
    reviewer: str
    """The account that recorded it."""
    role: str
    """The reviewer's role then."""
    run_id: str
    content_hash: str
    """The run's content hash (SPEC §4)."""
    query_id: str
    term: str
    """Normalised (SPEC §2 rule 1)."""
    label: str
    """synonym, related or drift."""
    forbid: bool
    """Forbidden from now on."""
    comment: str | None
    domain: str | None
    """The query's domain."""
    judge_verdict: str
    """What the run's drift judge said of the term: drift, unjudged or not flagged."""
    term_kind: str
    """TP (a matched term), FP (a false positive the judge was asked about), underweight or
    forbidden (false positives the judge is never asked about)."""
    judge_config: str | None
    """The run's drift-judge configuration (JSON), as stored with the run."""
    golden_name: str | None
    golden_hash: str | None

    @property
    def drift(self) -> bool:
        """The reviewer's label as drift or not (synonym and related are not drift)."""
        return self.label == "drift"


@dataclass(frozen=True)
class VerdictTarget:
    """A (run, query, term) a verdict may name, with what the run stored about it."""

    run: dict
    query: dict
    term: str
    judge_verdict: str
    term_kind: str


def _judge_verdict(row: dict) -> str:
    if row["drift"]:
        return "drift"
    return "unjudged" if row["unjudged"] else "not flagged"


def _term_kind(row: dict, query: dict) -> str:
    if row["kind"] == "TP":
        return "TP"
    if row["drift"] and row["reason"] == "forbidden term":
        return "forbidden"
    return "underweight" if row["term"] in (query["expected_terms"] or []) else "FP"


def check_target(db, run_id: str, query_id: str, term: str) -> VerdictTarget:
    """The run, query and term a verdict names; UsageError (exit 2) unless the run is
    stored, has the query, and generated the term for it (compared normalised)."""
    run = store.get_run(db, run_id)  # UnknownRunError, a UsageError
    query, terms = verdict_query(db, run_id, query_id)
    if query is None:
        raise UsageError(f"run {run_id} has no query {query_id!r} (see `termgate show {run_id}`)")
    wanted = normalize_term(term)
    rows = {r["term"]: r for r in terms}
    if not wanted or wanted not in rows:
        shown = ", ".join(list(rows)[:10]) + (" …" if len(rows) > 10 else "")
        raise UsageError(f"query {query_id} of run {run_id} did not generate {wanted or term!r} "
                         f"(its generated terms: {shown or 'none'})")
    row = rows[wanted]
    return VerdictTarget(run, query, wanted, _judge_verdict(row), _term_kind(row, query))


def record_verdict(db, account: Account, run_id: str, query_id: str, term: str, label: str, forbid: bool,
                   comment: str | None) -> dict:
    """Record a verdict by an authenticated account (as signoff.decide_as takes it: the
    account is read again, so a disabled or demoted one is refused); returns the stored
    audit record. SignoffRefused (nothing recorded) for a role below engineer or a broken
    audit chain; UsageError for an unknown label, run, query or term."""
    if label not in LABELS:
        raise UsageError(f"label {label!r}: choose one of {', '.join(LABELS)}")
    if not isinstance(forbid, bool):
        raise UsageError("forbid is true or false")
    target = check_target(db, run_id, query_id, term)
    via = account.via
    account = current_account(db, account.name)
    if account.role not in CAN_RECORD:
        raise SignoffRefused(f"role '{account.role}' may not record verdicts (needs engineer, approver or admin)")
    chain = verify_chain(db, runs=[run_id])
    if not chain.ok:
        raise SignoffRefused(f"the audit chain is broken, nothing can be recorded on it: {chain.message}")
    run = target.run
    payload = {"query_id": query_id, "term": target.term, "label": label, "forbid": forbid, "role": account.role,
               "domain": target.query["domain"], "judge_verdict": target.judge_verdict,
               "term_kind": target.term_kind, "judge_config": run["drift_judge_config"],
               "golden_name": stored_golden_name(run), "golden_hash": run["golden_hash"]}
    if via is not None:
        payload["sso"] = via.claims()
    text = (comment or "").strip() or None
    return store.append_audit(db, {"created_at": utc_now(), "kind": KIND, "actor": account.name, "run_id": run_id,
                                   "content_hash": run["content_hash"], "decision": None, "comment": text,
                                   "payload": payload})


def _verdict(record: dict, role: str) -> Verdict:
    p = record["payload"]
    return Verdict(record["seq"], record["created_at"], record["actor"], role, record["run_id"],
                   record["content_hash"], p["query_id"], p["term"], p["label"], bool(p.get("forbid")),
                   record["comment"], p.get("domain"), p.get("judge_verdict", "not flagged"),
                   p.get("term_kind", "FP"), p.get("judge_config"), p.get("golden_name"), p.get("golden_hash"))


def list_verdicts(db, run_ids=None, golden_name: str | None = None, domain: str | None = None) -> list[Verdict]:
    """The standing verdicts: for each reviewer, run, query and term the latest (earlier
    ones stay in the audit log), oldest first; only these runs, golden set (by name) and
    domain when given. A verdict counts only when its reviewer's account, as the chain
    stated it just before that record, existed, was enabled and had a role in CAN_RECORD
    (issue 32): the role is that account's, never what the record claims."""
    records = store.audit_records(db)
    states = actor_states(records)
    wanted = None if run_ids is None else set(run_ids)
    latest: dict[tuple, Verdict] = {}
    for record in records:
        if record["kind"] != KIND or (wanted is not None and record["run_id"] not in wanted):
            continue
        state = states.get(record["seq"])
        if state is None or state.get("disabled") or state.get("role") not in CAN_RECORD:
            continue
        v = _verdict(record, state["role"])
        key = (fold_name(v.reviewer), v.run_id, v.query_id, v.term)
        latest.pop(key, None)
        latest[key] = v  # re-inserted: the dict keeps the latest's order
    wanted_domain = normalize_term(domain) if domain else None
    return [v for v in latest.values()
            if (golden_name is None or v.golden_name == golden_name)
            and (wanted_domain is None or v.domain == wanted_domain)]


def unflagged_sample(db, run_id: str, n: int, seed: int) -> list[tuple[str, str]]:
    """A reproducible random sample of `n` (query_id, term) false positives of the run that
    its drift judge did not flag and no reviewer has a standing verdict on yet (all of them
    when fewer), in golden-set order: verdicts on these measure agreement where the judge
    said "not drift" too."""
    store.get_run(db, run_id)
    if n < 0:
        raise UsageError("the sample size is a whole number ≥ 0")
    judged = {(v.query_id, v.term) for v in list_verdicts(db, [run_id])}
    population = [item for item in unflagged_false_positives(db, run_id) if item not in judged]
    if n >= len(population):
        return population
    picked = sorted(random.Random(f"{seed}:{run_id}").sample(range(len(population)), n))
    return [population[i] for i in picked]


def judge_name(config: str | None) -> str:
    """A short label of a stored drift-judge configuration: its judge's name."""
    try:
        return json.loads(config or "{}").get("judge", "?")
    except (ValueError, AttributeError):
        return "?"
