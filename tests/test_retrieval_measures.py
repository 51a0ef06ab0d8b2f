"""Retrieval metrics (ir-measures over pytrec_eval) against the independent oracle in
tests/retrieval_oracle.py, on random runs, on TREC run files, and the paired statistics."""

from __future__ import annotations

import math
import os
import random
import shutil
import subprocess

import ir_measures
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import retrieval_oracle as oracle
from termgate.retrieval.measures import compare, labels, measure
from termgate.retrieval.outcome import METRICS, Ranking, strictly_decreasing, strictly_decreasing_each
from termgate.scoring.stats import holm


def random_case(seed: int, spaces: bool = True) -> tuple[dict, dict]:
    """Random graded judgments (-1..3, some queries with nothing relevant, some unjudged
    by the run) and a random run with strictly decreasing scores (some empty, some longer
    than 100, some only one float step apart)."""
    rng = random.Random(seed)
    sep = " " if spaces else "-"
    docs = [f"doc{sep}{i}" for i in range(160)]
    judgments: dict[str, dict[str, int]] = {}
    run: dict[str, Ranking] = {}
    for q in range(40):
        query_id = f"q{sep}{q}"
        if rng.random() < 0.9:
            grades = [-1, 0, 0, 1, 2, 3] if rng.random() < 0.8 else [-1, 0]
            judgments[query_id] = {doc: rng.choice(grades) for doc in rng.sample(docs, rng.randint(1, 30))}
        if rng.random() < 0.85:
            ids = rng.sample(docs, rng.choice([0, 1, 5, 12, 60, 150]))
            digits = rng.choice([0, 1, 6])
            raw = sorted((round(rng.uniform(0, 20), digits) for _ in ids), reverse=True)
            if rng.random() < 0.2:  # distinct doubles that tie in single precision
                raw = [10.0 - i * 1e-12 for i in range(len(ids))]
            run[query_id] = Ranking(ids, strictly_decreasing(raw))  # ties and near-ties nudged apart
    return judgments, run


def as_scores(run: dict[str, Ranking]) -> dict[str, dict[str, float]]:
    return {q: dict(zip(r.ids, r.scores)) for q, r in run.items()}


def assert_equal_metrics(got: dict, want: dict, tolerance: float = 1e-9) -> None:
    assert got.keys() == want.keys()
    for query_id in want:
        for metric in METRICS:
            assert got[query_id][metric] == pytest.approx(want[query_id][metric], abs=tolerance), (query_id, metric)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize(("k", "depth"), [(10, 100), (5, 20), (1, 1), (20, 20)])
def test_measure_equals_the_oracle_on_random_runs(seed, k, depth):
    judgments, run = random_case(seed)
    assert_equal_metrics(measure(judgments, run, k, depth), oracle.measure(judgments, as_scores(run), k, depth))


def test_linear_gain_by_hand():
    judgments = {"q": {"a": 3, "b": 1, "c": 0, "d": -1}}
    run = {"q": Ranking(["d", "b", "a"], [3.0, 2.0, 1.0])}
    got = measure(judgments, run)["q"]
    # DCG = 1/log2(3) + 3/log2(4) = 2.1309; IDCG = 3 + 1/log2(3) = 3.6309 (exponential gain 2^g − 1 would give 0.5413)
    assert got["ndcg"] == pytest.approx((1 / math.log2(3) + 1.5) / (3 + 1 / math.log2(3)), abs=1e-12)
    assert got == pytest.approx({"ndcg": 0.58688, "recall": 1.0, "mrr": 0.5, "precision": 0.2}, abs=1e-5)


