"""Real chat models' reply styles, read over real HTTP (SPEC §6 reply reading).

One harness run against the loopback OpenAI-compatible server answers each golden query
with one reply style; each style must become exactly the terms a person reading it would
list (and match its golden terms), or an errored item that says why — never junk terms.
Also: --parser, --response-format json, --repeat, and the endpoint line.
"""

from __future__ import annotations

import json
import textwrap

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.llm.replies import read_json_reply, read_reply

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM

from reply_payloads import HOSTILE

# (style id, reply, the terms a person reads, in order — or "error: <the why>")
STYLES = [
    ("json-list", '["MI", "myocardial infarction"]', ["mi", "myocardial infarction"]),
    ("json-weights", '[{"term": "MI", "weight": 0.9}, "heart attack"]', ["mi", "heart attack"]),
    ("json-object-terms", '{"terms": ["hypertension", "HTN"]}', ["hypertension", "htn"]),
    ("json-object-synonyms", '{"query": "flu", "synonyms": ["influenza", "grippe"]}', ["influenza", "grippe"]),
    ("json-object-expansions", '{"expansions": [{"term": "CVA"}]}', ["cva"]),
    ("json-fence-then-sentence", '```json\n{"terms": ["warfarin", "Coumadin"]}\n```\n'
     "These are the most common names for this drug.", ["warfarin", "coumadin"]),
    ("json-after-lead-in", 'Here you go: ["fracture", "broken bone"] Hope it helps!', ["fracture", "broken bone"]),
    ("json-empty", "[]", []),
    ("think-then-json", "<think>The user wants synonyms. [\"not this\"] MI is one.</think>\n[\"MI\"]", ["mi"]),
    ("think-closed-only", "Reasoning about the query first.\n</think>\n- tort\n- civil wrong", ["tort", "civil wrong"]),
    ("preamble-bullets", "Here are some synonyms for high blood pressure:\n- hypertension\n- HTN\n"
     "- elevated blood pressure", ["hypertension", "htn", "elevated blood pressure"]),
    ("numbered-closing", "1. Myocardial infarction\n2. MI\n3. Acute coronary syndrome\n\n"
     "Let me know if you need more!", ["myocardial infarction", "mi", "acute coronary syndrome"]),
    ("bold-terms", "- **Coumadin**\n- **warfarin**", ["coumadin", "warfarin"]),
    ("paren-notes", "1) naloxone (generic name)\n2) Narcan (brand name)", ["naloxone", "narcan"]),
    ("dash-notes", "MI – abbreviation\nmyocardial infarction - the clinical term", ["mi", "myocardial infarction"]),
    ("colon-notes", "* **Coumadin**: the brand name\n* *warfarin*: the generic name", ["coumadin", "warfarin"]),
    ("comma-line", "hypertension, HTN, elevated blood pressure", ["hypertension", "htn", "elevated blood pressure"]),
    ("comma-and", "MI, myocardial infarction, and heart attack.", ["mi", "myocardial infarction", "heart attack"]),
    ("semicolons-after-lead-in", "Sure! Here are the synonyms:\n\nhypertension; HTN; high blood pressure",
     ["hypertension", "htn", "high blood pressure"]),
    ("inline-lead-in", "Synonyms: influenza, grippe, or the flu", ["influenza", "grippe", "the flu"]),
    ("quotes-backticks", '* `MI`\n* "heart attack"\n* \u201ccardiac infarction\u201d',
     ["mi", "heart attack", "cardiac infarction"]),
    ("keeps-hyphens-and-stops", "- X-ray\n- COVID-19\n- E. coli\n- St. John's wort\n- U.S.",
     ["x-ray", "covid-19", "e. coli", "st. john's wort", "u.s."]),
    ("legal-and", "breaking and entering, burglary, or trespass", ["breaking and entering", "burglary", "trespass"]),
    ("heading-and-list", "### Expansions\n\n- bankruptcy\n- insolvency", ["bankruptcy", "insolvency"]),
    ("markdown-table", "| Term | Type |\n|---|---|\n| CVA | abbreviation |\n| brain attack | lay term |",
     ["cva", "brain attack"]),
    ("list-then-long-sentence", "hypertension, HTN, high blood pressure\n"
     "These are the terms clinicians commonly use in charts.", ["hypertension", "htn", "high blood pressure"]),
    ("refusal", "I'm sorry, I can't help with that.", "error: refusal"),
    ("as-an-ai", "As an AI language model, I cannot provide medical advice.", "error: refusal"),
    ("explanation", "Heart attack is commonly called a myocardial infarction. It is abbreviated MI.",
     "error: no terms found"),
    ("empty", "", "error: empty"),
    ("invalid-json-fence", '```json\n{"terms": ["MI",]\n```', "error: invalid JSON"),
    ("truncated-json", '{"terms": ["MI", "myocardial', "error: invalid JSON"),
    ("json-without-terms", '{"answer": "MI"}', "error: JSON is neither a list of terms"),
    ("bad-weight", '[{"term": "MI", "weight": 1.5}]', "error: terms[0].weight must be a number in [0, 1]"),
    ("unfinished-thinking", "<think>The user asks about MI. Let me list", "error: only reasoning"),
]


