"""What evaluate, harness and gate tell a pipeline (issue 16 items 1–4): the Markdown job
summary and $GITHUB_STEP_SUMMARY, the pull-request comment and its marker, GitHub
annotations at the golden file's lines, GitLab's Code Quality report, and JUnit.

Every run goes through the CLI with `--drift-judge none`. The golden file has blank lines,
so a query's line differs from its position.
"""

from __future__ import annotations

import hashlib
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.report.annotations import annotation, workflow_data, workflow_property
from termgate.report.markdown import comment_marker, md

from conftest import golden_row, write_jsonl

CI_VARIABLES = ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "GITHUB_WORKSPACE", "CI_PROJECT_DIR",
                "TERMGATE_DASHBOARD_URL", "TERMGATE_CONFIG")
HOSTILE = "<img src=x onerror=alert(1)> @octocat #123 a|b `code`\nnext line"
GOLDEN = "golden/set.jsonl"
# line of each query in GOLDEN: blank (and whitespace-only) lines sit between them
LINES = {"g1": 1, "g2": 3, "g3": 6, "g4": 7, "g5": 8, "g6": 9}
BASE = [{"query_id": "g1", "terms": ["couch", "settee"]}, {"query_id": "g2", "terms": ["television", "tv set"]},
        {"query_id": "g3", "terms": ["light", "lantern"]}, {"query_id": "g4", "terms": ["hostile term"]},
        {"query_id": "g5", "terms": ["fine"]}, {"query_id": "g6", "terms": ["seat", "stool"]}]
CANDIDATE = [
    {"query_id": "g1", "terms": ["couch", "sofa bed"]},           # F1 1.0 -> 0.5: lost settee, new wrong sofa bed
    {"query_id": "g2", "terms": []},                              # F1 1.0 -> 0: lost both
    {"query_id": "g3", "terms": ["light", "lamb"]},               # critical, fails; lamb is forbidden: drift
    {"query_id": "g4", "terms": ["<b>bold</b> @octocat", "x\n::add-mask::secret"]},  # hostile terms, F1 0
    {"query_id": "g5", "terms": ["fine"]},                        # unchanged
    {"query_id": "g6", "terms": ["seat", "stool", "bench"]},      # F1 1.0 -> 0.8: regressed, still passes
]


