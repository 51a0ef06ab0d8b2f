"""Issue 31 item 3: shared caches do not change other people's runs, on both backends.

An identity that can write the store's caches (a pull request's CI role, another user of
the file) plants entries: a vector that makes a drift term look like the query, an LLM
reply that makes a harness run look perfect. A later run by someone else recomputes them
(the drift is still found, the model is asked) unless it trusts that writer
(TERMGATE_CACHE_TRUST), and records whose entries it used. On PostgreSQL the server records
the writer, whatever the client sends.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np
import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.drift.embeddings import CachedEmbedder
from termgate.drift.judge import EmbeddingDriftJudge
from termgate.evaluation import evaluate
from termgate.report.json_report import build_report
from termgate.store.cache_writers import own_writer
from termgate.store.postgres import is_postgres, roles_sql

from conftest import golden_row, run_sql, write_jsonl
from drift_fakes import FakeEmbedder, hand_lexicon, hand_model, unit
from llm_server import LoopbackLLM

QUERY, HONEST, DRIFT = "fruit salad", "fruit cocktail", "tax return"
# p(drift) = sigmoid(5 − 10·similarity to the query): 'tax return' (orthogonal) is drift,
# unless its cached vector is the query's own
MODEL = hand_model({"sim_query": -10.0}, intercept=5.0, band=(0.4, 0.6))
VECTORS = {QUERY: unit((0, 1)), HONEST: unit((0, 1)), DRIFT: unit((2, 1))}


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


class Writer(NamedTuple):
    """One identity writing the store: its --db, the environment that makes a process it,
    and the writer name the store records for it."""

    db: str
    env: dict
    name: str


def ci_roles(pg, url: str, kinds=("main", "pr", "other")) -> dict[str, str]:
    """A CI role per kind (its URL), each made by the documented `termgate store roles` SQL,
    as docs/security.md advises for two trust levels."""
    name = url.rsplit("/", 1)[1]
    assert cli("store", "init", "--db", url).exit_code == 0
    import psycopg
    with psycopg.connect(url, autocommit=True) as owner:
        for kind in kinds:
            owner.execute(roles_sql(ci=f"ci_{kind}_{name}", dashboard=f"dash_{kind}_{name}"))
    return {kind: pg.url(name, user=f"ci_{kind}_{name}") for kind in kinds}


@pytest.fixture
def writers(request, backend) -> dict[str, Writer]:
    """The victim (main's CI), the attacker (a pull request's CI) and a third writer: on
    PostgreSQL three roles, on a file three operating-system users (getpass reads LOGNAME)."""
    if is_postgres(backend):
        urls = ci_roles(request.getfixturevalue("pg"), backend)
        return {who: Writer(urls[kind], {}, own_writer(urls[kind]))
                for who, kind in (("victim", "main"), ("attacker", "pr"), ("third", "other"))}
    return {who: Writer(backend, {"LOGNAME": who}, who) for who in ("victim", "attacker", "third")}


@contextmanager
def acting(writer: Writer, env: dict | None = None):
    with pytest.MonkeyPatch.context() as m:
        for key, value in {**writer.env, **(env or {})}.items():
            m.setenv(key, value)
        yield


def scored(tmp_path, writer: Writer, embedder: FakeEmbedder, env: dict | None = None):
    """One evaluation by `writer` whose drift judge embeds through the store's vector cache."""
    golden = write_jsonl(tmp_path / "golden.jsonl", [golden_row("q1", QUERY, [HONEST])])
    generated = write_jsonl(tmp_path / "gen.jsonl", [{"query_id": "q1", "terms": [HONEST, DRIFT]}])
    with acting(writer, env):
        vectors = store.StoredVectors(writer.db)
        judge = EmbeddingDriftJudge(CachedEmbedder(embedder, vectors), MODEL, hand_lexicon())
        return evaluate(golden, generated, drift_judge=judge, cache_db=writer.db, cache_use=vectors.use,
                        author="victim")


def drift_terms(run) -> list[str]:
    return build_report(run)["per_query_results"][0]["drift_terms"]