def _answer(body):
    prompt = body["messages"][-1]["content"]
    for style, reply, _ in STYLES:
        if f"Query: {style}\n" in prompt:
            return ("text", reply)
    return ("status", 500, {})


@pytest.fixture(scope="module")
def style_run(tmp_path_factory):
    """One harness run over every style; (JSON report by query id, stored outputs by query id)."""
    folder = tmp_path_factory.mktemp("styles")
    golden = write_jsonl(folder / "golden.jsonl", [
        golden_row(style, style, expected if isinstance(expected, list) and expected else ["placeholder"])
        for style, _, expected in STYLES])
    prompt = folder / "prompt.txt"
    prompt.write_text("Give synonyms.\nQuery: {query}\n", encoding="utf-8")
    server = LoopbackLLM()
    server.default = ("callable", _answer)
    db = folder / "store.duckdb"
    try:
        result = CliRunner().invoke(main, [
            "harness", "--golden", str(golden), "--prompt", str(prompt), "--model", "m", "--base-url", server.url,
            "--db", str(db), "--drift-judge", "none", "--max-tries", "2", "--json", str(folder / "r.json")],
            env={"OPENAI_API_KEY": "k"})
    finally:
        server.close()
    assert result.exit_code == 5, result.output  # errored items: incomplete
    report = json.loads((folder / "r.json").read_text())
    rows = {r["query_id"]: r for r in report["per_query_results"]}
    outputs = store.harness_outputs(db, report["evaluation_id"]).set_index("query_id")
    return rows, outputs, result


def test_the_table_has_enough_styles():
    assert len(STYLES) >= 25 and len({s for s, _, _ in STYLES}) == len(STYLES)


@pytest.mark.slow
@pytest.mark.parametrize("style, reply, expected", STYLES, ids=[s for s, _, _ in STYLES])
def test_reply_style_over_http(style_run, style, reply, expected):
    rows, outputs, _ = style_run
    row, stored = rows[style], outputs.loc[style]
    if isinstance(expected, str):
        why = expected.removeprefix("error: ")
        assert row["generated_terms"] == [] and row["error"].startswith(f"unparseable reply: {why}")
        assert f"error: {row['error']}" in row["failure_reasons"]
        assert row["error"].endswith("after 2 tries"), row["error"]  # retried, the same fault both times
        assert stored["reply"] == reply  # the raw reply is kept for `termgate replies`
        assert row["f1"] == 0.0 and not row["passed"]
    else:
        assert row["generated_terms"] == expected and row.get("error") is None
        assert list(stored["terms"]) == expected
        if expected:  # the terms a person reads match their golden terms
            assert row["true_positives"] == expected and row["f1"] == 1.0


def test_the_run_says_where_it_called(style_run):
    _, _, result = style_run
    assert "endpoint: http://127.0.0.1:" in result.stderr and "(model m)" in result.stderr


