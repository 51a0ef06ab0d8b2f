"""HttpEngine against the tests' `_search` server (tests/search_server.py) over Tantivy:
the rankings are the server's own, boosts and templates reach it intact, credentials come
from the environment and show nowhere, and every failure is one clear SearchEngineError."""

from __future__ import annotations

import json
import re
import socket
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

from search_server import SearchServer
from termgate.errors import TermgateError
from termgate.retrieval.http_engine import EngineConfigError, HttpEngine, SearchEngineError
from termgate.retrieval.request_template import render_template, select_path

DOCS = [
    {"id": "doc 1", "title": "Panic attacks", "text": "a panic attack comes on fast with a racing heart"},
    {"id": "doc 2", "title": "Anxiety", "text": "generalised anxiety disorder and worry that lasts"},
    {"id": "doc 3", "title": "Heart", "text": "a racing heart after exercise is normal"},
    {"id": "doc%4", "title": "Sleep", "text": "poor sleep and worry feed each other at night"},
    {"id": "d5", "title": "Breathing", "text": "slow breathing calms a panic attack and anxiety"},
    {"id": "d6", "title": "Exercise", "text": "exercise helps sleep, mood and anxiety"},
]
SECRET = "ApiKey c2VjcmV0LWtleS12YWx1ZQ=="


@pytest.fixture(scope="module")
def module_server():
    server = SearchServer(DOCS)
    yield server
    server.close()


@pytest.fixture
def server(module_server):
    module_server.actions.clear()
    module_server.requests.clear()
    module_server.require_auth = None
    module_server.delay = 0.0
    module_server.max_in_flight = 0
    return module_server


def sent(server, i: int = -1) -> dict:
    return json.loads(server.requests[i]["raw"])


def expected(server, text: str, depth: int = 10) -> tuple[list[str], list[float]]:
    """The server's Tantivy ranking of a query written in Tantivy's own query language over
    title and text (scores of the fields add up), built apart from the server's DSL code."""
    hits = server.searcher.search(server.index.parse_query(text, ["title", "text"]), limit=depth).hits
    return [server.searcher.doc(a)["id"][0] for _, a in hits], [s for s, _ in hits]


@pytest.mark.parametrize("preset", ["elasticsearch", "opensearch"])
def test_preset_rankings_are_the_servers_tantivy_rankings(server, preset):
    engine = HttpEngine(f"{server.url}/docs", preset=preset)
    requests = [("panic", []),
                ("panic", [("racing heart", 1.0), ("anxiety", 0.5)]),
                ("worry", [("slow breathing", 0.3), ("unused", 0.0), (" ", 1.0)])]
    got = engine.search(requests, depth=10)
    for ranking, query in zip(got, ['panic', 'panic "racing heart" anxiety^0.5', 'worry "slow breathing"^0.3']):
        ids, scores = expected(server, query)
        assert ranking.ids == ids
        assert ranking.scores == pytest.approx(scores, rel=1e-6)
    assert all(r["path"] == "/docs/_search" for r in server.requests)
    bodies = [sent(server, i) for i in range(len(server.requests))]
    (body,) = [b for b in bodies if b["query"]["bool"]["should"][0]["multi_match"]["query"] == "worry"]
    # the weight-0 and the blank term are left out; size is the depth; no _source
    assert body["size"] == 10 and body["_source"] is False
    assert [c for c in body["query"]["bool"]["should"] if "match_phrase" in c] == [
        {"match_phrase": {"title": {"query": "slow breathing", "boost": 0.3}}},
        {"match_phrase": {"text": {"query": "slow breathing", "boost": 0.3}}}]


def test_boosts_decide_the_order(server):
    engine = HttpEngine(server.url, preset="elasticsearch")
    # "zebra" finds nothing; "racing heart" finds doc 1 and doc 3, "sleep" doc%4 and d6
    heart, sleep = engine.search([("zebra", [("racing heart", 1.0), ("sleep", 0.05)]),
                                  ("zebra", [("racing heart", 0.05), ("sleep", 1.0)])], depth=10)
    assert set(heart.ids[:2]) == {"doc 1", "doc 3"} and set(heart.ids[2:]) == {"doc%4", "d6"}
    assert set(sleep.ids[:2]) == {"doc%4", "d6"} and set(sleep.ids[2:]) == {"doc 1", "doc 3"}


