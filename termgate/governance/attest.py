"""A portable approval (SPEC §4, issue 33 item 5; docs/attestation.md): an in-toto Statement v1
about a run's content hash, in a DSSE envelope, that a deployment step verifies without the store.

The predicate (PREDICATE_TYPE) carries the audit chain's records from record 1 to the head,
each as stored, and the run's `runs` row as its header's digest covers it. `verify` decides
from those records with the very code the store uses: the links and hashes
(governance.audit_chain), the signatures, keyring and authority (governance.signatures),
the trust root against the pinned one, the run header's attestation and the approvals per
domain under the chain's policy (governance.signoff, governance.policy). The predicate's
summary (run, policy, decisions, release) is recomputed from the records by `summarize` —
the same function `create` wrote it with — and must be what they state.

Authority comes from the signed records, never from the envelope's signature: the envelope
is signed with the creator's key when one is set (TERMGATE_CI_KEY, else TERMGATE_KEY_FILE)
and a signature by a key the chain registers must verify, but an unsigned envelope can still
verify. What the envelope's signature adds is that the chain was not cut short: records are
only ever appended, so a copy truncated at an earlier head is itself a valid chain (it would
drop a later rejection or a key's revocation).

The policy is the chain's own: local settings that tighten it for one process
(termgate.toml, the environment) do not enter an attestation, made or verified.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import __version__, store
from ..dsse import Envelope, seal_envelope
from ..errors import ChainBroken, UsageError
from ..store.records import AUDIT_COLUMNS
from .attest_file import PREDICATE_TYPE, STATEMENT_TYPE, SUMMARY_KEYS, read_statement
from .audit_chain import ChainReport, chained_runs, verify_chain, verify_records
from .policy import effective_policy
from .signatures import authority_of
from .signoff import approval_state, latest_decisions, state_of

__all__ = ["STATEMENT_TYPE", "PREDICATE_TYPE", "SUMMARY_KEYS", "Verification", "summarize",
           "create_attestation", "write_attestation", "verify_attestation"]


def _header(records, run_id: str) -> tuple[dict, int] | None:
    """The run's header as the chain states it (its `run` record, or the adoption) and its record."""
    return chained_runs(records).get(run_id)


def _run_of(run_id: str, header: dict) -> dict:
    """The run as governance.signoff reads it, from the chained header only."""
    return {"run_id": run_id, "content_hash": header.get("content_hash"), "author": header.get("author"),
            "gate_decision": header.get("gate"), "errored": header.get("errored") or 0,
            "domains": list(header.get("domains") or []), "high_risk_domains": list(header.get("high_risk_domains") or [])}


def summarize(records: list[dict], run_id: str, row_text: str, chain: ChainReport) -> dict:
    """The predicate's summary of `run_id` (SUMMARY_KEYS), from the records and the run's row."""
    return _summary(records, run_id, row_text, chain)[0]


def _summary(records: list[dict], run_id: str, row_text: str, chain: ChainReport) -> tuple[dict, object, object, dict]:
    """(the summary, the run's release state, the policy, the run as signoff reads it)."""
    found = _header(records, run_id)
    if found is None:
        raise UsageError(f"run {run_id} has no header record in the audit chain")
    header, header_seq = found
    row = json.loads(row_text)
    authority = authority_of(records)
    policy = effective_policy(records)
    run = _run_of(run_id, header)
    state = state_of(run, chain, policy)
    latest, _ = latest_decisions(run, chain)
    decisions = []
    for d in sorted(latest.values(), key=lambda d: d["seq"]):
        check = authority.checks.get(d["seq"])
        signer = None if check is None or check.key is None else \
            {"key": check.key, "service": check.service, "identity": check.identity}
        decisions.append({"record": d["seq"], "actor": d["actor"], "decision": d["decision"], "comment": d["comment"],
                          "created_at": d["created_at"], "record_hash": d["record_hash"], "signer": signer})
    summary = {
        "run": {"id": run_id, "name": row.get("name"), "prompt_version": row.get("prompt_version"),
                "content_hash": header.get("content_hash"), "generated_hash": row.get("generated_hash"),
                "golden": {"name": row.get("golden_name"), "revision": row.get("golden_hash")},
                "author": header.get("author"), "gate": header.get("gate"), "domains": run["domains"],
                "high_risk_domains": policy.high_risk_of(run), "errored": run["errored"],
                "header_record": header_seq},
        "policy": {"record": policy.seq, "digest": policy.digest, "rules": policy.as_dict()},
        "decisions": decisions,
        "release": {"status": state.status, "exit_code": state.exit_code, "reasons": list(state.reasons)},
        "chain": {"records": chain.records, "head": chain.head, "trust_root": authority.root},
    }
    run["high_risk_domains"] = summary["run"]["high_risk_domains"]
    return json.loads(json.dumps(summary)), state, policy, run  # the summary as a reader of the file sees it


