"""Edge cases found in review: each pins down behaviour the SPEC requires."""

from __future__ import annotations

import errno
import json

import pytest
from click.testing import CliRunner

from termgate.report import query_rows
from termgate.cli import main
from termgate.config import load_settings
from termgate.errors import InputError
from termgate.llm.harness import parse_reply
from termgate.evaluation import evaluate
from termgate.io import load_baseline_report, load_generated, load_golden_set, load_thresholds
from termgate.scoring.metrics import format_pair

from conftest import golden_row, write_jsonl


def test_unicode_line_separators_inside_strings_are_data(tmp_path):
    # U+2028 and U+0085 are valid inside JSON strings; only \n ends a JSONL line
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "heart\u2028attack", ["a\u0085b"]),
                                                 golden_row("q2", "stroke", ["cva"])])
    items = load_golden_set(golden).items
    assert [i.query_id for i in items] == ["q1", "q2"]
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["x\u2029y"]}])
    assert load_generated(generated, {"q1", "q2"}).expansions == {"q1": [("x\u2029y", 1.0)]}
    run = evaluate(golden, generated, drift_judge="none")
    assert [r["generated_terms"] for r in query_rows(run)] == [["x y"], []]  # U+2029 is white space to split()
    assert query_rows(run)[0]["original_query"] == "heart\u2028attack"


def test_crlf_lines_keep_their_numbers(tmp_path):
    path = tmp_path / "g.jsonl"
    path.write_bytes(b'{"query_id": "q1", "query": "x", "expected_expansions": []}\r\n{"query_id": 5}\r\n')
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    assert str(info.value.problems[0]).startswith(f"{path}:2: query_id:")


def test_unwritable_output_is_exit_2_and_stores_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "x", ["a"])])
    write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["a"]}])
    (tmp_path / "afile").write_text("")
    result = CliRunner().invoke(main, ["evaluate", "--golden", "g.jsonl", "--generated", "c.jsonl", "--db", "s.duckdb",
                                       "--json", "afile/o.json", "--drift-judge", "none"])
    assert result.exit_code == 2 and "cannot write --json afile/o.json" in result.stderr
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.parametrize("form", ["jsonl", "mapping"])
def test_a_report_failing_midway_stores_nothing_and_writes_nothing(tmp_path, monkeypatch, form):
    """A full disk while the HTML report is written, after the JSON report and the store's
    inserts: the store rolls back, no report file is left, exit 2 names the output. Both
    routes into the scorer: read directly (JSONL) and handed over by the validator (mapping)."""
    import duckdb

    import termgate.cli.evaluate as evaluate_cli

    def disk_full(report):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(evaluate_cli, "render_html", disk_full)
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "x", ["a"])])
    if form == "jsonl":
        write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["a"]}])
    else:
        (tmp_path / "c.jsonl").write_text('{\n  "q1": ["a"]\n}\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["evaluate", "--golden", "g.jsonl", "--generated", "c.jsonl", "--db", "s.duckdb",
                                       "--json", "o.json", "--html", "o.html", "--drift-judge", "none"])
    assert result.exit_code == 2 and "cannot write --html o.html: No space left on device" in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(("o.", ".o."))) == []
    if (tmp_path / "s.duckdb").exists():
        with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
            assert con.execute("SELECT count(*) FROM runs").fetchall()[0][0] == 0
            assert con.execute("SELECT count(*) FROM query_results").fetchall()[0][0] == 0


def test_baseline_report_with_bad_precision_is_an_input_error(tmp_path):
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"per_query_results": [{"query_id": "q1", "f1": 1.0, "passed": True,
                                                       "precision": None}]}))
    with pytest.raises(InputError, match="per_query_results\\[0\\]"):
        load_baseline_report(path)


ROW = '{"query_id": "q1", "f1": 1.0, "passed": true, "precision": 1.0, "recall": 1.0}'