def test_ids_with_spaces_and_percent_signs_come_back_verbatim(server):
    (ranking,) = HttpEngine(server.url, preset="elasticsearch").search([("worry heart", [])], depth=10)
    assert set(ranking.ids) == {"doc 1", "doc 2", "doc 3", "doc%4"}


def test_depth_is_the_size_and_caps_the_ranking(server):
    (ranking,) = HttpEngine(server.url, preset="elasticsearch").search([("anxiety", [])], depth=2)
    assert sent(server)["size"] == 2 and len(ranking.ids) == 2


def test_template_values_are_json_values_never_spliced_text(server):
    query = 'say "hi" {{depth}} {x} \\ }}'  # quotes, braces, a backslash, a variable's spelling
    term = '"{{query}}", "boost": 99'
    engine = HttpEngine(server.url, preset="elasticsearch")
    engine.search([(query, [(term, 0.5)])], depth=3)
    should = sent(server)["query"]["bool"]["should"]
    assert should[0]["multi_match"]["query"] == query
    assert should[1] == {"match_phrase": {"title": {"query": term, "boost": 0.5}}}


def test_a_custom_template_with_ids_only_gets_rank_scores(server):
    template = json.dumps({"size": "{{depth}}", "query": {"bool": {"should": [
        {"match": {"text": "{{query}}"}},
        {"{{each term}}": {"match": {"text": {"query": "{{term}}", "boost": "{{weight}}"}}}}]}}})
    engine = HttpEngine(f"{server.url}/_search", template=template, response_path="hits.hits[*]._id")
    (ranking,) = engine.search([("heart", [("worry", 0.5)])], depth=10)
    assert ranking.ids == expected(server, "text:heart text:worry^0.5")[0]
    assert ranking.scores == [float(n) for n in range(len(ranking.ids), 0, -1)]
    assert engine.describe()["fields"] is None and engine.describe()["preset"] is None


def test_a_query_the_server_does_not_understand_is_its_400(server):
    engine = HttpEngine(f"{server.url}/_search", template={"query": {"fuzzy": {"text": "{{query}}"}}},
                        response_path="hits.hits[*]._id")
    with pytest.raises(SearchEngineError, match=r"HTTP 400: .*parsing_exception.*unknown query \[fuzzy\]"):
        engine.search([("panic", [])], depth=5)


@pytest.mark.parametrize(("template", "message"), [
    ({"query": {"match": {"text": "{{qurey}}"}}}, r"query\.match\.text: unknown variable \{\{qurey\}\}"),
    ({"query": {"match": {"text": "text:{{query}}"}}}, r"query\.match\.text: a variable stands for a whole value"),
    ({"q": ["{{term}}"]}, r"q\[0\]: unknown variable \{\{term\}\}"),
    ({"q": {"{{each term}}": {"t": "{{term}}"}}}, r"q\.\{\{each term\}\}: variables go in values"),
    ({"q": [{"{{each term}}": {"t": "{{term}}"}, "x": 1}]}, r"q\[0\]: \{\{each term\}\} is alone"),
    ('{"q": ', r"request template: not JSON"),
])
def test_template_mistakes_name_their_key(template, message):
    with pytest.raises(EngineConfigError, match=message) as caught:
        HttpEngine("http://127.0.0.1:9/_search", template=template, response_path="ids")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TermgateError)


def test_render_expands_each_term_in_order():
    template = {"s": ["{{query}}", {"{{each term}}": {"p": "{{term}}", "b": "{{weight}}", "n": "{{depth}}"}}]}
    assert render_template(template, {"query": "q", "depth": 5}, [("a b", 1.0), ("c", 0.25)]) == {
        "s": ["q", {"p": "a b", "b": 1.0, "n": 5}, {"p": "c", "b": 0.25, "n": 5}]}


