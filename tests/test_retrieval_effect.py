"""The retrieval effect end to end (issue 34; docs/spec.md §2 rule 11): `evaluate` with
--corpus and --qrels over the embedded Tantivy index, the gate, the report, the run files
and the store, against an oracle in tests/retrieval_oracle.py.

The world: query q1 "heart attack" has ten relevant documents that say "myocardial
infarction" in long texts; twelve short documents about tennis rackets match the drift term
"tennis racket" in title and text. The baseline expands q1 with the right term only; the
candidate adds "tennis racket", which floods the top ten. q2 is unaffected.
"""

from __future__ import annotations

import hashlib
import json
import random

import pytest
from click.testing import CliRunner

import termgate.store as store
from termgate.cli import main
from termgate.retrieval.inputs import read_run

import retrieval_oracle as oracle

FILLER = "garden river window music bread engine paper storm coffee mountain chair letter".split()
PERMISSIVE = {"precision_min": 0, "recall_min": 0, "drift_min": 0, "mean_precision_min": 0, "mean_recall_min": 0,
              "recall_floor": 0, "regression_delta": 1}
"""Term thresholds that never decide: the gate is the retrieval rules' alone."""


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def world(tmp_path, monkeypatch):
    monkeypatch.setenv("TERMGATE_INDEX_DIR", str(tmp_path / "indexes"))
    rng = random.Random(7)
    docs = [{"id": f"mi {i}", "title": f"Cardiology note {i}",
             "text": " ".join(rng.choices(FILLER, k=40)) + " after a myocardial infarction the patient "
             + " ".join(rng.choices(FILLER, k=40))} for i in range(10)]
    docs += [{"id": f"racket-{i}", "title": "Tennis racket", "text": f"tennis racket model {i}"} for i in range(12)]
    docs += [{"id": "stone-1", "title": "Kidney stone", "text": "pain from a kidney stone"},
             {"id": "stone-2", "title": "Nephrolithiasis", "text": "nephrolithiasis is the medical word"}]
    docs += [{"id": f"f{i}", "title": " ".join(rng.sample(FILLER, 2)), "text": " ".join(rng.choices(FILLER, k=12))}
             for i in range(30)]
    qrels = [f"q1 0 mi%20{i} {2 if i < 5 else 1}" for i in range(10)] + ["q1 0 racket-0 0", "q2 0 stone-1 2",
                                                                        "q2 0 stone-2 1"]
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n", encoding="utf-8")
    golden = [{"query_id": "q1", "query": "heart attack", "context": {"domain": "cardio"},
               "expected_expansions": [{"term": "myocardial infarction"}]},
              {"query_id": "q2", "query": "kidney stone", "context": {"domain": "cardio"},
               "expected_expansions": [{"term": "nephrolithiasis"}]}]
    right = [{"query_id": "q1", "terms": [{"term": "myocardial infarction", "weight": 0.9}]},
             {"query_id": "q2", "terms": [{"term": "nephrolithiasis", "weight": 0.9}]}]
    flooded = [{"query_id": "q1", "terms": [{"term": "myocardial infarction", "weight": 0.9},
                                            {"term": "tennis racket", "weight": 1.0}]},
               {"query_id": "q2", "terms": [{"term": "nephrolithiasis", "weight": 0.9}]}]
    paths = {"docs": _jsonl(tmp_path / "docs.jsonl", docs), "qrels": tmp_path / "qrels.txt",
             "golden": _jsonl(tmp_path / "golden.jsonl", golden), "right": _jsonl(tmp_path / "right.jsonl", right),
             "flooded": _jsonl(tmp_path / "flooded.jsonl", flooded), "db": tmp_path / "s.duckdb",
             "thresholds": tmp_path / "t.json", "dir": tmp_path}
    paths["thresholds"].write_text(json.dumps(PERMISSIVE), encoding="utf-8")
    return paths


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def evaluate(world, generated, *extra, thresholds=None):
    if thresholds is not None:
        world["thresholds"].write_text(json.dumps({**PERMISSIVE, **thresholds}), encoding="utf-8")
    return cli("evaluate", "--golden", world["golden"], "--generated", world[generated], "--db", world["db"],
               "--drift-judge", "none", "--thresholds", world["thresholds"], "--corpus", world["docs"],
               "--qrels", world["qrels"], *extra)


def report_of(world, generated, *extra, **kw):
    out = world["dir"] / f"report-{generated}-{len(list(world['dir'].iterdir()))}.json"
    result = evaluate(world, generated, "--json", out, *extra, **kw)
    return result, json.loads(out.read_text()) if out.exists() else None


def test_a_right_term_helps_and_without_a_baseline_the_reference_is_the_unexpanded_query(world):
    result, report = report_of(world, "right")
    assert result.exit_code == 0, result.output
    r = report["retrieval"]
    assert r["reference"] == "unexpanded" and set(r["means"]) == {"unexpanded", "candidate"}
    q1 = next(q for q in r["per_query"] if q["query_id"] == "q1")
    assert q1["variants"]["candidate"]["ndcg"] > q1["variants"]["unexpanded"]["ndcg"]
    assert q1["status"] == "improved" and "q1" in r["improved_queries"]
    assert "retrieval (tantivy" in result.output and "nDCG@10" in result.output


