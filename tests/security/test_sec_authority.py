"""Issue 32: authority comes from the chain, on both backends. Each test is one of the
attacks the issue names: a decision, verdict or policy record counts only through its
actor's chained account; the policy is the store's, and a local file or variable can only
tighten it; domain names follow the identity rule."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.clock import utc_now
from termgate.governance import signoff as so
from termgate.governance.verdicts import list_verdicts
from termgate.store.postgres import is_postgres

from conftest import golden_row, write_jsonl

pytestmark = pytest.mark.slow

PASSWORD = "correct-horse-battery"


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture
def medical(backend, tmp_path, monkeypatch):
    """A store on each backend with accounts and one medical run whose gate is review only
    because medical is high-risk (author erin)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    monkeypatch.setenv("TERMGATE_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    golden = write_jsonl(tmp_path / "golden.jsonl", [
        golden_row("m1", "heart attack", ["mi", "myocardial infarction"], domain="medical"),
        golden_row("m2", "stroke", ["cva", "brain attack"], domain="medical")])
    generated = write_jsonl(tmp_path / "gen.jsonl", [{"query_id": "m1", "terms": ["mi", "myocardial infarction"]},
                                                     {"query_id": "m2", "terms": ["cva", "brain attack"]}])
    for name, role, domains in (("carol", "approver", "medical"), ("lena", "approver", "legal"),
                                ("vic", "viewer", None), ("erin", "engineer", None), ("olga", "approver", "medical"),
                                ("ada", "admin", None), ("ben", "admin", None)):
        so.add_user(backend, name, role, PASSWORD, domains=domains)
    so.disable_user(backend, "olga")
    result = evaluate(backend, golden, generated)
    assert result.exit_code == 3, result.output
    return backend, golden, generated, store.list_runs(backend)["run_id"].iloc[0]


def evaluate(db, golden, generated, *extra, env=None):
    return cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
               "--author", "erin", "-q", *extra, env=env)


def forge(db, kind: str, actor: str, run_id=None, content_hash=None, decision=None, payload=None) -> bool:
    """Append a record as whoever can reach the store's append path would (the dashboard role
    on PostgreSQL, anyone with the file): True when it went in (a server may refuse it)."""
    try:
        store.append_audit(db, {"created_at": utc_now(), "kind": kind, "actor": actor, "run_id": run_id,
                                "content_hash": content_hash, "decision": decision, "comment": "lgtm",
                                "payload": payload or {}})
    except Exception as exc:  # noqa: BLE001 - the PostgreSQL server refusing it is fine: the gate decides either way
        if not is_postgres(db):
            raise
        assert "not an enabled account" in str(exc), exc
        return False
    return True


