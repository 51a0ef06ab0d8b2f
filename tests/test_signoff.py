"""Release sign-off (SPEC §4): every refusal, content binding, the audit chain, concurrency.

Every test runs on both backends (`backend`: a DuckDB file, a PostgreSQL database), and the
store is edited behind termgate's back the way each is edited by hand (the file with
DuckDB, the team store with psycopg, as psql would)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.governance import signoff as so
from termgate import store
from termgate.cli import main
from termgate.report.record import render_record_html

from conftest import golden_row, run_sql, write_jsonl

PASSWORDS = {"alice": "alice-password", "bob": "bob-password", "vic": "viewer-password",
             "eve": "engineer-pass", "lena": "legal-only-pass", "carol": "carol-password"}


def _signoff_store(db: str, folder: Path) -> tuple[str, Path, Path]:
    """Accounts (records 1-6), and a medical run (gate review, record 7) authored by carol."""
    golden = write_jsonl(folder / "golden.jsonl", [
        golden_row("m1", "heart attack", ["mi", "myocardial infarction", "cardiac arrest", "chest pain"],
                   domain="medical", forbidden=["panic attack"]),
        golden_row("m2", "<script>alert(1)</script>", ["a", "b"], domain="medical")])
    generated = write_jsonl(folder / "gen.jsonl", [
        {"query_id": "m1", "terms": ["mi", "myocardial infarction", "cardiac arrest", "chest pain", "panic attack"]},
        {"query_id": "m2", "terms": ["a", "b"]}])
    for name, role, domains in (("alice", "approver", "medical"), ("bob", "admin", ""), ("vic", "viewer", ""),
                                ("eve", "engineer", ""), ("lena", "approver", "legal"), ("carol", "approver", "")):
        so.add_user(db, name, role, PASSWORDS[name], domains)
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                       "--db", db, "--drift-judge", "none", "--author", "carol", "-q"])
    assert result.exit_code == 3, result.output
    return store.list_runs(db)["run_id"].iloc[0], golden, generated


@pytest.fixture
def setup(request, tmp_path, monkeypatch, backend, store_templates):
    """A store of its own on each backend with the accounts and carol's medical run
    (_signoff_store): built once per backend and session, copied for each test."""
    monkeypatch.chdir(tmp_path)
    db, (run_id, golden, generated) = store_templates.copy(request, backend, "signoff", _signoff_store, tmp_path)
    return db, run_id, golden, generated


def decisions(db) -> int:
    return sum(1 for r in store.audit_records(db) if r["kind"] == "decision")


@pytest.mark.slow
@pytest.mark.parametrize("reviewer, password, decision, message", [
    ("alice", "not-her-password", "approve", "wrong account name or password"),
    ("nobody", "whatever-pass", "approve", "wrong account name or password"),
    ("vic", PASSWORDS["vic"], "approve", "role 'viewer' may not approve"),
    ("vic", PASSWORDS["vic"], "reject", "role 'viewer' may not reject"),
    ("eve", PASSWORDS["eve"], "approve", "role 'engineer' may not approve"),
    ("carol", PASSWORDS["carol"], "approve", r"cannot approve it \(four-eyes rule\)"),
    ("lena", PASSWORDS["lena"], "approve", "may approve legal only"),
])
def test_refusals_record_nothing(setup, reviewer, password, decision, message):
    db, run_id, *_ = setup
    with pytest.raises(so.SignoffRefused, match=message):
        so.decide(db, run_id, reviewer, password, decision, "looks fine", ack_all=True)
    assert decisions(db) == 0


def test_disabled_account_is_refused(setup):
    db, run_id, *_ = setup
    so.disable_user(db, "alice")
    with pytest.raises(so.SignoffRefused, match="disabled"):
        so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", ack_all=True)


def test_comment_and_acknowledgements_are_required(setup):
    db, run_id, *_ = setup
    with pytest.raises(so.SignoffRefused, match="comment is required"):
        so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "  ", ack_all=True)
    items = so.flagged_items(db, run_id)
    # a medical run on a golden revision nobody approved: that is an item too (issue 19 item 3)
    assert [i.kind for i in items] == ["drift term", "golden"] and "panic attack" in items[0].detail
    with pytest.raises(so.SignoffRefused, match="not acknowledged"):
        so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", acknowledged={items[0].key})
    record = so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", acknowledged={i.key for i in items})
    assert record["payload"]["acknowledged"] == [i.key for i in items]


def test_failed_run_cannot_be_approved(setup, tmp_path):
    db, _, golden, _ = setup
    bad = write_jsonl(tmp_path / "bad.jsonl", [{"query_id": "m1", "terms": []}])
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(bad), "--db", str(db),
                                       "--drift-judge", "none", "-q"])
    assert result.exit_code == 1
    failed = store.list_runs(db)["run_id"].iloc[0]
    with pytest.raises(so.SignoffRefused, match="cannot be approved"):
        so.decide(db, failed, "bob", PASSWORDS["bob"], "approve", "ship it", ack_all=True)
    so.decide(db, failed, "bob", PASSWORDS["bob"], "reject", "no")  # reject stays possible


def run_cli(args, password=None):
    env = {"TERMGATE_PASSWORD": password} if password else {}
    return CliRunner().invoke(main, args, env=env)


@pytest.mark.slow
def test_cli_exit_codes_and_content_binding(setup, tmp_path):
    db, run_id, golden, generated = setup
    refused = run_cli(["signoff", run_id, "--approve", "--reviewer", "alice", "--comment", "x", "--ack-all",
                       "--db", str(db)], "wrong-password")
    assert refused.exit_code == 4 and "refused" in refused.stderr
    assert run_cli(["gate", run_id, "--db", str(db)]).exit_code == 3
    ok = run_cli(["signoff", run_id, "--approve", "--reviewer", "alice", "--comment", "checked", "--ack-all",
                  "--db", str(db)], PASSWORDS["alice"])
    assert ok.exit_code == 0, ok.output
    assert run_cli(["gate", run_id, "--db", str(db)]).exit_code == 0
    # identical content evaluated again: the approval still applies
    again = run_cli(["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", str(db),
                     "--drift-judge", "none", "-q"])
    assert again.exit_code == 0, again.output
    # one generated term changed: new content, awaiting sign-off again
    changed = write_jsonl(tmp_path / "changed.jsonl", [
        {"query_id": "m1", "terms": ["mi", "myocardial infarction", "cardiac arrest", "chest pain", "angina"]},
        {"query_id": "m2", "terms": ["a", "b"]}])
    result = run_cli(["evaluate", "--golden", str(golden), "--generated", str(changed), "--db", str(db),
                      "--drift-judge", "none", "-q"])
    assert result.exit_code == 3
    new_run = store.list_runs(db)["run_id"].iloc[0]
    assert run_cli(["gate", new_run, "--db", str(db)]).exit_code == 3


@pytest.mark.slow
def test_rejection_stands_and_latest_decision_per_reviewer_counts(setup):
    db, run_id, *_ = setup
    so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", ack_all=True)
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "reject", "drift is not acceptable")
    assert so.release_state(db, run_id).exit_code == 1
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "approve", "fixed upstream, fine", ack_all=True)
    assert so.release_state(db, run_id).exit_code == 0


@pytest.mark.slow
def test_approvals_required_counts_distinct_approvers(setup, monkeypatch, tmp_path):
    db, run_id, *_ = setup
    config = tmp_path / "termgate.toml"
    config.write_text("[approvals_required]\nmedical = 2\n", encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", ack_all=True)
    so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "still ok", ack_all=True)
    state = so.release_state(db, run_id)
    assert state.exit_code == 3 and "1 of 2" in state.reasons[0]
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "approve", "ok too", ack_all=True)
    assert so.release_state(db, run_id).exit_code == 0


def test_passwords_are_salted_slow_hashes(setup):
    db, *_ = setup
    stored = store.get_user(db, "alice")["password_hash"]
    assert stored.startswith("scrypt$") and PASSWORDS["alice"] not in stored
    assert so.hash_password("same-password") != so.hash_password("same-password")
    assert so.verify_password(PASSWORDS["alice"], stored) and not so.verify_password("nope", stored)


tamper = run_sql


@pytest.mark.parametrize("sql, bad, phrase", [
    (["UPDATE audit_log SET comment = 'edited' WHERE seq = 8"], 8, "edited"),
    (["DELETE FROM audit_log WHERE seq = 3"], 4, "removed or reordered"),
    # records 2 and 3 swapped (in two steps: PostgreSQL checks the key on every row)
    (["UPDATE audit_log SET seq = seq + 1000 WHERE seq IN (2, 3)",
      "UPDATE audit_log SET seq = CASE seq WHEN 1002 THEN 3 ELSE 2 END WHERE seq > 1000"], 2, "removed or reordered"),
], ids=["edited", "removed", "reordered"])
def test_audit_verify_names_the_first_bad_record(setup, sql, bad, phrase):
    db, run_id, *_ = setup
    so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", ack_all=True)  # record 8 (6 accounts, 1 run)
    assert run_cli(["audit", "verify", "--db", str(db)]).exit_code == 0
    tamper(db, *sql)
    result = run_cli(["audit", "verify", "--db", str(db)])
    assert result.exit_code == 1
    assert f"record {bad}" in result.output and phrase in result.output


def test_html_in_comment_and_query_is_text(setup):
    db, run_id, *_ = setup
    record = so.decide(db, run_id, "bob", PASSWORDS["bob"], "reject", "<img src=x onerror=alert(1)> bad")
    html = render_record_html(record)
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt; bad" in html
    exported = run_cli(["audit", "export", str(record["seq"]), "--format", "json", "--db", str(db)])
    assert json.loads(exported.output)["record_hash"] == record["record_hash"]


def test_users_cli(setup):
    db, *_ = setup
    added = run_cli(["users", "add", "zed", "--role", "approver", "--domains", "Legal", "--db", str(db)], "zed-password")
    assert added.exit_code == 0 and "legal" in added.output
    listing = run_cli(["users", "list", "--db", str(db)])
    assert "zed" in listing.output and "approver" in listing.output
    assert run_cli(["users", "set-role", "zed", "--role", "viewer", "--db", str(db)]).exit_code == 0
    assert store.get_user(db, "zed")["role"] == "viewer"
    assert run_cli(["users", "disable", "zed", "--db", str(db)]).exit_code == 0
    kinds = [r["kind"] for r in store.audit_records(db)]
    assert kinds[-3:] == ["user_add", "user_set_role", "user_disable"]  # account changes are in the chain
    short = run_cli(["users", "add", "tiny", "--role", "viewer", "--db", str(db)], "short")
    assert short.exit_code == 2 and "8 characters" in short.stderr


SIGN = """
import sys, time
from termgate.governance import signoff as so
db, run_id, who, password, start = sys.argv[1:6]
while time.time() < float(start):
    time.sleep(0.001)