def test_ids_with_spaces():
    judgments = {"q 1": {"doc a": 1, "doc b": 0}, "q 2": {"doc a": 2}}
    run = {"q 1": Ranking(["doc b", "doc a"], [2.0, 1.0]), "q 2": Ranking(["doc a"], [1.0])}
    got = measure(judgments, run)
    assert got["q 1"] == pytest.approx({"ndcg": 1 / math.log2(3), "recall": 1.0, "mrr": 0.5, "precision": 0.1})
    assert got["q 2"] == pytest.approx({"ndcg": 1.0, "recall": 1.0, "mrr": 1.0, "precision": 0.1})


def test_which_queries_are_scored():
    judgments = {"found": {"a": 1}, "absent": {"a": 1}, "empty": {"a": 2}, "nothing relevant": {"a": 0, "b": -1}}
    run = {"found": Ranking(["a"], [1.0]), "empty": Ranking([], []), "unjudged": Ranking(["a"], [1.0]),
           "nothing relevant": Ranking(["a"], [1.0])}
    got = measure(judgments, run)
    assert set(got) == {"found", "absent", "empty"}  # no relevant document: left out; no judgments: left out
    assert got["absent"] == got["empty"] == dict.fromkeys(METRICS, 0.0)  # trec_eval without -c would skip them
    assert measure(judgments, {}) == {q: dict.fromkeys(METRICS, 0.0) for q in ("found", "absent", "empty")}


def trec_eval_on_scores(judgments: dict, run: dict[str, dict[str, float]], k: int = 10) -> dict:
    """pytrec_eval (via ir_measures) ranking by the scores themselves, as it does a run file."""
    from ir_measures import RR, P, R, nDCG

    names = {nDCG @ k: "ndcg", R @ 100: "recall", RR: "mrr", P @ k: "precision"}
    out: dict[str, dict[str, float]] = {}
    for metric in ir_measures.pytrec_eval.iter_calc(list(names), judgments, run):
        out.setdefault(metric.query_id, {})[names[metric.measure]] = metric.value
    return out


@pytest.mark.parametrize("scores", [[1.0, 1.0], [1.0, math.nextafter(1.0, -math.inf)]])
def test_ties_would_reorder_the_ranking(scores):
    judgments = {"q": {"a": 1, "b": 0}}
    ranking = Ranking(["a", "b"], scores)  # the engine put "a" first
    # by score, "a" and "b" tie (the second pair only in single precision); trec_eval breaks
    # the tie by id, descending: "b" first, so "a" would be measured at rank 2
    assert trec_eval_on_scores(judgments, as_scores({"q": ranking}))["q"]["mrr"] == 0.5
    assert oracle.trec_order({"a": 1.0, "b": 1.0}) == ["b", "a"]
    nudged = Ranking(ranking.ids, strictly_decreasing(ranking.scores))
    assert trec_eval_on_scores(judgments, as_scores({"q": nudged}))["q"]["mrr"] == 1.0
    assert measure(judgments, {"q": ranking})["q"]["mrr"] == measure(judgments, {"q": nudged})["q"]["mrr"] == 1.0


def test_strictly_decreasing_survives_single_precision():
    raw = [5.0, 5.0, 5.0 - 1e-12, 4.0, 4.5, 1e-30, 0.0, 0.0]
    scores = strictly_decreasing(raw)
    single = np.asarray(scores, dtype=np.float32)
    assert np.all(single[1:] < single[:-1]) and single.astype(float).tolist() == scores  # exact in both precisions
    assert [float(repr(s)) for s in scores] == scores  # a run file keeps them


def test_a_document_twice_in_a_ranking_is_refused():
    with pytest.raises(ValueError, match="twice"):
        measure({"q": {"a": 1}}, {"q": Ranking(["a", "b", "a"], [3.0, 2.0, 1.0])})


def test_labels():
    assert labels() == {"ndcg": "nDCG@10", "recall": "R@100", "mrr": "MRR@100", "precision": "P@10"}
    assert labels(5, 50) == {"ndcg": "nDCG@5", "recall": "R@50", "mrr": "MRR@50", "precision": "P@5"}


# --- run files ---------------------------------------------------------------------------------------------------

