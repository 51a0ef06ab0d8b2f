"""Issue 29: a store written by the last evalcore (commit 01043a4) opens and gates under
termgate as before, on both backends; evalcore's default store, config file and
environment variables are still read for one release, each with one warning line.

The fixtures and how they were made: tests/data/legacy-stores-01043a4.md.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import NO_POSTGRES, golden_row, write_jsonl

DATA = Path(__file__).parent / "data"
APPROVED = "20261203-034029-394305"  # medical v3, approved by carol and dave
AWAITING = "20261203-034030-486d38"  # legal v3, review, nobody signed
REJECTED = "20261203-034029-f2dd27"  # legal v1, rejected by erin
HEAD = "15:bdadb7395d273fd5ccb4b6cb07ec171d8cd8863bab137798532968c53a3544cc"
PG_APPROVED, PG_AWAITING, PG_REJECTED = "20261203-034240-ef2757", "20261203-034241-88c0bd", "20261203-034240-56f33b"
PG_HEAD = "15:601e5b81ebeb52d3795ece012471fb516fbe47b504b732b213216073df5a7903"


def termgate(*args, cwd=None, env=None) -> subprocess.CompletedProcess:
    """The installed command, in a child, with no termgate or evalcore variable but those given."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TERMGATE_", "EVALCORE_"))}
    return subprocess.run([sys.executable, "-m", "termgate", *map(str, args)], cwd=cwd, env={**base, **(env or {})},
                          capture_output=True, text=True, timeout=300)


def unpack(target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(DATA / "legacy-store-01043a4.duckdb.gz") as src, target.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("termgate: warning:")]


@pytest.mark.slow
def test_a_duckdb_store_from_the_last_evalcore_gates_as_before(tmp_path):
    db = unpack(tmp_path / "legacy.duckdb")
    assert termgate("gate", APPROVED, "--db", db).returncode == 0
    assert termgate("gate", AWAITING, "--db", db).returncode == 3
    assert termgate("gate", REJECTED, "--db", db).returncode == 1
    verify = termgate("audit", "verify", "--db", db, "--expect-head", HEAD)
    assert verify.returncode == 0 and HEAD in verify.stdout, verify.stdout + verify.stderr
    # the chain still notices an edit: the approved run's rows changed by hand no longer gate
    import duckdb
    with duckdb.connect(str(db)) as con:
        edited = con.execute("UPDATE term_rows SET drift = NOT drift WHERE run_id = ? AND kind = 'FP'", [APPROVED])
        assert edited.fetchone()[0] > 0
    assert termgate("gate", APPROVED, "--db", db).returncode == 1
    assert termgate("audit", "verify", "--db", db).returncode == 1


@pytest.mark.postgres
def test_a_postgresql_dump_from_the_last_evalcore_gates_as_before(tmp_path):
    from pg_server import PostgresServer, binaries

    if binaries() is None or not (binaries() / "psql").exists():
        pytest.skip(NO_POSTGRES)
    server = PostgresServer().start()  # its own server: the dump makes cluster-wide roles
    try:
        dump = tmp_path / "legacy.sql"
        dump.write_bytes(gzip.decompress((DATA / "legacy-store-01043a4.pg.sql.gz").read_bytes()))
        restored = subprocess.run([str(binaries() / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-f", str(dump),
                                   server.url("postgres")], capture_output=True, text=True, timeout=120)
        assert restored.returncode == 0, restored.stderr
        # the upgrade step of docs/deploy.md: the owner migrates (schema 14 adds the caches' writer)
        migrated = termgate("store", "migrate", "--db", server.url("evalcore", user="evalcore_owner"))
        assert migrated.returncode == 0, migrated.stderr
        ci = server.url("evalcore", user="evalcore_ci")  # the CI role the deployment made, as it was
        assert termgate("gate", PG_APPROVED, "--db", ci).returncode == 0
        assert termgate("gate", PG_AWAITING, "--db", ci).returncode == 3
        assert termgate("gate", PG_REJECTED, "--db", ci).returncode == 1
        for role in ("evalcore_ci", "evalcore_dashboard"):
            verify = termgate("audit", "verify", "--db", server.url("evalcore", user=role), "--expect-head", PG_HEAD)
            assert verify.returncode == 0 and PG_HEAD in verify.stdout, verify.stdout + verify.stderr
        # schema 15 carried the CI role's grant over to termgate_append_run_header: a new run's
        # header goes onto the old (hash version 1) chain as version 2
        golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("n1", "fever", ["pyrexia"], domain="medical")])
        generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "n1", "terms": ["pyrexia"]}])
        stored = termgate("evaluate", "--golden", golden, "--generated", generated, "--db", ci, "--drift-judge", "none")
        assert stored.returncode == 3 and "audit head: 16:" in stored.stdout, stored.stdout + stored.stderr
        assert termgate("audit", "verify", "--db", ci, "--expect-head", PG_HEAD).returncode == 0
        # the CI role still cannot forge what the gate reads
        import psycopg
        with psycopg.connect(ci, autocommit=True) as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("UPDATE audit_log SET record_hash = 'forged'")
        server.sql(f"UPDATE term_rows SET drift = NOT drift WHERE run_id = '{PG_APPROVED}' AND kind = 'FP'", "evalcore")
        assert termgate("gate", PG_APPROVED, "--db", ci).returncode == 1
    finally:
        server.stop()


