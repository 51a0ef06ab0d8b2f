"""Human sign-off (SPEC §4): accounts, decisions bound to a run's content hash, the audit chain.

Managing accounts needs no login (whoever can write the store administers it), but every
account change is appended to the same hash-chained audit log as the decisions, so what
is changed afterwards is visible. Secrets are stored only as salted scrypt hashes.
"""

from __future__ import annotations

import base64
import getpass
import hashlib
import hmac
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from . import store
from .errors import EvalcoreError, UsageError
from .metrics import normalize_term

__all__ = ["ROLES", "SignoffRefused", "Account", "FlaggedItem", "ReleaseState", "hash_password",
           "verify_password", "add_user", "disable_user", "set_role", "authenticate", "flagged_items",
           "decide", "decide_as", "current_account", "approval_blockers", "release_state", "verify_chain", "ChainReport", "record_hash"]

ROLES = ("viewer", "engineer", "approver", "admin")
CAN_APPROVE = {"approver", "admin"}
CAN_REJECT = {"engineer", "approver", "admin"}
CAN_RUN = {"engineer", "approver", "admin"}
"""Roles that may run evaluations or the harness from the dashboard (SPEC §5)."""
_SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1}


class SignoffRefused(EvalcoreError):
    """A sign-off that is not permitted (exit 4); nothing is recorded."""


@dataclass(frozen=True)
class Account:
    name: str
    role: str
    domains: tuple[str, ...]
    disabled: bool
    aliases: tuple[str, ...] = ()

    def covers(self, domain: str) -> bool:
        return not self.domains or domain in self.domains


@dataclass(frozen=True)
class FlaggedItem:
    """Something a reviewer must look at and acknowledge before approving."""

    key: str
    kind: str
    query_id: str
    query: str
    detail: str


@dataclass
class ReleaseState:
    """Whether a run may ship, from its gate and the decisions on its content hash."""

    status: str  # releasable | not releasable | awaiting sign-off
    exit_code: int
    reasons: list[str] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)


def _now() -> str:
    from .evaluation import utc_now
    return utc_now()


def hash_password(password: str) -> str:
    salt = os.urandom(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, dklen=32, **_SCRYPT)
    return "scrypt${n}${r}${p}$".format(**_SCRYPT) + base64.b64encode(salt).decode() + "$" + \
        base64.b64encode(digest).decode()


def verify_password(password: str, stored: str) -> bool:
    try:
        _, n, r, p, salt, digest = stored.split("$")
        got = hashlib.scrypt(password.encode(), salt=base64.b64decode(salt), dklen=32, n=int(n), r=int(r), p=int(p))
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(got, base64.b64decode(digest))


# ---------------------------------------------------------------- audit chain


def record_hash(record: dict, prev_hash: str) -> str:
    """SHA-256 over the canonical JSON of a record's fields and the previous record's hash."""
    fields = {k: record.get(k) for k in store.AUDIT_COLUMNS if k not in ("record_hash",)}
    fields["prev_hash"] = prev_hash
    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def _append(db, kind: str, actor: str, *, run_id=None, content_hash=None, decision=None, comment=None,
            payload=None) -> dict:
    record = {"created_at": _now(), "kind": kind, "actor": actor, "run_id": run_id, "content_hash": content_hash,
              "decision": decision, "comment": comment, "payload": payload or {}}
    return store.append_audit(db, record, record_hash)


@dataclass(frozen=True)
class ChainReport:
    ok: bool
    records: int
    first_bad: int | None
    message: str
    head: str | None


def verify_chain(db: str | Path, expect_head: str | None = None) -> ChainReport:
    """Recompute every hash in order; name the first record that was edited, removed or reordered.

    The head recorded at append time catches removed trailing records; `expect_head` (a
    head hash kept outside the store, e.g. in a CI log) catches a store rewritten whole.
    """
    records = store.audit_records(db)
    prev, expected_seq = "0" * 64, 1
    for rec in records:
        if rec["seq"] != expected_seq:
            return ChainReport(False, len(records), rec["seq"], f"record {rec['seq']}: expected record "
                               f"{expected_seq} here — a record was removed or reordered", None)
        if rec["prev_hash"] != prev:
            return ChainReport(False, len(records), rec["seq"], f"record {rec['seq']}: prev_hash does not match "
                               "the record before it — records were removed or reordered", None)
        if record_hash(rec, prev) != rec["record_hash"]:
            return ChainReport(False, len(records), rec["seq"], f"record {rec['seq']} ({rec['kind']} by "
                               f"{rec['actor']}): content does not match its hash — the record was edited", None)
        prev, expected_seq = rec["record_hash"], expected_seq + 1
    head = store.audit_head(db)
    if head is not None and (head[0] != len(records) or head[1] != (prev if records else None)):
        missing = len(records) + 1
        return ChainReport(False, len(records), missing, f"record {missing}: missing — the chain's recorded head is "
                           f"record {head[0]}; records at the end were removed", None)
    if expect_head is not None and (not records or not prev.startswith(expect_head)):
        return ChainReport(False, len(records), len(records), f"head is {prev[:16] if records else 'empty'}, "
                           f"expected {expect_head[:16]}: the store was rewritten or truncated", None)
    return ChainReport(True, len(records), None, f"audit chain intact: {len(records)} records", prev)


