"""The PostgreSQL team store against a real server the tests start (tests/pg_server.py):
init, migrate and info by URL, the schema the DuckDB store has, migrations once under an
advisory lock, a newer schema refused, least privilege at init, faults as exit 2."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from termgate import store
from termgate.store.postgres import PG_MIGRATIONS, PG_SCHEMA_VERSION
from termgate.cli import main

from conftest import NO_POSTGRES
from pg_server import binaries

# the server (`pg`) and a new database per test (`pgdb`) are conftest's, shared with every
# test that runs on both backends: one server per session
pytestmark = pytest.mark.skipif(binaries() is None, reason=NO_POSTGRES)


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


DUCKDB_TO_PG = {"VARCHAR": "text", "VARCHAR[]": "text[]", "DOUBLE": "double precision",
                "DOUBLE[]": "double precision[]", "FLOAT[]": "real[]", "INTEGER": "integer", "INTEGER[]": "integer[]",
                "BIGINT": "bigint",
                "BOOLEAN": "boolean"}


def test_init_creates_the_duckdb_stores_schema_column_for_column(pgdb, tmp_path):
    import psycopg

    assert PG_SCHEMA_VERSION == store.SCHEMA_VERSION  # migrations numbered in step on both backends
    result = cli("store", "init", "--db", pgdb)
    assert result.exit_code == 0, result.output
    assert "initialised PostgreSQL store" in result.output and f"schema version {store.SCHEMA_VERSION}" in result.output
    duck = tmp_path / "s.duckdb"
    assert cli("store", "init", "--db", duck).exit_code == 0
    with duckdb.connect(str(duck), read_only=True) as con:
        want = {(t, c, DUCKDB_TO_PG[ty]) for t, c, ty in con.execute(
            "SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE NOT internal "
            "AND database_name = current_database() AND schema_name = 'main'").fetchall()}
    with psycopg.connect(pgdb) as conn:
        rows = conn.execute("SELECT table_name, column_name, data_type, udt_name FROM information_schema.columns "
                            "WHERE table_schema = 'public'").fetchall()
    arrays = {"_text": "text[]", "_float8": "double precision[]", "_float4": "real[]", "_int4": "integer[]"}
    have = {(t, c, arrays[udt] if ty == "ARRAY" else ty) for t, c, ty, udt in rows}
    assert have == want


def test_init_again_and_migrate_say_up_to_date(pgdb):
    assert cli("store", "init", "--db", pgdb).exit_code == 0
    again = cli("store", "migrate", "--db", pgdb)
    assert again.exit_code == 0 and f"schema version {store.SCHEMA_VERSION}, up to date" in again.output
    info = cli("store", "info", "--db", pgdb)
    assert info.exit_code == 0 and f"schema version {store.SCHEMA_VERSION}, applied by termgate" in info.output


def test_migrate_on_an_empty_database_says_to_init(pgdb):
    result = cli("store", "migrate", "--db", pgdb)
    assert result.exit_code == 2 and "not a termgate store: run `termgate store init`" in result.stderr


def test_a_server_older_than_the_oldest_supported_is_refused_and_left_untouched(pgdb, monkeypatch):
    """PostgreSQL 14 is the oldest served (string_to_table); the running server stands in for
    an old one by raising the bar above its own version."""
    import psycopg

    from termgate.store import postgres

    monkeypatch.setattr(postgres, "OLDEST_SERVER", 990000)
    result = cli("store", "init", "--db", pgdb)
    assert result.exit_code == 2 and "is too old for the team store; use PostgreSQL 99 or later" in result.stderr
    with psycopg.connect(pgdb) as conn:
        assert conn.execute("SELECT to_regclass('schema_migrations')").fetchone()[0] is None


def test_four_runners_meeting_an_empty_database_create_it_once(pgdb):
    import psycopg

    procs = [subprocess.Popen([sys.executable, "-m", "termgate", "store", "init", "--db", pgdb],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outcomes = [(p.wait(timeout=120), p.stdout.read() + p.stderr.read()) for p in procs]
    assert [code for code, _ in outcomes] == [0] * 4, outcomes
    # each migration applied by exactly one of them (each in its own transaction under the lock)
    applied = [int(v) for _, out in outcomes for found in re.findall(r"\(applied ([0-9, ]+)\)", out)
               for v in found.split(", ")]
    assert sorted(applied) == [v for v, _ in PG_MIGRATIONS], outcomes
    with psycopg.connect(pgdb) as conn:
        assert conn.execute("SELECT version FROM schema_migrations ORDER BY 1").fetchall() == [
            (v,) for v, _ in PG_MIGRATIONS]


def test_a_schema_newer_than_this_termgate_is_refused_with_the_version_to_install(pgdb):
    import psycopg

    assert cli("store", "init", "--db", pgdb).exit_code == 0
    with psycopg.connect(pgdb) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES (%s, 'later', '9.4.1')", [PG_SCHEMA_VERSION + 1])
    result = cli("store", "migrate", "--db", pgdb)
    assert result.exit_code == 2
    assert f"schema is version {PG_SCHEMA_VERSION + 1}, newer than this termgate" in result.stderr
    assert "install termgate 9.4.1 or later" in result.stderr


def test_a_role_that_may_not_create_tables_is_told_to_ask_the_owner(pg, pgdb):
    name = pgdb.rsplit("/", 1)[1]
    pg.sql("DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'ci_runner') THEN "
           "CREATE ROLE ci_runner LOGIN; END IF; END $$")
    result = cli("store", "init", "--db", pg.url(name, user="ci_runner"))
    assert result.exit_code == 2, result.output
    assert "not a termgate store: run `termgate store init` as its owner" in result.stderr


def test_a_role_meeting_an_older_schema_is_told_to_migrate_and_the_owner_upgrades_it(pg, pgdb, monkeypatch):
    import psycopg

    from termgate.store import postgres

    name = pgdb.rsplit("/", 1)[1]
    with monkeypatch.context() as m:  # a store written by the termgate that knew only the first migration
        m.setattr(postgres, "PG_MIGRATIONS", PG_MIGRATIONS[:1])
        assert postgres.migrate_pg(pgdb)[0] == PG_MIGRATIONS[0][0]
    pg.sql(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'reader_{name}') THEN "
           f"CREATE ROLE reader_{name} LOGIN; END IF; END $$")
    with psycopg.connect(pgdb) as conn:
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader_{name}")
    result = cli("runs", "--db", pg.url(name, user=f"reader_{name}"))
    assert result.exit_code == 2, result.output
    assert (f"the store's schema is version {PG_MIGRATIONS[0][0]}, this termgate needs {PG_SCHEMA_VERSION}: "
            "run `termgate store migrate` as its owner") in result.stderr
    upgraded = cli("store", "migrate", "--db", pgdb)
    pending = ", ".join(str(v) for v, _ in PG_MIGRATIONS[1:])
    assert upgraded.exit_code == 0 and f"(applied {pending})" in upgraded.output
    assert cli("runs", "--db", pg.url(name, user=f"reader_{name}")).exit_code == 0


def test_an_unreachable_server_is_exit_2_with_the_cause(pg):
    from pg_server import _free_port

    result = cli("store", "info", "--db", f"postgresql://postgres@127.0.0.1:{_free_port()}/x")
    assert result.exit_code == 2 and "cannot connect to PostgreSQL" in result.stderr
    assert "refused" in result.stderr.lower()


def test_postgres_scheme_is_accepted_and_the_password_never_printed(pg, pgdb):
    name = pgdb.rsplit("/", 1)[1]
    url = pg.url(name, password="s3kr1t-pass", scheme="postgres")
    result = cli("store", "init", "--db", url)
    assert result.exit_code == 0, result.output
    info = cli("store", "info", "--db", url)
    assert "s3kr1t-pass" not in result.output + info.output and "postgres://***@127.0.0.1" in info.output


def _append_args(conn, run_id, content_hash, kind="run", decision=None, actor="ci-bot"):
    """What a client sends an append function: the head it read, the record's hash over it
    and its canonical text (hash version 2)."""
    from termgate.store.records import linked

    head = conn.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1").fetchall()
    seq, prev = (head[0][0] + 1, head[0][1]) if head else (1, "0" * 64)
    record = linked({"created_at": "2026-12-01T00:00:00Z", "kind": kind, "actor": actor, "run_id": run_id,
                     "content_hash": content_hash, "decision": decision, "comment": "ok" if decision else None,
                     "payload": {"x": 1}}, seq, prev)
    return [seq, prev, record["created_at"], actor, run_id, content_hash, '{"x": 1}', record["record_hash"],
            record["canonical"]]


def test_the_ci_role_stores_runs_but_cannot_forge_or_alter_a_sign_off(pg, pgdb):
    import psycopg

    name = pgdb.rsplit("/", 1)[1]
    assert cli("store", "init", "--db", pgdb).exit_code == 0
    roles = cli("store", "roles", "--ci", f"ci_{name}", "--dashboard", f"dash_{name}")
    assert roles.exit_code == 0
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(roles.output)  # exactly the documented SQL
    ci_url, dash_url = pg.url(name, user=f"ci_{name}"), pg.url(name, user=f"dash_{name}")
    with psycopg.connect(pgdb, autocommit=True) as owner:  # an approver (decisions need an account, schema 15)
        owner.execute("INSERT INTO users (name, role, password_hash) VALUES ('carol', 'approver', 'x')")
    with psycopg.connect(ci_url, autocommit=True) as ci:
        ci.execute("INSERT INTO runs (run_id, created_at, content_hash, gate_decision) VALUES ('r1', 't', 'c1', 'review')")
        assert ci.execute("SELECT termgate_append_run_header(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                          _append_args(ci, "r1", "c1")).fetchone() == (1,)
        forgeries = [
            ("INSERT INTO audit_log VALUES (2, 't', 'decision', 'carol', 'r1', 'c1', 'approve', '', '{}', 'p', 'h')", ()),
            ("UPDATE audit_log SET kind = 'decision', decision = 'approve'", ()),
            ("DELETE FROM audit_log", ()),
            ("UPDATE audit_head SET seq = 0", ()),
            ("INSERT INTO users (name, role, password_hash) VALUES ('mallory', 'approver', 'x')", ()),
            ("UPDATE users SET role = 'admin'", ()),
            ("SELECT termgate_append_decision(%s, %s, %s, %s, %s, %s, %s, %s, %s, 'approve', 'ok')",
             _append_args(ci, "r1", "c1", "decision", "approve", "carol")),
        ]
        for sql, params in forgeries:
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                ci.execute(sql, params)
        with pytest.raises(psycopg.errors.SerializationFailure):  # a head it did not read: 40001, read again
            ci.execute("SELECT termgate_append_run_header(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                       [1, "0" * 64, "t", "ci-bot", "r1", "c1", "{}", "h", "{}"])
        with pytest.raises(psycopg.errors.RaiseException, match="has a header already"):
            ci.execute("SELECT termgate_append_run_header(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                       _append_args(ci, "r1", "c1"))
        with pytest.raises(psycopg.errors.RaiseException, match="no stored run"):
            ci.execute("SELECT termgate_append_run_header(%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                       _append_args(ci, "r-unknown", "c1"))
    with psycopg.connect(dash_url, autocommit=True) as dash:
        args = _append_args(dash, "r1", "c1", "decision", "approve", "carol")
        assert dash.execute("SELECT termgate_append_decision(%s, %s, %s, %s, %s, %s, %s, %s, %s, 'approve', 'ok')",
                            args).fetchone() == (2,)
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            dash.execute("INSERT INTO runs (run_id, created_at, content_hash, gate_decision) "
                         "VALUES ('r2', 't', 'c2', 'pass')")
    with psycopg.connect(pgdb) as owner:
        kinds = owner.execute("SELECT seq, kind, actor, decision FROM audit_log ORDER BY seq").fetchall()
    assert kinds == [(1, "run", "ci-bot", None), (2, "decision", "carol", "approve")]


def test_store_copy_to_postgres_and_back_keeps_the_chain_verifiable(pg, pgdb, tmp_path):
    """DuckDB (demo runs, accounts, a sign-off) → PostgreSQL → a new DuckDB file: every row
    typed as it was, so the chain's digests come out the same and `audit verify` passes."""
    import psycopg

    from termgate.governance import signoff
    from termgate import store

    source = tmp_path / "source.duckdb"
    assert cli("demo", "--db", source).exit_code == 0
    signoff.add_user(source, "carol", "approver", "pw-carol-123", domains=["medical"])
    assert cli("audit", "verify", "--db", source).exit_code == 0
    copied = cli("store", "copy", "--from", source, "--to", pgdb)
    assert copied.exit_code == 0, copied.output
    with psycopg.connect(pgdb) as conn:
        runs = conn.execute("SELECT count(*) FROM runs").fetchone()[0]
    assert runs == len(store.list_runs(source))
    back = tmp_path / "back.duckdb"
    returned = cli("store", "copy", "--from", pgdb, "--to", back)
    assert returned.exit_code == 0, returned.output
    verify = cli("audit", "verify", "--db", back)
    assert verify.exit_code == 0, verify.output
    assert verify.output.split("audit head: ")[1] == cli("audit", "verify", "--db", source).output.split(
        "audit head: ")[1]  # the same chain, record for record
    again = cli("store", "copy", "--from", source, "--to", pgdb)
    assert again.exit_code == 2 and "holds data already" in again.stderr


