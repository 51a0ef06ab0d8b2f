"""`termgate gate RUN --wait` (issue 16 item 6): a deployment job waits for a reviewer.

The waiting gate runs as its own process (as in CI) while the test records the decision
through the library, the way the dashboard's Sign-off page does; on both backends, so a
DuckDB file is shown to stay writable while a waiter polls it. Nothing here asserts a time:
a test that would wait when it should not uses a timeout of an hour and a subprocess
deadline, and checks what was printed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.governance import release
from termgate.governance import signoff as so
from termgate import store
from termgate.cli import main
from termgate.errors import StoreBusyError, UnknownRunError
from termgate.governance.signoff import ReleaseState
from termgate.dashboard import APP as DASHBOARD_APP

from conftest import golden_row, run_sql, write_jsonl

PASSWORDS = {"alice": "alice-password", "bob": "bob-password-1"}
DEADLINE = 120  # seconds a subprocess may take before the test calls it hung
ROOT = Path(__file__).resolve().parent.parent


def _review_store(db: str, folder: Path) -> str:
    """alice (approver, medical) and bob (admin); a medical run by carol with a forbidden
    term generated, so its gate is review (awaiting sign-off, exit 3)."""
    golden = write_jsonl(folder / "golden.jsonl", [
        golden_row("m1", "heart attack", ["mi", "myocardial infarction", "cardiac arrest", "chest pain"],
                   domain="medical", forbidden=["panic attack"])])
    generated = write_jsonl(folder / "gen.jsonl", [
        {"query_id": "m1", "terms": ["mi", "myocardial infarction", "cardiac arrest", "chest pain", "panic attack"]}])
    so.add_user(db, "alice", "approver", PASSWORDS["alice"], "medical")
    so.add_user(db, "bob", "admin", PASSWORDS["bob"], "")
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                       "--db", db, "--drift-judge", "none", "--author", "carol", "-q"])
    assert result.exit_code == 3, result.output
    return store.list_runs(db)["run_id"].iloc[0]


@pytest.fixture
def review(request, tmp_path, monkeypatch, backend, store_templates):
    """(store, run id of carol's review run) on each backend, a copy per test."""
    monkeypatch.chdir(tmp_path)
    return store_templates.copy(request, backend, "gate-wait", _review_store, tmp_path)


def start_gate(db: str, run_id: str, *args: str, env: dict | None = None) -> subprocess.Popen:
    """`termgate gate RUN --wait …` as its own process, returned once it says it is waiting
    (so a decision the test records next is one it has to notice by polling)."""
    proc = subprocess.Popen([sys.executable, "-m", "termgate", "gate", run_id, "--db", db, "--wait", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, **(env or {})})
    seen = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("waiting for sign-off"):
            proc.seen = "".join(seen)
            return proc
    proc.wait(DEADLINE)
    raise AssertionError("gate --wait ended without waiting: " + "".join(seen) + proc.stderr.read())


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    """(exit code, all of standard output, standard error) once the process ends; read
    through the same file objects the lines were read from (communicate() would skip what
    they buffered), killed at the deadline so a hang fails instead of stalling."""
    timer = threading.Timer(DEADLINE, proc.kill)
    timer.start()
    try:
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait()
    finally:
        timer.cancel()
    return proc.returncode, proc.seen + out, err


@pytest.mark.slow
def test_an_approval_releases_the_waiting_gate(review, tmp_path):
    db, run_id = review
    proc = start_gate(db, run_id, "--interval", "0.2", "--timeout", "60", "--summary", "summary.md")
    assert "medical: 0 of 1 approvals" in proc.seen
    so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "checked the drift", ack_all=True)
    code, out, err = finish(proc)
    assert code == 0, out + err
    assert "decision: alice approved at " in out and ": checked the drift" in out
    assert "releasable: approved by alice (after waiting" in out.splitlines()[-1]
    summary = (tmp_path / "summary.md").read_text(encoding="utf-8")  # written once, with the final state
    assert "**releasable**: approved by alice" in summary


