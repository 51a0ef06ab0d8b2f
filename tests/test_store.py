"""The store: round trip, term rows, baselines, unknown runs and golden file lines on both
backends (`backend`: a DuckDB file, a PostgreSQL database); migrations, a busy store and
file checks of the DuckDB file."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time

import duckdb
import pytest

from termgate import store
from termgate.errors import TermgateError, StoreBusyError, UnknownRunError, UsageError

from conftest import golden_row

EVIL = "x'); DROP TABLE runs; --"


@pytest.fixture
def run(score):
    golden = [golden_row("q1", EVIL, [{"term": "MI", "min_weight": 0.5}, "heart attack"], forbidden=["panic attack"]),
              golden_row("q2", "two", ["c"])]
    generated = [{"query_id": "q1", "terms": [{"term": "mi", "weight": 0.2}, "panic attack", EVIL]},
                 {"query_id": "q2", "terms": ["c"]}]
    return score(golden, generated)


def test_round_trip(run, backend):
    db = backend
    store.save_run(db, run)
    runs = store.list_runs(db)
    assert list(runs["run_id"]) == [run.evaluation_id]
    row = store.get_run(db, run.evaluation_id)
    assert row["gate_decision"] == run.gate.decision and row["content_hash"] == run.content_hash
    queries = store.query_rows(db, run.evaluation_id)
    assert list(queries["query_id"]) == ["q1", "q2"]
    assert queries.loc[0, "query"] == EVIL  # data, not SQL
    assert queries.loc[0, "precision"] == run.scores[0].precision
    assert list(queries.loc[0, "generated_terms"]) == ["mi", "panic attack", EVIL.lower()]
    assert list(queries.loc[0, "drift_terms"]) == ["panic attack"]
    assert row["domains"] == ["ecommerce"] and row["total_queries"] == 2 and row["author"] == "tester"


def test_term_rows_carry_kind_weight_drift_and_reason(run, backend):
    db = backend
    store.save_run(db, run)
    terms = store.term_rows(db, run.evaluation_id, "q1")
    got = {(r.term, r.kind): (r.weight, r.min_weight, r.drift, r.reason) for r in terms.itertuples()}
    assert got[("mi", "FP")][:2] == (0.2, 0.5)       # underweight: generated below min_weight
    assert got[("mi", "FN")][:2] == (0.2, 0.5)
    assert got[("panic attack", "FP")][2:] == (True, "forbidden term")
    assert ("heart attack", "FN") in got
    assert len(terms) == 5  # 3 generated + 2 missed


def test_baseline_from_store(run, backend):
    db = backend
    store.save_run(db, run)
    base = store.load_baseline(db, run.evaluation_id)
    assert base.rows["q2"].f1 == 1.0 and base.rows["q2"].passed
    assert base.content_hash == run.content_hash


def test_unknown_run(backend, run):
    db = backend
    store.save_run(db, run)
    with pytest.raises(UnknownRunError, match="unknown run 'nope'"):
        store.get_run(db, "nope")
    with pytest.raises(UnknownRunError):
        store.load_baseline(db, "nope")


def test_failed_write_rolls_back(backend, run):
    db = backend
    store.save_run(db, run)
    head = store.audit_head(db)
    with pytest.raises((duckdb.ConstraintException, TermgateError), match="(?i)duplicate|primary key|unique"):
        store.save_run(db, run)  # same run id again: primary key
    assert len(store.query_rows(db, run.evaluation_id)) == 2 and len(store.term_rows(db, run.evaluation_id)) == 6
    assert store.audit_head(db) == head  # no second header either


def test_the_golden_file_is_kept_with_its_line_numbers(tmp_path, backend):
    """An upload's folder is removed after the run (Import): the entries stay in the store."""
    from termgate.cli import main
    from click.testing import CliRunner

    golden = tmp_path / "upload" / "golden.jsonl"
    golden.parent.mkdir()
    golden.write_text('\ufeff{"query_id": "a", "query": "x", "expected_expansions": []}\n\n'
                      '{"query_id": "caf\\u00e9", "query": "y", "expected_expansions": [{"term": "z"}]}\r\n',
                      encoding="utf-8")
    generated = tmp_path / "gen.jsonl"
    generated.write_text('{"query_id": "a", "terms": ["q"]}\n', encoding="utf-8")
    db = backend
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                       "--db", str(db), "--drift-judge", "none", "-q"])
    assert result.exit_code in (1, 3), result.output
    golden_hash = store.list_runs(db).pipe(lambda runs: store.get_run(db, runs["run_id"].iloc[0]))["golden_hash"]
    shutil.rmtree(golden.parent)
    assert store.golden_entry(db, golden_hash, "a") == (1, '{"query_id": "a", "query": "x", "expected_expansions": []}')
    line, text = store.golden_entry(db, golden_hash, "café")
    assert line == 3 and text.startswith('{"query_id": "caf\\u00e9"')
    assert store.golden_entry(db, golden_hash, "b") is None