def test_audit_verify_on_postgres_catches_rows_edited_with_psql(pg, pgdb, tmp_path):
    """The team store's chain is checked by the same code: a copied store verifies; a query
    row, a decision or an account edited by hand in PostgreSQL is named."""
    import psycopg

    from termgate.governance import signoff
    from termgate import store

    source = tmp_path / "source.duckdb"
    assert cli("demo", "--db", source).exit_code == 0
    signoff.add_user(source, "carol", "approver", "pw-carol-123", domains=["medical"])
    run_id = store.list_runs(source)["run_id"].iloc[0]
    assert cli("store", "copy", "--from", source, "--to", pgdb).exit_code == 0
    intact = cli("audit", "verify", "--db", pgdb)
    assert intact.exit_code == 0 and "audit chain intact" in intact.output, intact.output
    head = intact.output.split("audit head: ")[1].strip()
    assert cli("audit", "verify", "--db", pgdb, "--expect-head", head).exit_code == 0
    edits = [
        ("UPDATE query_results SET passed = NOT passed WHERE run_id = %s AND position = 0", [run_id], f"run {run_id}"),
        ("UPDATE users SET role = 'admin' WHERE name = 'carol'", [], "account 'carol'"),
        ("UPDATE audit_log SET comment = 'edited' WHERE seq = 1", [], "record 1"),
    ]
    for sql, params, named in edits:
        with psycopg.connect(pgdb) as conn:  # committed on leaving the block, as psql would
            conn.execute("SET session_replication_role = replica")  # past the append-only trigger, as a superuser can
            conn.execute(sql, params)
        broken = cli("audit", "verify", "--db", pgdb)
        assert broken.exit_code == 1 and named in broken.output, (sql, broken.output)
        tmp_db = pg.create_database()  # start again from a clean copy for the next edit
        pgdb = pg.url(tmp_db)
        assert cli("store", "copy", "--from", source, "--to", pgdb).exit_code == 0


