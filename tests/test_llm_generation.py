"""Issue 35 items 3, 4, 5 and 8 (the setting): generation settings on every call
(max_tokens, concurrency, structured_output), a reply cut off at max_tokens, a timed-out
call abandoned so the server stops, structured output for servers that refuse
`json_schema`, and retries that can change the answer. Against the scripted server
(tests/llm_server.py); tests/test_model_*.py meet the real one."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.llm.client import DEFAULT_MAX_TOKENS, AsyncLLMClient, LLMCallError, LLMConfig, StructuredOutputRefused
from termgate.llm.harness import TEXT_REPAIR, list_complete, parse_reply
from termgate.llm.stream import CUT_SHORT

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM

QUERIES = {"heart attack": ["myocardial infarction", "mi"], "flu": ["influenza"], "stroke": ["cva"]}
LLAMA_CPP_500 = ("status", 500, {}, "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
                 "'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': "
                 "'json_schema'}\n\n  File \"llama_cpp/server/app.py\", line 376, in create_chat_completion")
"""llama-cpp-python's answer to OpenAI's json_schema form (its server, as run here): HTTP 500 naming the format."""
SCHEMA_PARAMS = {"temperature": 0, "response_format": {"type": "json_schema", "json_schema": {"schema": {}}}}


@pytest.fixture
def llm():
    server = LoopbackLLM()
    server.default = ("callable", by_query)
    yield server
    server.close()


def by_query(body):
    """Each golden query's expected terms, one per line (a whole list)."""
    prompt = body["messages"][0]["content"]
    query = next(q for q in QUERIES if f"Query: {q}\n" in prompt)
    return ("text", "\n".join(QUERIES[query]) + "\n")


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    write_jsonl(tmp_path / "golden.jsonl", [golden_row(f"q{i}", q, t) for i, (q, t) in enumerate(QUERIES.items())])
    (tmp_path / "prompt.txt").write_text("Give synonyms.\nQuery: {query}\n", encoding="utf-8")
    config(tmp_path, monkeypatch)
    return tmp_path


def config(folder: Path, monkeypatch, text: str = "") -> Path:
    path = folder / "termgate.toml"
    path.write_text("[llm]\nbackoff = 0.001\n" + text, encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(path))
    return path


def harness(llm, *extra, base_url: bool = True):
    """The harness at the scripted server (base_url False: the endpoint and model come from elsewhere)."""
    args = ["harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt", "--drift-judge", "none",
            "--no-store", "--json", "r.json", *(["--base-url", llm.url, "--model", "m"] if base_url else []), *extra]
    return CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "k"})


def report() -> dict:
    return json.loads(Path("r.json").read_text(encoding="utf-8"))


def errors() -> dict[str, str | None]:
    return {row["query_id"]: row["error"] for row in report()["per_query_results"]}


def chat(llm, parse=str.strip, max_tries: int = 4, params: dict | None = None,
         **config) -> tuple[AsyncLLMClient, object]:
    """One call through a fresh client: (client, result or the exception raised)."""
    client = AsyncLLMClient(LLMConfig(model="m", base_url=llm.url, max_tries=max_tries, backoff=0.001, **config))

    async def go():
        try:
            return await client.chat([{"role": "user", "content": "Query: flu\n"}], parse, params)
        except Exception as exc:  # noqa: BLE001 - the test looks at it
            return exc
        finally:
            await client.aclose()
    return client, asyncio.run(go())


# ---------------------------------------------------------------- max_tokens on every call


def test_max_tokens_is_sent_with_its_documented_default(llm, files):
    result = harness(llm)
    assert result.exit_code == 0, result.output
    assert {r["body"]["max_tokens"] for r in llm.requests} == {DEFAULT_MAX_TOKENS} == {512}


def test_max_tokens_from_the_settings_and_the_flag_and_in_the_prompt_version(llm, files, monkeypatch):
    config(files, monkeypatch, "max_tokens = 64\n")
    assert harness(llm).exit_code == 0
    setting = report()["run"]["prompt_version"]
    assert harness(llm, "--max-tokens", "32").exit_code == 0
    flag = report()["run"]["prompt_version"]
    assert [r["body"]["max_tokens"] for r in llm.requests] == [64] * 3 + [32] * 3
    assert setting != flag  # max_tokens is part of the request: of the prompt version and the cache key