@pytest.mark.slow
def test_a_poisoned_vector_of_another_writer_is_recomputed_and_the_drift_still_found(writers, tmp_path):
    victim, attacker, third = writers["victim"], writers["attacker"], writers["third"]
    with acting(attacker):  # the attacker caches the query's vector as the drift term's
        store.save_vectors(attacker.db, FakeEmbedder.model_id, [DRIFT], unit((0, 1))[None, :])

    honest = FakeEmbedder(VECTORS)
    run = scored(tmp_path, victim, honest)
    assert DRIFT in honest.texts  # the model was asked, the planted entry left alone
    assert drift_terms(run) == [DRIFT]
    me = {"writer": victim.name, "used": [victim.name]}
    assert run.cache_use == me and build_report(run)["run"]["cache"] == me
    store.save_run(victim.db, run)
    shown = cli("show", run.evaluation_id, "--db", victim.db, env=victim.env)
    assert shown.exit_code == 0, shown.output
    assert f"cache entries used from: {victim.name} (this run's own writer: {victim.name})" in shown.output
    assert json.loads(store.get_run(victim.db, run.evaluation_id)["usage"])["cache"] == me

    # the victim's own entry now sits beside the attacker's, and its next run uses its own
    again = FakeEmbedder(VECTORS)
    assert drift_terms(scored(tmp_path, victim, again)) == [DRIFT] and again.texts == []

    # a writer who trusts the attacker gets what the attacker planted, and its run says so
    trusting = FakeEmbedder(VECTORS)
    run = scored(tmp_path, third, trusting, {"TERMGATE_CACHE_TRUST": f" nobody , {attacker.name}"})
    assert drift_terms(run) == [] and DRIFT not in trusting.texts
    assert attacker.name in run.cache_use["used"] and run.cache_use["writer"] == third.name


HARNESS_GOLDEN = [golden_row("q0", "heart attack", ["myocardial infarction"]), golden_row("q1", "flu", ["influenza"])]


@pytest.fixture
def llm():
    server = LoopbackLLM()
    yield server
    server.close()


def harness(tmp_path, writer: Writer, llm, out: str, env: dict | None = None):
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Expand: {query}\nAnswer a JSON list.\n", encoding="utf-8")
    golden = write_jsonl(tmp_path / "golden.jsonl", HARNESS_GOLDEN)
    result = cli("harness", "--golden", golden, "--prompt", prompt, "--model", "sut-model", "--base-url", llm.url,
                 "--db", writer.db, "--drift-judge", "none", "--max-tries", "1", "--json", tmp_path / out,
                 env={"OPENAI_API_KEY": "test-key", **writer.env, **(env or {})})
    assert (tmp_path / out).exists(), result.output + result.stderr
    return result, json.loads((tmp_path / out).read_text())


@pytest.mark.slow
def test_a_poisoned_llm_reply_of_another_writer_is_asked_again(writers, tmp_path, llm):
    victim, attacker, third = writers["victim"], writers["attacker"], writers["third"]
    answers = {"heart attack": ["myocardial infarction"], "flu": ["influenza"]}
    llm.default = ("callable", lambda body: ("json", answers[body["messages"][-1]["content"]
                                                             .split("Expand: ")[1].split("\n")[0]]))
    # the attacker caches perfect replies for the very requests the victim's run will send
    _, planted = harness(tmp_path, attacker, llm, "attacker.json")
    assert planted["summary"]["passed"] == 2 and llm.chat_calls == 2

    answers.update({"heart attack": ["banana"], "flu": ["kumquat"]})  # what the model really answers now
    result, report = harness(tmp_path, victim, llm, "victim.json")
    assert llm.chat_calls == 4, result.output  # both asked again: nothing of the attacker's was used
    assert report["summary"]["passed"] == 0 and "2 calls, 0 from cache" in result.output
    assert report["run"]["cache"] == {"writer": victim.name, "used": [victim.name]}

    # a writer who trusts the attacker takes its replies (no call), and its run says whose they were
    result, report = harness(tmp_path, third, llm, "trusting.json", {"TERMGATE_CACHE_TRUST": attacker.name})
    assert llm.chat_calls == 4 and report["summary"]["passed"] == 2, result.output
    assert report["run"]["cache"] == {"writer": third.name, "used": [attacker.name]}
    assert f"cache: used entries written by {attacker.name} (TERMGATE_CACHE_TRUST)" in result.output


