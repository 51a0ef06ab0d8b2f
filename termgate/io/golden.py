"""The golden set (SPEC §1.1): parsed and validated, every problem named by line and field."""

from __future__ import annotations

import io
import os

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath

import orjson
import pyarrow as pa
from pydantic import ValidationError

from ..errors import UsageError
from ..identity import canonical_domain
from ..scoring.metrics import normalize_term
from ..models import GoldenItem
from .query_ids import query_id_problem
from .reading import BOM, ProblemCollector, RepeatedKey, jsonl_lines, loads_line, pydantic_problems, read_text


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


GOLDEN_SCHEMA = pa.schema([
    ("query_id", pa.string()), ("query", pa.string()), ("domain_raw", pa.string()), ("intent", pa.string()),
    ("critical", pa.bool_()),
    ("expected", pa.list_(pa.struct([("term", pa.string()), ("min_weight", pa.float64())]))),
    ("forbidden", pa.list_(pa.string()))])
"""A golden set as the scorer reads it: one row per item, every value as parsed."""


@dataclass(slots=True)
class GoldenSet:
    """A validated golden set: its items prepared (normalised), and as parsed."""

    path: str
    items: list[PreparedItem]
    parsed: list[tuple]
    """Per item (query_id, query, context, [(term, min_weight)], [forbidden], critical) as parsed."""

    def query_ids(self) -> set[str]:
        return {item.query_id for item in self.items}

    def table(self) -> pa.Table:
        """The items as parsed, in file order (GOLDEN_SCHEMA): what the scorer scores."""
        rows = self.parsed
        return pa.table({
            "query_id": [r[0] for r in rows], "query": [r[1] for r in rows],
            "domain_raw": [r[2].get("domain") for r in rows], "intent": [r[2].get("intent") for r in rows],
            "critical": [r[5] for r in rows],
            "expected": [[{"term": t, "min_weight": w} for t, w in r[3]] for r in rows],
            "forbidden": [r[4] for r in rows]}, schema=GOLDEN_SCHEMA)


