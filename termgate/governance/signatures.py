"""Signed records (SPEC §4, issue 33): which records carry authority, read from the chain.

A store enters the signed regime at its trust root: the first record of kind `trust_root`,
appended by an enabled admin and signed by the key it registers (termgate.governance.trust).
Records before it are *unsigned before the trust root* and keep the rules they were written
under (issue 32). From the trust root on, a record carries authority only when it is signed
by a key the chain registered before it, that key is not revoked or replaced, and its signer
may sign that record:
- a *personal* key signs only records whose actor is the key's holder;
- a *service* key signs only the kinds its service writes (SERVICE_KINDS), for the identity
  it names; every single sign-on approver shares the dashboard's key, so four-eyes and
  counting are over the identities (the record's actor and aliases), never over keys;
- account, key, policy and trust records need an actor who is an enabled admin then.

A record that fails carries no authority: an account change in it is not applied, a
decision, verdict, approval or policy in it does not count, and `audit verify` names it.
A run whose header fails is *unattested* (governance.signoff): never releasable.

Only the records decide: what the account table or a payload claims is never read here.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from ..signing import fingerprint_of, verify_signature
from ..store.records import signing_message

__all__ = ["TRUST_KIND", "KEY_KINDS", "SERVICE_KINDS", "ADMIN_KINDS", "RecordCheck", "Authority", "authority_of",
           "holder_of_service"]

TRUST_KIND = "trust_root"
KEY_KINDS = ("key_register", "key_revoke")
SERVICE_KINDS = {
    "dashboard": frozenset({"decision", "verdict", "golden_proposal", "golden_approval", "user_sso_bind"}),
    "ci": frozenset({"run"}),
}
"""What each service's key may sign: the dashboard what its signed-in reviewers record (and
the first single sign-on's binding); the CI only run headers. Nothing else: account, key and
policy changes carry authority only under an admin's own key."""
ADMIN_KINDS = frozenset({TRUST_KIND, *KEY_KINDS, "policy", "policy_proposal", "user_add", "user_disable",
                         "user_set_role", "user_password", "user_aliases"})
_SERVICE_PREFIX = "service:"


def holder_of_service(service: str) -> str:
    return _SERVICE_PREFIX + service


@dataclass(frozen=True)
class RecordCheck:
    """One record's signature as the chain judges it. `status`: "before trust root",
    "signed" or "fails" (then `problem` says why and the record carries no authority)."""

    seq: int
    kind: str
    actor: str
    status: str
    key: str | None = None
    service: str | None = None
    identity: dict | None = None
    problem: str | None = None

    def line(self) -> str:
        return f"record {self.seq} ({self.kind} by {self.actor}): {self.problem} — it carries no authority"


@dataclass(frozen=True)
class Authority:
    """The replay of a chain: each record's actor state just before it (None: no authority),
    each record's signature, the keys as registered, the accounts at the end."""

    states: dict = field(repr=False)
    checks: dict = field(repr=False)
    final: dict = field(repr=False)
    keys: dict = field(repr=False)  # fingerprint -> {"holder", "public", "since", "until"}
    root: str | None = None  # the trust root's fingerprint
    root_seq: int | None = None

    @property
    def failing(self) -> list[RecordCheck]:
        return [c for c in self.checks.values() if c.status == "fails"]

    @property
    def unsigned_before(self) -> int:
        return sum(1 for c in self.checks.values() if c.status == "before trust root")

    @property
    def signed(self) -> int:
        return sum(1 for c in self.checks.values() if c.status == "signed")

    def key_of(self, holder: str) -> dict | None:
        """The holder's key in force at the end of the chain (an account name or service:NAME)."""
        live = [dict(v, fingerprint=fp) for fp, v in self.keys.items() if v["holder"] == holder and v["until"] is None]
        return live[-1] if live else None

    def run_attested(self, seq: int | None) -> bool:
        check = self.checks.get(seq) if seq is not None else None
        return check is not None and check.status == "signed"


def _account_change(kind: str, payload: dict) -> bool:
    return kind.startswith("user_") and "account" in payload


def _key_of(value) -> tuple[str, str] | None:
    """(fingerprint, public) of a {"public": base64} the record registers, or None."""
    if not isinstance(value, dict) or not isinstance(value.get("public"), str):
        return None
    try:
        return fingerprint_of(value["public"]), value["public"]
    except ValueError:
        return None


def _registers(rec: dict, payload: dict) -> tuple[str, tuple[str, str]] | None:
    """(holder, (fingerprint, public)) of the key this record registers, if any."""
    kind = rec["kind"]
    if kind == TRUST_KIND:
        key = _key_of(payload.get("key"))
        return (rec["actor"], key) if key else None
    if kind == "key_register":
        key, holder = _key_of(payload), payload.get("holder")
        return (holder, key) if key and isinstance(holder, str) and holder else None
    if _account_change(kind, payload) and kind != "user_sso_bind":
        key = _key_of(payload.get("key"))
        return (payload["account"].get("name"), key) if key else None
    return None