def test_a_flooding_term_sends_the_run_to_review_and_names_the_term(world):
    report_of(world, "right")
    baseline = store.list_runs(world["db"])["run_id"].iloc[0]
    summary = world["dir"] / "summary.md"
    result, report = report_of(world, "flooded", "--baseline", baseline, "--pr-comment", summary)
    assert result.exit_code == 3, result.output  # review: awaiting sign-off
    comment = summary.read_text()
    assert "### Retrieval (2 of 2 judged queries, against the baseline)" in comment
    assert "### Queries that lost retrieval (1)" in comment and "tennis racket" in comment
    r = report["retrieval"]
    assert r["reference"] == "baseline" and r["regressed_queries"] == ["q1"]
    assert any("lost more than 0.1 nDCG@10 against the baseline: q1" in reason for reason in report["gate"]["reasons"])
    q1 = next(q for q in r["per_query"] if q["query_id"] == "q1")
    assert q1["variants"]["baseline"]["ndcg"] > 0.95  # the right term finds the ten relevant documents
    assert q1["ndcg_delta"] < -0.1 and q1["status"] == "regressed"
    top = q1["attribution"][0]
    assert top["term"] == "tennis racket" and top["recovers"] == pytest.approx(-q1["ndcg_delta"])
    assert top["non_relevant"] >= 1 and all(d.startswith("racket-") for d in top["brought_in"])
    assert q1["attribution"][1]["term"] == "myocardial infarction" and not q1["attribution"][1]["brought_in"]
    assert "'tennis racket' brought" in result.output and "non-relevant" in result.output
    ours = q1["variants"]["candidate"]  # each top document's grade, title and the term that brought it in
    for doc, grade, title, term in zip(ours["top"], ours["grades"], ours["titles"], ours["brought_by"]):
        if doc.startswith("racket-"):
            assert (grade, title, term) == (0 if doc == "racket-0" else None, "Tennis racket", "tennis racket")
        else:
            assert grade in (1, 2) and title.startswith("Cardiology note") and term is None


@pytest.mark.parametrize("thresholds, domain", [({"retrieval_regressed": "fail"}, "cardio"), ({}, "medical")])
def test_a_retrieval_regression_fails_in_a_high_risk_domain_or_when_told(world, thresholds, domain):
    golden = [json.loads(line) for line in world["golden"].read_text().splitlines()]
    for row in golden:
        row["context"]["domain"] = domain
    _jsonl(world["golden"], golden)
    report_of(world, "right")
    baseline = store.list_runs(world["db"])["run_id"].iloc[0]
    result, report = report_of(world, "flooded", "--baseline", baseline, thresholds=thresholds)
    assert result.exit_code == 1, result.output
    assert report["gate"]["decision"] == "fail"
    assert report["retrieval"]["regressed_high_risk"] == (["q1"] if domain == "medical" else [])


def test_the_run_files_hold_what_the_report_says_measured_by_the_oracle(world):
    result, report = report_of(world, "flooded", "--trec-runs", world["dir"] / "runs")
    assert result.exit_code in (0, 3), result.output
    r = report["retrieval"]
    qrels = {"q1": {f"mi {i}": 2 if i < 5 else 1 for i in range(10)} | {"racket-0": 0},
             "q2": {"stone-1": 2, "stone-2": 1}}
    for variant in ("unexpanded", "candidate"):
        path = world["dir"] / "runs" / f"{variant}.trec"
        assert hashlib.sha256(path.read_bytes()).hexdigest() == r["run_files"][variant]
        if variant == "candidate":  # an id with a space, percent-encoded in the file
            assert "mi%20" in path.read_text()
        run = read_run(path)
        for entry in r["per_query"]:
            ranking = run.get(entry["query_id"])  # a query that finds nothing has no line
            ids = ranking.ids if ranking is not None else []
            assert entry["variants"][variant]["top"] == ids[:10]
            scores = dict(zip(ids, ranking.scores)) if ranking is not None else {}
            expected = oracle.measure({entry["query_id"]: qrels[entry["query_id"]]}, {entry["query_id"]: scores})
            for metric, value in expected[entry["query_id"]].items():
                assert entry["variants"][variant][metric] == pytest.approx(value, abs=1e-9), (variant, metric)


def test_the_store_keeps_the_metrics_and_the_top_ids(world):
    result, report = report_of(world, "flooded")
    stored = store.get_run(world["db"], report["evaluation_id"])
    assert stored["retrieval"]["run_files"] == report["retrieval"]["run_files"]
    rows = store.retrieval_rows(world["db"], report["evaluation_id"])
    q1 = rows[(rows["query_id"] == "q1") & (rows["variant"] == "candidate")].iloc[0]
    entry = next(q for q in report["retrieval"]["per_query"] if q["query_id"] == "q1")
    assert list(q1["top_ids"]) == entry["variants"]["candidate"]["top"]
    assert q1["ndcg"] == pytest.approx(entry["variants"]["candidate"]["ndcg"])
    gate = cli("gate", report["evaluation_id"], "--db", world["db"], "--summary", world["dir"] / "s.md")
    assert "### Retrieval" in (world["dir"] / "s.md").read_text(), gate.output