def _prepare(query_id: str, query: str, context: dict, expected_raw: list[tuple[str, float]],
             forbidden_raw: list[str], critical: bool, line: int, sink: ProblemCollector,
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
    domain = context.get("domain")
    if domain is None:
        domain = domain_context
    try:
        domain = canonical_domain(domain, "domain") if domain is not None else None
    except UsageError as exc:  # a zero-width space or soft hyphen: "medical" that is not medical
        sink.add(line, "context.domain", str(exc).removeprefix("domain "))
        ok = False
    if not ok:
        return None
    return PreparedItem(query_id, query, domain or None, context.get("intent"), expected,
                        frozenset(forbidden) if forbidden else _NO_TERMS, critical)


def _refused_domain(domain: str) -> bool:
    try:
        canonical_domain(domain)
    except UsageError:
        return True
    return False


_NO_TERMS: frozenset[str] = frozenset()
_NUMBER = (int, float)


def plain_golden_fields(obj: object) -> tuple | None:
    """The fields of a well-formed golden line, or None to let pydantic explain.

    Accepts only what the GoldenItem model accepts too, so pydantic stays the validator
    of record and this path merely skips building models for the common case. The scorer
    reads a file directly only when this accepts every line.
    """
    if type(obj) is not dict:
        return None
    qid, query, exp = obj.get("query_id"), obj.get("query"), obj.get("expected_expansions")
    if type(qid) is not str or not qid or type(query) is not str or not query or type(exp) is not list:
        return None
    if query_id_problem(qid):
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
    domain = context.get("domain")
    if domain is not None and not (domain.isascii() and domain.isprintable()) and _refused_domain(domain):
        return None  # the validator names the character
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
    sink = ProblemCollector(str(path))
    text = read_text(path, "golden set")
    items: list[PreparedItem] = []
    first_line: dict[str, int] = {}
    parsed: list[tuple] = []
    for lineno, raw in enumerate(jsonl_lines(text), start=1):
        if not raw or raw.isspace():
            continue
        if sink.full:
            break
        try:
            fields = plain_golden_fields(loads_line(raw))
        except RepeatedKey as exc:
            exc.add_to(sink, lineno)
            continue
        except ValueError:  # malformed: pydantic names the problem
            fields = None
        if fields is None:
            try:
                fields = _model_fields(GoldenItem.model_validate_json(raw))
            except ValidationError as exc:
                pydantic_problems(exc, sink, lineno)
                continue
        qid = fields[0]
        if problem := query_id_problem(qid):
            sink.add(lineno, "query_id", problem)
            continue
        if qid in first_line:
            sink.add(lineno, "query_id", f"duplicate query_id '{qid}' (first on line {first_line[qid]})")
            continue
        first_line[qid] = lineno
        prepared = _prepare(*fields, lineno, sink, domain_context)
        if prepared is not None:
            items.append(prepared)
            parsed.append(fields)
    if not sink.problems and not items:
        sink.add(1, "golden set", "no golden queries in the file; add one JSON object per line")
    sink.raise_if_any()
    return GoldenSet(str(path), items, parsed)




def golden_set_name(path: str | Path) -> str:
    """A golden path as given, tidied (`./a//b/../g.jsonl` is `a/g.jsonl`), with forward
    slashes: the default name outside any repository and working folder, and the name of a
    run stored before names were kept (SPEC §1.1)."""
    return PurePath(os.path.normpath(str(path))).as_posix()


def default_golden_name(path: str | Path, cwd: str | Path | None = None) -> str:
    """SPEC §1.1's default golden-set name, the same wherever the file is checked out and
    whatever the working folder: its path from the root of the git repository holding it (the
    nearest folder above it with a `.git` folder or file; no git needed), else from the
    working folder `cwd` when it lies inside it, else the path as given, tidied. Forward
    slashes on every platform."""
    here = Path(os.getcwd() if cwd is None else cwd)
    full = Path(os.path.normpath(here / path))  # lexical: a symlinked folder keeps the name it is reached by
    for folder in full.parents:
        if (folder / ".git").exists():
            return full.relative_to(folder).as_posix()
    inside = os.path.relpath(full, here) if full.drive == here.drive else os.pardir
    if inside != os.pardir and not inside.startswith(os.pardir + os.sep):
        return PurePath(inside).as_posix()
    return golden_set_name(path)


def golden_line_numbers(source: str | Path | None, query_ids: Iterable[str] | None, *,
                        text: str | None = None) -> dict[str, int]:
    """query_id -> the line of its entry in a golden file (numbered as the loader numbers
    them: lines end at \\n), for the ids asked (None: every id in the file); an id not found
    is left out. Reads the file at `source`, or `text` when given (the file as stored with
    a run), and stops once every id asked is found."""
    wanted = None if query_ids is None else set(query_ids)
    found: dict[str, int] = {}
    if wanted is not None and not wanted:
        return found
    if text is not None:
        return _line_numbers(io.BytesIO(text.encode("utf-8")), wanted, found)  # lines end at \n only
    with Path(source).open("rb") as handle:
        return _line_numbers(handle, wanted, found)


def _line_numbers(lines: Iterable[bytes], wanted: set[str] | None, found: dict[str, int]) -> dict[str, int]:
    for lineno, raw in enumerate(lines, start=1):
        if lineno == 1 and raw.startswith(BOM.encode("utf-8")):
            raw = raw[3:]
        if not raw.strip():
            continue
        try:
            qid = orjson.loads(raw).get("query_id")
        except (orjson.JSONDecodeError, AttributeError):
            continue
        if isinstance(qid, str) and (wanted is None or qid in wanted) and qid not in found:
            found[qid] = lineno
            if wanted is not None and len(found) == len(wanted):
                break
    return found