so.decide(db, run_id, who, password, "approve", f"{who} approves", ack_all=True)
"""


@pytest.mark.slow
def test_two_reviewers_deciding_at_once_in_separate_processes(setup):
    db, run_id, *_ = setup
    start = str(time.time() + 1.5)
    procs = [subprocess.Popen([sys.executable, "-c", SIGN, str(db), run_id, who, PASSWORDS[who], start])
             for who in ("alice", "bob")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    records = [r for r in store.audit_records(db) if r["kind"] == "decision"]
    assert sorted(r["actor"] for r in records) == ["alice", "bob"]  # nothing lost, nothing duplicated
    assert so.verify_chain(db).ok


READER = """
import sys, time
from termgate import store
db, stop = sys.argv[1], float(sys.argv[2])
seen = 0
while time.time() < stop:
    seen = max(seen, len(store.runs_overview(db)))
    time.sleep(0.01)
print(seen)
"""


@pytest.mark.slow
def test_evaluate_while_the_dashboard_reads(setup, tmp_path):
    db, run_id, golden, generated = setup
    stop = time.time() + 8
    reader = subprocess.Popen([sys.executable, "-c", READER, str(db), str(stop)], stdout=subprocess.PIPE, text=True)
    writers = [subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", str(golden), "--generated",
                               str(generated), "--db", str(db), "--drift-judge", "none", "--name", f"w{i}", "-q"],
                              capture_output=True, text=True) for i in range(3)]
    out, _ = reader.communicate(timeout=60)
    assert [w.returncode for w in writers] == [3, 3, 3], [w.stderr for w in writers]
    assert reader.returncode == 0 and int(out.strip()) >= 1
    assert len(store.list_runs(db)) == 4


def test_removing_the_last_records_is_detected(setup):
    db, run_id, *_ = setup
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "reject", "not yet")
    last = store.audit_records(db)[-1]["seq"]
    tamper(db, f"DELETE FROM audit_log WHERE seq = {last}")  # hide the standing rejection
    result = run_cli(["audit", "verify", "--db", str(db)])
    assert result.exit_code == 1 and f"record {last}: missing" in result.output


def test_expect_head_catches_a_rewritten_store(setup):
    db, run_id, *_ = setup
    head = so.verify_chain(db).head
    count, digest = head.split(":")
    assert run_cli(["audit", "verify", "--expect-head", head, "--db", str(db)]).exit_code == 0
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "reject", "later record")
    # later records do not move an anchor: record COUNT still has HASH
    assert run_cli(["audit", "verify", "--expect-head", f"{count}:{digest[:16]}", "--db", str(db)]).exit_code == 0
    last = store.audit_records(db)[-1]["seq"]
    tamper(db, ("DELETE FROM audit_log WHERE seq >= ?", [int(count)]),  # rewrite the chain whole, consistently
           ("UPDATE audit_head SET seq = ?, record_hash = (SELECT record_hash FROM audit_log WHERE seq = ?)",
            [int(count) - 1, int(count) - 1]))
    assert last > int(count)
    truncated = run_cli(["audit", "verify", "--expect-head", head, "--db", str(db)])
    assert truncated.exit_code == 1 and f"record {count}" in truncated.output
    assert run_cli(["audit", "verify", "--expect-head", "deadbeef", "--db", str(db)]).exit_code == 2


def test_author_of_an_identical_rerun_cannot_lean_on_their_own_approval(setup):
    db, run_id, golden, generated = setup
    so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "fine", ack_all=True)
    again = run_cli(["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", str(db),
                     "--drift-judge", "none", "--author", "alice", "-q"])
    assert again.exit_code == 3  # alice authored this run: her approval of the same content does not count
    bob = run_cli(["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", str(db),
                   "--drift-judge", "none", "--author", "bob", "-q"])
    assert bob.exit_code == 0


def test_admins_are_never_domain_scoped(setup):
    db, *_ = setup
    with pytest.raises(Exception, match="admins approve in every domain"):
        so.add_user(db, "root2", "admin", "root-password", "legal")


def test_edited_baseline_report_changes_the_content_hash(setup, tmp_path):
    db, run_id, golden, generated = setup
    report = tmp_path / "base.json"
    run_cli(["evaluate", "--golden", str(golden), "--generated", str(generated), "--no-store", "--drift-judge", "none",
             "--json", str(report), "-q"])
    first = run_cli(["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", str(db),
                     "--drift-judge", "none", "--baseline", str(report), "-q"])
    data = json.loads(report.read_text())
    for row in data["per_query_results"]:
        row["f1"], row["passed"] = 0.0, False
    report.write_text(json.dumps(data))
    second = run_cli(["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", str(db),
                      "--drift-judge", "none", "--baseline", str(report), "-q"])
    assert first.exit_code == second.exit_code == 3
    hashes = list(store.list_runs(db)["run_id"][:2].map(lambda r: store.get_run(db, r)["content_hash"]))
    assert hashes[0] != hashes[1]


@pytest.mark.slow
@pytest.mark.parametrize("sql, named", [
    ("UPDATE query_results SET passed = NOT passed WHERE run_id = ? AND query_id = 'm2'", "run {run}"),
    ("UPDATE term_rows SET drift = false WHERE run_id = ? AND term = 'panic attack'", "run {run}"),
    ("UPDATE runs SET gate_decision = 'pass' WHERE run_id = ?", "run {run}"),
    ("UPDATE users SET role = 'admin' WHERE name = 'vic' AND ? <> ''", "account 'vic'"),
    ("UPDATE audit_log SET decision = 'approve' WHERE run_id = ? AND actor = 'bob'", "record 8"),
], ids=["query-row", "drift-flag", "gate-decision", "account", "decision"])
def test_rows_edited_by_hand_make_verify_and_the_gate_refuse(setup, sql, named):
    """A stored row, an account or a decision edited behind termgate's back: verify names
    it and the gate says not releasable (exit 1) without counting any decision (bob's
    rejection turned into an approval counts for nothing). An evaluate checks the records
    and accounts (not every other run's rows): it refuses on the last two."""
    db, run_id, golden, generated = setup
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "reject", "not this one")  # record 8
    assert run_cli(["gate", run_id, "--db", db]).exit_code == 1
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "approve", "fixed", ack_all=True)
    assert run_cli(["gate", run_id, "--db", db]).exit_code == 0
    tamper(db, (sql, [run_id]))
    named = named.format(run=run_id)
    verify = run_cli(["audit", "verify", "--db", db])
    assert verify.exit_code == 1 and named in verify.output, verify.output
    gate = run_cli(["gate", run_id, "--db", db])
    assert gate.exit_code == 1 and named in gate.output and "audit chain" in gate.output, gate.output
    if not named.startswith("run"):
        again = run_cli(["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", db,
                         "--drift-judge", "none", "--author", "eve"])  # identical content: bob's approval would count
        assert again.exit_code == 1 and named in again.output, again.output


@pytest.mark.slow
def test_failed_sign_ins_are_counted_outside_the_chain_and_slow_the_next_try(setup):
    db, *_ = setup
    records = len(store.audit_records(db))
    with pytest.raises(so.SignoffRefused, match="wrong account name or password"):
        so.authenticate(db, "Alice", "not-her-password")  # counted under the canonical name
    assert store.signin_failures(db, "alice")[0] == 1
    with pytest.raises(so.SignoffRefused, match=r"too many failed sign-ins for 'alice': try again in 1 s"):
        so.authenticate(db, "alice", PASSWORDS["alice"])  # even the right password waits its turn
    assert so.authenticate(db, "alice", PASSWORDS["alice"], wait=True).name == "alice"
    assert store.signin_failures(db, "alice")[0] == 0  # reset on success
    assert len(store.audit_records(db)) == records  # sign-ins are not chain records
