"""Which term did it: for a query whose nDCG fell, leave one term out at a time, and name
the documents each term brought into the top k (docs/spec.md §2 rule 11).

A term *brought in* a document when the document is in the candidate's top k, was not in
the unexpanded query's top k, and matches that term's clause (the term as a phrase). A
term's *recovery* is the nDCG@k change when that term alone is left out of the candidate's
expansion: positive when the query does better without it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .outcome import Ranking

__all__ = ["attribute", "brought_in_line", "matching"]


def attribute(engine, judgments: dict[str, dict[str, int]],
              queries: Sequence[tuple[str, str, Sequence[tuple[str, float]]]],
              candidate: dict[str, Ranking], unexpanded: dict[str, Ranking],
              candidate_ndcg: dict[str, float], *, k: int, depth: int) -> dict[str, list[dict]]:
    """Per query (query_id, text, the candidate's terms): per term of weight > 0 its
    recovery and the documents it brought into the top k, the term whose removal recovers
    most first. All leave-one-out searches go to the engine as one batch."""
    from .measures import measure

    requests, keys, plan = [], [], []
    for qid, text, terms in queries:
        used = [(t, w) for t, w in terms if w > 0]
        plan.append((qid, used))
        for i in range(len(used)):
            requests.append((text, used[:i] + used[i + 1:]))
            keys.append((qid, i))
    names = [str(n) for n in range(len(keys))]  # one plain id per leave-one-out search
    rankings = dict(zip(names, engine.search(requests, depth))) if requests else {}
    grades = {name: judgments.get(qid, {}) for name, (qid, _) in zip(names, keys)}
    measured = measure(grades, rankings, k=k, depth=depth) if rankings else {}
    scores = {key: measured.get(name, {}) for name, key in zip(names, keys)}
    out: dict[str, list[dict]] = {}
    for qid, used in plan:
        qrels = judgments.get(qid, {})
        before = set(unexpanded[qid].ids[:k]) if qid in unexpanded else set()
        new = [d for d in candidate[qid].ids[:k] if d not in before] if qid in candidate else []
        entries = []
        for i, (term, weight) in enumerate(used):
            matched = matching(engine, term, weight, new, depth) if new else set()
            docs = [d for d in new if d in matched]
            ndcg = scores.get((qid, i), {}).get("ndcg", 0.0)
            entries.append({"term": term, "weight": weight, "recovers": ndcg - candidate_ndcg.get(qid, 0.0),
                            "brought_in": docs, "relevant": sum(1 for d in docs if qrels.get(d, 0) > 0),
                            "non_relevant": sum(1 for d in docs if qrels.get(d, 0) <= 0)})
        entries.sort(key=lambda a: (-a["recovers"], -a["non_relevant"], a["term"]))
        out[qid] = entries
    return out


def matching(engine, term: str, weight: float, docs: list[str], depth: int) -> set[str]:
    """Which of `docs` match the term's clause: the engine says so where it can (the
    embedded index); an engine over HTTP is asked for the term alone, to the depth."""
    if hasattr(engine, "matches"):
        return set(engine.matches(term, weight, docs))
    found = engine.search([("", [(term, weight)])], depth)[0]
    return set(found.ids) & set(docs)


def brought_in_line(entry: dict, k: int) -> str:
    """"'panic attack' brought 4 non-relevant documents into the top 10 (leaving it out
    changes nDCG by +0.210)"."""
    parts = []
    if entry["non_relevant"]:
        parts.append(f"{entry['non_relevant']} non-relevant")
    if entry["relevant"]:
        parts.append(f"{entry['relevant']} relevant")
    what = " and ".join(parts) if parts else "no"
    noun = "document" if len(entry["brought_in"]) == 1 else "documents"
    return (f"{entry['term']!r} brought {what} {noun} into the top {k} "
            f"(leaving it out changes nDCG by {entry['recovers']:+.3f})")
