"""`termgate replies RUN` and the errored reason on every surface (issue 14, items 4 and 7),
on a harness run made over real HTTP against the loopback server."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from termgate.cli import main
from termgate.dashboard import APP as DASHBOARD_APP

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM

ROOT = Path(__file__).resolve().parent.parent
PROMPT = "Expand the search query for {domain} search.\nQuery: {query}\nAnswer with a JSON list.\n"
# a fenced JSON answer, then terminal controls: a clear-screen, a window title, a BiDi
# override and a carriage return that would overwrite the line before it
FLU_REPLY = '```json\n["Influenza", "grippe"]\n```\n\x1b[2J\x1b]0;owned\x07\u202eDone\r\nbye'
ERROR = "HTTP 429 after 2 tries; first try: unparseable reply: empty"  # SPEC §6: last try, then the first


def answer(calls: dict):
    def reply(body):
        prompt = body["messages"][-1]["content"]
        if "Query: heart attack\n" in prompt:
            return ("json", ["myocardial infarction", "MI"])
        if "Query: flu\n" in prompt:
            return ("text", FLU_REPLY)
        calls["stroke"] += 1  # stroke: an empty reply, then rate-limited: errored after --max-tries 2
        return ("text", "") if calls["stroke"] == 1 else ("status", 429, {})
    return reply


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """One harness run (golden order z, a, m: not the query_ids' order), its reports and
    an `evaluate` run in the same store."""
    folder = tmp_path_factory.mktemp("replies")
    server = LoopbackLLM()
    server.default = ("callable", answer({"stroke": 0}))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.delenv("TERMGATE_CONFIG", raising=False)
        write_jsonl(folder / "golden.jsonl", [golden_row("z-heart", "heart attack", ["myocardial infarction", "mi"]),
                                              golden_row("a-flu", "flu", ["influenza"]),
                                              golden_row("m-stroke", "stroke", ["cva"])])
        (folder / "prompt.txt").write_text(PROMPT, encoding="utf-8")
        try:
            result = CliRunner().invoke(main, [
                "harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt", "--model", "sut-model",
                "--base-url", server.url, "--db", "store.duckdb", "--drift-judge", "none", "--max-tries", "2",
                "--json", "report.json", "--html", "report.html", "--junit", "junit.xml"],
                env={"OPENAI_API_KEY": "test-key"})
        finally:
            server.close()
        assert result.exit_code == 5, result.output  # incomplete: one errored item
        write_jsonl(folder / "generated.jsonl", [{"query_id": "z-heart", "terms": ["mi"]}])
        plain = CliRunner().invoke(main, ["evaluate", "--golden", "golden.jsonl", "--generated", "generated.jsonl",
                                          "--db", "store.duckdb", "--drift-judge", "none", "--json", "plain.json"])
        assert plain.exit_code == 1, plain.output
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return {"folder": folder, "db": str(folder / "store.duckdb"), "run": report["evaluation_id"], "report": report,
            "plain": json.loads((folder / "plain.json").read_text(encoding="utf-8"))["evaluation_id"]}


def cli(made, *args):
    return CliRunner().invoke(main, [*args, "--db", made["db"]])


@pytest.mark.slow
def test_every_item_in_golden_order_with_prompt_reply_terms_and_error(made):
    result = cli(made, "replies", made["run"])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        f"run {made['run']}  harness:prompt.txt@sut-model  3 items, 1 errored",
        "",
        "query z-heart  heart attack",
        "  prompt:",
        "    Expand the search query for ecommerce search.",
        "    Query: heart attack",
        "    Answer with a JSON list.",
        "  reply:",
        '    ["myocardial infarction", "MI"]',
        '  terms: ["myocardial infarction", "mi"]',
        "",
        "query a-flu  flu",
        "  prompt:",
        "    Expand the search query for ecommerce search.",
        "    Query: flu",
        "    Answer with a JSON list.",
        "  reply:",
        "    ```json",
        '    ["Influenza", "grippe"]',
        "    ```",
        "    Done",  # the controls are gone, and the carriage return ends a line of its own
        "    bye",
        '  terms: ["influenza", "grippe"]',
        "",
        "query m-stroke  stroke  (errored)",
        "  prompt:",
        "    Expand the search query for ecommerce search.",
        "    Query: stroke",
        "    Answer with a JSON list.",
        "  reply: (empty)",
        "  terms: none (errored item)",
        f"  error: {ERROR}",
    ]
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e]", result.stdout)


def test_errored_only(made):
    result = cli(made, "replies", made["run"], "--errored")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert [line for line in lines if line.startswith("query ")] == ["query m-stroke  stroke  (errored)"]
    assert lines[-1] == f"  error: {ERROR}"


def test_one_query(made):
    result = cli(made, "replies", made["run"], "--query", "z-heart")
    assert result.exit_code == 0
    assert [line for line in result.stdout.splitlines() if line.startswith("query ")] == ["query z-heart  heart attack"]
    none = cli(made, "replies", made["run"], "--query", "z-heart", "--errored")
    assert none.exit_code == 0 and none.stdout.splitlines()[-1] == "no errored items for query z-heart"


def test_json_keeps_every_value_and_lets_no_control_through(made):
    result = cli(made, "replies", made["run"], "--json")
    assert result.exit_code == 0
    assert not re.search("[\x1b\x07\x9b\r\u202e]", result.stdout)
    items = json.loads(result.stdout)
    assert [i["query_id"] for i in items] == ["z-heart", "a-flu", "m-stroke"]
    assert items[1] == {"query_id": "a-flu", "query": "flu", "prompt": PROMPT.format(domain="ecommerce", query="flu"),
                        "reply": FLU_REPLY, "terms": ["influenza", "grippe"], "error": None}
    assert items[2]["error"] == ERROR and items[2]["reply"] == ""
    only = json.loads(cli(made, "replies", made["run"], "--json", "--errored").stdout)
    assert [i["query_id"] for i in only] == ["m-stroke"]


@pytest.mark.parametrize("args, message", [
    (["no-such-run"], "unknown run 'no-such-run'"),
    (["RUN", "--query", "nope"], "has no query 'nope'"),
    (["PLAIN"], "was not made by the harness"),
])
def test_exit_2_with_one_clear_line(made, args, message):
    args = [{"RUN": made["run"], "PLAIN": made["plain"]}.get(a, a) for a in args]
    result = cli(made, "replies", *args)
    assert result.exit_code == 2
    assert result.stdout == "" and result.stderr.count("\n") == 1 and message in result.stderr
    assert "Traceback" not in result.output


def test_show_prints_the_whole_reason(made):
    result = cli(made, "show", made["run"])
    assert result.exit_code == 0
    assert f"  m-stroke: error: {ERROR}" in result.stdout.splitlines()  # the table cuts it; this line does not


def test_reports_carry_the_whole_reason(made):
    by_id = {q["query_id"]: q for q in made["report"]["per_query_results"]}
    assert by_id["m-stroke"]["error"] == ERROR and by_id["m-stroke"]["failure_reasons"][0] == f"error: {ERROR}"
    assert by_id["z-heart"]["error"] is None
    cases = {c.get("name"): c for c in ET.parse(made["folder"] / "junit.xml").iter("testcase")}
    errored = [c for c in cases.values() if c.find("error") is not None]
    assert len(errored) == 1 and errored[0].find("error").get("message").startswith(f"error: {ERROR};")
    assert f"<td>error: {ERROR}; empty expansion" in (made["folder"] / "report.html").read_text(encoding="utf-8")


def shown(markdown: str) -> str:
    """What a visitor reads from Markdown the dashboard escaped with ui.literal."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def page(name: str, **params) -> AppTest:
    at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=60)
    at.switch_page(f"views/{name}.py")
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_dashboard_runs_page_lists_the_errored_items_with_their_reason(made, monkeypatch):
    monkeypatch.setenv("TERMGATE_DB", made["db"])
    at = page("runs", run=made["run"])
    assert not at.exception
    table = at.dataframe[0].value
    assert dict(zip(table["run_id"], table["errored"])) == {made["run"]: 1, made["plain"]: 0}
    assert "1 errored items" in at.warning[0].value
    assert f"**m-stroke** stroke · error: {ERROR}" in [shown(m.value) for m in at.markdown]