@pytest.mark.postgres
@pytest.mark.slow
def test_the_server_records_the_writer_and_overwrites_what_a_client_sends(pg, pgdb):
    import psycopg

    roles = ci_roles(pg, pgdb, ("main", "pr"))
    main_ci, pr_ci = roles["main"], roles["pr"]
    main_role, pr_role = own_writer(main_ci), own_writer(pr_ci)
    with psycopg.connect(pr_ci, autocommit=True) as conn:
        conn.execute("INSERT INTO embedding_cache (model, text, vector, writer) VALUES ('m', 'tax return', "
                     "'{0,1}', %s)", [main_role])  # claims to be main's CI
        conn.execute("INSERT INTO llm_cache (key, reply, writer) VALUES ('k', '[\"poison\"]', %s)", [main_role])
        conn.execute("INSERT INTO lexicon_cache (source, term, entry, writer) VALUES ('wn', 't', '{}', %s)",
                     [main_role])
        conn.execute("SELECT set_config('termgate.keep_writer', 'on', false)")  # store copy's way: the owner's only
        conn.execute("UPDATE llm_cache SET writer = %s", [main_role])
    with psycopg.connect(pgdb) as owner:
        for table in ("embedding_cache", "llm_cache", "lexicon_cache"):
            assert owner.execute(f"SELECT writer FROM {table}").fetchall() == [(pr_role,)]
    # main's CI recomputes rather than use it; trusting the PR role would take it
    assert store.load_vectors(main_ci, "m", ["tax return"]) == {}
    assert store.load_llm_cache(main_ci, ["k"]) == {}
    with pytest.MonkeyPatch.context() as m:
        m.setenv("TERMGATE_CACHE_TRUST", pr_role)
        assert store.load_llm_cache(main_ci, ["k"]) == {"k": '["poison"]'}
    # its own entry for the same key goes beside the other, and is preferred
    store.save_llm_cache(main_ci, [("k", "sut", "[\"honest\"]", 1, 1)])
    with pytest.MonkeyPatch.context() as m:
        m.setenv("TERMGATE_CACHE_TRUST", pr_role)
        assert store.load_llm_cache(main_ci, ["k"]) == {"k": '["honest"]'}
    with psycopg.connect(pgdb) as owner:
        assert sorted(owner.execute("SELECT writer FROM llm_cache").fetchall()) == sorted([(pr_role,), (main_role,)])


def test_entries_stored_before_writers_were_recorded_are_nobodys(backend, monkeypatch):
    """A store from before schema 14: its cache rows get the unknown writer, which no run
    uses unless TERMGATE_CACHE_TRUST is `*`."""
    from termgate.store import postgres
    from termgate.store import connection

    if is_postgres(backend):
        with monkeypatch.context() as m:
            m.setattr(postgres, "PG_MIGRATIONS", [v for v in postgres.PG_MIGRATIONS if v[0] < 14])
            postgres.migrate_pg(backend)
    else:
        import duckdb
        with duckdb.connect(backend) as con, monkeypatch.context() as m:
            m.setattr(connection, "MIGRATIONS", [v for v in connection.MIGRATIONS if v[0] < 14])
            connection.migrate(con)
    run_sql(backend, "INSERT INTO llm_cache (key, reply) VALUES ('k', 'old reply')",
            "INSERT INTO embedding_cache (model, text, vector) VALUES ('m', 't', [1.0, 0.0])".replace(
                "[1.0, 0.0]", "'{1,0}'" if is_postgres(backend) else "[1.0, 0.0]"))
    store.ensure_store(backend)
    assert store.load_llm_cache(backend, ["k"]) == {} and store.load_vectors(backend, "m", ["t"]) == {}
    monkeypatch.setenv("TERMGATE_CACHE_TRUST", "*")
    use = store.StoredReplies(backend).use
    assert store.load_llm_cache(backend, ["k"], use) == {"k": "old reply"}
    assert use.record()["used"] == ["(unknown)"]
    assert np.allclose(store.load_vectors(backend, "m", ["t"])["t"], [1.0, 0.0])


