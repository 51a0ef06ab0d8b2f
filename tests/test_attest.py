"""A portable approval (issue 33 item 5; docs/attestation.md): `termgate attest create` writes an
in-toto Statement v1 in a DSSE envelope, `termgate attest verify` decides from the file alone.

The store is a signed one (a trust root, a CI key, a medical approver with a sealed key),
built once per backend; each tampering edits a copy of its attestation the way someone
holding the file (or the store's rows) could, re-hashing whatever can be re-hashed."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import golden_row, run_sql, write_jsonl
from termgate.cli import main
from termgate.dsse import Envelope, decode_b64, pae, read_envelope, seal_envelope
from termgate.governance import attest
from termgate.governance import signoff as so
from termgate.governance import trust
from termgate.governance.audit_chain import verify_records
from termgate.governance.attest_file import PREDICATE_TYPE, RECORD_TYPES, STATEMENT_TYPE
from termgate.signing import PrivateKey, Signer, signing_as, write_key_file
from termgate.store.records import AUDIT_COLUMNS, linked

P = "correct-horse-battery"


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


# ---------------------------------------------------------------- DSSE, against the spec


def test_pae_is_the_dsse_spec_s_test_vector():
    # DSSE protocol.md, "Test Vectors": this body and type give exactly this PAE
    assert pae("http://example.com/HelloWorld", b"hello world") == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    assert pae("", b"") == b"DSSEv1 0  0 "
    assert pae("é", b"\x00") == b"DSSEv1 2 \xc3\xa9 1 \x00"  # lengths in bytes, not characters


def test_the_spec_s_own_signature_verifies_over_our_pae():
    """An independent oracle: the spec's ECDSA P-256 signature (made by its reference
    implementation) verifies over the bytes our pae() gives, and over no others."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    x = 46950820868899156662930047687818585632848591499744589407958293238635476079160
    y = 5640078356564379163099075877009565129882514886557779369047442380624545832820
    public = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    raw = decode_b64("A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA==")
    sig = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    envelope = read_envelope('{"payload": "aGVsbG8gd29ybGQ=", "payloadType": "http://example.com/HelloWorld", '
                             '"signatures": [{"sig": "A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHq'
                             'JPcIAriEGAHTVeCUjW2JIZA=="}]}')
    public.verify(sig, pae(envelope.payload_type, envelope.body), ec.ECDSA(hashes.SHA256()))
    with pytest.raises(InvalidSignature):
        public.verify(sig, b"DSSEv1 29 http://example.com/HelloWorld 11 hello world!", ec.ECDSA(hashes.SHA256()))


def test_an_envelope_verifies_with_its_key_only_and_either_base64():
    key, other = PrivateKey.generate(), PrivateKey.generate()
    data = seal_envelope(b'{"a": 1}', [key])
    sig = data["signatures"][0]["sig"]
    envelope = Envelope(data["payloadType"], decode_b64(data["payload"]), [])
    assert data["signatures"][0]["keyid"] == key.fingerprint
    assert envelope.verifies(key.public, sig)
    assert envelope.verifies(key.public, base64.urlsafe_b64encode(decode_b64(sig)).decode().rstrip("="))
    assert not envelope.verifies(other.public, sig)
    assert not Envelope(data["payloadType"], b'{"a": 2}', []).verifies(key.public, sig)


def test_the_reader_knows_every_stored_column():
    assert set(RECORD_TYPES) == set(AUDIT_COLUMNS)


# ---------------------------------------------------------------- a signed store, attested


def _build(db: str, folder: Path) -> dict:
    """ada (admin, trust root), carol (medical approver, sealed key), the CI's key; a medical
    run by erin evaluated under the CI key and approved by carol; its attestation."""
    ada = so.add_user(db, "ada", "admin", P)
    root = trust.init_trust(db, ada, P)
    admin = trust.personal_signer(db, "ada", P)
    ci = PrivateKey.generate()
    with signing_as(admin):
        so.add_user(db, "carol", "approver", P, domains="medical")
        trust.register_key(db, admin, "service:ci", ci.public)
    write_key_file(folder / "ci.key", ci)
    env = {"TERMGATE_CI_KEY": str(folder / "ci.key"), "GITHUB_ACTOR": "erin"}
    golden = write_jsonl(folder / "golden.jsonl", [golden_row("m1", "heart attack", ["mi", "myocardial infarction"],
                                                              domain="medical")])
    generated = write_jsonl(folder / "gen.jsonl", [{"query_id": "m1", "terms": ["mi", "myocardial infarction"]}])
    result = cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
                 "--author", "erin", "--prompt-version", "v7", "-q", env=env)
    assert result.exit_code == 3, result.output  # a medical run awaits sign-off
    from termgate import store

    run_id = store.list_runs(db)["run_id"].tolist()[0]
    with signing_as(trust.personal_signer(db, "carol", P)):
        so.decide_as(db, run_id, so.authenticate(db, "carol", P), "approve", "reviewed", ack_all=True)
    out = folder / "release.intoto.json"
    result = cli("attest", "create", run_id, "--out", out, "--db", db, env=env)
    assert result.exit_code == 0, result.output
    return {"root": root, "run_id": run_id, "file": out, "env": env}


