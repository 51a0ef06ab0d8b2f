"""A run's retrieval effect in the store (issue 34 item 6), on both backends: schema 17's
`runs.retrieval` (the summary, canonical JSON) and `retrieval_results` (per judged query
and variant: the metrics and the top ids), written with the run in one transaction, under
the chain's digests (an edit is caught by `audit verify`; a run without retrieval keeps
its digest), carried by `store copy`, and migrated onto an older store."""

from __future__ import annotations

import json

import duckdb
import pyarrow as pa
import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.errors import UnknownRunError
from termgate.retrieval.outcome import ROWS_SCHEMA, RetrievalOutcome
from termgate.store.chain import chain_snapshot

from conftest import golden_row, run_sql

ODD = "doc 7\t'); DROP TABLE runs; --"  # whitespace, a quote and SQL: data, never SQL
SUMMARY = {
    "engine": {"name": "tantivy", "version": "0.27.0"}, "k": 10, "depth": 100, "reference": "baseline",
    "means": {"candidate": {"ndcg": 0.25, "recall": 0.5, "mrr": 0.5, "precision": 0.1}},
    "regressed_queries": ["q2"], "statistics": None, "corpus": {"path": "corpus/ünï.jsonl", "hash": "e" * 64},
    "run_files": {"unexpanded": "a" * 64, "baseline": "b" * 64, "candidate": "c" * 64},
}


def outcome() -> RetrievalOutcome:
    # written out of order: the store reads them back in golden order (q1, q2), each query's
    # variants as unexpanded, baseline, candidate
    rows = pa.table({
        "query_id": ["q2", "q1", "q2", "q1", "q2", "q1"],
        "variant": ["candidate", "baseline", "unexpanded", "candidate", "baseline", "unexpanded"],
        "ndcg": [0.0, 0.5, 0.25, 1.0, 0.5, 0.125],
        "recall": [0.0, 1.0, 0.5, 1.0, 1.0, 0.5],
        "mrr": [0.0, 0.5, 1 / 3, 1.0, 0.5, 0.2],
        "precision": [0.0, 0.1, 0.1, 0.2, 0.1, 0.1],
        "top_ids": [["d9", "d8"], ["d2", "d1"], ["d3"], ["d1", ODD, "d2"], [], ["d5", "d1"]],
        "top_grades": [[0, None], [2, 1], [None], [1, 2, None], [], [None, 1]],
        "top_titles": [["t9", "t8"], ["t2", "t1"], ["t3"], ["t1", "odd\ttitle", None], [], ["t5", "t1"]],
        "brought_by": [["mi", None], None, None, [None, "brain attack", None], None, None],
    }, schema=ROWS_SCHEMA)
    return RetrievalOutcome(dict(SUMMARY), rows)


def scored(score, retrieval: RetrievalOutcome | None):
    run = score([golden_row("q1", "heart attack", ["mi"]), golden_row("q2", "stroke", ["cva"])],
                [{"query_id": "q1", "terms": ["mi"]}, {"query_id": "q2", "terms": ["cva", "brain attack"]}])
    run.run.retrieval = retrieval
    return run


@pytest.fixture
def run(score):
    return scored(score, outcome())


def verify(db):
    return CliRunner().invoke(main, ["audit", "verify", "--db", str(db)])


@pytest.mark.slow
def test_a_run_stores_its_retrieval_summary_and_rows(run, backend):
    store.save_run(backend, run)
    stored = store.get_run(backend, run.evaluation_id)
    assert stored["retrieval"] == SUMMARY  # parsed back, the run-file hashes with it
    rows = store.retrieval_rows(backend, run.evaluation_id)
    assert list(rows.columns) == ["query_id", "variant", "ndcg", "recall", "mrr", "precision", "top_ids", "top_grades",
                                  "top_titles", "brought_by"]
    assert list(zip(rows["query_id"], rows["variant"])) == [
        ("q1", "unexpanded"), ("q1", "baseline"), ("q1", "candidate"),
        ("q2", "unexpanded"), ("q2", "baseline"), ("q2", "candidate")]
    candidate = rows.iloc[2]
    assert (candidate["ndcg"], candidate["recall"], candidate["mrr"], candidate["precision"]) == (1.0, 1.0, 1.0, 0.2)
    assert list(candidate["top_ids"]) == ["d1", ODD, "d2"] and list(rows.iloc[4]["top_ids"]) == []
    assert [None if g is None or g != g else int(g) for g in candidate["top_grades"]] == [1, 2, None]
    assert list(candidate["top_titles"]) == ["t1", "odd\ttitle", None]
    assert list(candidate["brought_by"]) == [None, "brain attack", None] and rows.iloc[1]["brought_by"] is None
    assert rows.iloc[3]["mrr"] == 1 / 3  # every double exactly, on either backend
    header = chain_snapshot(backend).headers[run.evaluation_id]
    assert header["rows"]["retrieval_rows"] == 6
    result = verify(backend)
    assert result.exit_code == 0 and "audit chain intact" in result.output, result.output


