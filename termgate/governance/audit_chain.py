"""Verifying the audit chain (SPEC §4): every record's hash in order, then the account table
and the stored runs against what the chain states. The records are appended by
termgate.governance.signoff and the modules that record on the chain (verdicts, golden revisions)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .. import store
from ..errors import UsageError
from ..store.records import HASH_VERSION, canonical_problem, record_hash

__all__ = ["ChainReport", "parse_head", "verify_chain", "HEADER_KEYS", "actor_states", "covers", "pinned_root"]


@dataclass(frozen=True)
class ChainReport:
    ok: bool
    records: int
    first_bad: int | None
    message: str
    head: str | None  # COUNT:HASH of the last record
    log: tuple = field(default=(), repr=False, compare=False)  # the records verified, in order
    root: str | None = None
    """The store's trust root (the fingerprint of the key that signed its `trust_root` record)."""
    pinned: str | None = None
    """The trust root this verification was given (--trust-root, [trust] root, TERMGATE_TRUST_ROOT)."""
    failing: tuple = ()
    """One line per record whose signature fails (it carries no authority; SPEC §4)."""
    unsigned_before: int = 0
    signed: int = 0

    def trust_lines(self) -> list[str]:
        """What the output says about signatures: the root and whether it is pinned, the
        records before it, the failing records."""
        if not self.ok:
            return []
        if self.root is None:
            lines = ["signatures: none — the store has no trust root, so nothing in it is attested (an admin runs "
                     "`termgate trust init --admin NAME`; docs/signoff.md)"]
        else:
            from ..text import counted

            lines = [f"signatures: {counted(self.signed, 'signed record')} from trust root {self.root}"
                     + (f"; {counted(self.unsigned_before, 'unsigned record')} before it" if self.unsigned_before
                        else "")]
        if self.root is not None and self.pinned is None:
            lines.append("warning: no trust root is pinned, so a store rewritten whole would not be noticed: pin "
                         f"it ([trust] root = \"{self.root}\" in termgate.toml, or --trust-root)")
        return lines + list(self.failing)


_HEAD = re.compile(r"(\d+):([0-9a-f]{16,64})")


def parse_head(value: str) -> tuple[int, str]:
    """`COUNT:HASH` (HASH: at least 16 hex digits of record COUNT's hash) or UsageError."""
    match = _HEAD.fullmatch((value or "").strip().lower())
    if not match:
        raise UsageError(f"--expect-head {value!r}: give COUNT:HASH as printed by `termgate audit verify` "
                         "(e.g. 12:3f5a...), with at least 16 hex digits")
    return int(match.group(1)), match.group(2)


def _broken(records: list, seq: int | None, message: str) -> ChainReport:
    return ChainReport(False, len(records), seq, message, None)


def _links(records: list[dict]) -> ChainReport | None:
    """Every record's hash (by its version, store.records.HASH_VERSION; a version-2 record's
    columns must be what its canonical text states), order and link; the recorded head."""
    prev, expected_seq = store.GENESIS, 1
    for rec in records:
        if rec["seq"] != expected_seq:
            return _broken(records, rec["seq"], f"record {rec['seq']}: expected record {expected_seq} here — "
                           "a record was removed or reordered")
        if rec["prev_hash"] != prev:
            return _broken(records, rec["seq"], f"record {rec['seq']}: prev_hash does not match the record "
                           "before it — records were removed or reordered")
        version = rec.get("hash_version")
        if version not in (None, 1, HASH_VERSION):
            return _broken(records, rec["seq"], f"record {rec['seq']}: hash version {version!r} is none termgate "
                           "knows — the record was edited")
        problem = canonical_problem(rec) if version == HASH_VERSION else None
        if problem:
            return _broken(records, rec["seq"], f"record {rec['seq']} ({rec['kind']} by {rec['actor']}): content "
                           f"does not match its hash ({problem}) — the record was edited")
        if record_hash(rec, prev) != rec["record_hash"]:
            return _broken(records, rec["seq"], f"record {rec['seq']} ({rec['kind']} by {rec['actor']}): content "
                           "does not match its hash — the record was edited")
        prev, expected_seq = rec["record_hash"], expected_seq + 1
    return None