def test_the_content_hash_covers_the_judgments_not_the_corpus_bytes(world):
    _, one = report_of(world, "right")
    _, two = report_of(world, "right")
    assert one["run"]["content_hash"] == two["run"]["content_hash"]
    docs = [json.loads(line) for line in world["docs"].read_text().splitlines()]
    world["docs"].write_text("".join(json.dumps(d, indent=None, separators=(", ", " : ")) + "\r\n" for d in docs),
                             encoding="utf-8")
    _, reformatted = report_of(world, "right")
    assert reformatted["run"]["content_hash"] == one["run"]["content_hash"]
    world["qrels"].write_text(world["qrels"].read_text().replace("q2 0 stone-2 1", "q2 0 stone-2 2"))
    _, regraded = report_of(world, "right")
    assert regraded["run"]["content_hash"] != one["run"]["content_hash"]
    assert regraded["retrieval"]["qrels"]["hash"] != one["retrieval"]["qrels"]["hash"]


def test_bad_judgments_stop_the_run_before_anything_is_stored(world):
    world["qrels"].write_text("q1 0 mi%200 2\nq1 0 mi%201 high\n", encoding="utf-8")
    result = evaluate(world, "right")
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{world['qrels']}:2: grade")
    assert not world["db"].exists() or store.list_runs(world["db"]).empty


@pytest.mark.parametrize("args, flag", [(("--corpus", "docs.jsonl"), "--corpus"),
                                        (("--trec-runs", "runs"), "--trec-runs")])
def test_retrieval_options_without_judgments_are_a_usage_error(world, args, flag):
    result = cli("evaluate", "--golden", world["golden"], "--generated", world["right"], "--no-store",
                 "--drift-judge", "none", *args)
    assert result.exit_code == 2 and f"{flag} measures retrieval" in result.output


def test_a_document_that_must_come_first_and_is_moved_is_a_finding(world):
    golden = [json.loads(line) for line in world["golden"].read_text().splitlines()]
    golden[1]["must_find_first"] = "stone-1"
    golden[1]["query"] = "stone"  # finds stone-1 first; the synonym at full weight lifts stone-2 above it
    _jsonl(world["golden"], golden)
    flooded = [json.loads(line) for line in world["flooded"].read_text().splitlines()]
    flooded[1]["terms"] = [{"term": "nephrolithiasis", "weight": 1.0}]
    _jsonl(world["flooded"], flooded)
    result, report = report_of(world, "flooded")
    moved = report["retrieval"]["identifiers"]
    assert moved == [{"query_id": "q2", "document": "stone-1", "unexpanded_rank": 1,
                      "candidate_rank": moved[0]["candidate_rank"], "moved_by": "expansion", "high_risk": False}]
    assert moved[0]["candidate_rank"] != 1
    assert any("moved 'stone-1'" in reason for reason in report["gate"]["reasons"])
    golden[1]["must_find_first"] = ""
    _jsonl(world["golden"], golden)
    bad = evaluate(world, "right")
    assert bad.exit_code == 2 and f"{world['golden']}:2: must_find_first" in bad.output


def test_searches_that_did_not_parse_are_named_in_the_summary():
    """An engine's parse problems (Tantivy's lenient fallback) reach the report, by query and variant."""
    from termgate.retrieval.effect import QueryInput, RetrievalSetup, measure_effect
    from termgate.retrieval.engine import QueryProblem
    from termgate.retrieval.inputs import Qrels
    from termgate.retrieval.outcome import Ranking

    class Engine:
        problems: list = []

        def search(self, requests, depth):
            self.problems = [QueryProblem(i, "x", "unbalanced quote; searched what the lenient parser read")
                             for i, (query, _terms) in enumerate(requests) if '"' in query]
            return [Ranking(["d1"], [1.0]) for _ in requests]

        def describe(self):
            return {"engine": "fake"}

    queries = [QueryInput("q1", "fine", None, (("a", 1.0),)), QueryInput("q2", 'odd "quote', None, (("b", 1.0),))]
    outcome = measure_effect(RetrievalSetup(None, Qrels("q", {"q1": {"d1": 1}, "q2": {"d1": 1}}, "h"), Engine()),
                             queries, None, k=10, depth=10, delta=0.1)
    assert outcome.summary["query_problem_count"] == 2
    assert [(p["query_id"], p["variant"]) for p in outcome.summary["query_problems"]] == [
        ("q2", "unexpanded"), ("q2", "candidate")]


def test_an_index_folder_that_cannot_be_made_is_one_line(world, monkeypatch):
    blocker = world["dir"] / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("TERMGATE_INDEX_DIR", str(blocker / "indexes"))
    result = evaluate(world, "right")
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [result.output.strip()]
    assert "cannot keep the search index in" in result.output and "TERMGATE_INDEX_DIR" in result.output
