"""The retrieval effect from the command line beyond `evaluate --corpus`: the harness with a
Python expander, a team's engine over HTTP (the tests' `_search` server) configured in
termgate.toml, and `termgate retrieval measure` on the run files `evaluate` writes.

The world is tests/test_retrieval_effect.py's: q1 "heart attack" with ten relevant
documents that say "myocardial infarction", twelve tennis-racket documents that the drift
term "tennis racket" floods the top ten with; q2 "kidney stone".
"""

from __future__ import annotations

import json
import socket

import duckdb
import pytest

import termgate.store as store
from termgate.retrieval.configure import index_root
from termgate.retrieval.outcome import METRICS
from search_server import SearchServer
from test_retrieval_effect import PERMISSIVE, _jsonl, cli, report_of, world  # noqa: F401 (world: the fixture)

EXPANDER = '''
RIGHT = {"heart attack": [{"term": "myocardial infarction", "weight": 0.9}],
         "kidney stone": [{"term": "nephrolithiasis", "weight": 0.9}]}

def right(query, context):
    return RIGHT[query]

def flooded(query, context):
    extra = [{"term": "tennis racket", "weight": 1.0}] if query == "heart attack" else []
    return RIGHT[query] + extra
'''
SECRET = "ApiKey c2VhcmNoLXNlY3JldC12YWx1ZQ=="


def harness(world, expander, *extra):
    return cli("harness", "--golden", world["golden"], "--callable", f"retrieval_expander:{expander}",
               "--db", world["db"], "--drift-judge", "none", "--thresholds", world["thresholds"],
               "--corpus", world["docs"], "--qrels", world["qrels"], *extra)


@pytest.fixture
def expander(world, monkeypatch):
    (world["dir"] / "retrieval_expander.py").write_text(EXPANDER, encoding="utf-8")
    monkeypatch.chdir(world["dir"])  # --callable imports from the working folder


def test_the_index_folder_in_the_environment_wins_over_the_config_file(tmp_path, monkeypatch):
    """As every setting: a test's (or the dashboard's) TERMGATE_INDEX_DIR beats a user's index_dir."""
    monkeypatch.setenv("TERMGATE_INDEX_DIR", str(tmp_path / "env"))
    assert index_root({"index_dir": str(tmp_path / "file")}) == tmp_path / "env"
    monkeypatch.delenv("TERMGATE_INDEX_DIR")
    assert index_root({"index_dir": str(tmp_path / "file")}) == tmp_path / "file"


# --- harness -------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_harness_measures_retrieval_as_evaluate_does_and_gates_on_it(world, expander):
    _, evaluated = report_of(world, "right")  # the same terms, from a file
    result = harness(world, "right", "--json", world["dir"] / "h.json")
    assert result.exit_code == 0, result.output
    report = json.loads((world["dir"] / "h.json").read_text())
    assert report["retrieval"]["means"] == evaluated["retrieval"]["means"]
    assert "retrieval (tantivy" in result.output
    base = report["evaluation_id"]
    flooded = harness(world, "flooded", "--baseline", base, "--json", world["dir"] / "f.json")
    assert flooded.exit_code == 3, flooded.output  # a retrieval regression: review
    assert json.loads((world["dir"] / "f.json").read_text())["retrieval"]["regressed_queries"] == ["q1"]
    world["thresholds"].write_text(json.dumps({**PERMISSIVE, "retrieval_regressed": "fail"}), encoding="utf-8")
    assert harness(world, "flooded", "--baseline", base).exit_code == 1


@pytest.mark.slow
def test_every_repeat_of_the_harness_measures_retrieval(world, expander):
    result = harness(world, "flooded", "--repeat", "3", "--json", world["dir"] / "r.json")
    assert result.exit_code == 0, result.output
    report = json.loads((world["dir"] / "r.json").read_text())
    runs = store.list_runs(world["db"])["run_id"]
    assert len(runs) == 3 and report["evaluation_id"] in set(runs)
    for run in runs:
        assert store.get_run(world["db"], run)["retrieval"]["means"] == report["retrieval"]["means"]