def test_an_approval_counts_only_through_the_approvers_chained_account(medical):
    db, _, _, run_id = medical
    run = store.get_run(db, run_id)
    claims = {"role": "admin", "approves_domains": ["medical"], "acknowledged": []}
    # no account at all; a viewer; an approver of another domain claiming medical; a disabled one
    for actor in ("mallory", "vic", "lena", "olga"):
        forge(db, "decision", actor, run_id, run["content_hash"], "approve", claims)
        gate = cli("gate", run_id, "--db", db)
        assert gate.exit_code == 3, (actor, gate.output)
        assert "medical: 0 of 1 approvals" in gate.output
    assert cli("audit", "verify", "--db", db).exit_code == 0  # forged, not broken: they simply do not count
    signed = cli("signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "ok", "--ack-all", "--db", db)
    assert signed.exit_code == 0, signed.output
    assert cli("gate", run_id, "--db", db).exit_code == 0


def test_a_rejection_by_nobody_does_not_count_but_one_by_an_engineer_does(medical):
    db, _, _, run_id = medical
    run = store.get_run(db, run_id)
    forge(db, "decision", "mallory", run_id, run["content_hash"], "reject")
    assert cli("gate", run_id, "--db", db).exit_code == 3
    forge(db, "decision", "erin", run_id, run["content_hash"], "reject", {"role": "engineer"})
    gate = cli("gate", run_id, "--db", db)
    assert gate.exit_code == 1 and "rejected by erin" in gate.output


def test_a_verdict_counts_only_through_its_reviewers_chained_account(medical):
    db, _, _, run_id = medical
    run = store.get_run(db, run_id)
    payload = {"query_id": "m1", "term": "mi", "label": "drift", "forbid": True, "role": "admin", "domain": "medical"}
    for actor in ("mallory", "vic"):
        forge(db, "verdict", actor, run_id, run["content_hash"], payload=payload)
    assert list_verdicts(db, [run_id]) == []
    forge(db, "verdict", "erin", run_id, run["content_hash"], payload=payload)
    assert [(v.reviewer, v.role) for v in list_verdicts(db, [run_id])] == [("erin", "engineer")]


def write_policy(tmp_path, text: str):
    path = tmp_path / "policy.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_local_settings_never_loosen_the_stores_policy(medical, tmp_path):
    db, golden, generated, run_id = medical
    policy = write_policy(tmp_path, 'high_risk_domains = ["legal", "medical"]\n[approvals_required]\nmedical = 2\n')
    assert cli("policy", "set", policy, "--admin", "ada", "--db", db).exit_code == 0  # tighter: in force at once
    assert cli("signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "ok", "--ack-all",
               "--db", db).exit_code == 3
    # the variable that used to turn sign-off off, a config asking for one approval, no config at all
    (tmp_path / "loose.toml").write_text("high_risk_domains = []\napprovals_required = 1\n", encoding="utf-8")
    for env in ({"TERMGATE_HIGH_RISK_DOMAINS": "none"}, {"TERMGATE_CONFIG": str(tmp_path / "loose.toml")},
                {"TERMGATE_CONFIG": None}):
        gate = cli("gate", run_id, "--db", db, env=env)
        assert gate.exit_code == 3 and "medical: 1 of 2 approvals" in gate.output, (env, gate.output)
        again = evaluate(db, golden, generated, env=env)
        assert again.exit_code == 3 and "medical: 1 of 2 approvals" in again.output, (env, again.output)  # same content


def test_a_local_setting_may_tighten_and_the_run_records_it(medical, tmp_path):
    db, golden, generated, _ = medical
    (tmp_path / "tight.toml").write_text("[approvals_required]\nmedical = 3\n", encoding="utf-8")
    result = evaluate(db, golden, generated, "--json", tmp_path / "r.json", env={"TERMGATE_CONFIG": str(tmp_path / "tight.toml")})
    assert result.exit_code == 3 and "medical: 0 of 3 approvals" in result.output
    assert "tightened by local settings: medical needs 3 approvals" in result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["run"]["policy"]["tightened"] == ["medical needs 3 approvals"]
    stored = json.loads(store.get_run(db, report["run"]["evaluation_id"] if "evaluation_id" in report["run"]
                                      else store.list_runs(db)["run_id"].iloc[0])["usage"])
    assert stored["policy"]["tightened"] == ["medical needs 3 approvals"]


def test_a_loosening_needs_a_second_admin(medical, tmp_path):
    db, golden, generated, run_id = medical
    loose = write_policy(tmp_path, 'high_risk_domains = ["legal"]\n')
    proposed = cli("policy", "set", loose, "--admin", "ada", "--db", db)
    assert proposed.exit_code == 0 and "proposed" in proposed.output
    assert evaluate(db, golden, generated).exit_code == 3  # not in force yet
    seq = [r for r in store.audit_records(db) if r["kind"] == "policy_proposal"][0]["seq"]
    alone = cli("policy", "approve", seq, "--admin", "ada", "--db", db)
    assert alone.exit_code == 4 and "second admin" in alone.output
    assert cli("policy", "approve", seq, "--admin", "carol", "--db", db).exit_code == 4  # not an admin
    # the same loosening written straight into the chain by one admin, or by anyone, counts for nothing
    forge(db, "policy", "ada", payload={"policy": {"high_risk_domains": ["legal"]}, "base": None})
    forge(db, "policy", "mallory", payload={"policy": {"high_risk_domains": []}, "base": None})
    assert evaluate(db, golden, generated).exit_code == 3
    shown = cli("policy", "show", "--db", db)
    assert "not counted" in shown.output and "high-risk domains: legal, medical" in shown.output
    assert cli("policy", "approve", seq, "--admin", "ben", "--db", db).exit_code == 0
    assert evaluate(db, golden, generated).exit_code == 0  # medical is no longer high-risk


def test_a_thresholds_file_below_the_policys_floor_is_exit_2_and_nothing_is_stored(medical, tmp_path):
    db, golden, generated, _ = medical
    policy = write_policy(tmp_path, 'high_risk_domains = ["legal", "medical"]\n[threshold_floors]\nrecall_min = 0.7\n')
    assert cli("policy", "set", policy, "--admin", "ada", "--db", db).exit_code == 0
    (tmp_path / "t.json").write_text('{\n  "recall_min": 0.5\n}\n', encoding="utf-8")
    before = len(store.list_runs(db))
    result = evaluate(db, golden, generated, "--thresholds", tmp_path / "t.json")
    assert result.exit_code == 2, result.output
    assert "t.json:2: recall_min: 0.5 is below the policy's floor 0.7" in result.output
    assert len(store.list_runs(db)) == before


@pytest.mark.parametrize("medical_spelt", ["medical\u200b", "medi\u00adcal", "\u202emedical"])
def test_a_domain_with_an_invisible_character_is_refused_everywhere(medical, tmp_path, medical_spelt):
    db, _, generated, _ = medical
    golden = write_jsonl(tmp_path / "g2.jsonl", [golden_row("m1", "heart attack", ["mi"], domain=medical_spelt)])
    result = evaluate(db, golden, generated)
    assert result.exit_code == 2 and "g2.jsonl:1: context.domain:" in result.output, result.output
    (tmp_path / "c.toml").write_text(json.dumps({"x": 1}).replace('{"x": 1}', "")
                                     + f"high_risk_domains = [{json.dumps(medical_spelt)}]\n", encoding="utf-8")
    config = cli("gate", store.list_runs(db)["run_id"].iloc[0], "--db", db, env={"TERMGATE_CONFIG": str(tmp_path / "c.toml")})
    assert config.exit_code == 2 and "high_risk_domains" in config.output, config.output
    policy = write_policy(tmp_path, f"high_risk_domains = [{json.dumps(medical_spelt)}]\n")
    assert cli("policy", "set", policy, "--admin", "ada", "--db", db).exit_code == 2


def test_an_accented_domain_stays_a_domain(medical, tmp_path):
    db, _, _, _ = medical
    golden = write_jsonl(tmp_path / "g3.jsonl", [golden_row("s1", "crise cardiaque", ["infarctus"], domain="Santé")])
    generated = write_jsonl(tmp_path / "gen3.jsonl", [{"query_id": "s1", "terms": ["infarctus"]}])
    assert evaluate(db, golden, generated).exit_code == 0  # not high-risk by default
    (tmp_path / "tight.toml").write_text('high_risk_domains = ["SANTÉ"]\n', encoding="utf-8")
    assert evaluate(db, golden, generated, env={"TERMGATE_CONFIG": str(tmp_path / "tight.toml")}).exit_code == 3


def test_a_decision_carries_the_head_it_extends_and_is_linked_again_when_the_chain_moved(medical, monkeypatch):
    db, _, _, run_id = medical
    account = so.current_account(db, "carol")
    record = so.decide_as(db, run_id, account, "reject", "not yet", set())
    assert record["payload"]["extends"] == f"{record['seq'] - 1}:{record['prev_hash']}"
    real, once = so.flagged_items, []

    def meanwhile(db_, rid):  # another reviewer records a decision after ours verified the chain
        if not once:
            once.append(1)
            so.decide_as(db_, rid, so.current_account(db_, "erin"), "reject", "meanwhile", set())
        return real(db_, rid)

    monkeypatch.setattr(so, "flagged_items", meanwhile)
    again = so.decide_as(db, run_id, account, "reject", "again", set())
    erins = [r for r in store.audit_records(db) if r["actor"] == "erin" and r["kind"] == "decision"]
    assert erins and erins[0]["seq"] == again["seq"] - 1  # ours went onto the head erin's made
    assert again["payload"]["extends"] == f"{erins[0]['seq']}:{erins[0]['record_hash']}"
    assert cli("audit", "verify", "--db", db).exit_code == 0
    # a record that names a head the chain no longer has is never appended
    stale = {"created_at": utc_now(), "kind": "decision", "actor": "carol", "run_id": run_id,
             "content_hash": again["content_hash"], "decision": "reject", "comment": "stale", "payload":
             {"extends": f"{erins[0]['seq']}:{erins[0]['record_hash']}"}}
    before = len(store.audit_records(db))
    with pytest.raises(so.SignoffRefused, match="moved since it was verified"):
        store.append_audit(db, stale)
    assert len(store.audit_records(db)) == before
