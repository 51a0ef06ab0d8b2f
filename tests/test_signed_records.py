"""Issue 33: signed records, keys and the trust root, through the CLI a team uses (DuckDB; the
attacks on both backends are tests/security/test_sec_signed.py)."""

from __future__ import annotations

import base64
import json
import os
import stat

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.clock import utc_now
from termgate.governance import signoff as so
from termgate.governance import trust
from termgate.governance.audit_chain import actor_states
from termgate.governance.signatures import authority_of
from termgate.signing import PrivateKey, Signer, seal, signing_as, unseal

from conftest import golden_row, write_jsonl

PASSWORD = "correct-horse-battery"


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


# ---------------------------------------------------------------- keys


def test_a_sealed_key_opens_only_with_its_password_and_only_as_its_own_key():
    key, other = PrivateKey.generate(), PrivateKey.generate()
    sealed = seal(key, PASSWORD)
    assert unseal(sealed, key.public, PASSWORD).fingerprint == key.fingerprint
    with pytest.raises(so.SignoffRefused, match="does not open"):
        unseal(sealed, key.public, PASSWORD + "x")
    with pytest.raises(so.SignoffRefused):  # the public key is the AEAD's associated data
        unseal(sealed, other.public, PASSWORD)
    raw = base64.b64encode(key._raw()).decode()
    assert raw not in json.dumps(sealed) and raw not in repr(key)


def test_keys_new_writes_a_private_file_never_overwrites_and_never_prints_the_key(tmp_path):
    out = tmp_path / "ci.key"
    result = cli("keys", "new", "--out", out)
    assert result.exit_code == 0, result.output
    data = json.loads(out.read_text())
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o600
    assert data["private"] not in result.output and data["fingerprint"] in result.output
    before = out.read_text()
    again = cli("keys", "new", "--out", out)
    assert again.exit_code == 2 and "never overwritten" in again.output
    assert out.read_text() == before


def test_the_signature_covers_content_signer_and_the_head_it_extends(tmp_path):
    """An independent check of the message: cryptography's verify over the prefix, the
    previous hash and the canonical text rebuilt here without `sig`."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    from termgate.store.records import linked

    key = PrivateKey.generate()
    record = {"created_at": "2026-12-03T00:00:00Z", "kind": "decision", "actor": "carol", "run_id": "r1",
              "content_hash": "c" * 64, "decision": "approve", "comment": "ok", "payload": {"a": 1},
              "signer": Signer(key, holder="carol")}
    stored = linked(record, 5, "ab" * 32)
    sig = stored["payload"]["signature"]
    fields = json.loads(stored["canonical"])
    payload = json.loads(fields["payload"])
    payload["signature"].pop("sig")
    fields["payload"] = json.dumps(payload, sort_keys=True)
    message = ("termgate-record-v1\n" + "ab" * 32 + "\n" + json.dumps(fields, sort_keys=True, separators=(",", ":")))
    public = Ed25519PublicKey.from_public_bytes(base64.b64decode(key.public))
    public.verify(base64.b64decode(sig["sig"]), message.encode())  # raises when it does not verify
    with pytest.raises(Exception):
        public.verify(base64.b64decode(sig["sig"]), message.replace("ab" * 32, "cd" * 32, 1).encode())
    with pytest.raises(so.SignoffRefused, match="signs only carol"):
        linked(dict(record, actor="dave"), 5, "ab" * 32)


# ---------------------------------------------------------------- the flow


@pytest.fixture
def signed(tmp_path, monkeypatch):
    """A signed DuckDB store made through the CLI: root admin ada, approver carol, the CI's
    key, and one medical review run by erin evaluated with that key."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    monkeypatch.setenv("TERMGATE_ADMIN_PASSWORD", PASSWORD)
    monkeypatch.setenv("TERMGATE_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    db = str(tmp_path / "s.duckdb")
    made = cli("users", "add", "ada", "--role", "admin", "--root", "--db", db)
    assert made.exit_code == 0, made.output
    root = next(line.split()[-1] for line in made.output.splitlines() if line.startswith("trust root:"))
    assert cli("users", "add", "carol", "--role", "approver", "--domains", "medical", "--admin", "ada",
               "--db", db).exit_code == 0
    assert cli("keys", "new", "--out", tmp_path / "ci.key").exit_code == 0
    reg = cli("keys", "register", "--service", "ci", "--key-file", tmp_path / "ci.key", "--admin", "ada", "--db", db)
    assert reg.exit_code == 0, reg.output
    golden = write_jsonl(tmp_path / "golden.jsonl", [golden_row("m1", "heart attack", ["mi"], domain="medical")])
    generated = write_jsonl(tmp_path / "gen.jsonl", [{"query_id": "m1", "terms": ["mi"]}])
    run = cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
              "--author", "erin", "-q", env={"TERMGATE_CI_KEY": str(tmp_path / "ci.key")})
    assert run.exit_code == 3, run.output
    return db, root, store.list_runs(db)["run_id"].iloc[0], (golden, generated)