def test_the_library_sends_max_tokens_unless_the_call_names_it(llm):
    llm.default = ("text", "x")
    client = AsyncLLMClient(LLMConfig(model="m", base_url=llm.url, max_tokens=40))

    async def go():
        await client.chat([{"role": "user", "content": "a"}], str)
        await client.chat([{"role": "user", "content": "b"}], str, {"temperature": 0, "max_tokens": 7})
        await client.aclose()
    asyncio.run(go())
    assert [r["body"]["max_tokens"] for r in llm.requests] == [40, 7]
    assert LLMConfig.from_settings({"model": "m", "base_url": llm.url, "max_tokens": 9, "concurrency": 1,
                                    "structured_output": "json_object"}) == LLMConfig(
        model="m", base_url=llm.url, max_tokens=9, concurrency=1, structured_output="json_object")


@pytest.mark.parametrize("setting, field", [
    ('max_tokens = "lots"', "llm.max_tokens"),
    ("max_tokens = 0", "llm.max_tokens"),
    ("concurrency = true", "llm.concurrency"),
    ("concurrency = 1000", "llm.concurrency"),
    ('structured_output = "xml"', "llm.structured_output"),
])
def test_a_bad_generation_setting_is_exit_2_naming_file_line_and_field(llm, files, monkeypatch, setting, field):
    path = config(files, monkeypatch, f"model = \"m\"\n{setting}\n")
    result = harness(llm)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{path}:4: {field}: must be"), line
    assert llm.chat_calls == 0 and not Path("r.json").exists()


def test_a_bad_generation_setting_of_an_endpoint_names_its_line(llm, files, monkeypatch):
    path = config(files, monkeypatch, f'\n[llm.endpoints.local]\nbase_url = "{llm.url}"\nmodel = "m"\n'
                                      "concurrency = 0\n")
    result = harness(llm, "--endpoint", "local", base_url=False)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"{path}:7: llm.endpoints.local.concurrency: must be a whole number"), line


def test_an_endpoint_uses_its_own_generation_settings(llm, files, monkeypatch):
    config(files, monkeypatch, f'max_tokens = 99\nconcurrency = 8\n\n[llm.endpoints.local]\nbase_url = "{llm.url}"\n'
                               'model = "small"\nmax_tokens = 48\nconcurrency = 1\nstructured_output = "json_object"\n')
    llm.delay = 0.05
    llm.default = ("json", {"terms": ["x"]})
    result = harness(llm, "--endpoint", "local", "--response-format", "json", base_url=False)
    assert result.exit_code in (0, 1), result.output
    bodies = [r["body"] for r in llm.requests]
    assert {b["max_tokens"] for b in bodies} == {48} and {b["model"] for b in bodies} == {"small"}
    assert llm.max_in_flight == 1  # the endpoint's concurrency
    assert all(b["response_format"]["type"] == "json_object" and b["response_format"]["schema"]["required"]
               == ["terms"] for b in bodies)  # its structured output form from the start: no json_schema sent


# ---------------------------------------------------------------- concurrency


@pytest.mark.parametrize("toml, flag, expected", [("concurrency = 2\n", [], 2), ("concurrency = 2\n", ["3"], 3)])
def test_concurrency_from_the_settings_and_the_flag_overrides(llm, files, monkeypatch, tmp_path, toml, flag, expected):
    write_jsonl(tmp_path / "golden.jsonl", [golden_row(f"m{i}", f"query {i}", ["x"]) for i in range(12)])
    config(files, monkeypatch, toml)
    llm.delay = 0.05
    llm.default = ("text", "x\n")
    result = harness(llm, *(["--concurrency", *flag] if flag else []))
    assert result.exit_code == 0, result.output
    assert llm.chat_calls == 12 and llm.max_in_flight == expected


# ---------------------------------------------------------------- cut off at max_tokens


def test_a_cut_off_list_is_errored_and_not_asked_again_at_temperature_0(llm, files):
    llm.default = ("text", "myocardial infarction\nmi\nheart att", {"finish_reason": "length", "completion_tokens": 12})
    result = harness(llm, "--max-tokens", "12", "--concurrency", "1")
    assert result.exit_code == 5, result.output
    assert set(errors().values()) == {"cut off at 12 tokens (the reply reached max_tokens before it finished) "
                                      "after 1 try"}
    assert llm.chat_calls == 3  # the same request would be cut off at the same place


