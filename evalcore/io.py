"""Load and validate input files into models, with line-numbered problems (SPEC §1, §5).

Every loader collects problems as `FILE:LINE: FIELD: message` and raises one
`InputError` holding them; nothing is returned half-parsed.
"""

from __future__ import annotations

import hashlib
import json
import math
import re

import orjson
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from .errors import InputError, Problem
from .metrics import normalize_term
from .models import GoldenItem, Thresholds
from .regression import Baseline

__all__ = [
    "PreparedItem",
    "GoldenSet",
    "GeneratedSet",
    "load_golden_set",
    "load_generated",
    "load_thresholds",
]

BOM = "\ufeff"
MAX_SCANNED = 10_000


@dataclass(slots=True)
class PreparedItem:
    """A golden item with its terms normalised and merged (rule 1)."""

    query_id: str
    query: str
    domain: str | None
    intent: str | None
    expected: dict[str, float]
    """Normalised term -> highest min_weight, first-seen order."""
    forbidden: frozenset[str]
    critical: bool


@dataclass(slots=True)
class GoldenSet:
    """A validated golden set and the hash of its parsed content."""

    path: str
    items: list[PreparedItem]
    content_hash: str


@dataclass(slots=True)
class GeneratedSet:
    """Generated expansions: query_id -> normalised term -> highest weight."""

    path: str
    expansions: dict[str, dict[str, float]]