@pytest.mark.slow
def test_the_whole_flow_signs_every_authority_record_and_releases(signed):
    db, root, run_id, _ = signed
    result = cli("signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "checked", "--ack-all", "--db", db)
    assert result.exit_code == 0, result.output
    records = store.audit_records(db)
    authority = authority_of(records)
    assert authority.root == root
    assert [c.status for c in authority.checks.values()] == ["before trust root"] + ["signed"] * (len(records) - 1)
    assert {r["kind"] for r in records[1:]} >= {"trust_root", "user_add", "key_register", "run", "decision"}
    # the chain holds public keys only: the sealed keys stay in the store's own table
    sealed = store.sealed_keys(db)
    assert len(sealed) == 2 and not any(json.loads(s)["sealed"] in json.dumps(records) for s in sealed.values())
    verify = cli("audit", "verify", "--db", db, "--trust-root", root)
    assert verify.exit_code == 0 and "1 unsigned record before it" in verify.output, verify.output
    assert "nothing is pinned" not in verify.output
    assert "no trust root is pinned" in cli("audit", "verify", "--db", db).output
    assert cli("gate", run_id, "--db", db).exit_code == 0


@pytest.mark.slow
def test_an_unsigned_decision_or_account_change_carries_no_authority_and_is_named(signed):
    db, root, run_id, _ = signed
    run = store.get_run(db, run_id)
    head = so.verify_chain(db).head
    store.append_audit(db, {"created_at": utc_now(), "kind": "decision", "actor": "carol", "run_id": run_id,
                            "content_hash": run["content_hash"], "decision": "approve", "comment": "forged",
                            "payload": {"extends": head}})
    assert cli("gate", run_id, "--db", db).exit_code == 3
    verify = cli("audit", "verify", "--db", db)
    assert verify.exit_code == 0 and "(decision by carol): unsigned — it carries no authority" in verify.output
    # an account change without an admin's key: refused by the CLI, and without effect if written anyway
    refused = cli("users", "set-role", "carol", "--role", "admin", "--db", db, env={"TERMGATE_ADMIN_PASSWORD": None})
    assert refused.exit_code == 4 and "needs an admin's key" in refused.output
    so.set_role(db, "carol", "approver", domains="medical,legal")  # what file access can write
    final: dict = {}
    actor_states(store.audit_records(db), final)
    assert final["carol"]["domains"] == ["medical"]  # the unsigned widening was not applied


@pytest.mark.slow
def test_an_unsigned_run_is_unattested_and_never_releasable(signed):
    db, root, run_id, (golden, generated) = signed
    again = cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
                "--author", "erin", "-q", "--name", "unsigned")
    assert again.exit_code == 1 and "unattested" in again.output, again.output
    unsigned = [r for r in store.list_runs(db)["run_id"] if r != run_id][0]
    approve = cli("signoff", unsigned, "--approve", "--reviewer", "carol", "--comment", "x", "--ack-all", "--db", db)
    assert approve.exit_code == 1 and "unattested" in approve.output
    assert cli("gate", unsigned, "--db", db).exit_code == 1


@pytest.mark.slow
def test_keys_rotate_and_revoke_and_a_pinned_root_must_match(signed, tmp_path):
    db, root, run_id, _ = signed
    old = authority_of(store.audit_records(db)).key_of("carol")
    assert cli("users", "passwd", "carol", "--admin", "ada", "--db", db,
               env={"TERMGATE_PASSWORD": PASSWORD + "2"}).exit_code == 0
    new = authority_of(store.audit_records(db)).key_of("carol")
    assert new["fingerprint"] != old["fingerprint"]
    # carol's old key, taken before the rotation, no longer counts
    stale = Signer(unseal(json.loads(store.sealed_keys(db)[old["fingerprint"]]), old["public"], PASSWORD),
                   holder="carol")
    with signing_as(stale):
        so.decide_as(db, run_id, so.current_account(db, "carol"), "approve", "old key", ack_all=True)
    assert cli("gate", run_id, "--db", db).exit_code == 3
    assert "revoked or replaced" in cli("audit", "verify", "--db", db).output
    current = trust.personal_signer(db, "carol", PASSWORD + "2")
    revoke = cli("keys", "revoke", new["fingerprint"], "--admin", "ada", "--db", db)
    assert revoke.exit_code == 0, revoke.output
    with pytest.raises(so.SignoffRefused, match="no signing key"):
        trust.personal_signer(db, "carol", PASSWORD + "2")
    with signing_as(current):
        so.decide_as(db, run_id, so.current_account(db, "carol"), "approve", "revoked key", ack_all=True)
    assert cli("gate", run_id, "--db", db).exit_code == 3
    other = PrivateKey.generate().fingerprint
    pinned = cli("audit", "verify", "--db", db, "--trust-root", other)
    assert pinned.exit_code == 1 and "not the one pinned" in pinned.output
    assert cli("audit", "verify", "--db", db, "--trust-root", "ed25519:short").exit_code == 2
    (tmp_path / "pin.toml").write_text(f'[trust]\nroot = "{other}"\n', encoding="utf-8")
    assert cli("gate", run_id, "--db", db, env={"TERMGATE_CONFIG": str(tmp_path / "pin.toml")}).exit_code == 1
    (tmp_path / "bad.toml").write_text('high_risk_domains = ["medical"]\n[trust]\nroot = "nope"\n', encoding="utf-8")
    bad = cli("audit", "verify", "--db", db, env={"TERMGATE_CONFIG": str(tmp_path / "bad.toml")})
    assert bad.exit_code == 2 and "bad.toml:3: trust.root: " in bad.output, bad.output