def test_dashboard_query_page_shows_the_reason(made, monkeypatch):
    monkeypatch.setenv("TERMGATE_DB", made["db"])
    at = page("query", query_id="m-stroke")
    assert not at.exception
    assert [shown(w.value) for w in at.warning] == [f"Errored in run {made['run']}: error: {ERROR}"]
    errors = at.dataframe[0].value["error"]
    assert errors.iloc[0] == ERROR and errors.isna().iloc[1]  # the harness run, then the evaluate run


def test_dashboard_query_page_shows_what_the_model_replied_as_text(made, monkeypatch):
    monkeypatch.setenv("TERMGATE_DB", made["db"])
    at = page("query", query_id="a-flu")
    assert not at.exception
    assert at.expander[-1].label == "What the model replied (newest 1 harness run)"
    codes = [c.value for c in at.expander[-1].code]
    assert codes[0] == PROMPT.format(domain="ecommerce", query="flu").rstrip("\n") and codes[1] == (  # as given, controls visible
        '```json\n["Influenza", "grippe"]\n```\n\\u001b[2J\\u001b]0;owned\\u0007\\u202eDone\nbye')
    assert any("terms: influenza, grippe" in shown(m.value) for m in at.expander[-1].markdown)
    at = page("query", query_id="m-stroke")
    assert any(f"error: {ERROR}" in shown(m.value) for m in at.expander[-1].markdown)