# ---------------------------------------------------------------- accounts


def _parse_domains(domains) -> list[str]:
    if isinstance(domains, str):
        domains = domains.split(",")
    return [normalize_term(d) for d in (domains or []) if normalize_term(d)]


def add_user(db, name: str, role: str, password: str, domains=None) -> Account:
    if not name or not name.strip():
        raise UsageError("an account needs a name")
    if role not in ROLES:
        raise UsageError(f"unknown role '{role}' (choose from {', '.join(ROLES)})")
    if len(password) < 8:
        raise UsageError("the password needs at least 8 characters")
    if store.get_user(db, name) is not None:
        raise UsageError(f"account '{name}' exists; use `evalcore users set-role` or `disable`")
    scopes = _parse_domains(domains)
    if role == "admin" and scopes:
        raise UsageError("admins approve in every domain; give --domains to approvers only")
    store.insert_user(db, {"name": name, "role": role, "domains": scopes, "password_hash": hash_password(password),
                           "created_at": _now()})
    _append(db, "user_add", getpass.getuser(), payload={"name": name, "role": role, "domains": scopes})
    return Account(name, role, tuple(scopes), False)


def _existing(db, name: str) -> dict:
    row = store.get_user(db, name)
    if row is None:
        raise UsageError(f"unknown account '{name}' (see `evalcore users list`)")
    return row


def disable_user(db, name: str) -> None:
    _existing(db, name)
    store.update_user(db, name, disabled=True)
    _append(db, "user_disable", getpass.getuser(), payload={"name": name})


def set_role(db, name: str, role: str, domains=None) -> None:
    _existing(db, name)
    if role not in ROLES:
        raise UsageError(f"unknown role '{role}' (choose from {', '.join(ROLES)})")
    scopes = None if domains is None else _parse_domains(domains)
    if role == "admin":
        scopes = []  # admins are never domain-scoped
    store.update_user(db, name, role=role, domains=scopes)
    _append(db, "user_set_role", getpass.getuser(), payload={"name": name, "role": role, "domains": scopes})


def authenticate(db, name: str, password: str) -> Account:
    row = store.get_user(db, name)
    if row is None or not verify_password(password, row["password_hash"]):
        raise SignoffRefused(f"wrong account name or password for '{name}'")
    if row["disabled"]:
        raise SignoffRefused(f"account '{name}' is disabled")
    return Account(row["name"], row["role"], tuple(row["domains"] or ()), bool(row["disabled"]))


# ---------------------------------------------------------------- decisions


def flagged_items(db, run_id: str) -> list[FlaggedItem]:
    """Regressed queries (with their term diff), failed critical queries and drift terms."""
    rows = store.flagged_items(db, [run_id])
    return [FlaggedItem(f"{r.kind}:{r.query_id}:{r.term if isinstance(r.term, str) else ''}", r.kind, r.query_id,
                        r.query, r.detail) for r in rows.itertuples()]


def _approval_scope(run: dict, account: Account) -> list[str]:
    domains = list(run["high_risk_domains"] or [])
    if not domains:
        return ["(any)"]
    return [d for d in domains if account.covers(d)]


def decide(db, run_id: str, reviewer: str, password: str, decision: str, comment: str,
           acknowledged: set[str] | None = None, ack_all: bool = False) -> dict:
    """Authenticate, then record an approval or rejection (see decide_as)."""
    account = authenticate(db, reviewer, password)
    return decide_as(db, run_id, account, decision, comment, acknowledged, ack_all)


