"""Issue 13, strict inputs: a key repeated within one JSON object, in any input file and at
any depth, is an input error (SPEC §5) — never last-one-wins, which would let a duplicated
`precision_min` loosen the gate silently. Each case goes through the CLI: exit 2, one
line `FILE:LINE: FIELD: repeated key 'K'` on stderr, no traceback, no report and nothing
in the store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.io import load_baseline_report, load_generated, load_golden_set, load_thresholds, loads_line, loads_strict
from termgate.io.reading import RepeatedKey
from termgate.llm.prompt_models import load_dataset
from termgate.scoring.scorer import SPLIT
from termgate.scoring.scorer.loading import HandOver, plain_generated, plain_golden, vouch_for_file

from conftest import golden_row, write_jsonl

TERMGATE = Path(sys.executable).with_name("termgate")
GOLDEN_OK = '{"query_id": "q1", "query": "heart attack", "expected_expansions": [{"term": "mi"}]}'
GENERATED_OK = '{"query_id": "q1", "terms": ["mi"]}'


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def evaluate(*args: str):
    return CliRunner().invoke(main, ["evaluate", "--drift-judge", "none", *args])


def assert_refused(result, expected_line: str, *, db: Path | None = None) -> None:
    assert result.exit_code == 2, (result.stdout, result.stderr)
    assert expected_line in result.stderr.splitlines(), result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    if db is not None:
        assert not db.exists() or _runs(db) == 0  # nothing written to the store


def _runs(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        return con.execute("SELECT count(*) FROM runs").fetchall()[0][0] if "runs" in tables else 0


# ---------------------------------------------------------------- golden set lines

GOLDEN_CASES = [
    # (line 2 of the golden set, the FIELD the problem names)
    ('{"query_id": "q2", "query": "a", "query": "b", "expected_expansions": []}', "query"),
    ('{"query_id": "q2", "query": "a", "critical": true, "critical": false, "expected_expansions": []}', "critical"),
    ('{"query_id": "q2", "query": "a", "note": 1, "note": 2, "expected_expansions": []}', "note"),  # a key nobody reads
    ('{"query_id": "q2", "query": "a", "context": {"domain": "retail", "domain": "medical"}, '
     '"expected_expansions": []}', "context.domain"),
    ('{"query_id": "q2", "query": "a", "context": {"domain": "legal", "x": {"y": 1, "y": 2}}, '
     '"expected_expansions": []}', "context.x.y"),
    ('{"query_id": "q2", "query": "a", "expected_expansions": [{"term": "mi"}, {"term": "x", "term": "y"}]}',
     "expected_expansions[1].term"),
    ('{"query_id": "q2", "query": "a", "expected_expansions": [{"term": "mi", "min_weight": 0.9, '
     '"min_weight": 0.1}]}', "expected_expansions[0].min_weight"),
    ('{"query_id": "q2", "query": "a", "expected_expansions": [{"term": "mi", "why": "x", "why": "y"}]}',
     "expected_expansions[0].why"),
    # a colon inside a string: the vouch thread's colon count cannot decide, the check behind it does
    ('{"query_id": "q2", "query": "icd: i21", "note": "a:b", "note": "c", "expected_expansions": []}', "note"),
]


@pytest.mark.parametrize("line,field", GOLDEN_CASES, ids=[c[1] + str(i) for i, c in enumerate(GOLDEN_CASES)])
def test_repeated_key_in_a_golden_line_is_an_input_error(cwd, line, field):
    (cwd / "g.jsonl").write_text(GOLDEN_OK + "\n" + line + "\n", encoding="utf-8")
    (cwd / "c.jsonl").write_text(GENERATED_OK + "\n", encoding="utf-8")
    key = field.rsplit(".", 1)[-1]
    result = evaluate("--golden", "g.jsonl", "--generated", "c.jsonl", "--db", "x.duckdb", "--json", "r.json")
    assert_refused(result, f"g.jsonl:2: {field}: repeated key '{key}'", db=cwd / "x.duckdb")
    assert not (cwd / "r.json").exists()


# ---------------------------------------------------------------- generated expansions

GENERATED_CASES = [
    ('{"query_id": "q1", "terms": ["mi"], "terms": ["x"]}', "g", "terms"),
    ('{"query_id": "q1", "query_id": "q1", "terms": ["mi"]}', "g", "query_id"),
    ('{"query_id": "q1", "model": "a", "model": "b", "terms": ["mi"]}', "g", "model"),
    ('{"query_id": "q1", "terms": ["mi", {"term": "x", "weight": 0.9, "weight": 0.1}]}', "g", "terms[1].weight"),
    ('{"query_id": "q1", "terms": [{"term": "a", "term": "b"}]}', "g", "terms[0].term"),
    ('{"query_id": "q1", "terms": [{"term": "a", "src": "x", "src": "y"}]}', "g", "terms[0].src"),
    ('{"query_id": "q1", "terms": [{"term": "url: http://x", "weight": 1, "weight": 0}]}', "g", "terms[0].weight"),
]


@pytest.mark.parametrize("line,_,field", GENERATED_CASES, ids=[c[2] + str(i) for i, c in enumerate(GENERATED_CASES)])
def test_repeated_key_in_a_generated_line_is_an_input_error(cwd, line, _, field):
    write_jsonl(cwd / "g.jsonl", [golden_row("q0", "flu", ["influenza"]), golden_row("q1", "heart attack", ["mi"])])
    (cwd / "c.jsonl").write_text('{"query_id": "q0", "terms": ["influenza"]}\n' + line + "\n", encoding="utf-8")
    key = field.rsplit(".", 1)[-1].split("[")[-1]
    result = evaluate("--golden", "g.jsonl", "--generated", "c.jsonl", "--db", "x.duckdb")
    assert_refused(result, f"c.jsonl:2: {field}: repeated key '{key}'", db=cwd / "x.duckdb")


def test_repeated_key_in_the_mapping_form_names_its_line(cwd):
    write_jsonl(cwd / "g.jsonl", [golden_row("q0", "flu", ["influenza"]), golden_row("q1", "heart attack", ["mi"])])
    (cwd / "c.json").write_text('{\n"q0": ["influenza"],\n"q1": [{"term": "mi",\n  "weight": 0.9,\n'
                                '  "weight": 0.1}]\n}\n', encoding="utf-8")
    result = evaluate("--golden", "g.jsonl", "--generated", "c.json", "--no-store")
    assert_refused(result, "c.json:5: q1[0].weight: repeated key 'weight'")


def test_a_query_id_given_twice_in_the_mapping_form_is_a_duplicate(cwd):
    write_jsonl(cwd / "g.jsonl", [golden_row("q0", "flu", ["influenza"])])
    (cwd / "c.json").write_text('{\n"q0": ["influenza"],\n"q0": []\n}\n', encoding="utf-8")
    result = evaluate("--golden", "g.jsonl", "--generated", "c.json", "--no-store")
    assert_refused(result, "c.json:3: query_id: duplicate query_id 'q0' (first on line 2)")


# ---------------------------------------------------------------- thresholds, baseline, datasets


def test_repeated_threshold_cannot_loosen_the_gate(cwd):
    write_jsonl(cwd / "g.jsonl", [golden_row("q0", "flu", ["influenza"])])
    write_jsonl(cwd / "c.jsonl", [{"query_id": "q0", "terms": ["influenza"]}])
    (cwd / "t.json").write_text('{"precision_min": 0.6,\n "precision_min": 0.1}\n', encoding="utf-8")
    result = evaluate("--golden", "g.jsonl", "--generated", "c.jsonl", "--thresholds", "t.json", "--db", "x.duckdb")
    assert_refused(result, "t.json:2: precision_min: repeated key 'precision_min'", db=cwd / "x.duckdb")


def test_repeated_threshold_in_toml_is_an_input_error(cwd):
    """tomllib refuses a key defined twice itself; this keeps it that way."""
    write_jsonl(cwd / "g.jsonl", [golden_row("q0", "flu", ["influenza"])])
    write_jsonl(cwd / "c.jsonl", [{"query_id": "q0", "terms": ["influenza"]}])
    (cwd / "t.toml").write_text("precision_min = 0.6\nprecision_min = 0.1\n", encoding="utf-8")
    result = evaluate("--golden", "g.jsonl", "--generated", "c.jsonl", "--thresholds", "t.toml", "--db", "x.duckdb")
    assert result.exit_code == 2, result.stderr
    assert result.stderr.startswith("t.toml:2: ") and "Traceback" not in result.stderr
    assert not (cwd / "x.duckdb").exists() or _runs(cwd / "x.duckdb") == 0


def test_repeated_key_in_a_baseline_report_is_an_input_error(cwd):
    write_jsonl(cwd / "g.jsonl", [golden_row("q0", "flu", ["influenza"])])
    write_jsonl(cwd / "c.jsonl", [{"query_id": "q0", "terms": ["influenza"]}])
    assert evaluate("--golden", "g.jsonl", "--generated", "c.jsonl", "--no-store", "--json", "base.json").exit_code != 2
    report = json.loads((cwd / "base.json").read_text(encoding="utf-8"))
    text = json.dumps(report, indent=1)
    # the baseline says q0 had F1 0.0 and then (the value last-one-wins would keep) 1.0
    text = text.replace('"f1": 1.0', '"f1": 0.0,\n   "f1": 1.0', 1)
    (cwd / "base.json").write_text(text, encoding="utf-8")
    line = text[:text.index('"f1": 1.0')].count("\n") + 1
    result = evaluate("--golden", "g.jsonl", "--generated", "c.jsonl", "--baseline", "base.json", "--db", "x.duckdb")
    assert_refused(result, f"base.json:{line}: per_query_results[0].f1: repeated key 'f1'", db=cwd / "x.duckdb")


def test_repeated_key_in_a_prompt_eval_dataset_is_an_input_error(cwd):
    data = ('{"task_description": "Echo", "prompt_inputs_spec": {"text": "what to echo"},\n'
            ' "cases": [{"scenario": "s", "prompt_inputs": {"text": "a",\n "text": "b"}, '
            '"solution_criteria": ["echoes"]}]}\n')
    (cwd / "d.json").write_text(data, encoding="utf-8")
    (cwd / "p.txt").write_text("Echo {text}\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["prompt-eval", "run", "--dataset", "d.json", "--prompt", "p.txt",
                                       "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--db", "x.duckdb"])
    assert_refused(result, "d.json:3: cases[0].prompt_inputs.text: repeated key 'text'", db=cwd / "x.duckdb")


# ---------------------------------------------------------------- the scorer's fast path


def _big_golden(path: Path, n: int, bad_at: int, bad: str) -> None:
    rows = [json.dumps(golden_row(f"q{i}", f"query {i}", [f"term {i}", {"term": f"alt {i}", "min_weight": 0.5}]))
            for i in range(n)]
    rows[bad_at] = bad
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.slow
def test_fast_path_refuses_a_repeated_key_deep_in_a_large_file(tmp_path):
    """A golden set large enough to be scored in parts, read by DuckDB directly: DuckDB
    keeps one of two repeated keys it does not read, so the Python vouch thread must catch
    it and hand the file to the validator, which names the line. Through the installed
    `termgate` script, as CI runs it."""
    n = SPLIT + 4_000
    golden, generated, db = tmp_path / "g.jsonl", tmp_path / "c.jsonl", tmp_path / "x.duckdb"
    bad = ('{"query_id": "q19000", "query": "q", "context": {"domain": "legal", "tier": 1, "tier": 2}, '
           '"expected_expansions": [{"term": "t"}]}')
    _big_golden(golden, n, 19_000, bad)
    write_jsonl(generated, [{"query_id": f"q{i}", "terms": [f"term {i}"]} for i in range(0, n, 7)])
    with pytest.raises(HandOver):
        vouch_for_file(golden, plain_golden)
    result = subprocess.run([str(TERMGATE), "evaluate", "--golden", str(golden), "--generated", str(generated),
                             "--drift-judge", "none", "--db", str(db)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [f"{golden}:19001: context.tier: repeated key 'tier'"]
    assert not db.exists() or _runs(db) == 0


def test_fast_path_refuses_a_repeated_key_in_a_large_generated_file(tmp_path):
    n = SPLIT + 1_000
    golden, generated = tmp_path / "g.jsonl", tmp_path / "c.jsonl"
    _big_golden(golden, n, 0, json.dumps(golden_row("q0", "q", ["t"])))
    lines = [json.dumps({"query_id": f"q{i}", "terms": [f"term {i}", {"term": f"alt {i}", "weight": 0.7}]})
             for i in range(n)]
    lines[-1] = f'{{"query_id": "q{n - 1}", "terms": [{{"term": "t", "weight": 1.0, "origin": "a", "origin": "b"}}]}}'
    generated.write_text("\n".join(lines), encoding="utf-8")  # the repeat on the last line, without a newline
    with pytest.raises(HandOver):
        vouch_for_file(generated, plain_generated)
    result = evaluate("--golden", str(golden), "--generated", str(generated), "--no-store")
    assert_refused(result, f"{generated}:{n}: terms[0].origin: repeated key 'origin'")


def test_vouch_thread_still_vouches_for_plain_lines_with_colons(tmp_path):
    """Colons inside strings make the cheap count disagree; the check behind it must still
    vouch for such a line (else every such file would lose the fast path)."""
    path = tmp_path / "g.jsonl"
    path.write_text('{"query_id": "q:1", "query": "icd-10: i21", "context": {"domain": "medical: cardiology"}, '
                    '"expected_expansions": [{"term": "mi: acute", "min_weight": 0.5}]}\n', encoding="utf-8")
    assert vouch_for_file(path, plain_golden) == 1


def test_an_escaped_colon_is_not_taken_for_a_repeat(tmp_path):
    """\\u003a is a colon the re-serialised count sees and the text's does not: a line with
    one and a literal colon too goes to the validator, which accepts it (no repeat), and
    the run is scored."""
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"query_id": "q1", "query": "a:b\\u003ac", "expected_expansions": [{"term": "mi"}]}\n',
                      encoding="utf-8")
    with pytest.raises(HandOver):
        vouch_for_file(golden, plain_golden)
    assert load_golden_set(golden).items[0].query == "a:b:c"
    write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["mi"]}])
    result = evaluate("--golden", str(golden), "--generated", str(tmp_path / "c.jsonl"), "--no-store")
    assert result.exit_code == 0, result.stderr


# ---------------------------------------------------------------- the shared strict loader


@pytest.mark.parametrize("text,field", [
    ('{"a": 1, "a": 2}', "a"),
    ('[{"t": 1}, {"t": 1, "u": {"k": [], "k": {}}}]', "[1].u.k"),
    ('{"x": "\\"x\\": 1", "x": 0}', "x"),  # the first "x" inside a string is no key
    ('{"a": {"b": 1}, "b": 2, "c": {"b": 3, "b": 4}}', "c.b"),  # equal keys in different objects are fine
])
def test_strict_loader_names_the_first_repeat(text, field):
    key = field.rsplit(".", 1)[-1].split("]")[-1]
    for loads in (loads_strict, loads_line):
        with pytest.raises(RepeatedKey) as info:
            loads(text)
        # the repeat is the last occurrence of the key in these texts
        assert (info.value.key, info.value.field, info.value.offset) == (key, field, text.rindex(json.dumps(key)))


def test_every_loader_refuses_repeats(tmp_path):
    (tmp_path / "t.json").write_text('{"recall_min": 0.9, "recall_min": 0.1}', encoding="utf-8")
    (tmp_path / "g.jsonl").write_text('{"query_id": "q", "query": "a", "expected_expansions": [], "x": 1, "x": 1}\n',
                                      encoding="utf-8")
    (tmp_path / "c.jsonl").write_text('{"query_id": "q", "terms": [], "terms": []}\n', encoding="utf-8")
    (tmp_path / "b.json").write_text('{"per_query_results": [], "per_query_results": []}', encoding="utf-8")
    (tmp_path / "d.json").write_text('{"task_description": "a", "task_description": "b"}', encoding="utf-8")
    from termgate.errors import InputError
    for load in (lambda: load_thresholds(tmp_path / "t.json"), lambda: load_golden_set(tmp_path / "g.jsonl"),
                 lambda: load_generated(tmp_path / "c.jsonl", {"q"}), lambda: load_baseline_report(tmp_path / "b.json"),
                 lambda: load_dataset(tmp_path / "d.json")):
        with pytest.raises(InputError, match="repeated key"):
            load()
