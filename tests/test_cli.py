"""The `termgate` CLI through click's CliRunner (SPEC §3 exit codes, §5 bad input, §6 run ids).

Every test runs in its own tmp_path (the current directory, so no termgate.toml is picked
up), with $TERMGATE_DB pointing into tmp_path and --db given explicitly, so the real store
is never touched. `--drift-judge none` keeps the runs deterministic (no model).
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

import termgate
from termgate.cli import main
from termgate.store import list_runs

from helpers_io import PROBLEM_LINE, dumps, golden_row, write_lines

SCHEMA_PATH = Path(termgate.__file__).parent / "schema" / "report.schema.json"
DB = "store.duckdb"  # relative: SPEC §1.4 paths are relative to the current directory (tmp_path)


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    """An isolated working directory and environment for one CLI test."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMGATE_DB", str(tmp_path / "env-default.duckdb"))
    for var in ("TERMGATE_CONFIG", "TERMGATE_HIGH_RISK_DOMAINS", "TERMGATE_DASHBOARD_URL",
                "TERMGATE_PASSWORD", "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    # e-commerce golden set, not high-risk: two queries, three expected terms in all
    write_lines(tmp_path / "golden.jsonl", [
        golden_row("e1", "sofa", ["couch", "settee"], context={"domain": "ecommerce"}),
        golden_row("e2", "tv", ["television"], context={"domain": "ecommerce"}),
    ])
    # perfect expansions: P = R = F1 = 1 everywhere -> gate pass -> exit 0
    write_lines(tmp_path / "perfect.jsonl", [
        {"query_id": "e1", "terms": ["Couch", {"term": "settee", "weight": 0.8}]},
        {"query_id": "e2", "terms": ["television"]},
    ])
    # e2 left empty: its F1 falls 1.0 -> 0.0 (regression) and macro P/R are 0.5 -> gate fail
    write_lines(tmp_path / "regressed.jsonl", [
        {"query_id": "e1", "terms": ["couch", "settee"]},
        {"query_id": "e2", "terms": []},
    ])
    # medical golden set (high-risk by default): perfect expansions still need sign-off -> 3
    write_lines(tmp_path / "medical.jsonl", [
        golden_row("m1", "heart attack", ["myocardial infarction", "mi"], context={"domain": "medical"}),
    ])
    write_lines(tmp_path / "medical-perfect.jsonl", [
        {"query_id": "m1", "terms": ["myocardial infarction", "MI"]},
    ])
    # the same query without a context.domain: --domain decides whether it is high-risk
    write_lines(tmp_path / "nodomain.jsonl", [golden_row("m1", "heart attack", ["myocardial infarction", "mi"])])
    return tmp_path


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def evaluate(*args: str, golden: str = "golden.jsonl", generated: str = "perfect.jsonl"):
    return run("evaluate", "--golden", golden, "--generated", generated, "--drift-judge", "none", *args)


def stored_run_ids(db: str | Path) -> list[str]:
    return list(list_runs(str(db))["run_id"])


def read_json(path: str | Path) -> dict:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def assert_clean_exit(result, code: int) -> None:
    """The exit code is `code`, reached through sys.exit, with no traceback anywhere."""
    assert result.exit_code == code, (result.stdout, result.stderr)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output


# ---------------------------------------------------------------- exit codes 0 / 1 / 3

def test_exit_0_for_a_passing_non_high_risk_run(cwd):
    result = evaluate("--db", DB, "--json", "report.json")
    assert_clean_exit(result, 0)
    report = read_json("report.json")
    assert report["gate"]["decision"] == "pass"
    assert report["summary"]["passed"] == 2 and report["summary"]["failed"] == 0
    assert "gate: PASS" in result.stdout
    assert (cwd / DB).exists()  # relative --db lands in the current directory
    assert stored_run_ids(cwd / DB) == [report["evaluation_id"]]  # SPEC §6: the report id is the run id
    assert not (cwd / "env-default.duckdb").exists()  # --db wins over $TERMGATE_DB


def test_exit_1_when_the_gate_fails(cwd):
    # nothing relevant generated: P = R = 0 for both queries
    write_lines(cwd / "junk.jsonl", [{"query_id": "e1", "terms": ["lamp"]}, {"query_id": "e2", "terms": ["radio"]}])
    result = evaluate("--db", DB, "--json", "report.json", generated="junk.jsonl")
    assert_clean_exit(result, 1)
    report = read_json("report.json")
    assert report["gate"]["decision"] == "fail"
    assert any("macro precision" in r for r in report["gate"]["reasons"])
    assert "gate: FAIL" in result.stdout


def test_exit_3_for_a_medical_run_that_meets_thresholds(cwd):
    result = evaluate("--db", DB, "--json", "report.json", golden="medical.jsonl", generated="medical-perfect.jsonl")
    assert_clean_exit(result, 3)
    report = read_json("report.json")
    assert report["gate"]["decision"] == "review"
    assert report["summary"]["aggregate_f1"] == 1.0  # it met every threshold: review is only for sign-off
    assert report["run"]["high_risk"] is True
    assert any("high-risk" in r for r in report["gate"]["reasons"])


@pytest.mark.parametrize(("golden", "domain", "code"), [
    ("nodomain.jsonl", "medical", 3),    # --domain fills the missing context.domain: high-risk
    ("nodomain.jsonl", "ecommerce", 0),  # same items, a low-risk domain: pass
    ("golden.jsonl", "medical", 0),      # items already say ecommerce: --domain does not override
])
def test_domain_option_fills_only_missing_domains(cwd, golden, domain, code):
    generated = "medical-perfect.jsonl" if golden == "nodomain.jsonl" else "perfect.jsonl"
    result = evaluate("--no-store", "--domain", domain, golden=golden, generated=generated)
    assert_clean_exit(result, code)


def test_no_store_writes_no_store(cwd):
    result = evaluate("--no-store", "--json", "report.json")
    assert_clean_exit(result, 0)
    assert not (cwd / "env-default.duckdb").exists()     # $TERMGATE_DB untouched
    assert not (cwd / "data" / "termgate.duckdb").exists()  # nor the built-in default
    assert not list(cwd.rglob("*.duckdb"))
    assert "stored in" not in result.stdout
    assert read_json("report.json")["gate"]["decision"] == "pass"  # the report is still written


def test_evaluate_resumes_the_garbage_collector_when_it_ends(cwd):
    """`evaluate` pauses the cyclic collector while it works, and a caller running it in its
    own process (a test, a notebook) gets it back running, whatever the exit code."""
    import gc
    gc.enable()
    assert_clean_exit(evaluate("--no-store"), 0)
    assert gc.isenabled()
    assert evaluate("--no-store", golden="missing.jsonl").exit_code == 2
    assert gc.isenabled()


def test_a_store_path_no_store_can_be_made_at_is_refused_before_any_work(cwd):
    result = evaluate("--db", "golden.jsonl/store.duckdb", "--json", "report.json")
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"error: --db golden.jsonl/store.duckdb: {cwd / 'golden.jsonl'} is not a folder, "
                                     "so no store can be made there")
    assert not (cwd / "report.json").exists()