def current_account(db, name: str) -> Account:
    """The account as stored now (a dashboard session re-checks it before every decision)."""
    row = store.get_user(db, name)
    if row is None:
        raise SignoffRefused(f"unknown account '{name}'")
    if row["disabled"]:
        raise SignoffRefused(f"account '{name}' is disabled")
    return Account(row["name"], row["role"], tuple(row["domains"] or ()), False)


def approval_blockers(db, run: dict, account: Account) -> list[str]:
    """Why this account may not approve this run (empty: it may, once items are acknowledged)."""
    out = []
    if account.role not in CAN_APPROVE:
        out.append(f"role '{account.role}' may not approve (needs approver or admin)")
    if run["gate_decision"] == "fail":
        out.append(f"run {run['run_id']} failed its gate: a failed run cannot be approved")
    if account.name == run["author"]:
        out.append(f"'{account.name}' created run {run['run_id']} and cannot approve it (four-eyes rule)")
    if not _approval_scope(run, account):
        out.append(f"'{account.name}' may approve {', '.join(account.domains)} only; this run is "
                   f"{', '.join(run['high_risk_domains'])}")
    return out


def decide_as(db, run_id: str, account: Account, decision: str, comment: str,
              acknowledged: set[str] | None = None, ack_all: bool = False) -> dict:
    """Record an approval or rejection; raises SignoffRefused (nothing recorded) when not permitted."""
    if decision not in ("approve", "reject"):
        raise UsageError("decision is approve or reject")
    run = store.get_run(db, run_id)
    account = current_account(db, account.name)
    if not comment or not comment.strip():
        raise SignoffRefused("a comment is required for every decision")
    allowed = CAN_APPROVE if decision == "approve" else CAN_REJECT
    if account.role not in allowed:
        raise SignoffRefused(f"role '{account.role}' may not {decision} (needs {' or '.join(sorted(allowed))})")
    items = flagged_items(db, run_id)
    payload = {"role": account.role, "gate": run["gate_decision"], "domains": list(run["domains"] or []),
               "evalcore_version": run["evalcore_version"]}
    if decision == "approve":
        blockers = approval_blockers(db, run, account)
        if blockers:
            raise SignoffRefused(blockers[0])
        scope = _approval_scope(run, account)
        missing = [i for i in items if not ack_all and i.key not in (acknowledged or set())]
        if missing:
            raise SignoffRefused(f"{len(missing)} flagged items are not acknowledged (e.g. {missing[0].kind} "
                                 f"{missing[0].query_id}); review them and acknowledge each, or pass --ack-all")
        payload["approves_domains"] = scope
    payload["acknowledged"] = [i.key for i in items] if decision == "approve" else sorted(acknowledged or [])
    return _append(db, "decision", account.name, run_id=run_id, content_hash=run["content_hash"],
                   decision=decision, comment=comment.strip(), payload=payload)


def release_state(db, run_id: str, settings=None) -> ReleaseState:
    """SPEC §4: fail -> 1; pass -> 0; review -> latest decision per reviewer on this content."""
    from .config import load_settings

    run = store.get_run(db, run_id)
    gate = run["gate_decision"]
    if gate == "fail":
        return ReleaseState("not releasable", 1, ["gate fail"])
    if gate == "pass":
        return ReleaseState("releasable", 0, ["gate pass"])
    settings = settings or load_settings()
    decisions = store.decisions_for(db, run["content_hash"])
    latest: dict[str, dict] = {}
    for d in decisions:
        latest[d["actor"]] = d
    rejected = [d for d in latest.values() if d["decision"] == "reject"]
    if rejected:
        return ReleaseState("not releasable", 1, [f"rejected by {d['actor']}: {d['comment']}" for d in rejected],
                            list(latest.values()))
    # four-eyes holds for every run with this content: its author's approval never counts
    approvals = [d for d in latest.values() if d["decision"] == "approve" and d["actor"] != run["author"]]
    domains = list(run["high_risk_domains"] or []) or ["(any)"]
    missing = []
    for domain in domains:
        need = settings.approvals_for(domain) if domain != "(any)" else 1
        have = len({d["actor"] for d in approvals if domain in d["payload"].get("approves_domains", [])})
        if have < need:
            missing.append(f"{domain}: {have} of {need} approvals")
    if missing:
        return ReleaseState("awaiting sign-off", 3, ["; ".join(missing)],
                            list(latest.values()))
    return ReleaseState("releasable", 0, [f"approved by {', '.join(sorted(d['actor'] for d in approvals))}"],
                        list(latest.values()))