@pytest.mark.parametrize("reply, expected", [
    ("- Roe vs. Wade\n- Miranda rights", ["Roe vs. Wade", "Miranda rights"]),
    ("Note: these are approximate.\n- MI", ["MI"]),
    ("I would suggest:\n1. MI\n2. AMI", ["MI", "AMI"]),
    ("MI\nAMI\nHope this helps.", ["MI", "AMI"]),
    ("I cannot give medical advice, but common terms are:\n- MI\n- AMI", ["MI", "AMI"]),
    ("Options:\n[1] hypertension\n[2] HTN", ["hypertension", "HTN"]),
    ("The terms [MI] and {AMI} are used.\n- MI", ["MI"]),
    ("- Brand names: Tylenol, Panadol\n- Generic: acetaminophen, paracetamol",
     ["Tylenol", "Panadol", "acetaminophen", "paracetamol"]),
    ("Query: heart attack\nSynonyms: myocardial infarction, MI", ["myocardial infarction", "MI"]),
    ("- sofa\n- couch\n\nSource: a thesaurus\nDisclaimer: check with a lawyer.", ["sofa", "couch"]),
    ("- [ ] couch\n- [x] sofa", ["couch", "sofa"]),
    ("- sofa\n- couch\n\nOutput format: []", ["sofa", "couch"]),
    ("1. Sofa\n   - most common\n2. Couch\n   - informal", ["Sofa", "Couch"]),
    ("- Medical terms:\n  - MI\n  - AMI\n- Lay terms:\n  - heart attack", ["MI", "AMI", "heart attack"]),
    ("\u2192 lawyer\n\u2705 attorney\n\U0001f45f sneakers", ["lawyer", "attorney", "sneakers"]),
    ("> - sofa\n> - couch", ["sofa", "couch"]),
    ("i. hypertension\nii. HTN\niii. high blood pressure", ["hypertension", "HTN", "high blood pressure"]),
    ("#1 smartphone\n#2 mobile phone", ["smartphone", "mobile phone"]),
    ("\ufeff- sofa\n- cou\u200bch\x1b[0m", ["sofa", "couch"]),
    ("- Note 20 Ultra\n- Galaxy Note", ["Note 20 Ultra", "Galaxy Note"]),
    ("Certainly! MI, myocardial infarction, heart attack", ["MI", "myocardial infarction", "heart attack"]),
    ("Sorry, here is the corrected list:\nsofa, couch", ["sofa", "couch"]),
    ("Synonyms for flu\ninfluenza\ngrippe", ["influenza", "grippe"]),
    ("<answer>MI, AMI</answer>", ["MI", "AMI"]),
    ("Synonyms: ['sofa', 'couch']", ["sofa", "couch"]),
    ("- heart attack. also called MI\n- AMI\n- U.S. Army", ["AMI", "U.S. Army"]),  # ". " breaks a sentence
])
def test_more_readings(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, why", [
    ("None", "no terms found"), ("N/A", "no terms found"), ("No synonyms found.", "no terms found"),
    ("1.\n2.\n3.", "no terms found"), ("x" * 500, "no terms found"),
    ("I'm sorry, but I can't help with that request.", "refusal"),
])
def test_replies_that_say_there_is_nothing_are_unparseable(reply, why):
    with pytest.raises(ValueError, match=why):
        read_reply(reply)