def test_the_summary_is_stored_as_canonical_json(run, db):
    store.save_run(db, run)
    with duckdb.connect(str(db), read_only=True) as con:
        text = con.execute("SELECT retrieval FROM runs").fetchall()[0][0]
    assert text == json.dumps(SUMMARY, sort_keys=True, separators=(",", ":"))
    assert "ünï" not in text and "\\u00fcn\\u00ef" in text  # ASCII: any text, on either backend


@pytest.mark.slow
def test_a_run_without_retrieval_stores_none_and_keeps_the_digests_it_had(score, backend):
    run = scored(score, None)
    store.save_run(backend, run)
    assert store.get_run(backend, run.evaluation_id)["retrieval"] is None
    assert store.retrieval_rows(backend, run.evaluation_id).empty
    # its row's JSON and its rows' digest are what they were before schema 17
    assert '"retrieval"' not in store.run_row(backend, run.evaluation_id)
    assert set(chain_snapshot(backend).headers[run.evaluation_id]["rows"]) == {"digest", "query_rows", "term_rows"}
    assert verify(backend).exit_code == 0


def test_an_empty_outcome_stores_its_summary_and_no_rows(score, db):
    run = scored(score, RetrievalOutcome(dict(SUMMARY)))
    store.save_run(db, run)
    assert store.get_run(db, run.evaluation_id)["retrieval"] == SUMMARY
    assert store.retrieval_rows(db, run.evaluation_id).empty
    assert "retrieval_rows" not in chain_snapshot(db).headers[run.evaluation_id]["rows"]
    assert verify(db).exit_code == 0


def test_retrieval_rows_of_an_unknown_run(run, backend):
    store.save_run(backend, run)
    with pytest.raises(UnknownRunError, match="unknown run 'nope'"):
        store.retrieval_rows(backend, "nope")


@pytest.mark.slow
def test_rows_that_repeat_a_query_and_variant_store_nothing(score, backend):
    """The rows go in the run's transaction: one the key refuses leaves no run behind."""
    bad = outcome()
    bad.rows = pa.concat_tables([bad.rows, bad.rows.slice(0, 1)])
    run = scored(score, bad)
    with pytest.raises(Exception, match="(?i)constraint|duplicate"):
        store.save_run(backend, run)
    assert store.list_runs(backend).empty
    assert not store.audit_records(backend)


TAMPERING = {
    "a metric": "UPDATE retrieval_results SET ndcg = 1.0 WHERE query_id = 'q2' AND variant = 'candidate'",
    "a top id": "UPDATE retrieval_results SET top_ids = ['d1', 'd2', 'd3'] WHERE query_id = 'q1' "
                "AND variant = 'candidate'",
    "a row removed": "DELETE FROM retrieval_results WHERE query_id = 'q2' AND variant = 'baseline'",
    "every row removed": "DELETE FROM retrieval_results",
    "a run-file hash": "UPDATE runs SET retrieval = replace(retrieval, 'cccccccc', 'dddddddd')",
    "the summary removed": "UPDATE runs SET retrieval = NULL",
}


def _postgres_sql(sql: str) -> str:
    return sql.replace("['d1', 'd2', 'd3']", "ARRAY['d1', 'd2', 'd3']")


@pytest.mark.slow
@pytest.mark.parametrize("case", list(TAMPERING))
def test_an_edit_to_stored_retrieval_makes_verify_fail(run, backend, case):
    from termgate.store.postgres import is_postgres

    store.save_run(backend, run)
    assert verify(backend).exit_code == 0
    sql = TAMPERING[case]
    run_sql(backend, _postgres_sql(sql) if is_postgres(backend) else sql)
    broken = verify(backend)
    assert broken.exit_code == 1 and f"run {run.evaluation_id}" in broken.output, broken.output
    what = "runs row" if "runs" in sql.split("SET")[0] else "per-query or per-term rows"
    assert what in broken.output