def _medical(folder):
    from conftest import golden_row, write_jsonl

    golden = write_jsonl(folder / "golden.jsonl", [
        golden_row("m1", "heart attack", ["mi", "myocardial infarction"], domain="medical"),
        golden_row("m2", "stroke", ["cva"], domain="medical")])
    generated = write_jsonl(folder / "gen.jsonl", [{"query_id": "m1", "terms": ["mi", "myocardial infarction"]},
                                                  {"query_id": "m2", "terms": ["cva"]}])
    return golden, generated


def test_evaluate_and_gate_on_postgres_from_two_working_folders(pg, pgdb, tmp_path):
    """Two 'machines' (folders sharing no file) use one team store: the first stores a run,
    the second's gate sees it and verifies the chain; a row edited by hand makes gate refuse."""
    import psycopg

    ci_a, ci_b = tmp_path / "runner-a", tmp_path / "runner-b"
    ci_a.mkdir(), ci_b.mkdir()
    golden, generated = _medical(ci_a)
    stored = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated), "--db",
                                       pgdb, "--drift-judge", "none", "--json", str(ci_a / "r.json")])
    assert stored.exit_code == 3, stored.output  # medical: awaiting sign-off
    assert "audit head: 1:" in stored.output
    assert sorted(os.listdir(ci_a)) == ["gen.jsonl", "golden.jsonl", "r.json"]  # no local store was made
    run_id = json.loads((ci_a / "r.json").read_text())["evaluation_id"]
    gate = CliRunner().invoke(main, ["gate", run_id], env={"TERMGATE_DB": pgdb})
    assert gate.exit_code == 3 and "audit head: 1:" in gate.output, gate.output
    assert cli("audit", "verify", "--db", pgdb).exit_code == 0
    second = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated), "--db",
                                       pgdb, "--drift-judge", "none"])
    assert second.exit_code == 3 and "audit head: 2:" in second.output  # the same golden file stored once
    with psycopg.connect(pgdb) as conn:
        assert conn.execute("SELECT count(*) FROM golden_files").fetchone()[0] == 1
        conn.execute("UPDATE query_results SET passed = false WHERE run_id = %s AND query_id = 'm2'", [run_id])
    refused = CliRunner().invoke(main, ["gate", run_id, "--db", pgdb])
    assert refused.exit_code == 1 and f"run {run_id}" in refused.output and "edited" in refused.output