@pytest.mark.parametrize(("path", "document", "values"), [
    ("hits.hits[*]._id", {"hits": {"hits": [{"_id": "a"}, {"_id": "b"}]}}, ["a", "b"]),
    ("response.docs[*].id", {"response": {"docs": [{"id": 7}]}}, [7]),
    ("ids", {"ids": ["x", "y"]}, ["x", "y"]),  # no [*]: the path ends at the list
    ("[*].id", [{"id": "a"}], ["a"]),
    ("r[0].ids", {"r": [{"ids": ["z"]}]}, ["z"]),
])
def test_response_paths(path, document, values):
    assert select_path(document, path) == values


def test_a_response_without_the_path_says_where_it_stops(server):
    server.actions.append(("json", {"hits": {"total": 0}}))
    with pytest.raises(SearchEngineError, match=r"has no hits\.hits\[\*\]\._id: nothing at hits\.hits$"):
        HttpEngine(server.url, preset="elasticsearch").search([("panic", [])], depth=5)


@pytest.mark.parametrize("path", ["", "hits..id", "hits[x]", ".hits"])
def test_a_malformed_response_path_is_a_configuration_error(path):
    with pytest.raises(EngineConfigError, match="response path"):
        HttpEngine("http://127.0.0.1:9/_search", template={}, response_path=path)


def test_tied_scores_become_strictly_decreasing_and_duplicates_go(server):
    server.actions.append(("json", {"hits": {"hits": [{"_id": "a", "_score": 2.0}, {"_id": "b", "_score": 2.0},
                                                      {"_id": "a", "_score": 1.0}, {"_id": "c", "_score": 3.0}]}}))
    (ranking,) = HttpEngine(server.url, preset="elasticsearch").search([("x", [])], depth=10)
    assert ranking.ids == ["a", "b", "c"]  # the engine's order is kept
    assert ranking.scores[0] == 2.0 and ranking.scores[0] > ranking.scores[1] > ranking.scores[2]


def test_null_scores_fall_back_to_the_rank(server):
    server.actions.append(("json", {"hits": {"hits": [{"_id": "a", "_score": None}, {"_id": "b", "_score": None}]}}))
    (ranking,) = HttpEngine(server.url, preset="elasticsearch").search([("x", [])], depth=10)
    assert ranking.scores == [2.0, 1.0]


# --- credentials ---------------------------------------------------------------------------

def test_credentials_come_from_the_environment(server, monkeypatch):
    server.require_auth = SECRET
    monkeypatch.setenv("SEARCH_AUTH", SECRET)
    engine = HttpEngine(server.url, preset="elasticsearch", header_env={"Authorization": "SEARCH_AUTH"})
    (ranking,) = engine.search([("panic", [])], depth=5)
    assert ranking.ids and server.requests[-1]["authorization"] == SECRET
    shown = json.dumps(engine.describe()) + repr(engine)
    assert SECRET not in shown and "c2VjcmV0" not in shown and "Authorization" in repr(engine)


def test_a_missing_credential_names_its_variable(monkeypatch):
    monkeypatch.delenv("SEARCH_AUTH", raising=False)
    with pytest.raises(EngineConfigError, match="header Authorization: the environment variable SEARCH_AUTH is not"):
        HttpEngine("http://127.0.0.1:9", preset="elasticsearch", header_env={"Authorization": "SEARCH_AUTH"})


def test_a_refused_credential_says_so(server):
    server.require_auth = SECRET
    with pytest.raises(SearchEngineError, match=r"HTTP 401 \(check the credentials in header_env\): .*security_exc"):
        HttpEngine(server.url, preset="elasticsearch").search([("panic", [])], depth=5)


def test_an_echoed_credential_is_blanked_in_the_error(server, monkeypatch):
    monkeypatch.setenv("SEARCH_AUTH", SECRET)
    server.actions.append(("echo", 502))
    engine = HttpEngine(server.url, preset="elasticsearch", header_env={"Authorization": "SEARCH_AUTH"})
    with pytest.raises(SearchEngineError, match=r"HTTP 502: .*upstream failed") as caught:
        engine.search([("panic", [])], depth=5)
    assert "c2VjcmV0" not in str(caught.value) and "***" in str(caught.value)