def test_a_damaged_store_is_one_line_and_exit_2(cwd):
    assert_clean_exit(evaluate("--db", "s.duckdb"), 0)
    whole = (cwd / "s.duckdb").read_bytes()
    (cwd / "cut.duckdb").write_bytes(whole[: len(whole) // 2])  # a copy cut short (a full disk, a broken transfer)
    for args in (["runs", "--db", "cut.duckdb"], ["audit", "verify", "--db", "cut.duckdb"]):
        result = run(*args)
        assert result.exit_code == 2 and isinstance(result.exception, SystemExit), (args, result.output)
        [line] = result.stderr.strip().splitlines()
        assert line.startswith("error: the store cannot be used: IO Error") and "Traceback" not in result.output


def test_ctrl_c_while_duckdb_works_is_130_and_one_line(cwd, monkeypatch):
    """Ctrl-C during a DuckDB query surfaces as DuckDB's own error ('Query interrupted'), not
    as KeyboardInterrupt: evaluate still ends with exit 130 and one line, never a traceback
    or the exit 1 of a failed gate."""
    import os
    import signal
    import time

    import termgate.cli.evaluate as command

    def interrupted_scoring(*args, **kwargs):
        try:
            os.kill(os.getpid(), signal.SIGINT)  # what Ctrl-C sends
            time.sleep(5)  # the handler ends the wait at once
        except KeyboardInterrupt:
            raise RuntimeError("Query interrupted") from None
        raise AssertionError("SIGINT did not arrive")

    monkeypatch.setattr(command, "evaluate", interrupted_scoring)
    result = evaluate("--db", "s.duckdb", "--json", "report.json")
    assert result.exit_code == 130, result.output
    assert result.stderr.splitlines() == ["interrupted: evaluate stopped; the store takes a run whole or not at all "
                                          "and no report was left half-written, so rerun it"]
    assert not (cwd / "report.json").exists() and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_in_any_command_is_130_not_aborted(cwd, monkeypatch):
    import termgate.cli.runs as command

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(command, "list_runs", interrupted)
    result = run("runs", "--db", "s.duckdb")
    assert result.exit_code == 130 and result.stderr.splitlines() == ["interrupted"], result.output


@pytest.mark.slow
def test_inputs_from_a_fifo_are_read_once(cwd):
    """A named FIFO can be read once: the second reader of the scorer's two-way check used to
    wait for a writer forever. The golden set comes through one, the expansions through
    another, with a line that names the FIFO when it is bad."""
    import os
    import subprocess
    import sys
    import threading

    def feed(path, data: bytes):
        os.mkfifo(path)
        threading.Thread(target=lambda: Path(path).write_bytes(data), daemon=True).start()

    feed(cwd / "golden.fifo", (cwd / "golden.jsonl").read_bytes())
    feed(cwd / "generated.fifo", (cwd / "perfect.jsonl").read_bytes())
    command = [sys.executable, "-m", "termgate", "evaluate", "--golden", "golden.fifo", "--generated", "generated.fifo",
               "--drift-judge", "none", "--db", "s.duckdb", "--json", "fifo.json"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    via_fifo = json.loads((cwd / "fifo.json").read_text(encoding="utf-8"))
    assert_clean_exit(evaluate("--no-store", "--json", "file.json"), 0)
    via_file = json.loads((cwd / "file.json").read_text(encoding="utf-8"))
    assert via_fifo["run"]["golden_hash"] == via_file["run"]["golden_hash"]
    assert via_fifo["run"]["generated_hash"] == via_file["run"]["generated_hash"]
    feed(cwd / "bad.fifo", b'{"query_id": "e1", "terms": [1]}\n')
    done = subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", "golden.jsonl", "--generated",
                           "bad.fifo", "--drift-judge", "none", "--no-store"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.startswith("bad.fifo:1: terms[0]:"), done.stderr


@pytest.mark.parametrize("limit", ["-1", "0"])
def test_runs_limit_below_one_is_a_usage_error(cwd, limit):
    assert_clean_exit(evaluate("--db", "s.duckdb"), 0)
    result = run("runs", "--limit", limit, "--db", "s.duckdb")
    assert result.exit_code == 2 and "Traceback" not in result.output and "--limit" in result.output


def test_no_store_review_run_exits_3(cwd):
    # SPEC §3: 3 "also for --no-store runs"
    result = evaluate("--no-store", golden="medical.jsonl", generated="medical-perfect.jsonl")
    assert_clean_exit(result, 3)
    assert not list(cwd.rglob("*.duckdb"))


def test_db_defaults_to_the_environment_variable(cwd):
    result = evaluate()
    assert_clean_exit(result, 0)
    assert stored_run_ids(cwd / "env-default.duckdb")  # recorded where $TERMGATE_DB points


# ---------------------------------------------------------------- exit code 2: bad input

BAD_INPUTS = [
    # (files to write, evaluate args, shown file, line, field)
    pytest.param({"golden.jsonl": [dumps(golden_row("e1")), '{"query_id": "e2",']}, [],
                 "golden.jsonl", 2, "json", id="golden-malformed-json"),
    pytest.param({"golden.jsonl": [dumps(golden_row("e1", critical="yes"))]}, [],
                 "golden.jsonl", 1, "critical", id="golden-mistyped-field"),
    pytest.param({"golden.jsonl": ["", "  "]}, [], "golden.jsonl", 1, "golden set", id="golden-empty"),
    pytest.param({"perfect.jsonl": [dumps({"query_id": "e1", "terms": []}), dumps({"query_id": "zz", "terms": []})]},
                 [], "perfect.jsonl", 2, "query_id", id="generated-unknown-id"),
    pytest.param({"perfect.jsonl": [dumps({"query_id": "e1", "terms": [{"term": "couch", "weight": True}]})]},
                 [], "perfect.jsonl", 1, "terms[0].weight", id="generated-weight-boolean"),
    pytest.param({"t.json": ['{"precision_min": 0.5,', ' "bogus": 1}']}, ["--thresholds", "t.json"],
                 "t.json", 2, "bogus", id="thresholds-unknown-key"),
    # a golden JSONL given as the baseline report: not a report
    pytest.param({}, ["--baseline", "golden.jsonl"], "golden.jsonl", 2, "json", id="baseline-not-a-report"),
]


@pytest.mark.parametrize(("files", "args", "shown", "line", "field"), BAD_INPUTS)
def test_exit_2_for_bad_input_writes_nothing(cwd, files, args, shown, line, field):
    for name, lines in files.items():
        write_lines(cwd / name, lines)
    result = evaluate("--db", DB, "--json", "out/report.json", "--html", "out/report.html",
                      "--junit", "out/junit.xml", *args)
    assert_clean_exit(result, 2)
    errors = result.stderr.splitlines()
    assert len(errors) == 1, errors  # one clear line for the one fault
    m = PROBLEM_LINE.match(errors[0])
    assert m, errors[0]
    assert (m["file"], int(m["line"]), m["field"]) == (shown, line, field)
    assert result.stdout == ""  # no summary, no "stored in", no "wrote"
    assert not (cwd / DB).exists()  # the store was not even created
    assert not (cwd / "out").exists()
    assert not list(cwd.rglob("*.partial"))


BAD_IDS = [("e2\u0000", "0000"), ("e2\n", "000A"), ("e\t2", "0009"), ("e2\u001f", "001F"), ("e2\u007f", "007F"),
           ("e2\u0085", "0085"), ("e2\u2028", "2028"), ("e2\u2029", "2029"), ("\u202ee2", "202E"),
           ("e\u200b2", "200B"), ("\ufeffe2", "FEFF"), ("e2\ud800", "D800")]
"""A query_id holding a control character (NUL, newline, tab, unit separator, DEL, NEL), a
line or paragraph separator, an invisible format character (right-to-left override,
zero-width space, BOM) or a lone surrogate, and the code point the message names."""


def _bad_id_cases():
    for where in ("golden", "generated", "generated-mapping"):
        for query_id, code in BAD_IDS:
            for raw in (False, True):
                if raw and (int(code, 16) < 0x20 or code == "D800"):
                    continue  # json.dumps escapes every character below U+0020; a surrogate is not UTF-8
                if code == "D800" and where != "generated-mapping":
                    continue  # a lone surrogate is malformed JSON to the line reader (orjson), refused as such
                yield pytest.param(where, query_id, code, raw, id=f"{where}-{code}-{'raw' if raw else 'escaped'}")


@pytest.mark.parametrize(("where", "query_id", "code", "raw"), list(_bad_id_cases()))
def test_exit_2_for_a_query_id_with_a_control_character(cwd, where, query_id, code, raw):
    # the bad id is on line 2 of one file; the other file matches it, so only the rule refuses it
    dump = (lambda obj: json.dumps(obj, ensure_ascii=False)) if raw else dumps
    golden = [golden_row("e1", "sofa", ["couch"]), golden_row(query_id if where == "golden" else "e2", "tv", ["tv"])]
    generated = [{"query_id": "e1", "terms": ["couch"]}, {"query_id": query_id, "terms": ["tv"]}]
    (cwd / "g.jsonl").write_text("".join(dump(r) + "\n" for r in golden), encoding="utf-8")
    if where == "generated-mapping":  # one object, one query_id per line
        text = "{" + ",\n".join(f"{dump(r['query_id'])}: {dump(r['terms'])}" for r in generated) + "}\n"
    else:
        text = "".join(dump(r) + "\n" for r in generated)
    (cwd / "c.jsonl").write_text(text, encoding="utf-8")
    result = evaluate("--db", DB, "--json", "report.json", golden="g.jsonl", generated="c.jsonl")
    assert_clean_exit(result, 2)
    errors = result.stderr.splitlines()
    assert len(errors) == 1 and result.stderr.count("\n") == 1, errors  # one line, the id escaped in it
    m = PROBLEM_LINE.match(errors[0])
    assert m, errors[0]
    assert (m["file"], int(m["line"]), m["field"]) == ("g.jsonl" if where == "golden" else "c.jsonl", 2, "query_id")
    assert f"U+{code}" in m["message"] and "printable" in m["message"]
    assert query_id not in result.stderr
    assert not (cwd / DB).exists() and not (cwd / "report.json").exists()


def test_a_query_id_with_a_no_break_space_or_an_accent_is_accepted(cwd):
    # printable characters beyond ASCII stay allowed: the rule refuses control, format and separators only
    ids = ["e\u00a02", "é1", "\u6f22\u5b57"]
    write_lines(cwd / "g.jsonl", [golden_row(i, "q", ["t"]) for i in ids])
    write_lines(cwd / "c.jsonl", [{"query_id": i, "terms": ["t"]} for i in ids])
    assert_clean_exit(evaluate("--no-store", golden="g.jsonl", generated="c.jsonl"), 0)


def test_exit_2_for_a_non_utf8_file(cwd):
    # line 2 holds 0xe9 (Latin-1 "é")
    (cwd / "perfect.jsonl").write_bytes(b'{"query_id": "e1", "terms": ["couch"]}\n'
                                        b'{"query_id": "e2", "terms": ["t\xe9l\xe9"]}\n')
    result = evaluate("--db", DB, "--json", "report.json")
    assert_clean_exit(result, 2)
    assert result.stderr.startswith("perfect.jsonl:2: encoding: ")
    assert not (cwd / "report.json").exists() and not (cwd / DB).exists()


def test_bad_input_adds_no_run_to_an_existing_store(cwd):
    assert_clean_exit(evaluate("--db", DB), 0)
    before = stored_run_ids(DB)
    write_lines(cwd / "bad.jsonl", [{"query_id": "e1", "terms": "couch"}])  # terms not a list
    result = evaluate("--db", DB, "--json", "report.json", generated="bad.jsonl")
    assert_clean_exit(result, 2)
    assert result.stderr == "bad.jsonl:1: terms: must be a list of terms\n"
    assert stored_run_ids(DB) == before
    assert not (cwd / "report.json").exists()


def test_more_than_20_problems_on_the_command_line(cwd):
    write_lines(cwd / "golden.jsonl", [golden_row(query_id=i) for i in range(25)])  # 25 mistyped ids
    result = evaluate("--db", DB)
    assert_clean_exit(result, 2)
    lines = result.stderr.splitlines()
    assert len(lines) == 21  # 20 problems and a "more" line
    assert all(PROBLEM_LINE.match(line) for line in lines[:20])
    assert "more" in lines[20]
    assert not (cwd / DB).exists()


@pytest.mark.parametrize("args", [
    ["--db", DB, "--no-store"],           # mutually exclusive
    ["--drift-judge", "telepathy"],       # not a choice
], ids=["db-and-no-store", "unknown-drift-judge"])
def test_exit_2_for_usage_errors(cwd, args):
    result = run("evaluate", "--golden", "golden.jsonl", "--generated", "perfect.jsonl", *args)
    assert_clean_exit(result, 2)
    assert "Traceback" not in result.stderr and result.stderr.strip()
    assert not (cwd / DB).exists()


def test_exit_2_when_a_required_option_is_missing(cwd):
    result = run("evaluate", "--golden", "golden.jsonl")
    assert_clean_exit(result, 2)
    assert "--generated" in result.stderr


# ---------------------------------------------------------------- exit code 2: unknown run ids

@pytest.fixture
def stored(cwd):
    """A store with a passing baseline run, a regressed run against it, and a medical review run."""
    assert_clean_exit(evaluate("--db", DB, "--json", "base.json"), 0)
    base = read_json("base.json")["evaluation_id"]
    assert_clean_exit(evaluate("--db", DB, "--baseline", base, "--json", "cand.json",
                               generated="regressed.jsonl"), 1)
    cand = read_json("cand.json")["evaluation_id"]
    assert_clean_exit(evaluate("--db", DB, "--json", "med.json", golden="medical.jsonl",
                               generated="medical-perfect.jsonl"), 3)
    med = read_json("med.json")["evaluation_id"]
    return {"base": base, "cand": cand, "med": med}


@pytest.mark.slow
@pytest.mark.parametrize("argv", [
    ["show", "no-such-run"],
    ["gate", "no-such-run"],
    ["compare", "no-such-run", "--baseline", "BASE"],
    ["compare", "CAND", "--baseline", "no-such-run"],
], ids=["show", "gate", "compare-run", "compare-baseline"])
def test_exit_2_for_unknown_run_id(stored, argv):
    argv = [{"BASE": stored["base"], "CAND": stored["cand"]}.get(a, a) for a in argv]
    result = run(*argv, "--db", DB)
    assert_clean_exit(result, 2)
    assert result.stderr.count("\n") == 1 and "no-such-run" in result.stderr
    assert result.stdout == ""


@pytest.mark.slow
def test_exit_2_for_unknown_baseline_run_id_writes_nothing(stored, cwd):
    before = stored_run_ids(DB)
    result = evaluate("--db", DB, "--baseline", "no-such-run", "--json", "report.json")
    assert_clean_exit(result, 2)
    assert "no-such-run" in result.stderr and result.stderr.count("\n") == 1
    assert stored_run_ids(DB) == before
    assert not (cwd / "report.json").exists()


def test_exit_2_for_unknown_baseline_run_id_without_a_store(cwd):
    result = evaluate("--db", DB, "--baseline", "no-such-run", "--json", "report.json")
    assert_clean_exit(result, 2)
    assert "no-such-run" in result.stderr
    assert not (cwd / DB).exists() and not (cwd / "report.json").exists()


@pytest.mark.parametrize("value", ["./missing.json", "reports/base.json", "base.JSON", "reports\\base"])
@pytest.mark.parametrize("with_store", [True, False], ids=["store", "no-store"])
def test_a_missing_baseline_file_is_named_as_a_file(cwd, value, with_store):
    # SPEC §2 rule 8: a path-looking value that is neither a file nor a stored run id is a missing file
    if with_store:
        assert_clean_exit(evaluate("--db", DB), 0)
    result = evaluate("--db", DB, "--baseline", value, "--json", "report.json")
    assert_clean_exit(result, 2)
    assert result.stderr == f"error: --baseline {value}: no such file, and no stored run has that id\n"
    assert not (cwd / "report.json").exists()


@pytest.mark.slow
def test_a_plain_unknown_baseline_id_is_still_an_unknown_run(stored):
    result = evaluate("--db", DB, "--baseline", "no-such-run")
    assert_clean_exit(result, 2)
    assert "unknown run 'no-such-run'" in result.stderr


@pytest.mark.parametrize("argv", [["runs"], ["show", "x"], ["gate", "x"]], ids=["runs", "show", "gate"])
def test_exit_2_for_a_missing_store_and_it_is_not_created(cwd, argv):
    result = run(*argv, "--db", "missing.duckdb")
    assert_clean_exit(result, 2)
    assert "missing.duckdb" in result.stderr
    assert not (cwd / "missing.duckdb").exists()


# ---------------------------------------------------------------- JSON report and baselines

@pytest.mark.slow
def test_json_report_validates_against_the_shipped_schema(stored):
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validator_cls = jsonschema.validators.validator_for(schema)
    validator_cls.check_schema(schema)
    for name in ("base.json", "cand.json", "med.json"):  # pass, fail with baseline, review
        report = read_json(name)
        validator_cls(schema).validate(report)
        # the §3 field names, whatever the schema says
        assert {"evaluation_id", "timestamp", "summary", "per_query_results", "regression_analysis",
                "recommendations"} <= set(report)
        assert report["timestamp"].endswith("Z")


@pytest.mark.slow
def test_json_report_schema_rejects_a_broken_report(stored):
    # guards the previous test: the schema really constrains the report
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    report = read_json("base.json")
    del report["summary"]["aggregate_f1"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(report, schema)


@pytest.mark.slow
def test_json_report_without_baseline_says_so(stored):
    ra = read_json("base.json")["regression_analysis"]
    assert ra["regression_detected"] is False
    assert ra["regressed_queries"] == [] and ra["improved_queries"] == []
    assert "baseline" in ra["delta_summary"].lower()


def test_baseline_report_file_detects_regression(cwd):
    # the baseline is a report file only: no store is involved for it
    assert_clean_exit(evaluate("--no-store", "--json", "base.json"), 0)
    result = evaluate("--no-store", "--baseline", "base.json", "--json", "cand.json", generated="regressed.jsonl")
    assert_clean_exit(result, 1)
    cand = read_json("cand.json")
    ra = cand["regression_analysis"]
    assert ra["regression_detected"] is True
    assert ra["regressed_queries"] == ["e2"]  # e2 went from F1 1.0 to 0.0; e1 unchanged
    assert ra["improved_queries"] == []
    assert cand["summary"]["regression_detected"] is True
    assert any("regressed" in r for r in cand["gate"]["reasons"])
    assert not list(cwd.rglob("*.duckdb"))


@pytest.mark.slow
def test_baseline_run_id_from_the_store_detects_regression(stored, cwd):
    cand = read_json("cand.json")
    ra = cand["regression_analysis"]
    assert ra["regressed_queries"] == ["e2"]
    assert ra["baseline_id"] == stored["base"]
    assert cand["gate"]["decision"] == "fail"


@pytest.mark.slow
def test_evaluate_prints_the_compare_link_for_a_stored_baseline(stored):
    result = evaluate("--db", DB, "--baseline", stored["base"], generated="regressed.jsonl")
    assert_clean_exit(result, 1)
    assert "http://localhost:8501/compare?run=" in result.stdout
    assert f"&baseline={stored['base']}" in result.stdout


def test_baseline_report_no_regression_against_itself(cwd):
    assert_clean_exit(evaluate("--no-store", "--json", "base.json"), 0)
    result = evaluate("--no-store", "--baseline", "base.json", "--json", "again.json")
    assert_clean_exit(result, 0)  # same expansions: nothing regressed, still pass
    assert read_json("again.json")["regression_analysis"]["regressed_queries"] == []


# ---------------------------------------------------------------- runs / show / compare / gate

@pytest.mark.slow
def test_runs_lists_stored_runs_newest_first(stored):
    result = run("runs", "--db", DB)
    assert_clean_exit(result, 0)
    out = result.stdout
    positions = [out.index(stored[k]) for k in ("med", "cand", "base")]
    assert positions == sorted(positions)  # newest first
    cand_line = next(line for line in out.splitlines() if line.startswith(stored["cand"]))
    assert " fail " in cand_line
    med_line = next(line for line in out.splitlines() if line.startswith(stored["med"]))
    assert " review " in med_line and "medical" in med_line


@pytest.mark.slow
def test_runs_limit(stored):
    result = run("runs", "--db", DB, "--limit", "1")
    assert_clean_exit(result, 0)
    assert stored["med"] in result.stdout and stored["base"] not in result.stdout


@pytest.mark.slow
def test_show_prints_the_run_and_its_queries(stored):
    result = run("show", stored["cand"], "--db", DB)
    assert_clean_exit(result, 0)
    out = result.stdout
    assert stored["cand"] in out
    assert "gate: FAIL" in out
    e2 = next(line for line in out.splitlines() if line.startswith("e2"))
    assert "FAIL" in e2 and "empty expansion" in e2
    e1 = next(line for line in out.splitlines() if line.startswith("e1"))
    assert "pass" in e1


@pytest.mark.slow
def test_show_failed_only(stored):
    result = run("show", stored["cand"], "--db", DB, "--failed-only")
    assert_clean_exit(result, 0)
    rows = [line.split()[0] for line in result.stdout.splitlines() if line.startswith(("e1", "e2"))]
    assert rows == ["e2"]


@pytest.mark.slow
def test_compare_prints_both_runs_side_by_side(stored):
    result = run("compare", stored["cand"], "--baseline", stored["base"], "--db", DB)
    assert_clean_exit(result, 0)
    lines = result.stdout.splitlines()
    e1 = next(line for line in lines if line.startswith("e1"))
    e2 = next(line for line in lines if line.startswith("e2"))
    assert "-1.000" in e2  # F1 1.0 -> 0.0
    assert "-1.000" not in e1 and "0.000" in e1  # unchanged


@pytest.mark.slow
def test_compare_changed_only(stored):
    result = run("compare", stored["cand"], "--baseline", stored["base"], "--db", DB, "--changed-only")
    assert_clean_exit(result, 0)
    rows = [line.split()[0] for line in result.stdout.splitlines() if line.startswith(("e1", "e2"))]
    assert rows == ["e2"]


@pytest.mark.slow
@pytest.mark.parametrize(("key", "code", "decision"), [
    ("base", 0, "pass"), ("cand", 1, "fail"), ("med", 3, "review"),
])
def test_gate_exits_with_the_stored_decision(stored, key, code, decision):
    result = run("gate", stored[key], "--db", DB)
    assert_clean_exit(result, code)
    assert result.stdout.splitlines()[0] == f"gate: {decision}"


# ---------------------------------------------------------------- help

def test_every_command_has_help_with_an_example(cwd):
    names = main.list_commands(None)
    assert set(names) >= {"evaluate", "runs", "show", "compare", "gate"}
    for name in names:
        assert main.get_command(None, name).name == name
        result = run(name, "--help")
        assert result.exit_code == 0, name
        assert "Example" in result.stdout, f"`termgate {name} --help` has no Example"
    top = run("--help")
    assert top.exit_code == 0 and "Example" in top.stdout
    assert all(f"  {name} " in top.stdout for name in names)  # every lazily loaded command is listed


@pytest.mark.parametrize("line,field", [
    ('{"query_id": "q1", "terms": ["mi",]}', "json"),
    ('{"query_id": "q1", "terms": ["mi"], "score": NaN}', "json"),
    ('{"query_id": "q1", "terms": ' + "[" * 2000 + "]" * 2000 + "}", "json"),
])
def test_json_that_only_a_lenient_parser_accepts_is_an_input_error(cwd, line, field):
    """Whichever engine scores, the CLI rejects what strict JSON rejects, naming the line."""
    write_lines(Path("golden.jsonl"), [dumps(golden_row("q1", "heart attack", ["mi"]))])
    Path("generated.jsonl").write_text(line + "\n", encoding="utf-8")
    result = run("evaluate", "--golden", "golden.jsonl", "--generated", "generated.jsonl", "--no-store",
                 "--drift-judge", "none")
    assert result.exit_code == 2, result.output
    assert f"generated.jsonl:1: {field}:" in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("variable,value", [("EVALCORE_ENGINE", "python"), ("EVALCORE_ENGINE_MEMORY", "lots")])
def test_retired_engine_settings_warn_once_and_are_ignored(cwd, monkeypatch, variable, value):
    write_lines(Path("golden.jsonl"), [dumps(golden_row("q1", "heart attack", ["mi"]))])
    write_lines(Path("generated.jsonl"), [dumps({"query_id": "q1", "terms": ["mi"]})])
    args = ("evaluate", "--golden", "golden.jsonl", "--generated", "generated.jsonl", "--no-store",
            "--drift-judge", "none", "--json", "plain.json")
    plain = run(*args)
    monkeypatch.setenv(variable, value)
    result = run(*args[:-1], "set.json")
    assert result.exit_code == plain.exit_code == 0  # one perfect query, no domain: pass
    assert result.stderr.count(f"warning: {variable} is set but no longer read") == 1
    assert variable not in plain.stderr
    strip = lambda r: {k: v for k, v in r.items() if k not in ("evaluation_id", "timestamp")}  # noqa: E731
    assert strip(json.loads(Path("set.json").read_text())) == strip(json.loads(Path("plain.json").read_text()))


def test_bad_memory_setting_is_a_usage_error(cwd, monkeypatch):
    write_lines(Path("golden.jsonl"), [dumps(golden_row("q1", "heart attack", ["mi"]))])
    write_lines(Path("generated.jsonl"), [dumps({"query_id": "q1", "terms": ["mi"]})])
    monkeypatch.setenv("TERMGATE_DUCKDB_MEMORY", "lots")
    result = run("evaluate", "--golden", "golden.jsonl", "--generated", "generated.jsonl", "--no-store",
                 "--drift-judge", "none")
    assert result.exit_code == 2 and "TERMGATE_DUCKDB_MEMORY" in result.stderr and "Traceback" not in result.output


# ---------------------------------------------------------------- issue 31, item 6


@pytest.mark.slow
@pytest.mark.parametrize("golden, generated, extra, code", [
    ("medical.jsonl", "medical-perfect.jsonl", (), 3),  # awaiting sign-off
    ("golden.jsonl", "perfect.jsonl", ("--json", "-"), 0),  # the report itself on the closed pipe
    ("golden.jsonl", "regressed.jsonl", (), 1),
])
def test_a_closed_standard_output_keeps_the_gates_exit_code(cwd, golden, generated, extra, code):
    """`termgate evaluate | head -1`: the reader is gone before the first line. The run is
    still stored and the exit code is the gate's, never click's 1 (or 120, or a traceback)."""
    import os
    import subprocess
    import sys

    reader, writer = os.pipe()
    os.close(reader)  # gone before termgate writes anything: every write meets a broken pipe
    try:
        done = subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", golden, "--generated",
                               generated, "--drift-judge", "none", "--db", DB, *extra],
                              stdout=writer, stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(writer)
    assert done.returncode == code, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert len(stored_run_ids(DB)) == 1


@pytest.mark.slow
def test_a_standard_output_closed_from_the_start_keeps_the_gates_exit_code(cwd):
    """`termgate evaluate --json - >&-`: Python starts with sys.stdout None; writing the report
    there was an AttributeError traceback and exit 1."""
    import os
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", "golden.jsonl", "--generated",
                           "perfect.jsonl", "--drift-judge", "none", "--db", DB, "--json", "-"],
                          stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=lambda: os.close(1))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    assert len(stored_run_ids(DB)) == 1


@pytest.mark.slow
@pytest.mark.parametrize("progress", [None, "lines"])
def test_a_standard_error_closed_from_the_start_keeps_the_harness_exit_code(cwd, progress):
    """`termgate harness … 2>&-`: Python starts with sys.stderr None; the progress bar's
    `sys.stderr.isatty()` was an AttributeError, exit 1 where the gate passed."""
    import os
    import subprocess
    import sys

    Path("expander.py").write_text("def expand(query, context=None):\n    return ['mi']\n", encoding="utf-8")
    write_lines(Path("one.jsonl"), [dumps(golden_row("q1", "heart attack", ["mi"]))])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), *sys.path])}
    env.pop("TERMGATE_PROGRESS", None)
    if progress:
        env["TERMGATE_PROGRESS"] = progress
    done = subprocess.run([sys.executable, "-m", "termgate", "harness", "--golden", "one.jsonl", "--callable",
                           "expander:expand", "--drift-judge", "none", "--db", DB],
                          stdout=subprocess.PIPE, text=True, timeout=120, env=env, preexec_fn=lambda: os.close(2))
    assert done.returncode == 0, done.stdout
    assert len(stored_run_ids(DB)) == 1