class _Collector:
    """Gathers problems; stops parsing once there are more than enough to show."""

    def __init__(self, path: str):
        self.path = path
        self.problems: list[Problem] = []

    def add(self, line: int, field: str, message: str) -> None:
        self.problems.append(Problem(self.path, line, field, message))

    @property
    def full(self) -> bool:
        """Past this many problems, stop parsing: the count shown is then a lower bound."""
        return len(self.problems) >= MAX_SCANNED

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def _read_text(path: Path, label: str) -> str:
    """UTF-8 text with a leading BOM removed; undecodable bytes are an input error."""
    shown = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError([Problem(shown, 0, label, "file not found")]) from None
    except IsADirectoryError:
        raise InputError([Problem(shown, 0, label, "is a directory, expected a file")]) from None
    except OSError as exc:
        raise InputError([Problem(shown, 0, label, f"cannot read: {exc.strerror}")]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError([Problem(shown, line, "encoding",
                                  f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                                  "save the file as UTF-8")]) from None
    return text[1:] if text.startswith(BOM) else text


def jsonl_lines(text: str) -> list[str]:
    """JSONL lines: split on \\n only (U+2028, U+0085... are valid inside JSON strings)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def toml_error_line(exc: Exception) -> int:
    """tomllib on Python 3.11 puts the line only in its message: '... (at line 2, column 5)'."""
    found = re.search(r"at line (\d+)", str(exc))
    return int(found.group(1)) if found else 1


def _field_path(loc: tuple) -> str:
    """('expected_expansions', 1, 'min_weight') -> 'expected_expansions[1].min_weight'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "json"


def _pydantic_problems(exc: ValidationError, sink: _Collector, line: int) -> None:
    for err in exc.errors(include_url=False):
        kind = err["type"]
        if kind == "json_invalid":
            sink.add(line, "json", f"malformed JSON ({err['ctx'].get('error', err['msg'])})")
        elif kind == "missing":
            sink.add(line, _field_path(err["loc"]), "required field is missing")
        elif kind == "model_type" or (kind.endswith("_type") and not err["loc"]):
            sink.add(line, _field_path(err["loc"]), "expected a JSON object")
        else:
            got = json.dumps(err.get("input"), ensure_ascii=False, default=str)
            if len(got) > 60:
                got = got[:57] + "..."
            sink.add(line, _field_path(err["loc"]), f"{err['msg'].lower()} (got {got})")


def _canonical(query_id: str, query: str, context: dict, expected: list[tuple[str, float]],
               forbidden: list[str], critical: bool) -> bytes:
    """The canonical JSON of one parsed golden item (for the content hash)."""
    ctx = sorted((k, v) for k, v in context.items() if v is not None)
    return orjson.dumps([query_id, query, ctx, expected, forbidden, critical])


def _prepare(query_id: str, query: str, context: dict, expected_raw: list[tuple[str, float]],
             forbidden_raw: list[str], critical: bool, line: int, sink: _Collector,
             domain_context: str | None) -> PreparedItem | None:
    ok = True
    if not query.strip():
        sink.add(line, "query", "must not be blank")
        ok = False
    expected: dict[str, float] = {}
    for i, (raw, min_weight) in enumerate(expected_raw):
        term = normalize_term(raw)
        if not term:
            sink.add(line, f"expected_expansions[{i}].term", "is empty after normalisation")
            ok = False
        elif min_weight > expected.get(term, -1.0):
            expected[term] = min_weight
    forbidden: set[str] = set()
    for i, raw in enumerate(forbidden_raw):
        term = normalize_term(raw)
        if not term:
            sink.add(line, f"forbidden_terms[{i}]", "is empty after normalisation")
            ok = False
        elif term in expected:
            sink.add(line, f"forbidden_terms[{i}]",
                     f"'{term}' is both expected and forbidden; remove it from one list")
            ok = False
        forbidden.add(term)
    if not ok:
        return None
    domain = context.get("domain")
    if domain is None:
        domain = domain_context
    domain = normalize_term(domain) if domain is not None else None
    return PreparedItem(query_id, query, domain or None, context.get("intent"), expected,
                        frozenset(forbidden) if forbidden else _NO_TERMS, critical)


_NO_TERMS: frozenset[str] = frozenset()
_NUMBER = (int, float)


def _fast_fields(obj: object) -> tuple | None:
    """The fields of a well-formed golden line, or None to let pydantic explain.

    Accepts only what the GoldenItem model accepts too, so pydantic stays the validator
    of record and this path merely skips building models for the common case.
    """
    if type(obj) is not dict:
        return None
    qid, query, exp = obj.get("query_id"), obj.get("query"), obj.get("expected_expansions")
    if type(qid) is not str or not qid or type(query) is not str or not query or type(exp) is not list:
        return None
    expected = []
    for e in exp:
        if type(e) is not dict:
            return None
        term = e.get("term")
        weight = e.get("min_weight", 0.0)
        if type(term) is not str or not term or type(weight) not in _NUMBER or not 0.0 <= weight <= 1.0:
            return None
        expected.append((term, float(weight)))
    context = obj.get("context", _EMPTY)
    if type(context) is not dict:
        return None
    for key in ("domain", "intent"):
        value = context.get(key)
        if value is not None and type(value) is not str:
            return None
    forbidden = obj.get("forbidden_terms", ())
    if type(forbidden) not in (list, tuple) or any(type(t) is not str for t in forbidden):
        return None
    critical = obj.get("critical", False)
    if type(critical) is not bool:
        return None
    return qid, query, context, expected, list(forbidden), critical


_EMPTY: dict = {}


def _model_fields(item: GoldenItem) -> tuple:
    return (item.query_id, item.query, item.context.model_dump(exclude_none=True),
            [(e.term, e.min_weight) for e in item.expected_expansions],
            list(item.forbidden_terms), item.critical)


def load_golden_set(path: str | Path, domain_context: str | None = None) -> GoldenSet:
    """Parse a golden-set JSONL file (SPEC §1.1).

    `domain_context` (the CLI's `--domain`) fills `context.domain` for items without one.
    Raises InputError listing every problem found (up to a screenful).
    """
    path = Path(path)
    sink = _Collector(str(path))
    text = _read_text(path, "golden set")
    items: list[PreparedItem] = []
    first_line: dict[str, int] = {}
    digest = hashlib.sha256()
    loads = orjson.loads  # strict JSON (no NaN), and about twice as fast as json.loads
    for lineno, raw in enumerate(jsonl_lines(text), start=1):
        if not raw or raw.isspace():
            continue
        if sink.full:
            break
        try:
            fields = _fast_fields(loads(raw))
        except ValueError:
            fields = None
        if fields is None:
            try:
                fields = _model_fields(GoldenItem.model_validate_json(raw))
            except ValidationError as exc:
                _pydantic_problems(exc, sink, lineno)
                continue
        qid = fields[0]
        if qid in first_line:
            sink.add(lineno, "query_id", f"duplicate query_id '{qid}' (first on line {first_line[qid]})")
            continue
        first_line[qid] = lineno
        prepared = _prepare(*fields, lineno, sink, domain_context)
        if prepared is not None:
            items.append(prepared)
            digest.update(_canonical(*fields))
    if not sink.problems and not items:
        sink.add(1, "golden set", "no golden queries in the file; add one JSON object per line")
    sink.raise_if_any()
    return GoldenSet(str(path), items, digest.hexdigest())


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


def _line_of(text: str, needle: str) -> int:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else 1


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
    except ValueError:
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


def load_thresholds(path: str | Path | None) -> Thresholds:
    """Thresholds from a JSON or TOML object; defaults when path is None (SPEC §1.3)."""
    if path is None:
        return Thresholds()
    path = Path(path)
    sink = _Collector(str(path))
    text = _read_text(path, "thresholds")
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        else:
            data = json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        line = getattr(exc, "lineno", None) or toml_error_line(exc)
        sink.add(line, "json" if path.suffix.lower() != ".toml" else "toml", f"malformed file ({exc})")
        sink.raise_if_any()
    if not isinstance(data, dict):
        sink.add(1, "thresholds", "expected an object of threshold names to numbers")
        sink.raise_if_any()
    try:
        thresholds = Thresholds.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            key = str(err["loc"][0]) if err["loc"] else "thresholds"
            line = _line_of(text, f'"{key}"') if path.suffix.lower() != ".toml" else _line_of(text, key)
            if err["type"] == "extra_forbidden":
                known = ", ".join(Thresholds.model_fields)
                sink.add(line, key, f"unknown threshold (known: {known})")
            elif key == "ci_gate":
                sink.add(line, key, f"must be 0 or 1 (got {json.dumps(err.get('input'))})")
            else:
                sink.add(line, key, f"must be a number in [0, 1] (got {json.dumps(err.get('input'))})")
    sink.raise_if_any()
    return thresholds


def load_baseline_report(path: str | Path) -> Baseline:
    """A JSON report file as a baseline (SPEC §2 rule 8): its stored values, used as they are."""
    from .regression import BaselineRow

    path = Path(path)
    sink = _Collector(str(path))
    text = _read_text(path, "baseline report")
    try:
        report = json.loads(text)
    except ValueError as exc:
        sink.add(getattr(exc, "lineno", 1), "json", f"malformed JSON ({exc})")
        sink.raise_if_any()
    rows = report.get("per_query_results") if isinstance(report, dict) else None
    if not isinstance(rows, list):
        sink.add(1, "per_query_results", "missing: is this an evalcore JSON report?")
        sink.raise_if_any()
    out: dict[str, BaselineRow] = {}
    for i, row in enumerate(rows):
        try:
            qid = row["query_id"]
            f1 = row["f1"]
            passed = row["passed"]
            if type(qid) is not str or type(passed) is not bool or type(f1) not in (int, float):
                raise TypeError
            if any(type(row.get(k, 0.0)) not in (int, float) for k in ("precision", "recall")):
                raise TypeError
        except (KeyError, TypeError):
            sink.add(_line_of(text, '"per_query_results"'), f"per_query_results[{i}]",
                     "needs query_id (string), f1 (number), passed (boolean) and numeric precision/recall")
            if sink.full:
                break
            continue
        out[qid] = BaselineRow(float(f1), passed, float(row.get("precision", 0.0)),
                               float(row.get("recall", 0.0)), bool(row.get("error")))
    sink.raise_if_any()
    run = report.get("run") if isinstance(report.get("run"), dict) else {}
    return Baseline(str(report.get("evaluation_id") or path), f"report {path}", out,
                    run.get("golden_hash"), run.get("content_hash"))