def cli(*args, env: dict | None = None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


@pytest.fixture
def ci(tmp_path, monkeypatch):
    """A working directory with the golden set, a baseline output and a candidate output;
    no CI variable from the machine running the tests."""
    monkeypatch.chdir(tmp_path)
    for var in CI_VARIABLES:
        monkeypatch.delenv(var, raising=False)
    rows = [golden_row("g1", "sofa", ["couch", "settee"]), None,
            golden_row("g2", "tv", ["television", "tv set"]), "   ", None,
            golden_row("g3", "lamp", ["light", "lantern"], forbidden=["lamb"], critical=True),
            golden_row("g4", HOSTILE, ["hostile term"]),
            golden_row("g5", "ok", ["fine"], domain="home"), golden_row("g6", "chair", ["seat", "stool"], domain="home")]
    (tmp_path / "golden").mkdir()
    (tmp_path / GOLDEN).write_text("".join("\n" if r is None else r + "\n" if isinstance(r, str)
                                           else json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    write_jsonl(tmp_path / "base.jsonl", BASE)
    write_jsonl(tmp_path / "cand.jsonl", CANDIDATE)
    return tmp_path


def evaluate(generated: str, *args, env: dict | None = None, golden: str = GOLDEN):
    return cli("evaluate", "--golden", golden, "--generated", generated, "--drift-judge", "none", *args, env=env)


@pytest.fixture
def baseline(ci) -> str:
    """The baseline run's id (stored in s.duckdb; its report in base.json)."""
    result = evaluate("base.jsonl", "--db", "s.duckdb", "--name", "nightly", "--json", "base.json")
    assert result.exit_code == 0, result.output
    return json.loads(Path("base.json").read_text())["evaluation_id"]


def cells(row: str) -> list[str]:
    """A Markdown table row's cells, split on the pipes that are not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def row_of(markdown: str, query_id: str) -> str:
    return next(line for line in markdown.splitlines() if line.startswith(f"| {query_id} |"))


def commands(output: str) -> list[tuple[str, dict, str]]:
    """Every workflow command line: (kind, properties, message)."""
    out = []
    for line in output.splitlines():
        if line.startswith("::"):
            found = re.fullmatch(r"::(\w+)(?: ([^:]*))?::(.*)", line)
            assert found, line
            props = dict(p.split("=", 1) for p in found.group(2).split(",")) if found.group(2) else {}
            out.append((found.group(1), props, found.group(3)))
    return out


# ---------------------------------------------------------------- escaping, one value at a time


@pytest.mark.parametrize("value, shown, never", [
    ("<img src=x onerror=alert(1)>", r"\<img src\=x onerror\=alert\(1\)\>", None),
    ("ask @octocat", "ask \\@\u2060octocat", "@octocat"),
    ("see #123", "see \\#\u2060123", "#123"),
    ("a|b", r"a\|b", None),
    ("`rm -rf`", r"\`rm \-rf\`", None),
    ("one\ntwo", r"one\\ntwo", "\n"),
    ("http://evil.example", "http\u2060\\:\\/\\/evil\\.example", "http:"),
    ("*bold* _it_ [x](y) ![i](j)", r"\*bold\* \_it\_ \[x\]\(y\) \!\[i\]\(j\)", None),
    ("\x1b[31mred\u202e", "red", "\x1b"),  # the whole sequence goes, and the BiDi override
])
def test_md_shows_data_as_typed(value, shown, never):
    assert md(value) == shown
    if never:
        assert never not in md(value)


def test_md_cuts_long_values():
    assert md("x" * 500, 50) == "x" * 49 + "…"


def test_workflow_command_encoding():
    assert workflow_data("50%\r\nnext") == "50%25%0D%0Anext"
    assert workflow_data("a\u2028b") == "a%0Ab"  # any other line break becomes an encoded LF
    assert workflow_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"
    assert annotation("error", "m\n::add-mask::x", "f,1:2.jsonl", 3, "t:1") == \
        "::error file=f%2C1%3A2.jsonl,line=3,title=t%3A1::m%0A::add-mask::x"


def test_comment_marker_cannot_be_closed_by_data():
    marker = comment_marker("data/g.jsonl", "x --> <script> --!> -")
    assert marker.startswith("<!-- termgate: data/g.jsonl/") and marker.endswith(" -->")
    body = marker[len("<!--"):-len("-->")]
    assert "--" not in body and ">" not in body and "<" not in body
    # the last raw slash separates: a slash in the run name is encoded
    assert comment_marker("a/b", "c") != comment_marker("a", "b/c")


# ---------------------------------------------------------------- the job summary


def test_summary_names_the_gate_regressions_term_diffs_and_is_appended_to_the_step_summary(ci, baseline):
    Path("step.md").write_text("## an earlier step\n", encoding="utf-8")
    result = evaluate("cand.jsonl", "--db", "s.duckdb", "--name", "nightly", "--baseline", baseline,
                      "--summary", "sum.md", "--json", "cand.json", env={"GITHUB_STEP_SUMMARY": str(ci / "step.md")})
    assert result.exit_code == 1, result.output
    run_id = json.loads(Path("cand.json").read_text())["evaluation_id"]
    summary = Path("sum.md").read_text(encoding="utf-8")
    assert "FAIL" in summary.splitlines()[0]
    assert "regressed against baseline" in summary  # the gate's reasons
    for qid in ("g1", "g2", "g3", "g4", "g6"):
        assert row_of(summary, qid)
    g1 = cells(row_of(summary, "g1"))
    assert g1[4] == "1.000 → 0.500" and g1[5] == "settee" and g1[6] == "sofa bed"  # lost correct, new wrong
    assert cells(row_of(summary, "g2"))[5] == "television, tv set"
    assert "regressed · critical failed" in row_of(summary, "g3")
    assert "g5 |" not in summary  # unchanged, passing: not listed
    f1 = cells(next(line for line in summary.splitlines() if line.startswith("| f1 |")))
    assert re.fullmatch(r"[−+]\d\.\d{4} … [−+]\d\.\d{4}", f1[4])  # the paired bootstrap interval
    assert "### Drift terms (1)" in summary and "| lamb | forbidden term |" in summary
    assert "**not releasable**" in summary
    assert f"compare?run={run_id}&baseline={baseline}" in summary
    step = Path("step.md").read_text(encoding="utf-8")
    assert step.startswith("## an earlier step\n") and step.endswith(summary)  # appended, the earlier kept


def test_hostile_data_is_neutralised_in_summary_and_comment(ci, baseline):
    markdown_it = pytest.importorskip("markdown_it")
    result = evaluate("cand.jsonl", "--db", "s.duckdb", "--baseline", baseline, "--summary", "sum.md",
                      "--pr-comment", "pr.md")
    assert result.exit_code == 1, result.output
    render = markdown_it.MarkdownIt("commonmark", {"html": True}).enable("table").render
    for name in ("sum.md", "pr.md"):
        text = Path(name).read_text(encoding="utf-8")
        row = row_of(text, "g4")
        assert len(cells(row)) == 8  # the data's pipe and newline made no cell or row
        assert not re.search(r"(?<!\\)`", row)  # every backtick escaped: no code span
        assert "@octocat" not in text and "#123" not in text  # no mention, no issue link
        html = render(text)
        assert "<img" not in html and "<b>" not in html and "<code>" not in html
        assert "&lt;img src=x onerror=alert(1)&gt;" in html and "&lt;b&gt;bold&lt;/b&gt;" in html
        hostile = next(tr for tr in html.split("<tr>") if "octocat" in tr)
        assert hostile.count("<td") == 8


@pytest.mark.slow
def test_a_huge_run_is_folded_under_the_limits(ci):
    queries = 5000
    long_text = "a rather long query about something " * 4
    golden = [golden_row(f"q{i}", f"{long_text}{i}", [f"expected term {k} of {i}" for k in range(6)],
                         forbidden=["bad"] if i < 12 else None) for i in range(queries)]
    write_jsonl(ci / "big.jsonl", golden)
    write_jsonl(ci / "big-base.jsonl", [{"query_id": f"q{i}", "terms": [f"expected term {k} of {i}" for k in range(6)]}
                                        for i in range(queries)])
    write_jsonl(ci / "big-cand.jsonl", [{"query_id": f"q{i}", "terms": ["wrong"] + (["bad"] if i < 12 else [])}
                                        for i in range(queries)])
    assert evaluate("big-base.jsonl", "--db", "s.duckdb", "--json", "b.json", golden="big.jsonl").exit_code == 0
    base_id = json.loads(Path("b.json").read_text())["evaluation_id"]
    result = evaluate("big-cand.jsonl", "--db", "s.duckdb", "--baseline", base_id, "--summary", "sum.md",
                      "--pr-comment", "pr.md", golden="big.jsonl",
                      env={"GITHUB_STEP_SUMMARY": str(ci / "step.md"), "GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1, result.output
    for name, limit, unit in (("sum.md", 1_048_576, "bytes"), ("pr.md", 65_536, "chars")):
        text = Path(name).read_text(encoding="utf-8")
        assert (len(text.encode()) if unit == "bytes" else len(text)) < limit
        assert "<details><summary>4980 more regressed or failed critical queries</summary>" in text
        flagged = text.split("### Drift terms")[0]
        shown = sum(1 for line in flagged.splitlines() if re.match(r"\| q\d+ \| a rather", line))
        rest = re.search(r"… and (\d+) more regressed or failed critical queries not shown", text)
        assert rest and shown + int(rest.group(1)) == queries  # every query shown or counted
        assert "### Drift terms (12)" in text  # the drift section keeps its share of the room
    assert Path("step.md").read_text(encoding="utf-8") == Path("sum.md").read_text(encoding="utf-8")
    found = commands(result.stdout)
    assert [k for k, _, _ in found].count("error") == 10 and [k for k, _, _ in found].count("warning") == 10
    notices = [m for k, _, m in found if k == "notice"]
    assert notices == ["4990 more regressed or failed critical queries not annotated; see the job summary or the report",
                       "2 more drift terms not annotated; see the job summary or the report"]


# ---------------------------------------------------------------- the pull-request comment


@pytest.mark.slow
def test_pr_comment_marker_is_stable_for_a_name_and_differs_for_another(ci, baseline):
    markers = []
    for name in ("nightly", "nightly", "other"):
        result = evaluate("cand.jsonl", "--db", "s.duckdb", "--name", name, "--baseline", baseline,
                          "--pr-comment", "pr.md")
        assert result.exit_code == 1, result.output
        markers.append(Path("pr.md").read_text(encoding="utf-8").splitlines()[0])
    assert markers[0] == markers[1] == f"<!-- termgate: {GOLDEN}/nightly -->"
    assert markers[2] == f"<!-- termgate: {GOLDEN}/other -->"
    hostile = evaluate("cand.jsonl", "--no-store", "--name", "x --> <b>", "--pr-comment", "pr.md")
    assert hostile.exit_code == 1
    text = Path("pr.md").read_text(encoding="utf-8")
    assert text.count("-->") == 1 and text.index("-->") == text.index("\n") - 3  # only the marker's own end


# ---------------------------------------------------------------- annotations and Code Quality


def test_annotations_point_at_golden_lines_relative_to_the_workspace(ci, baseline):
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(ci)}
    result = evaluate("cand.jsonl", "--no-store", "--baseline", "base.json", env=env,
                      golden=str(ci / GOLDEN))  # absolute, inside the workspace
    assert result.exit_code == 1, result.output
    found = commands(result.stdout)
    errors = {p["title"].rsplit(" ", 1)[1]: p for k, p, _ in found if k == "error"}
    assert set(errors) == {"g1", "g2", "g3", "g4", "g6"}
    assert all(p["file"] == GOLDEN for p in errors.values())
    assert {q: int(p["line"]) for q, p in errors.items()} == {q: LINES[q] for q in errors}
    messages = {p["title"].rsplit(" ", 1)[1]: m for k, p, m in found if k == "error"}
    assert "lost correct: settee; new wrong: sofa bed" in messages["g1"]  # diffs from the baseline report file
    warnings = [(p, m) for k, p, m in found if k == "warning"]
    assert [(p["file"], int(p["line"])) for p, _ in warnings] == [(GOLDEN, LINES["g3"])]
    assert "'lamb'" in warnings[0][1] and "forbidden term" in warnings[0][1]
    # a term holding "::add-mask::" stays inside g4's annotation
    assert not any(line.startswith("::add-mask") for line in result.stdout.splitlines())


def test_data_cannot_issue_a_workflow_command(ci):
    refused = "odd%:,\r\n::set-output name=x::y"  # a query id with CR or LF is refused on input (exit 2)
    write_jsonl(ci / "bad.jsonl", [golden_row(refused, "q", ["a"])])
    write_jsonl(ci / "bad-c.jsonl", [{"query_id": refused, "terms": ["a"]}])
    bad = evaluate("bad-c.jsonl", "--no-store", golden="bad.jsonl", env={"GITHUB_ACTIONS": "true"})
    assert bad.exit_code == 2 and not any(line.startswith("::") for line in bad.output.splitlines())
    qid = "odd%:,::set-output name=x::y"
    write_jsonl(ci / "odd.jsonl", [golden_row(qid, "q\n::warning::boo", ["a"], forbidden=["::add-mask::s"],
                                              critical=True)])
    write_jsonl(ci / "odd-c.jsonl", [{"query_id": qid, "terms": ["::add-mask::s", "x\n::stop-commands::t"]}])
    result = evaluate("odd-c.jsonl", "--no-store", golden="odd.jsonl", env={"GITHUB_ACTIONS": "true"})
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in lines if line.startswith("::")] == ["::error", "::warning"]
    error = next(line for line in lines if line.startswith("::error"))
    assert "title=termgate%3A failed critical query odd%25%3A%2C%3A%3Aset-output name=x%3A%3Ay::" in error
    assert "::odd%25:,::set-output name=x::y (" in error  # the message: % encoded
    assert not any(line.startswith(("::set-output", "::add-mask", "::stop-commands", "::warning::boo"))
                   for line in lines)


def test_gate_annotates_from_the_golden_file_stored_with_the_run(ci, baseline):
    result = evaluate("cand.jsonl", "--db", "s.duckdb", "--baseline", baseline, "--json", "cand.json")
    assert result.exit_code == 1
    run_id = json.loads(Path("cand.json").read_text())["evaluation_id"]
    Path(GOLDEN).unlink()  # the original is gone; the store kept its text
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(ci), "GITHUB_STEP_SUMMARY": str(ci / "step.md")}
    gate = cli("gate", run_id, "--db", "s.duckdb", "--codequality", "gcq.json", "--summary", "gs.md", env=env)
    assert gate.exit_code == 1, gate.output
    found = commands(gate.stdout)
    errors = {p["title"].rsplit(" ", 1)[1]: (p["file"], int(p["line"])) for k, p, _ in found if k == "error"}
    assert errors == {q: (GOLDEN, LINES[q]) for q in ("g1", "g2", "g3", "g4", "g6")}
    report = json.loads(Path("gcq.json").read_text())
    assert {i["location"]["lines"]["begin"] for i in report} == {LINES[q] for q in ("g1", "g2", "g3", "g4", "g6")}
    summary = Path("gs.md").read_text(encoding="utf-8")
    assert cells(row_of(summary, "g1"))[5:7] == ["settee", "sofa bed"]  # diffs from the stored baseline
    assert Path("step.md").read_text(encoding="utf-8").endswith(summary)


@pytest.mark.slow
def test_codequality_report_is_valid_with_lines_and_stable_fingerprints(ci, baseline):
    reports = []
    for _ in range(2):
        result = evaluate("cand.jsonl", "--db", "s.duckdb", "--baseline", baseline, "--codequality", "cq.json",
                          "--json", "cq-run.json", env={"CI_PROJECT_DIR": str(ci)}, golden=str(ci / GOLDEN))
        assert result.exit_code == 1, result.output
        reports.append(json.loads(Path("cq.json").read_text(encoding="utf-8")))
    report = reports[0]
    assert isinstance(report, list) and len(report) == 6  # five flagged queries, one drift term
    for item in report:
        assert set(item) == {"description", "check_name", "fingerprint", "severity", "location"}
        assert item["location"]["path"] == GOLDEN and isinstance(item["location"]["lines"]["begin"], int)
    by_query = {(i["check_name"], i["description"].split(" ", 1)[0]): i for i in report}
    assert by_query[("termgate.regressed", "g1")]["location"]["lines"]["begin"] == LINES["g1"]
    assert by_query[("termgate.regressed", "g3")]["severity"] == "critical"  # critical and failed
    assert by_query[("termgate.drift", "drift")]["location"]["lines"]["begin"] == LINES["g3"]
    assert len({i["fingerprint"] for i in report}) == 6
    assert [i["fingerprint"] for i in reports[1]] == [i["fingerprint"] for i in report]  # stable across runs
    # and across the rename: evalcore hashed its own check names, so GitLab keeps tracking each item
    golden_name = json.loads(Path("cq-run.json").read_text(encoding="utf-8"))["run"]["golden_name"]
    for item in report:
        old_check = item["check_name"].replace("termgate.", "evalcore.", 1)
        words = item["description"].split(" ")  # "g1 regressed: …", or "drift term 'lamb' in g3 …"
        key = ([golden_name, old_check, words[4], words[2].strip("'")] if words[0] == "drift"
               else [golden_name, old_check, words[0]])
        evalcore = hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()
        assert item["fingerprint"] == evalcore, item


# ---------------------------------------------------------------- JUnit


def test_junit_regressed_passing_query_fails_with_suites_per_domain(ci, baseline):
    result = evaluate("cand.jsonl", "--db", "s.duckdb", "--baseline", baseline, "--junit", "j.xml", "--json", "c.json")
    assert result.exit_code == 1
    report = json.loads(Path("c.json").read_text())
    root = ET.parse("j.xml").getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"ecommerce", "home"}
    assert [c.get("name") for c in suites["home"].iter("testcase")] == ["g5", "g6"]
    g6 = next(c for c in suites["home"].iter("testcase") if c.get("name") == "g6")
    assert next(q for q in report["per_query_results"] if q["query_id"] == "g6")["passed"] is True
    failure = g6.find("failure")
    assert failure is not None and failure.get("type") == "regressed" and "F1 1.0000 -> 0.8000" in failure.get("message")
    assert suites["home"].get("failures") == "1" and suites["ecommerce"].get("failures") == "4"
    for suite in suites.values():
        props = {p.get("name"): p.get("value") for p in suite.iter("property")}
        assert props["run_id"] == report["evaluation_id"] and props["gate"] == "fail"
        assert props["content_hash"] == report["run"]["content_hash"]


# ---------------------------------------------------------------- output paths and failures


def test_ci_outputs_go_through_the_output_checks(ci, baseline):
    before = Path(GOLDEN).read_bytes()
    refused = evaluate("cand.jsonl", "--db", "t.duckdb", "--summary", GOLDEN)
    assert refused.exit_code == 2 and f"--summary {GOLDEN}: is the same file as --golden" in refused.stderr
    assert Path(GOLDEN).read_bytes() == before and not Path("t.duckdb").exists()
    store = Path("s.duckdb").read_bytes()
    refused = evaluate("cand.jsonl", "--db", "s.duckdb", env={"GITHUB_STEP_SUMMARY": "s.duckdb"})
    assert refused.exit_code == 2 and "$GITHUB_STEP_SUMMARY s.duckdb: is the same file as --db" in refused.stderr
    assert Path("s.duckdb").read_bytes() == store
    refused = evaluate("cand.jsonl", "--no-store", "--pr-comment", "/dev/null")
    assert refused.exit_code == 2 and "character device" in refused.stderr
    refused = evaluate("cand.jsonl", "--no-store", "--summary", "step.md", env={"GITHUB_STEP_SUMMARY": "step.md"})
    assert refused.exit_code == 2 and "same file as $GITHUB_STEP_SUMMARY" in refused.stderr
    run_id = json.loads(Path("base.json").read_text())["evaluation_id"]
    refused = cli("gate", run_id, "--db", "s.duckdb", "--codequality", "s.duckdb")
    assert refused.exit_code == 2 and "same file as --db" in refused.stderr
    assert Path("s.duckdb").read_bytes() == store


def test_no_output_replaces_the_config_file_or_a_refits_coefficients(ci, baseline):
    """The settings are inputs too: `./termgate.toml`, `$TERMGATE_CONFIG` and the file
    `[drift] coefficients` names are never written over (SPEC §5)."""
    Path("termgate.toml").write_text('high_risk_domains = ["legal", "medical"]\n', encoding="utf-8")
    refused = evaluate("cand.jsonl", "--no-store", "--json", "./termgate.toml")
    assert refused.exit_code == 2 and "--json ./termgate.toml: is the same file as the config file" in refused.stderr
    Path("termgate.toml").unlink()
    Path("team.toml").write_text('[drift]\ncoefficients = "refit.json"\n', encoding="utf-8")
    Path("refit.json").write_text("{}", encoding="utf-8")
    team = {"TERMGATE_CONFIG": "team.toml"}
    for flag, path in (("--summary", "refit.json"), ("--html", "team.toml")):
        refused = evaluate("cand.jsonl", "--no-store", flag, path, env=team)
        assert refused.exit_code == 2 and f"{flag} {path}: is the same file as" in refused.stderr, refused.output
    refused = cli("gate", baseline, "--db", "s.duckdb", "--summary", "team.toml", env=team)
    assert refused.exit_code == 2 and "the config file team.toml" in refused.stderr
    assert Path("team.toml").read_text(encoding="utf-8").startswith("[drift]")
    assert Path("refit.json").read_text(encoding="utf-8") == "{}"


def test_nothing_is_half_written_when_a_ci_output_fails(ci, monkeypatch):
    import termgate.cli.ci as ci_module

    def broken(*_):
        raise RuntimeError("renderer broke")
    monkeypatch.setattr(ci_module, "codequality_report", broken)
    result = evaluate("cand.jsonl", "--no-store", "--summary", "out/sum.md", "--codequality", "out/cq.json")
    assert isinstance(result.exception, RuntimeError)
    assert list(Path("out").iterdir()) == []  # neither file, nor a temporary one


def test_harness_writes_the_same_summary(ci):
    Path("no_expander.py").write_text("def expand(query, context):\n    return []\n", encoding="utf-8")
    result = cli("harness", "--golden", GOLDEN, "--callable", "no_expander:expand", "--no-store",
                 "--drift-judge", "none", "--summary", "h.md", "--pr-comment", "hpr.md")
    assert result.exit_code == 1, result.output
    summary = Path("h.md").read_text(encoding="utf-8")
    assert "critical failed" in row_of(summary, "g3")
    assert cells(row_of(summary, "g3"))[5] == "light, lantern (vs golden)"  # no baseline: missing expected terms
    assert "not stored (--no-store)" in summary
    assert Path("hpr.md").read_text(encoding="utf-8").startswith(f"<!-- termgate: {GOLDEN}/ -->\n")


def test_gate_places_every_flagged_query_of_a_large_stored_run_at_its_line(ci):
    rows = []
    for i in range(400):  # every query critical and failed; a blank line after every seventh
        rows.append(json.dumps(golden_row(f"q{i}", f"query {i}", ["expected"], critical=True)))
        if i % 7 == 0:
            rows.append("")
    Path("big.jsonl").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    write_jsonl(ci / "big-c.jsonl", [{"query_id": f"q{i}", "terms": ["wrong"]} for i in range(400)])
    result = evaluate("big-c.jsonl", "--db", "s.duckdb", "--json", "big.json", golden="big.jsonl")
    assert result.exit_code == 1, result.output
    run_id = json.loads(Path("big.json").read_text())["evaluation_id"]
    want = {json.loads(line)["query_id"]: n for n, line in enumerate(Path("big.jsonl").read_text().split("\n"), 1)
            if line.strip()}
    Path("big.jsonl").unlink()
    assert cli("gate", run_id, "--db", "s.duckdb", "--codequality", "big-cq.json").exit_code == 1
    report = json.loads(Path("big-cq.json").read_text(encoding="utf-8"))
    placed = {i["description"].split(" ", 1)[0]: i["location"]["lines"]["begin"] for i in report}
    assert placed == want and not any("not known" in i["description"] for i in report)
