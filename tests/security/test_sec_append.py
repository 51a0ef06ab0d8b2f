"""Issue 32, item 6, kept as regression tests on both backends: nothing is appended to a
broken audit chain — `evaluate`, `harness` and every `users` change refuse it with one line
and store nothing, whether the chain was broken before they started or while they were
about to write — and the head the sign-off state relied on is in the job summary and the
pull-request comment, where whoever keeps it can later catch a truncated store (SPEC §4)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.errors import ChainBroken
from termgate.governance import chain_guard
from termgate.governance import signoff as so
from termgate.report.findings import Findings
from termgate.report.markdown import md, render_pr_comment, render_summary
from termgate.store.postgres import is_postgres

from conftest import golden_row, run_sql, write_jsonl

PASSWORD = "correct-horse-battery"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], env={"TERMGATE_PASSWORD": PASSWORD})


def inputs(folder: Path) -> tuple[Path, Path]:
    """A medical golden set and an output whose gate is review."""
    golden = write_jsonl(folder / "golden.jsonl", [
        golden_row("m1", "heart attack", ["mi", "myocardial infarction"], domain="medical"),
        golden_row("m2", "stroke", ["cva", "brain attack"], domain="medical")])
    generated = write_jsonl(folder / "gen.jsonl", [
        {"query_id": "m1", "terms": ["mi", "myocardial infarction"]},
        {"query_id": "m2", "terms": ["cva", "brain attack"]}])
    return golden, generated


def row_counts(db) -> dict[str, int]:
    """Rows per table of the store: what `nothing stored` is checked against."""
    if is_postgres(db):
        import psycopg

        with psycopg.connect(str(db)) as conn:
            tables = [r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables WHERE "
                                                 "table_schema = 'public' AND table_type = 'BASE TABLE'")]
            return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE "
                                            "table_schema = 'main' AND table_type = 'BASE TABLE'").fetchall()]
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchall()[0][0] for t in tables}


def append_garbage(db) -> None:
    """The issue's attack: a record whose hash is garbage appended at the head (as the CI role
    could through the run-header function before issue 32), the head moved onto it."""
    seq, prev = store.audit_head(db)
    run_sql(db, ("INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, "
                 "payload, prev_hash, record_hash) VALUES (?, '2026-12-01T00:00:00Z', 'run', 'ci-bot', 'forged', "
                 "NULL, NULL, NULL, '{}', ?, ?)", [seq + 1, prev, "garbage"]),
            ("UPDATE audit_head SET seq = ?, record_hash = ? WHERE id = 1", [seq + 1, "garbage"]))


def _build(db, folder: Path) -> None:
    """carol (approver) and a stored review run by erin, on an intact chain."""
    so.add_user(db, "carol", "approver", PASSWORD)
    golden, generated = inputs(folder)
    stored = cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
                 "--author", "erin", "-q")
    assert stored.exit_code == 3, stored.output


@pytest.fixture
def intact(request, backend, store_templates, tmp_path, monkeypatch):
    """(a copy of a store with an account and a run on an intact chain, this test's folder
    with the inputs and an expander module that leaves a file `called` when called)."""
    db, _ = store_templates.copy(request, backend, "append-intact", _build, tmp_path)
    golden, generated = inputs(tmp_path)
    module = "noted_" + re.sub(r"\W", "_", tmp_path.name)  # one per test: imported modules are cached
    (tmp_path / f"{module}.py").write_text("import pathlib\n\ndef expand(query, context):\n"
                                           f"    pathlib.Path({str(tmp_path / 'called')!r}).touch()\n"
                                           "    return ['mi']\n")
    monkeypatch.chdir(tmp_path)
    return db, {"golden": golden, "generated": generated, "folder": tmp_path, "expander": f"{module}:expand"}


@pytest.fixture
def broken(intact):
    db, made = intact
    append_garbage(db)
    return db, made


COMMANDS = {
    "evaluate": lambda db, m: ["evaluate", "--golden", m["golden"], "--generated", m["generated"], "--db", db,
                               "--drift-judge", "none", "--author", "erin", "--json", m["folder"] / "r.json",
                               "--summary", m["folder"] / "s.md"],
    "harness": lambda db, m: ["harness", "--golden", m["golden"], "--callable", m["expander"],
                              "--db", db, "--drift-judge", "none", "--json", m["folder"] / "r.json"],
    "users add": lambda db, m: ["users", "add", "dave", "--role", "approver", "--db", db],
    "users disable": lambda db, m: ["users", "disable", "carol", "--db", db],
    "users set-role": lambda db, m: ["users", "set-role", "carol", "--role", "admin", "--db", db],
    "users passwd": lambda db, m: ["users", "passwd", "carol", "--db", db],
    "users alias": lambda db, m: ["users", "alias", "carol", "--add", "carol-gh", "--db", db],
}
EXIT = {"evaluate": 1, "harness": 1}  # SPEC §3: a broken chain is 1 for a run, 4 (refused) for an account change


@pytest.mark.slow
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_broken_chain_refuses_the_command_and_stores_nothing(broken, command):
    db, made = broken
    before = row_counts(db)
    result = cli(*COMMANDS[command](db, made))
    assert result.exit_code == EXIT.get(command, 4), result.output
    (line,) = result.stderr.splitlines()  # one clear line
    assert "audit chain broken: record" in line and "hash" in line and "nothing" in line, line
    assert row_counts(db) == before
    assert not (made["folder"] / "r.json").exists() and not (made["folder"] / "s.md").exists()
    assert not (made["folder"] / "called").exists()  # the harness refused before calling anything


@pytest.mark.slow
@pytest.mark.parametrize("command", ["evaluate", "users add"])
def test_an_intact_chain_still_takes_them(intact, command):
    db, made = intact
    before = row_counts(db)
    result = cli(*COMMANDS[command](db, made))
    assert result.exit_code == (3 if command == "evaluate" else 0), result.output
    assert row_counts(db)["audit_log"] == before["audit_log"] + 1
    assert cli("audit", "verify", "--db", db).exit_code == 0


def meanwhile(monkeypatch, action) -> dict:
    """Another writer's action(db) right after the write's own verification found the chain
    intact, before the write; the row counts just after it (filled in then)."""
    real = chain_guard.verify_chain
    counts: dict = {}
    acted: list[bool] = []

    def verify_then_act(db, expect_head=None, runs="all"):
        report = real(db, expect_head, runs)
        if report.ok and not acted and _called_from_append():
            acted.append(True)  # once: the action's own verification passes through
            action(db)
            counts.update(row_counts(db))
        return report

    monkeypatch.setattr(chain_guard, "verify_chain", verify_then_act)
    return counts


@pytest.fixture
def broken_meanwhile(monkeypatch):
    """The chain broken by another writer after it verified intact, before the write."""
    return meanwhile(monkeypatch, append_garbage)


def _called_from_append() -> bool:
    """Whether the verification is the one a write makes (chain_guard.append_intact)."""
    import sys

    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "append_intact":
        frame = frame.f_back
    return frame is not None


@pytest.mark.slow
def test_a_chain_broken_between_the_check_and_the_write_stores_no_run(intact, broken_meanwhile):
    db, made = intact
    result = cli(*COMMANDS["evaluate"](db, made))
    assert result.exit_code == 1, result.output
    assert "audit chain broken: record" in result.stderr and "the run was not stored" in result.stderr
    assert broken_meanwhile and row_counts(db) == broken_meanwhile  # the write rolled back whole
    assert not (made["folder"] / "r.json").exists() and not (made["folder"] / "s.md").exists()


@pytest.mark.slow
def test_a_chain_broken_between_the_check_and_the_write_changes_no_account(intact, broken_meanwhile):
    db, _ = intact
    with pytest.raises(ChainBroken, match="audit chain broken: record"):
        so.add_user(db, "dave", "approver", PASSWORD)
    assert broken_meanwhile and row_counts(db) == broken_meanwhile
    assert store.get_user(db, "dave") is None


@pytest.mark.slow
def test_a_chain_that_moved_intact_meanwhile_takes_the_run_on_top(intact, monkeypatch):
    """Another writer's valid record between the verification and the write: the chain is
    verified again (a DuckDB file: the write rolled back and tried again) and the run's
    header links onto the new head; nothing refused."""
    db, made = intact
    meanwhile(monkeypatch, lambda db: so.add_user(db, "dave", "approver", PASSWORD))
    result = cli(*COMMANDS["evaluate"](db, made))
    assert result.exit_code == 3, result.output
    assert [r["kind"] for r in store.audit_records(db)][-2:] == ["user_add", "run"]
    assert cli("audit", "verify", "--db", db).exit_code == 0


# ---------------------------------------------------------------- the head in the summary and the comment


def _head_line(output: str) -> str:
    (head,) = [line.split(": ", 1)[1] for line in output.splitlines() if line.startswith("audit head: ")]
    return head


@pytest.mark.slow
def test_summary_and_comment_carry_the_head_the_gate_relied_on(intact):
    db, made = intact
    folder = made["folder"]
    stored = cli(*COMMANDS["evaluate"](db, made), "--pr-comment", folder / "c.md")
    assert stored.exit_code == 3, stored.output
    head = _head_line(stored.output)
    for name in ("s.md", "c.md"):
        assert f"Audit head: **{md(head)}**" in (folder / name).read_text(encoding="utf-8")
    run_id = json.loads((folder / "r.json").read_text())["evaluation_id"]
    gate = cli("gate", run_id, "--db", db, "--summary", folder / "gs.md", "--pr-comment", folder / "gc.md")
    assert gate.exit_code == 3 and _head_line(gate.output) == head
    for name in ("gs.md", "gc.md"):
        assert md(f"termgate audit verify --expect-head {head}") in (folder / name).read_text(encoding="utf-8")
    # a later truncation that removes the tail and moves the recorded head back onto what is left
    count = int(head.split(":")[0])
    run_sql(db, ("DELETE FROM audit_log WHERE seq >= ?", [count]),
            ("UPDATE audit_head SET seq = seq - 1, record_hash = (SELECT record_hash FROM audit_log WHERE seq = ?) "
             "WHERE id = 1", [count - 1]), ("DELETE FROM runs WHERE run_id = ?", [run_id]),
            ("DELETE FROM query_results WHERE run_id = ?", [run_id]), ("DELETE FROM term_rows WHERE run_id = ?",
                                                                       [run_id]))
    assert cli("audit", "verify", "--db", db).exit_code == 0  # consistent: only the kept head tells
    anchored = cli("audit", "verify", "--db", db, "--expect-head", head)
    assert anchored.exit_code == 1 and f"record {count}" in anchored.output


def _findings(head) -> Findings:
    return Findings("r1", None, "golden.jsonl", "golden.jsonl", "review", [], [], 1, 1, 0, None, [], [],
                    "awaiting sign-off", ["medical: 0 of 1 approvals"], [("Open", "http://x/?run=r1")],
                    audit_head=head)


def test_the_head_is_shown_whole_and_nothing_else_renders():
    markdown_it = pytest.importorskip("markdown_it")
    render = markdown_it.MarkdownIt("commonmark", {"html": True}).render
    head = "7:" + "0123456789abcdef" * 4
    for text in (render_summary(_findings(head)), render_pr_comment(_findings(head))):
        html = render(text)
        assert f"Audit head: <strong>{head}</strong>" in html
        assert f"termgate audit verify --expect-head {head} shows later" in html
    assert "Audit head" not in render_summary(_findings(None))  # a broken chain or a run not stored
    odd = render(render_summary(_findings("7:`<b>x</b>` @octocat")))
    assert "<b>" not in odd and "@octocat" not in odd and "<code>" not in odd
