"""Input loading and validation (SPEC §1.1–§1.3, §5): every bad input is one exact
`FILE:LINE: FIELD: message` problem; the good edge cases load.

Each bad case is a hand-made file with a single fault; a valid line usually comes first so
the line number of the fault is not trivially 1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from termgate.errors import MAX_PROBLEMS, InputError, Problem
from termgate.evaluation import evaluate
from termgate.io import load_generated, load_golden_set, load_thresholds
from termgate.models import Thresholds

from conftest import query_rows

from helpers_io import PROBLEM_LINE, dumps, golden_row, write_lines

OK = dumps(golden_row("q0", "sofa", ["couch"]))  # a valid line to put before the fault


def _only_problem(exc: InputError) -> Problem:
    assert len(exc.problems) == 1, exc.lines()
    return exc.problems[0]


def _assert_problem(exc: InputError, path: Path, line: int, field: str, phrase: str) -> None:
    """Exactly one problem, at FILE:LINE: FIELD, whose message matches `phrase` (regex)."""
    problem = _only_problem(exc)
    assert problem.file == str(path)
    assert problem.line == line
    assert problem.field == field
    assert re.search(phrase, problem.message, re.IGNORECASE), problem.message
    shown = str(problem)
    assert shown == f"{path}:{line}: {field}: {problem.message}"
    m = PROBLEM_LINE.match(shown)
    assert m and m["field"] == field and int(m["line"]) == line
    assert str(exc) == shown  # the exception prints the same single line
    assert exc.lines() == [shown]


# ---------------------------------------------------------------- golden set (§1.1)

GOLDEN_BAD = [
    # (lines, expected line, expected field, message phrase)
    pytest.param([OK, '{"query_id": "q1", "query": "heart attack",'], 2, "json", r"malformed JSON",
                 id="malformed-json"),
    pytest.param([OK, '{"query_id": "q1"} trailing'], 2, "json", r"malformed JSON", id="trailing-garbage"),
    pytest.param([OK, dumps(["q1", "heart attack"])], 2, "json", r"JSON object", id="array-not-object"),
    pytest.param([OK, "null"], 2, "json", r"JSON object", id="null-not-object"),
    pytest.param([OK, dumps({"query": "x", "expected_expansions": []})], 2, "query_id", r"missing",
                 id="missing-query_id"),
    pytest.param([OK, dumps({"query_id": "q1", "expected_expansions": []})], 2, "query", r"missing",
                 id="missing-query"),
    pytest.param([OK, dumps({"query_id": "q1", "query": "x"})], 2, "expected_expansions", r"missing",
                 id="missing-expected_expansions"),
    pytest.param([OK, dumps(golden_row(query_id=7))], 2, "query_id", r"string", id="query_id-number"),
    pytest.param([OK, dumps(golden_row(query_id=""))], 2, "query_id", r"at least 1|empty|blank",
                 id="query_id-empty"),
    pytest.param([OK, dumps(golden_row(critical="yes"))], 2, "critical", r"bool", id="critical-string"),
    pytest.param([OK, dumps(golden_row(expected=["mi", {"term": "myocardial infarction", "min_weight": "0.5"}]))],
                 2, "expected_expansions[1].min_weight", r"number", id="min_weight-string"),
    pytest.param([OK, dumps(golden_row(expected=[{"term": "mi", "min_weight": True}]))],
                 2, "expected_expansions[0].min_weight", r"number", id="min_weight-boolean"),
    pytest.param([OK, dumps(golden_row(expected=["mi", {"term": "myocardial infarction", "min_weight": 1.5}]))],
                 2, "expected_expansions[1].min_weight", r"1\.5", id="min_weight-above-1"),
    pytest.param([OK, dumps(golden_row(expected=[{"term": "mi", "min_weight": -0.1}]))],
                 2, "expected_expansions[0].min_weight", r"-0\.1", id="min_weight-negative"),
    pytest.param([OK, dumps(golden_row(expected=[{"term": 5}]))], 2, "expected_expansions[0].term",
                 r"string", id="term-number"),
    pytest.param([OK, dumps(golden_row(expected_expansions="mi"))], 2, "expected_expansions",
                 r"array|list", id="expected_expansions-not-list"),
    pytest.param([OK, dumps(golden_row(expected_expansions=["mi"]))], 2, "expected_expansions[0]",
                 r"object", id="expansion-not-object"),
    pytest.param([OK, dumps(golden_row(context={"domain": 3}))], 2, "context.domain", r"string",
                 id="domain-number"),
    pytest.param([OK, dumps(golden_row(forbidden_terms="panic attack"))], 2, "forbidden_terms",
                 r"array|list", id="forbidden_terms-not-list"),
    pytest.param([OK, dumps(golden_row(query="   "))], 2, "query", r"blank", id="blank-query"),
    pytest.param([OK, dumps(golden_row(query=""))], 2, "query", r"blank|empty|at least 1", id="empty-query"),
    # "  " normalises to "": SPEC §1.1 makes that an input error
    pytest.param([OK, dumps(golden_row(expected=["mi", "  "]))], 2, "expected_expansions[1].term",
                 r"empty after normali[sz]ation", id="term-empty-after-normalisation"),
    pytest.param([OK, dumps(golden_row(forbidden_terms=["\t "]))], 2, "forbidden_terms[0]",
                 r"empty after normali[sz]ation", id="forbidden-empty-after-normalisation"),
    # "MI" and "mi" are one term after casefolding: expected and forbidden at once
    pytest.param([OK, dumps(golden_row(expected=["MI"], forbidden_terms=["panic attack", "mi"]))], 2,
                 "forbidden_terms[1]", r"both expected and forbidden", id="term-expected-and-forbidden"),
    # NFKC folds full-width letters; extra spaces collapse
    pytest.param([OK, dumps(golden_row(expected=["ＭＩ"], forbidden_terms=["  mi "]))], 2,
                 "forbidden_terms[0]", r"both expected and forbidden", id="term-expected-and-forbidden-nfkc"),
    # q0 again on line 3 (line 2 is blank, still counted): reported where the duplicate is
    pytest.param([OK, "", dumps(golden_row("q0"))], 3, "query_id", r"duplicate.*line 1",
                 id="duplicate-query_id"),
    pytest.param(["", "   ", "\t"], 1, "golden set", r"no golden queries", id="empty-golden-set"),
]


@pytest.mark.parametrize(("lines", "line", "field", "phrase"), GOLDEN_BAD)
def test_golden_set_bad_input(tmp_path, lines, line, field, phrase):
    path = write_lines(tmp_path / "golden.jsonl", lines)
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    _assert_problem(info.value, path, line, field, phrase)


def test_golden_set_zero_byte_file_is_an_input_error(tmp_path):
    path = tmp_path / "golden.jsonl"
    path.write_bytes(b"")
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    _assert_problem(info.value, path, 1, "golden set", r"no golden queries")


def test_golden_set_not_utf8_names_the_line_of_the_bad_byte(tmp_path):
    path = tmp_path / "golden.jsonl"
    # line 1 valid, line 2 blank, line 3 holds a Latin-1 "é" (0xe9), invalid in UTF-8
    path.write_bytes(OK.encode() + b"\n\n" + b'{"query_id": "q1", "query": "caf\xe9", "expected_expansions": []}\n')
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    _assert_problem(info.value, path, 3, "encoding", r"UTF-8")


def test_golden_set_one_line_with_two_faults_gives_two_problems(tmp_path):
    path = write_lines(tmp_path / "golden.jsonl",
                       [OK, dumps(golden_row(query_id=5, expected=[{"term": "mi", "min_weight": 2}]))])
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    fields = sorted((p.line, p.field) for p in info.value.problems)
    assert fields == [(2, "expected_expansions[0].min_weight"), (2, "query_id")]


def test_golden_set_problems_on_several_lines_are_all_reported(tmp_path):
    path = write_lines(tmp_path / "golden.jsonl", [
        OK,
        dumps({"query": "x", "expected_expansions": []}),      # line 2: query_id missing
        dumps(golden_row("q2", critical="no")),                 # line 3: critical mistyped
        "{broken",                                              # line 4: malformed
    ])
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    assert [(p.line, p.field) for p in info.value.problems] == [(2, "query_id"), (3, "critical"), (4, "json")]
    assert all(PROBLEM_LINE.match(line) for line in info.value.lines())


# ---------------------------------------------------------------- generated expansions (§1.2)

GOLDEN_IDS = {"q1", "q2"}
GEN_OK = dumps({"query_id": "q1", "terms": ["mi"]})


def scored_terms(tmp_path: Path, generated: Path) -> dict[str, dict[str, float]]:
    """query_id -> generated term -> weight, as the scorer reads `generated` against a
    golden set of GOLDEN_IDS (normalised and merged, rule 1)."""
    golden = write_lines(tmp_path / "scored-golden.jsonl", [dumps(golden_row(q)) for q in sorted(GOLDEN_IDS)])
    run = evaluate(golden, generated, drift_judge="none")
    try:
        return {row.query_id: row.generated for row in query_rows(run)}
    finally:
        run.close()

GENERATED_BAD = [
    pytest.param([GEN_OK, dumps({"query_id": "zz", "terms": ["a"]})], 2, "query_id",
                 r"'zz'.*not in the golden set", id="unknown-query_id"),
    pytest.param([GEN_OK, "", dumps({"query_id": "q1", "terms": ["b"]})], 3, "query_id",
                 r"duplicate.*line 1", id="duplicate-query_id"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": ["a", {"term": "b", "weight": 1.2}]})], 2,
                 "terms[1].weight", r"\[0, 1\].*1\.2", id="weight-above-1"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": [{"term": "b", "weight": -0.1}]})], 2,
                 "terms[0].weight", r"\[0, 1\]", id="weight-negative"),
    # booleans are not numbers (SPEC §1.2), although True == 1 in Python
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": [{"term": "b", "weight": True}]})], 2,
                 "terms[0].weight", r"number", id="weight-boolean"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": [{"term": "b", "weight": "0.5"}]})], 2,
                 "terms[0].weight", r"number", id="weight-string"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": ["a", 42]})], 2, "terms[1]",
                 r"string or an object", id="term-neither-string-nor-object"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": [None]})], 2, "terms[0]",
                 r"string or an object", id="term-null"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": [{"weight": 0.5}]})], 2, "terms[0].term",
                 r"missing", id="term-object-without-term"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": ["  "]})], 2, "terms[0]",
                 r"empty after normali[sz]ation", id="term-empty-after-normalisation"),
    pytest.param([GEN_OK, dumps({"query_id": "q2", "terms": "mi, heart attack"})], 2, "terms",
                 r"list", id="terms-not-a-list"),
    pytest.param([GEN_OK, dumps({"query_id": "q2"})], 2, "terms", r"missing", id="terms-missing"),
    pytest.param([GEN_OK, dumps({"query_id": 2, "terms": []})], 2, "query_id", r"string",
                 id="query_id-number"),
    pytest.param([GEN_OK, '{"query_id": "q2", "terms": ['], 2, "json", r"malformed JSON", id="malformed-json"),
    pytest.param([GEN_OK, dumps(["q2", "mi"])], 2, "json", r"JSON object", id="array-not-object"),
    # mapping form: the line is where the offending key stands
    pytest.param(['{"q1": ["mi"],', ' "zz": ["b"]}'], 2, "query_id", r"'zz'.*not in the golden set",
                 id="mapping-unknown-query_id"),
    pytest.param(['{"q1": ["mi"],', ' "q1": ["b"]}'], 2, "query_id", r"duplicate.*line 1",
                 id="mapping-duplicate-query_id"),
    pytest.param(['{"q1": ["mi"],', ' "q2": [{"term": "b", "weight": 2}]}'], 2, "q2[0].weight",
                 r"\[0, 1\]", id="mapping-weight-out-of-range"),
]


@pytest.mark.parametrize(("lines", "line", "field", "phrase"), GENERATED_BAD)
def test_generated_bad_input(tmp_path, lines, line, field, phrase):
    path = write_lines(tmp_path / "generated.jsonl", lines)
    with pytest.raises(InputError) as info:
        load_generated(path, GOLDEN_IDS)
    _assert_problem(info.value, path, line, field, phrase)


def test_generated_single_line_missing_terms_names_the_field(tmp_path):
    path = write_lines(tmp_path / "generated.jsonl", [dumps({"query_id": "q1"})])
    with pytest.raises(InputError) as info:
        load_generated(path, GOLDEN_IDS)
    _assert_problem(info.value, path, 1, "terms", r"missing")


def test_generated_not_utf8_names_the_line_of_the_bad_byte(tmp_path):
    path = tmp_path / "generated.jsonl"
    path.write_bytes(GEN_OK.encode() + b'\n{"query_id": "q2", "terms": ["\xff"]}\n')
    with pytest.raises(InputError) as info:
        load_generated(path, GOLDEN_IDS)
    _assert_problem(info.value, path, 2, "encoding", r"UTF-8")


# ---------------------------------------------------------------- thresholds (§1.3)

THRESHOLDS_BAD = [
    pytest.param('{"precision_min": 0.5,\n "bogus": 0.1}', 2, "bogus", r"unknown", id="unknown-key"),
    pytest.param('{\n "recall_min": 1.5\n}', 2, "recall_min", r"\[0, 1\].*1\.5", id="above-1"),
    pytest.param('{"drift_min": -0.2}', 1, "drift_min", r"\[0, 1\]", id="negative"),
    pytest.param('{"recall_min": "0.5"}', 1, "recall_min", r"number", id="string-value"),
    pytest.param('{"recall_min": true}', 1, "recall_min", r"number", id="boolean-value"),
    pytest.param('{"ci_gate": 2}', 1, "ci_gate", r"0 or 1", id="ci_gate-2"),
    pytest.param('{"ci_gate": true}', 1, "ci_gate", r"0 or 1|number", id="ci_gate-boolean"),
    pytest.param('{"drift_min": 0.8,\n "forbidden_fails": "some"}', 2, "forbidden_fails",
                 r'"critical", "all" or "none" \(got "some"\)', id="forbidden_fails-unknown"),
    pytest.param('{"forbidden_fails": "Critical"}', 1, "forbidden_fails", r'"critical", "all" or "none"',
                 id="forbidden_fails-case"),
    pytest.param('{"forbidden_fails": 1}', 1, "forbidden_fails", r'"critical", "all" or "none" \(got 1\)',
                 id="forbidden_fails-number"),
    pytest.param('{"recall_min":\n', 2, "json", r"malformed", id="malformed-json"),
    pytest.param('[0.5]', 1, "thresholds", r"object", id="not-an-object"),
]


@pytest.mark.parametrize(("text", "line", "field", "phrase"), THRESHOLDS_BAD)
def test_thresholds_bad_input(tmp_path, text, line, field, phrase):
    path = tmp_path / "thresholds.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_thresholds(path)
    _assert_problem(info.value, path, line, field, phrase)


def test_thresholds_toml_unknown_key_names_line(tmp_path):
    path = tmp_path / "thresholds.toml"
    path.write_text("precision_min = 0.7\nbogus = 1\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_thresholds(path)
    _assert_problem(info.value, path, 2, "bogus", r"unknown")


def test_thresholds_toml_malformed(tmp_path):
    path = tmp_path / "thresholds.toml"
    path.write_text("precision_min = 0.7\nrecall_min = \n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        load_thresholds(path)
    problem = _only_problem(info.value)
    assert (problem.file, problem.field) == (str(path), "toml")
    assert "malformed" in problem.message
    assert PROBLEM_LINE.match(str(problem))


def test_thresholds_toml_malformed_names_the_line(tmp_path):
    path = tmp_path / "thresholds.toml"
    path.write_text("precision_min = 0.7\nrecall_min = \n", encoding="utf-8")  # fault on line 2
    with pytest.raises(InputError) as info:
        load_thresholds(path)
    assert _only_problem(info.value).line == 2


def test_thresholds_toml_valid(tmp_path):
    path = tmp_path / "thresholds.toml"
    path.write_text("precision_min = 0.7\nrecall_min = 1\nci_gate = 1\n", encoding="utf-8")
    t = load_thresholds(path)
    assert (t.precision_min, t.recall_min, t.ci_gate) == (0.7, 1.0, 1)
    assert t.drift_min == 0.8  # untouched keys keep their defaults


def test_thresholds_json_valid_and_defaults(tmp_path):
    path = tmp_path / "thresholds.json"
    path.write_text('{"regression_delta": 0.05, "mean_recall_min": 0}', encoding="utf-8")
    t = load_thresholds(path)
    assert (t.regression_delta, t.mean_recall_min) == (0.05, 0.0)
    assert load_thresholds(None) == Thresholds()
    assert Thresholds().model_dump() == {
        "precision_min": 0.6, "recall_min": 0.6, "drift_min": 0.8, "regression_delta": 0.1,
        "mean_precision_min": 0.8, "mean_recall_min": 0.85, "recall_floor": 0.6, "ci_gate": 0,
        "forbidden_fails": "critical", "retrieval_delta": 0.1, "retrieval_regressed": "review", "retrieval_k": 10,
        "retrieval_depth": 100}


# ---------------------------------------------------------------- good edge cases

def test_bom_accepted_in_golden_set_and_does_not_change_content_hash(tmp_path):
    rows = [dumps(golden_row("q1")), dumps(golden_row("q2", "stroke", ["cva"]))]
    plain = write_lines(tmp_path / "plain.jsonl", rows)
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    a, b = load_golden_set(plain), load_golden_set(bom)
    assert [i.query_id for i in b.items] == ["q1", "q2"]  # no "\ufeffq1"
    assert a.items == b.items  # the BOM changes nothing read
    generated = write_lines(tmp_path / "generated.jsonl", [GEN_OK])
    hashes = [evaluate(path, generated, drift_judge="none").golden_hash for path in (plain, bom)]
    assert hashes[0] == hashes[1]  # SPEC §4: encoding details do not change the hash
    changed = write_lines(tmp_path / "changed.jsonl", [dumps(golden_row("q1")), dumps(golden_row("q2", "stroke"))])
    assert evaluate(changed, generated, drift_judge="none").golden_hash != hashes[0]


@pytest.mark.parametrize("text", [
    '{"query_id": "q1", "terms": ["MI"]}\n',  # JSONL
    '{"q1": ["MI"]}\n',                        # mapping form
], ids=["jsonl", "mapping"])
def test_bom_accepted_in_generated(tmp_path, text):
    path = tmp_path / "generated.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    assert scored_terms(tmp_path, path)["q1"] == {"mi": 1.0}


def test_blank_lines_are_skipped_but_counted(tmp_path):
    path = write_lines(tmp_path / "golden.jsonl",
                       ["", dumps(golden_row("q1")), "   ", "\t", dumps(golden_row("q2", "stroke", ["cva"])), ""])
    assert [i.query_id for i in load_golden_set(path).items] == ["q1", "q2"]
    gen = write_lines(tmp_path / "generated.jsonl", ["", GEN_OK, "  ", ""])
    assert scored_terms(tmp_path, gen) == {"q1": {"mi": 1.0}, "q2": {}}
    # a fault after blank lines is reported on its physical line (5)
    bad = write_lines(tmp_path / "bad.jsonl", [dumps(golden_row("q1")), "", "", "  ", "{oops"])
    with pytest.raises(InputError) as info:
        load_golden_set(bad)
    assert info.value.problems[0].line == 5


def test_empty_terms_list_is_valid(tmp_path):
    path = write_lines(tmp_path / "generated.jsonl", [dumps({"query_id": "q1", "terms": []})])
    assert load_generated(path, GOLDEN_IDS).expansions == {"q1": []}
    assert scored_terms(tmp_path, path)["q1"] == {}


def test_empty_expected_expansions_is_valid(tmp_path):
    path = write_lines(tmp_path / "golden.jsonl", [dumps(golden_row("q1", expected=[]))])
    assert load_golden_set(path).items[0].expected == {}


def test_golden_query_without_generated_line_gets_empty_expansion(tmp_path):
    golden = write_lines(tmp_path / "golden.jsonl",
                         [dumps(golden_row("q1")), dumps(golden_row("q2", "stroke", ["cva"]))])
    generated = write_lines(tmp_path / "generated.jsonl", [GEN_OK])  # nothing for q2
    run = evaluate(golden, generated, drift_judge="none")
    rows = query_rows(run)
    q2 = next(s for s in rows if s.query_id == "q2")
    # SPEC §2 rule 4: an empty expansion scores 0/0/0 and says so
    assert q2.generated == {}
    assert (q2.precision, q2.recall, q2.f1) == (0.0, 0.0, 0.0)
    assert "empty expansion" in q2.failure_reasons
    assert [s.query_id for s in rows] == ["q1", "q2"]  # golden order


def test_mapping_form_equals_jsonl_form(tmp_path):
    jsonl = write_lines(tmp_path / "generated.jsonl", [
        dumps({"query_id": "q1", "terms": ["MI", {"term": "myocardial infarction", "weight": 0.9}]}),
        dumps({"query_id": "q2", "terms": []}),
    ])
    mapping = tmp_path / "generated.json"
    mapping.write_text(json.dumps({"q1": ["MI", {"term": "myocardial infarction", "weight": 0.9}], "q2": []},
                                  indent=2), encoding="utf-8")
    a = scored_terms(tmp_path, jsonl)
    b = scored_terms(tmp_path, mapping)
    assert a == b == {"q1": {"mi": 1.0, "myocardial infarction": 0.9}, "q2": {}}
    assert list(a["q1"]) == list(b["q1"])  # first-seen order too


def test_generated_terms_equal_after_normalisation_keep_highest_weight(tmp_path):
    # "MI", " mi " and "ＭＩ" are one term (rule 1); 1.0 from the plain string wins over 0.3
    path = write_lines(tmp_path / "generated.jsonl",
                       [dumps({"query_id": "q1", "terms": [{"term": " mi ", "weight": 0.3}, "ＭＩ", "Heart  Attack"]})])
    assert scored_terms(tmp_path, path)["q1"] == {"mi": 1.0, "heart attack": 1.0}


def _many_bad_lines(tmp_path: Path, n: int) -> Path:
    # every line has query_id as a number: one problem per line
    return write_lines(tmp_path / "golden.jsonl", [dumps(golden_row(query_id=i)) for i in range(n)])


def test_more_than_20_problems_are_capped(tmp_path):
    path = _many_bad_lines(tmp_path, 25)
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    lines = info.value.lines()
    assert MAX_PROBLEMS == 20
    assert len(lines) == 21
    assert all(PROBLEM_LINE.match(line) for line in lines[:20])
    assert [int(PROBLEM_LINE.match(line)["line"]) for line in lines[:20]] == list(range(1, 21))
    assert re.search(r"\bmore\b", lines[20]) and not PROBLEM_LINE.match(lines[20])
    assert len(str(info.value).splitlines()) == 20


def test_more_line_does_not_understate_the_number_of_problems(tmp_path):
    path = _many_bad_lines(tmp_path, 25)
    with pytest.raises(InputError) as info:
        load_golden_set(path)
    more = info.value.lines()[-1]
    counted = re.search(r"(\d+) more", more)
    assert counted is not None and int(counted.group(1)) == 5, more


@pytest.mark.parametrize("qid, code", [("q1\x1b[2J\nFAKE", "U+001B"), ("q1\u202e", "U+202E"), ("a\tb", "U+0009")])
@pytest.mark.parametrize("indent", [None, 2])
def test_a_baseline_report_with_a_control_character_in_a_query_id_is_refused(tmp_path, qid, code, indent):
    """Issue 31 item 7's rule held for the golden and generated files only: a baseline report
    (--baseline FILE) carried `q1\\x1b[2J\\nFAKE` into removed_queries, the stored run and the report."""
    from termgate.io import load_baseline_report

    rows = [{"query_id": "q0", "f1": 1.0, "passed": True}, {"query_id": qid, "f1": 1.0, "passed": True}]
    path = tmp_path / "base.json"
    path.write_text(json.dumps({"per_query_results": rows}, indent=indent), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_baseline_report(path)
    (line,) = str(caught.value).splitlines()
    where = 1 if indent is None else 9
    assert line.startswith(f"{path}:{where}: per_query_results[1].query_id: holds {code}"), line