@pytest.mark.slow
def test_retrieval_added_to_a_run_stored_without_it_is_caught(score, backend):
    run = scored(score, None)
    store.save_run(backend, run)
    run_sql(backend, ("INSERT INTO retrieval_results VALUES (?, 'q1', 'candidate', 1.0, 1.0, 1.0, 1.0, NULL, NULL, NULL, NULL)",
                      [run.evaluation_id]))
    assert verify(backend).exit_code == 1
    run_sql(backend, "DELETE FROM retrieval_results", ("UPDATE runs SET retrieval = '{}'", ()))
    broken = verify(backend)
    assert broken.exit_code == 1 and "runs row" in broken.output


def test_a_view_in_place_of_the_retrieval_rows_is_refused(run, db):
    store.save_run(db, run)
    run_sql(db, "ALTER TABLE retrieval_results RENAME TO retrieval_real",
            "CREATE VIEW retrieval_results AS SELECT * FROM retrieval_real")
    broken = verify(db)
    assert broken.exit_code == 1 and "retrieval_results is a view" in broken.output, broken.output


# ---------------------------------------------------------------- schema 17 onto an older store


def _as_schema_16(db) -> None:
    """The store as a termgate that knew schema 16 left it (its runs stored without retrieval)."""
    run_sql(db, "DROP TABLE retrieval_results", "ALTER TABLE runs DROP COLUMN retrieval",
            "DELETE FROM schema_migrations WHERE version = 17")


@pytest.mark.slow
def test_a_schema_16_store_migrates_and_its_runs_verify(score, backend):
    old = scored(score, None)
    store.save_run(backend, old)
    head = verify(backend).output.split("audit head: ")[1].strip()
    _as_schema_16(backend)
    again = verify(backend)  # migrates it first, as every read does, then finds the chain as it was
    assert again.exit_code == 0 and head in again.output, again.output
    assert store.get_run(backend, old.evaluation_id)["retrieval"] is None
    assert store.retrieval_rows(backend, old.evaluation_id).empty
    new = scored(score, outcome())
    store.save_run(backend, new)
    assert len(store.retrieval_rows(backend, new.evaluation_id)) == 6
    assert verify(backend).exit_code == 0


def test_a_termgate_that_knows_schema_16_refuses_a_schema_17_store(run, db, monkeypatch):
    from termgate.errors import UsageError
    from termgate.store import connection

    store.save_run(db, run)
    monkeypatch.setattr(connection, "MIGRATIONS", connection.MIGRATIONS[:-1])
    monkeypatch.setattr(connection, "SCHEMA_VERSION", 16)
    with pytest.raises(UsageError, match="the store's schema is version 17, newer than this termgate"):
        store.get_run(db, run.evaluation_id)


def test_a_postgresql_store_at_schema_16_gives_its_roles_the_same_rights_on_retrieval_rows(pg, pgdb, score):
    """Migration 17 carries each role's rights on query_results over to retrieval_results: a
    CI role stores runs with retrieval rows, a dashboard role reads them, neither changes them."""
    import psycopg

    from termgate.store import postgres

    name = pgdb.rsplit("/", 1)[1]
    ci, dash = f"ci_{name}", f"dash_{name}"
    postgres.PG_MIGRATIONS, every = postgres.PG_MIGRATIONS[:-1], postgres.PG_MIGRATIONS
    try:
        assert postgres.migrate_pg(pgdb)[0] == 16
    finally:
        postgres.PG_MIGRATIONS = every
    with psycopg.connect(pgdb, autocommit=True) as owner:  # the roles as `store roles` made them at schema 16
        owner.execute(f"CREATE ROLE {ci} LOGIN")
        owner.execute(f"CREATE ROLE {dash} LOGIN")
        owner.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {ci}, {dash}")
        owner.execute(f"GRANT INSERT ON runs, query_results, term_rows, golden_files TO {ci}")
        owner.execute("GRANT EXECUTE ON FUNCTION termgate_append_run_header(bigint, text, text, text, text, text, "
                      f"text, text, text) TO {ci}")
    assert postgres.migrate_pg(pgdb)[1] == [17]
    run = scored(score, outcome())
    store.save_run(pg.url(name, user=ci), run)
    assert len(store.retrieval_rows(pg.url(name, user=dash), run.evaluation_id)) == 6
    assert verify(pg.url(name, user=dash)).exit_code == 0
    for role, statements in ((dash, ["INSERT INTO retrieval_results (run_id, query_id, variant) VALUES ('r', 'q', 'v')",
                                     "UPDATE retrieval_results SET ndcg = 1", "DELETE FROM retrieval_results",
                                     "UPDATE runs SET retrieval = NULL"]),
                             (ci, ["UPDATE retrieval_results SET ndcg = 1", "DELETE FROM retrieval_results",
                                   "TRUNCATE retrieval_results", "UPDATE runs SET retrieval = NULL"])):
        with psycopg.connect(pg.url(name, user=role), autocommit=True) as conn:
            for sql in statements:
                with pytest.raises(psycopg.errors.InsufficientPrivilege):
                    conn.execute(sql)