@pytest.mark.parametrize("reply", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_replies_are_terms_or_unparseable_never_a_crash(reply):
    """bench/bench_harness.py times these (each read was seconds when a pattern was quadratic)."""
    try:
        terms = read_reply(reply)
    except ValueError as exc:
        assert str(exc)
    else:
        assert all(len(t) <= 100 and "\x1b" not in t for t in terms)


def test_lists_of_seven_words_are_sentences_not_terms():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply("This is a term that is far too long to be one")


# ---------------------------------------------------------------- --parser, --response-format, --repeat


@pytest.fixture
def small(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    golden = write_jsonl(tmp_path / "golden.jsonl", [golden_row("q1", "heart attack", ["mi", "myocardial infarction"]),
                                                     golden_row("q2", "stroke", ["cva"])])
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Query: {query}\n", encoding="utf-8")
    server = LoopbackLLM()
    yield golden, prompt, tmp_path / "store.duckdb", server
    server.close()


def _harness(server, golden, prompt, db, *extra):
    return CliRunner().invoke(main, ["harness", "--golden", str(golden), "--prompt", str(prompt), "--model", "m",
                                     "--base-url", server.url, "--db", str(db), "--drift-judge", "none",
                                     "--max-tries", "1", *extra], env={"OPENAI_API_KEY": "k"})


def test_own_parser_replaces_the_reading(small):
    golden, prompt, db, server = small
    (db.parent / "team_parser.py").write_text(textwrap.dedent("""
        def parse(reply):
            if reply.startswith("BAD"):
                raise RuntimeError("production would drop this")
            return [t.strip() for t in reply.split("|")]
    """), encoding="utf-8")
    server.default = ("callable", lambda body: ("text", "MI|myocardial infarction") if "heart" in
                      body["messages"][0]["content"] else ("text", "BAD reply"))
    result = _harness(server, golden, prompt, db, "--parser", "team_parser:parse", "--json", "r.json")
    assert result.exit_code == 5, result.output
    rows = {r["query_id"]: r for r in json.loads(open("r.json").read())["per_query_results"]}
    assert rows["q1"]["generated_terms"] == ["mi", "myocardial infarction"] and rows["q1"]["f1"] == 1.0
    assert rows["q2"]["error"] == ("unparseable reply: --parser raised RuntimeError: production would drop "
                                   "this after 1 try")


def test_parser_that_cannot_be_loaded_is_exit_2(small):
    golden, prompt, db, server = small
    result = _harness(server, golden, prompt, db, "--parser", "no_such_module:parse")
    assert result.exit_code == 2 and "--parser 'no_such_module:parse'" in result.stderr
    assert server.chat_calls == 0


def test_response_format_json_sends_the_schema_and_reads_json_only(small):
    golden, prompt, db, server = small
    server.default = ("callable", lambda body: ("json", {"terms": ["MI", "myocardial infarction"]}) if "heart" in
                      body["messages"][0]["content"] else ("text", "- CVA"))
    result = _harness(server, golden, prompt, db, "--response-format", "json", "--json", "r.json")
    assert result.exit_code == 5, result.output
    sent = server.requests[0]["body"]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["schema"]["required"] == ["terms"]
    rows = {r["query_id"]: r for r in json.loads(open("r.json").read())["per_query_results"]}
    assert rows["q1"]["f1"] == 1.0
    assert rows["q2"]["error"].startswith("unparseable reply: not JSON, although --response-format json")


def test_an_endpoint_that_refuses_the_schema_stops_with_one_line(small):
    golden, prompt, db, server = small
    server.default = ("raw", 400, "application/json",
                      json.dumps({"error": {"message": "response_format json_schema is not supported"}}))
    result = _harness(server, golden, prompt, db, "--response-format", "json", "--json", "r.json")
    assert result.exit_code == 2, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "refused --response-format json" in errors[0]
    assert "response_format json_schema is not supported" in errors[0]
    assert not (db.parent / "r.json").exists() and store.list_runs(db).empty


@pytest.mark.slow
def test_repeat_samples_each_query_and_names_the_varying_ones(small):
    golden, prompt, db, server = small
    counter = {"q1": 0}

    def answer(body):
        if "heart" in body["messages"][0]["content"]:
            counter["q1"] += 1
            return ("text", "MI, myocardial infarction" if counter["q1"] % 2 else "MI, panic attack")
        return ("text", "CVA")
    server.default = ("callable", answer)
    result = _harness(server, golden, prompt, db, "--repeat", "3", "--json", "r.json")
    assert result.exit_code in (0, 1), result.output
    assert "warning: --repeat 3 at temperature 0" in result.stderr
    assert server.chat_calls == 6
    assert "F1 varies on 1 of 2 queries" in result.output and "  q1: F1 " in result.output
    assert "  q2:" not in result.output
    runs = store.list_runs(db)
    assert len(runs) == 3
    report = json.loads(open("r.json").read())
    first = report["evaluation_id"]
    usages = {rid: json.loads(store.get_run(db, rid)["usage"]) for rid in runs["run_id"]}
    assert usages[first]["repeat"] == 1 and sorted(usages[first]["repeat_runs"]) == sorted(set(usages) - {first})
    assert sorted(u["repeat"] for u in usages.values()) == [1, 2, 3]
    assert all(u["repeat_of"] == first for rid, u in usages.items() if rid != first)
    assert len(set(runs["prompt_version"])) == 1
    again = _harness(server, golden, prompt, db, "--repeat", "3")  # each repeat has its own cache entry
    assert server.chat_calls == 6 and "0 calls, 6 from cache" in again.output
    audit = CliRunner().invoke(main, ["audit", "verify", "--db", str(db)])
    assert audit.exit_code == 0, audit.output
    listed = CliRunner().invoke(main, ["runs", "--db", str(db)]).output
    assert all(f"{k}/3" in listed for k in (1, 2, 3)) and "errored" in listed.splitlines()[0]


@pytest.mark.slow
def test_the_dashboard_runs_the_harness_with_json_replies_and_repeats(tmp_path, monkeypatch):
    """Import's harness form: reply format and repeats reach the child `termgate harness`."""
    from termgate.dashboard.importer import run_harness

    class Upload:  # what st.file_uploader hands the page
        def __init__(self, name, content):
            self.name, self._content = name, content

        def getvalue(self):
            return self._content

    db = tmp_path / "store.duckdb"
    monkeypatch.setenv("TERMGATE_DB", str(db))
    server = LoopbackLLM()
    server.default = ("json", {"terms": ["trainers", "running shoes"]})
    config = tmp_path / "termgate.toml"
    config.write_text(f'[drift]\njudge = "none"\n[llm.endpoints.loop]\nbase_url = "{server.url}"\nmodel = "m"\n',
                      encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    golden = Upload("golden.jsonl", b"".join(
        b'{"query_id": "q%d", "query": "sneakers %d", "expected_expansions": [{"term": "trainers"}]}\n' % (i, i)
        for i in range(3)))
    try:
        result = run_harness(golden, Upload("prompt.txt", b"Synonyms for {query}"), endpoint="loop", author="carol",
                             judge="none", response_format="json", repeat=2)
    finally:
        server.close()
    assert result.problems == [] and result.run_id
    assert server.chat_calls == 6 and all(r["body"]["response_format"]["type"] == "json_schema"
                                          for r in server.requests)
    assert len(store.list_runs(db)) == 2
    assert json.loads(store.get_run(db, result.run_id)["usage"])["repeat"] == 1
    assert "F1 varies on 0 of 3 queries" in result.output


def test_evaluate_with_the_llm_drift_judge_says_which_endpoint_it_calls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server = LoopbackLLM()
    server.default = ("json", {"verdicts": [{"term": "banana", "drift": True, "reason": "fruit"}]})
    (tmp_path / "termgate.toml").write_text(
        f'[llm]\nbase_url = "{server.url.replace("http://", "http://user:sekrit@")}"\nmodel = "judge-model"\n',
        encoding="utf-8")
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "heart attack", ["mi"])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["mi", "banana"]}])
    try:
        result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                           "--drift-judge", "llm", "--no-store"])
    finally:
        server.close()
    line = next(x for x in result.stderr.splitlines() if x.startswith("endpoint: "))
    assert line == f"endpoint: {server.url.replace('http://', 'http://***@')} (drift judge model judge-model)"
    assert "sekrit" not in result.output + result.stderr and server.chat_calls == 1