def test_five_writers_at_once_keep_one_linear_chain_on_postgres(pg, pgdb, tmp_path):
    import psycopg

    golden, generated = _medical(tmp_path)
    assert cli("store", "init", "--db", pgdb).exit_code == 0
    procs = [subprocess.Popen([sys.executable, "-m", "termgate", "evaluate", "--golden", str(golden), "--generated",
                               str(generated), "--db", pgdb, "--drift-judge", "none", "-q"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(5)]
    outcomes = [(p.wait(timeout=300), p.stdout.read() + p.stderr.read()) for p in procs]
    assert [code for code, _ in outcomes] == [3] * 5, outcomes
    with psycopg.connect(pgdb) as conn:
        seqs = [r[0] for r in conn.execute("SELECT seq FROM audit_log ORDER BY seq").fetchall()]
        assert seqs == [1, 2, 3, 4, 5] and conn.execute("SELECT count(*) FROM runs").fetchone()[0] == 5
    verify = cli("audit", "verify", "--db", pgdb)
    assert verify.exit_code == 0 and "intact: 5 records" in verify.output, verify.output


def test_sign_off_on_postgres_seen_by_the_gate_of_another_runner(pg, pgdb, tmp_path):
    """SPEC §4 on the team store: an account added there, a reviewer's approval from one
    folder, the gate in another sees it; four-eyes holds; a decision edited with psql makes
    the gate refuse."""
    import psycopg

    runner, reviewer = tmp_path / "ci", tmp_path / "reviewer"
    runner.mkdir(), reviewer.mkdir()
    golden, generated = _medical(runner)
    env = {"TERMGATE_DB": pgdb, "TERMGATE_PASSWORD": "pw-carol-123"}
    stored = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                       "--drift-judge", "none", "--author", "dave", "--json", str(runner / "r.json")],
                                env=env)
    assert stored.exit_code == 3, stored.output
    run_id = json.loads((runner / "r.json").read_text())["evaluation_id"]
    for name in ("carol", "dave"):
        added = CliRunner().invoke(main, ["users", "add", name, "--role", "approver", "--domains", "medical"],
                                   env=env)
        assert added.exit_code == 0, added.output
    listed = CliRunner().invoke(main, ["users", "list"], env=env)
    assert "carol" in listed.output and "dave" in listed.output
    own = CliRunner().invoke(main, ["signoff", run_id, "--approve", "--reviewer", "dave", "--comment", "mine",
                                    "--ack-all"], env=env)
    assert own.exit_code == 4, own.output  # four-eyes: the author may not approve
    wrong = CliRunner().invoke(main, ["signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "x",
                                      "--ack-all"], env={**env, "TERMGATE_PASSWORD": "not-her-password"})
    assert wrong.exit_code == 4
    approved = CliRunner().invoke(main, ["signoff", run_id, "--approve", "--reviewer", "carol", "--comment",
                                         "checked", "--ack-all"], env=env)
    assert approved.exit_code == 0, approved.output
    gate = CliRunner().invoke(main, ["gate", run_id, "--db", pgdb])
    assert gate.exit_code == 0 and "releasable" in gate.output, gate.output
    assert cli("audit", "verify", "--db", pgdb).exit_code == 0
    with psycopg.connect(pgdb) as conn:
        conn.execute("SET session_replication_role = replica")  # past the append-only trigger, as a superuser can
        conn.execute("UPDATE audit_log SET comment = 'rubber stamp' WHERE kind = 'decision'")
    refused = CliRunner().invoke(main, ["gate", run_id, "--db", pgdb])
    assert refused.exit_code == 1 and "broken" in refused.output, refused.output


