"""`termgate harness` against a real model: llama.cpp's server with SmolLM2-135M-Instruct
(tests/model_server.py), set up as docs/local-models.md tells a user to.

These tests hold termgate's behaviour, never the model's quality: every reply is stored,
each is read into terms or errored with a reason (never junk), no call outlives its
timeout, the exit code follows the report, and a rerun is served from the cache.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main

from conftest import golden_row, write_jsonl
from model_server import GATE_EXIT, junk, write_settings

pytestmark = [pytest.mark.model, pytest.mark.slow]

GOLDEN = [golden_row("q1", "heart attack", ["myocardial infarction", "MI"], domain="medical"),
          golden_row("q2", "cell phone", ["mobile phone", "smartphone"]),
          golden_row("q3", "running shoes", ["sneakers", "trainers"])]
TEXT_PROMPT = "List 5 search synonyms for the {domain} query, one per line.\nQuery: {query}\n"
JSON_PROMPT = ('Give 5 search synonyms for the {domain} query. Answer with JSON only, like '
               '{{"terms": ["first synonym", "second synonym"]}}.\nQuery: {query}\n')
REASONS = ("unparseable reply", "cut off at", "timed out", "HTTP ", "refus", "prose", "empty", "no terms")
"""What an errored item's reason starts with or names (SPEC §6): never a bare failure."""