def test_report_on_standard_output_stays_whole_whatever_the_parser_prints(small):
    golden, prompt, db, server = small
    (db.parent / "noisy_parser.py").write_text(textwrap.dedent("""
        import sys
        def parse(reply):
            print("debug: parsing", reply)
            if "stroke" in reply:
                sys.exit(3)
            return [t.strip() for t in reply.split("|")]
    """), encoding="utf-8")
    server.default = ("callable", lambda body: ("text", "MI|myocardial infarction") if "heart" in
                      body["messages"][0]["content"] else ("text", "stroke|cva"))
    result = _harness(server, golden, prompt, db, "--parser", "noisy_parser:parse", "--json", "-")
    report = json.loads(result.stdout)  # nothing but the report on standard output
    assert result.exit_code == 5  # the parser's sys.exit(3) is its failure, not our exit code
    rows = {r["query_id"]: r for r in report["per_query_results"]}
    assert rows["q2"]["error"] == "unparseable reply: --parser raised SystemExit: 3 after 1 try"
    assert "debug: parsing" in result.stderr and "harness: 2 queries, 1 errored" in result.stderr


def test_repeat_works_with_a_python_expander(small, tmp_path):
    golden, _, db, _ = small
    (tmp_path / "coin.py").write_text(textwrap.dedent("""
        import itertools
        _n = itertools.count()
        def expand(query, context):
            return ["mi", "myocardial infarction"] if next(_n) % 2 else ["mi"]
    """), encoding="utf-8")
    result = CliRunner().invoke(main, ["harness", "--golden", str(golden), "--callable", "coin:expand", "--db",
                                       str(db), "--drift-judge", "none", "--repeat", "2", "--concurrency", "1"])
    assert "repeats: 2 samples per query" in result.output, result.output
    assert len(store.list_runs(db)) == 2


