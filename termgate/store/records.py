"""The audit chain's records, on a connection the caller holds (inside its transaction):
hashing and appending a record, an account's chained state, a run's header, and the one
record that adopts what a store held before the chain covered accounts and runs."""

from __future__ import annotations

import getpass
import hashlib
import json

import duckdb

from ..identity import fold_name
from .digest import run_header

__all__ = ["AUDIT_COLUMNS", "GENESIS", "USER_COLUMNS", "SSO_PASSWORD_HASH", "CHAINED_TABLES", "record_hash", "head_on",
           "append_on", "account_state", "header_record", "canonical_account_names", "adopt_unchained", "signin_turn",
           "HASH_VERSION", "CANONICAL_FIELDS", "canonical_text", "canonical_problem", "linked", "signing_message", "MAX_PAYLOAD_DEPTH"]

V1_COLUMNS = ("seq", "created_at", "kind", "actor", "run_id", "content_hash", "decision", "comment",
              "payload", "prev_hash", "record_hash")
"""The columns a version-1 record's hash covers (all but its own hash)."""
AUDIT_COLUMNS = (*V1_COLUMNS, "hash_version", "canonical")
HASH_VERSION = 2
"""The record-hash version of every record appended now (SPEC §4): SHA-256 over the previous
record's hash and the record's canonical text, stored verbatim in `canonical`, which a
PostgreSQL server recomputes with its built-in sha256() and checks against the columns.
Version 1 (hash_version NULL or 1: every record appended before schema 15) is SHA-256 over
Python's JSON of the fields, which only termgate itself recomputes."""
CANONICAL_FIELDS = ("seq", "created_at", "kind", "actor", "run_id", "content_hash", "decision", "comment", "payload")
"""The keys of a canonical text: each column's text as stored (seq in decimal, the payload
as the column's JSON text), or null. The store's SQL checks the same (store.postgres)."""
MAX_PAYLOAD_DEPTH = 32
"""A payload nested deeper (counted on its text, a repeated key's value too), one holding a
number of 255 digits or more, or one that is not a JSON object (or null) is refused by the
PostgreSQL server: every reader parses whatever the server accepted."""
GENESIS = "0" * 64
"""prev_hash of the first record."""
USER_COLUMNS = ("name", "role", "domains", "aliases", "password_hash", "disabled", "created_at")
SSO_PASSWORD_HASH = "sso:"
"""password_hash of an account that signs in only through the identity provider: no scrypt
hash has this form, so no password verifies against it (and no schema change was needed)."""
CHAINED_TABLES = ("audit_log", "audit_head", "users", "runs", "query_results", "term_rows", "retrieval_results")
"""The tables the gate reads: each must be a plain table (a view could show verify and the gate different rows)."""


def signin_turn(failures: int, last_at: float, now: float, delay_of) -> tuple[float, tuple[int, float] | None]:
    """One sign-in attempt's turn, decided under the row's lock: (seconds it must wait, the
    row's new (failures, last_at) or None to leave it). An attempt that may go ahead is
    counted as a failure before its password is checked (success clears the row), so every
    attempt pushes the next one back and parallel attempts get one turn per delay. A
    last_at in the future (a clock set back, an edited row) is moved to now: the wait is
    never longer than `delay_of(failures)` from now."""
    if failures > 0:
        delay = delay_of(failures)
        if last_at > now:
            return delay, (failures, now)
        if last_at + delay > now:
            return last_at + delay - now, None
    return 0.0, (max(failures, 0) + 1, now)


def table_kind_problems(kinds: dict[str, str]) -> list[str]:
    """What is wrong with the tables the gate reads, from {table name: table type} as the
    database's information_schema tells it."""
    return [f"{t} is {'missing' if t not in kinds else 'a ' + kinds[t].lower()}, not termgate's table"
            for t in CHAINED_TABLES if kinds.get(t) != "BASE TABLE"]

def record_hash(record: dict, prev_hash: str) -> str:
    """The record's hash after `prev_hash`, by its version: version 2, SHA-256 over the
    previous hash followed by the canonical text (UTF-8); version 1 (None), SHA-256 over
    Python's JSON of the fields with prev_hash among them."""
    if record.get("hash_version") == HASH_VERSION:
        return hashlib.sha256((prev_hash + str(record.get("canonical"))).encode("utf-8", "surrogatepass")).hexdigest()
    fields = {k: record.get(k) for k in V1_COLUMNS if k != "record_hash"}
    fields["prev_hash"] = prev_hash
    return hashlib.sha256(json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str).encode()).hexdigest()


