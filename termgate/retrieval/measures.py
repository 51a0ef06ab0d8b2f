"""Per-query retrieval metrics and their paired statistics (issue 34, docs/retrieval.md).

The metrics come from ir-measures over pytrec_eval, which runs trec_eval's own C code:
nDCG@k is trec_eval's `ndcg_cut.k` (linear gain: a document's gain is its grade; grades
of 0 or below gain nothing), recall@depth is `recall.depth`, MRR@depth is `recip_rank`
over the top `depth` and P@k is `P.k` (a ranking shorter than k counts the missing ranks
as non-relevant). A document is relevant when its grade is at least 1.

Which queries are scored:
- every judged query with at least one relevant document. One without (all grades 0 or
  below) has no ideal ranking to normalise by and no relevant document to recall, so it
  is left out rather than given a score that means nothing;
- a judged query the run does not hold, or holds with an empty ranking, scores 0 on every
  metric, as with `trec_eval -c`. Without `-c` trec_eval 9 skips it (raising the mean of a
  run that finds nothing for its hardest queries) and trec_eval 10 stops with an error;
- a run query without judgments is left out.

Order: the ranking's own order is measured. trec_eval ranks by score, descending, and
breaks ties by document id, descending; pytrec_eval (and trec_eval up to 9.0.8) compares
scores in single precision, so two scores one double step apart tie there. pytrec_eval is
therefore given each document's rank, not its score. A `Ranking`'s scores are strictly
decreasing in single precision (outcome.strictly_decreasing), so a TREC run file written
from it gives every trec_eval the same order, and the same metrics.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..scoring.stats import RESAMPLES, SEED, describe_delta, holm
from .outcome import METRICS, Ranking

__all__ = ["measure", "labels", "compare"]


def labels(k: int = 10, depth: int = 100) -> dict[str, str]:
    """Display label of each metric key: nDCG@10, R@100, MRR@100, P@10 by default."""
    return {"ndcg": f"nDCG@{k}", "recall": f"R@{depth}", "mrr": f"MRR@{depth}", "precision": f"P@{k}"}


def _measures(k: int, depth: int) -> dict:
    from ir_measures import P, R, RR, nDCG

    # RR without a cutoff on a run already cut at `depth` is RR@depth; pytrec_eval has no RR cutoff.
    return {nDCG @ k: "ndcg", R @ depth: "recall", RR: "mrr", P @ k: "precision"}


def measure(judgments: dict[str, dict[str, int]], run: dict[str, Ranking], k: int = 10,
            depth: int = 100) -> dict[str, dict[str, float]]:
    """nDCG@k, recall@depth, MRR@depth and P@k of every scorable judged query (module
    docstring), keyed by query id then by metric (METRICS)."""
    if not 1 <= k <= depth:
        raise ValueError(f"need 1 <= k <= depth, got k={k}, depth={depth}")
    scored = {q: docs for q, docs in judgments.items() if any(grade > 0 for grade in docs.values())}
    out = {q: dict.fromkeys(METRICS, 0.0) for q in scored}
    ranked = {q: _top(q, run[q], depth) for q in scored if q in run and run[q].ids}
    if ranked:
        import ir_measures

        keys = _measures(k, depth)
        evaluator = ir_measures.pytrec_eval.evaluator(list(keys), {q: scored[q] for q in ranked})
        for metric in evaluator.iter_calc(ranked):
            out[metric.query_id][keys[metric.measure]] = float(metric.value)
    return out


def _top(query_id: str, ranking: Ranking, depth: int) -> dict[str, float]:
    """The ranking's first `depth` documents, each scored by its rank (first highest)."""
    ids = ranking.ids[:depth]
    top = dict(zip(ids, map(float, range(len(ids), 0, -1))))
    if len(top) < len(ids):
        raise ValueError(f"query {query_id!r}: a document appears twice in its ranking")
    return top


def compare(reference: dict[str, dict[str, float]], candidate: dict[str, dict[str, float]],
            query_ids: Sequence[str], resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """Paired statistics of candidate − reference per metric over the queries of
    `query_ids` that both sides scored (in that order): mean, percentile bootstrap
    interval, sign-flip p-value (scoring.stats) and Holm's adjustment across the four
    metrics; JSON-ready, shaped like the report's `statistics` block."""
    shared = [q for q in dict.fromkeys(query_ids) if q in reference and q in candidate]
    out: dict = {}
    for metric in METRICS:
        deltas = np.array([candidate[q][metric] - reference[q][metric] for q in shared], dtype=float)
        out[metric] = describe_delta(deltas, resamples, seed).as_dict()
    adjusted = holm({m: out[m]["p_value"] if out[m]["p_value"] is not None else math.nan for m in METRICS})
    for metric in METRICS:
        out[metric]["p_value_holm"] = None if math.isnan(adjusted[metric]) else adjusted[metric]
    out["seed"], out["resamples"] = seed, resamples
    return out
