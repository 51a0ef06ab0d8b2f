"""Reading an attestation file (docs/attestation.md): the DSSE envelope, the in-toto Statement
v1 inside it and the shape of termgate's release predicate. Whatever is not an attestation
termgate reads is an InputError naming the file, the line of the envelope it is on and the
field (exit 2); what the fields say is judged by governance.attest, never here."""

from __future__ import annotations

import json
from pathlib import Path

from ..dsse import PAYLOAD_TYPE, Envelope, read_envelope
from ..errors import InputError, Problem

__all__ = ["STATEMENT_TYPE", "PREDICATE_TYPE", "SUMMARY_KEYS", "RECORD_TYPES", "read_statement"]

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://termgate.dev/attestation/release/v1"
SUMMARY_KEYS = ("run", "policy", "decisions", "release", "chain")
"""The predicate's fields recomputed from its records on verification (docs/attestation.md)."""
_TEXT = (str, type(None))
RECORD_TYPES = {"seq": int, "created_at": str, "kind": str, "actor": str, "run_id": _TEXT, "content_hash": _TEXT,
                 "decision": _TEXT, "comment": _TEXT, "payload": (dict, type(None)), "prev_hash": str,
                 "record_hash": str, "hash_version": (int, type(None)), "canonical": _TEXT}
"""Each audit record's fields as stored (store.records.AUDIT_COLUMNS) and their JSON types."""


class _Reader:
    def __init__(self, path: Path, text: str):
        self.path, self.text = path, text

    def line_of(self, key: str) -> int:
        index = self.text.find(f'"{key}"')
        return self.text.count("\n", 0, index) + 1 if index >= 0 else 1

    def fail(self, field: str, message: str, key: str = "payload") -> InputError:
        return InputError([Problem(str(self.path), self.line_of(key), field, message)])


def _records(reader: _Reader, records) -> None:
    if not isinstance(records, list):
        raise reader.fail("predicate.records", "missing or not a list of audit records")
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise reader.fail(f"predicate.records[{i}]", "not an object")
        for key, kind in RECORD_TYPES.items():
            value = rec.get(key)
            if key not in rec or not isinstance(value, kind) or isinstance(value, bool):
                raise reader.fail(f"predicate.records[{i}].{key}", "missing or of the wrong type")


def _predicate(reader: _Reader, predicate) -> None:
    if not isinstance(predicate, dict):
        raise reader.fail("predicate", "missing or not an object")
    for key in (*SUMMARY_KEYS, "run_row", "records"):
        if key not in predicate:
            raise reader.fail(f"predicate.{key}", "missing")
    run = predicate["run"]
    if not isinstance(run, dict) or not isinstance(run.get("id"), str):
        raise reader.fail("predicate.run.id", "missing or not a string")
    try:
        row = json.loads(predicate["run_row"]) if isinstance(predicate["run_row"], str) else None
    except (ValueError, RecursionError):
        row = None
    if not isinstance(row, dict):
        raise reader.fail("predicate.run_row", "not the JSON text of a runs row")
    _records(reader, predicate["records"])


def read_statement(path: str | Path) -> tuple[Envelope, dict]:
    """(the envelope, its statement) of an attestation file; InputError otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError([Problem(str(path), 0, "file", "not found")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([Problem(str(path), 0, "file", f"cannot be read ({exc})")]) from None
    reader = _Reader(path, text)
    try:
        envelope = read_envelope(text)
    except ValueError as exc:
        field, message = exc.args
        raise reader.fail(field, message, field) from None
    if envelope.payload_type != PAYLOAD_TYPE:
        raise reader.fail("payloadType", f"{envelope.payload_type!r}, not {PAYLOAD_TYPE!r}", "payloadType")
    try:
        statement = json.loads(envelope.body)
    except (ValueError, RecursionError):
        raise reader.fail("payload", "its decoded body is not JSON (an in-toto Statement)") from None
    if not isinstance(statement, dict) or statement.get("_type") != STATEMENT_TYPE:
        raise reader.fail("payload._type", f"not an in-toto Statement ({STATEMENT_TYPE})")
    subject = statement.get("subject")
    if not (isinstance(subject, list) and subject and isinstance(subject[0], dict)
            and isinstance(subject[0].get("digest"), dict) and isinstance(subject[0]["digest"].get("sha256"), str)):
        raise reader.fail("payload.subject", "not a list whose first entry has a sha256 digest")
    if statement.get("predicateType") != PREDICATE_TYPE:
        raise reader.fail("payload.predicateType", f"{statement.get('predicateType')!r}, not {PREDICATE_TYPE!r}")
    _predicate(reader, statement.get("predicate"))
    return envelope, statement
