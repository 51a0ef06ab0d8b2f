"""Generated expansions (SPEC §1.2): JSONL lines or one mapping object."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from ..scoring.metrics import normalize_term
from .query_ids import query_id_problem
from .reading import ProblemCollector, RepeatedKey, jsonl_lines, line_of, loads_line, loads_strict, read_text


GENERATED_SCHEMA = pa.schema([
    ("query_id", pa.string()), ("terms", pa.list_(pa.string())), ("weights", pa.list_(pa.float64())),
    ("error", pa.string())])
"""Generated expansions as the scorer reads them: per query the terms and weights as
given (aligned lists), and the reason an item could not be produced (else null)."""


@dataclass(slots=True)
class GeneratedSet:
    """Validated generated expansions: query_id -> [(term, weight)] as given."""

    path: str
    expansions: dict[str, list[tuple[str, float]]]

    def table(self, errors: dict[str, str] | None = None) -> pa.Table:
        """GENERATED_SCHEMA rows; `errors` marks errored items, which have no terms (SPEC §5:
        an errored item is scored as an empty expansion)."""
        errors = errors or {}
        ids = list(self.expansions) + [q for q in errors if q not in self.expansions]
        kept = [() if q in errors else self.expansions.get(q, ()) for q in ids]
        return pa.table({
            "query_id": ids,
            "terms": [[t for t, _ in entries] for entries in kept],
            "weights": [[w for _, w in entries] for entries in kept],
            "error": [errors.get(q) for q in ids]}, schema=GENERATED_SCHEMA)



def _parse_terms(terms: object, line: int, prefix: str, sink: ProblemCollector) -> list[tuple[str, float]] | None:
    if not isinstance(terms, list):
        sink.add(line, prefix, "must be a list of terms")
        return None
    out: list[tuple[str, float]] = []
    for i, entry in enumerate(terms):
        where = f"{prefix}[{i}]"
        if type(entry) is str:
            term, weight = entry, 1.0
        elif type(entry) is dict:
            term = entry.get("term")
            weight = entry.get("weight", 1.0)
            if type(term) is not str:
                sink.add(line, f"{where}.term", "required string is missing" if term is None
                         else f"must be a string (got {json.dumps(term)})")
                continue
            if type(weight) not in (int, float) or not math.isfinite(weight):
                sink.add(line, f"{where}.weight", f"must be a number in [0, 1] (got {json.dumps(weight)})")
                continue
            if not 0.0 <= weight <= 1.0:
                sink.add(line, f"{where}.weight", f"must be in [0, 1] (got {weight})")
                continue
        else:
            sink.add(line, where, "must be a string or an object {\"term\", \"weight\"}")
            continue
        if not normalize_term(term):
            sink.add(line, where if type(entry) is str else f"{where}.term",
                     "is empty after normalisation")
            continue
        out.append((term, float(weight)))
    return out


def _key_line(text: str, qid: str) -> int:
    """The line of the mapping's key `qid`, written as it is or escaped."""
    for needle in (json.dumps(qid, ensure_ascii=False) + ":", json.dumps(qid) + ":", json.dumps(qid)):
        if needle in text:
            return line_of(text, needle)
    return 1


def _load_mapping(text: str, golden_ids: set[str], sink: ProblemCollector) -> dict[str, list[tuple[str, float]]]:
    try:
        mapping = loads_strict(text)
    except RepeatedKey as exc:
        if exc.field == exc.key:  # a key of the mapping itself: a query_id given twice
            needle = json.dumps(exc.key)
            sink.add(exc.line_in(text), "query_id",
                     f"duplicate query_id '{exc.key}' (first on line {line_of(text, needle)})")
        else:
            exc.add_to(sink, exc.line_in(text))
        return {}
    out: dict[str, list[tuple[str, float]]] = {}
    for qid, terms in mapping.items():
        line = _key_line(text, qid)
        if problem := query_id_problem(qid):
            sink.add(line, "query_id", problem)
            continue
        if qid not in golden_ids:
            sink.add(line, "query_id", f"'{qid}' is not in the golden set")
            continue
        parsed = _parse_terms(terms, line, f"{qid}", sink)
        if parsed is not None:
            out[qid] = parsed
    return out


def _looks_like_mapping(text: str) -> bool:
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):  # nested too deeply: the line-by-line parser says where
        return False
    # One JSONL line is an object too; a mapping's values are lists, never a query_id string.
    return isinstance(whole, dict) and "query_id" not in whole


def load_generated(path: str | Path, golden_ids: set[str]) -> GeneratedSet:
    """Parse generated expansions: JSONL lines or one mapping object (SPEC §1.2)."""
    path = Path(path)
    sink = ProblemCollector(str(path))
    text = read_text(path, "generated expansions")
    stripped = text.lstrip()
    if stripped.startswith("{") and _looks_like_mapping(text):
        expansions = _load_mapping(text, golden_ids, sink)
        sink.raise_if_any()
        return GeneratedSet(str(path), expansions)
    expansions: dict[str, list[tuple[str, float]]] = {}
    first_line: dict[str, int] = {}
    for lineno, raw in enumerate(jsonl_lines(text), start=1):
        if not raw.strip():
            continue
        if sink.full:
            break
        try:
            obj = loads_line(raw)
        except RepeatedKey as exc:
            exc.add_to(sink, lineno)
            continue
        except ValueError as exc:
            sink.add(lineno, "json", f"malformed JSON ({exc})")
            continue
        if type(obj) is not dict:
            sink.add(lineno, "json", "expected a JSON object {\"query_id\", \"terms\"}")
            continue
        qid = obj.get("query_id")
        if type(qid) is not str or not qid:
            sink.add(lineno, "query_id", "required string is missing" if qid is None
                     else f"must be a non-empty string (got {json.dumps(qid)})")
            continue
        if problem := query_id_problem(qid):
            sink.add(lineno, "query_id", problem)
            continue
        if qid in first_line:
            sink.add(lineno, "query_id", f"duplicate query_id '{qid}' (first on line {first_line[qid]})")
            continue
        first_line[qid] = lineno
        if qid not in golden_ids:
            sink.add(lineno, "query_id", f"'{qid}' is not in the golden set")
            continue
        if "terms" not in obj:
            sink.add(lineno, "terms", "required field is missing")
            continue
        parsed = _parse_terms(obj["terms"], lineno, "terms", sink)
        if parsed is not None:
            expansions[qid] = parsed
    sink.raise_if_any()
    return GeneratedSet(str(path), expansions)


