"""Reports: the shipped JSON Schema, the streamed JSON, HTML escaping and JUnit XML."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import jsonschema
import pytest

from termgate.scoring.regression import Baseline, BaselineRow
from termgate.report import build_report, iter_report_json, render_html, render_junit, report_json
from termgate.report.schema import SCHEMA_PATH, generate_schema

from conftest import golden_row

EVIL = "<script>alert('x')</script> & \"q\"; DROP TABLE runs;--"


@pytest.fixture
def run(score):
    golden = [golden_row("q1", EVIL, ["a", "<b>"], forbidden=["<i>bad</i>"], critical=True),
              golden_row("q2", "plain", ["c", "d"]),
              golden_row("q3", "no golden", [])]
    generated = [{"query_id": "q1", "terms": ["a", "<i>bad</i>", EVIL]}, {"query_id": "q2", "terms": ["c", "d"]}]
    base = Baseline("base-9", "test", {"q1": BaselineRow(1.0, True), "q2": BaselineRow(0.5, False)})
    return score(golden, generated, baseline=base, errors={"q3": "timeout <after> 3 tries"})


def test_shipped_schema_is_current():
    assert SCHEMA_PATH.read_text(encoding="utf-8") == generate_schema(), "run `make schema`"


def test_report_validates_against_shipped_schema(run):
    report = json.loads(report_json(build_report(run)))
    jsonschema.validate(report, json.loads(SCHEMA_PATH.read_text()))
    assert report["summary"]["total_queries"] == 3
    assert [q["query_id"] for q in report["per_query_results"]] == ["q1", "q2", "q3"]  # golden order
    assert report["regression_analysis"]["regressed_queries"] == ["q1"]
    assert report["regression_analysis"]["improved_queries"] == ["q2"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z", report["timestamp"])
    assert report["gate"]["decision"] == "fail"
    assert report["summary"]["errored"] == 1


def test_report_without_baseline_has_empty_regression_analysis(score):
    report = build_report(score([golden_row("q1", "q", ["a"])], [{"query_id": "q1", "terms": ["a"]}]))
    ra = report["regression_analysis"]
    assert ra["regression_detected"] is False and ra["regressed_queries"] == [] and ra["improved_queries"] == []
    assert "No baseline" in ra["delta_summary"]


def test_streamed_json_equals_whole_report(run):
    chunks = list(iter_report_json(run))
    assert len(chunks) >= 3  # head, rows, tail: never the whole report in one piece
    streamed = json.loads(b"".join(chunks))
    assert streamed == json.loads(report_json(build_report(run)))
    assert [r["query_id"] for r in streamed["per_query_results"]] == ["q1", "q2", "q3"]


def test_floats_are_not_rounded(score):
    report = build_report(score([golden_row("q1", "q", ["a", "b", "c"])], [{"query_id": "q1", "terms": ["a", "x", "y"]}]))
    assert report["per_query_results"][0]["precision"] == 1 / 3


def test_html_escapes_every_value(run):
    html = render_html(build_report(run))
    assert "<script>" not in html
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in html
    assert "&lt;i&gt;bad&lt;/i&gt;" in html
    assert "http://" not in html and "https://" not in html  # self-contained: no external assets
    # regressions first: q1 regressed, so its row precedes q2's
    assert html.index(">q1") < html.index(">q2")


def test_junit_has_one_testcase_per_query(run):
    root = ET.fromstring(render_junit(build_report(run)))
    suite = root.find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["q1", "q2", "q3"]
    assert cases[0].find("failure") is not None          # q1 failed
    assert cases[1].find("failure") is None and cases[1].find("error") is None
    assert cases[2].find("error") is not None              # q3 errored
    assert suite.get("tests") == "3" and suite.get("failures") == "1" and suite.get("errors") == "1"
    assert EVIL in cases[0].find("failure").text            # XML-escaped, parsed back intact


def test_statistics_never_tell_a_failed_gate_to_treat_it_as_noise(score):
    """Issue 31 item 13: critical q1 regressed (F1 1.0 -> 0.667, fails now); the mean F1
    change over q1..q4 (-0.033, interval -0.25 … +0.15) is not significant."""
    golden = [golden_row(f"q{i}", f"t{i}", ["a", "b"], critical=True) for i in range(1, 5)]
    generated = [{"query_id": f"q{i}", "terms": ["a"] if i == 1 else ["a", "b"]} for i in range(1, 5)]
    base = Baseline("base", "test", {"q1": BaselineRow(1.0, True), "q2": BaselineRow(0.8, True),
                                     "q3": BaselineRow(1.0, True), "q4": BaselineRow(1.0, True)})
    run = score(golden, generated, baseline=base)
    assert run.gate.decision == "fail"
    html = render_html(build_report(run))
    assert "not significant" in html  # the statistic is still given …
    assert "treat it as noise" not in html  # … but never as a dismissal of the failed gate
    assert "about the mean only" in html
    assert html.index("regressed against baseline base") < html.index("not significant")  # the gate first


def test_statistics_say_noise_when_the_gate_did_not_fail(score):
    golden = [golden_row(f"q{i}", f"t{i}", ["a", "b"]) for i in range(1, 5)]
    generated = [{"query_id": f"q{i}", "terms": ["a", "b"]} for i in range(1, 5)]
    base = Baseline("base", "test", {"q1": BaselineRow(1.0, True), "q2": BaselineRow(0.95, True),
                                     "q3": BaselineRow(1.0, True), "q4": BaselineRow(1.05 - 0.1, True)})
    run = score(golden, generated, baseline=base)
    assert run.gate.decision == "pass"
    assert any("treat it as noise" in r for r in run.recommendations)


# ---------------------------------------------------------------- "newly failing" (issue 31 item 9)


@pytest.fixture
def newly_failing(score):
    """q1 passed with F1 0.4 and fails now with F1 0.5 (precision 0.5 < 0.6): regressed by the
    rule, its F1 rose. q2's F1 fell from 1.0 to 0.0: regressed."""
    golden = [golden_row("q1", "one", ["a", "b"]), golden_row("q2", "two", ["c"])]
    generated = [{"query_id": "q1", "terms": ["a", "x"]}, {"query_id": "q2", "terms": ["z"]}]
    base = Baseline("base-9", "test", {"q1": BaselineRow(0.4, True), "q2": BaselineRow(1.0, True)})
    return score(golden, generated, baseline=base)