# The DuckDB file's own: its migrations, its lock, its header (PostgreSQL's migrations and
# faults are in test_pg_store.py).


def test_migrations_are_idempotent(db, run):
    store.save_run(db, run)
    with store.connect(db, write=True) as con:
        versions = con.execute("SELECT version FROM schema_migrations ORDER BY version").fetchall()
    assert versions == [(v,) for v, _ in store.MIGRATIONS]


@pytest.mark.slow
def test_a_write_waits_for_a_read_open_in_this_process(db, run):
    """DuckDB opens a file read-only or writable per process: a write (a dashboard session
    signing in) while another thread's read is open waits for it, as for another process's lock."""
    import threading

    store.save_run(db, run)
    with store.connect(db) as reader:  # read-only, held open by this thread
        assert reader.execute("SELECT count(*) FROM runs").fetchall() == [(1,)]
        done = []
        writer = threading.Thread(target=lambda: done.append(store.claim_signin(db, "nobody", lambda failures: 0.0)))
        writer.start()
        writer.join(0.5)
        assert writer.is_alive() and not done  # waiting, not failed
    writer.join(10)
    assert done == [0.0] and store.signin_failures(db, "nobody")[0] == 1  # its turn, counted as a try


@pytest.mark.slow
def test_busy_store_times_out_and_writes_nothing(db, run, monkeypatch):
    store.save_run(db, run)
    holder = subprocess.Popen([sys.executable, "-c",
                               f"import duckdb,time; c=duckdb.connect({str(db)!r}); print('locked', flush=True); time.sleep(30)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        monkeypatch.setenv("TERMGATE_STORE_TIMEOUT", "1")
        started = time.monotonic()
        with pytest.raises(StoreBusyError, match="store busy"):
            store.save_run(db, run)
        assert time.monotonic() - started >= 0.9
    finally:
        holder.kill()
        holder.wait()
    assert len(store.list_runs(db)) == 1


def test_a_store_newer_than_this_termgate_is_refused_with_the_version_to_install(db, run):
    """A client meeting a schema it does not know refuses (exit 2) instead of misreading it."""
    from click.testing import CliRunner

    from termgate.cli import main

    store.save_run(db, run)
    with store.connect(db, write=True) as con:
        stamps = con.execute("SELECT count(*) FROM schema_migrations WHERE evalcore_version IS NOT NULL").fetchall()
        assert stamps[0][0] >= 1  # this version signs the migrations it applies
        con.execute("INSERT INTO schema_migrations VALUES (?, 'later', '9.4.1')", [store.SCHEMA_VERSION + 1])
    for args in (["runs", "--db", str(db)], ["show", run.evaluation_id, "--db", str(db)],
                 ["audit", "verify", "--db", str(db)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert (f"the store's schema is version {store.SCHEMA_VERSION + 1}, newer than this termgate"
                in result.stderr) and "install termgate 9.4.1 or later" in result.stderr
    with pytest.raises(UsageError, match="newer than this termgate"):
        store.ensure_store(db)
    # a row written by hand with this very version (or none) cannot name what to install
    import duckdb

    import termgate
    con = duckdb.connect(str(db))  # past the store's own refusal
    con.execute("UPDATE schema_migrations SET evalcore_version = ? WHERE version = ?",
                [termgate.__version__, store.SCHEMA_VERSION + 1])
    con.close()
    result = CliRunner().invoke(main, ["runs", "--db", str(db)])
    assert result.exit_code == 2 and "install a newer termgate" in result.stderr, result.output
    assert f"install termgate {termgate.__version__}" not in result.stderr


def test_verifying_a_store_that_does_not_exist_is_exit_2_not_an_intact_chain(tmp_path):
    from click.testing import CliRunner

    from termgate.cli import main

    result = CliRunner().invoke(main, ["audit", "verify", "--db", str(tmp_path / "typo.duckdb")])
    assert result.exit_code == 2 and "no store at" in result.stderr and "intact" not in result.output


def test_store_init_migrate_and_info_on_a_duckdb_file(tmp_path):
    from click.testing import CliRunner

    from termgate import __version__
    from termgate.cli import main

    db = str(tmp_path / "team.duckdb")
    run = lambda *a: CliRunner().invoke(main, [*a, "--db", db])  # noqa: E731
    missing = run("store", "migrate")
    assert missing.exit_code == 2 and "no store there: run `termgate store init` first" in missing.stderr
    assert run("store", "info").output.startswith(f"DuckDB {db}: no termgate store")
    first = run("store", "init")
    assert first.exit_code == 0 and f"schema version {store.SCHEMA_VERSION} (applied 1, 2," in first.output
    assert "up to date" in run("store", "init").output and "up to date" in run("store", "migrate").output
    assert f"applied by termgate {__version__}" in run("store", "info").output
    (tmp_path / "notes.duckdb").write_text("not a store")
    bad = CliRunner().invoke(main, ["store", "init", "--db", str(tmp_path / "notes.duckdb")])
    assert bad.exit_code == 2 and "not a termgate store" in bad.stderr
