"""The release policy in the store (issue 32 item 4; docs/spec.md §1.4 and §4).

What makes a run high-risk and how many approvals it needs is not whatever a process's
toml file or environment says: it is a `policy` record in the audit chain, set by an
admin (`termgate policy set`). A change that loosens the policy in any respect — a domain
no longer high-risk, fewer approvals, a lower kappa floor, a lower threshold floor — is
first a `policy_proposal` and takes force only when a second admin approves it
(`termgate policy approve`). Which records count is read from the chain: the actor's
chained account (audit_chain.actor_states) must be an enabled admin at that record.

A store with no policy record has the default policy (legal and medical high-risk, one
approval each, no kappa floor, no threshold floors). A local setting (termgate.toml, the
environment) may tighten the policy for one process — a domain added, more approvals, a
higher kappa floor — and the output says so; it never loosens it.
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, Problem, SignoffRefused, UsageError
from ..identity import canonical_domain
from .audit_chain import actor_states

__all__ = ["Policy", "PolicyState", "DEFAULT_POLICY", "FLOOR_KEYS", "policy_state", "effective_policy",
           "policy_of_store", "load_policy_file", "loosenings", "set_policy", "approve_policy", "POLICY_KINDS"]

FLOOR_KEYS = ("precision_min", "recall_min", "drift_min", "mean_precision_min", "mean_recall_min", "recall_floor")
"""Thresholds (SPEC §1.3) a high-risk run's thresholds file may not set below the policy's floor."""
POLICY_KINDS = ("policy", "policy_proposal")
CAN_SET = "admin"


@dataclass(frozen=True)
class Policy:
    """The rules a run is gated under. Reads like Settings for the keys they share
    (high_risk_domains, approvals_for, drift_kappa_min), so either may be passed where
    only those are read."""

    high_risk_domains: tuple[str, ...] = ("legal", "medical")
    approvals_required: dict[str, int] = field(default_factory=dict)
    """Approvals a high-risk domain needs; a domain not listed needs 1."""
    drift_kappa_min: float | None = None
    threshold_floors: dict[str, float] = field(default_factory=dict)
    """For runs with a high-risk domain: each of FLOOR_KEYS at least this."""
    seq: int | None = None
    """The `policy` record it comes from (None: the default of a store with none)."""
    tightened: tuple[str, ...] = ()
    """What local settings added for this process (empty: the store's policy as it is)."""

    def approvals_for(self, domain: str) -> int:
        return int(self.approvals_required.get(domain, 1))

    def high_risk_of(self, run: dict) -> list[str]:
        """A stored run's high-risk domains now: those recorded at evaluation and those of its
        domains this policy calls high-risk (a domain made high-risk since counts)."""
        recorded = list(run.get("high_risk_domains") or [])
        return recorded + [d for d in (run.get("domains") or []) if d in self.high_risk_domains and d not in recorded]

    def as_dict(self) -> dict:
        """The policy's content (what a record stores and its hash covers)."""
        return {"high_risk_domains": sorted(self.high_risk_domains),
                "approvals_required": {k: int(v) for k, v in sorted(self.approvals_required.items()) if int(v) != 1},
                "drift_kappa_min": self.drift_kappa_min,
                "threshold_floors": {k: float(v) for k, v in sorted(self.threshold_floors.items())}}

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()

    def label(self) -> str:
        """How outputs name it: `policy record N` or `default policy`, plus what was tightened."""
        where = f"policy record {self.seq}" if self.seq else "default policy (no policy record)"
        return where + (f", tightened locally: {'; '.join(self.tightened)}" if self.tightened else "")

    def recorded(self) -> dict:
        """What a run records about the policy it was gated under."""
        return {"record": self.seq, "digest": self.digest, "tightened": list(self.tightened)}

    def floor_problems(self, thresholds) -> list[str]:
        """Each threshold below its floor, as `KEY VALUE is below the policy's floor F`."""
        out = []
        for key, floor in sorted(self.threshold_floors.items()):
            value = getattr(thresholds, key, None)
            if value is not None and value < floor:
                out.append(f"{key} {value:g} is below the policy's floor {floor:g} for high-risk domains "
                           f"({self.label()})")
        return out


DEFAULT_POLICY = Policy()


def _from_dict(data: dict, seq: int | None = None) -> Policy:
    return Policy(tuple(data.get("high_risk_domains") or ()), dict(data.get("approvals_required") or {}),
                  data.get("drift_kappa_min"), dict(data.get("threshold_floors") or {}), seq)


def loosenings(old: Policy, new: Policy) -> list[str]:
    """Every way `new` is looser than `old` (empty: as strict or stricter in every respect)."""
    out = [f"{d} no longer high-risk" for d in old.high_risk_domains if d not in new.high_risk_domains]
    for d in sorted(set(old.high_risk_domains) & set(new.high_risk_domains)):
        if new.approvals_for(d) < old.approvals_for(d):
            out.append(f"{d} needs {new.approvals_for(d)} approval{'s' if new.approvals_for(d) != 1 else ''} "
                       f"instead of {old.approvals_for(d)}")
    if old.drift_kappa_min is not None and (new.drift_kappa_min is None or new.drift_kappa_min < old.drift_kappa_min):
        out.append(f"drift_kappa_min {new.drift_kappa_min} below {old.drift_kappa_min}")
    for key, floor in old.threshold_floors.items():
        if new.threshold_floors.get(key, 0.0) < floor:
            out.append(f"floor {key} {new.threshold_floors.get(key, 0.0):g} below {floor:g}")
    return out


@dataclass(frozen=True)
class PolicyState:
    """The policy in force in a store, from its chain."""

    policy: Policy
    pending: list[dict] = field(default_factory=list)
    """Proposals that loosen the policy and await a second admin: {"seq", "actor", "policy", "loosens"}."""
    ignored: list[str] = field(default_factory=list)
    """Policy records that do not count, and why."""
    history: list[dict] = field(default_factory=list)
    """Every policy record that took force, oldest first: {"seq", "actor", "approved_by", "created_at"}."""


def _is_admin(state: dict | None) -> str | None:
    if state is None:
        return "no such account"
    if state.get("disabled"):
        return "account disabled"
    return None if state.get("role") == CAN_SET else f"role {state.get('role')!r} is not admin"


def policy_state(records) -> PolicyState:
    """Replay the chain's policy records. A `policy` record takes force when its actor was an
    enabled admin then and it loosens nothing, or it approves (payload `proposal`) a proposal
    of exactly this policy, made by another admin over the policy then in force."""
    states = actor_states(records)
    current, pending, ignored, history = DEFAULT_POLICY, {}, [], []
    for rec in records:
        if rec["kind"] not in POLICY_KINDS:
            continue
        payload = rec["payload"] or {}
        why = _is_admin(states.get(rec["seq"]))
        if why:
            ignored.append(f"record {rec['seq']}: {rec['kind']} by {rec['actor']!r} does not count ({why} then)")
            continue
        new = _from_dict(payload.get("policy") or {}, rec["seq"])
        if rec["kind"] == "policy_proposal":
            pending[rec["seq"]] = {"seq": rec["seq"], "actor": rec["actor"], "policy": new,
                                   "base": payload.get("base"), "loosens": loosenings(current, new),
                                   "created_at": rec["created_at"]}
            continue
        loosens = loosenings(current, new)
        approved_by = None
        if loosens:
            proposal = pending.get(payload.get("proposal"))
            if proposal is None or proposal["policy"].digest != new.digest:
                ignored.append(f"record {rec['seq']}: policy by {rec['actor']!r} loosens the policy "
                               f"({loosens[0]}) without a matching proposal; it does not count")
                continue
            if proposal["actor"] == rec["actor"]:
                ignored.append(f"record {rec['seq']}: {rec['actor']!r} approved their own proposal; a loosening "
                               "needs a second admin")
                continue
            if proposal["base"] != current.seq:
                ignored.append(f"record {rec['seq']}: the proposal it approves was made over another policy")
                continue
            approved_by = rec["actor"]
            proposer = proposal["actor"]
        else:
            proposer = rec["actor"]
        current = new
        pending = {}  # a proposal is over the policy in force when it was made
        history.append({"seq": rec["seq"], "actor": proposer, "approved_by": approved_by,
                        "created_at": rec["created_at"]})
    return PolicyState(current, list(pending.values()), ignored, history)


def effective_policy(records, settings=None) -> Policy:
    """The store's policy in force, tightened (never loosened) by what local settings state
    explicitly (Settings.policy_overrides: a config file key or an environment variable)."""
    policy = policy_state(records).policy
    local = getattr(settings, "policy_overrides", None) or {}
    tightened = []
    domains = list(policy.high_risk_domains)
    for d in local.get("high_risk_domains", ()):
        if d not in domains:
            domains.append(d)
            tightened.append(f"{d} high-risk")
    approvals = dict(policy.approvals_required)
    for d, n in (local.get("approvals_required") or {}).items():
        if int(n) > policy.approvals_for(d):
            approvals[d] = int(n)
            tightened.append(f"{d} needs {n} approvals")
    kappa = policy.drift_kappa_min
    local_kappa = local.get("drift_kappa_min")
    if local_kappa is not None and (kappa is None or local_kappa > kappa):
        kappa = float(local_kappa)
        tightened.append(f"drift_kappa_min {local_kappa:g}")
    if not tightened:
        return policy
    return Policy(tuple(domains), approvals, kappa, dict(policy.threshold_floors), policy.seq, tuple(tightened))


def policy_of_store(db, settings=None) -> Policy:
    """effective_policy of a store's chain (the default policy for a store not made yet)."""
    from .. import store
    from ..config import load_settings

    records = store.audit_records(db)
    return effective_policy(records, settings if settings is not None else load_settings())


POLICY_KEYS = {"high_risk_domains", "approvals_required", "drift_kappa_min", "threshold_floors"}


def load_policy_file(path: str | Path) -> Policy:
    """A whole policy from a TOML file (the form `termgate policy show --toml` prints);
    InputError naming the file, line and key."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
        data = tomllib.loads(text)
    except FileNotFoundError:
        raise InputError([Problem(str(path), 0, "policy", "file not found")]) from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        from ..io import toml_error_line
        raise InputError([Problem(str(path), toml_error_line(exc), "toml", str(exc))]) from None

    def problem(key: str, message: str) -> InputError:
        index = text.find(key)
        return InputError([Problem(str(path), text.count("\n", 0, index) + 1 if index >= 0 else 1, key, message)])

    unknown = sorted(set(data) - POLICY_KEYS)
    if unknown:
        raise problem(unknown[0], f"unknown key (known: {', '.join(sorted(POLICY_KEYS))})")
    domains = data.get("high_risk_domains", [])
    if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
        raise problem("high_risk_domains", "must be a list of strings")
    try:
        domains = [canonical_domain(d, "high_risk_domains") for d in domains]
    except UsageError as exc:
        raise problem("high_risk_domains", str(exc)) from None
    approvals = data.get("approvals_required", {})
    if not isinstance(approvals, dict) or not all(type(v) is int and v >= 1 for v in approvals.values()):
        raise problem("approvals_required", "must be a table of domain = whole number ≥ 1")
    try:
        approvals = {canonical_domain(k, "approvals_required"): v for k, v in approvals.items()}
    except UsageError as exc:
        raise problem("approvals_required", str(exc)) from None
    kappa = data.get("drift_kappa_min")
    if kappa is not None and (type(kappa) not in (int, float) or not -1 <= kappa <= 1):
        raise problem("drift_kappa_min", "must be a number in [-1, 1] (a Cohen's kappa), such as 0.6")
    floors = data.get("threshold_floors", {})
    if not isinstance(floors, dict):
        raise problem("threshold_floors", f"must be a table of {', '.join(FLOOR_KEYS)} = number in [0, 1]")
    for key, value in floors.items():
        if key not in FLOOR_KEYS:
            raise problem(key, f"unknown threshold floor (known: {', '.join(FLOOR_KEYS)})")
        if type(value) not in (int, float) or not 0 <= value <= 1:
            raise problem(key, "must be a number in [0, 1]")
    return Policy(tuple(dict.fromkeys(domains)), approvals, None if kappa is None else float(kappa),
                  {k: float(v) for k, v in floors.items()})


def to_toml(policy: Policy) -> str:
    """The policy as a TOML file `policy set` reads back."""
    d = policy.as_dict()
    lines = [f"high_risk_domains = {json.dumps(d['high_risk_domains'], ensure_ascii=False)}"]
    if d["drift_kappa_min"] is not None:
        lines.append(f"drift_kappa_min = {d['drift_kappa_min']}")
    lines.append("")
    lines.append("[approvals_required]")
    lines += [f"{json.dumps(k, ensure_ascii=False)} = {v}" for k, v in d["approvals_required"].items()]
    lines.append("")
    lines.append("[threshold_floors]")
    lines += [f"{k} = {v}" for k, v in d["threshold_floors"].items()]
    return "\n".join(lines) + "\n"


def _append(db, kind: str, account, payload: dict, comment: str | None) -> dict:
    from .. import store
    from ..clock import utc_now

    return store.append_audit(db, {"created_at": utc_now(), "kind": kind, "actor": account.name, "run_id": None,
                                   "content_hash": None, "decision": None, "comment": comment,
                                   "payload": payload})


def _checked(db, account):
    from .accounts import current_account
    from .audit_chain import verify_chain

    account = current_account(db, account.name)
    if account.role != CAN_SET:
        raise SignoffRefused(f"role '{account.role}' may not change the policy (needs admin)")
    chain = verify_chain(db, runs=None)
    if not chain.ok:
        raise SignoffRefused(f"the audit chain is broken, nothing can be recorded on it: {chain.message}")
    return account, chain


def set_policy(db, account, new: Policy, comment: str | None = None) -> tuple[dict, list[str]]:
    """Record `new` as the policy: in force at once when it loosens nothing, else a
    proposal a second admin approves. Returns (the record, what it loosens)."""
    account, chain = _checked(db, account)
    state = policy_state(chain.log)
    loosens = loosenings(state.policy, new)
    payload = {"policy": new.as_dict(), "base": state.policy.seq}
    return _append(db, "policy_proposal" if loosens else "policy", account, payload, comment), loosens


def approve_policy(db, account, proposal_seq: int, comment: str | None = None) -> dict:
    """A second admin approves a pending proposal: the proposed policy takes force."""
    account, chain = _checked(db, account)
    state = policy_state(chain.log)
    proposal = next((p for p in state.pending if p["seq"] == proposal_seq), None)
    if proposal is None:
        raise UsageError(f"no pending policy proposal at record {proposal_seq} (see `termgate policy show`)")
    if proposal["actor"] == account.name:
        raise SignoffRefused(f"'{account.name}' proposed record {proposal_seq}: a change that loosens the policy "
                             "needs a second admin")
    payload = {"policy": proposal["policy"].as_dict(), "base": state.policy.seq, "proposal": proposal_seq}
    return _append(db, "policy", account, payload, comment)