def test_an_approval_on_the_dashboards_signoff_page_releases_the_waiting_gate(review, monkeypatch):
    """The issue's "done when": the waiting gate returns once a reviewer approves in the
    dashboard (the Sign-off page, driven with AppTest, writing to the store the gate polls)."""
    from streamlit.testing.v1 import AppTest

    db, run_id = review
    monkeypatch.setenv("TERMGATE_DB", db)
    proc = start_gate(db, run_id, "--interval", "0.2", "--timeout", "120")
    at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=60)
    at.switch_page("views/signoff.py")
    at.query_params["run"] = run_id
    at.run()
    at.text_input(key="auth_name").input("alice")
    at.text_input(key="auth_password").input(PASSWORDS["alice"])
    next(b for b in at.sidebar.button if b.label == "Sign in").click()
    at.run()
    for box in [c for c in at.checkbox if c.key.startswith("so_ack_")]:
        box.check()
    at.text_area(key=f"so_comment_{run_id}").input("reviewed on the page").run()
    at.button(key="so_approve").click().run()
    assert any("Recorded approve" in s.value for s in at.success), [e.message for e in at.exception]
    code, out, err = finish(proc)
    assert code == 0, out + err
    assert "decision: alice approved at " in out and ": reviewed on the page" in out


@pytest.mark.slow
def test_a_rejection_ends_the_wait_with_1(review):
    db, run_id = review
    proc = start_gate(db, run_id, "--interval", "0.2", "--timeout", "60")
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "reject", "drift is not acceptable")
    code, out, err = finish(proc)
    assert code == 1, out + err
    assert "decision: bob rejected at " in out
    assert out.splitlines()[-1].startswith("not releasable: rejected by bob: drift is not acceptable")


def test_timeout_is_3_saying_it_still_awaits(review):
    db, run_id = review
    result = CliRunner().invoke(main, ["gate", run_id, "--db", db, "--wait", "--timeout", "0.5", "--interval", "0.2"])
    assert result.exit_code == 3, result.output
    last = result.output.splitlines()[-1]
    assert last.startswith("still awaiting sign-off after ") and "(--timeout 0.5): medical: 0 of 1 approvals" in last


@pytest.mark.slow
def test_each_approval_is_printed_as_it_is_read(tmp_path, monkeypatch, store_templates, request):
    """Two approvals required: the first is printed and the wait goes on, saying what is
    still missing; the second releases the run."""
    monkeypatch.chdir(tmp_path)
    db, run_id = store_templates.copy(request, str(tmp_path / "x.duckdb"), "gate-wait", _review_store, tmp_path)
    config = tmp_path / "termgate.toml"
    config.write_text("[approvals_required]\nmedical = 2\n", encoding="utf-8")
    proc = start_gate(db, run_id, "--interval", "0.2", "--timeout", "60", env={"TERMGATE_CONFIG": str(config)})
    assert "medical: 0 of 2 approvals" in proc.seen
    so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "one", ack_all=True)
    for line in proc.stdout:  # the wait notices the first approval and goes on
        proc.seen += line
        if line.startswith("still awaiting sign-off"):
            break
    assert "decision: alice approved" in proc.seen and "still awaiting sign-off: medical: 1 of 2 approvals" in proc.seen
    so.decide(db, run_id, "bob", PASSWORDS["bob"], "approve", "two", ack_all=True)
    code, out, err = finish(proc)
    assert code == 0, out + err
    assert "decision: bob approved" in out and "releasable: approved by alice, bob" in out


def run_gate(db: str, run_id: str, *args: str) -> subprocess.CompletedProcess:
    """gate --wait with an hour's timeout, in a subprocess with a deadline: a run that
    cannot be released must come back at once, and a hang fails the test instead of
    stalling it."""
    return subprocess.run([sys.executable, "-m", "termgate", "gate", run_id, "--db", db, "--wait",
                           "--timeout", "3600", "--interval", "10", *args],
                          capture_output=True, text=True, timeout=DEADLINE)


@pytest.mark.slow
def test_a_failed_gate_returns_1_without_waiting(review, tmp_path):
    db, _ = review
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("m1", "heart attack", ["mi", "cardiac arrest"],
                                                           domain="medical")])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "m1", "terms": []}])
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                       "--db", db, "--drift-judge", "none", "--json", "r.json", "-q"])
    assert result.exit_code == 1
    failed = json.loads(Path("r.json").read_text())["evaluation_id"]
    gate = run_gate(db, failed)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "waiting for sign-off" not in gate.stdout
    assert "nothing to wait for: the run is not releasable" in gate.stdout
    assert gate.stdout.splitlines()[-1] == "not releasable: gate fail"


EXPANDER = '''
def expand(query, context):
    raise RuntimeError("endpoint down")
'''