def test_a_400_that_is_not_about_the_schema_is_an_errored_item(small):
    golden, prompt, db, server = small
    server.default = ("raw", 400, "application/json", json.dumps({"error": {"message": "model 'm' not found"}}))
    result = _harness(server, golden, prompt, db, "--response-format", "json")
    assert result.exit_code == 5, result.output
    assert "refused --response-format" not in result.stderr


@pytest.mark.slow
def test_ctrl_c_exits_130_and_a_rerun_resumes(small, tmp_path):
    import signal
    import subprocess
    import sys
    import time

    golden, prompt, db, server = small
    server.default = ("text", "MI, myocardial infarction")
    server.delay = 1.5
    proc = subprocess.Popen([sys.executable, "-m", "termgate", "harness", "--golden", str(golden), "--prompt",
                             str(prompt), "--model", "m", "--base-url", server.url, "--db", str(db),
                             "--drift-judge", "none", "--concurrency", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**__import__("os").environ, "OPENAI_API_KEY": "k"})
    deadline = time.time() + 60
    while server.chat_calls < 2 and time.time() < deadline:  # the first answer is in, the second asked
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "interrupted" in err and "a rerun resumes" in err and "Traceback" not in err
    assert store.list_runs(db).empty
    server.delay = 0
    calls = server.chat_calls
    again = _harness(server, golden, prompt, db)
    assert again.exit_code in (0, 1, 3) and server.chat_calls - calls <= 1  # the first answer came from the cache


@pytest.mark.slow
def test_a_slow_parser_does_not_serialise_the_calls(small):
    """The parser runs on worker threads: while one reply is being parsed, other calls are in flight."""
    golden, prompt, db, server = small
    (db.parent / "slow_parser.py").write_text(textwrap.dedent("""
        import threading, time
        active = {"now": 0, "most": 0}
        lock = threading.Lock()
        def parse(reply):
            with lock:
                active["now"] += 1
                active["most"] = max(active["most"], active["now"])
            time.sleep(0.5)
            with lock:
                active["now"] -= 1
            return [reply]
    """), encoding="utf-8")
    server.default = ("text", "mi")
    result = _harness(server, golden, prompt, db, "--parser", "slow_parser:parse", "--concurrency", "2")
    import slow_parser
    assert result.exit_code in (0, 1, 3), result.output
    assert slow_parser.active["most"] == 2  # both replies parsed at once


# ---------------------------------------------------------------- what a real small model replied (issue 35)
# tests/test_real_replies.py holds the reading to a person's labels of 360 real replies; these
# are the shapes behind each rule it changed, one short reply each.


@pytest.mark.parametrize("reply", [
    # prose sentences with commas are sentences, not comma lists
    "Climate change is a multifaceted issue that encompasses various aspects, including environmental "
    "sustainability and human rights.",
    "The sofa is designed with comfort, elegance, and beauty in mind, making it perfect for parties, weddings, "
    "and other special occasions.",
    'The search query "flu shot" can be expanded to include synonyms such as "flu vaccine", "flu jab", '
    'and "flu shots".',
    "The vaccine is a process involving multiple stages: preparation, testing, and distribution. It has been "
    "tested in many countries.",
    # a short statement with a full stop
    "The medical domain is diabetes medication.",
    # `Label: a sentence` defines or speaks; it lists nothing
    "Coffee Maker: A coffee maker is a device that produces and distributes coffee.",
    "The medical community has been working on it for years.\nChatbot: Hey there! What brings you here today?",
    # a colon after a preposition is inside a sentence (the prompt echoed)
    "You are a search assistant for a legal search engine. Suggest query expansions for: wrongful termination",
])
def test_prose_with_commas_or_colons_is_no_terms(reply):
    with pytest.raises(ValueError, match="no terms found"):
        read_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # a comma list inside a numbered or bulleted item is split
    ("1. Divorced (adjective)\n2. Divorced marriage, divorce, divorcee",
     ["Divorced", "Divorced marriage", "divorce", "divorcee"]),
    ("- sofa\n- couch, settee", ["sofa", "couch", "settee"]),
    # after a spaced dash, a list of terms is more terms, not a note
    ("1. Laptop - notebook, laptop bag", ["Laptop", "notebook", "laptop bag"]),
    # comma lines among lead-in and closing lines: every line is split, however long
    ('Here\'s a more expanded version of your query:\n"fraud, scam, theft, swindle, con, hoax, racket"\n\n'
     "Just to add something new:\n*forgery, embezzlement*",
     ["fraud", "scam", "theft", "swindle", "con", "hoax", "racket", "forgery", "embezzlement"]),
    # a label holding a lead word in its note, or a term ending in one, is a term, not a heading
    ("1. scabies (medical term) - a parasitic disease, spread by close contact", ["scabies"]),
    ("1. mortgage payment terms - 10.2%\n2. mortgage rate - 3.7%", ["mortgage payment terms", "mortgage rate"]),
    # a colon inside a note in brackets separates nothing
    ("- symptom checker (user intent: symptom lookup)\n- MI", ["symptom checker", "MI"]),
    ("Symptom checker (user intent: symptom lookup)", ["Symptom checker"]),
])
def test_lists_inside_items_and_notes_with_colons(reply, expected):
    assert read_reply(reply) == expected


