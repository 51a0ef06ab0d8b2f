"""The retrieval effect of one run: run the golden queries unexpanded, with the baseline's
terms and with this run's, measure each against the relevance judgments, and compare
(docs/spec.md §2 "Retrieval"; docs/retrieval.md).

The reference a query's change is measured against is the baseline's expansion when the
run has a baseline, else the unexpanded query: without a baseline the question is
whether expanding helps at all. A query enters the comparison when the judgments name a
relevant document for it and its item (and the baseline's) did not error.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import pyarrow as pa

from ..scoring.metrics import EPSILON
from .outcome import METRICS, ROWS_SCHEMA, TITLE_STORED, TOP_STORED, VARIANTS, Ranking, RetrievalOutcome

if TYPE_CHECKING:
    from .inputs import Corpus, Qrels

__all__ = ["Engine", "QueryInput", "RetrievalSetup", "brought_by", "measure_effect", "Request", "run_tag"]

Request = tuple[str, Sequence[tuple[str, float]]]
"""(query text, [(term, weight), ...]): one search; terms of weight 0 are left out."""


class Engine(Protocol):
    """What ranks documents: the embedded Tantivy index or a team's engine over HTTP."""

    def search(self, requests: Sequence[Request], depth: int) -> list[Ranking]: ...

    def describe(self) -> dict: ...


@dataclass(frozen=True, slots=True)
class QueryInput:
    """One golden query as the retrieval run reads it: its text, domain and the terms
    this run generated (normalised, with weights); errored items are not searched."""

    query_id: str
    query: str
    domain: str | None
    terms: tuple[tuple[str, float], ...]
    errored: bool = False


@dataclass(frozen=True)
class RetrievalSetup:
    """What a run's retrieval effect is measured with: read before any scoring, so bad
    input stops the run at once (exit 2)."""

    corpus: Corpus | None
    """The documents of the embedded engine (None: an external engine has its own)."""
    qrels: Qrels
    engine: Engine

    def fingerprint(self, k: int, depth: int) -> dict:
        """What decides the results besides the terms, for the run's content hash."""
        return {"corpus": self.corpus.hash if self.corpus is not None else None, "qrels": self.qrels.hash,
                "engine": self.engine.describe(), "k": k, "depth": depth}


def _relevant(judgments: dict[str, int]) -> bool:
    return any(grade > 0 for grade in judgments.values())


def measure_effect(setup: RetrievalSetup, queries: Sequence[QueryInput],
                   baseline_terms: dict[str, tuple[tuple[str, float], ...] | None] | None,
                   *, k: int, depth: int, delta: float, high_risk_domains: Iterable[str] = (),
                   first: dict[str, str] | None = None) -> RetrievalOutcome:
    """Search, measure and compare; `baseline_terms` maps a baseline query to its stored
    terms (None: errored there), and is None for a run without a baseline. `first` maps a
    query to the document it must find at rank 1 (termgate.retrieval.identifiers). For
    each regressed query, the terms are attributed (termgate.retrieval.attribution)."""
    from .attribution import attribute  # ir-measures and the readers load only when retrieval is asked for
    from .identifiers import moved_identifiers
    from .inputs import write_run
    from .measures import compare, labels, measure

    judgments = setup.qrels.judgments
    searched = [q for q in queries if not q.errored]
    requests: dict[str, list[Request]] = {
        "unexpanded": [(q.query, ()) for q in searched],
        "candidate": [(q.query, q.terms) for q in searched],
    }
    base_ids: list[QueryInput] = []
    if baseline_terms is not None:
        base_ids = [q for q in searched if baseline_terms.get(q.query_id) is not None]
        requests["baseline"] = [(q.query, baseline_terms[q.query_id]) for q in base_ids]
    runs: dict[str, dict[str, Ranking]] = {}
    problems: list[dict] = []
    for variant in VARIANTS:
        if variant not in requests:
            continue
        asked = base_ids if variant == "baseline" else searched
        rankings = setup.engine.search(requests[variant], depth)
        runs[variant] = {q.query_id: r for q, r in zip(asked, rankings)}
        problems += [{"query_id": asked[p.request].query_id, "variant": variant, "message": p.message}
                     for p in getattr(setup.engine, "problems", [])]
    scores = {variant: measure(judgments, run, k=k, depth=depth) for variant, run in runs.items()}
    reference = "baseline" if baseline_terms is not None else "unexpanded"
    judged = [q for q in searched if _relevant(judgments.get(q.query_id, {}))]
    paired = [q.query_id for q in judged if q.query_id in scores[reference] and q.query_id in scores["candidate"]]
    deltas = {qid: scores["candidate"][qid]["ndcg"] - scores[reference][qid]["ndcg"] for qid in paired}
    regressed = [qid for qid in paired if deltas[qid] < -delta - EPSILON]
    improved = [qid for qid in paired if deltas[qid] > delta + EPSILON]
    risky = set(high_risk_domains)
    domain_of = {q.query_id: q.domain for q in queries}
    hashes = {variant: write_run(None, run, run_tag(variant)) for variant, run in runs.items()}
    means = {variant: {m: _mean(s[qid][m] for qid in paired if qid in s) for m in METRICS}
             for variant, s in scores.items()}
    by_id = {q.query_id: q for q in searched}
    attribution = attribute(setup.engine, judgments, [(qid, by_id[qid].query, by_id[qid].terms) for qid in regressed],
                            runs["candidate"], runs["unexpanded"],
                            {qid: scores["candidate"][qid]["ndcg"] for qid in regressed}, k=k, depth=depth)
    moved = [{**m, "high_risk": domain_of.get(m["query_id"]) in risky}
             for m in moved_identifiers(first or {}, runs)]
    summary = {
        "engine": setup.engine.describe(),
        "corpus": None if setup.corpus is None else
        {"path": setup.corpus.path, "hash": setup.corpus.hash, "documents": len(setup.corpus.ids)},
        "qrels": {"path": setup.qrels.path, "hash": setup.qrels.hash, "queries": len(judgments)},
        "k": k, "depth": depth, "delta": delta, "labels": labels(k, depth),
        "reference": reference,
        "judged_queries": len(judged), "compared_queries": len(paired),
        "unjudged_queries": [q.query_id for q in queries if not _relevant(judgments.get(q.query_id, {}))],
        "qrels_other_queries": len(set(judgments) - {q.query_id for q in queries}),
        "relevant_not_in_corpus": _missing_documents(judgments, setup.corpus, domain_of),
        "means": means,
        "mean_ndcg_delta": _mean(deltas.values()),
        "statistics": compare(scores[reference], scores["candidate"], paired) if paired else None,
        "regressed_queries": regressed,
        "regressed_high_risk": [qid for qid in regressed if domain_of.get(qid) in risky],
        "improved_queries": improved,
        "attribution": attribution,
        "query_problems": problems[:100],
        "query_problem_count": len(problems),
        "identifiers": moved,
        "run_files": hashes,
    }
    judged_ids = [q.query_id for q in judged]
    brought = brought_by(setup.engine, runs, by_id, judged_ids, k)
    return RetrievalOutcome(summary, _rows(runs, scores, judged_ids, judgments, setup.corpus, brought), runs)


