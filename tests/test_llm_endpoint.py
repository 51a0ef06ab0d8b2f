"""Issue 31 item 12: there is no default remote endpoint. `harness --prompt`, `prompt-eval`,
the llm (and hybrid) drift judge and the openai embedder call only an endpoint the user
named (--base-url, OPENAI_BASE_URL, `[llm] base_url`), else exit 2 with one line saying how:
one rule, llm.client.endpoint_url."""

from __future__ import annotations

import asyncio

import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.errors import UsageError
from termgate.llm.client import AsyncLLMClient, LLMConfig, endpoint_url
from termgate.llm.prompt_eval import PromptEvaluator

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM

SAYS_HOW = "no LLM endpoint named, and termgate has no default one: "


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A golden set, a prompt, a dataset, a config with no endpoint, and no OPENAI_BASE_URL."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leave")
    write_jsonl(tmp_path / "golden.jsonl", [golden_row("q1", "sofa", ["couch"])])
    write_jsonl(tmp_path / "generated.jsonl", [{"query_id": "q1", "terms": ["couch", "lamp"]}])
    (tmp_path / "prompt.txt").write_text("Expand: {query}\n", encoding="utf-8")
    (tmp_path / "p.txt").write_text("{text}", encoding="utf-8")
    (tmp_path / "cases.json").write_text(
        '{"task_description": "Echo", "prompt_inputs_spec": {"text": "t"}, "cases": [{"scenario": "s", '
        '"prompt_inputs": {"text": "a"}, "solution_criteria": ["echoes"]}]}', encoding="utf-8")
    (tmp_path / "termgate.toml").write_text('[llm]\nmodel = "m"\n', encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(tmp_path / "termgate.toml"))
    return tmp_path


@pytest.mark.parametrize("args, how", [
    (["harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt", "--drift-judge", "none", "--no-store"],
     "give --base-url URL, set OPENAI_BASE_URL, or set base_url under [llm] in termgate.toml"),
    (["prompt-eval", "generate", "--task", "t", "--inputs", "text=t", "--out", "new.json", "--no-store"],
     "give --base-url URL, "),
    (["prompt-eval", "run", "--dataset", "cases.json", "--prompt", "p.txt", "--no-store"], "give --base-url URL, "),
    (["evaluate", "--golden", "golden.jsonl", "--generated", "generated.jsonl", "--drift-judge", "llm",
      "--no-store"], "the llm drift judge: " + SAYS_HOW + "set OPENAI_BASE_URL, or set base_url under [llm]"),
    (["evaluate", "--golden", "golden.jsonl", "--generated", "generated.jsonl", "--drift-judge", "hybrid",
      "--no-store"], "the llm drift judge: " + SAYS_HOW),
])
def test_no_endpoint_named_is_exit_2_saying_how(files, args, how):
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    (line,) = result.stderr.splitlines()
    assert SAYS_HOW in line and how in line and "https://api.openai.com/v1" in line, line
    assert not (files / "new.json").exists()


@pytest.mark.slow
def test_a_named_endpoint_is_the_one_called(files, monkeypatch):
    llm = LoopbackLLM()
    try:
        llm.default = ("json", ["couch"])
        monkeypatch.setenv("OPENAI_BASE_URL", llm.url)  # named by the environment
        result = CliRunner().invoke(main, ["harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt",
                                           "--drift-judge", "none", "--no-store"])
        assert result.exit_code == 0, result.output
        assert llm.chat_calls == 1 and f"endpoint: {llm.url} (model m)" in result.stderr
    finally:
        llm.close()


def test_the_library_has_no_default_endpoint_either(monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UsageError, match="no LLM endpoint named"):
        endpoint_url(None, {"model": "m"})
    with pytest.raises(UsageError, match="no LLM endpoint named"):
        AsyncLLMClient(LLMConfig(model="m"))
    with pytest.raises(UsageError, match="no LLM endpoint named"):
        PromptEvaluator("m")
    from termgate.drift.embeddings import OpenAIEmbedder
    with pytest.raises(UsageError, match=r'\[drift\] backend = "openai": .*set base_url under \[drift\]'):
        OpenAIEmbedder("text-embedding-3-small")
    assert endpoint_url(None, {"base_url": "http://127.0.0.1:8000/v1"}) == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env:1/v1")
    assert endpoint_url("http://flag:1/v1", {"base_url": "http://file:1/v1"}) == "http://flag:1/v1"
    assert endpoint_url(None, {"base_url": "http://file:1/v1"}) == "http://env:1/v1"
    assert asyncio.run(_closed(AsyncLLMClient(LLMConfig(model="m"))))  # the environment's URL is a name


async def _closed(client: AsyncLLMClient) -> bool:
    await client.aclose()
    return True


def test_doctor_says_no_endpoint_is_named(files):
    result = CliRunner().invoke(main, ["doctor"])
    assert "LLM endpoint: none named (there is no default one)" in result.output, result.output


@pytest.mark.parametrize("where", ["flag", "env", "config"])
@pytest.mark.parametrize("url", ["ci:sk-Hunter2secret@localhost:1/v1", "ftp://h/v1", "localhost:8000/v1"])
def test_an_endpoint_that_is_no_http_url_is_exit_2_and_never_shown(files, monkeypatch, where, url):
    """`--base-url ci:KEY@host/v1` (the scheme forgotten) was called 8 times (exit 5), and
    printed and stored in the clear: redaction reads user info only after `scheme://`."""
    args = ["harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt", "--drift-judge", "none",
            "--no-store", "--json", "report.json"]
    if where == "flag":
        args += ["--base-url", url]
    elif where == "env":
        monkeypatch.setenv("OPENAI_BASE_URL", url)
    else:
        (files / "termgate.toml").write_text(f'[llm]\nmodel = "m"\nbase_url = "{url}"\n', encoding="utf-8")
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    source = {"flag": "--base-url", "env": "OPENAI_BASE_URL", "config": "[llm] base_url"}[where]
    assert f"{source}: not an http(s) URL" in line and url not in line, line
    assert not (files / "report.json").exists()
    if where != "flag":
        doctor = CliRunner().invoke(main, ["doctor"]).output
        assert "LLM endpoint: unusable" in doctor and url not in doctor, doctor
