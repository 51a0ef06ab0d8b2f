"""Exact-identifier protection: a golden entry may name the document its query must find
at rank 1 (`"must_find_first": "18 U.S.C. § 1030"`: a code, a SKU, a statute number).
Where the unexpanded query finds it first and the expansion moves it, that is a finding
(docs/spec.md §2 rule 11).
"""

from __future__ import annotations

from pathlib import Path

import orjson

from ..errors import InputError, Problem
from .outcome import Ranking

__all__ = ["FIELD", "first_documents", "moved_identifiers"]

FIELD = "must_find_first"


def first_documents(golden_path: str | Path) -> dict[str, str]:
    """query_id -> the document its query must find first, from the golden set's entries
    that name one. The golden set has been read and validated already; this reads only the
    one field, and a value that is not a non-empty string is an InputError at its line."""
    path = Path(golden_path)
    out: dict[str, str] = {}
    problems = []
    with path.open("rb") as lines:
        for number, line in enumerate(lines, start=1):
            if FIELD.encode() not in line:
                continue
            try:
                entry = orjson.loads(line.removeprefix(b"\xef\xbb\xbf"))
            except orjson.JSONDecodeError:
                continue  # the golden reader has judged this line already
            if not isinstance(entry, dict) or FIELD not in entry:
                continue
            value = entry[FIELD]
            if not isinstance(value, str) or not value.strip():
                problems.append(Problem(str(path), number, FIELD,
                                        f"must be a document id, a non-empty string (got {orjson.dumps(value).decode()})"))
                continue
            if isinstance(entry.get("query_id"), str):
                out[entry["query_id"]] = value
    if problems:
        raise InputError(problems)
    return out


def _rank(ranking: Ranking | None, doc: str) -> int | None:
    if ranking is None:
        return None
    try:
        return ranking.ids.index(doc) + 1
    except ValueError:
        return None


def moved_identifiers(first: dict[str, str], runs: dict[str, dict[str, Ranking]]) -> list[dict]:
    """The queries whose named document the unexpanded query finds first and the candidate
    does not: {query_id, document, candidate_rank (None: not retrieved)}. Queries whose
    document the unexpanded query itself misses are {…, "unexpanded_rank"} too, marked
    `engine` (the engine's doing, not the expansion's)."""
    out = []
    for qid, doc in first.items():
        if qid not in runs.get("candidate", {}):
            continue
        before, after = _rank(runs["unexpanded"].get(qid), doc), _rank(runs["candidate"][qid], doc)
        if after == 1:
            continue
        out.append({"query_id": qid, "document": doc, "unexpanded_rank": before, "candidate_rank": after,
                    "moved_by": "expansion" if before == 1 else "engine"})
    return out