def test_a_cut_that_fell_between_lines_or_after_the_json_is_a_whole_reply(llm, files):
    def cut(body):
        prompt = body["messages"][0]["content"]
        text = ('{"terms": ["influenza"]} and more wor' if "flu" in prompt
                else by_query(body)[1])  # the list's last line ended before the cut
        return ("text", text, {"finish_reason": "length"})
    llm.default = ("callable", cut)
    result = harness(llm)
    assert result.exit_code == 0, result.output
    assert set(errors().values()) == {None} and report()["summary"]["aggregate_f1"] == 1.0


@pytest.mark.parametrize("text, whole", [
    ("sofa\ncouch\n", True), ("sofa\ncouch \t", False), ("- sofa\n- cou", False), ("sofa, couch, sett", False),
    ('["sofa", "couch"]', True), ('```json\n{"terms": ["sofa"]}\n```\nThese are', True), ('["sofa", "cou', False),
])
def test_what_a_whole_reply_is(text, whole):
    assert list_complete(text) is whole


def test_a_cut_off_reply_is_retried_when_sampling(llm):
    llm.actions = [("text", "sofa\ncou", {"finish_reason": "length"})]
    llm.default = ("text", "sofa\ncouch\n", {"finish_reason": "stop"})
    client, result = chat(llm, parse_reply, temperature=0.7)
    assert result[0] == {"sofa": 1.0, "couch": 1.0} and llm.chat_calls == 2


def test_a_cut_off_reply_is_kept_for_the_record(llm):
    llm.default = ("text", "sofa\ncou", {"finish_reason": "length", "completion_tokens": 0})  # uncounted: max_tokens
    _, error = chat(llm, parse_reply, max_tokens=20)
    assert isinstance(error, LLMCallError) and error.reply == "sofa\ncou"
    assert str(error) == "cut off at 20 tokens (the reply reached max_tokens before it finished) after 1 try"


# ---------------------------------------------------------------- a timed-out call is abandoned


def test_a_timed_out_stream_is_abandoned_and_the_server_sees_it(llm):
    llm.default = ("slow", 400, 0.05)  # a model that would stream for 20 s
    _, error = chat(llm, max_tries=1, timeout=0.3)
    assert isinstance(error, LLMCallError) and str(error) == "timed out (0.3 s) after 1 try"
    for _ in range(200):  # the server notices at its next write
        if llm.disconnects:
            break
        time.sleep(0.02)
    assert llm.disconnects == 1 and llm.chat_calls == 1
    assert llm.pieces_sent < 400  # it stopped generating


def test_a_timed_out_try_is_retried_as_the_same_request(llm):
    llm.actions = [("slow", 400, 0.05)]
    llm.default = ("text", "influenza")
    client, result = chat(llm, timeout=0.3)
    assert result[0] == "influenza" and llm.chat_calls == 2
    assert llm.requests[0]["body"] == llm.requests[1]["body"]  # unanswered, so not asked twice


def test_a_server_that_ignores_stream_answers_one_json_body(llm, files):
    llm.sse = False
    result = harness(llm)
    assert result.exit_code == 0, result.output
    assert all(r["body"]["stream"] is True for r in llm.requests) and report()["summary"]["aggregate_f1"] == 1.0


@pytest.mark.parametrize("events, fault", [
    ("data: {not json\n\n", "non-JSON stream event ("),
    ('data: {"object": "x"}\n\n', "stream event is not a chat completion chunk (no choices)"),
    ('data: {"error": {"message": "model crashed"}}\n\n', "stream error: 'model crashed'"),
])
def test_a_broken_stream_is_a_retried_fault(llm, events, fault):
    llm.actions = [("raw", 200, "text/event-stream", events)] * 2
    _, error = chat(llm, max_tries=2)
    assert isinstance(error, LLMCallError) and str(error).startswith(fault) and str(error).endswith("after 2 tries")
    assert llm.chat_calls == 2


def test_a_stream_that_ends_without_a_finish_reason_is_cut_short_never_read(llm):
    """llama-cpp-python ends a streamed answer with [DONE] and no finish reason when another
    request waits: its partial text is no answer, even when it parses."""
    llm.actions = [("text", "influenza\ngri", {"finish_reason": None})] * 2
    _, error = chat(llm, max_tries=2)
    assert isinstance(error, LLMCallError) and str(error).startswith(CUT_SHORT), error
    assert llm.chat_calls == 2