def _as_stored(record: dict) -> dict:
    return {k: record.get(k) for k in AUDIT_COLUMNS}


def _envelope_key():
    """The creator's key: the CI's (TERMGATE_CI_KEY), else the personal TERMGATE_KEY_FILE; None."""
    from ..environment import setting
    from ..signing import ci_signer, load_key_text

    signer = ci_signer()
    if signer is not None:
        return signer.key
    text = setting("KEY_FILE")
    return load_key_text(text, "TERMGATE_KEY_FILE") if text else None


def create_attestation(db, run_id: str, trust_root: str | None = None) -> tuple[dict, dict, list[str]]:
    """(the DSSE envelope, its summary, notes) of `run_id`. ChainBroken when the chain does not
    verify (or is not the pinned one): no attestation of a broken chain is made."""
    chain = verify_chain(db, runs=[run_id], trust_root=trust_root)
    if not chain.ok:
        raise ChainBroken(f"the audit chain is broken, so no attestation is made: {chain.message}")
    store.get_run(db, run_id)  # UnknownRunError in its words
    records = [_as_stored(r) for r in chain.log]
    row_text = store.run_row(db, run_id)
    summary = summarize(records, run_id, row_text, chain)
    key = _envelope_key()
    notes = []
    authority = authority_of(records)
    if authority.root is None:
        notes.append("warning: the store has no trust root, so nothing in it is attested and this attestation "
                     "never verifies (docs/signoff.md: `termgate trust init`)")
    if key is None:
        notes.append("warning: the envelope is unsigned (set TERMGATE_CI_KEY or TERMGATE_KEY_FILE): the approvals "
                     "still verify from the signed records, but a copy cut short at an earlier head would too")
    elif key.fingerprint not in authority.keys or authority.keys[key.fingerprint]["until"] is not None:
        notes.append(f"warning: the envelope's key {key.fingerprint} is not a key the chain has in force: "
                     "`attest verify` refuses its signature")
    from ..clock import utc_now

    statement = {"_type": STATEMENT_TYPE, "subject": [{"name": run_id, "digest": {"sha256": summary["run"]["content_hash"]}}],
                 "predicateType": PREDICATE_TYPE,
                 "predicate": {**summary, "run_row": row_text, "records": records,
                               "created": {"at": utc_now(), "termgate": __version__,
                                           "by": key.fingerprint if key else None}}}
    body = json.dumps(statement, sort_keys=True, ensure_ascii=True, separators=(",", ":")).encode()
    return seal_envelope(body, [key] if key else []), summary, notes


def write_attestation(path: Path, envelope: dict) -> None:
    """Write the envelope to `path` whole or not at all; an existing file is never replaced
    (UsageError)."""
    path = Path(path)
    if path.exists():
        raise UsageError(f"{path}: exists; an attestation is never overwritten (choose another --out)")
    text = json.dumps(envelope, indent=1, ensure_ascii=True) + "\n"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.link(tmp, path)  # fails when `path` appeared meanwhile: never replaced
    except FileExistsError:
        raise UsageError(f"{path}: exists; an attestation is never overwritten (choose another --out)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write it ({exc.strerror})") from None
    finally:
        tmp.unlink(missing_ok=True)


# ---------------------------------------------------------------- verify


@dataclass
class Verification:
    """What `attest verify` decided: ok (exit 0) when `reasons` is empty."""

    reasons: list[str] = field(default_factory=list)
    """Why the release may not go live, one line each."""
    lines: list[str] = field(default_factory=list)
    """What was verified (the run, the chain, the release, each required domain)."""
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.reasons


def _required(run: dict, chain: ChainReport, policy, domains) -> tuple[list[str], list[str]]:
    """(reasons, lines) for each required domain: its approvals under the policy, counted by
    governance.signoff as for a run high-risk in that domain."""
    reasons, lines = [], []
    for domain in domains:
        if domain not in run["domains"] and domain not in run["high_risk_domains"]:
            reasons.append(f"--require {domain}: run {run['run_id']} has no {domain} queries (its domains: "
                           f"{', '.join(run['domains']) or 'none'})")
            continue
        state = approval_state(dict(run, domains=[domain], high_risk_domains=[domain]), chain, policy)
        need = policy.approvals_for(domain)
        if state.exit_code != 0:
            reasons.append(f"--require {domain}: {state.reasons[0]}")
        else:
            lines.append(f"{domain}: {state.reasons[0]} ({need} needed by {policy.label()})")
    return reasons, lines


