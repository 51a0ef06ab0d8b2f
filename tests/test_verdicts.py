"""Verdicts on terms (issue 19 item 1): recorded from the CLI and the library, one audit record
each, on both store backends; refused for viewers, single sign-on accounts and terms the run
did not generate; copied by `store copy`; on PostgreSQL the dashboard role records them only
through termgate_append_verdict."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from termgate.governance import signoff as so
from termgate import store
from termgate.governance import verdicts as vd
from termgate.cli import main

from conftest import golden_row, run_sql, write_jsonl

PASSWORDS = {"eve": "pw-eve-12345", "vic": "pw-vic-12345", "alice": "pw-alice-1234"}

# Six medical queries. Generated terms, by what the scorer makes of them (judge none):
#   q1: mi TP; "cardiac arrest" FP; "panic attack" forbidden (drift)
#   q2: cva TP; "brain attack" FP; "migraine" FP
#   q3: "influenza" generated at 0.2 < its min_weight 0.5: underweight (FP, never the judge's)
#   q4-q6: one FP each
ROWS = [golden_row("q1", "heart attack", ["myocardial infarction", "mi"], domain="medical",
                   forbidden=["panic attack"]),
        golden_row("q2", "stroke", ["cerebrovascular accident", "cva"], domain="medical"),
        golden_row("q3", "flu", [{"term": "influenza", "min_weight": 0.5}], domain="medical"),
        golden_row("q4", "high blood pressure", ["hypertension"], domain="medical"),
        golden_row("q5", "low blood sugar", ["hypoglycemia"], domain="medical"),
        golden_row("q6", "nosebleed", ["epistaxis"], domain="medical")]
GENERATED = [{"query_id": "q1", "terms": ["MI", "Cardiac  Arrest", "panic attack"]},
             {"query_id": "q2", "terms": ["cva", "brain attack", "migraine"]},
             {"query_id": "q3", "terms": [{"term": "influenza", "weight": 0.2}]},
             {"query_id": "q4", "terms": ["hypertension", "hypotension"]},
             {"query_id": "q5", "terms": ["hypoglycemia", "low sugar"]},
             {"query_id": "q6", "terms": ["epistaxis", "nose bleed"]}]
UNFLAGGED = [("q1", "cardiac arrest"), ("q2", "brain attack"), ("q2", "migraine"), ("q4", "hypotension"),
             ("q5", "low sugar"), ("q6", "nose bleed")]


def cli(*args, password=None):
    env = {"TERMGATE_PASSWORD": password} if password else {}
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def make_run(db, tmp_path, author="ci-bot") -> str:
    golden = write_jsonl(tmp_path / "golden.jsonl", ROWS)
    generated = write_jsonl(tmp_path / "generated.jsonl", GENERATED)
    result = cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
                 "--golden-name", "medical-golden", "--author", author, "--json", tmp_path / "r.json", "-q")
    assert result.exit_code in (1, 3), result.output
    return json.loads((tmp_path / "r.json").read_text())["evaluation_id"]


def add_users(db):
    so.add_user(db, "eve", "engineer", PASSWORDS["eve"])
    so.add_user(db, "vic", "viewer", PASSWORDS["vic"])
    so.add_user(db, "alice", "approver", PASSWORDS["alice"], domains=["medical"])
    so.add_user(db, "carol", "approver", None, aliases=["carol@example.com"], sso=True)


@pytest.fixture
def reviewed(backend, tmp_path):
    run_id = make_run(backend, tmp_path)
    add_users(backend)
    return backend, run_id


@pytest.mark.slow
def test_a_verdict_from_the_cli_is_one_audit_record_and_never_a_decision(reviewed):
    db, run_id = reviewed
    before = so.release_state(db, run_id)
    result = cli("verdict", run_id, "q1", "  CARDIAC arrest ", "--synonym", "--reviewer", "eve", "--comment",
                 "a heart attack can stop the heart", "--db", db, password=PASSWORDS["eve"])
    assert result.exit_code == 0, result.output
    assert "recorded verdict synonym on 'cardiac arrest'" in result.output
    records = [r for r in store.audit_records(db) if r["kind"] == "verdict"]
    assert len(records) == 1
    record = records[0]
    run = store.get_run(db, run_id)
    assert (record["actor"], record["run_id"], record["content_hash"], record["decision"], record["comment"]) == (
        "eve", run_id, run["content_hash"], None, "a heart attack can stop the heart")
    assert record["payload"] == {
        "query_id": "q1", "term": "cardiac arrest", "label": "synonym", "forbid": False, "role": "engineer",
        "domain": "medical", "judge_verdict": "not flagged", "term_kind": "FP", "judge_config": '{"judge": "none"}',
        "golden_name": "medical-golden", "golden_hash": run["golden_hash"]}
    assert f"audit head: {record['seq']}:{record['record_hash']}" in result.output
    verify = cli("audit", "verify", "--db", db)
    assert verify.exit_code == 0, verify.output
    after = so.release_state(db, run_id)  # a verdict is no decision: nothing about release changed
    assert (after.status, after.reasons, after.decisions) == (before.status, before.reasons, before.decisions)
    assert after.decisions == [] and after.exit_code == 1  # the run failed its gate (q3 has recall 0)


@pytest.mark.slow
def test_the_latest_verdict_per_reviewer_and_term_stands_and_earlier_ones_stay(reviewed):
    db, run_id = reviewed
    eve = so.authenticate(db, "eve", PASSWORDS["eve"])
    alice = so.authenticate(db, "alice", PASSWORDS["alice"])
    vd.record_verdict(db, eve, run_id, "q1", "panic attack", "drift", True, "confirmed")
    vd.record_verdict(db, eve, run_id, "q2", "migraine", "related", False, "")
    vd.record_verdict(db, eve, run_id, "q2", "migraine", "drift", False, "on second thought")  # replaces the last
    vd.record_verdict(db, alice, run_id, "q2", "migraine", "related", False, "a headache, related")
    standing = vd.list_verdicts(db)
    assert [(v.reviewer, v.query_id, v.term, v.label, v.forbid) for v in standing] == [
        ("eve", "q1", "panic attack", "drift", True), ("eve", "q2", "migraine", "drift", False),
        ("alice", "q2", "migraine", "related", False)]
    first = standing[0]
    assert (first.judge_verdict, first.term_kind, first.role, first.domain) == ("drift", "forbidden", "engineer",
                                                                                "medical")
    assert standing[2].role == "approver" and standing[1].comment == "on second thought"
    assert len([r for r in store.audit_records(db) if r["kind"] == "verdict"]) == 4  # every one is kept
    assert vd.list_verdicts(db, run_ids=["other"]) == []
    assert vd.list_verdicts(db, golden_name="medical-golden", domain="Medical") == standing
    assert vd.list_verdicts(db, golden_name="another") == [] and vd.list_verdicts(db, domain="legal") == []
    listed = cli("verdict", "--list", run_id, "--db", db)
    assert listed.exit_code == 0 and "3 standing verdicts" in listed.output and "on second thought" in listed.output
    assert so.verify_chain(db).ok


@pytest.mark.slow
def test_refusals_record_nothing(reviewed):
    db, run_id = reviewed
    count = len(store.audit_records(db))
    viewer = cli("verdict", run_id, "q1", "cardiac arrest", "--drift", "--reviewer", "vic", "--comment", "x",
                 "--db", db, password=PASSWORDS["vic"])
    assert viewer.exit_code == 4 and "role 'viewer' may not record verdicts" in viewer.stderr
    sso = cli("verdict", run_id, "q1", "cardiac arrest", "--drift", "--reviewer", "carol", "--comment", "x",
              "--db", db, password="anything-at-all")
    assert sso.exit_code == 4 and "signs in through the identity provider" in sso.stderr
    unknown_term = cli("verdict", run_id, "q1", "myocardial infarction", "--drift", "--reviewer", "eve",
                       "--comment", "x", "--db", db, password=PASSWORDS["eve"])  # expected, never generated
    assert unknown_term.exit_code == 2
    assert unknown_term.stderr.strip().splitlines() == [
        f"error: query q1 of run {run_id} did not generate 'myocardial infarction' "
        "(its generated terms: mi, cardiac arrest, panic attack)"]
    unknown_query = cli("verdict", run_id, "q9", "mi", "--drift", "--reviewer", "eve", "--comment", "x",
                        "--db", db, password=PASSWORDS["eve"])
    assert unknown_query.exit_code == 2 and f"run {run_id} has no query 'q9'" in unknown_query.stderr
    unknown_run = cli("verdict", "no-such-run", "q1", "mi", "--drift", "--reviewer", "eve", "--comment", "x",
                      "--db", db, password=PASSWORDS["eve"])
    assert unknown_run.exit_code == 2 and "unknown run 'no-such-run'" in unknown_run.stderr
    for labels in ([], ["--drift", "--synonym"]):
        bad = cli("verdict", run_id, "q1", "mi", *labels, "--reviewer", "eve", "--comment", "x", "--db", db,
                  password=PASSWORDS["eve"])
        assert bad.exit_code == 2 and "exactly one label" in bad.output
    no_comment = cli("verdict", run_id, "q1", "mi", "--drift", "--reviewer", "eve", "--db", db,
                     password=PASSWORDS["eve"])
    assert no_comment.exit_code == 2 and "--comment" in no_comment.output
    viewer_account = so.authenticate(db, "vic", PASSWORDS["vic"])
    with pytest.raises(so.SignoffRefused, match="viewer"):
        vd.record_verdict(db, viewer_account, run_id, "q1", "mi", "drift", False, "x")
    with pytest.raises(so.UsageError, match="label 'wrong'"):
        vd.record_verdict(db, so.authenticate(db, "eve", PASSWORDS["eve"]), run_id, "q1", "mi", "wrong", False, "x")
    assert len(store.audit_records(db)) == count
    forbid = cli("verdict", run_id, "q1", "panic attack", "--drift", "--forbid", "--reviewer", "eve", "--comment",
                 "never", "--db", db, password=PASSWORDS["eve"])  # --forbid goes with a label
    assert forbid.exit_code == 0, forbid.output
    count = len(store.audit_records(db))
    wrong = cli("verdict", run_id, "q1", "cardiac arrest", "--drift", "--reviewer", "eve", "--comment", "x",
                "--db", db, password="not-her-password")
    assert wrong.exit_code == 4 and "wrong account name or password" in wrong.stderr
    assert len(store.audit_records(db)) == count


@pytest.mark.slow
def test_a_disabled_account_and_a_broken_chain_are_refused(reviewed):
    db, run_id = reviewed
    eve = so.authenticate(db, "eve", PASSWORDS["eve"])
    run_sql(db, "UPDATE audit_log SET comment = 'edited' WHERE seq = 1")
    with pytest.raises(so.SignoffRefused, match="audit chain is broken"):
        vd.record_verdict(db, eve, run_id, "q1", "mi", "synonym", False, "x")
    run_sql(db, "UPDATE audit_log SET comment = NULL WHERE seq = 1")
    so.disable_user(db, "eve")
    with pytest.raises(so.SignoffRefused, match="disabled"):
        vd.record_verdict(db, eve, run_id, "q1", "mi", "synonym", False, "x")


@pytest.mark.slow
def test_a_tampered_verdict_is_caught_by_audit_verify(reviewed):
    db, run_id = reviewed
    eve = so.authenticate(db, "eve", PASSWORDS["eve"])
    record = vd.record_verdict(db, eve, run_id, "q2", "brain attack", "synonym", False, "a stroke")
    assert cli("audit", "verify", "--db", db).exit_code == 0
    run_sql(db, ("UPDATE audit_log SET payload = replace(payload, '\"synonym\"', '\"drift\"') WHERE seq = ?",
                 [record["seq"]]))
    assert vd.list_verdicts(db)[0].label == "drift"  # the edit is there ...
    verify = cli("audit", "verify", "--db", db)  # ... and named
    assert verify.exit_code == 1
    assert f"record {record['seq']} (verdict by eve): content does not match its hash" in verify.output


@pytest.mark.slow
def test_unflagged_sample_is_reproducible_and_holds_only_terms_the_judge_let_through(reviewed):
    db, run_id = reviewed
    # not the forbidden "panic attack" (drift), not the underweight "influenza", no matched term
    assert vd.unflagged_sample(db, run_id, 100, 0) == UNFLAGGED
    first = vd.unflagged_sample(db, run_id, 3, seed=7)
    assert first == vd.unflagged_sample(db, run_id, 3, seed=7) and len(first) == 3
    assert set(first) <= set(UNFLAGGED) and first == sorted(first, key=UNFLAGGED.index)  # golden order
    samples = {tuple(vd.unflagged_sample(db, run_id, 3, seed=s)) for s in range(10)}
    assert len(samples) > 1  # the seed matters
    assert vd.unflagged_sample(db, run_id, 0, 1) == []
    shown = cli("verdict", run_id, "--sample", "3", "--seed", "7", "--db", db)
    assert shown.exit_code == 0 and all(term in shown.output for _, term in first)


def test_the_sample_is_the_same_on_both_backends(pgdb, tmp_path):
    file_db = str(tmp_path / "store.duckdb")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    file_run = make_run(file_db, tmp_path / "a")
    pg_run = make_run(pgdb, tmp_path / "b")
    assert store.get_run(file_db, file_run)["content_hash"] == store.get_run(pgdb, pg_run)["content_hash"]
    from termgate.store.verdicts import unflagged_false_positives

    assert unflagged_false_positives(file_db, file_run) == unflagged_false_positives(pgdb, pg_run) == UNFLAGGED


# ---------------------------------------------------------------- store copy and PostgreSQL roles


def test_store_copy_copies_verdicts_and_the_chain_verifies(pgdb, tmp_path):
    source = str(tmp_path / "source.duckdb")
    run_id = make_run(source, tmp_path)
    add_users(source)
    eve = so.authenticate(source, "eve", PASSWORDS["eve"])
    vd.record_verdict(source, eve, run_id, "q1", "cardiac arrest", "related", False, "close")
    vd.record_verdict(source, eve, run_id, "q4", "hypotension", "drift", True, "the opposite")
    copied = cli("store", "copy", "--from", source, "--to", pgdb)
    assert copied.exit_code == 0, copied.output
    assert vd.list_verdicts(pgdb) == vd.list_verdicts(source) and len(vd.list_verdicts(pgdb)) == 2
    back = str(tmp_path / "back.duckdb")
    assert cli("store", "copy", "--from", pgdb, "--to", back).exit_code == 0
    assert vd.list_verdicts(back) == vd.list_verdicts(source)
    for db in (pgdb, back):
        verify = cli("audit", "verify", "--db", db)
        assert verify.exit_code == 0, verify.output


def _door_args(conn, run_id, content_hash, payload: dict, actor="eve"):
    from termgate.store.records import linked

    head = conn.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1").fetchall()
    seq, prev = (head[0][0] + 1, head[0][1]) if head else (1, "0" * 64)
    record = linked({"created_at": "2026-12-02T00:00:00Z", "kind": "verdict", "actor": actor, "run_id": run_id,
                     "content_hash": content_hash, "decision": None, "comment": "forged", "payload": payload},
                    seq, prev)
    return [seq, prev, record["created_at"], actor, run_id, content_hash, json.dumps(payload, sort_keys=True),
            record["record_hash"], record["canonical"], "forged"]


def test_the_dashboard_role_records_verdicts_only_through_the_door(pg, pgdb, tmp_path):
    import psycopg

    name = pgdb.rsplit("/", 1)[1]
    assert cli("store", "init", "--db", pgdb).exit_code == 0
    roles = cli("store", "roles", "--ci", f"ci_{name}", "--dashboard", f"dash_{name}")
    assert "termgate_append_verdict" in roles.output
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(roles.output)
    run_id = make_run(pgdb, tmp_path)
    add_users(pgdb)
    dash = pg.url(name, user=f"dash_{name}")
    # the library, as the dashboard calls it, under the dashboard role
    eve = so.authenticate(dash, "eve", PASSWORDS["eve"])
    record = vd.record_verdict(dash, eve, run_id, "q2", "migraine", "drift", False, "unrelated")
    assert [v.seq for v in vd.list_verdicts(dash)] == [record["seq"]]
    content = store.get_run(pgdb, run_id)["content_hash"]
    good = {"query_id": "q2", "term": "migraine", "label": "related", "forbid": False}
    with psycopg.connect(dash, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege):  # no INSERT on the log itself
            conn.execute("INSERT INTO audit_log VALUES (%s, 't', 'verdict', 'eve', %s, %s, NULL, 'x', '{}', 'p', 'h')",
                         [record["seq"] + 1, run_id, content])
        for payload, actor, why in [
                (dict(good, label="approve"), "eve", "a verdict is synonym, related or drift"),
                (dict(good, forbid="yes"), "eve", "a verdict is synonym, related or drift"),
                (dict(good, term="myocardial infarction"), "eve", "did not generate that term"),
                (dict(good, query_id="q9"), "eve", "did not generate that term"),
                (good, "vic", "not an enabled account that may record verdicts"),
                (good, "mallory", "not an enabled account that may record verdicts")]:
            with pytest.raises(psycopg.errors.RaiseException, match=why):
                conn.execute("SELECT termgate_append_verdict(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                             _door_args(conn, run_id, content, payload, actor))
        with pytest.raises(psycopg.errors.RaiseException, match="no stored run"):
            conn.execute("SELECT termgate_append_verdict(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                         _door_args(conn, run_id, "another-content-hash", good))
        assert conn.execute("SELECT termgate_append_verdict(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                            _door_args(conn, run_id, content, good)).fetchone() == (record["seq"] + 1,)
        kinds = conn.execute("SELECT kind, decision FROM audit_log WHERE seq = %s", [record["seq"] + 1]).fetchall()
    assert kinds == [("verdict", None)]  # the door fixes the kind; a verdict carries no decision
    assert so.verify_chain(pgdb).ok
    ci = pg.url(name, user=f"ci_{name}")
    as_ci = cli("verdict", run_id, "q2", "migraine", "--drift", "--reviewer", "eve", "--comment", "x", "--db", ci,
                password=PASSWORDS["eve"])
    assert as_ci.exit_code == 2 and "this database role may not" in as_ci.stderr