@pytest.fixture
def signed(request, backend, store_templates, tmp_path):
    db, made = store_templates.copy(request, backend, "attest-signed", _build, tmp_path)
    return db, made


def verify(path, root, *require, env=None):
    args = ["attest", "verify", path, "--trust-root", root]
    for domain in require:
        args += ["--require", domain]
    return cli(*args, env=env)


def _no_store(monkeypatch, tmp_path):
    """An empty working folder, no store at $TERMGATE_DB, and no store connection possible."""
    import duckdb
    import psycopg

    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.chdir(empty)
    monkeypatch.setenv("TERMGATE_DB", str(empty / "none.duckdb"))
    real = duckdb.connect

    def memory_only(database=":memory:", *args, **kwargs):
        if str(database) not in (":memory:", ""):
            raise AssertionError(f"attest verify opened a store: {database}")
        return real(database, *args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", memory_only)
    monkeypatch.setattr(psycopg, "connect", lambda *a, **k: (_ for _ in ()).throw(AssertionError("opened PG")))
    return empty


@pytest.mark.slow
def test_an_approved_run_verifies_without_the_store(signed, monkeypatch, tmp_path):
    _, made = signed
    empty = _no_store(monkeypatch, tmp_path)
    result = verify(made["file"], made["root"], "medical")
    assert result.exit_code == 0, result.output
    assert f"run {made['run_id']}: prompt version v7" in result.output
    assert "medical: approved by carol (1 needed" in result.output
    assert "envelope signed by" in result.output and "(service:ci)" in result.output
    assert list(empty.iterdir()) == []  # nothing written, no store made


@pytest.mark.slow
def test_the_statement_is_in_toto_v1_about_the_run_s_content(signed):
    db, made = signed
    from termgate import store

    data = json.loads(made["file"].read_text())
    assert data["payloadType"] == "application/vnd.in-toto+json"
    statement = json.loads(base64.b64decode(data["payload"]))
    assert statement["_type"] == STATEMENT_TYPE == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == PREDICATE_TYPE
    run = store.get_run(db, made["run_id"])
    assert statement["subject"] == [{"name": made["run_id"], "digest": {"sha256": run["content_hash"]}}]
    predicate = statement["predicate"]
    assert predicate["run"]["prompt_version"] == "v7"
    assert predicate["run"]["generated_hash"] == run["generated_hash"]
    assert predicate["run"]["golden"]["revision"] == run["golden_hash"]
    assert [(d["actor"], d["decision"]) for d in predicate["decisions"]] == [("carol", "approve")]
    assert predicate["decisions"][0]["signer"]["key"].startswith("ed25519:")
    assert predicate["release"]["status"] == "releasable"
    assert [r["seq"] for r in predicate["records"]] == list(range(1, predicate["chain"]["records"] + 1))
    assert predicate["chain"]["trust_root"] == made["root"]


# ---------------------------------------------------------------- tampering


def _statement(path: Path) -> dict:
    return json.loads(base64.b64decode(json.loads(path.read_text())["payload"]))


def _rewrap(path: Path, statement: dict, keys=()) -> Path:
    body = json.dumps(statement, sort_keys=True, separators=(",", ":")).encode()
    out = path.with_name("tampered.json")
    out.write_text(json.dumps(seal_envelope(body, list(keys))))
    return out


def _relink(records: list[dict], start: int, signer_at: dict | None = None) -> list[dict]:
    """Records from index `start` linked again after the one before it (hashes and `extends`
    made right, as anyone with the records can); `signer_at` {index: Signer} re-signs those."""
    out = records[:start]
    for i, rec in enumerate(records[start:], start):
        prev = out[-1]["record_hash"] if out else "0" * 64
        payload = dict(rec["payload"] or {})
        if "extends" in payload:
            payload["extends"] = f"{len(out)}:{prev}"
        fields = {k: rec[k] for k in ("created_at", "kind", "actor", "run_id", "content_hash", "decision", "comment")}
        signer = (signer_at or {}).get(i)
        if signer is not None:
            payload.pop("signature", None)
        out.append({k: v for k, v in linked(dict(fields, payload=payload, signer=signer), len(out) + 1, prev).items()
                    if k in AUDIT_COLUMNS})
    return out


def _resummarize(statement: dict) -> dict:
    """The predicate's summary made consistent with its (edited) records, as a forger would."""
    predicate = statement["predicate"]
    records = predicate["records"]
    chain = verify_records(records)
    predicate.update(attest.summarize(records, predicate["run"]["id"], predicate["run_row"], chain))
    return statement


def _seq_of(records, kind, **where) -> int:
    return next(i for i, r in enumerate(records) if r["kind"] == kind and all(r[k] == v for k, v in where.items()))


@pytest.mark.slow
def test_a_decision_changed_in_the_payload_breaks_the_chain(signed):
    _, made = signed
    statement = _statement(made["file"])
    records = statement["predicate"]["records"]
    records[_seq_of(records, "decision")]["comment"] = "approved without reading"
    result = verify(_rewrap(made["file"], statement), made["root"], "medical")
    assert result.exit_code == 1
    assert "audit chain broken: record" in result.output and "(decision by carol)" in result.output


@pytest.mark.slow
def test_a_record_dropped_breaks_the_chain(signed):
    _, made = signed
    statement = _statement(made["file"])
    del statement["predicate"]["records"][2]
    result = verify(_rewrap(made["file"], statement), made["root"])
    assert result.exit_code == 1
    assert "audit chain broken: record 4: expected record 3 here" in result.output


@pytest.mark.slow
def test_a_swapped_trust_root_is_not_the_pinned_one(signed):
    _, made = signed
    statement = _statement(made["file"])
    records = statement["predicate"]["records"]
    at = _seq_of(records, "trust_root")
    forger = PrivateKey.generate()
    records[at]["payload"]["key"] = {"public": forger.public}
    statement["predicate"]["records"] = _relink(records, at, {at: Signer(forger, holder="ada")})
    result = verify(_rewrap(made["file"], _resummarize(statement), [forger]), made["root"])
    assert result.exit_code == 1
    assert f"trust root: the attested chain's is {forger.fingerprint}" in result.output
    assert f"not the pinned {made['root']}" in result.output


@pytest.mark.slow
def test_a_decision_signed_by_a_key_the_chain_never_registered_does_not_count(signed):
    _, made = signed
    statement = _statement(made["file"])
    records = statement["predicate"]["records"]
    at = _seq_of(records, "decision")
    forged = PrivateKey.generate()  # carol's name, a key no admin registered
    statement["predicate"]["records"] = _relink(records[:at + 1], at, {at: Signer(forged, holder="carol")})
    result = verify(_rewrap(made["file"], _resummarize(statement)), made["root"], "medical")
    assert result.exit_code == 1
    assert "medical: 0 of 1 approvals" in result.output
    assert f"approve by 'carol' does not count (signed by {forged.fingerprint[:20]}…, a key the chain never " \
           "registered" in result.output


@pytest.mark.slow
@pytest.mark.parametrize("field, value", [("release", {"status": "releasable", "exit_code": 0, "reasons": []}),
                                          ("decisions", []), ("run", None)])
def test_an_edited_summary_is_not_what_the_records_state(signed, field, value):
    _, made = signed
    statement = _statement(made["file"])
    predicate = statement["predicate"]
    if field == "run":
        predicate["run"]["prompt_version"] = "v8"  # the version about to go live, not the one approved
    else:
        predicate[field] = value
    result = verify(_rewrap(made["file"], statement), made["root"], "medical")
    assert result.exit_code == 1
    assert f"the predicate's {field} is not what its records state" in result.output


@pytest.mark.slow
def test_a_subject_or_run_row_of_another_run_is_refused(signed):
    _, made = signed
    statement = _statement(made["file"])
    statement["subject"][0]["digest"]["sha256"] = "ab" * 32
    result = verify(_rewrap(made["file"], statement), made["root"])
    assert result.exit_code == 1 and "the subject's sha256 abababababababab… is not run" in result.output
    statement = _statement(made["file"])
    row = json.loads(statement["predicate"]["run_row"])
    statement["predicate"]["run_row"] = json.dumps(dict(row, prompt_version="v8"))
    result = verify(_rewrap(made["file"], _resummarize(statement)), made["root"])
    assert result.exit_code == 1 and "the predicate's run_row is not the row run" in result.output


@pytest.mark.slow
def test_an_edited_envelope_s_signature_fails(signed):
    _, made = signed
    data = json.loads(made["file"].read_text())
    statement = _statement(made["file"])
    statement["predicate"]["created"]["at"] = "2030-01-01T00:00:00Z"  # not part of the summary
    data["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    path = made["file"].with_name("edited.json")
    path.write_text(json.dumps(data))
    result = verify(path, made["root"])
    assert result.exit_code == 1
    assert "the envelope's signature by ed25519:" in result.output and "(service:ci) does not verify" in result.output


@pytest.mark.slow
def test_a_wrong_trust_root_is_refused(signed, monkeypatch):
    _, made = signed
    other = PrivateKey.generate().fingerprint
    result = verify(made["file"], other, "medical")
    assert result.exit_code == 1
    assert f"not the pinned {other}" in result.output
    monkeypatch.setenv("TERMGATE_TRUST_ROOT", made["root"])  # the variable stands for the option
    assert cli("attest", "verify", made["file"]).exit_code == 0


@pytest.mark.slow
def test_require_a_domain_the_run_does_not_have(signed):
    _, made = signed
    result = verify(made["file"], made["root"], "medical", "legal")
    assert result.exit_code == 1
    assert f"--require legal: run {made['run_id']} has no legal queries" in result.output


# ---------------------------------------------------------------- create


@pytest.mark.slow
def test_create_refuses_a_broken_chain_and_an_existing_file(signed, tmp_path):
    db, made = signed
    out = tmp_path / "again.json"
    out.write_text("kept")
    result = cli("attest", "create", made["run_id"], "--out", out, "--db", db)
    assert result.exit_code == 2 and "exists; an attestation is never overwritten" in result.output
    assert out.read_text() == "kept"
    run_sql(db, "UPDATE audit_log SET comment = 'edited' WHERE kind = 'decision'")
    fresh = tmp_path / "fresh.json"
    result = cli("attest", "create", made["run_id"], "--out", fresh, "--db", db)
    assert result.exit_code == 1 and "the audit chain is broken, so no attestation is made" in result.output
    assert not fresh.exists()


@pytest.mark.slow
def test_an_unsigned_store_s_attestation_never_verifies(backend, tmp_path, monkeypatch):
    db = backend
    so.add_user(db, "carol", "approver", P, domains="medical")
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("m1", "heart attack", ["mi"], domain="medical")])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "m1", "terms": ["mi"]}])
    assert cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
               "--author", "erin", "-q").exit_code == 3
    from termgate import store

    run_id = store.list_runs(db)["run_id"].tolist()[0]
    so.decide_as(db, run_id, so.authenticate(db, "carol", P), "approve", "ok", ack_all=True)
    result = cli("attest", "create", run_id, "--out", tmp_path / "a.json", "--db", db)
    assert result.exit_code == 1 and "the store has no trust root" in result.output
    assert not (tmp_path / "a.json").exists()
    envelope, summary, notes = attest.create_attestation(db, run_id)  # made anyway, by the library
    assert summary["release"]["status"] == "releasable" and "no trust root" in notes[0]
    path = tmp_path / "unsigned.json"
    attest.write_attestation(path, envelope)
    for root in (PrivateKey.generate().fingerprint,):
        result = verify(path, root, "medical")
        assert result.exit_code == 1
        assert "trust root: the attested chain's is none (nothing in it is signed)" in result.output