# --- a team's engine over HTTP -------------------------------------------------------------

def write_config(world, url: str, *extra: str):
    path = world["dir"] / "termgate.toml"
    path.write_text("\n".join(['[retrieval]', 'engine = "http"', 'analyzer = "default"', '',
                               '[retrieval.http]', 'preset = "elasticsearch"', f'url = "{url}"',
                               'header_env = { Authorization = "SEARCH_AUTH" }', *extra]) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def engine(world, monkeypatch):
    """The `_search` server over the world's documents, requiring a credential that
    termgate.toml names by its environment variable. Every text gets its own length, so
    no two documents tie on a query: engines order ties as their segments fall."""
    docs = [json.loads(line) for line in world["docs"].read_text().splitlines()]
    docs = [{**d, "text": d["text"] + " garden" * i} for i, d in enumerate(docs)]
    _jsonl(world["docs"], docs)
    server = SearchServer(docs, require_auth=SECRET)
    monkeypatch.setenv("SEARCH_AUTH", SECRET)
    monkeypatch.setenv("TERMGATE_CONFIG", str(write_config(world, f"{server.url}/docs")))
    yield server
    server.close()


def over_http(world, generated, *extra):
    out = world["dir"] / f"http-{len(list(world['dir'].iterdir()))}.json"
    result = cli("evaluate", "--golden", world["golden"], "--generated", world[generated], "--db", world["db"],
                 "--drift-judge", "none", "--thresholds", world["thresholds"], "--qrels", world["qrels"],
                 "--search-engine", "http", "--json", out, *extra)
    return result, (json.loads(out.read_text()) if out.exists() else None), out


@pytest.mark.slow
def test_the_http_engine_measures_what_the_embedded_engine_does(world, engine):
    result, baseline, _ = over_http(world, "right")
    assert result.exit_code == 0, result.output
    assert baseline["retrieval"]["engine"]["engine"] == "http" and baseline["retrieval"]["corpus"] is None
    _, ours, _ = over_http(world, "flooded", "--baseline", baseline["evaluation_id"])
    # the embedded engine over the same documents, with the server's analyser ([retrieval] analyzer)
    _, embedded = report_of(world, "flooded", "--search-engine", "tantivy", "--baseline", baseline["evaluation_id"])
    assert embedded["retrieval"]["engine"]["engine"] == "tantivy"
    theirs = {q["query_id"]: q for q in embedded["retrieval"]["per_query"]}
    assert [q["query_id"] for q in ours["retrieval"]["per_query"]] == list(theirs) == ["q1", "q2"]
    for entry in ours["retrieval"]["per_query"]:
        assert set(entry["variants"]) == {"unexpanded", "baseline", "candidate"}
        for variant, metrics in entry["variants"].items():
            for metric in ("ndcg", "recall", "mrr", "precision"):
                expected = theirs[entry["query_id"]]["variants"][variant][metric]
                assert metrics[metric] == pytest.approx(expected, abs=1e-6), (entry["query_id"], variant, metric)
    assert ours["retrieval"]["regressed_queries"] == embedded["retrieval"]["regressed_queries"] == ["q1"]


def test_the_credential_shows_nowhere(world, engine):
    result, report, path = over_http(world, "flooded", "--trec-runs", world["dir"] / "runs")
    assert result.exit_code == 0, result.output
    assert {r["authorization"] for r in engine.requests} == {SECRET}  # it was sent, every time
    token = SECRET.split()[1]
    for text in (result.output, path.read_text(), *(p.read_text() for p in (world["dir"] / "runs").iterdir())):
        assert token not in text
    for name in [world["db"].name, world["db"].name + ".wal"]:
        if (world["dir"] / name).exists():
            assert token.encode() not in (world["dir"] / name).read_bytes()
    with duckdb.connect(str(world["db"]), read_only=True) as con:  # and no table holds it, however compressed
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
            assert token not in str(con.execute(f'SELECT * FROM "{table}"').fetchall()), table


@pytest.mark.slow
def test_the_content_hash_covers_the_rankings_the_engine_returned(world, engine, monkeypatch):
    _, one, _ = over_http(world, "flooded")
    _, again, _ = over_http(world, "flooded")
    assert again["run"]["content_hash"] == one["run"]["content_hash"]
    answer = engine.search
    monkeypatch.setattr(engine, "search", lambda body: _without_first_hit(answer(body)))  # the index changed
    _, other, _ = over_http(world, "flooded")
    assert other["retrieval"]["run_files"] != one["retrieval"]["run_files"]
    assert other["run"]["content_hash"] != one["run"]["content_hash"]


def _without_first_hit(answer: dict) -> dict:
    return {**answer, "hits": {**answer["hits"], "hits": answer["hits"]["hits"][1:]}}


def test_an_unknown_http_setting_names_the_config_file_line_and_key(world, monkeypatch):
    config = write_config(world, "http://127.0.0.1:9/docs", "size = 10")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    result, _, _ = over_http(world, "right")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{config}:9: retrieval.http.size: unknown key"), lines


def test_an_engine_that_is_down_is_one_line_exit_2_and_nothing_stored(world, monkeypatch):
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv("SEARCH_AUTH", SECRET)
    monkeypatch.setenv("TERMGATE_CONFIG", str(write_config(world, f"http://127.0.0.1:{port}/docs")))
    result, report, _ = over_http(world, "right")
    assert result.exit_code == 2 and report is None
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot reach http://127.0.0.1:{port}/docs/_search"), lines
    assert not world["db"].exists() or store.list_runs(world["db"]).empty


# --- termgate retrieval measure ------------------------------------------------------------

def test_measure_reads_the_run_files_evaluate_wrote_to_the_reports_numbers(world):
    result, report = report_of(world, "flooded", "--trec-runs", world["dir"] / "runs")
    assert result.exit_code in (0, 3), result.output
    r = report["retrieval"]
    runs = [world["dir"] / "runs" / f"{v}.trec" for v in ("unexpanded", "candidate")]
    measured = cli("retrieval", "measure", "--qrels", world["qrels"], *runs, "--json", world["dir"] / "m.json")
    assert measured.exit_code == 0, measured.output
    out = json.loads((world["dir"] / "m.json").read_text())
    for run, variant in zip(out["runs"], ("unexpanded", "candidate")):
        assert run["judged_queries"] == r["judged_queries"] == 2
        assert run["means"] == pytest.approx(r["means"][variant], abs=1e-12)
    for metric in METRICS:  # the second against the first: candidate against unexpanded, as the report's
        assert out["statistics"][metric] == pytest.approx(r["statistics"][metric], abs=1e-12)
    assert "second against first, 2 paired queries" in measured.output and "nDCG@10" in measured.output


def test_measure_names_the_bad_line_of_a_run_file(world):
    run = world["dir"] / "bad.trec"
    run.write_text("q1 Q0 mi%200 1 3.5 t\nq1 Q0 mi%201 2 high t\n", encoding="utf-8")
    result = cli("retrieval", "measure", "--qrels", world["qrels"], run)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{run}:2: score"), lines


def test_one_judged_query_has_no_interval_and_says_so_without_one(world):
    """One paired query: the statistics have a mean change but no interval (None), which
    the summary lines leave out rather than fail on."""
    world["qrels"].write_text("q2 0 stone-1 2\nq2 0 stone-2 1\n", encoding="utf-8")
    result, report = report_of(world, "right", "--trec-runs", world["dir"] / "runs")
    assert result.exit_code == 0, result.output
    assert report["retrieval"]["statistics"]["ndcg"]["ci_low"] is None
    (line,) = [line for line in result.output.splitlines() if "nDCG@10 change" in line]
    assert "CI" not in line and "p = " in line
    runs = [world["dir"] / "runs" / f"{v}.trec" for v in ("unexpanded", "candidate")]
    measured = cli("retrieval", "measure", "--qrels", world["qrels"], *runs)
    assert measured.exit_code == 0 and "1 paired queries" in measured.output, measured.output

