"""Generated expansions (SPEC §1.2): JSONL lines or one mapping object."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..metrics import normalize_term
from .reading import _Collector, _line_of, _read_text, jsonl_lines


@dataclass(slots=True)
class GeneratedSet:
    """Generated expansions: query_id -> normalised term -> highest weight."""

    path: str
    expansions: dict[str, dict[str, float]]



def _parse_terms(terms: object, line: int, prefix: str, sink: _Collector) -> dict[str, float] | None:
    if not isinstance(terms, list):
        sink.add(line, prefix, "must be a list of terms")
        return None
    out: dict[str, float] = {}
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
        norm = normalize_term(term)
        if not norm:
            sink.add(line, where if type(entry) is str else f"{where}.term",
                     "is empty after normalisation")
            continue
        previous = out.get(norm)
        if previous is None or weight > previous:
            out[norm] = float(weight)
    return out


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict:
    seen: dict[str, object] = {}
    for key, value in pairs:
        if key in seen:
            # the mapping's values are term lists; a term object's are strings and numbers
            raise _DuplicateKey(key, all(isinstance(v, list) for _, v in pairs))
        seen[key] = value
    return seen


class _DuplicateKey(ValueError):
    def __init__(self, key: str, is_query_id: bool):
        super().__init__(key)
        self.key = key
        self.is_query_id = is_query_id


def _load_mapping(text: str, golden_ids: set[str], sink: _Collector) -> dict[str, dict[str, float]]:
    try:
        mapping = json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except _DuplicateKey as exc:
        needle = json.dumps(exc.key)
        first = _line_of(text, needle)
        second = _line_of(text[text.find(needle) + 1:], needle) + first - 1
        if exc.is_query_id:
            sink.add(second, "query_id", f"duplicate query_id '{exc.key}' (first on line {first})")
        else:
            sink.add(second, "json", f"duplicate key '{exc.key}' in one object (first on line {first})")
        return {}
    out: dict[str, dict[str, float]] = {}
    for qid, terms in mapping.items():
        line = _line_of(text, json.dumps(qid))
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
    sink = _Collector(str(path))
    text = _read_text(path, "generated expansions")
    stripped = text.lstrip()
    if stripped.startswith("{") and _looks_like_mapping(text):
        expansions = _load_mapping(text, golden_ids, sink)
        sink.raise_if_any()
        return GeneratedSet(str(path), expansions)
    expansions: dict[str, dict[str, float]] = {}
    first_line: dict[str, int] = {}
    loads = orjson.loads
    for lineno, raw in enumerate(jsonl_lines(text), start=1):
        if not raw.strip():
            continue
        if sink.full:
            break
        try:
            obj = loads(raw)
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


