"""A small world with the retrieval effect recorded in a store, for the dashboard's tests
(tests/test_dashboard_retrieval.py, tests/test_browser.py): three runs that `evaluate`
records, two of them with --corpus and --qrels.

Query q1 "heart attack" has ten relevant documents that say "myocardial infarction" (one id
holds Markdown: `mi *0*`); twelve short documents about tennis rackets match the drift term
"tennis racket". q2 "kidney stone" must find stone-1 first. Run `right` expands q1 with the
right term and has no baseline (its reference is the unexpanded query); run `flooded`,
against `right`, adds "tennis racket" to both queries. Run `plain` measured no retrieval.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main

FILLER = "garden river window music bread engine paper storm coffee mountain chair letter".split()
PERMISSIVE = {"precision_min": 0, "recall_min": 0, "drift_min": 0, "mean_precision_min": 0, "mean_recall_min": 0,
              "recall_floor": 0, "regression_delta": 1}
MI = ["mi *0*"] + [f"mi {i}" for i in range(1, 10)]


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _cli(*args) -> None:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert result.exit_code in (0, 3), result.output  # passes, or awaits review


def record(tmp: Path) -> tuple[Path, dict[str, str]]:
    """The store with the three runs, made in `tmp`: (its path, {name: run_id})."""
    rng = random.Random(7)
    docs = [{"id": doc, "title": f"Cardiology note {i}", "text": " ".join(rng.choices(FILLER, k=40))
             + " after a myocardial infarction the patient " + " ".join(rng.choices(FILLER, k=40))}
            for i, doc in enumerate(MI)]
    docs += [{"id": f"racket-{i}", "title": "**Tennis** racket", "text": f"tennis racket model {i}"}
             for i in range(12)]
    # stone-1, the only document with "kidney", is a long one: racket documents outrank it once expanded
    docs += [{"id": "stone-1", "title": "Patient letter",
              "text": "pain from a kidney stone " + " ".join(rng.choices(FILLER, k=150))},
             {"id": "stone-2", "title": "Nephrolithiasis", "text": "nephrolithiasis is the medical word"}]
    docs += [{"id": f"f{i}", "title": " ".join(rng.sample(FILLER, 2)), "text": " ".join(rng.choices(FILLER, k=12))}
             for i in range(30)]
    qrels = [f"q1 0 {d.replace(' ', '%20')} {2 if i < 5 else 1}" for i, d in enumerate(MI)]
    qrels += ["q1 0 racket-0 0", "q2 0 stone-1 2", "q2 0 stone-2 1"]
    (tmp / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    golden = [{"query_id": "q1", "query": "heart attack", "expected_expansions": [{"term": "myocardial infarction"}]},
              {"query_id": "q2", "query": "kidney stone", "must_find_first": "stone-1",
               "expected_expansions": [{"term": "nephrolithiasis"}]}]
    right = [{"query_id": "q1", "terms": [{"term": "myocardial infarction", "weight": 0.9}]},
             {"query_id": "q2", "terms": [{"term": "nephrolithiasis", "weight": 0.9}]}]
    flooded = [{"query_id": q["query_id"], "terms": q["terms"] + [{"term": "tennis racket", "weight": 1.0}]}
               for q in right]
    paths = {"docs": _jsonl(tmp / "docs.jsonl", docs), "golden": _jsonl(tmp / "golden.jsonl", golden),
             "right": _jsonl(tmp / "right.jsonl", right), "flooded": _jsonl(tmp / "flooded.jsonl", flooded)}
    (tmp / "t.json").write_text(json.dumps(PERMISSIVE), encoding="utf-8")
    db = tmp / "store.duckdb"
    common = ("--golden", paths["golden"], "--db", db, "--drift-judge", "none", "--thresholds", tmp / "t.json")
    retrieval = ("--corpus", paths["docs"], "--qrels", tmp / "qrels.txt")

    def evaluate(name: str, generated: Path, *extra) -> str:
        _cli("evaluate", *common, "--generated", generated, "--name", name, *extra)
        return store.list_runs(db)["run_id"].iloc[0]

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TERMGATE_INDEX_DIR", str(tmp / "indexes"))  # never the user's index folder
        ids = {"right": evaluate("right", paths["right"], *retrieval), "plain": evaluate("plain", paths["right"])}
        ids["flooded"] = evaluate("flooded", paths["flooded"], *retrieval, "--baseline", ids["right"])
    return db, ids