# ---------------------------------------------------------------- malformed files: exit 2


def _good_statement() -> dict:
    return {"_type": STATEMENT_TYPE, "subject": [{"name": "r", "digest": {"sha256": "00"}}],
            "predicateType": PREDICATE_TYPE,
            "predicate": {"run": {"id": "r"}, "policy": {}, "decisions": [], "release": {}, "chain": {},
                          "run_row": "{}", "records": []}}


@pytest.mark.parametrize("edit, field", [
    (lambda s: "not json", "envelope"),
    (lambda s: json.dumps({"payloadType": "application/vnd.in-toto+json", "payload": "%%%", "signatures": []}),
     "payload"),
    (lambda s: dict(s, _type="https://in-toto.io/Statement/v0.1"), "payload._type"),
    (lambda s: dict(s, predicateType="https://slsa.dev/provenance/v1"), "payload.predicateType"),
    (lambda s: dict(s, subject=[]), "payload.subject"),
    (lambda s: {**s, "predicate": {**s["predicate"], "records": [{"seq": "1"}]}}, "predicate.records[0].seq"),
    (lambda s: {**s, "predicate": {**s["predicate"], "run_row": "[]"}}, "predicate.run_row"),
])
def test_a_malformed_file_exits_2_naming_the_field(tmp_path, edit, field):
    path = tmp_path / "bad.intoto.json"
    edited = edit(copy.deepcopy(_good_statement()))
    if isinstance(edited, dict):
        edited = json.dumps(seal_envelope(json.dumps(edited).encode(), []))
    path.write_text(edited)
    result = verify(path, PrivateKey.generate().fingerprint)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}:") and f": {field}: " in lines[0]


