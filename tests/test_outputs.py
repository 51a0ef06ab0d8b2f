"""Outputs that cannot destroy (SPEC §5): a device, a FIFO, an input, the store, one file
twice, `-` twice and a --db that is not a termgate store are usage errors (exit 2) found
before any work; nothing is replaced and nothing is stored. `-` writes to standard output."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from conftest import golden_row, write_jsonl


@pytest.fixture
def files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "heart attack", ["mi"])])
    write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["mi"]}])
    return tmp_path


def evaluate(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", "g.jsonl", "--generated",
                           "c.jsonl", "--drift-judge", "none", "--db", "s.duckdb", *args],
                          capture_output=True, text=True, timeout=120)


def refused(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert all(w in result.stderr for w in words), result.stderr
    assert "Traceback" not in result.stderr
    assert not Path("s.duckdb").exists()  # before any work: no store either


def test_dev_null_is_refused_and_kept(files):
    refused(evaluate("--json", "/dev/null"), "--json /dev/null", "character device")
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_a_fifo_is_refused_and_kept(files):
    os.mkfifo("pipe")
    refused(evaluate("--html", "pipe"), "--html pipe", "FIFO")
    assert stat.S_ISFIFO(os.stat("pipe").st_mode)


@pytest.mark.parametrize("link", ["same", "hard", "symbolic"])
def test_an_output_that_is_an_input_is_refused(files, link):
    before = Path("g.jsonl").read_bytes()
    target = "g.jsonl"
    if link == "hard":
        os.link("g.jsonl", "alias.jsonl")
        target = "alias.jsonl"
    elif link == "symbolic":
        os.symlink("g.jsonl", "alias.jsonl")
        target = "alias.jsonl"
    refused(evaluate("--json", target), f"--json {target}", "same file as --golden g.jsonl")
    assert Path("g.jsonl").read_bytes() == before


@pytest.mark.slow
def test_an_output_that_is_the_store_is_refused(files):
    assert evaluate().returncode == 0  # a store with one run
    before = Path("s.duckdb").read_bytes()
    result = evaluate("--junit", "s.duckdb")
    assert result.returncode == 2 and "same file as --db s.duckdb" in result.stderr, result.stderr
    assert Path("s.duckdb").read_bytes() == before


@pytest.mark.slow
def test_two_outputs_on_one_file_and_dash_twice_are_refused(files):
    refused(evaluate("--json", "out.json", "--html", "./out.json"), "same file as --json out.json")
    assert not Path("out.json").exists()
    refused(evaluate("--json", "-", "--junit", "-"), "--json and --junit both write to standard output")


@pytest.mark.slow
def test_dash_writes_the_report_to_standard_output(files):
    result = evaluate("--json", "-")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # standard output holds the report alone
    assert report["gate"]["decision"] == "pass" and report["per_query_results"][0]["query_id"] == "q1"
    assert "gate: PASS" in result.stderr  # the summary moved to standard error
    assert not Path("-").exists()


@pytest.mark.parametrize("content", [b'{"runs": []}\n', b"query_id,f1\nq1,1.0\n", b""], ids=["json", "csv", "empty"])
def test_a_db_that_is_not_a_store_is_refused_and_kept(files, content):
    Path("s.duckdb").write_bytes(content)
    result = evaluate()
    assert result.returncode == 2 and "--db s.duckdb" in result.stderr and "stored" not in result.stdout
    assert Path("s.duckdb").read_bytes() == content


def test_a_duckdb_file_of_another_application_is_refused(files):
    with duckdb.connect("s.duckdb") as con:
        con.execute("CREATE TABLE customers (id INTEGER)")
    result = evaluate()
    assert result.returncode == 2 and "not a termgate store" in result.stderr, result.stderr
    with duckdb.connect("s.duckdb", read_only=True) as con:
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
    assert tables == ["customers"]


@pytest.mark.parametrize("target", ["x/../g.jsonl", "nope/../c.jsonl"])
def test_a_path_through_a_missing_folder_still_names_the_input(files, target):
    """`x/../g.jsonl` with no folder x: the same file as --golden once resolved."""
    before = Path("g.jsonl").read_bytes(), Path("c.jsonl").read_bytes()
    refused(evaluate("--json", target), f"--json {target}", "same file as")
    assert (Path("g.jsonl").read_bytes(), Path("c.jsonl").read_bytes()) == before
    assert not Path("x").exists() and not Path("nope").exists()


@pytest.mark.parametrize("spelling", ["s.duckdb", "zz/../s.duckdb"])
def test_a_report_on_a_store_not_created_yet_is_refused(files, spelling):
    refused(evaluate("--json", spelling), "same file as --db s.duckdb")


def test_a_report_on_the_store_named_by_the_environment_is_refused(files, monkeypatch):
    monkeypatch.setenv("TERMGATE_DB", "env.duckdb")
    result = subprocess.run([sys.executable, "-m", "termgate", "evaluate", "--golden", "g.jsonl", "--generated",
                             "c.jsonl", "--drift-judge", "none", "--json", "env.duckdb"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "same file as --db env.duckdb" in result.stderr, result.stderr
    assert not Path("env.duckdb").exists()


def test_harness_never_overwrites_its_expander(files):
    Path("expander.py").write_text("def expand(query, context):\n    return ['mi']\n", encoding="utf-8")
    before = Path("expander.py").read_bytes()
    result = subprocess.run([sys.executable, "-m", "termgate", "harness", "--golden", "g.jsonl", "--callable",
                             "expander:expand", "--no-store", "--drift-judge", "none", "--json", "expander.py"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "same file as --callable" in result.stderr, result.stderr
    assert Path("expander.py").read_bytes() == before


@pytest.mark.slow
def test_a_report_through_a_symbolic_link_writes_the_file_it_names(files):
    Path("target.json").write_text("old", encoding="utf-8")
    os.symlink("target.json", "link.json")
    result = evaluate("--json", "link.json")
    assert result.returncode == 0, result.stderr
    assert Path("link.json").is_symlink()  # the link is kept ...
    assert json.loads(Path("target.json").read_text())["gate"]["decision"] == "pass"  # ... and its file written
    assert "wrote link.json" in result.stdout


@pytest.mark.slow
def test_prompt_eval_outputs_are_checked_like_reports(files):
    """prompt-eval run: a report on its dataset, on /dev/null or on the store is refused before any call."""
    dataset = files / "cases.json"
    dataset.write_text('{"cases": []}')
    before = dataset.read_bytes()
    for flag, path, words in (("--json", "cases.json", ("same file", "--dataset")),
                              ("--html", "/dev/null", ("character device",)),
                              ("--json", "s.duckdb", ("same file", "--db"))):
        result = subprocess.run([sys.executable, "-m", "termgate", "prompt-eval", "run", "--dataset", "cases.json",
                                 "--callable", "nowhere:f", flag, path, "--db", "s.duckdb"],
                                capture_output=True, text=True, timeout=120)
        refused(result, *words)
    assert dataset.read_bytes() == before and stat.S_ISCHR(os.stat("/dev/null").st_mode)