def test_the_release_flow_with_least_privilege_roles(pg, pgdb, tmp_path):
    """The owner initialises and adds accounts; CI evaluates as the CI role; a reviewer signs
    off through the dashboard role; the pipeline's gate (CI role) sees the approval."""
    name = pgdb.rsplit("/", 1)[1]
    ci_role, dash_role = f"ci_{name}", f"dash_{name}"
    assert cli("store", "init", "--db", pgdb).exit_code == 0
    import psycopg
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(cli("store", "roles", "--ci", ci_role, "--dashboard", dash_role).output)
    env = {"TERMGATE_PASSWORD": "pw-carol-123"}
    assert CliRunner().invoke(main, ["users", "add", "carol", "--role", "approver", "--domains", "medical", "--db",
                                     pgdb], env=env).exit_code == 0
    golden, generated = _medical(tmp_path)
    ci_url, dash_url = pg.url(name, user=ci_role), pg.url(name, user=dash_role)
    stored = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated), "--db",
                                       ci_url, "--drift-judge", "none", "--author", "ci-bot", "--json",
                                       str(tmp_path / "r.json")])
    assert stored.exit_code == 3, stored.output
    run_id = json.loads((tmp_path / "r.json").read_text())["evaluation_id"]
    as_ci = CliRunner().invoke(main, ["signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "x",
                                      "--ack-all", "--db", ci_url], env=env)
    assert as_ci.exit_code == 2 and "this database role may not" in as_ci.stderr  # no door for decisions
    owner_only = CliRunner().invoke(main, ["users", "add", "mallory", "--role", "admin", "--db", ci_url], env=env)
    assert owner_only.exit_code == 2 and "accounts stay with the store's owner" in owner_only.stderr
    approved = CliRunner().invoke(main, ["signoff", run_id, "--approve", "--reviewer", "carol", "--comment",
                                         "checked", "--ack-all", "--db", dash_url], env=env)
    assert approved.exit_code == 0, approved.output
    gate = CliRunner().invoke(main, ["gate", run_id, "--db", ci_url])
    assert gate.exit_code == 0 and "releasable" in gate.output, gate.output