def test_verify_needs_a_trust_root(tmp_path, monkeypatch):
    monkeypatch.delenv("TERMGATE_TRUST_ROOT", raising=False)
    result = cli("attest", "verify", tmp_path / "x.json")
    assert result.exit_code == 2 and "--trust-root is required" in result.output
    assert cli("attest", "verify", tmp_path / "x.json", "--trust-root", "ed25519:short").exit_code == 2


@pytest.mark.slow
def test_an_unattested_run_never_verifies(signed, tmp_path):
    """Evaluated without the CI's key: its header is unsigned, so even the approval already on
    its content (the same terms as the approved run) makes it releasable nowhere."""
    db, made = signed
    from termgate import store

    folder = Path(made["env"]["TERMGATE_CI_KEY"]).parent
    result = cli("evaluate", "--golden", folder / "golden.jsonl", "--generated", folder / "gen.jsonl", "--db", db,
                 "--drift-judge", "none", "--author", "erin", "-q")
    assert result.exit_code == 1 and "unattested" in result.output
    run_id = next(r for r in store.list_runs(db)["run_id"].tolist() if r != made["run_id"])
    out = tmp_path / "unattested.json"
    assert cli("attest", "create", run_id, "--out", out, "--db", db, env=made["env"]).exit_code == 0
    result = verify(out, made["root"], "medical")
    assert result.exit_code == 1
    assert f"not releasable: unattested: run {run_id}'s header" in result.output


