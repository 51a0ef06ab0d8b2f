"""An independent plain-Python implementation of the trec_eval measures termgate reports
(termgate.retrieval.measures): the oracle ir-measures/pytrec_eval are checked against.

Written from trec_eval's source (usnistgov/trec_eval 10.0):
- form_res_rels.c: results are sorted by score descending, ties broken by
  `strcmp(p2->docno, p1->docno)`, i.e. by document id descending (byte order); a judged
  document with a negative grade is "unjudged in pool": it gains nothing and is never
  counted among the relevance levels;
- m_ndcg_cut.c: DCG@k = sum over the top k of grade / log2(rank + 1) for grades > 0;
  IDCG@k is the same sum over the ideal ordering of the judged grades > 0, cut at k;
  nDCG is DCG / IDCG, left as DCG (0) when IDCG is 0;
- m_recall.c, m_P.c, m_recip_rank.c: relevant means grade >= 1 (relevance_level 1);
  recall.n = relevant in top n / relevant judged; P.k = relevant in top k / k (missing
  ranks count as non-relevant); recip_rank = 1 / rank of the first relevant document.
"""

from __future__ import annotations

import math

RELEVANT = 1  # trec_eval's default relevance_level


def trec_order(scores: dict[str, float]) -> list[str]:
    """Document ids in trec_eval's order: score descending, then id descending."""
    by_id = sorted(scores, key=lambda doc: doc.encode(), reverse=True)
    return sorted(by_id, key=lambda doc: -scores[doc])  # stable: ties keep id descending


def ndcg_cut(grades: dict[str, int], ranked: list[str], k: int) -> float:
    def dcg(gains: list[int]) -> float:
        return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1) if g > 0)

    actual = dcg([grades.get(doc, 0) for doc in ranked[:k]])
    ideal = dcg(sorted((g for g in grades.values() if g > 0), reverse=True)[:k])
    return actual / ideal if ideal > 0 else 0.0


def recall(grades: dict[str, int], ranked: list[str], depth: int) -> float:
    relevant = {doc for doc, g in grades.items() if g >= RELEVANT}
    return len(relevant.intersection(ranked[:depth])) / len(relevant) if relevant else 0.0


def recip_rank(grades: dict[str, int], ranked: list[str], depth: int) -> float:
    for rank, doc in enumerate(ranked[:depth], start=1):
        if grades.get(doc, 0) >= RELEVANT:
            return 1 / rank
    return 0.0


def precision(grades: dict[str, int], ranked: list[str], k: int) -> float:
    return sum(1 for doc in ranked[:k] if grades.get(doc, 0) >= RELEVANT) / k


def measure(judgments: dict[str, dict[str, int]], run: dict[str, dict[str, float]], k: int = 10,
            depth: int = 100) -> dict[str, dict[str, float]]:
    """The four metrics of every judged query with a relevant document; a query the run
    lacks ranks nothing (all 0). `run` maps query -> document -> score, as a run file does."""
    out = {}
    for query_id, grades in judgments.items():
        if not any(g >= RELEVANT for g in grades.values()):
            continue
        ranked = trec_order(run.get(query_id, {}))
        out[query_id] = {"ndcg": ndcg_cut(grades, ranked, k), "recall": recall(grades, ranked, depth),
                         "mrr": recip_rank(grades, ranked, depth), "precision": precision(grades, ranked, k)}
    return out
