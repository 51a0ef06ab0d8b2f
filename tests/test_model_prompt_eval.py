"""`termgate prompt-eval generate` and `run` against a real model: llama.cpp's server with
SmolLM2-135M-Instruct (tests/model_server.py) as generator, model under test and judge.

A 135M model is a poor generator and judge: these tests hold what termgate does with
whatever it answers (stored, read or errored with a reason, the right exit code, a rerun
from the cache, no runaway generation), never the scores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.store.prompts import list_prompt_evals, prompt_eval_results

from model_server import write_settings

pytestmark = [pytest.mark.model, pytest.mark.slow]

DATASET = {"task_description": "Suggest search synonyms for a shop's search box",
           "prompt_inputs_spec": {"query": "what the shopper typed"},
           "cases": [{"scenario": "A common product", "prompt_inputs": {"query": "running shoes"},
                      "solution_criteria": ["lists at least two synonyms"]},
                     {"scenario": "An abbreviation", "prompt_inputs": {"query": "tv"},
                      "solution_criteria": ["expands the abbreviation"]}]}
PROMPT = "List 3 search synonyms for the shop query, one per line.\nQuery: {query}\n"
REASONS = ("unparseable reply", "cut off at", "timed out", "HTTP ", "refus", "empty")


@pytest.fixture
def folder(tmp_path, monkeypatch, model_server):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMGATE_CONFIG", str(write_settings(tmp_path, model_server, max_tokens=128)))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    (tmp_path / "cases.json").write_text(json.dumps(DATASET, indent=1), encoding="utf-8")
    (tmp_path / "prompt.txt").write_text(PROMPT, encoding="utf-8")
    return tmp_path


def invoke(*args: str):
    return CliRunner().invoke(main, ["prompt-eval", *args, "--db", "store.duckdb", "--concurrency", "1"])


def test_generate_writes_a_dataset_or_stops_with_one_line_and_nothing_written(folder):
    """SmolLM2 rarely writes the ideas' JSON: either way generation ends at max_tokens, not at a
    timeout, with a dataset of the cases asked for, or exit 5 with one line naming what failed."""
    result = invoke("generate", "--task", "Suggest search synonyms for a shop's search box",
                    "--inputs", "query=what the shopper typed", "--cases", "2", "--out", "made.json")
    assert "Traceback" not in result.output
    assert "timed out" not in result.output, result.output  # a runaway stops at max_tokens
    if result.exit_code == 0:
        made = json.loads(Path("made.json").read_text(encoding="utf-8"))
        assert len(made["cases"]) == 2
        assert all(set(c["prompt_inputs"]) == {"query"} for c in made["cases"])
    else:  # SPEC §3: incomplete (a reply still unusable after its tries), not bad input
        assert result.exit_code == 5, result.output
        errors = [line for line in result.output.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and any(r in errors[0] for r in REASONS), result.output
        assert not Path("made.json").exists()  # nothing half-written


def _stored(before: set[str]):
    runs = list_prompt_evals("store.duckdb")
    new = runs[~runs["eval_id"].isin(before)]
    assert len(new) == 1
    row = new.iloc[0]
    return row, prompt_eval_results("store.duckdb", row["eval_id"]), json.loads(row["usage"])


def test_run_stores_every_output_errors_with_a_reason_and_reruns_from_the_cache(folder):
    first = invoke("run", "--dataset", "cases.json", "--prompt", "prompt.txt")
    run, cases, usage = _stored(set())
    errored = int(run["total_cases"] - run["scored_cases"])
    assert first.exit_code == (5 if errored else 0), first.output  # SPEC §3: errored cases are exit 5
    assert len(cases) == 2
    for case in cases.itertuples():
        assert case.output and case.output.strip()  # the model's reply to the case is kept
        if not isinstance(case.error, str):
            assert 0 <= case.score <= 10
        else:  # unscored with a reason naming what was wrong
            assert case.score is None or case.score != case.score  # None or NaN
            assert any(r in case.error for r in REASONS), case.error
    assert usage["model"]["calls"] == 2 and usage["model"]["cache_hits"] == 0
    assert 2 <= usage["judge"]["calls"] <= 2 * 2  # [llm] max_tries = 2

    again = invoke("run", "--dataset", "cases.json", "--prompt", "prompt.txt")
    rerun, rerun_cases, rerun_usage = _stored({run["eval_id"]})
    assert again.exit_code == first.exit_code
    assert rerun_usage["model"] == {**rerun_usage["model"], "calls": 0, "cache_hits": 2}
    scored = len(cases) - errored
    assert rerun_usage["judge"]["cache_hits"] == scored  # readable verdicts came from the cache
    assert list(rerun_cases["output"]) == list(cases["output"])