@pytest.mark.slow
def test_an_incomplete_run_returns_5_without_waiting(review, tmp_path):
    db, _ = review
    (tmp_path / "down_expander.py").write_text(EXPANDER, encoding="utf-8")
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("m1", "heart attack", ["mi"], domain="medical")])
    result = CliRunner().invoke(main, ["harness", "--golden", str(golden), "--callable", "down_expander:expand",
                                       "--db", db, "--drift-judge", "none", "--json", "r.json", "-q"])
    assert result.exit_code == 5, result.output
    incomplete = json.loads(Path("r.json").read_text())["evaluation_id"]
    gate = run_gate(db, incomplete)
    assert gate.returncode == 5, gate.stdout + gate.stderr
    assert "nothing to wait for: the run is incomplete" in gate.stdout
    assert gate.stdout.splitlines()[-1].startswith("incomplete: 1 errored item")


def test_a_broken_audit_chain_is_1_at_once(review):
    db, run_id = review
    run_sql(db, ("UPDATE term_rows SET drift = false WHERE run_id = ? AND term = 'panic attack'", [run_id]))
    gate = run_gate(db, run_id)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "waiting for sign-off" not in gate.stdout
    assert gate.stdout.splitlines()[-1].startswith("not releasable: audit chain broken: ")


def test_ctrl_c_is_130_with_one_line_and_writes_nothing(review, tmp_path):
    db, run_id = review
    proc = start_gate(db, run_id, "--interval", "0.2", "--timeout", "60", "--summary", "summary.md")
    proc.send_signal(signal.SIGINT)
    code, out, err = finish(proc)
    assert code == 130, out + err
    assert err.splitlines() == [f"interrupted: run {run_id} is still awaiting sign-off; nothing was written"]
    assert sorted(p.name for p in tmp_path.iterdir() if "summary" in p.name) == []  # no file, no temporary


@pytest.mark.parametrize("args, message", [
    (["--wait", "--interval", "0"], "--interval '0': give a positive number of seconds"),
    (["--wait", "--interval", "-1"], "--interval '-1': give a positive number of seconds"),
    (["--wait", "--timeout", "soon"], "--timeout 'soon': give a positive number of seconds"),
    (["--wait", "--timeout", "inf"], "--timeout 'inf': give a positive number of seconds"),
    (["--wait", "--interval", "nan"], "--interval 'nan': give a positive number of seconds"),
    (["--wait", "--timeout", "5", "--interval", "20"], "--interval 20 is longer than --timeout 5"),
    (["--wait", "--interval", "20"], None),  # the default timeout (3600) is longer: fine
    (["--timeout", "5"], "--timeout and --interval go with --wait"),
])
def test_bad_wait_options_are_one_line_and_exit_2(tmp_path, args, message):
    """Checked before the store is read: a missing store does not mask them."""
    result = CliRunner().invoke(main, ["gate", "no-such-run", "--db", str(tmp_path / "s.duckdb"), *args])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    if message is None:  # the options were fine; the missing store is what stops it
        assert "no store at" in lines[0]
    else:
        assert lines[0].startswith(f"error: {message}"), lines


def test_a_failed_read_while_waiting_is_retried_at_the_next_poll(monkeypatch):
    """A busy (or briefly unreachable) store on a later poll is a warning and another try,
    not the end of an hour's wait; an unknown run is not retried."""
    awaiting = ReleaseState("awaiting sign-off", 3, ["medical: 0 of 1 approvals"])
    released = ReleaseState("releasable", 0, ["approved by alice"])
    answers = iter([awaiting, StoreBusyError("store busy"), released])

    def fake_state(*_args):
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(release, "release_state", fake_state)
    now = [0.0]
    errors, states = [], []
    result = release.wait_for_release("db", "run", None, timeout=60, interval=5, on_poll=states.append,
                                      on_error=errors.append, clock=lambda: now[0],
                                      sleep=lambda s: now.__setitem__(0, now[0] + s))
    assert result.state is released and not result.timed_out and result.polls == 3
    assert errors == ["store busy"] and states == [awaiting, released] and result.waited == 10

    answers = iter([awaiting, UnknownRunError("unknown run")])
    with pytest.raises(UnknownRunError):
        release.wait_for_release("db", "run", None, timeout=60, interval=5, clock=lambda: now[0],
                                 sleep=lambda s: None)