def test_a_code_sample_is_no_term_list():
    reply = ('Here is how to create a JSON array:\n```python\nimport json\nsofa = {"name": "Sofa"}\n'
             "print(json.dumps(sofa))\n```\nThis prints the array.")
    with pytest.raises(ValueError, match="code, not terms"):
        read_reply(reply)


@pytest.mark.parametrize("reply", [
    # strings inside a program are not the reply's answer, whatever the fence's tag (or none)
    '```python\nsynonyms = ["sofa", "couch"]\n```',
    '```\nimport json\nprint(json.dumps(["sofa", "couch"]))\n```',
    '```js\nconst terms = ["sofa", "couch"];\n```',
    'Here:\n```\ndef synonyms():\n    return {"terms": ["sofa", "couch"]}\n```',
    # the program's output quoted after it is the program's too
    '```python\ndata = {"x": 1}\n```\nThis will output: `["sofa", "couch"]`',
    # a program beside JSON data that holds no term list
    '```python\nfoods = {"a": 1}\n```\n```python\n{"Bacon": {"name": "Vegan"}}\n```',
])
def test_a_program_is_never_read_as_terms(reply):
    with pytest.raises(ValueError, match="^code, not terms$"):
        read_reply(reply)
    with pytest.raises(ValueError, match="^code, not terms$"):
        read_json_reply(reply)


@pytest.mark.parametrize("reply, expected", [
    # a fenced block whose content parses as JSON is data, whatever its tag
    ('```python\n["sofa", "couch"]\n```', ["sofa", "couch"]),
    ('```js\n{"terms": ["sofa"]}\n```', ["sofa"]),
    # beside a program, a fence of JSON data is still the answer
    ('```python\nimport json\n```\nIt prints:\n```json\n{"synonyms": ["sofa", "couch"]}\n```', ["sofa", "couch"]),
    # a text list in a plain fence is no program, though a term starts as a statement would
    ("```\nsofa\ncouch\n```", ["sofa", "couch"]),
    ("```\nimport duty\ncustoms\nclass action: a lawsuit\n```", ["import duty", "customs", "class action"]),
])
def test_json_data_in_any_fence_is_read(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # `Label: value` whose value repeats the label's word: the label is the topic (the query), the value the term
    ("Laptop bag: laptop bags.", ["laptop bags"]),
    ("Sofa: sofas\nCouch: couches", ["sofas", "couches"]),
    # a bulleted item ending with a colon and nothing under it: a stray colon
    ("Laptop bags:\n- Luggage Bags:\n- Lighter Baggies:", ["Luggage Bags", "Lighter Baggies"]),
    # a stray hyphen at a word's end
    ("1. running (adjective)\n2. run- (verb)", ["running", "run"]),
    # a note after a dash that reads as a description stays a note, commas or not
    ("1. Divestitive (adjective) - Of or relating to divorce, as a legal term.", ["Divestitive"]),
    ("1. Last - LAST, not lastwill;\n2. Will - WILLING, not WILLED;", ["Last", "Will"]),
    # "used" describes as a verb ("used to treat …"), not as an adjective ("used car")
    ("1. Aspirin - used to treat pain, fever\n2. Used Cars - used car, second-hand car",
     ["Aspirin", "Used Cars", "used car", "second-hand car"]),
    # sentences whose last one names a list before the colon: the list; one that does not: prose
    ("You are a search assistant. I suggest: speeding ticket", ["speeding ticket"]),
])
def test_labels_stray_colons_and_notes(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a trailing ellipsis says the list goes on: it is no part of the term
    ("1. Laptops: laptop, laptops, luggables...\n2. Bags: tote, satchel\u2026", ["laptop", "laptops", "luggables", "tote", "satchel"]),
    # a `Label: value:` line whose value repeats its label: the value, its stray colon off
    ("Retirement savings: Retirement savings:", ["Retirement savings"]),
    # `A = B` offers two terms; a clause after B's comma is a note
    ("- Cheap = cheap, as in something is not worth paying for.\n- Fares = flights, which can be expensive.",
     ["Cheap", "cheap", "Fares", "flights"]),
    # in a list item, a capitalised `B` after a dash or colon that is itself a term is a second term ...
    ("1. Stock market crash - Crash\n2. Financial crisis - Financial disaster",
     ["Stock market crash", "Crash", "Financial crisis", "Financial disaster"]),
    ("* Last Will and Ends: Last Will and Die\n* Last Will and Destiny: Last Will and the Destruction of Will",
     ["Last Will and Ends", "Last Will and Die", "Last Will and Destiny"]),
    # ... but one naming a kind of term, opening with a describing word, or written in lower case is a note
    ("1. Tylenol - Brand name\n2. MI: Abbreviation\n3. Aspirin - A painkiller\n4. Coumadin - warfarin brand",
     ["Tylenol", "MI", "Aspirin", "Coumadin"]),
])
def test_ellipses_equations_and_second_terms(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply", [
    # a comma list led by a phrase of four or more words holding an article describes, it lists nothing
    "1. Using the + operator for addition, subtraction, multiplication, division, and modulus operations\n"
    "2. Using the ** operator for exponentiation and multiplication",
    '```\nimport json\nreturn ["sofa", "couch"]\n```',
    # an unbulleted pair of a term and a sentence is no `A = B` pair
    "The sofa = a comfortable seat, which is nice.",
])
def test_descriptions_naming_things_give_no_terms(reply):
    with pytest.raises(ValueError, match="no terms found|code, not terms"):
        read_reply(reply)