def _replay(records: list[dict]) -> tuple[dict[str, tuple[dict, int]], dict[str, tuple[dict, int]]]:
    """Accounts and run headers as the chain states them: name -> (state, seq), run -> (header, seq).
    An adopt record after any state-bearing record raises ValueError(seq): adoption happens
    once, on a store the chain did not cover yet."""
    accounts: dict[str, tuple[dict, int]] = {}
    runs: dict[str, tuple[dict, int]] = {}
    for rec in records:
        payload = rec["payload"] or {}
        if rec["kind"] == "adopt" and (accounts or runs):
            raise ValueError(rec["seq"])
        if rec["kind"] == "adopt":
            accounts = {a["name"]: (a, rec["seq"]) for a in payload.get("accounts", [])}
            runs.update({h["run_id"]: (h, rec["seq"]) for h in payload.get("runs", [])})
        elif rec["kind"].startswith("user_") and "account" in payload:
            accounts[payload["account"]["name"]] = (payload["account"], rec["seq"])
        elif rec["kind"] == "run":
            runs[rec["run_id"]] = (payload, rec["seq"])
    return accounts, runs


def actor_states(records, final: dict | None = None) -> dict[int, dict | None]:
    """Authority from the chain (issue 32): for every record, its actor's account as the
    chain stated it just before that record — {"name", "role", "domains", "aliases",
    "disabled", ...} — or None when no account of that name existed then. Whether a
    decision, verdict, golden approval or policy record counts is read from this, never
    from what the record itself claims (a `role` or `approves_domains` in its payload).
    `final`, when given, receives every account as the chain states it at its end.

    Records older than the chain's coverage of accounts (a store from before migration 8,
    whose `adopt` record states every account once) take the account as adopted.

    From the trust root on (governance.signatures.authority_of, which replays it), a record
    whose signature fails has no actor state (it carries no authority) and changes no
    account."""
    from .signatures import authority_of

    authority = authority_of(records)
    if final is not None:
        final.update(authority.final)
    return dict(authority.states)


def covers(state: dict | None, domain: str) -> bool:
    """Whether a chained account state may decide in `domain`: an enabled account whose
    domains are none (every domain; admins are never scoped) or include it."""
    if state is None or state.get("disabled"):
        return False
    return not state.get("domains") or domain in state["domains"]


def _check_accounts(users: list[dict], records: list, chained: dict[str, tuple[dict, int]]) -> ChainReport | None:
    stored = {row["name"]: store.account_state(row) for row in users}
    for name, state in stored.items():
        if name not in chained:
            return _broken(records, None, f"account {name!r}: in the store but in no audit record — "
                           "added to the store by hand")
        recorded, seq = chained[name]
        for key in ("role", "domains", "aliases", "disabled", "password"):
            if state[key] != recorded[key]:
                what = "password hash" if key == "password" else key
                shown = "" if key == "password" else f": {state[key]!r} in the store, {recorded[key]!r} recorded"
                return _broken(records, seq, f"account {name!r}: {what} differs from audit record {seq}{shown} — "
                               "the account table was edited outside termgate")
    for name, (_, seq) in chained.items():
        if name not in stored:
            return _broken(records, seq, f"account {name!r} (audit record {seq}) is missing from the store — "
                           "removed by hand")
    return None


HEADER_KEYS = ("content_hash", "author", "gate", "gate_reasons", "domains", "high_risk_domains", "errored",
               "run_digest", "rows")


def _check_runs(snapshot, records: list, chained: dict[str, tuple[dict, int]], run_ids) -> ChainReport | None:
    if run_ids is None:
        return None
    scope = snapshot.run_ids if run_ids == "all" else list(run_ids)
    for rid in scope:
        if rid not in chained:
            return _broken(records, None, f"run {rid}: stored but in no audit record — added to the store by hand")
    headers = snapshot.headers
    for rid in scope:
        recorded, seq = chained[rid]
        if rid not in headers:
            return _broken(records, seq, f"run {rid} (audit record {seq}) is missing from the store — removed by hand")
        for key in HEADER_KEYS:
            if headers[rid].get(key) != recorded.get(key):
                what = {"rows": "its per-query or per-term rows differ", "run_digest": "its runs row differs"}.get(
                    key, f"its {key} differs")
                return _broken(records, seq, f"run {rid}: {what} from audit record {seq} (run header) — "
                               "edited in the store after the run was recorded")
    if run_ids == "all":
        for rid, (_, seq) in chained.items():
            if rid not in headers:
                return _broken(records, seq, f"run {rid} (audit record {seq}) is missing from the store — "
                               "removed by hand")
    return None


def pinned_root(given: str | None = None) -> str | None:
    """The trust root to hold the store to: `given` (--trust-root), else TERMGATE_TRUST_ROOT,
    else `[trust] root` in the config file; None when none is pinned."""
    from ..environment import setting
    from ..signing import parse_fingerprint

    if given:
        return parse_fingerprint(given)
    env = setting("TRUST_ROOT")
    if env:
        return parse_fingerprint(env, "TERMGATE_TRUST_ROOT")
    from ..config import load_settings

    return load_settings().trust_root