# ---------------------------------------------------------------- issue 31, item 6: one line, exit 2


def test_a_statement_timeout_is_one_line_and_exit_2_not_a_traceback(pgdb):
    """`options=-c statement_timeout=…` in the URL (or PGOPTIONS): a read that waits past it
    (here on a lock another session holds) is cancelled by the server (QueryCanceled)."""
    import psycopg

    assert cli("store", "init", "--db", pgdb).exit_code == 0
    with psycopg.connect(pgdb) as holder:
        holder.execute("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE")  # held until the block ends
        result = cli("runs", "--db", pgdb + "?options=-c%20statement_timeout%3D200")
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.output, result.output
    assert lines[0].startswith("error: the PostgreSQL store cancelled a statement: canceling statement due to "
                               "statement timeout; it was rolled back")
    assert "statement_timeout" in lines[0]


def test_a_store_whose_migration_record_was_deleted_is_one_line_and_exit_2(pg, pgdb):
    """schema_migrations emptied by hand: the first migration would meet its own tables
    (`relation "runs" already exists`). Exit 2 naming the damage and what to do; nothing changed."""
    import psycopg

    assert cli("store", "init", "--db", pgdb).exit_code == 0
    name = pgdb.rsplit("/", 1)[1]
    pg.sql("DELETE FROM schema_migrations", dbname=name)
    for args in (("runs", "--db", pgdb), ("store", "migrate", "--db", pgdb)):
        result = cli(*args)
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        (line,) = result.stderr.splitlines()
        assert "the store's migration record is damaged: schema_migrations says version 0" in line, line
        assert 'relation "runs" already exists' in line and "nothing was changed" in line
        assert "put back the missing schema_migrations rows" in line
    with psycopg.connect(pgdb) as conn:
        assert conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 0  # rolled back


