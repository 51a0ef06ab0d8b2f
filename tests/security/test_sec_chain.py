"""Issue 13, kept as regression tests: four-eyes that no spelling gets around, one audit
chain over accounts, run headers and decisions, exit 5, sign-in hardening, terminal-safe
CLI output and a full disk under the store (SPEC §3-§5)."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from termgate.governance import signoff as so
from termgate import store
from termgate.cli import main

from conftest import golden_row, run_sql, write_jsonl

PASSWORD = "correct-horse-battery"
LEGACY = Path(__file__).parent.parent / "data" / "legacy-store-068b390.duckdb.gz"


def cli(args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


@pytest.fixture
def medical(tmp_path, monkeypatch):
    """Inputs of a medical run whose gate is review (high-risk, nothing else wrong)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    golden = write_jsonl(tmp_path / "golden.jsonl", [
        golden_row("m1", "heart attack", ["mi", "myocardial infarction"], domain="medical", forbidden=["panic attack"]),
        golden_row("m2", "stroke", ["cva", "brain attack"], domain="medical")])
    generated = write_jsonl(tmp_path / "gen.jsonl", [
        {"query_id": "m1", "terms": ["mi", "myocardial infarction", "panic attack"]},
        {"query_id": "m2", "terms": ["cva", "brain attack"]}])
    return tmp_path, golden, generated


def evaluate(db, golden, generated, *extra):
    return cli(["evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
                *extra])


def stored_run(db, golden, generated, author="carol") -> str:
    result = evaluate(db, golden, generated, "--author", author, "-q")
    assert result.exit_code == 3, result.output
    return store.list_runs(db)["run_id"].iloc[0]


def accounts(db):
    for name, role in (("carol", "approver"), ("dave", "approver"), ("erin", "engineer")):
        so.add_user(db, name, role, PASSWORD)


# ---------------------------------------------------------------- four-eyes