def _signed(report: ChainReport, records: list, pinned: str | None) -> ChainReport:
    from dataclasses import replace
    from .signatures import authority_of

    authority = authority_of(records)
    if pinned is not None and authority.root != pinned:
        what = (f"its trust root is {authority.root} (record {authority.root_seq})" if authority.root
                else "it has no trust root (no signed records)")
        return _broken(records, authority.root_seq, f"the store is not the one pinned: {what}, but {pinned} is "
                       "pinned — a store rewritten whole, or the wrong store")
    return replace(report, root=authority.root, pinned=pinned, failing=tuple(c.line() for c in authority.failing),
                   unsigned_before=authority.unsigned_before, signed=authority.signed)


def verify_chain(db: str | Path, expect_head: str | None = None, runs="all", trust_root: str | None = None) -> ChainReport:
    """SPEC §4: recompute every record's hash in order, then check the account table and
    the stored runs (`runs`: "all", a list of run ids, or None for none) against the
    chain. Names the first bad record (or account or run).

    The head recorded at append time catches removed trailing records; `expect_head`
    (COUNT:HASH kept outside the store, e.g. in a CI log) catches a store rewritten or
    truncated whole; so does a pinned trust root (`trust_root`, else pinned_root()): the
    store's `trust_root` record must be signed by that key."""
    from ..store.chain import chain_snapshot

    expected = parse_head(expect_head) if expect_head else None
    pinned = pinned_root(trust_root)  # read once; a malformed pin is a usage error before anything is read
    snapshot = chain_snapshot(db, runs)  # one connection: a concurrent append is all in or all out
    if snapshot.problems:
        return _broken([], None, f"the store's tables were altered: {snapshot.problems[0]}")
    records = snapshot.records
    broken = _links(records)
    if broken:
        return broken
    last = records[-1]["record_hash"] if records else None
    head = snapshot.head
    if head is None and records:
        return _broken(records, len(records), "the chain's recorded head is missing — removed by hand")
    if head is not None and (head[0] != len(records) or head[1] != last):
        missing = len(records) + 1
        return _broken(records, missing, f"record {missing}: missing — the chain's recorded head is record "
                       f"{head[0]}; records at the end were removed")
    if expected is not None:
        count, prefix = expected
        if not 0 < count <= len(records):
            return _broken(records, count, f"record {count}: expected (hash {prefix[:16]}…), the store has only "
                           f"{len(records)} records — the store was rewritten or truncated")
        if not records[count - 1]["record_hash"].startswith(prefix):
            return _broken(records, count, f"record {count}: expected hash {prefix[:16]}…, the store has "
                           f"{records[count - 1]['record_hash'][:16]}… — the store was rewritten")
    try:
        accounts, run_headers = _replay(records)
    except ValueError as exc:
        seq = exc.args[0]
        return _broken(records, seq, f"record {seq}: a second adoption of the store's contents — migrations "
                       "were re-run by hand to bless edited accounts or runs")
    broken = _check_accounts(snapshot.users, records, accounts) or _check_runs(snapshot, records, run_headers, runs)
    if broken:
        return broken
    head_text = f"{len(records)}:{last}" if records else "0:" + store.GENESIS
    return _signed(ChainReport(True, len(records), None, f"audit chain intact: {len(records)} records", head_text,
                               tuple(records)), records, pinned)


def verify_records(records: list[dict], pinned: str | None = None) -> ChainReport:
    """verify_chain's checks that need no store, on records held elsewhere (an attestation,
    governance.attest): links and hashes, one adoption, the trust root against `pinned`.
    There is no account table or run row to hold them to, and no recorded head: a chain cut
    short at an earlier head verifies too."""
    broken = _links(records)
    if broken:
        return broken
    try:
        _replay(records)
    except ValueError as exc:
        seq = exc.args[0]
        return _broken(records, seq, f"record {seq}: a second adoption of the store's contents")
    n = len(records)
    head = f"{n}:{records[-1]['record_hash']}" if records else "0:" + store.GENESIS
    return _signed(ChainReport(True, n, None, f"audit chain intact: {n} records", head, tuple(records)),
                   records, pinned)


def chained_runs(records: list[dict]) -> dict[str, tuple[dict, int]]:
    """Each run's header as the chain states it (its `run` record, or the adoption), with
    that record's seq; ValueError(seq) on a second adoption (see verify_records)."""
    return _replay(records)[1]


__all__ += ["verify_records", "chained_runs"]