def test_the_dashboard_role_takes_sign_in_turns_and_the_ci_role_cannot_touch_them(pg, pgdb):
    """Issue 31 item 4: a sign-in's turn is counted in the store by the role that signs in
    (the dashboard's, or the owner's); it may write signin_failures and nothing more, and the
    CI role may not reset a count at all."""
    import psycopg

    from termgate.governance import signoff as so

    name = pgdb.rsplit("/", 1)[1]
    ci_role, dash_role = f"ci_{name}", f"dash_{name}"
    assert cli("store", "init", "--db", pgdb).exit_code == 0
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(cli("store", "roles", "--ci", ci_role, "--dashboard", dash_role).output)
    so.add_user(pgdb, "carol", "approver", "pw-carol-123")
    ci_url, dash_url = pg.url(name, user=ci_role), pg.url(name, user=dash_role)
    with pytest.raises(so.SignoffRefused, match="wrong account name or password"):
        so.authenticate(dash_url, "carol", "not-her-password")
    with pytest.raises(so.SignoffRefused, match="try again in"):
        so.authenticate(dash_url, "carol", "pw-carol-123")  # the turn was counted before the check
    assert store.signin_failures(pgdb, "carol")[0] == 1
    with pytest.raises(Exception, match="this database role may not"):
        so.authenticate(ci_url, "carol", "pw-carol-123")
    for url, sql in ((ci_url, "DELETE FROM signin_failures"), (ci_url, "UPDATE signin_failures SET failures = 0"),
                     (dash_url, "UPDATE users SET disabled = false"), (dash_url, "DELETE FROM audit_log"),
                     (dash_url, "DELETE FROM runs"),
                     # nor may either plant an object other sessions would pick up by search_path
                     (ci_url, "CREATE TABLE public.runs_shadow (x int)"),
                     (ci_url, "CREATE FUNCTION public.lower(text) RETURNS text LANGUAGE sql AS 'SELECT $1'"),
                     (dash_url, "CREATE TABLE public.users_shadow (x int)")):
        with psycopg.connect(url) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute(sql)
    assert store.signin_failures(pgdb, "carol")[0] == 1


@pytest.mark.parametrize("options, says", [
    ("default_transaction_read_only=on", "error: the PostgreSQL store is read-only for this session: "),
    ("search_path=nowhere", "error: the PostgreSQL store has no schema to use: "),
])
def test_a_session_that_may_not_write_is_one_line_and_exit_2_not_a_traceback(pgdb, options, says):
    """A read-only session (a standby, `default_transaction_read_only`), a search_path with no
    schema: each was a psycopg traceback, exit 1."""
    import psycopg

    rows = "\n".join(json.dumps({"query_id": f"q{i}", "query": f"x{i}", "expected_expansions": [{"term": "a"}]})
                     for i in range(3000))
    with tempfile.TemporaryDirectory() as folder:
        golden, generated = Path(folder, "g.jsonl"), Path(folder, "c.jsonl")
        golden.write_text(rows + "\n", encoding="utf-8")
        generated.write_text("\n".join(json.dumps({"query_id": f"q{i}", "terms": ["a", "b"]}) for i in range(3000)),
                             encoding="utf-8")
        if "search_path" not in options:
            assert cli("store", "init", "--db", pgdb).exit_code == 0
        url = pgdb + "?options=-c%20" + options.replace("=", "%3D")
        result = cli("evaluate", "--golden", golden, "--generated", generated, "--drift-judge", "none", "--db", url)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    (line,) = result.stderr.splitlines()
    assert line.startswith(says), line
    with psycopg.connect(pgdb) as con:
        if "search_path" not in options:
            assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 0
