"""What a run carries of its retrieval effect (issue 34): the shapes the engines, the
metrics, the store and the reports share.

A *ranking* is one query's ranked document ids, best first, with strictly decreasing
scores (trec_eval breaks ties by document id, so a tie would reorder the engine's
ranking); a *run* maps query ids to rankings. The three *variants* of a query are the
golden query alone (the floor), the baseline run's expansion and this run's.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

__all__ = ["reference_name", "Ranking", "VARIANTS", "METRICS", "TOP_STORED", "ROWS_SCHEMA", "RetrievalOutcome", "strictly_decreasing"]

VARIANTS = ("unexpanded", "baseline", "candidate")
METRICS = ("ndcg", "recall", "mrr", "precision")
"""nDCG@k (trec_eval's linear gain), recall@depth, reciprocal rank within depth, P@k."""
TOP_STORED = 10
"""Document ids a run stores per query and variant (the full run files are kept as hashes)."""


def reference_name(reference: str) -> str:
    """How a sentence names the reference variant: "the baseline", "the unexpanded query"."""
    return "the unexpanded query" if reference == "unexpanded" else f"the {reference}"


@dataclass(frozen=True, slots=True)
class Ranking:
    """One query's result list: document ids best first, scores strictly decreasing."""

    ids: list[str]
    scores: list[float]


_TOP = float(np.finfo(np.float32).max) / 2


def strictly_decreasing(scores: list[float]) -> list[float]:
    """The scores in rank order, each rounded to single precision and each tie or
    inversion nudged just below its predecessor (one single-precision step), so a TREC
    run file read by score keeps the engine's order. Single precision, because
    pytrec_eval and trec_eval up to 9.0.8 compare scores as 32-bit floats: two scores one
    double step apart tie there, and the tie is broken by document id."""
    wide = np.asarray(scores, dtype=np.float64)
    if len(wide) and not -_TOP <= wide.min() <= wide.max() <= _TOP:  # beyond: clipped, with room below
        wide = np.clip(wide, -_TOP, _TOP)                              # for the nudges to stay finite
    single = wide.astype(np.float32)
    n = len(single)
    if n < 2 or (single[1:] < single[:-1]).all():
        return single.tolist()
    # runs of equal scores (an engine's ties), at once: the j-th of a run steps j units in
    # the last place down, by its bits (a positive float's bits fall as it falls, a
    # negative one's rise)
    index = np.arange(n, dtype=np.int32)
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.not_equal(single[1:], single[:-1], out=starts[1:])
    step = index - np.maximum.accumulate(np.where(starts, index, 0))
    bits = single.view(np.int32)
    nudged = np.where(single > 0, bits - step, bits + step).view(np.float32)
    if not ((nudged[1:] < nudged[:-1]).all() and np.isfinite(nudged).all()):
        nudged = single  # an inversion, a zero, or a run reaching the next score: one by one
        down = np.float32(-np.inf)
        for i in range(1, len(nudged)):
            if not nudged[i] < nudged[i - 1]:
                nudged[i] = np.nextafter(nudged[i - 1], down)
    return nudged.tolist()


def strictly_decreasing_each(rankings: list[list[float]]) -> list[list[float]]:
    """strictly_decreasing of each list, the common case (runs of ties) in one pass over
    all of them: an engine's block of rankings pays numpy's per-call cost once."""
    lengths = [len(scores) for scores in rankings]
    wide = np.fromiter((s for scores in rankings for s in scores), dtype=np.float64, count=sum(lengths))
    if not len(wide) or not -_TOP <= wide.min() <= wide.max() <= _TOP:
        return [strictly_decreasing(scores) for scores in rankings]
    single = wide.astype(np.float32)
    n = len(single)
    firsts = np.cumsum([0] + lengths[:-1])
    index = np.arange(n, dtype=np.int32)
    starts = np.empty(n, dtype=bool)
    starts[0] = True
    np.not_equal(single[1:], single[:-1], out=starts[1:])
    starts[firsts[firsts < n]] = True  # each ranking's own runs
    step = index - np.maximum.accumulate(np.where(starts, index, 0))
    bits = single.view(np.int32)
    nudged = np.where(single > 0, bits - step, bits + step).view(np.float32)
    fine = np.empty(n, dtype=bool)
    fine[0] = True
    np.less(nudged[1:], nudged[:-1], out=fine[1:])
    fine[firsts[firsts < n]] = True
    fine &= np.isfinite(nudged)
    out = []
    for first, length, scores in zip(firsts.tolist(), lengths, rankings):
        part = fine[first:first + length]
        out.append(nudged[first:first + length].tolist() if part.all() else strictly_decreasing(scores))
    return out


ROWS_SCHEMA = pa.schema([
    ("query_id", pa.string()),
    ("variant", pa.string()),
    ("ndcg", pa.float64()),
    ("recall", pa.float64()),
    ("mrr", pa.float64()),
    ("precision", pa.float64()),
    ("top_ids", pa.list_(pa.string())),
    ("top_grades", pa.list_(pa.int32())),
    ("top_titles", pa.list_(pa.string())),
    ("brought_by", pa.list_(pa.string())),
])
"""One row per judged query and variant: its metrics and its top TOP_STORED ids, each id's
grade in the judgments (None: not judged), its title (cut to TITLE_STORED characters; None
for an engine with its own index), and for the candidate the expansion term that brought it
into the top k (None: the unexpanded query had it, or no single term's clause matches it;
None throughout for the other variants)."""
TITLE_STORED = 160


@dataclass(slots=True)
class RetrievalOutcome:
    """A run's retrieval effect.

    `summary` is JSON-ready (the report's `retrieval` object without its per-query part):
    engine, corpus, qrels, k, depth, template, reference variant, means per variant,
    statistics, regressed and improved query ids, and the SHA-256 of each variant's full
    TREC run file (`run_files`). `rows` follows ROWS_SCHEMA.
    """

    summary: dict
    rows: pa.Table = field(default_factory=lambda: ROWS_SCHEMA.empty_table())
    runs: dict[str, dict[str, Ranking]] = field(default_factory=dict)
    """Each variant's full run (query id -> ranking), for the TREC run files and the
    attribution; not stored (the summary keeps each file's SHA-256)."""

    def per_query(self) -> list[dict]:
        """The report's per-query entries, in golden order: each variant's metrics and top
        ids, the candidate's nDCG change against the reference, and its status."""
        reference = self.summary["reference"]
        regressed, improved = set(self.summary["regressed_queries"]), set(self.summary["improved_queries"])
        out: dict[str, dict] = {}
        for row in self.rows.to_pylist():
            entry = out.setdefault(row["query_id"], {"query_id": row["query_id"], "variants": {}})
            entry["variants"][row["variant"]] = {m: row[m] for m in METRICS} | {
                "top": row["top_ids"], "grades": row["top_grades"], "titles": row["top_titles"],
                **({"brought_by": row["brought_by"]} if row["brought_by"] is not None else {})}
        for qid, entry in out.items():
            ours, theirs = entry["variants"].get("candidate"), entry["variants"].get(reference)
            entry["ndcg_delta"] = ours["ndcg"] - theirs["ndcg"] if ours and theirs else None
            entry["status"] = ("regressed" if qid in regressed else "improved" if qid in improved
                               else "unchanged" if entry["ndcg_delta"] is not None else "not compared")
            if qid in self.summary.get("attribution", {}):
                entry["attribution"] = self.summary["attribution"][qid]
        return list(out.values())

    def report(self) -> dict:
        """The JSON report's `retrieval` object: the summary and the per-query entries."""
        return {**self.summary, "per_query": self.per_query()}