@pytest.fixture
def folder(tmp_path, monkeypatch, model_server):
    """A working folder with the golden set, both prompts and termgate.toml naming the server."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMGATE_CONFIG", str(write_settings(tmp_path, model_server)))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    (tmp_path / "text.txt").write_text(TEXT_PROMPT, encoding="utf-8")
    (tmp_path / "json.txt").write_text(JSON_PROMPT, encoding="utf-8")
    return tmp_path


def harness(*extra: str, golden: str = "golden.jsonl", concurrency: int = 1, db: str = "store.duckdb"):
    # one call at a time unless a test says: the server answers one request at a time, and a
    # queued request's wait counts towards its timeout
    args = ["harness", "--golden", golden, "--db", db, "--drift-judge", "none", "--concurrency", str(concurrency),
            "--json", "report.json", *extra]
    return CliRunner().invoke(main, args)


def checked_run(result, queries: int = 3, db: str = "store.duckdb"):
    """The run's report, stored items and usage record, after checking what holds whatever
    the model answered."""
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    report = json.loads(open("report.json", encoding="utf-8").read())
    errored = report["summary"]["errored"]
    expected_exit = 5 if errored else GATE_EXIT[report["gate"]["decision"]]
    assert result.exit_code == expected_exit, result.output
    run_id = report["evaluation_id"]
    items = store.harness_outputs(db, run_id)
    assert len(items) == queries  # every item stored, answered or not (a NULL error reads back as None or NaN)
    assert sum(items["error"].notna()) == errored
    for item in items.itertuples():
        if not isinstance(item.error, str):  # read into terms, each one a term a person would take
            assert item.reply and item.reply.strip(), item
            assert len(item.terms) > 0, item
            assert [t for t in item.terms if junk(t)] == [], (item.reply, list(item.terms))
        else:  # errored with a reason; what the server answered is kept for the record
            assert any(r in item.error for r in REASONS), item.error
            assert len(item.terms) == 0, item
            if "timed out" not in item.error:
                assert item.reply is not None, item
    usage = json.loads(store.get_run(db, run_id)["usage"])
    return report, items, usage


def test_text_replies_are_stored_and_read_then_a_rerun_is_served_from_the_cache(folder):
    first = harness("--prompt", "text.txt")
    report, items, usage = checked_run(first)
    assert usage["calls"] >= 3 and usage["cache_hits"] == 0
    assert usage["calls"] <= 3 * 2  # [llm] max_tries = 2
    answered = items[items["error"].isna()]

    again = harness("--prompt", "text.txt")
    _, rerun, rerun_usage = checked_run(again)
    assert rerun_usage["cache_hits"] == len(answered)  # every readable reply came from the cache
    errored = len(items) - len(answered)
    assert rerun_usage["calls"] <= errored * 2  # only the errored items were asked again
    if not errored:
        assert rerun_usage["calls"] == 0 and "0 calls, 3 from cache" in again.output
    kept = rerun.set_index("query_id")
    for item in answered.itertuples():
        assert kept.loc[item.query_id, "reply"] == item.reply


def test_json_replies_fall_back_to_the_servers_json_object_form(folder):
    """llama.cpp refuses OpenAI's json_schema with HTTP 500 (its body names the format): the
    harness switches once to {"type": "json_object", "schema": ...} and the run goes on."""
    result = harness("--prompt", "json.txt", "--response-format", "json")
    assert result.exit_code != 2, result.output  # not refused: the second form is accepted
    _, items, usage = checked_run(result)
    assert items["reply"].notna().all(), list(items["error"])  # the server answered every query
    assert usage["calls"] <= 1 + 3 * 2  # one refused call at most, then the queries' own tries
    for item in items[items["error"].isna()].itertuples():
        json.loads(item.reply)  # a reply read as terms was JSON, as asked


def test_json_object_from_the_start_when_the_endpoint_says_so(folder, model_server):
    write_settings(folder, model_server, structured_output="json_object")
    result = harness("--prompt", "json.txt", "--response-format", "json")
    _, items, usage = checked_run(result)
    assert items["reply"].notna().all(), list(items["error"])
    assert usage["calls"] <= 3 * 2  # no refused call first
    for item in items[items["error"].isna()].itertuples():
        json.loads(item.reply)


def test_concurrent_calls_are_never_read_from_an_interrupted_stream(folder):
    """llama-cpp-python's server, by default (`interrupt_requests`), ends a streamed answer
    with [DONE] and no finish_reason as soon as another request waits. At concurrency 3 each
    query still gets its whole answer, or is errored saying what happened: never a reply
    read as empty, never the first part of an answer read as the whole."""
    one_at_a_time = harness("--prompt", "text.txt", db="one.duckdb")
    _, alone, _ = checked_run(one_at_a_time, db="one.duckdb")
    together = harness("--prompt", "text.txt", concurrency=3, db="three.duckdb")
    _, items, _ = checked_run(together, db="three.duckdb")
    whole = alone.set_index("query_id")["reply"]
    for item in items.itertuples():
        if isinstance(item.error, str):
            assert "empty" not in item.error, item.error  # it was not empty: it was cut short
            continue
        full = whole[item.query_id]
        assert not (full and full != item.reply and full.startswith(item.reply)), (item.reply, full)


LONG_PROMPT = "Write a 3000-word encyclopedia article on {query} with 20 numbered sections.\n"


def test_a_timed_out_call_stops_the_generation_on_the_server(folder, model_server):
    """A call abandoned at its timeout is cancelled (streamed, its connection closed), so the
    server stops generating: the next call does not queue behind a runaway one. Uncancelled,
    each of these articles runs to max_tokens = 1500 (about 20-40 s each here), and the
    call after them times out waiting."""
    (folder / "long.txt").write_text(LONG_PROMPT, encoding="utf-8")
    write_settings(folder, model_server, max_tokens=1500, timeout=1, max_tries=1)
    runaway = harness("--prompt", "long.txt")
    _, items, usage = checked_run(runaway)
    assert runaway.exit_code == 5
    assert usage["calls"] == 3  # one try each: max_tries = 1
    assert all("timed out (1 s)" in e for e in items["error"]), list(items["error"])

    write_jsonl(folder / "one.jsonl", GOLDEN[:1])
    write_settings(folder, model_server, max_tokens=64, timeout=20, max_tries=1)
    after = harness("--prompt", "text.txt", golden="one.jsonl")
    _, items, usage = checked_run(after, queries=1)
    assert usage["calls"] == 1
    assert "timed out" not in (items["error"].iloc[0] or ""), items["error"].iloc[0]
    assert items["reply"].iloc[0]  # answered at once: nothing left running on the server
