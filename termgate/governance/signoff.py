"""Human sign-off (SPEC §4): accounts, decisions bound to a run's content hash, the audit chain.

Every account change is appended to the same hash-chained audit log as the decisions. On a
signed store (governance.trust, governance.signatures) a change counts only when an admin's
key signs it (the CLI signs in as `--admin`); on a store with no trust root whoever can
write the store administers it (docs/security.md's threat model). Passwords are stored
only as salted scrypt hashes; an account's signing key only sealed by its password.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import getpass
import hashlib
import hmac
import math
import os
import time
from dataclasses import dataclass, field

from .. import store
from .accounts import Account, account_of, current_account
from .audit_chain import ChainReport, actor_states, covers, parse_head, verify_chain
from .policy import effective_policy
from ..errors import ChainMoved, SignoffRefused, UsageError
from .flagged import FlaggedItem
from ..identity import canonical_name, fold_name, same_person
from ..scoring.metrics import normalize_term
from ..store.records import SSO_PASSWORD_HASH, record_hash

__all__ = ["ROLES", "CAN_RUN", "SignoffRefused", "Account", "FlaggedItem", "ReleaseState", "hash_password",
           "verify_password", "add_user", "disable_user", "set_role", "set_password", "set_aliases", "authenticate",
           "signin_delay", "refuse_sso", "owner_of", "flagged_items", "decide", "decide_as", "current_account", "approval_blockers",
           "release_state", "release_states", "unsigned_state", "is_author", "verify_chain", "ChainReport", "record_hash", "parse_head"]

ROLES = ("viewer", "engineer", "approver", "admin")
CAN_APPROVE = {"approver", "admin"}
CAN_REJECT = {"engineer", "approver", "admin"}
CAN_RUN = {"engineer", "approver", "admin"}
"""Roles that may run evaluations or the harness from the dashboard (SPEC §5)."""
_SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1}
MAX_MOVES = 10
"""Times a decision is linked again onto a head that moved (other reviewers) before giving up."""


@dataclass
class ReleaseState:
    """Whether a run may ship, from its gate and the decisions on its content hash."""

    status: str  # releasable | not releasable | awaiting sign-off
    exit_code: int
    reasons: list[str] = field(default_factory=list)
    decisions: list[dict] = field(default_factory=list)
    chain: ChainReport | None = None  # the verification this state counted on


def _now() -> str:
    from ..clock import utc_now
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


def _append(db, kind: str, actor: str, *, run_id=None, content_hash=None, decision=None, comment=None,
            payload=None) -> dict:
    record = {"created_at": _now(), "kind": kind, "actor": actor, "run_id": run_id, "content_hash": content_hash,
              "decision": decision, "comment": comment, "payload": payload or {}}
    return store.append_audit(db, record)


# ---------------------------------------------------------------- accounts


def _parse_domains(domains) -> list[str]:
    if isinstance(domains, str):
        domains = domains.split(",")
    return [normalize_term(d) for d in (domains or []) if normalize_term(d)]


def _parse_aliases(aliases) -> list[str]:
    if isinstance(aliases, str):
        aliases = aliases.split(",")
    return sorted({canonical_name(a, "alias") for a in (aliases or []) if a.strip()})


def _check_password(password: str) -> None:
    if not password.strip():
        raise UsageError("the password is only white space; choose one with at least 8 other characters")
    if len(password) < 8:
        raise UsageError("the password needs at least 8 characters")


def owner_of(db, identity: str) -> str | None:
    """The account whose name or alias is this canonical identity (None: no account)."""
    for row in store.users_rows(db):
        if identity == row["name"] or identity in (row["aliases"] or []):
            return row["name"]
    return None


def _check_free(db, identities, owner: str | None = None) -> None:
    for identity in identities:
        taken = owner_of(db, identity)
        if taken is not None and taken != owner:
            raise UsageError(f"{identity!r} is already account {taken!r} or one of its aliases")


_acting: contextvars.ContextVar[str | None] = contextvars.ContextVar("termgate_acting_admin", default=None)


@contextlib.contextmanager
def acting_as(name: str):
    """Account changes inside are recorded as made by admin `name` (signed in by the caller)."""
    token = _acting.set(name)
    try:
        yield name
    finally:
        _acting.reset(token)


def _actor() -> str:
    """Who changes an account: the admin whose key signs (a signed store), else the admin
    signed in (acting_as), else the OS user."""
    from ..signing import current_signer

    signer = current_signer({})
    if signer is not None and signer.holder:
        return signer.holder
    return _acting.get() or fold_name(getpass.getuser())


def _key_payload(db, name: str, password: str | None) -> dict:
    """On a signed store (an admin's key is signing), a new key for the account, sealed by
    its password and kept in the store (governance.trust): its account record states the
    public key."""
    from ..signing import current_signer

    signer = current_signer({})
    if signer is None or signer.holder is None or not password:
        return {}
    from .trust import new_account_key

    return {"key": new_account_key(db, name, password)}


def add_user(db, name: str, role: str, password: str | None, domains=None, aliases=None, sso: bool = False) -> Account:
    """Create an account (canonical name, SPEC §4) and chain its state. An `sso` account has
    no password (`password` is ignored): it signs in only through the identity provider,
    under an email that is its name or one of its aliases (termgate.governance.sso)."""
    name = canonical_name(name, "account name")
    if role not in ROLES:
        raise UsageError(f"unknown role '{role}' (choose from {', '.join(ROLES)})")
    if not sso:
        _check_password(password or "")
    scopes, alias_list = _parse_domains(domains), [a for a in _parse_aliases(aliases) if a != name]
    if role == "admin" and scopes:
        raise UsageError("admins approve in every domain; give --domains to approvers only")
    if store.get_user(db, name) is not None:
        raise UsageError(f"account '{name}' exists; use `termgate users set-role`, `alias` or `disable`")
    _check_free(db, [name, *alias_list])
    secret = SSO_PASSWORD_HASH if sso else hash_password(password)
    payload = {} if sso else _key_payload(db, name, password)
    from .chain_guard import append_intact  # ChainBroken: nothing added to a broken chain (SPEC §4)
    row = append_intact(db, lambda extends: store.write_account(
        db, name, {"name": name, "role": role, "domains": scopes, "aliases": alias_list, "password_hash": secret,
                   "disabled": False, "created_at": _now()},
        {"created_at": _now(), "kind": "user_add", "actor": _actor(), "payload": payload}, new=True, extends=extends))
    return account_of({**row["payload"]["account"], "password_hash": secret})


def _existing(db, name: str) -> dict:
    row = store.get_user(db, fold_name(name))
    if row is None:
        raise UsageError(f"unknown account '{name}' (see `termgate users list`)")
    return row


def _change(db, name: str, kind: str, changes: dict, payload: dict | None = None) -> None:
    from .chain_guard import append_intact  # ChainBroken: nothing changed on a broken chain (SPEC §4)
    append_intact(db, lambda extends: store.write_account(db, name, changes, {
        "created_at": _now(), "kind": kind, "actor": _actor(), "payload": dict(payload or {})}, extends=extends))


def disable_user(db, name: str) -> None:
    row = _existing(db, name)
    _change(db, row["name"], "user_disable", {"disabled": True})


def set_role(db, name: str, role: str, domains=None) -> None:
    row = _existing(db, name)
    if role not in ROLES:
        raise UsageError(f"unknown role '{role}' (choose from {', '.join(ROLES)})")
    changes: dict = {"role": role}
    if role == "admin":
        changes["domains"] = []  # admins are never domain-scoped
    elif domains is not None:
        changes["domains"] = _parse_domains(domains)
    _change(db, row["name"], "user_set_role", changes)


def set_password(db, name: str, password: str) -> None:
    row = _existing(db, name)
    if row["password_hash"] == SSO_PASSWORD_HASH:
        raise UsageError(f"account '{row['name']}' signs in through the identity provider (single sign-on) and has "
                         "no password; `termgate users add NAME --role ROLE` makes a local account")
    _check_password(password)
    # on a signed store the account's key is sealed anew: the admin never learns the old password
    _change(db, row["name"], "user_password", {"password_hash": hash_password(password)},
            _key_payload(db, row["name"], password))


def set_aliases(db, name: str, add=(), remove=()) -> Account:
    """Add or remove aliases (a Git login, an email): four-eyes checks the author against each."""
    row = _existing(db, name)
    added, removed = _parse_aliases(add), set(_parse_aliases(remove))
    _check_free(db, added, owner=row["name"])
    aliases = sorted((set(row["aliases"] or []) | set(added)) - removed - {row["name"]})
    _change(db, row["name"], "user_aliases", {"aliases": aliases})
    return account_of({**row, "aliases": aliases})


MAX_SIGNIN_DELAY = 30.0


def _delay_after(failures: int) -> float:
    return min(2.0 ** min(failures - 1, 5), MAX_SIGNIN_DELAY)


def signin_delay(db, name: str) -> float:
    """Seconds until this account name may try to sign in again: after k tries since the
    last success, 2**(k-1) s (at most 30 s) from the last one. No lockout. A read, for
    saying how long; the turn itself is taken atomically by `authenticate`."""
    failures, last = store.signin_failures(db, fold_name(name))
    if not failures:
        return 0.0
    delay = _delay_after(failures)
    return min(max(0.0, last + delay - time.time()), delay)  # a last time in the future waits no longer


def _sso_only(name: str) -> str:
    return (f"account '{name}' signs in through the identity provider (single sign-on): it has no password; "
            "sign in with single sign-on in the dashboard and decide on its Sign-off page")


def refuse_sso(db, name: str) -> None:
    """SignoffRefused when this account signs in only through the identity provider: a
    password sign-in (the CLI, the dashboard's form) is refused before any password is asked."""
    row = store.get_user(db, fold_name(name))
    if row is not None and row["password_hash"] == SSO_PASSWORD_HASH:
        raise SignoffRefused(_sso_only(row["name"]))


def authenticate(db, name: str, password: str, wait: bool = False) -> Account:
    """The account when the password is right; SignoffRefused otherwise. Tries are counted
    per name, outside the chain: each takes its turn in the store (store.claim_signin) in one
    transaction before its password is checked, so parallel tries (threads, processes, the
    CLI and the dashboard) check at most one password per delay. A try whose turn has not
    come waits: `wait` sleeps until it has (the CLI), else the refusal says how long (the
    dashboard)."""
    key = fold_name(name)
    row = store.get_user(db, key)
    if row is not None and row["password_hash"] == SSO_PASSWORD_HASH:
        raise SignoffRefused(_sso_only(key))
    if not store.exists(db):
        raise SignoffRefused(f"wrong account name or password for '{key}'")
    while (delay := store.claim_signin(db, key, _delay_after)) > 0:
        if not wait:
            raise SignoffRefused(f"too many failed sign-ins for '{key}': try again in {math.ceil(delay)} s")
        time.sleep(delay)
    row = store.get_user(db, key)  # as stored when its turn came
    if row is None or row["password_hash"] == SSO_PASSWORD_HASH or not verify_password(password, row["password_hash"]):
        raise SignoffRefused(f"wrong account name or password for '{key}'")  # counted when its turn was taken
    store.clear_signin_failures(db, key)
    if row["disabled"]:
        raise SignoffRefused(f"account '{key}' is disabled")
    return account_of(row)


# ---------------------------------------------------------------- decisions


def flagged_items(db, run_id: str) -> list[FlaggedItem]:
    """Regressed queries (with their term diff), failed critical queries and drift terms;
    for a high-risk run, its golden revision when the chain holds no approval of it
    (kind `golden`, termgate.governance.golden_revisions.golden_flag)."""
    from .golden_approvals import golden_flag

    rows = store.flagged_items(db, [run_id])
    items = [FlaggedItem(f"{r.kind}:{r.query_id}:{r.term if isinstance(r.term, str) else ''}", r.kind, r.query_id,
                         r.query, r.detail) for r in rows.itertuples()]
    from .agreement import judge_items
    items += judge_items(db, run_id)  # kind `judge`: an unvalidated drift judge (SPEC §1.4 drift_kappa_min)
    golden = golden_flag(db, store.get_run(db, run_id))
    return items + ([golden] if golden is not None else [])


def _approval_scope(run: dict, account: Account, policy) -> list[str]:
    domains = policy.high_risk_of(run)
    if not domains:
        return ["(any)"]
    return [d for d in domains if account.covers(d)]


def decide(db, run_id: str, reviewer: str, password: str, decision: str, comment: str,
           acknowledged: set[str] | None = None, ack_all: bool = False, wait: bool = False) -> dict:
    """Authenticate, then record an approval or rejection (see decide_as)."""
    account = authenticate(db, reviewer, password, wait=wait)
    return decide_as(db, run_id, account, decision, comment, acknowledged, ack_all)


def is_author(run: dict, account: Account) -> bool:
    """Four-eyes: the run's author, compared with the account's name and every alias."""
    return same_person(run["author"], account.name, account.aliases)


def approval_blockers(db, run: dict, account: Account, policy=None) -> list[str]:
    """Why this account may not approve this run (empty: it may, once items are acknowledged);
    `policy`: the store's policy in force (read when not given)."""
    from .policy import policy_of_store

    policy = policy or policy_of_store(db)
    out = []
    if account.role not in CAN_APPROVE:
        out.append(f"role '{account.role}' may not approve (needs approver or admin)")
    if run["gate_decision"] == "fail":
        out.append(f"run {run['run_id']} failed its gate: a failed run cannot be approved")
    if is_author(run, account):
        out.append(f"'{account.name}' created run {run['run_id']} (author {run['author']!r}) and cannot approve "
                   "it (four-eyes rule)")
    if not _approval_scope(run, account, policy):
        out.append(f"'{account.name}' may approve {', '.join(account.domains)} only; this run is "
                   f"{', '.join(policy.high_risk_of(run))}")
    return out


def decide_as(db, run_id: str, account: Account, decision: str, comment: str,
              acknowledged: set[str] | None = None, ack_all: bool = False) -> dict:
    """Record an approval or rejection; raises SignoffRefused (nothing recorded) when not
    permitted, or when the audit chain is broken (nothing is appended to a broken chain)."""
    if decision not in ("approve", "reject"):
        raise UsageError("decision is approve or reject")
    run = store.get_run(db, run_id)
    via = account.via  # how this session signed in; the account itself is read again
    account = current_account(db, account.name)
    if not comment or not comment.strip():
        raise SignoffRefused("a comment is required for every decision")
    allowed = CAN_APPROVE if decision == "approve" else CAN_REJECT
    if account.role not in allowed:
        raise SignoffRefused(f"role '{account.role}' may not {decision} (needs {' or '.join(sorted(allowed))})")
    chain = verify_chain(db, runs=[run_id])
    if not chain.ok:
        raise SignoffRefused(f"the audit chain is broken, nothing can be recorded on it: {chain.message}")
    items = flagged_items(db, run_id)
    payload = {"role": account.role, "gate": run["gate_decision"], "domains": list(run["domains"] or []),
               "evalcore_version": run["evalcore_version"], "extends": chain.head}
    if via is not None:
        payload["sso"] = via.claims()
    if decision == "approve":
        blockers = approval_blockers(db, run, account)
        if blockers:
            raise SignoffRefused(blockers[0])
        missing = [i for i in items if not ack_all and i.key not in (acknowledged or set())]
        if missing:
            raise SignoffRefused(f"{len(missing)} flagged items are not acknowledged (e.g. {missing[0].kind} "
                                 f"{missing[0].query_id}); review them and acknowledge each, or pass --ack-all")
    payload["acknowledged"] = [i.key for i in items] if decision == "approve" else sorted(acknowledged or [])
    for _ in range(MAX_MOVES):
        try:
            return _append(db, "decision", account.name, run_id=run_id, content_hash=run["content_hash"],
                           decision=decision, comment=comment.strip(), payload=payload)
        except ChainMoved:  # another reviewer recorded meanwhile: verify what was added, extend the new head
            chain = verify_chain(db, runs=None)
            if not chain.ok:
                raise SignoffRefused(f"the audit chain is broken, nothing can be recorded on it: {chain.message}")
            payload["extends"] = chain.head
    raise SignoffRefused(f"the audit chain kept moving under {MAX_MOVES} tries (other writers); nothing recorded, "
                         "decide again")


def unsigned_state(gate: str, errored: int) -> ReleaseState | None:
    """SPEC §3 exit codes before any decision counts: an incomplete run (errored items) is
    5, a failed gate 1, a passed gate 0; None for a review run (decisions decide)."""
    if errored:
        return ReleaseState("incomplete", 5, [f"{errored} errored item{'s' if errored != 1 else ''}: not releasable; "
                                              "a rerun retries exactly those"])
    if gate == "fail":
        return ReleaseState("not releasable", 1, ["gate fail"])
    if gate == "pass":
        return ReleaseState("releasable", 0, ["gate pass"])
    return None


def release_state(db, run_id: str, settings=None, expect_head: str | None = None,
                  chain: ChainReport | None = None) -> ReleaseState:
    """SPEC §3, §4: a broken audit chain -> 1 (naming the first bad record); errored items
    -> 5; fail -> 1; pass -> 0; review -> the latest decision per reviewer on this content.
    `chain` is a verification the caller already made (the dashboard: once per page for
    many runs, without re-digesting each run's rows); `expect_head` is COUNT:HASH the chain
    must still hold (see verify_chain)."""
    if chain is None:
        chain = verify_chain(db, expect_head, runs=[run_id])
    return release_states(db, [run_id], settings, chain)[run_id]


def release_states(db, run_ids, settings=None, chain: ChainReport | None = None) -> dict[str, ReleaseState]:
    """release_state of each run, the runs and accounts read once for the whole list (a
    page of runs on the team store is then two reads, not two per run). UnknownRunError
    for a run not stored."""
    from ..config import load_settings

    run_ids = list(run_ids)
    runs = store.get_runs(db, run_ids)
    missing = [rid for rid in run_ids if rid not in runs]
    if missing:
        store.get_run(db, missing[0])  # raises UnknownRunError in its words
    if chain is None:
        chain = verify_chain(db, runs=run_ids)
    policy = None
    out = {}
    for rid in run_ids:
        state = _state(runs[rid], chain)
        if state is None:  # a review run without a standing rejection: approvals decide
            if policy is None:
                policy = effective_policy(chain.log, settings or load_settings())
            state = _approval_state(runs[rid], chain, policy)
        out[rid] = state
    return out


def _latest_decisions(run: dict, chain: ChainReport) -> tuple[dict[str, dict], list[str]]:
    """The latest decision per reviewer on the run's content hash that counts, and why the
    others do not. A decision counts when its actor's account, as the chain stated it just
    before that record (audit_chain.actor_states), existed, was enabled and had a role that
    may take it; what the record itself claims (its role, its domains) is never read. Each
    counted decision carries that state as `account` (its aliases: those it had then and
    those the chain gives it now)."""
    from .signatures import authority_of

    final: dict[str, dict] = {}
    states = actor_states(chain.log, final)
    authority = authority_of(chain.log)
    latest: dict[str, dict] = {}
    ignored: list[str] = []
    for d in chain.log:
        if d["kind"] != "decision" or d["content_hash"] != run["content_hash"]:
            continue
        state = states.get(d["seq"])
        allowed = CAN_APPROVE if d["decision"] == "approve" else CAN_REJECT
        if state is None or state.get("disabled") or state.get("role") not in allowed:
            check = authority.checks.get(d["seq"])
            why = (check.problem if check is not None and check.problem else "no such account" if state is None else "account disabled" if state.get("disabled")
                   else f"role {state.get('role')!r} may not {d['decision']}")
            ignored.append(f"record {d['seq']}: {d['decision']} by {d['actor']!r} does not count ({why} then)")
            continue
        # four-eyes: the aliases it had then and has now (an alias added later still stops it)
        aliases = sorted({*(state.get("aliases") or ()), *(final.get(d["actor"], {}).get("aliases") or ())})
        latest[fold_name(d["actor"])] = dict(d, account=dict(state, aliases=aliases))
    return latest, ignored


def _state(run: dict, chain: ChainReport) -> ReleaseState | None:
    """The state before approvals count: a broken chain, an incomplete, failed or passed
    gate, a standing rejection (named beside a failed gate too); None for a review run
    that approvals decide."""
    if not chain.ok:
        return ReleaseState("not releasable", 1, [f"audit chain broken: {chain.message}"], chain=chain)
    unattested = unattested_reason(run["run_id"], chain)
    if unattested:
        return ReleaseState("unattested", 1, [unattested], chain=chain)
    latest, _ = _latest_decisions(run, chain)
    rejections = [f"rejected by {d['actor']}: {d['comment']}" for d in latest.values() if d["decision"] == "reject"]
    state = unsigned_state(run["gate_decision"], run["errored"] or 0)
    if state is not None and state.exit_code != 0:
        return ReleaseState(state.status, state.exit_code, state.reasons + rejections, list(latest.values()), chain)
    if rejections:  # a standing rejection holds for this content whatever its gate is now
        return ReleaseState("not releasable", 1, rejections, list(latest.values()), chain)
    if state is not None:  # gate pass
        state.chain = chain
        return state
    return None


def unattested_reason(run_id: str, chain: ChainReport) -> str | None:
    """Why a run on a signed store is unattested (its header record unsigned, or signed by
    a key that may not sign it; SPEC §4): never releasable. None when it is attested, or
    when the store has no trust root (nothing there is attested; the output warns)."""
    from .signatures import authority_of

    authority = authority_of(chain.log)
    if authority.root is None:
        return None
    header = next((r for r in reversed(chain.log) if r["kind"] == "run" and r["run_id"] == run_id), None)
    if header is None:
        return f"run {run_id} has no header record in the audit chain"
    check = authority.checks.get(header["seq"])
    if check is not None and check.status == "signed":
        return None
    why = check.problem if check is not None and check.problem else "written before the store's trust root"
    return (f"run {run_id}'s header (record {header['seq']}) {why}; a run counts only when the CI's key "
            "(TERMGATE_CI_KEY) or its author's key signs it")


def _approval_state(run: dict, chain: ChainReport, policy) -> ReleaseState:
    """A review run's state from the approvals on its content that count: each approver's
    chained account (at its record) must cover the domain, and four-eyes compares the run's
    author with that account's name and chained aliases. How many each high-risk domain
    needs is the policy's."""
    latest, ignored = _latest_decisions(run, chain)
    approvals = [d for d in latest.values() if d["decision"] == "approve"
                 and not same_person(run["author"], d["actor"], d["account"].get("aliases") or ())]
    domains = policy.high_risk_of(run) or ["(any)"]
    missing = []
    for domain in domains:
        need = policy.approvals_for(domain) if domain != "(any)" else 1
        have = len({fold_name(d["actor"]) for d in approvals if domain == "(any)" or covers(d["account"], domain)})
        if have < need:
            missing.append(f"{domain}: {have} of {need} approvals")
    if policy.tightened:
        ignored = ignored + [f"policy tightened by local settings: {'; '.join(policy.tightened)}"]
    if missing:
        return ReleaseState("awaiting sign-off", 3, ["; ".join(missing)] + ignored, list(latest.values()), chain)
    return ReleaseState("releasable", 0, [f"approved by {', '.join(sorted(d['actor'] for d in approvals))}"] + ignored,
                        list(latest.values()), chain)


def latest_decisions(run: dict, chain: ChainReport) -> tuple[dict[str, dict], list[str]]:
    """_latest_decisions, for readers of a chain held outside a store (governance.attest)."""
    return _latest_decisions(run, chain)


def approval_state(run: dict, chain: ChainReport, policy) -> ReleaseState:
    """_approval_state, for readers of a chain held outside a store (governance.attest)."""
    return _approval_state(run, chain, policy)


def state_of(run: dict, chain: ChainReport, policy) -> ReleaseState:
    """What release_states gives `run` (a dict with run_id, content_hash, author,
    gate_decision, errored, domains, high_risk_domains) on `chain` under `policy`."""
    return _state(run, chain) or _approval_state(run, chain, policy)


__all__ += ["latest_decisions", "approval_state", "state_of"]