def plant(db: str, rows: list[tuple[str, str, str]]) -> None:
    """(key, reply, writer) rows into llm_cache behind termgate's back, writers as given (on
    PostgreSQL as the owner, the way `store copy` keeps them)."""
    store.ensure_store(db)
    if is_postgres(db):
        import psycopg
        with psycopg.connect(db) as conn:
            conn.execute("SELECT set_config('termgate.keep_writer', 'on', true)")
            for row in rows:
                conn.execute("INSERT INTO llm_cache (key, reply, writer) VALUES (%s, %s, %s)", list(row))
        return
    run_sql(db, *[("INSERT INTO llm_cache (key, reply, writer) VALUES (?, ?, ?)", row) for row in rows])


@pytest.mark.slow
def test_of_several_trusted_entries_the_own_wins_then_the_settings_order(backend, monkeypatch):
    me = own_writer(backend)
    plant(backend, [("k", "bob's", "bob"), ("k", "carol's", "carol"), ("k", "mine", me), ("j", "bob's", "bob")])
    monkeypatch.setenv("TERMGATE_CACHE_TRUST", "carol,bob")
    use = store.StoredReplies(backend).use
    assert store.load_llm_cache(backend, ["k", "j"], use) == {"k": "mine", "j": "bob's"}
    assert use.record() == {"writer": me, "used": sorted(["bob", me])}
    run_sql(backend, ("DELETE FROM llm_cache WHERE writer = ?", [me]))
    assert store.load_llm_cache(backend, ["k"]) == {"k": "carol's"}
    monkeypatch.setenv("TERMGATE_CACHE_TRUST", "bob, carol")
    assert store.load_llm_cache(backend, ["k"]) == {"k": "bob's"}
    monkeypatch.setenv("TERMGATE_CACHE_TRUST", "")
    assert store.load_llm_cache(backend, ["k", "j"]) == {}


@pytest.mark.postgres
@pytest.mark.slow
def test_store_copy_keeps_each_entrys_writer_both_ways(pgdb, tmp_path):
    source, back = str(tmp_path / "source.duckdb"), str(tmp_path / "back.duckdb")
    plant(source, [("k", "bob's", "bob"), ("k", "old", ""), ("j", "carol's", "carol")])
    assert cli("store", "copy", "--from", source, "--to", pgdb).exit_code == 0
    assert cli("store", "copy", "--from", pgdb, "--to", back).exit_code == 0
    import duckdb
    for db in (source, back):
        with duckdb.connect(db) as con:
            assert sorted(con.execute("SELECT key, reply, writer FROM llm_cache").fetchall()) == [
                ("j", "carol's", "carol"), ("k", "bob's", "bob"), ("k", "old", "")]


def test_on_a_file_a_trusted_name_is_folded_as_the_writers_are(tmp_path, monkeypatch):
    """A file's writers are case-folded user names (`Alice` writes as `alice`): the setting's
    names are folded alike, or `TERMGATE_CACHE_TRUST=Alice` trusted nobody, silently."""
    from termgate.store.cache_writers import trusted_writers

    db = str(tmp_path / "s.duckdb")
    assert store.ensure_store(db) is None
    plant(db, [("k", "alice's", "alice")])
    monkeypatch.setenv("TERMGATE_CACHE_TRUST", " Alice ")
    assert store.load_llm_cache(db, ["k"]) == {"k": "alice's"}
    assert trusted_writers("ci_main").writers == ("ci_main", "Alice")  # PostgreSQL role names: as written