def write_files(tmp_path, judgments: dict, run: dict[str, Ranking], depth: int = 100) -> tuple[str, str]:
    """A TREC qrels file and a TREC run file (qid Q0 doc rank score tag) of the top `depth`,
    scores as repr()."""
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{q} 0 {doc} {grade}\n" for q, docs in judgments.items()
                                  for doc, grade in docs.items()))
    run_path.write_text("".join(f"{q} Q0 {doc} {rank} {score!r} test\n" for q, r in run.items()
                                for rank, (doc, score) in enumerate(zip(r.ids[:depth], r.scores[:depth]), start=1)))
    return str(qrels_path), str(run_path)


def read_files(qrels_path: str, run_path: str) -> tuple[dict, dict[str, Ranking]]:
    """Read back with ir_measures' own TREC readers; a ranking in file order."""
    judgments: dict[str, dict[str, int]] = {}
    for qrel in ir_measures.read_trec_qrels(qrels_path):
        judgments.setdefault(qrel.query_id, {})[qrel.doc_id] = qrel.relevance
    lines: dict[str, list] = {}
    for scored in ir_measures.read_trec_run(run_path):
        lines.setdefault(scored.query_id, []).append(scored)
    return judgments, {q: Ranking([s.doc_id for s in docs], [s.score for s in docs]) for q, docs in lines.items()}


@pytest.mark.parametrize("seed", range(6))
def test_measure_equals_the_oracle_and_trec_eval_on_run_files(tmp_path, seed):
    judgments, run = random_case(seed, spaces=False)
    read_judgments, read_run = read_files(*write_files(tmp_path, judgments, run))
    want = oracle.measure(judgments, as_scores(run))
    assert_equal_metrics(measure(read_judgments, read_run), want)
    assert_equal_metrics(oracle.measure(read_judgments, as_scores(read_run)), want)  # the file kept the order
    by_scores = trec_eval_on_scores(read_judgments, as_scores(read_run))  # pytrec_eval ranking the file's scores
    assert_equal_metrics({q: by_scores[q] for q in want}, want)


TREC_EVAL = os.environ.get("TREC_EVAL") or shutil.which("trec_eval")


@pytest.mark.skipif(not TREC_EVAL, reason="trec_eval not installed (set TREC_EVAL to its path)")
@pytest.mark.parametrize("seed", range(3))
def test_measure_equals_the_trec_eval_program_on_run_files(tmp_path, seed):
    judgments, run = random_case(seed, spaces=False)
    files = write_files(tmp_path, judgments, run)
    names = {"ndcg_cut_10": "ndcg", "recall_100": "recall", "recip_rank": "mrr", "P_10": "precision"}
    # -c: a judged query the run lacks scores 0, as in measure()
    printed = subprocess.run([TREC_EVAL, "-c", "-q", "-m", "ndcg_cut.10", "-m", "recall.100", "-m", "recip_rank",
                              "-m", "P.10", *files], capture_output=True, text=True, check=True).stdout
    want: dict[str, dict[str, float]] = {}
    for line in printed.splitlines():
        name, query_id, value = line.split()
        if query_id != "all":
            want.setdefault(query_id, {})[names[name]] = float(value)
    got = measure(judgments, run)
    assert_equal_metrics(got, {q: want[q] for q in got}, tolerance=5e-5)  # trec_eval prints 4 decimals


# --- paired statistics -------------------------------------------------------------------------------------------

def shifted(reference: dict, shift: dict[str, float], noise: float, seed: int) -> dict:
    rng = random.Random(seed)
    return {q: {m: v + shift[m] + rng.gauss(0, noise) for m, v in row.items()} for q, row in reference.items()}


def reference_rows(n: int = 60) -> dict:
    rng = random.Random(1)
    return {f"q{i}": {m: rng.random() for m in METRICS} for i in range(n)}


