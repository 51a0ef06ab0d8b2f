"""Import with a corpus and relevance judgments (issue 34): the imported run measures its
retrieval effect in the child, bad judgments are one line naming the uploaded file, and
the index of the uploaded documents goes with the uploads."""

from __future__ import annotations

import json

import pytest

from termgate import store
from termgate.governance import signoff as so

from test_dashboard import Upload, db, endpoints_config, page, sign_in  # noqa: F401 (db: the fixture)

GOLDEN = (b'{"query_id": "q1", "query": "sneakers", "context": {"domain": "ecommerce"}, '
          b'"expected_expansions": [{"term": "trainers"}]}\n')
GENERATED = b'{"query_id": "q1", "terms": ["trainers"]}\n'
DOCS = [{"id": "d1", "title": "Trainers", "text": "running trainers for the road"},
        {"id": "d2", "title": "Sneakers", "text": "sneakers for every day"},
        {"id": "d3", "title": "Boots", "text": "hiking boots for the hills"}]
CORPUS = "".join(json.dumps(d) + "\n" for d in DOCS).encode()
QRELS = b"q1 0 d1 2\nq1 0 d2 1\n"  # the term finds d1, the query alone d2


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """The default index folder, which an import must leave alone."""
    monkeypatch.delenv("TERMGATE_INDEX_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache"


def imported(db, qrels: bytes):
    """Evaluate the uploads with a corpus and judgments on the Import page, as an engineer."""
    so.add_user(db, "erin", "engineer", "erin-password")
    at = sign_in(page("import"), "erin", "erin-password")
    at.file_uploader(key="imp_golden").upload("golden.jsonl", GOLDEN)
    at.file_uploader(key="imp_gen").upload("gen.jsonl", GENERATED)
    at.file_uploader(key="imp_corpus").upload("docs.jsonl", CORPUS)
    at.file_uploader(key="imp_qrels").upload("judged.txt", qrels)
    at.selectbox(key="imp_judge").set_value("none")
    next(b for b in at.button if b.label == "Evaluate").click().run()
    assert not at.exception
    return at


@pytest.mark.slow
def test_an_import_with_a_corpus_and_judgments_measures_retrieval(db, cache):
    at = imported(db, QRELS)
    assert any("Recorded run" in s.value for s in at.success), [e.value for e in at.error]
    summary = store.get_run(db, store.list_runs(db)["run_id"].iloc[0])["retrieval"]
    assert summary["engine"]["engine"] == "tantivy" and summary["judged_queries"] == 1
    assert summary["means"]["candidate"]["ndcg"] > summary["means"]["unexpanded"]["ndcg"]
    assert summary["corpus"]["documents"] == 3
    assert "retrieval (tantivy" in "\n".join(c.value for c in at.code)  # the child's summary
    assert not cache.exists()  # the index of the uploaded documents went with them


@pytest.mark.slow
def test_bad_judgments_are_one_line_naming_the_uploaded_file(db, cache):
    before = len(store.list_runs(db))
    at = imported(db, b"q1 0 d1 2\nq1 0 d2 high\n")
    assert any("Nothing was recorded" in e.value for e in at.error)
    [problem] = [c.value for c in at.code if not c.value.startswith("[llm.")]  # not the harness tab's example
    assert problem.startswith("judged.txt:2: grade") and "\n" not in problem
    assert len(store.list_runs(db)) == before


def test_a_corpus_without_judgments_is_refused_before_any_work(db):
    from termgate.dashboard.importer import run_import

    result = run_import(Upload("golden.jsonl", GOLDEN), Upload("gen.jsonl", GENERATED), judge="none",
                        author="carol", corpus=Upload("docs.jsonl", CORPUS))
    assert result.run_id is None and "relevance judgments" in result.problems[0]


def test_the_page_offers_a_corpus_and_judgments_in_both_forms(db, tmp_path, monkeypatch):
    endpoints_config(tmp_path, monkeypatch, loop=("http://127.0.0.1:9/v1", None))
    at = page("import")
    keys = {u.key for u in at.get("file_uploader")}
    assert {"imp_corpus", "imp_qrels", "har_corpus", "har_qrels"} <= keys


@pytest.mark.slow
def test_the_harness_measures_retrieval_with_the_teams_engine(db, cache, tmp_path, monkeypatch):
    """Judgments alone with [retrieval] engine = "http": the harness child gets the search
    engine's credential (its header_env variable), which it sends to that engine only."""
    from llm_server import LoopbackLLM
    from search_server import SearchServer
    from termgate.dashboard.importer import run_harness

    llm, search = LoopbackLLM(), SearchServer(DOCS, require_auth="ApiKey s3arch")
    llm.default = ("json", ["trainers"])
    config = endpoints_config(tmp_path, monkeypatch, loop=(llm.url, "LOOP_KEY"))
    config.write_text(config.read_text() + '\n[retrieval]\nengine = "http"\n\n[retrieval.http]\n'
                      f'preset = "elasticsearch"\nurl = "{search.url}/docs"\n'
                      'header_env = { Authorization = "SEARCH_AUTH" }\n', encoding="utf-8")
    monkeypatch.setenv("LOOP_KEY", "sk-loop-1")
    monkeypatch.setenv("SEARCH_AUTH", "ApiKey s3arch")
    try:
        result = run_harness(Upload("golden.jsonl", GOLDEN), Upload("prompt.txt", b"Synonyms for {query}"),
                             endpoint="loop", author="carol", judge="none", qrels=Upload("judged.txt", QRELS))
    finally:
        llm.close()
        search.close()
    assert result.problems == [], result.output
    summary = store.get_run(db, result.run_id)["retrieval"]
    assert summary["engine"]["engine"] == "http" and summary["judged_queries"] == 1
    assert {r["authorization"] for r in search.requests} == {"ApiKey s3arch"}
    assert {r.get("authorization") for r in llm.requests} == {"Bearer sk-loop-1"}  # each key to its own host