@pytest.mark.parametrize("rows, line, field, message", [
    # a crafted baseline could hide a regression: the second q1 row must not win silently
    ([ROW, ROW.replace("1.0", "0.0").replace("true", "false")], 3, "per_query_results[1].query_id",
     "duplicate query_id 'q1'"),
    ([ROW.replace('"f1": 1.0', '"f1": NaN')], 2, "json", "NaN is not a JSON number"),
    ([ROW, ROW.replace('"recall": 1.0', '"recall": -Infinity')], 3, "json", "-Infinity is not a JSON number"),
    ([ROW.replace('"f1": 1.0', '"f1": 1e400')], 2, "json", "1e400 is not a JSON number"),
    ([ROW.replace('"f1": 1.0', '"f1": 2')], 1, "per_query_results[0]", "numbers in [0, 1]"),
])
def test_a_baseline_report_that_could_fool_the_comparison_is_an_input_error(tmp_path, rows, line, field, message):
    path = tmp_path / "base.json"
    path.write_text('{"per_query_results": [\n' + ",\n".join(rows) + "\n]}", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_baseline_report(path)
    problem = info.value.problems[0]
    assert (problem.line, problem.field) == (line, field) and message in problem.message, problem


@pytest.mark.parametrize("toml, key", [('approvals_required = {medical = "two"}', "approvals_required"),
                                       ('drift = "x"', "drift"), ('high_risk_domainz = ["x"]', "high_risk_domainz")])
def test_bad_settings_are_input_errors(tmp_path, monkeypatch, toml, key):
    config = tmp_path / "termgate.toml"
    config.write_text(toml + "\n", encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    with pytest.raises(InputError) as info:
        load_settings()
    assert info.value.problems[0].field == key and info.value.problems[0].line == 1


def test_environment_overrides_the_drift_judge(monkeypatch):
    monkeypatch.setenv("TERMGATE_DRIFT_JUDGE", "none")
    assert load_settings().drift["judge"] == "none"


@pytest.mark.parametrize("reply, terms", [("E. coli\nSalmonella", {"e. coli", "salmonella"}),
                                          ("A. Lincoln", {"a. lincoln"}), ("1. MI\n2) ACS", {"mi", "acs"})])
def test_initials_are_terms_not_list_labels(reply, terms):
    assert set(parse_reply(reply)) == terms


def test_empty_code_fence_is_an_errored_reply():
    with pytest.raises(ValueError, match="empty"):
        parse_reply("```json\n```")


@pytest.mark.parametrize("value, limit, shown", [(0.5, 0.6, ("0.50", "0.60")), (2 / 3, 0.667, ("0.6667", "0.6670")),
                                                 (0.499, 0.5, ("0.499", "0.500"))])
def test_failure_numbers_never_look_equal(value, limit, shown):
    assert format_pair(value, limit) == shown


def test_reason_shows_enough_digits(score):
    from termgate.models import Thresholds
    s = score([golden_row("q1", "q", ["a", "b", "c"])], [{"query_id": "q1", "terms": ["a", "b"]}],
              thresholds=Thresholds(recall_min=0.667)).scores[0]
    assert "recall 0.6667 < 0.6670" in s.failure_reasons


def test_ci_gate_accepts_float_one_and_rejects_bool(tmp_path):
    ok = tmp_path / "t.toml"
    ok.write_text("ci_gate = 1.0\n", encoding="utf-8")
    assert load_thresholds(ok).ci_gate == 1
    bad = tmp_path / "t.json"
    bad.write_text('{"ci_gate": true}', encoding="utf-8")
    with pytest.raises(InputError, match="ci_gate"):
        load_thresholds(bad)


def test_duplicate_key_inside_a_term_object_is_named_as_such(tmp_path):
    path = tmp_path / "c.json"
    path.write_text('{"q1": [{"term": "a", "term": "b"}]}', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_generated(path, {"q1"})
    assert str(info.value.problems[0]) == f"{path}:1: q1[0].term: repeated key 'term'"


def test_one_line_jsonl_with_a_numeric_id_names_the_field(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_text('{"query_id": 5, "terms": []}\n', encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_generated(path, {"q1"})
    assert info.value.problems[0].field == "query_id" and "non-empty string" in info.value.problems[0].message