def test_html_and_junit_say_newly_failing_where_f1_did_not_fall(newly_failing):
    report = build_report(newly_failing)
    assert report["regression_analysis"]["regressed_queries"] == ["q1", "q2"]  # the report's list is unchanged
    assert [q["regression_status"] for q in report["per_query_results"]] == ["regressed", "regressed"]
    html = render_html(report)
    q1, q2 = html[html.index(">q1<"):html.index("</tr>", html.index(">q1<"))], \
        html[html.index(">q2<"):html.index("</tr>", html.index(">q2<"))]
    assert "fail · newly failing" in q1 and "fail · regressed" in q2
    cases = {c.get("name"): c for c in ET.fromstring(render_junit(report)).iter("testcase")}
    assert "newly failing: F1 0.4000 -> 0.5000" in cases["q1"].find("failure").get("message")
    assert "regressed: F1 1.0000 -> 0.0000" in cases["q2"].find("failure").get("message")


def test_summary_comment_and_annotations_say_newly_failing_where_f1_did_not_fall(newly_failing):
    from termgate.report.annotations import github_annotations
    from termgate.report.findings import FlaggedQuery, Findings
    from termgate.report.markdown import render_pr_comment

    flagged = [FlaggedQuery("q1", "one", None, True, False, 0.5, 0.4, (), ("x",), True, ()),
               FlaggedQuery("q2", "two", None, True, False, 0.0, 1.0, ("c",), ("z",), True, ())]
    f = Findings("run-1", None, "golden.jsonl", "golden.jsonl", "fail", [], [], 2, 0, 0, "base-9", flagged, [],
                 "not releasable", [])
    comment = render_pr_comment(f)
    assert "| newly failing | 0.400 → 0.500 |" in comment
    assert "| regressed | 1.000 → 0.000 |" in comment
    first, second = github_annotations(f, "golden.jsonl")[:2]
    assert "title=termgate%3A newly failing query q1" in first
    assert "newly failing against baseline base-9 (passed there, fails now): F1 0.400 → 0.500" in first
    assert "title=termgate%3A regressed query q2" in second


def test_summary_and_comment_state_the_signatures_and_fold_failing_records_past_ten():
    """Issue 33: the Sign-off section says what the chain's signatures say (the trust root,
    the warning that nothing is pinned, each failing record), escaped as data, ten at most."""
    from termgate.report.findings import Findings
    from termgate.report.markdown import render_pr_comment, render_summary

    trust = ["signatures: 5 signed records from trust root ed25519:AAAA",
             "warning: no trust root is pinned, so a store rewritten whole would not be noticed",
             *[f"record {n} (decision by <b>mallory</b>): unsigned — it carries no authority" for n in range(10, 22)]]
    f = Findings("run-1", None, "golden.jsonl", "golden.jsonl", "review", [], [], 1, 1, 0, None, [], [],
                 "unattested", ["unattested: run run-1's header (record 4) unsigned"], trust=trust)
    for text in (render_summary(f), render_pr_comment(f)):
        tail = text.split("### Sign-off", 1)[1]
        assert "**unattested**" in tail and "- signatures\\: 5 signed records from trust root ed25519\\:AAAA" in tail
        assert "- warning\\: no trust root is pinned" in tail
        assert tail.count("carries no authority") == 8 and "<b>" not in tail  # 2 + 8 lines shown, data escaped
        assert "- … and 4 more (`termgate audit verify` names them all)" in tail
