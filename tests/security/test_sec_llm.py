"""Issue 13, LLM faults and keys: a 200 whose body is not JSON is a retried fault and then
an errored item naming it (never a traceback), on every route that uses termgate's client;
a key inside a base URL never reaches the store, a report or the terminal (SPEC §5)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import duckdb
import openai
import pytest
from click.testing import CliRunner

from termgate.drift import llm_judge
from termgate.cli import main
from termgate.evaluators import LLMJudgeEvaluator
from termgate.llm.client import AsyncLLMClient, LLMCallError, LLMConfig, request_key
from termgate.llm.prompt_eval import PromptEvaluator
from termgate.redact import redact_text, redact_url

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM

HTML = ("raw", 200, "text/html; charset=utf-8", "<html><body><h1>Sign in to the proxy</h1></body></html>")
TRUNCATED = ("raw", 200, "application/json", '{"id": "x", "object": "chat.completion", "choi')
NOT_A_COMPLETION = ("raw", 200, "application/json", '{"status": "ok"}')
EXPANSIONS = {"heart attack": ["myocardial infarction", "mi"], "flu": ["influenza"]}


@pytest.fixture
def llm():
    server = LoopbackLLM()
    yield server
    server.close()


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "golden.jsonl", [golden_row(f"q{i}", q, terms, domain="ecommerce")
                                           for i, (q, terms) in enumerate(EXPANSIONS.items())])
    (tmp_path / "prompt.txt").write_text("Expand for {domain} ({intent}).\nQuery: {query}\n", encoding="utf-8")
    (tmp_path / "termgate.toml").write_text("[llm]\nbackoff = 0.001\n", encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(tmp_path / "termgate.toml"))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    return tmp_path


def harness(base_url: str, *extra: str, env: dict | None = None):
    args = ["harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt", "--model", "sut-model",
            "--base-url", base_url, "--drift-judge", "none", "--concurrency", "2", "--json", "r.json", *extra]
    return CliRunner().invoke(main, args, env={"OPENAI_API_KEY": "test-key", **(env or {})})


# ---------------------------------------------------------------- a 200 that is not JSON


@pytest.mark.parametrize("action,named", [
    (HTML, "non-JSON response body ('<html><body><h1>Sign in to the proxy</h1></body></html>')"),
    (TRUNCATED, "non-JSON response body ("),
    (NOT_A_COMPLETION, "response body is not a chat completion (no choices)"),
])
def test_non_json_200_is_retried_then_an_errored_item(llm, files, action, named):
    llm.default = action
    result = harness(llm.url, "--max-tries", "3", "--no-store")
    # exit code: see test_sec_chain (errored runs exit 5, SPEC §3)
    assert "Traceback" not in result.stdout + result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert llm.chat_calls == 3 * len(EXPANSIONS)  # termgate's tries, exactly: the client's own are off
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    assert report["summary"]["errored"] == len(EXPANSIONS)
    assert report["gate"]["decision"] == "fail"
    for row in report["per_query_results"]:
        assert row["error"].startswith(named) and row["error"].endswith(" after 3 tries"), row["error"]
        assert row["failure_reasons"][0] == f"error: {row['error']}"


def test_non_json_200_then_a_good_reply_recovers(llm, files):
    """Retried like a 5xx: one HTML page, then the model answers."""
    replies = iter([HTML, HTML])

    def answer(body):
        nxt = next(replies, None)
        if nxt is not None:
            return nxt
        prompt = body["messages"][-1]["content"]
        return ("json", next(t for q, t in EXPANSIONS.items() if f"Query: {q}\n" in prompt))
    llm.default = ("callable", answer)
    result = harness(llm.url, "--max-tries", "3", "--no-store")
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    assert result.exit_code == 0 and report["summary"]["errored"] == 0, result.stderr
    assert llm.chat_calls == len(EXPANSIONS) + 2


def test_first_and_last_fault_are_both_named(llm):
    llm.actions = [HTML, ("text", "")]
    client = AsyncLLMClient(LLMConfig(model="m", base_url=llm.url, max_tries=2, backoff=0.001))

    def parse(text):
        if not text:
            raise ValueError("empty reply")
        return text

    with pytest.raises(LLMCallError) as info:
        asyncio.run(client.chat([{"role": "user", "content": "q"}], parse))
    assert str(info.value) == ("unparseable reply: empty reply after 2 tries; first try: non-JSON response body "
                               "('<html><body><h1>Sign in to the proxy</h1></body></html>')")


def test_connection_failure_names_its_cause():
    client = AsyncLLMClient(LLMConfig(model="m", base_url="http://127.0.0.1:9/v1", max_tries=1))
    with pytest.raises(LLMCallError) as info:
        asyncio.run(client.chat([{"role": "user", "content": "q"}], str))
    message = str(info.value)
    assert message.startswith("connection failed: ") and "Connection error." not in message, message


def test_prompt_eval_judge_on_a_non_json_200_is_a_failed_case(llm, tmp_path):
    llm.default = HTML
    dataset = tmp_path / "d.json"
    dataset.write_text(json.dumps({"task_description": "Echo", "prompt_inputs_spec": {"text": "t"},
                                   "cases": [{"scenario": "s", "prompt_inputs": {"text": "a"},
                                              "solution_criteria": ["echoes"]}]}), encoding="utf-8")
    config = LLMConfig(model="judge", base_url=llm.url, max_tries=2, backoff=0.001)
    results = PromptEvaluator(config).run_evaluation(lambda inputs: inputs["text"], dataset)
    error = results.results[0].error
    assert "non-JSON response body" in error and "after 2 tries" in error, error
    assert llm.chat_calls == 2


@pytest.mark.parametrize("action", [HTML, TRUNCATED])
def test_evaluator_judge_names_a_non_json_body(llm, action):
    """The LLMJudgeEvaluator uses the caller's own client: no retries of ours, but the
    error says what came back, not 'no score in the reply'."""
    llm.default = action
    for client in (openai.OpenAI(base_url=llm.url, api_key="x", max_retries=0),
                   openai.AsyncOpenAI(base_url=llm.url, api_key="x", max_retries=0)):
        with pytest.raises(LLMCallError, match="non-JSON response body"):
            LLMJudgeEvaluator(client, "judge-model").evaluate("Paris", reference="Paris", input="Capital?")


# ---------------------------------------------------------------- keys inside URLs

SECRETS = ("PWSECRET123", "QSECRET456", "ENVSECRET789", "JUDGESECRET0")


def _secret_url(url: str, query_name: str = "api-key", secret: str = "QSECRET456") -> str:
    return url.replace("http://", "http://bob:PWSECRET123@") + f"?{query_name}={secret}&api-version=2024-06-01"


def _answer_with_drift(body):
    """The harness gets each query's terms plus 'banana'; the drift judge calls it drift."""
    if body["messages"][0]["content"] == llm_judge.SYSTEM:
        return ("json", {"verdicts": [{"term": t, "drift": True, "reason": "unrelated"}
                                      for t in json.loads(body["messages"][1]["content"])["candidates"]]})
    prompt = body["messages"][-1]["content"]
    return ("json", next(t for q, t in EXPANSIONS.items() if f"Query: {q}\n" in prompt) + ["banana"])