@pytest.mark.slow
def test_adoption_signs_the_head_once_and_lists_the_records_before_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    db = str(tmp_path / "old.duckdb")
    for name, role in (("ada", "admin"), ("carol", "approver"), ("bob", "admin")):
        so.add_user(db, name, role, PASSWORD)
    result = cli("trust", "init", "--admin", "ada", "--db", db)
    assert result.exit_code == 0 and "trust root: ed25519:" in result.output, result.output
    assert "3 unsigned records before it" in cli("audit", "verify", "--db", db).output
    assert cli("trust", "init", "--admin", "bob", "--db", db).exit_code == 4  # one trust root per store
    # bob, an admin from before, has no key yet: his account changes are refused, not unsigned
    no_key = cli("users", "disable", "carol", "--admin", "bob", "--db", db)
    assert no_key.exit_code == 4 and "no signing key" in no_key.output
    assert store.get_user(db, "carol")["disabled"] is False
    # a second trust root signed by bob's own new key carries no authority and is named
    key = PrivateKey.generate()
    store.append_audit(db, {"created_at": utc_now(), "kind": "trust_root", "actor": "bob", "payload": {
        "key": {"public": key.public}}, "signer": Signer(key, holder="bob")})
    verify = cli("audit", "verify", "--db", db)
    assert "a second trust root" in verify.output


@pytest.mark.slow
def test_four_eyes_and_counting_are_over_identities_never_keys(signed, tmp_path):
    """Every dashboard reviewer shares the dashboard's key: two approvers through it are two
    approvals; one approver through two keys is one; the dashboard key cannot sign for the
    run's author's alias either."""
    db, root, run_id, _ = signed
    policy = tmp_path / "policy.toml"
    policy.write_text('high_risk_domains = ["legal", "medical"]\napprovals_required = {medical = 2}\n',
                      encoding="utf-8")
    assert cli("policy", "set", policy, "--admin", "ada", "--db", db).exit_code == 0
    for name in ("dan", "erin2"):
        assert cli("users", "add", name, "--role", "approver", "--domains", "medical", "--admin", "ada",
                   "--db", db).exit_code == 0
    assert cli("users", "alias", "erin2", "--add", "erin", "--admin", "ada", "--db", db).exit_code == 0
    dashboard = PrivateKey.generate()
    with signing_as(trust.personal_signer(db, "ada", PASSWORD)) as admin:
        trust.register_key(db, admin, "service:dashboard", dashboard.public)

    def through_dashboard(name: str) -> None:
        with signing_as(Signer(dashboard, service="dashboard", identity={"account": name})):
            so.decide_as(db, run_id, so.current_account(db, name), "approve", f"{name} via dashboard", ack_all=True)

    through_dashboard("carol")
    with signing_as(trust.personal_signer(db, "carol", PASSWORD)):
        so.decide_as(db, run_id, so.current_account(db, "carol"), "approve", "carol again, own key", ack_all=True)
    assert cli("gate", run_id, "--db", db).exit_code == 3  # carol twice is one approval of two
    with pytest.raises(so.SignoffRefused, match="four-eyes"):
        through_dashboard("erin2")  # erin's alias: the author, whichever key would sign
    through_dashboard("dan")
    state = so.release_state(db, run_id)
    assert state.exit_code == 0 and state.reasons[0] == "approved by carol, dan", state
    # the dashboard key signing for someone other than the record's actor carries nothing
    with signing_as(Signer(dashboard, service="dashboard", identity={"account": "dan"})):
        so.set_role(db, "dan", "admin")
    final: dict = {}
    actor_states(store.audit_records(db), final)
    assert final["dan"]["role"] == "approver"
    assert "the dashboard key may not sign user_set_role records" in cli("audit", "verify", "--db", db).output


def test_on_an_unsigned_store_an_admin_given_is_signed_in_and_named_as_the_actor(tmp_path, monkeypatch):
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    monkeypatch.setenv("TERMGATE_ADMIN_PASSWORD", PASSWORD)
    monkeypatch.setenv("TERMGATE_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    db = str(tmp_path / "plain.duckdb")
    so.add_user(db, "ada", "admin", PASSWORD)
    so.add_user(db, "vic", "viewer", PASSWORD)
    assert cli("users", "add", "bob", "--role", "viewer", "--admin", "vic", "--db", db).exit_code == 4
    wrong = cli("users", "add", "bob", "--role", "viewer", "--admin", "ada", "--db", db,
                env={"TERMGATE_ADMIN_PASSWORD": "not-her-password"})
    assert wrong.exit_code == 4 and store.get_user(db, "bob") is None
    assert cli("users", "add", "bob", "--role", "viewer", "--admin", "ada", "--db", db).exit_code == 0
    assert store.audit_records(db)[-1]["actor"] == "ada"