def test_compare_adjusts_across_the_metrics_with_holm():
    reference = reference_rows()
    candidate = shifted(reference, {"ndcg": 0.08, "recall": 0.03, "mrr": 0.0, "precision": -0.05}, 0.2, seed=2)
    out = compare(reference, candidate, list(reference))
    raw = {m: out[m]["p_value"] for m in METRICS}
    assert {m: out[m]["p_value_holm"] for m in METRICS} == holm(raw)
    by_raw = sorted(METRICS, key=lambda m: raw[m])
    adjusted = [out[m]["p_value_holm"] for m in by_raw]
    assert adjusted == sorted(adjusted)  # monotone in the raw p-values
    assert all(out[m]["p_value_holm"] >= raw[m] for m in METRICS)
    assert len(set(raw.values())) > 1  # a real test of the ordering, not four equal values
    assert (out["seed"], out["resamples"]) == (0, 10_000)


def test_compare_a_known_shift_gives_an_interval_without_zero():
    reference = reference_rows()
    candidate = shifted(reference, dict.fromkeys(METRICS, -0.2), 0.05, seed=3)
    out = compare(reference, candidate, list(reference))
    for metric in METRICS:
        assert out[metric]["ci_high"] < 0 and out[metric]["mean_delta"] == pytest.approx(-0.2, abs=0.02)
        assert out[metric]["p_value_holm"] < 0.01 and out[metric]["n"] == 60


def test_compare_identical_runs():
    reference = reference_rows()
    out = compare(reference, reference, list(reference))
    for metric in METRICS:
        assert out[metric] == {"mean_delta": 0.0, "ci_low": 0.0, "ci_high": 0.0, "p_value": 1.0,
                               "p_value_holm": 1.0, "n": 60}


def test_compare_pairs_only_the_listed_queries_on_both_sides():
    reference = {"a": dict.fromkeys(METRICS, 0.0), "b": dict.fromkeys(METRICS, 0.5), "c": dict.fromkeys(METRICS, 1.0)}
    candidate = {"a": dict.fromkeys(METRICS, 1.0), "b": dict.fromkeys(METRICS, 0.5), "d": dict.fromkeys(METRICS, 0.0)}
    out = compare(reference, candidate, ["a", "b", "c", "d", "a"])
    assert out["ndcg"]["n"] == 2 and out["ndcg"]["mean_delta"] == 0.5  # a (+1) and b (0); c and d unpaired
    empty = compare(reference, candidate, ["c"])
    assert empty["ndcg"] == {"mean_delta": None, "ci_low": None, "ci_high": None, "p_value": None,
                             "p_value_holm": None, "n": 0}


@given(st.lists(st.sampled_from([7.5, 5.0, 3.0, 1.0, 1.0 - 2 ** -24, 0.0, -0.0, -1.0, -2.5, 1e39, -1e39]),
                min_size=1, max_size=40))
def test_strictly_decreasing_equals_the_plain_loop(values):
    """The vectorised nudge (runs of ties stepped by their bits) equals nudging one by one."""
    top = float(np.finfo(np.float32).max) / 2
    expected = np.clip(np.asarray(values, dtype=np.float64), -top, top).astype(np.float32)
    for i in range(1, len(expected)):
        if not expected[i] < expected[i - 1]:
            expected[i] = np.nextafter(expected[i - 1], np.float32(-np.inf))
    got = strictly_decreasing(values)
    assert got == expected.astype(np.float64).tolist()
    assert all(b < a for a, b in zip(got, got[1:]))


@given(st.lists(st.lists(st.sampled_from([7.5, 5.0, 3.0, 1.0, 1.0 - 2 ** -24, 0.0, -1.0, -2.5, 1e39]), max_size=12),
                max_size=8))
def test_a_block_of_rankings_is_nudged_as_each_alone(rankings):
    """An engine's block at once (runs of ties never cross from one ranking into the next)."""
    assert strictly_decreasing_each(rankings) == [strictly_decreasing(scores) for scores in rankings]