@pytest.mark.slow
def test_a_closed_standard_error_changes_nothing_either(cwd):
    import os
    import subprocess
    import sys

    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", "missing.jsonl",
                               "--generated", "perfect.jsonl", "--drift-judge", "none", "--db", DB],
                              stdout=subprocess.PIPE, stderr=writer, text=True, timeout=120)
    finally:
        os.close(writer)
    assert done.returncode == 2  # the input error's code, though its line could not be written


@pytest.mark.slow
def test_a_store_whose_migration_record_was_deleted_is_one_line_and_exit_2(cwd):
    """schema_migrations emptied by hand: migration 1 would meet its own tables (DuckDB's
    `Table with name "runs" already exists!`). Exit 2 saying so and what to do; nothing changed."""
    import duckdb

    assert_clean_exit(evaluate("--db", DB), 0)
    with duckdb.connect(DB) as con:
        con.execute("DELETE FROM schema_migrations")
    for args in (("runs", "--db", DB), ("evaluate", "--golden", "golden.jsonl", "--generated", "perfect.jsonl",
                                        "--drift-judge", "none", "--db", DB)):
        result = run(*args)
        assert result.exit_code == 2, result.output
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        (line,) = result.stderr.splitlines()
        assert "the store's migration record is damaged: schema_migrations says version 0" in line, line
        assert 'Table with name "runs" already exists' in line and "nothing was changed" in line
    with duckdb.connect(DB, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1  # the run is still there
        assert con.execute("SELECT count(*) FROM schema_migrations").fetchone()[0] == 0


@pytest.mark.parametrize("where", ["golden", "generated"])
@pytest.mark.parametrize("bad, says", [("cafe\u0301-1", "composed form (NFC)"), ("q1 ", "white space"),
                                       (" q1", "white space"), ("  ", "white space"), ("q1\u00a0", "white space")])
def test_a_query_id_that_reads_as_another_is_exit_2(cwd, where, bad, says):
    # a decomposed "café-1" or "q1 " reads exactly like "café-1" or "q1" in every report, yet
    # the two ids differ: one could never find the other's line (refused, not silently folded)
    good = "café-1" if "\u0301" in bad else "q1"
    golden = [golden_row(bad if where == "golden" else good, "q", ["t"])]
    generated = [{"query_id": bad if where == "generated" else good, "terms": ["t"]}]
    write_lines(cwd / "g.jsonl", golden)
    write_lines(cwd / "c.jsonl", generated)
    result = evaluate("--db", DB, golden="g.jsonl", generated="c.jsonl")
    assert_clean_exit(result, 2)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{'g' if where == 'golden' else 'c'}.jsonl:1: query_id: ")
    assert says in lines[0] and not (cwd / DB).exists()