@pytest.mark.parametrize("headers", [{"Authorization": SECRET}, {"X-Api-Key": "c2VjcmV0LWtleS12YWx1ZQ=="}])
def test_a_literal_credential_is_refused_without_repeating_it(headers):
    with pytest.raises(EngineConfigError, match="a credential goes in header_env") as caught:
        HttpEngine("http://127.0.0.1:9", preset="elasticsearch", headers=headers)
    assert "c2VjcmV0" not in str(caught.value)


@pytest.mark.parametrize("url", ["https://elastic:hunter2pw@es.example:9200/docs",
                                 "https://es.example/docs?api_key=hunter2pw"])
def test_a_credential_in_the_url_is_refused_and_not_shown(url):
    with pytest.raises(EngineConfigError, match="holds a credential") as caught:
        HttpEngine(url, preset="elasticsearch")
    assert "hunter2pw" not in str(caught.value)


def test_describe_is_json_ready_and_follows_the_fields():
    one = HttpEngine("https://es.example:9200/docs?routing=eu", preset="opensearch")
    two = HttpEngine("https://es.example:9200/docs", preset="opensearch", fields=["body"])
    assert json.loads(json.dumps(one.describe())) == one.describe()
    assert one.describe()["url"] == "https://es.example:9200/docs/_search?routing=***"
    assert two.describe()["fields"] == ["body"]
    assert one.describe()["template_sha256"] != two.describe()["template_sha256"]


# --- failures ------------------------------------------------------------------------------

def test_connection_refused_is_one_clear_error():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(SearchEngineError, match=rf"cannot reach http://127.0.0.1:{port}/_search: "):
        HttpEngine(f"http://127.0.0.1:{port}", preset="elasticsearch").search([("x", [])], depth=5)


def test_a_slow_engine_times_out(server):
    server.actions.append(("sleep", 1.0))
    with pytest.raises(SearchEngineError, match="did not answer within 0.2 s"):
        HttpEngine(server.url, preset="elasticsearch", timeout=0.2, retries=0).search([("x", [])], depth=5)


def test_a_server_error_shows_its_status_and_the_start_of_its_body(server):
    server.actions.append(("status", 500, "<html>" + "x" * 5000 + "</html>", {}))
    with pytest.raises(SearchEngineError, match=r"HTTP 500: <html>x+\.\.\.$") as caught:
        HttpEngine(server.url, preset="elasticsearch").search([("x", [])], depth=5)
    assert len(str(caught.value)) < 300


def test_a_body_that_is_not_json(server):
    server.actions.append(("status", 200, "<html>gateway</html>", {}))
    with pytest.raises(SearchEngineError, match="not JSON: <html>gateway</html>"):
        HttpEngine(server.url, preset="elasticsearch").search([("x", [])], depth=5)


def test_429_and_503_are_retried_a_bounded_number_of_times(server):
    server.actions += [("status", 429, {"error": "slow down"}, {"Retry-After": "0"}),
                       ("status", 503, {"error": "busy"}, {})]
    engine = HttpEngine(server.url, preset="elasticsearch", retries=2, backoff=0.01)
    (ranking,) = engine.search([("panic", [])], depth=5)
    assert ranking.ids and len(server.requests) == 3
    server.requests.clear()
    server.actions += [("status", 503, {"error": "busy"}, {})] * 3
    with pytest.raises(SearchEngineError, match="HTTP 503 after 3 tries"):
        engine.search([("panic", [])], depth=5)
    assert len(server.requests) == 3


def test_a_redirect_is_not_followed(server):
    server.actions.append(("status", 302, "", {"Location": "http://example.com/_search"}))
    with pytest.raises(SearchEngineError, match="HTTP 302 .*follows no redirect"):
        HttpEngine(server.url, preset="elasticsearch").search([("x", [])], depth=5)
    assert len(server.requests) == 1