@pytest.mark.slow
@pytest.mark.parametrize("spelling", ["Carol", " carol ", "CAROL", "ｃａｒｏｌ", "Caro\u0301l".replace("\u0301", "")])
def test_no_spelling_of_the_author_lets_her_approve(medical, spelling):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    run_id = stored_run(db, golden, generated, author=spelling)
    assert store.get_run(db, run_id)["author"] == "carol"  # stored canonical
    result = cli(["signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "mine", "--ack-all", "--db", db])
    assert result.exit_code == 4 and "four-eyes" in result.output
    assert cli(["signoff", run_id, "--approve", "--reviewer", "CAROL ", "--comment", "mine", "--ack-all",
                "--db", db]).exit_code == 4


@pytest.mark.parametrize("spelling", ["carol\u200b", "с\u0430rol", "carol smith", "carol\u202e", "", "   "])
def test_a_name_outside_the_canonical_characters_is_refused(medical, spelling):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    result = evaluate(db, golden, generated, "--author", spelling)
    assert result.exit_code == 2 and "--author" in result.output
    assert not db.exists() or store.list_runs(db).empty
    added = cli(["users", "add", spelling, "--role", "approver", "--db", db])
    assert added.exit_code == 2 and "account name" in added.output


@pytest.mark.slow
def test_four_eyes_checks_every_alias(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    assert cli(["users", "alias", "carol", "--add", "Carol-GH", "--add", "carol@example.com", "--db", db]).exit_code == 0
    for author in ("carol-gh", "Carol@Example.com"):
        run_id = stored_run(db, golden, generated, author=author)
        refused = cli(["signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "x", "--ack-all",
                       "--db", db])
        assert refused.exit_code == 4 and "four-eyes" in refused.output
    # an alias belongs to one person: nobody else can take it, nor an account be named like it
    assert cli(["users", "alias", "dave", "--add", "carol-gh", "--db", db]).exit_code == 2
    assert cli(["users", "add", "carol@example.com", "--role", "viewer", "--db", db]).exit_code == 2
    approved = cli(["signoff", run_id, "--approve", "--reviewer", "dave", "--comment", "ok", "--ack-all", "--db", db])
    assert approved.exit_code == 0, approved.output


@pytest.mark.slow
def test_an_approval_recorded_before_an_alias_was_added_stops_counting(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    run_id = stored_run(db, golden, generated, author="carol-gh")
    assert cli(["signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "ok", "--ack-all",
                "--db", db]).exit_code == 0
    so.set_aliases(db, "carol", add=["carol-gh"])
    assert cli(["gate", run_id, "--db", db]).exit_code == 3


# ---------------------------------------------------------------- the chain


def _edit(db, sql, params=()):
    with duckdb.connect(str(db)) as con:
        con.execute(sql, list(params))


TAMPERING = {
    "role raised": ("UPDATE users SET role = 'admin' WHERE name = 'erin'", "account 'erin'"),
    "password hash swapped": ("UPDATE users SET password_hash = (SELECT password_hash FROM users WHERE name = "
                              "'dave') WHERE name = 'erin'", "account 'erin'"),
    "domains widened": ("UPDATE users SET domains = [] WHERE name = 'dave'", "account 'dave'"),
    "re-enabled": ("UPDATE users SET disabled = false WHERE name = 'erin'", "account 'erin'"),
    "alias dropped": ("UPDATE users SET aliases = [] WHERE name = 'carol'", "account 'carol'"),
    "account added": ("INSERT INTO users SELECT 'mallory', 'admin', [], password_hash, false, created_at, [] "
                      "FROM users WHERE name = 'dave'", "account 'mallory'"),
    "account removed": ("DELETE FROM users WHERE name = 'dave'", "account 'dave'"),
    "author changed": ("UPDATE runs SET author = 'zed'", "author differs"),
    "gate loosened": ("UPDATE runs SET gate_decision = 'pass', gate_reasons = []", "gate differs"),
    "metric edited": ("UPDATE runs SET aggregate_f1 = 1.0", "runs row differs"),
    "drift flag cleared": ("UPDATE term_rows SET drift = false WHERE drift", "per-query or per-term rows"),
    "status edited": ("UPDATE query_results SET passed = true, failure_reasons = []", "per-query or per-term rows"),
    "term row added": ("INSERT INTO term_rows SELECT * REPLACE ('injected' AS term) FROM term_rows LIMIT 1",
                       "per-query or per-term rows"),
    "decision removed": ("DELETE FROM audit_log WHERE kind = 'decision'", "record"),
    "decision edited": ("UPDATE audit_log SET decision = 'approve' WHERE kind = 'decision'", "edited"),
}


@pytest.mark.slow
@pytest.mark.parametrize("case", list(TAMPERING))
def test_any_edit_makes_gate_refuse_and_verify_name_it(medical, case):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    so.set_aliases(db, "carol", add=["carol-gh"])
    so.set_role(db, "dave", "approver", "medical")
    so.add_user(db, "fred", "approver", PASSWORD)
    so.disable_user(db, "erin") if case == "re-enabled" else None
    run_id = stored_run(db, golden, generated, author="erin")
    # a standing rejection: not releasable until someone deletes it by hand
    assert cli(["signoff", run_id, "--reject", "--reviewer", "fred", "--comment", "drift: panic attack",
                "--db", db]).exit_code == 1
    assert cli(["audit", "verify", "--db", db]).exit_code == 0
    sql, named = TAMPERING[case]
    _edit(db, sql)
    gate = cli(["gate", run_id, "--db", db])
    assert gate.exit_code == 1, gate.output
    assert "audit chain broken" in gate.output and named in gate.output
    assert "releasable: " not in gate.output.replace("not releasable: ", "")
    verify = cli(["audit", "verify", "--db", db])
    assert verify.exit_code == 1 and named in verify.output
    # nothing more can be recorded on a broken chain
    refused = cli(["signoff", run_id, "--reject", "--reviewer", "fred", "--comment", "again", "--db", db])
    assert refused.exit_code == 4 and "audit chain is broken" in refused.output


@pytest.mark.slow
def test_a_deleted_rejection_does_not_make_the_run_releasable(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    run_id = stored_run(db, golden, generated, author="erin")
    assert cli(["signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "ok", "--ack-all",
                "--db", db]).exit_code == 0
    assert cli(["signoff", run_id, "--reject", "--reviewer", "dave", "--comment", "no", "--db", db]).exit_code == 1
    rejection = [r["seq"] for r in store.audit_records(db) if r["decision"] == "reject"][0]
    _edit(db, "DELETE FROM audit_log WHERE seq = ?", [rejection])
    gate = cli(["gate", run_id, "--db", db])
    assert gate.exit_code == 1 and "audit chain broken" in gate.output
    rerun = evaluate(db, golden, generated, "--author", "erin")
    assert rerun.exit_code == 1 and "audit chain broken" in rerun.output


@pytest.mark.slow
def test_head_is_printed_and_expect_head_anchors_gate_and_evaluate(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    first = evaluate(db, golden, generated, "--author", "erin")
    assert first.exit_code == 3
    head = next(line.split(": ", 1)[1] for line in first.output.splitlines() if line.startswith("audit head: "))
    count, digest = head.split(":")
    assert count == "1" and len(digest) == 64 and store.audit_records(db)[0]["record_hash"] == digest
    run_id = store.list_runs(db)["run_id"].iloc[0]
    assert cli(["gate", run_id, "--db", db, "--expect-head", head]).exit_code == 3
    assert evaluate(db, golden, generated, "--expect-head", head).exit_code == 3
    # the store rewritten whole: a consistent chain, but not the one the CI log anchored
    db.unlink()
    stored_run(db, golden, generated, author="erin")
    run_id = store.list_runs(db)["run_id"].iloc[0]
    gate = cli(["gate", run_id, "--db", db, "--expect-head", head])
    assert gate.exit_code == 1 and "record 1" in gate.output
    assert evaluate(db, golden, generated, "--expect-head", head).exit_code == 1
    assert cli(["audit", "verify", "--db", db, "--expect-head", head]).exit_code == 1
    before = len(store.list_runs(db))
    bad = evaluate(db, golden, generated, "--expect-head", "not-a-head")
    assert bad.exit_code == 2 and "COUNT:HASH" in bad.output and len(store.list_runs(db)) == before
    assert evaluate(db, golden, generated, "--no-store", "--expect-head", head).exit_code == 2


def test_a_store_written_by_the_previous_version_is_adopted_by_one_record(tmp_path, monkeypatch):
    """tests/data/legacy-store-068b390.duckdb.gz: the demo seeded by commit 068b390, two
    accounts (one named `Dave`) and an approval by carol."""
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    db = tmp_path / "legacy.duckdb"
    with gzip.open(LEGACY) as src, db.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    verify = cli(["audit", "verify", "--db", db])
    assert verify.exit_code == 0, verify.output
    records = store.audit_records(db)
    adopted = [r for r in records if r["kind"] == "adopt"]
    assert len(adopted) == 1 and adopted[0]["seq"] == len(records) == 4
    runs = store.list_runs(db)
    assert {h["run_id"] for h in adopted[0]["payload"]["runs"]} == set(runs["run_id"]) and len(runs) == 9
    assert {a["name"] for a in adopted[0]["payload"]["accounts"]} == {"carol", "dave"}  # `Dave` made canonical
    approved = "20261201-122845-bacc09"
    assert cli(["gate", approved, "--db", db]).exit_code == 0  # carol's earlier approval still counts
    assert cli(["audit", "verify", "--db", db]).exit_code == 0
    assert len(store.audit_records(db)) == 4  # adopted once
    _edit(db, "UPDATE term_rows SET drift = NOT drift WHERE run_id = ? AND kind = 'FP'", [approved])
    gate = cli(["gate", approved, "--db", db])
    assert gate.exit_code == 1 and approved in gate.output and "record 4" in gate.output


def test_a_new_run_on_an_adopted_store_gets_its_own_header(tmp_path, monkeypatch, medical):
    _, golden, generated = medical
    db = tmp_path / "legacy.duckdb"
    with gzip.open(LEGACY) as src, db.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    run_id = stored_run(db, golden, generated, author="erin")
    kinds = [(r["kind"], r["run_id"]) for r in store.audit_records(db)]
    assert kinds[-2:] == [("adopt", None), ("run", run_id)]
    assert cli(["audit", "verify", "--db", db]).exit_code == 0


# ---------------------------------------------------------------- exit 5


def test_errored_items_exit_5_unless_the_chain_is_broken(medical):
    tmp, golden, generated = medical
    (tmp / "flaky.py").write_text("def expand(query, context):\n"
                                  "    if query == 'stroke':\n        raise TimeoutError('endpoint down')\n"
                                  "    return ['mi', 'myocardial infarction']\n")
    db = tmp / "s.duckdb"
    args = ["harness", "--golden", golden, "--callable", "flaky:expand", "--drift-judge", "none"]
    result = cli([*args, "--db", db])
    assert result.exit_code == 5, result.output
    assert "incomplete" in result.output
    run_id = store.list_runs(db)["run_id"].iloc[0]
    assert store.get_run(db, run_id)["errored"] == 1
    assert cli(["gate", run_id, "--db", db]).exit_code == 5
    assert cli([*args, "--no-store"]).exit_code == 5
    _edit(db, "UPDATE runs SET errored = 0")
    assert cli(["gate", run_id, "--db", db]).exit_code == 1  # a broken chain wins over 5
    for command in ("evaluate", "harness", "gate"):
        assert "5 incomplete" in cli([command, "--help"]).output.replace("\n", " ").replace("  ", " ")


# ---------------------------------------------------------------- sign-in


def test_passwords_of_white_space_are_refused(tmp_path):
    db = tmp_path / "s.duckdb"
    result = cli(["users", "add", "erin", "--role", "engineer", "--db", db], env={"TERMGATE_PASSWORD": " " * 12})
    assert result.exit_code == 2 and "white space" in result.output
    assert store.get_user(db, "erin") is None


@pytest.mark.slow
def test_failed_sign_ins_double_the_delay_up_to_30_s_and_success_resets_it(tmp_path):
    db = tmp_path / "s.duckdb"
    so.add_user(db, "dave", "approver", PASSWORD)
    for failures in range(1, 8):
        with pytest.raises(so.SignoffRefused, match="wrong account name or password"):
            _set_last_failure(db, "dave", ago=100)  # the previous delay has passed
            so.authenticate(db, "dave", "wrong-password")
        delay = so.signin_delay(db, "dave")
        assert min(2 ** (failures - 1), 30) - 1 < delay <= min(2 ** (failures - 1), 30)
    with pytest.raises(so.SignoffRefused, match="try again in"):
        so.authenticate(db, "dave", PASSWORD)  # even the right password waits: no guessing in between
    _set_last_failure(db, "dave", ago=31)
    assert so.authenticate(db, "Dave", PASSWORD).name == "dave"  # no lockout
    assert so.signin_delay(db, "dave") == 0
    assert not any(r["kind"].startswith("signin") for r in store.audit_records(db))  # not chain records


@pytest.mark.slow
def test_parallel_sign_ins_check_one_password_per_delay(backend, monkeypatch):
    """Issue 31 item 4: 16 threads at once (15 wrong passwords, the right one) used to check
    all 16 passwords, as each read the delay before any had counted its failure. Each try
    now takes its turn in the store before its password is checked: one is checked, the
    other 15 are told to wait. (Five earlier tries make the next delay 30 s, so a slow
    machine cannot let a second turn come during the test.)"""
    import threading

    so.add_user(backend, "dave", "approver", PASSWORD)
    run_sql(backend, "INSERT INTO signin_failures VALUES ('dave', 5, 0)")  # five tries, long ago
    checked: list[str] = []
    verify = so.verify_password
    monkeypatch.setattr(so, "verify_password", lambda password, stored: checked.append(password) or
                        verify(password, stored))
    start = threading.Barrier(16)
    outcomes: list[str] = []

    def try_one(password: str) -> None:
        start.wait()
        try:
            outcomes.append(so.authenticate(backend, "dave", password).name)
        except so.SignoffRefused as exc:
            outcomes.append("too soon" if "try again in" in str(exc) else "wrong")

    threads = [threading.Thread(target=try_one, args=(p,)) for p in [f"wrong-{i:02d}-password" for i in range(15)]
               + [PASSWORD]]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(outcomes) == 16 and outcomes.count("too soon") == 15, outcomes
    assert len(checked) == 1  # one password checked in the whole burst
    if checked == [PASSWORD]:
        assert "dave" in outcomes and store.signin_failures(backend, "dave")[0] == 0  # success clears the count
    else:
        assert "wrong" in outcomes and store.signin_failures(backend, "dave")[0] == 6  # each turn counted


def _set_last_failure(db, name, ago):
    import time
    if store.signin_failures(db, name)[0]:
        _edit(db, "UPDATE signin_failures SET last_at = ? WHERE name = ?", [time.time() - ago, name])


# ---------------------------------------------------------------- terminal


def test_cli_output_carries_no_terminal_control_sequences(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    hostile = "q\x1b[2J\x1b]8;;http://evil.example/\x07click\x1b]8;;\x07\u202egnp.exe\ngate: PASS\r\x9b31m"
    db = tmp_path / "s.duckdb"
    # a query id holding ESC is refused on input, by a line that does not carry it
    refused = write_jsonl(tmp_path / "r.jsonl", [golden_row("id\x1b[31m1", "q", ["ok"])])
    result = evaluate(db, refused, write_jsonl(tmp_path / "rc.jsonl", [{"query_id": "id\x1b[31m1", "terms": ["ok"]}]))
    assert result.exit_code == 2 and "\x1b" not in result.output and "query_id" in result.output
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("id1", hostile, [hostile, "ok"])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "id1", "terms": [hostile, "bad\x07"]}])
    outputs = [evaluate(db, golden, generated, "--name", hostile, "--prompt-version", hostile).output]
    run_id = store.list_runs(db)["run_id"].iloc[0]
    for args in (["show", run_id], ["runs"], ["compare", run_id, "--baseline", run_id], ["gate", run_id],
                 ["audit", "list"], ["audit", "export", "1"], ["audit", "export", "1", "--format", "html"]):
        outputs.append(cli([*args, "--db", db]).output)
    for text in outputs:
        assert not any(c in text for c in "\x1b\x07\x9b\u202e\r"), repr(text)
        assert not any(line.startswith("gate: PASS") for line in text.splitlines())
    (tmp_path / "t.json").write_text('{"bad\\u001b[2Jkey": 1}')
    result = evaluate(db, golden, generated, "--thresholds", tmp_path / "t.json")
    assert result.exit_code == 2 and "\x1b" not in result.output and "badkey" in result.output


# ---------------------------------------------------------------- a full disk


@pytest.mark.slow
def test_a_full_disk_under_the_store_is_exit_2_and_nothing_half_written(tmp_path, medical):
    _, golden, generated = medical
    mount = tmp_path / "small"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({made.stderr.strip() or 'not root'})")
    try:
        db = mount / "store.duckdb"
        stored_run(db, golden, generated, author="erin")
        runs_before = len(store.list_runs(db))
        records_before = len(store.audit_records(db))
        filler = mount / "filler"
        with filler.open("wb") as f:  # fill what is left
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError:
                pass
        big = write_jsonl(tmp_path / "big.jsonl", [golden_row(f"m{i}", f"query {i}", [f"term {i} {k}" for k in range(8)],
                                                              domain="medical") for i in range(3000)])
        bigc = write_jsonl(tmp_path / "bigc.jsonl", [{"query_id": f"m{i}", "terms": [f"term {i} {k}" for k in range(10)]}
                                                     for i in range(3000)])
        report = tmp_path / "report.json"
        proc = subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", big, "--generated", bigc,
                               "--db", db, "--drift-judge", "none", "--json", report],
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 2, proc.stderr
        assert "no space left on device" in proc.stderr and "Traceback" not in proc.stderr
        assert not report.exists()
        filler.unlink()
        assert len(store.list_runs(db)) == runs_before and len(store.audit_records(db)) == records_before
        assert cli(["audit", "verify", "--db", db]).exit_code == 0
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def test_the_run_digests_cover_every_stored_column(tmp_path):
    """A column added to runs, query_results, term_rows or retrieval_results must be added
    to the digests on purpose (termgate/store/digest.py), or edits to it would go unnoticed."""
    from termgate.store import digest

    db = tmp_path / "s.duckdb"
    store.ensure_store(db)
    with duckdb.connect(str(db), read_only=True) as con:
        for table, covered in (("runs", digest.RUN_COLUMNS + digest.RUN_ADDED + digest.RUN_RETRIEVAL),
                               ("query_results", digest.QUERY_COLUMNS + digest.QUERY_ADDED),
                               ("term_rows", digest.TERM_COLUMNS),
                               ("retrieval_results", digest.RETRIEVAL_COLUMNS)):
            columns = [r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE "
                                                 "table_name = ? ORDER BY ordinal_position", [table]).fetchall()]
            assert tuple(columns) == covered, table


@pytest.mark.slow
def test_rerunning_the_adoption_by_hand_blesses_nothing(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    run_id = stored_run(db, golden, generated, author="erin")
    _edit(db, "UPDATE users SET role = 'admin' WHERE name = 'erin'")
    # undo migration 8 so that it runs again on the next open
    _edit(db, "DELETE FROM schema_migrations WHERE version >= 8")
    _edit(db, "ALTER TABLE users DROP COLUMN aliases")
    _edit(db, "DROP TABLE signin_failures")
    _edit(db, "DROP TABLE golden_files")
    _edit(db, "DROP TABLE lexicon_cache")
    for table, column in (("runs", "golden_name"), ("runs", "golden_changed_queries"),
                          ("query_results", "golden_entry_hash")):
        _edit(db, f"ALTER TABLE {table} DROP COLUMN {column}")
    gate = cli(["gate", run_id, "--db", db])
    assert gate.exit_code == 1 and "account 'erin'" in gate.output
    assert not any(r["kind"] == "adopt" for r in store.audit_records(db))
    # and an adopt record appended by hand after the chain covered the store is refused
    from termgate.store.audit import append_audit
    append_audit(db, {"created_at": "x", "kind": "adopt", "actor": "x", "payload": {"accounts": [], "runs": []}})
    verify = cli(["audit", "verify", "--db", db])
    assert verify.exit_code == 1 and "second adoption" in verify.output


# ---------------------------------------------------------------- found by a hostile review


def test_a_view_in_place_of_a_chained_table_is_refused(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    run_id = stored_run(db, golden, generated, author="carol")
    head = cli(["audit", "verify", "--db", db]).output.split("audit head: ")[1].strip()
    # a view that adds a forged approval only for the query that counts decisions
    _edit(db, "ALTER TABLE audit_log RENAME TO audit_log_real")
    _edit(db, "CREATE VIEW audit_log AS SELECT * FROM audit_log_real UNION ALL SELECT 9999::BIGINT, 'x', 'decision', "
              "'dave', NULL, content_hash, 'approve', 'lgtm', '{\"approves_domains\": [\"medical\"]}', 'x', 'y', "
              "NULL, NULL FROM runs WHERE current_query() LIKE '%decision%'")
    gate = cli(["gate", run_id, "--db", db, "--expect-head", head])
    assert gate.exit_code == 1 and "audit_log is a view" in gate.output
    assert cli(["audit", "verify", "--db", db]).exit_code == 1


@pytest.mark.slow
def test_a_second_row_for_an_account_is_refused(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    run_id = stored_run(db, golden, generated, author="carol")
    so.add_user(db, "mallory", "viewer", "mallory-password")
    _edit(db, "CREATE TABLE u2 AS SELECT * FROM users")
    _edit(db, "DROP TABLE users")
    _edit(db, "CREATE TABLE users AS SELECT * REPLACE ((SELECT password_hash FROM u2 WHERE name = 'mallory') "
              "AS password_hash) FROM u2 WHERE name = 'dave' UNION ALL SELECT * FROM u2")
    signed = cli(["signoff", run_id, "--approve", "--reviewer", "dave", "--comment", "lgtm", "--ack-all", "--db", db],
                 env={"TERMGATE_PASSWORD": "mallory-password"})
    assert signed.exit_code == 4, signed.output
    verify = cli(["audit", "verify", "--db", db])
    assert verify.exit_code == 1 and "'dave' is stored twice" in verify.output


@pytest.mark.slow
def test_a_standing_rejection_holds_when_the_same_content_passes(medical, monkeypatch):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    accounts(db)
    clean = write_jsonl(tmp / "clean.jsonl", [{"query_id": "m1", "terms": ["mi", "myocardial infarction"]},
                                              {"query_id": "m2", "terms": ["cva", "brain attack"]}])
    run_id = stored_run(db, golden, clean, author="erin")  # review only because it is medical
    assert cli(["signoff", run_id, "--reject", "--reviewer", "dave", "--comment", "no", "--db", db]).exit_code == 1
    # medical no longer needs sign-off: a loosening of the store's policy, so two admins
    so.add_user(db, "ada", "admin", PASSWORD)
    so.add_user(db, "ben", "admin", PASSWORD)
    (tmp / "policy.toml").write_text('high_risk_domains = ["legal"]\n', encoding="utf-8")
    assert cli(["policy", "set", tmp / "policy.toml", "--admin", "ada", "--db", db]).exit_code == 0
    proposal = [r for r in store.audit_records(db) if r["kind"] == "policy_proposal"][0]["seq"]
    assert cli(["policy", "approve", proposal, "--admin", "ben", "--db", db]).exit_code == 0
    again = evaluate(db, golden, clean, "--author", "erin")
    assert "gate: PASS" in again.output and again.exit_code == 1 and "rejected by dave" in again.output
    assert cli(["gate", run_id, "--db", db]).exit_code == 1


def test_a_non_canonical_author_from_an_older_store_blocks_every_approval():
    account = so.Account("carol", "approver", (), False, ("carol-gh",))
    for author in ("\u0421arol", "c\u0430rol", "carol smith", "carol\u200b"):
        assert so.is_author({"author": author}, account)
    assert so.is_author({"author": "Carol-GH "}, account) and not so.is_author({"author": "karol"}, account)


@pytest.mark.parametrize("command", [["runs"], ["users", "list"], ["audit", "verify"], ["gate", "r1"], ["demo"]])
def test_every_command_refuses_a_db_that_is_not_a_store(tmp_path, command):
    json_file, fifo, foreign = tmp_path / "x.json", tmp_path / "fifo", tmp_path / "other.duckdb"
    json_file.write_text('{"a": 1}')
    import os
    os.mkfifo(fifo)
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE t (a INTEGER)")
    for db in (json_file, fifo, foreign):
        result = cli([*command, "--db", db])
        assert result.exit_code == 2 and "not" in result.output, (db, result.output)
    assert json_file.read_text() == '{"a": 1}'
    with duckdb.connect(str(foreign), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchone()[0] == 1  # nothing added


def test_a_report_on_the_store_write_ahead_log_is_refused(medical):
    tmp, golden, generated = medical
    db = tmp / "s.duckdb"
    stored_run(db, golden, generated, author="erin")
    wal = Path(f"{db}.wal")
    wal.write_bytes(b"pending")
    result = evaluate(db, golden, generated, "--json", wal)
    assert result.exit_code == 2 and "same file as --db" in result.output and wal.read_bytes() == b"pending"


def test_deeply_nested_input_is_exit_2(medical):
    tmp, golden, generated = medical
    (tmp / "deep.json").write_text("[" * 5000 + "]" * 5000)
    result = evaluate(tmp / "s.duckdb", golden, generated, "--thresholds", tmp / "deep.json", "--no-store")
    assert result.exit_code == 2


def test_a_failure_time_in_the_future_waits_no_longer_than_30_s(tmp_path):
    db = tmp_path / "s.duckdb"
    so.add_user(db, "dave", "approver", PASSWORD)
    with pytest.raises(so.SignoffRefused):
        so.authenticate(db, "dave", "wrong-password")
    _edit(db, "UPDATE signin_failures SET failures = 1000000, last_at = 1e300")
    assert so.signin_delay(db, "dave") == 30


@pytest.mark.parametrize("flag", ["--json", "--html", "--junit"])
def test_a_report_on_standard_output_carries_no_terminal_controls(tmp_path, monkeypatch, flag):
    import json as jsonlib
    monkeypatch.chdir(tmp_path)
    hostile = "q\u202egnp\x9b31m\x1b[2J\x7f"
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", hostile, [hostile])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": [hostile]}])
    proc = subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", golden, "--generated", generated,
                           "--drift-judge", "none", "--no-store", flag, "-"], capture_output=True, timeout=120)
    out = proc.stdout.decode("utf-8")
    assert proc.returncode in (0, 3) and out
    assert not any(c in out for c in "\u202e\x9b\x1b\x7f"), out[:500]
    if flag == "--json":
        assert jsonlib.loads(out)["per_query_results"][0]["original_query"] == hostile  # the same value, escaped


@pytest.mark.slow
def test_concurrent_writers_never_see_a_broken_chain(medical):
    """Six `evaluate` processes (twice) storing into one file at once: each verifies the chain while
    the others append; a concurrent append is not tampering (no exit 1), nothing is lost."""
    cwd, golden, generated = medical
    db = cwd / "race.duckdb"
    evaluate(db, golden, generated, "-q")  # the store exists before the race
    results = []
    for _ in range(2):
        procs = [subprocess.Popen([sys.executable, "-m", "termgate", "evaluate", "--golden", str(golden),
                                   "--generated", str(generated), "--db", str(db), "--drift-judge", "none", "-q"],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(6)]
        results += [(p.wait(timeout=300), p.stdout.read() + p.stderr.read()) for p in procs]
    assert [code for code, _ in results] == [3] * 12, results  # review: awaiting sign-off, never "broken"
    assert not any("broken" in out for _, out in results)
    assert len(store.list_runs(db)) == 13
    verify = cli(["audit", "verify", "--db", db])
    assert verify.exit_code == 0 and "intact: 13 records" in verify.output, verify.output
