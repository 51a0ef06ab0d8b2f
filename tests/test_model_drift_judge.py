"""`termgate evaluate --drift-judge llm` and `hybrid` against a real model: llama.cpp's
server with SmolLM2-135M-Instruct (tests/model_server.py) as the drift judge.

The tiny judge's replies are mostly unreadable (it echoes the request's shape): these tests
hold what termgate does with them — every reply stored, each term judged or left unjudged
with a reason naming what was wrong, the headline counting the unjudged beside the drift
score, the query's own text never drift, the exit code following the report.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main

from conftest import golden_row, write_jsonl
from model_server import GATE_EXIT, write_settings

pytestmark = [pytest.mark.model, pytest.mark.slow]

GOLDEN = [golden_row("q1", "heart attack", ["myocardial infarction", "MI"], domain="medical"),
          golden_row("q2", "cell phone", ["mobile phone", "smartphone"])]
# two false positives a query, one related and one not; q2's first is the query itself
GENERATED = [{"query_id": "q1", "terms": ["myocardial infarction", "cardiac arrest", "banana bread"]},
             {"query_id": "q2", "terms": ["smartphone", "cell phone", "garden hose"]}]
REASONS = ("unparseable reply", "cut off at", "timed out", "HTTP ", "refus", "empty")


@pytest.fixture
def folder(tmp_path, monkeypatch, model_server):
    monkeypatch.chdir(tmp_path)
    # hybrid: an uncertain band of everything, so every term the combiner sees goes to the LLM too
    settings = write_settings(tmp_path, model_server, drift={"band": [0.0, 1.0]}, max_tokens=128)
    monkeypatch.setenv("TERMGATE_CONFIG", str(settings))
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    write_jsonl(tmp_path / "golden.jsonl", GOLDEN)
    write_jsonl(tmp_path / "generated.jsonl", GENERATED)
    return tmp_path


def evaluate(judge: str):
    return CliRunner().invoke(main, ["evaluate", "--golden", "golden.jsonl", "--generated", "generated.jsonl",
                                     "--db", "store.duckdb", "--drift-judge", judge, "--json", "report.json"])


@pytest.mark.parametrize("judge", ["llm", "hybrid"])
def test_every_term_is_judged_or_unjudged_with_a_reason(folder, judge):
    if judge == "hybrid":
        pytest.importorskip("sentence_transformers", reason="the hybrid judge's combiner needs the embeddings extra")
    result = evaluate(judge)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    report = json.loads(open("report.json", encoding="utf-8").read())
    expected_exit = 5 if report["summary"]["errored"] else GATE_EXIT[report["gate"]["decision"]]
    assert result.exit_code == expected_exit, result.output
    run_id = report["evaluation_id"]
    terms = store.term_rows("store.duckdb", run_id)
    false_positives = terms[terms["kind"] == "FP"]
    assert len(false_positives) == 4
    query_itself = false_positives[(false_positives["query_id"] == "q2") & (false_positives["term"] == "cell phone")]
    assert not query_itself["drift"].iloc[0] and not query_itself["unjudged"].iloc[0]  # SPEC §2 rule 5

    log = store.judge_log("store.duckdb", run_id)
    for entry in log.itertuples():  # each judge reply kept, each failure named
        assert entry.prompt
        if not isinstance(entry.error, str):
            assert entry.reply and json.loads(entry.verdicts) is not None
        else:
            assert any(r in entry.error for r in REASONS), entry.error
            assert "Field required" not in entry.error, entry.error  # the missing field is named
            if "timed out" not in entry.error:
                assert entry.reply, entry
    # every false positive but the query itself went to the judge (hybrid: through its band)
    assert set(log["query_id"]) == {"q1", "q2"}
    unjudged = false_positives[false_positives["unjudged"]]
    assert set(log.loc[log["error"].notna(), "query_id"]) <= set(unjudged["query_id"])  # its terms unjudged
    assert "cell phone" not in set(unjudged["term"])
    unjudged = int(false_positives["unjudged"].sum())
    headline = next(line for line in result.output.splitlines() if " drift " in line and "macro" in line)
    if unjudged:  # beside the score, which counts them clean
        assert re.search(rf"drift \d\.\d{{3}} \({unjudged} of \d+ terms? unjudged\)", headline), headline
    else:
        assert "unjudged" not in headline