def test_requests_run_in_parallel_and_keep_their_order(server):
    server.delay = 0.05
    queries = ["panic", "anxiety", "sleep", "heart", "breathing", "exercise"] * 2
    engine = HttpEngine(server.url, preset="elasticsearch", workers=4)
    got = engine.search([(q, []) for q in queries], depth=10)
    assert [r.ids for r in got] == [expected(server, q)[0] for q in queries]
    assert server.max_in_flight > 1


@pytest.mark.parametrize(("options", "message"), [
    ({"preset": "solr"}, "unknown preset 'solr'"),
    ({"preset": "elasticsearch", "template": {}}, "give a preset or a template, not both"),
    ({}, "needs a preset"),
    ({"template": {}, "response_path": "ids", "fields": ["t"]}, "fields go with a preset"),
    ({"preset": "elasticsearch", "workers": 0}, "workers: a whole number from 1"),
    ({"preset": "elasticsearch", "timeout": 0}, "timeout"),
])
def test_configuration_mistakes(options, message):
    with pytest.raises(EngineConfigError, match=message):
        HttpEngine("http://127.0.0.1:9", **options)


def test_the_preset_ranks_as_the_embedded_engine_does(server, tmp_path):
    """The same expanded query either way: the Elasticsearch preset against the server, and
    TantivyEngine over the same documents with the same analyser."""
    engine_module = pytest.importorskip("termgate.retrieval.engine")
    corpus = SimpleNamespace(ids=[d["id"] for d in DOCS], titles=[d["title"] for d in DOCS],
                             texts=[d["text"] for d in DOCS], hash="search-server-docs")
    embedded = engine_module.TantivyEngine(corpus, tmp_path, analyzer="default")
    requests = [("panic", []), ("panic attack", [("racing heart", 1.0), ("anxiety", 0.5), ("sleep", 0.0)]),
                ("worry", [("slow breathing", 0.3)])]
    over_http = HttpEngine(server.url, preset="elasticsearch").search(requests, depth=10)
    for theirs, ours in zip(embedded.search(requests, depth=10), over_http, strict=True):
        assert ours.ids == theirs.ids
        assert ours.scores == pytest.approx(theirs.scores, rel=1e-6)


# --- docs/search-engines.md stays true -------------------------------------------------------

def _blocks(language: str) -> list[str]:
    text = (Path(__file__).parent.parent / "docs" / "search-engines.md").read_text(encoding="utf-8")
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def test_the_documented_configurations_work():
    elastic, solr = (tomllib.loads(block)["retrieval"]["http"] for block in _blocks("toml"))
    environ = {"SEARCH_AUTH": "ApiKey x", "SOLR_AUTH": "Basic dXNlcjpwYXNz"}
    shown = HttpEngine.from_table(elastic, environ=environ).describe()["url"]
    assert shown == "https://search.internal:9200/products/_search"
    engine = HttpEngine.from_table(solr, environ=environ)
    body = json.loads(engine.body("panic", [("racing heart", 1.0), ("anxiety", 0.0)], 100))
    assert body["limit"] == 100 and body["query"]["bool"]["should"][1:] == [
        {"boost": {"b": 1.0, "query": {"field": {"f": field, "query": "racing heart"}}}} for field in ("title", "text")]


def test_the_documented_elasticsearch_request_is_the_presets():
    documented = json.loads(_blocks("json")[0])
    engine = HttpEngine("https://search.internal:9200/products", preset="elasticsearch")
    assert json.loads(engine.body("panic", [("racing heart", 1.0), ("anxiety", 0.5)], 100)) == documented


@pytest.mark.parametrize(("table", "message"), [
    ({"url": "http://127.0.0.1:9", "preset": "elasticsearch", "size": 10}, r"retrieval\.http\.size: unknown key"),
    ({"preset": "elasticsearch"}, r"retrieval\.http\.url: required"),
    ({"url": "http://127.0.0.1:9", "template": {"q": "{{x}}"}, "response_path": "ids"},
     r"retrieval\.http: request template: q: unknown variable"),
])
def test_a_configuration_table_names_the_key_at_fault(table, message):
    with pytest.raises(EngineConfigError, match=message):
        HttpEngine.from_table(table)