def head_on(con, schema: str = "") -> tuple[int, str]:
    """(seq, record_hash) of the record the next append_on links to, read inside the
    caller's transaction: the recorded head, else the last record, else (0, GENESIS)."""
    head = con.execute(f"SELECT seq, record_hash FROM {schema}audit_head WHERE id = 1").fetchall()
    last = head or con.execute(f"SELECT seq, record_hash FROM {schema}audit_log ORDER BY seq DESC LIMIT 1").fetchall()
    return (last[0][0], last[0][1]) if last else (0, GENESIS)


def _payload_text(payload) -> str:
    return json.dumps(payload, sort_keys=True)


def canonical_text(record: dict) -> str:
    """A record's canonical text: JSON (ASCII, sorted keys, no spaces) of CANONICAL_FIELDS,
    each the column's text or null; the payload as its column's JSON text (a string)."""
    fields = {k: None if record.get(k) is None else str(record[k]) for k in CANONICAL_FIELDS if k != "payload"}
    fields["payload"] = _payload_text(record.get("payload"))
    return json.dumps(fields, sort_keys=True, separators=(",", ":"))


def linked(record: dict, seq: int, prev_hash: str) -> dict:
    """The record as it goes onto the chain after (seq - 1, prev_hash): version 2, its text
    columns as the canonical text states them, its canonical text and its hash. A record
    whose payload names the head it `extends` (a decision: the head its reviewer's
    verification found, issue 32) goes only onto that head; ChainMoved otherwise."""
    extends = (record.get("payload") or {}).get("extends") if isinstance(record.get("payload"), dict) else None
    if extends is not None and extends != f"{seq - 1}:{prev_hash}":
        from ..errors import ChainMoved

        raise ChainMoved(f"the audit chain moved since it was verified (its head was {str(extends)[:24]}…, "
                             f"record {seq - 1} was appended meanwhile): nothing recorded; decide again")
    from ..signing import current_signer

    signer = record.get("signer", False)
    stored = {k: v for k, v in record.items() if k != "signer"}
    stored.update(seq=seq, prev_hash=prev_hash, hash_version=HASH_VERSION)
    for k in CANONICAL_FIELDS[1:-1]:
        stored[k] = None if stored.get(k) is None else str(stored[k])
    signer = current_signer(stored) if signer is False else signer
    if signer is not None:  # signed over its content, its signer block and the head it extends (SPEC §4)
        if signer.holder is not None and signer.holder != stored.get("actor"):
            from ..errors import SignoffRefused

            raise SignoffRefused(f"{signer.holder}'s key signs only {signer.holder}'s records, not "
                                 f"{stored.get('actor')!r}'s: nothing recorded")
        stored["payload"] = dict(stored.get("payload") or {}, signature=signer.block(stored))
        stored["payload"]["signature"]["sig"] = signer.key.sign(signing_message(stored))
    stored["canonical"] = canonical_text(stored)
    stored["record_hash"] = record_hash(stored, prev_hash)
    return stored


SIGNING_PREFIX = "termgate-record-v1\n"
"""Every record signature's message starts so: a signature made for anything else never
verifies as a record's."""


def signing_message(record: dict) -> bytes:
    """What a record's signature signs: SIGNING_PREFIX, the hash of the record it extends
    (prev_hash), a newline and its canonical text with the signature's `sig` left out (the
    signer block itself is signed). `record` as linked or as read back (payload parsed)."""
    payload = dict(record.get("payload") or {})
    payload["signature"] = {k: v for k, v in (payload.get("signature") or {}).items() if k != "sig"}
    text = canonical_text(dict(record, payload=payload))
    return (SIGNING_PREFIX + str(record.get("prev_hash")) + "\n" + text).encode("utf-8", "surrogatepass")


def canonical_problem(record: dict) -> str | None:
    """What is wrong with a version-2 record's canonical text against its columns (as read
    by store.audit.records_of: the payload parsed), or None. The same checks as the
    server's (store.postgres), so whatever the server accepted passes here; the payload is
    compared as parsed JSON (the server compares its text)."""
    try:
        fields = json.loads(record.get("canonical") or "")
    except (ValueError, RecursionError):
        return "its canonical text is not JSON"
    if not isinstance(fields, dict) or set(fields) != set(CANONICAL_FIELDS):
        return f"its canonical text does not state exactly {', '.join(CANONICAL_FIELDS)}"
    for key in CANONICAL_FIELDS[:-1]:
        column = None if record.get(key) is None else str(record[key])
        if not (fields[key] is None or isinstance(fields[key], str)) or fields[key] != column:
            return f"its {key} differs from its canonical text"
    stated = fields["payload"]
    try:
        parsed = json.loads(stated) if isinstance(stated, str) and stated else {}
    except (ValueError, RecursionError):
        return "the payload in its canonical text is not JSON"
    if (stated is not None and not isinstance(stated, str)) or _payload_text(parsed) != _payload_text(record.get("payload")):
        return "its payload differs from its canonical text"
    return None