def _store_text(db: Path) -> str:
    """Every value of every table, as text: DuckDB compresses strings on disk, so the file's
    bytes alone could hide a stored key."""
    out = []
    with duckdb.connect(str(db), read_only=True) as con:
        for (table,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall():
            out.append(repr(con.execute(f'SELECT * FROM "{table}"').fetchall()))
    return "\n".join(out)


def test_a_key_in_the_base_url_is_never_stored_or_printed(llm, files):
    llm.default = ("callable", _answer_with_drift)
    url = _secret_url(llm.url)
    (files / "termgate.toml").write_text(f'[llm]\nbackoff = 0.001\nbase_url = "{_secret_url(llm.url, "key", "JUDGESECRET0")}"\n'
                                         'model = "judge-model"\n', encoding="utf-8")
    db = files / "store.duckdb"
    result = harness(url, "--drift-judge", "llm", "--db", str(db), "--html", "r.html", "--junit", "r.xml",
                     env={"OPENAI_API_KEY": "ENVSECRET789"})
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    assert report["summary"]["errored"] == 0, report  # the calls went through, with the key
    assert llm.chat_calls == 2 * len(EXPANSIONS)  # the harness and the drift judge both asked
    assert any("QSECRET456" in r["path"] for r in llm.requests)  # the key went to its own endpoint
    assert report["run"]["drift_judge_config"]["base_url"] == redact_url(_secret_url(llm.url, "key", "JUDGESECRET0"))
    shown = [result.stdout, result.stderr, Path("r.json").read_text(encoding="utf-8"),
             Path("r.html").read_text(encoding="utf-8"), Path("r.xml").read_text(encoding="utf-8"), _store_text(db)]
    raw = db.read_bytes() + b"".join(p.read_bytes() for p in files.glob("store.duckdb*"))
    for secret in SECRETS:
        assert all(secret not in text for text in shown), secret
        assert secret.encode() not in raw, secret


def test_an_http_error_page_echoing_the_url_is_redacted(llm, files):
    """A proxy's 404 page that repeats the request URL, key and all: the errored item's
    reason is printed and stored, so the key is blanked first."""
    url = _secret_url(llm.url)
    pages = iter([("raw", 404, "text/html", f"<p>No route for {url}/chat/completions (key QSECRET456)</p>"),
                  ("raw", 401, "application/json", json.dumps({"error": {"message": "Incorrect API key "
                                                                         "ENVSECRET789 for " + url}}))])
    llm.default = ("callable", lambda body: next(pages))
    result = harness(url, "--max-tries", "1", "--no-store", env={"OPENAI_API_KEY": "ENVSECRET789"})
    report = json.loads(Path("r.json").read_text(encoding="utf-8"))
    errors = sorted(row["error"] for row in report["per_query_results"])
    assert errors[0].startswith("HTTP 401: 'Incorrect API key *** for http://***@127.0.0.1:"), errors
    assert errors[1].startswith("HTTP 404: '<p>No route for http://***@127.0.0.1:"), errors
    for secret in SECRETS:
        assert secret not in json.dumps(report) + result.stdout + result.stderr


def test_the_cache_key_does_not_depend_on_the_key():
    """Same endpoint, model and messages: one cache entry, whichever key the URL carries."""
    messages, params = [{"role": "user", "content": "q"}], {"temperature": 0.0}
    assert (request_key("https://h/v1?api-key=A1234", "m", messages, params)
            == request_key("https://h/v1?api-key=B5678", "m", messages, params))
    assert (request_key("https://h/v1", "m", messages, params)
            != request_key("https://other/v1", "m", messages, params))


@pytest.mark.parametrize("url,shown", [
    ("https://user:sk-abc123@host:8443/v1", "https://***@host:8443/v1"),
    ("https://sk-abc123@host/v1", "https://***@host/v1"),
    ("https://host/openai?api-key=k1234&api-version=2024", "https://host/openai?api-key=***&api-version=2024"),
    ("https://host/v1?key=k1234", "https://host/v1?key=***"),
    ("https://host/v1?token=k1234&access_token=k5678", "https://host/v1?token=***&access_token=***"),
    ("https://host/v1?api_key=k1234&code=c1234&sig=s1234", "https://host/v1?api_key=***&code=***&sig=***"),
    ("https://host/v1#access_token=k1234", "https://host/v1#access_token=***"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),  # nothing to hide: unchanged
    ("https://host/v1?api-version=2024-06-01", "https://host/v1?api-version=2024-06-01"),
    (None, None),
])
def test_redact_url(url, shown):
    assert redact_url(url) == shown


def test_redact_text_blanks_urls_and_given_secrets():
    text = "GET https://u:pw-9876@h/v1?key=abcd1234 failed; sent pw-9876 and abcd1234 and sk-env-1"
    out = redact_text(text, ["sk-env-1"])
    assert not re.search("pw-9876|abcd1234|sk-env-1", out), out
    assert "https://***@h/v1?key=***" in out