def _envelope_checks(envelope: Envelope, authority) -> tuple[list[str], list[str]]:
    reasons, notes, checked = [], [], 0
    for keyid, sig in envelope.signatures:
        info = authority.keys.get(keyid) if keyid else None
        if info is None:
            notes.append(f"note: the envelope's signature by {keyid or '(no keyid)'} is not checked: the chain "
                         "registers no such key")
        elif info["until"] is not None:
            reasons.append(f"the envelope is signed by {keyid}, revoked or replaced at record {info['until']}")
        elif not envelope.verifies(info["public"], sig):
            reasons.append(f"the envelope's signature by {keyid} ({info['holder']}) does not verify: the file was "
                           "edited after it was signed")
        else:
            checked += 1
            notes.append(f"envelope signed by {keyid} ({info['holder']})")
    if not checked:
        notes.append("note: the envelope is not signed by a key the chain registers, so nothing shows the chain was "
                     "not cut short at an earlier head; the approvals below are from its signed records")
    return reasons, notes


def verify_attestation(path: str | Path, trust_root: str, require=()) -> Verification:
    """Decide from the file alone (see the module). InputError (exit 2) naming the file and the
    field when it is not an attestation termgate reads."""
    from ..signing import parse_fingerprint

    pinned = parse_fingerprint(trust_root)
    envelope, statement = read_statement(path)
    predicate = statement["predicate"]
    records, run_id, out = predicate["records"], predicate["run"]["id"], Verification()
    chain = verify_records(records, None)
    if not chain.ok:
        out.reasons.append(f"audit chain broken: {chain.message}")
        return out
    authority = authority_of(records)
    if chain.root != pinned:
        has = f"{chain.root} (record {authority.root_seq})" if chain.root else "none (nothing in it is signed)"
        out.reasons.append(f"trust root: the attested chain's is {has}, not the pinned {pinned} — another store, or "
                           "one rewritten whole")
        return out
    found = _header(records, run_id)
    if found is None:
        out.reasons.append(f"unattested: run {run_id} has no header record in the attested chain")
        return out
    header, seq = found
    subject = statement["subject"][0]["digest"]["sha256"]
    if subject != header.get("content_hash"):
        out.reasons.append(f"the subject's sha256 {subject[:16]}… is not run {run_id}'s content hash in its header "
                           f"(record {seq}): {str(header.get('content_hash'))[:16]}…")
    if hashlib.sha256(predicate["run_row"].encode()).hexdigest() != header.get("run_digest"):
        out.reasons.append(f"the predicate's run_row is not the row run {run_id}'s header (record {seq}) digests")
        return out
    summary, state, policy, run = _summary(records, run_id, predicate["run_row"], chain)
    if state.exit_code != 0:
        # the CLI says "not releasable: " before each reason; the status once, not twice
        plain = state.status == "not releasable"
        out.reasons += [reason if plain or reason.startswith(state.status) else f"{state.status}: {reason}"
                        for reason in state.reasons]
    required, out.lines = _required(run, chain, policy, require)
    out.reasons += required
    content = {r["seq"] for r in records if r["content_hash"] == run["content_hash"]}
    failing = [f"not counted: {c.line()}" for c in authority.failing if c.seq in content]  # as the store's gate
    for key in SUMMARY_KEYS:
        if predicate.get(key) != summary[key]:
            out.reasons.append(f"the predicate's {key} is not what its records state (edited after it was made)")
    envelope_reasons, notes = _envelope_checks(envelope, authority)
    out.reasons += envelope_reasons
    out.notes = failing + notes
    row = summary["run"]
    out.lines[:0] = [f"run {run_id}: prompt version {row['prompt_version']}, content sha256:{row['content_hash'][:16]}…, "
                     f"golden {row['golden']['name'] or '-'} revision {str(row['golden']['revision'])[:16]}…",
                     f"chain: {chain.records} records to head {chain.head[:24]}…, trust root {chain.root} (as pinned)",
                     f"release: {state.status} — {'; '.join(state.reasons[:1])} ({policy.label()})"]
    return out