def run_tag(variant: str) -> str:
    """The TREC run tag (sixth column) of a variant's run file."""
    return f"termgate-{variant}"


def _missing_documents(judgments: dict[str, dict[str, int]], corpus, queries: dict) -> int | None:
    """Relevant judged documents of the golden queries that the corpus does not hold (None
    for an engine with its own index): a high count means the ids do not meet."""
    if corpus is None:
        return None
    ids = set(corpus.ids)
    return sum(1 for qid in queries for doc, grade in judgments.get(qid, {}).items() if grade > 0 and doc not in ids)


def _mean(values: Iterable[float]) -> float | None:
    values = list(values)
    return math.fsum(values) / len(values) if values else None


def brought_by(engine, runs: dict[str, dict[str, Ranking]], queries: dict[str, QueryInput], judged: list[str],
               k: int) -> dict[str, list[str | None]]:
    """Per judged query, aligned with the candidate's top TOP_STORED ids: the expansion
    term that brought each document in (in the candidate's top k, not in the unexpanded
    query's, matching the term's clause; of several such terms the heaviest), else None."""
    from .attribution import matching

    out: dict[str, list[str | None]] = {}
    for qid in judged:
        ranking = runs["candidate"].get(qid)
        if ranking is None:
            continue
        top = ranking.ids[:TOP_STORED]
        before = set(runs["unexpanded"][qid].ids[:k]) if qid in runs["unexpanded"] else set()
        new = [d for d in top[:k] if d not in before]
        found: dict[str, str] = {}
        for term, weight in sorted(queries[qid].terms, key=lambda t: -t[1]):
            if weight <= 0 or len(found) == len(new):
                continue
            for doc in matching(engine, term, weight, [d for d in new if d not in found], len(ranking.ids)):
                found[doc] = term
        out[qid] = [found.get(d) for d in top]
    return out


def _rows(runs: dict[str, dict[str, Ranking]], scores: dict[str, dict[str, dict[str, float]]],
          judged: list[str], judgments: dict[str, dict[str, int]], corpus, brought: dict[str, list]) -> pa.Table:
    """One row per judged query and variant searched, in golden order."""
    columns: dict[str, list] = {name: [] for name in ROWS_SCHEMA.names}
    titles = dict(zip(corpus.ids, corpus.titles)) if corpus is not None else None
    for qid in judged:
        for variant in VARIANTS:
            if variant not in runs or qid not in runs[variant]:
                continue
            metrics = scores[variant].get(qid) or dict.fromkeys(METRICS, 0.0)
            columns["query_id"].append(qid)
            columns["variant"].append(variant)
            for m in METRICS:
                columns[m].append(metrics[m])
            top = runs[variant][qid].ids[:TOP_STORED]
            grades = judgments.get(qid, {})
            columns["top_ids"].append(top)
            columns["top_grades"].append([grades.get(d) for d in top])
            columns["top_titles"].append([titles.get(d, "")[:TITLE_STORED] for d in top] if titles is not None else None)
            columns["brought_by"].append(brought.get(qid) if variant == "candidate" else None)
    return pa.table(columns, schema=ROWS_SCHEMA)