def test_an_answer_cut_short_while_others_wait_drops_the_client_to_one_call_at_a_time(llm):
    import threading

    both_in, lock, seen = threading.Barrier(2, timeout=10), threading.Lock(), []

    def interrupting(body):  # the first two calls are in flight together; the first is cut short
        with lock:
            seen.append(body)
            order = len(seen)
        if order > 2:
            return ("text", "influenza\n")
        both_in.wait()
        if order == 2:
            time.sleep(0.3)  # the second is still running when the first comes back
            return ("text", "influenza\n")
        return ("text", "influ", {"finish_reason": None})
    llm.default = ("callable", interrupting)
    client = AsyncLLMClient(LLMConfig(model="m", base_url=llm.url, backoff=0.001, concurrency=2))

    async def go():
        try:
            return await asyncio.gather(*(client.chat([{"role": "user", "content": f"Query: q{i}\n"}], str.strip)
                                          for i in range(2)))
        finally:
            await client.aclose()
    results = asyncio.run(go())
    assert [text for _, text, _ in results] == ["influenza\n"] * 2  # the cut-short one was asked again
    assert client.one_at_a_time and "one request at a time" in client.one_at_a_time
    assert llm.chat_calls == 3


def test_no_drop_to_one_at_a_time_when_nothing_else_waits(llm):
    llm.actions = [("text", "influ", {"finish_reason": None})]
    llm.default = ("text", "influenza grippe")
    client, result = chat(llm)
    assert result[1] == "influenza grippe" and llm.chat_calls == 2
    assert client.one_at_a_time is None


def test_stream_usage_is_counted(llm):
    llm.default = ("text", "influenza grippe", {"completion_tokens": 3})
    client, _ = chat(llm)
    assert (client.prompt_tokens, client.completion_tokens) == (10, 3)
    assert llm.requests[0]["body"]["stream_options"] == {"include_usage": True}


# ---------------------------------------------------------------- structured output


def schema_or_500(body):
    """llama.cpp: json_schema refused with HTTP 500; json_object with the schema answered."""
    if body["response_format"]["type"] == "json_schema":
        return LLAMA_CPP_500
    return ("json", {"terms": by_query(body)[1].split("\n")[:-1]})


def test_a_refused_json_schema_switches_once_to_json_object(llm, files):
    llm.default = ("callable", schema_or_500)
    result = harness(llm, "--response-format", "json", "--concurrency", "1")
    assert result.exit_code == 0, result.output
    forms = [r["body"]["response_format"] for r in llm.requests]
    assert [f["type"] for f in forms] == ["json_schema"] + ["json_object"] * 3  # 4 calls, not 3 x 4 tries
    assert forms[1]["schema"]["required"] == ["terms"]
    assert "refused the json_schema response format (HTTP 500: '1 validation error: " in result.stderr
    assert report()["summary"]["aggregate_f1"] == 1.0


def test_a_500_not_about_the_format_is_still_retried(llm):
    llm.actions = [("status", 500, {}, "out of memory")]
    llm.default = ("json", {"terms": ["flu"]})
    _, result = chat(llm, json.loads, params=SCHEMA_PARAMS)
    assert result[0] == {"terms": ["flu"]}
    assert [r["body"]["response_format"]["type"] for r in llm.requests] == ["json_schema", "json_schema"]


def test_both_forms_refused_is_one_line_exit_2_and_nothing_stored(llm, files):
    def refuse(body):
        if body["response_format"]["type"] == "json_schema":
            return LLAMA_CPP_500
        return ("status", 400, {}, "'schema' is not supported in response_format")
    llm.default = ("callable", refuse)
    db = files / "store.duckdb"
    args = ["harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt", "--model", "m", "--drift-judge", "none",
            "--base-url", llm.url, "--db", str(db), "--json", "r.json", "--html", "r.html",
            "--response-format", "json", "--concurrency", "1"]
    result = CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "k"})
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.stderr.splitlines() if not line.startswith("endpoint:")]
    assert line.startswith(f"error: {llm.url} refused --response-format json for model 'm' (json_schema: HTTP 500: "
                           "'1 validation error: {\\'type\\': \\'literal_error\\'"), line
    assert "then json_object with the schema: HTTP 400: \"'schema' is not supported in response_format\"" in line
    assert llm.chat_calls == 2  # one of each form, then the run stopped
    assert not Path("r.json").exists() and not Path("r.html").exists()
    assert not db.exists() or store.list_runs(str(db)).empty