def append_on(con: duckdb.DuckDBPyConnection, record: dict, schema: str = "", version: int = HASH_VERSION) -> dict:
    """Append one record after the last one, inside the caller's transaction on `con`
    (`schema`: "store." when the store is attached to another database). Moves the head.
    `version` 1 only for a migration older than schema 15 (no canonical column yet)."""
    # chain onto the recorded head, not onto whatever record is last now: an append after
    # records were removed by hand leaves the gap visible instead of healing it
    seq, prev = head_on(con, schema)
    seq += 1
    if version == HASH_VERSION:
        stored, columns = linked(record, seq, prev), AUDIT_COLUMNS
    else:
        stored, columns = dict(record, seq=seq, prev_hash=prev), V1_COLUMNS
        stored["record_hash"] = record_hash(stored, prev)
    con.execute(f"INSERT INTO {schema}audit_log ({', '.join(columns)}) VALUES ({', '.join('$' + c for c in columns)})",
                {c: (_payload_text(stored.get(c)) if c == "payload" else stored.get(c)) for c in columns})
    con.execute(f"INSERT OR REPLACE INTO {schema}audit_head VALUES (1, ?, ?)", [seq, stored["record_hash"]])
    return stored


def account_state(row: dict) -> dict:
    """What the chain records about an account: everything the gate reads, with the
    password hash itself replaced by its SHA-256."""
    return {"name": row["name"], "role": row["role"], "domains": sorted(row["domains"] or []),
            "aliases": sorted(row["aliases"] or []), "disabled": bool(row["disabled"]),
            "password": hashlib.sha256(str(row["password_hash"]).encode()).hexdigest()}


def _now() -> str:
    from ..clock import utc_now
    return utc_now()


def header_record(con: duckdb.DuckDBPyConnection, run_id: str, schema: str = "") -> dict:
    """The `run` record for a run just stored (its header; see store.digest)."""
    header = run_header(con, run_id, schema)
    return {"created_at": _now(), "kind": "run", "actor": header["author"] or "", "run_id": run_id,
            "content_hash": header["content_hash"], "decision": None, "comment": None, "payload": header}


def canonical_account_names(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 8: account names in the canonical form (identity.canonical_name) where
    that is possible without merging two accounts; others are left as they were."""
    from ..identity import canonical_name
    from ..errors import UsageError

    names = [r[0] for r in con.execute("SELECT name FROM users").fetchall()]
    taken = set(names)
    for name in names:
        try:
            canonical = canonical_name(name)
        except UsageError:
            continue
        if canonical != name and canonical not in taken:
            con.execute("UPDATE users SET name = ? WHERE name = ?", [canonical, name])
            taken.add(canonical)
            taken.discard(name)


def adopt_unchained(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 8: one chained `adopt` record with the state of every account and the
    header of every run stored before the chain covered them (nothing when there are none)."""
    chained = con.execute("SELECT count(*) FROM audit_log WHERE kind IN ('adopt', 'run') OR "
                          "(kind LIKE 'user_%' AND payload LIKE '%\"account\"%')").fetchall()[0][0]
    if chained:
        return  # the chain already covers this store: migrations re-run by hand adopt nothing
    columns = ("name", "role", "domains", "aliases", "password_hash", "disabled")
    users = [dict(zip(columns, r)) for r in con.execute(
        f"SELECT {', '.join(columns)} FROM users ORDER BY name").fetchall()]
    runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY created_at, run_id").fetchall()]
    if not users and not runs:
        return
    payload = {"accounts": [account_state(u) for u in users], "runs": [run_header(con, rid) for rid in runs]}
    append_on(con, {"created_at": _now(), "kind": "adopt", "actor": fold_name(getpass.getuser()), "run_id": None,
                    "content_hash": None, "decision": None,
                    "comment": f"adopted {len(users)} accounts and {len(runs)} runs stored before the audit "
                               "chain covered them", "payload": payload}, version=1)  # schema 8: hash version 1