def test_a_short_list_led_by_a_phrase_with_an_article_is_a_list():
    assert read_reply("- Diseases of the heart, MI, AMI") == ["Diseases of the heart", "MI", "AMI"]


def test_a_colon_after_sentences_that_name_no_list_is_prose():
    with pytest.raises(ValueError, match="no terms found"):
        read_reply('I\'m here to help with any search. For example, "Baby Stroller" in a query? '
                   "I can provide more details: baby stroller")


@pytest.mark.parametrize("reply, expected", [
    # records each naming one: their names (the descriptions are notes)
    ('```json\n{"hotel near airport": [{"name": "airport hotel", "description": "near the terminal"},\n'
     '{"name": "airport inn", "description": "cheap"}]}\n```', ["airport hotel", "airport inn"]),
    # numbering that goes on in an indented line is a sibling, not a note
    ("Suggested query expansions:\n\n1. *child-custodome*\n  2. child custody\n", ["child-custodome", "child custody"]),
])
def test_json_records_and_indented_numbering(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # an unbulleted line right under the bullets that reads as a term: the list runs on
    ("Here are some ways to say it:\n\n* Diabetes Medication\n* Diabetes Medications\nDiabetes-Medication",
     ["Diabetes Medication", "Diabetes Medications", "Diabetes-Medication"]),
    # a closing line after a blank line, or a sentence right under them, does not
    ("- sofa\n- couch\n\nGood luck", ["sofa", "couch"]),
    ("- sofa\n- couch\nThese are the most common words.", ["sofa", "couch"]),
])
def test_a_list_runs_on_into_unbulleted_lines(reply, expected):
    assert read_reply(reply) == expected


@pytest.mark.parametrize("reply, expected", [
    # a JSON string holding a comma list of terms is that list; one holding a phrase with a comma stays
    ('{"keywords": ["Lambda, Lua, Python"]}', ["Lambda", "Lua", "Python"]),
    ('["heart attack", "attack of the heart, as doctors say it in the clinic"]',
     ["heart attack", "attack of the heart, as doctors say it in the clinic"]),
    # a record's name is read as a list item: its trailing note in brackets goes
    ('[{"name": "Selling copyrights (digital rights)", "description": "x"}]', ["Selling copyrights"]),
])
def test_json_strings_are_read_as_items(reply, expected):
    assert read_reply(reply) == expected