def _signature_problem(rec: dict, payload: dict, sig, keys: dict, state: dict | None) -> tuple[str | None, dict]:
    """(why this record in the signed regime carries no authority or None, what it names)."""
    if not isinstance(sig, dict) or not isinstance(sig.get("key"), str) or not isinstance(sig.get("sig"), str):
        return "unsigned", {}
    named = {"key": sig["key"], "service": sig.get("service"), "identity": sig.get("for")}
    info = keys.get(sig["key"])
    if info is None:
        return f"signed by {sig['key'][:20]}…, a key the chain never registered", named
    if info["until"] is not None:
        return f"signed by {sig['key'][:20]}…, revoked or replaced at record {info['until']}", named
    if not verify_signature(info["public"], signing_message(rec), sig["sig"]):
        return "its signature does not verify (forged, or the record was edited)", named
    holder, kind = info["holder"], rec["kind"]
    if holder.startswith(_SERVICE_PREFIX):
        service = holder[len(_SERVICE_PREFIX):]
        if sig.get("service") != service:
            return f"signed by the {service} key without naming it", named
        if kind not in SERVICE_KINDS.get(service, ()):
            return f"the {service} key may not sign {kind} records", named
        identity = sig.get("for") if isinstance(sig.get("for"), dict) else {}
        if service == "dashboard" and identity.get("account") != rec["actor"]:
            return f"the dashboard key signed for {identity.get('account')!r}, not for {rec['actor']!r}", named
    elif holder != rec["actor"] or sig.get("service") is not None:
        return f"signed by {holder}'s key, not by {rec['actor']}'s", named
    if kind in ADMIN_KINDS and not (state and state.get("role") == "admin" and not state.get("disabled")):
        return f"{rec['actor']!r} was not an enabled admin then", named
    return None, named


def _replay(records) -> Authority:
    adopted = next(({a["name"]: a for a in (rec["payload"] or {}).get("accounts", [])}
                    for rec in records if rec["kind"] == "adopt"), {})
    accounts: dict[str, dict] = {}
    keys: dict[str, dict] = {}
    states: dict[int, dict | None] = {}
    checks: dict[int, RecordCheck] = {}
    root = root_seq = None
    before_adopt = bool(adopted)
    for rec in records:
        payload = rec["payload"] if isinstance(rec["payload"], dict) else {}
        seq, kind, actor = rec["seq"], rec["kind"], rec["actor"]
        state = adopted.get(actor) if before_adopt else accounts.get(actor)
        if kind == "adopt":
            before_adopt = False
        problem, named = None, {}
        sig = payload.get("signature")
        if root is None and kind == TRUST_KIND:
            key = _key_of(payload.get("key"))
            if key is None or not isinstance(sig, dict) or sig.get("key") != key[0]:
                problem = "a trust root not signed by the key it registers"
            elif not verify_signature(key[1], signing_message(rec), str(sig.get("sig"))):
                problem = "its signature does not verify (forged, or the record was edited)"
            elif not (state and state.get("role") == "admin" and not state.get("disabled")):
                problem = f"{actor!r} was not an enabled admin then"
            named = {"key": key[0] if key else None}
            if problem is None:
                root, root_seq = key[0], seq
        elif root is None:
            checks[seq] = RecordCheck(seq, kind, actor, "before trust root")
        elif kind == TRUST_KIND:
            problem = f"a second trust root (the store's is record {root_seq})"
        else:
            problem, named = _signature_problem(rec, payload, sig, keys, state)
        if seq not in checks:
            checks[seq] = RecordCheck(seq, kind, actor, "fails" if problem else "signed", named.get("key"),
                                      named.get("service"), named.get("identity"), problem)
        states[seq] = None if problem else state
        if problem:
            continue
        if kind == "adopt":
            accounts = {a["name"]: a for a in payload.get("accounts", [])}
        elif _account_change(kind, payload):
            accounts[payload["account"]["name"]] = payload["account"]
        registered = _registers(rec, payload)
        if registered is not None and root is not None:
            holder, (fp, public) = registered
            for other in keys.values():
                if other["holder"] == holder and other["until"] is None:
                    other["until"] = seq  # a holder has one key in force: registering another replaces it
            keys.setdefault(fp, {"holder": holder, "public": public, "since": seq, "until": None})
        if kind == "key_revoke" and payload.get("fingerprint") in keys and root is not None:
            info = keys[payload["fingerprint"]]
            info["until"] = info["until"] or seq
    return Authority(states, checks, accounts, keys, root, root_seq)


_CACHE: dict[tuple, Authority] = {}
_CACHE_SIZE = 8
_last: tuple = (None, None)
"""The last tuple of records replayed (a ChainReport's log, which nothing changes) and its replay."""


def authority_of(records) -> Authority:
    """The replay of `records` (a chain's log, in order), cached on a digest of every field
    it reads: one page reads it once however many times it asks, and an edited record is
    never answered from the cache."""
    global _last
    last = _last  # one read: another thread may replace it meanwhile
    if isinstance(records, tuple) and last[0] is records:  # a ChainReport's log asked again: no rehash
        return last[1]
    given = records
    records = list(records)
    if not records:
        return _replay(records)
    digest = hashlib.sha256()
    for rec in records:
        digest.update(repr((rec["seq"], rec["kind"], rec["actor"], rec.get("prev_hash"), rec.get("created_at"),
                            rec.get("run_id"), rec.get("content_hash"), rec.get("decision"), rec.get("comment"),
                            rec["payload"])).encode("utf-8", "surrogatepass"))
    key = (len(records), digest.hexdigest())
    found = _CACHE.get(key)
    if found is None:
        found = _replay(records)
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = found
    if isinstance(given, tuple):
        _last = (given, found)
    return found