@pytest.mark.slow
def test_evalcores_default_store_is_used_when_termgates_is_not_there(tmp_path):
    unpack(tmp_path / "data" / "evalcore.duckdb")
    gate = termgate("gate", APPROVED, cwd=tmp_path)
    assert gate.returncode == 0, gate.stderr
    assert warnings(gate.stderr) == ["termgate: warning: data/evalcore.duckdb is the old name and is read for one "
                                     "more release; use data/termgate.duckdb"]
    unpack(tmp_path / "data" / "termgate.duckdb")  # both there: the new one, saying the old one is not read
    (tmp_path / "data" / "evalcore.duckdb").write_bytes(b"not a store")
    gate = termgate("gate", APPROVED, cwd=tmp_path)
    assert gate.returncode == 0 and warnings(gate.stderr) == [
        "termgate: warning: data/evalcore.duckdb is ignored: data/termgate.duckdb is read instead (remove or "
        "rename the old one)"]
    (tmp_path / "data" / "evalcore.duckdb").unlink()
    gate = termgate("gate", APPROVED, cwd=tmp_path)
    assert gate.returncode == 0 and warnings(gate.stderr) == []


@pytest.mark.slow
def test_evalcore_variables_are_read_with_one_warning_and_termgates_win(tmp_path):
    db = unpack(tmp_path / "legacy.duckdb")
    old = termgate("gate", APPROVED, cwd=tmp_path, env={"EVALCORE_DB": str(db), "EVALCORE_STORE_TIMEOUT": "5"})
    assert old.returncode == 0, old.stderr
    assert sorted(warnings(old.stderr)) == [
        "termgate: warning: EVALCORE_DB is the old name and is read for one more release; use TERMGATE_DB",
        "termgate: warning: EVALCORE_STORE_TIMEOUT is the old name and is read for one more release; "
        "use TERMGATE_STORE_TIMEOUT"]
    both = termgate("gate", APPROVED, cwd=tmp_path, env={"EVALCORE_DB": str(tmp_path / "nothing.duckdb"),
                                                         "TERMGATE_DB": str(db)})
    assert both.returncode == 0 and warnings(both.stderr) == []
    # an empty new variable (an unset CI secret) wins, and says the old one is not read
    empty = termgate("runs", cwd=tmp_path, env={"EVALCORE_DB": str(db), "TERMGATE_DB": ""})
    assert warnings(empty.stderr) == ["termgate: warning: EVALCORE_DB is ignored: TERMGATE_DB (set, and empty) is "
                                      "read instead (remove or rename the old one)"]
    # a secret too: the old password variable signs in, and is named, never printed
    added = termgate("users", "add", "frank", "--role", "approver", "--db", db,
                     env={"EVALCORE_PASSWORD": "correct-horse-battery"})
    assert added.returncode == 0, added.stderr
    assert "correct-horse-battery" not in added.stdout + added.stderr and "TERMGATE_PASSWORD" in added.stderr


@pytest.mark.slow
def test_evalcore_toml_is_read_with_one_warning_and_termgate_toml_wins(tmp_path):
    write_jsonl(tmp_path / "golden.jsonl", [golden_row("f1", "loan", ["credit"], domain="finance")])
    write_jsonl(tmp_path / "gen.jsonl", [{"query_id": "f1", "terms": ["credit"]}])
    args = ("evaluate", "--golden", "golden.jsonl", "--generated", "gen.jsonl", "--no-store", "--drift-judge", "none",
            "-q")
    assert termgate(*args, cwd=tmp_path).returncode == 0  # finance is not high-risk by default
    # a local file may only tighten the policy (issue 32): making finance high-risk shows it is read
    (tmp_path / "evalcore.toml").write_text('high_risk_domains = ["finance"]\n', encoding="utf-8")
    old = termgate(*args, cwd=tmp_path)
    assert old.returncode == 3, old.stdout + old.stderr  # read: finance needs sign-off
    assert warnings(old.stderr) == ["termgate: warning: evalcore.toml is the old name and is read for one more "
                                    "release; use termgate.toml"]
    (tmp_path / "termgate.toml").write_text('high_risk_domains = ["legal"]\n', encoding="utf-8")
    new = termgate(*args, cwd=tmp_path)
    assert new.returncode == 0 and warnings(new.stderr) == [
        "termgate: warning: evalcore.toml is ignored: termgate.toml is read instead (remove or rename the old one)"]
    (tmp_path / "evalcore.toml").unlink()
    assert warnings(termgate(*args, cwd=tmp_path).stderr) == []