def test_the_library_names_both_refusals_and_keeps_the_body(llm):
    llm.default = LLAMA_CPP_500
    _, refused = chat(llm, json.loads, params=SCHEMA_PARAMS)
    assert isinstance(refused, StructuredOutputRefused) and llm.chat_calls == 2
    assert "json_schema: HTTP 500: '1 validation error: " in refused.said
    assert "then json_object with the schema: HTTP 500: '1 validation error: " in refused.said
    llm.default = ("status", 500, {}, "out of memory")  # without a response format: retried, the body kept
    _, error = chat(llm, max_tries=2)
    assert isinstance(error, LLMCallError) and str(error) == "HTTP 500 after 2 tries" and error.body == "'out of memory'"


def test_a_schema_that_worked_is_not_switched_by_a_later_4xx(llm):
    llm.actions = [("json", {"terms": ["a"]}), ("status", 400, {}, "context length exceeded")]
    client = AsyncLLMClient(LLMConfig(model="m", base_url=llm.url, backoff=0.001, concurrency=1))
    async def go():
        first = await client.chat([{"role": "user", "content": "a"}], json.loads, SCHEMA_PARAMS)
        try:
            await client.chat([{"role": "user", "content": "b"}], json.loads, SCHEMA_PARAMS)
        except LLMCallError as exc:
            return first, exc
        finally:
            await client.aclose()
    first, error = asyncio.run(go())
    assert str(error) == "HTTP 400: 'context length exceeded'" and error.status == 400
    assert [r["body"]["response_format"]["type"] for r in llm.requests] == ["json_schema", "json_schema"]


# ---------------------------------------------------------------- retries that can change the answer


def test_an_unparseable_reply_is_retried_once_with_the_repair_hint_at_temperature_0(llm, files):
    llm.default = ("text", "I think a heart attack is a serious thing.")  # prose: no terms
    result = harness(llm, "--concurrency", "1")
    assert result.exit_code == 5, result.output
    assert llm.chat_calls == 6  # each query twice of 4 tries: the plain request, then the repaired one
    plain, repaired = [r["body"]["messages"] for r in llm.requests if "Query: flu" in r["body"]["messages"][0]["content"]]
    assert repaired[-1]["content"] == plain[-1]["content"].rstrip() + "\n\n" + TEXT_REPAIR
    assert len(repaired) == len(plain)  # the hint joins the user's message: roles still alternate
    assert all(e.endswith("after 2 tries") for e in errors().values())


def test_the_repaired_request_can_succeed(llm, files):
    def answer(body):
        if TEXT_REPAIR in body["messages"][-1]["content"]:
            return by_query(body)
        return ("text", "")
    llm.default = ("callable", answer)
    result = harness(llm)
    assert result.exit_code == 0, result.output
    assert llm.chat_calls == 6 and report()["summary"]["aggregate_f1"] == 1.0


def test_without_a_repair_hint_an_unparseable_reply_is_not_asked_again_at_temperature_0(llm):
    llm.default = ("text", "")

    def parse(text):
        raise ValueError("empty")
    _, error = chat(llm, parse)
    assert str(error) == "unparseable reply: empty after 1 try" and llm.chat_calls == 1
    llm.requests.clear()
    _, error = chat(llm, parse, max_tries=3, temperature=0.8)  # sampling: another try may differ
    assert str(error) == "unparseable reply: empty after 3 tries" and llm.chat_calls == 3


def test_identical_prompts_share_one_call(llm, files, tmp_path):
    write_jsonl(tmp_path / "golden.jsonl", [golden_row("a", "flu", ["influenza"]), golden_row("b", "flu", ["influenza"]),
                                            golden_row("c", "stroke", ["cva"])])
    result = harness(llm)
    assert result.exit_code == 0, result.output
    assert llm.chat_calls == 2 and "2 calls, 1 from cache" in result.output
    assert report()["summary"]["aggregate_f1"] == 1.0


def test_identical_prompts_share_an_error_too(llm, files, tmp_path):
    write_jsonl(tmp_path / "golden.jsonl", [golden_row("a", "flu", ["influenza"]), golden_row("b", "flu", ["influenza"])])
    llm.default = ("text", "")
    result = harness(llm)
    assert result.exit_code == 5 and llm.chat_calls == 2  # the plain and the repaired request, once for both
    assert errors()["a"] == errors()["b"] == "unparseable reply: empty after 2 tries"


def test_repeat_at_temperature_0_keeps_its_warning_and_its_calls(llm, files):
    result = harness(llm, "--repeat", "2")
    assert "warning: --repeat 2 at temperature 0" in result.stderr
    assert llm.chat_calls == 6  # each repeat is its own sample, by its own rule