def test_the_roles_sql_gives_the_ci_role_retrieval_rows_and_the_dashboard_role_none(pg, pgdb, score):
    import psycopg

    name = pgdb.rsplit("/", 1)[1]
    assert CliRunner().invoke(main, ["store", "init", "--db", pgdb]).exit_code == 0
    roles = CliRunner().invoke(main, ["store", "roles", "--ci", f"ci_{name}", "--dashboard", f"dash_{name}"])
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(roles.output)
        rights = owner.execute(
            "SELECT r, p, has_table_privilege(r, 'retrieval_results', p) FROM unnest(%s::text[]) r, "
            "unnest(ARRAY['SELECT', 'INSERT', 'UPDATE', 'DELETE']) p ORDER BY 1, 2",
            [[f"ci_{name}", f"dash_{name}"]]).fetchall()
    granted = {(r.split("_")[0], p) for r, p, ok in rights if ok}
    assert granted == {("ci", "SELECT"), ("ci", "INSERT"), ("dash", "SELECT")}
    run = scored(score, outcome())
    store.save_run(pg.url(name, user=f"ci_{name}"), run)
    assert len(store.retrieval_rows(pgdb, run.evaluation_id)) == 6


# ---------------------------------------------------------------- store copy


@pytest.mark.slow
def test_store_copy_carries_retrieval_both_ways_and_the_copies_verify(pg, pgdb, score, tmp_path):
    source = tmp_path / "source.duckdb"
    run, plain = scored(score, outcome()), scored(score, None)
    store.save_run(source, run)
    store.save_run(source, plain)
    head = verify(source).output.split("audit head: ")[1].strip()
    back = tmp_path / "back.duckdb"
    for src, dst in ((source, pgdb), (pgdb, back)):
        copied = CliRunner().invoke(main, ["store", "copy", "--from", str(src), "--to", str(dst)])
        assert copied.exit_code == 0, copied.output
        assert store.get_run(dst, run.evaluation_id)["retrieval"] == SUMMARY
        assert store.get_run(dst, plain.evaluation_id)["retrieval"] is None
        assert store.retrieval_rows(dst, run.evaluation_id).equals(store.retrieval_rows(source, run.evaluation_id))
        checked = verify(dst)
        assert checked.exit_code == 0 and head in checked.output, checked.output
    run_sql(back, "UPDATE retrieval_results SET top_ids = ['forged'] WHERE variant = 'candidate' AND query_id = 'q1'")
    assert verify(back).exit_code == 1


def test_store_copy_from_an_older_postgresql_store_asks_for_its_migration(pgdb, tmp_path):
    from termgate.store import postgres

    postgres.PG_MIGRATIONS, every = postgres.PG_MIGRATIONS[:-1], postgres.PG_MIGRATIONS
    try:
        postgres.migrate_pg(pgdb)
    finally:
        postgres.PG_MIGRATIONS = every
    copied = CliRunner().invoke(main, ["store", "copy", "--from", pgdb, "--to", str(tmp_path / "t.duckdb")])
    assert copied.exit_code == 2 and "schema is version 16, this termgate copies version 17" in copied.stderr
    assert "run `termgate store migrate` on it as its owner first" in copied.stderr
    assert not (tmp_path / "t.duckdb").exists()
