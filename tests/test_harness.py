"""The harness against a real loopback OpenAI-compatible server: parsing, retries,
errored items, the cache, resume after a kill, the concurrency bound, Python expanders."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.llm.harness import parse_reply

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM

EXPANSIONS = {"heart attack": ["myocardial infarction", "MI"], "stroke": ["cerebrovascular accident", "CVA"],
              "flu": ["influenza"], "broken bone": ["fracture"]}


@pytest.mark.parametrize("reply, terms", [
    ('["MI", {"term": "Heart Attack", "weight": 0.4}]', {"mi": 1.0, "heart attack": 0.4}),
    ('```json\n{"terms": ["a", "b"]}\n```', {"a": 1.0, "b": 1.0}),
    ("1. Myocardial infarction\n2) MI\n- ACS\n* angina\n\n", {"myocardial infarction": 1.0, "mi": 1.0, "acs": 1.0,
                                                              "angina": 1.0}),
    ("[]", {}),
])
def test_parse_reply(reply, terms):
    assert parse_reply(reply) == terms


@pytest.mark.parametrize("reply", ["", "   ", '["unclosed"', '{"no_terms": 1}', '[1, 2]'])
def test_unusable_replies_raise(reply):
    with pytest.raises(ValueError):
        parse_reply(reply)


def answer_by_query(body):
    """Reply with the expansion of whichever demo query appears in the prompt."""
    prompt = body["messages"][0]["content"]
    for query, terms in EXPANSIONS.items():
        if f"Query: {query}\n" in prompt:
            return ("json", terms)
    return ("text", "")


@pytest.fixture
def llm():
    server = LoopbackLLM()
    server.default = ("callable", answer_by_query)
    yield server
    server.close()


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    golden = write_jsonl(tmp_path / "golden.jsonl", [
        golden_row(f"q{i}", q, terms, domain="ecommerce") for i, (q, terms) in enumerate(EXPANSIONS.items())])
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Expand the search query for {domain} search ({intent}).\nQuery: {query}\n"
                      'Answer with a JSON list like {{"terms": [...]}} or a list.\n', encoding="utf-8")
    return golden, prompt, tmp_path / "store.duckdb"


def harness(llm, golden, prompt, db, *extra):
    args = ["harness", "--golden", str(golden), "--prompt", str(prompt), "--model", "sut-model",
            "--base-url", llm.url, "--db", str(db), "--drift-judge", "none", "--concurrency", "4", *extra]
    return CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "test-key"})


@pytest.mark.slow
def test_end_to_end_then_rerun_from_cache(llm, files):
    golden, prompt, db = files
    first = harness(llm, golden, prompt, db, "--json", "report.json")
    assert first.exit_code == 0, first.output + first.stderr
    assert llm.chat_calls == 4
    report = json.loads(open("report.json").read())
    assert report["summary"]["aggregate_f1"] == 1.0 and report["run"]["prompt_version"].startswith("p-")
    sent = llm.requests[0]["body"]["messages"][0]["content"]
    assert "for ecommerce search" in sent and '{"terms"' in sent  # {{ }} are literal braces
    run_id = report["evaluation_id"]
    outputs = store.harness_outputs(db, run_id)
    assert len(outputs) == 4 and set(outputs["error"].isna()) == {True}
    assert json.loads(store.get_run(db, run_id)["usage"])["calls"] == 4
    second = harness(llm, golden, prompt, db)
    assert second.exit_code == 0 and llm.chat_calls == 4  # zero new calls
    assert "0 calls, 4 from cache" in second.output


@pytest.mark.slow
def test_429_with_retry_after_and_500_are_retried(llm, files):
    golden, prompt, db = files
    llm.actions = [("status", 429, {"Retry-After": "0.05"}), ("status", 500, {})]
    result = harness(llm, golden, prompt, db)
    assert result.exit_code == 0, result.output
    assert llm.chat_calls == 6  # 4 queries + 2 retried failures


@pytest.mark.slow
def test_garbage_reply_is_an_errored_item_and_rerun_retries_only_it(llm, files):
    golden, prompt, db = files
    calls = {"n": 0}

    def flaky(body):
        if "Query: flu\n" in body["messages"][0]["content"] and calls["n"] < 99:
            calls["n"] += 1
            return ("text", '["unclosed json')
        return answer_by_query(body)
    llm.default = ("callable", flaky)
    result = harness(llm, golden, prompt, db, "--max-tries", "2", "--junit", "junit.xml")
    assert result.exit_code == 5  # incomplete (SPEC §3): an evaluation with errored items never passes
    assert "1 errored" in result.output
    assert "<error" in open("junit.xml").read()
    run_id = store.list_runs(db)["run_id"].iloc[0]
    kept = store.harness_outputs(db, run_id).set_index("query_id")
    assert kept.loc["q2", "reply"] == '["unclosed json'  # the unusable reply is kept for the record
    before = llm.chat_calls
    calls["n"] = 99  # the model behaves now
    rerun = harness(llm, golden, prompt, db)
    assert rerun.exit_code == 0
    assert llm.chat_calls - before == 1  # only the errored item was asked again


def test_timeouts_become_errored_items(llm, files):
    golden, prompt, db = files
    llm.default = ("sleep", 1.0)
    result = harness(llm, golden, prompt, db, "--timeout", "0.2", "--max-tries", "1", "--json", "r.json")
    assert result.exit_code == 5  # incomplete (SPEC §3)
    report = json.loads(open("r.json").read())
    assert report["summary"]["errored"] == 4
    assert all("timed out" in q["error"] for q in report["per_query_results"])


@pytest.mark.slow
def test_concurrency_bound_is_respected(llm, files, tmp_path):
    golden, prompt, db = files
    many = write_jsonl(tmp_path / "many.jsonl", [golden_row(f"m{i}", f"query number {i}", ["x"]) for i in range(24)])
    llm.delay = 0.05
    llm.default = ("json", ["x"])
    result = harness(llm, many, prompt, db, "--concurrency", "3")
    assert llm.chat_calls == 24
    assert llm.max_in_flight == 3, result.output


KILLED = """
import sys
from termgate.cli import main
sys.argv = ["termgate"] + sys.argv[1:]
main()
"""


@pytest.mark.slow
def test_resume_after_the_process_is_killed(llm, files, tmp_path):
    golden, prompt, db = files
    many = write_jsonl(tmp_path / "many.jsonl", [golden_row(f"m{i}", f"query number {i}", ["x"]) for i in range(30)])
    llm.delay = 0.15
    llm.default = ("json", ["x"])
    args = ["harness", "--golden", str(many), "--prompt", str(prompt), "--model", "sut", "--base-url", llm.url,
            "--db", str(db), "--drift-judge", "none", "--concurrency", "2"]
    proc = subprocess.Popen([sys.executable, "-c", KILLED, *args], env=dict(os.environ, OPENAI_API_KEY="k"))
    deadline = time.monotonic() + 30
    while llm.chat_calls < 24 and time.monotonic() < deadline:  # > 1 s of replies: at least one flush
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    answered_before_kill = llm.chat_calls
    assert 0 < answered_before_kill < 30
    result = CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "k"})
    assert result.exit_code == 0, result.output
    new_calls = llm.chat_calls - answered_before_kill
    assert new_calls < 30 - 4  # most finished work survived the kill
    assert new_calls >= 30 - answered_before_kill  # and nothing was answered twice from thin air


EXPANDER = '''
import asyncio

def expand(query, context):
    if query == "flu":
        raise RuntimeError("model offline")
    return {"heart attack": ["myocardial infarction", "mi"], "stroke": ["cerebrovascular accident", "cva"],
            "broken bone": [{"term": "fracture", "weight": 0.9}]}[query]

async def aexpand(query, context):
    await asyncio.sleep(0)
    return [query]
'''


def test_python_callable_sync_and_async(files, tmp_path):
    golden, _, db = files
    (tmp_path / "my_expander.py").write_text(EXPANDER, encoding="utf-8")
    result = CliRunner().invoke(main, ["harness", "--golden", str(golden), "--callable", "my_expander:expand",
                                       "--db", str(db), "--drift-judge", "none", "--json", "r.json"])
    report = json.loads(open("r.json").read())
    errored = [q for q in report["per_query_results"] if q["error"]]
    assert [q["query_id"] for q in errored] == ["q2"] and "model offline" in errored[0]["error"]
    assert result.exit_code == 5  # incomplete (SPEC §3)
    result = CliRunner().invoke(main, ["harness", "--golden", str(golden), "--callable", "my_expander:aexpand",
                                       "--no-store", "--drift-judge", "none", "--json", "a.json"])
    report = json.loads(open("a.json").read())
    assert report["per_query_results"][0]["generated_terms"] == ["heart attack"]


def test_prompt_with_unknown_placeholder_is_an_input_error(llm, files, tmp_path):
    golden, _, db = files
    bad = tmp_path / "bad.txt"
    bad.write_text("Expand {query} for {audience}", encoding="utf-8")
    result = harness(llm, golden, bad, db)
    assert result.exit_code == 2 and "bad.txt" in result.stderr and "audience" in result.stderr
    assert llm.chat_calls == 0


ASYNC_OBJECT = '''
class Expander:
    async def __call__(self, query, context):
        return [query.upper()]

expand = Expander()
'''


def test_async_callable_object(files, tmp_path):
    golden, _, db = files
    (tmp_path / "obj_expander.py").write_text(ASYNC_OBJECT, encoding="utf-8")
    result = CliRunner().invoke(main, ["harness", "--golden", str(golden), "--callable", "obj_expander:expand",
                                       "--no-store", "--drift-judge", "none", "--json", "o.json"])
    report = json.loads(open("o.json").read())
    assert report["summary"]["errored"] == 0, result.output
    assert report["per_query_results"][0]["generated_terms"] == ["heart attack"]


def test_the_reader_knows_each_replys_query(llm, files):
    """Seventh round: run_prompt gives the text reader each item's query, so a label that is
    the query gives only its values (docs/harness.md step 5), and a record naming it is the
    thing described; the same shape under another label keeps the label as a term."""
    golden, prompt, db = files

    def labelled(body):
        query = body["messages"][0]["content"].split("Query: ", 1)[1].split("\n", 1)[0]
        return ("text", f"1. {query.title()} - alpha, beta\n2. Gamma - delta, epsilon")
    llm.default = ("callable", labelled)
    result = harness(llm, golden, prompt, db)
    assert result.exit_code == 1 and "0 errored" in result.output  # read, and scored: these are no golden terms
    outputs = store.harness_outputs(db, store.list_runs(db)["run_id"].iloc[0])
    for terms in outputs["terms"]:
        assert sorted(terms) == ["alpha", "beta", "delta", "epsilon", "gamma"]


def test_a_teams_own_parser_gets_the_reply_alone():
    """for_query binds the query only for a reader that takes it (termgate's own); a
    `--parser` keeps its one-argument call and its attributes."""
    from termgate.llm.harness import for_query, reply_reader

    def mine(text):
        return [text.strip()]
    own = reply_reader(mine)
    assert for_query(own, "heart attack") is own
    bound = for_query(parse_reply, "cheap flights")
    assert bound is not parse_reply and bound.complete is parse_reply.complete and bound.repair == parse_reply.repair
    reply = "1. Cheap flights - cheap, fleets"
    assert set(bound(reply)) == {"cheap", "fleets"}  # the query as the label gives its list
    assert set(parse_reply(reply)) == {"cheap flights", "cheap", "fleets"}  # unknown query: the label is a term