@pytest.mark.slow
def test_a_later_rejection_stands(signed, tmp_path):
    db, made = signed
    with signing_as(trust.personal_signer(db, "ada", P)):
        so.decide_as(db, made["run_id"], so.authenticate(db, "ada", P), "reject", "wrong drug names", ack_all=True)
    out = tmp_path / "rejected.json"
    assert cli("attest", "create", made["run_id"], "--out", out, "--db", db, env=made["env"]).exit_code == 0
    result = verify(out, made["root"], "medical")
    assert result.exit_code == 1
    assert "not releasable: rejected by ada: wrong drug names" in result.output.splitlines()


@pytest.mark.slow
def test_a_decision_written_with_only_the_store_s_access_never_verifies(signed, tmp_path):
    """Whoever holds a database role's password (or the DuckDB file) writes carol's approval of
    a new run as termgate would, but cannot sign it with carol's key: the attestation made
    from that store does not verify, and says which record did not count."""
    db, made = signed
    from termgate import store

    folder = Path(made["env"]["TERMGATE_CI_KEY"]).parent
    generated = write_jsonl(tmp_path / "v8.jsonl", [{"query_id": "m1", "terms": ["myocardial infarction", "mi"]}])
    assert cli("evaluate", "--golden", folder / "golden.jsonl", "--generated", generated, "--db", db,
               "--drift-judge", "none", "--author", "erin", "--prompt-version", "v8", "-q",
               env=made["env"]).exit_code == 3
    run_id = next(r for r in store.list_runs(db)["run_id"].tolist() if r != made["run_id"])
    so.decide_as(db, run_id, so.authenticate(db, "carol", P), "approve", "looks fine", ack_all=True)  # no key
    out = tmp_path / "forged.json"
    assert cli("attest", "create", run_id, "--out", out, "--db", db, env=made["env"]).exit_code == 0
    result = verify(out, made["root"], "medical")
    assert result.exit_code == 1
    assert "not releasable: awaiting sign-off: medical: 0 of 1 approvals" in result.output
    assert "approve by 'carol' does not count (unsigned then)" in result.output
