"""The retrieval inputs (issue 34): a corpus, relevance judgments (qrels) and TREC run files.

Each file is read as every other input is (UTF-8, a leading BOM dropped, lines end at \\n
with a \\r before it dropped, blank lines skipped but counted); every problem is collected
as `FILE:LINE: FIELD: message` into one InputError (exit 2), and nothing is returned
half-read. An empty file is one problem at line 0.

**Corpus**: JSONL, one document per line: `id`, a non-empty string unique in the file;
`title`, a string (optional, default ""); `text`, a string. Other keys are ignored. A
document whose title and text are both blank is a problem: nothing in it can be found, so
judging it relevant would lower recall silently.

    {"id": "d1", "title": "Heart attack", "text": "Myocardial infarction: symptoms and care"}
    {"text": "A racing heart, and no infarction", "id": "d 2", "source": "ignored"}

**Qrels**: TREC, `query_id iteration doc_id grade` (exactly four fields separated by white
space; the iteration is ignored, as trec_eval ignores it), or JSONL of `query_id`,
`doc_id` and `grade`; a file whose first non-blank character is `{` is JSONL. A grade is
an integer (1.0 and true are refused) in [-2**31, 2**31); a grade <= 0 counts as not
relevant. A (query, document) pair judged twice is a problem, even with the same grade.
These two files hold the same judgments:

    q1 0 d1 2
    q1 0 d%202 0

    {"query_id": "q1", "doc_id": "d1", "grade": 2}
    {"query_id": "q1", "doc_id": "d 2", "grade": 0}

**Run files**: TREC, `query_id Q0 doc_id rank score tag`, six fields; Q0 and the tag are
ignored on reading, the rank must be an integer but is ignored too: as trec_eval does,
read_run orders each query's documents by score, descending, and equal scores by doc id,
descending (by code point, as strcmp orders UTF-8), then moves each tied score one float
step below the one before it, so the ranking keeps that order. write_run writes scores strictly decreasing (outcome.Ranking), with repr, so
they read back exactly and the file's order is the ranking's order.

**Ids in TREC files** (qrels and runs) are percent-encoded, since fields are separated by
white space: `%` is written `%25` and every white-space character (each one for which
str.isspace is true: space, tab, no-break space, U+3000 ...) as the escapes of its UTF-8
bytes (space `%20`, U+00A0 `%C2%A0`). Nothing else changes, so an id holding neither is
written as it is and an existing qrels file keeps working. Reading undoes exactly those
escapes (hex in either case); any other `%` is kept. JSON files hold ids unencoded.

    >>> encode_id("d 7 (50%)"), decode_id("d%207%20(50%25)"), decode_id("100%pure")
    ('d%207%20(50%25)', 'd 7 (50%)', '100%pure')

A query id is held to the golden set's rule (SPEC §1.1, io.query_id_problem), so that it
can match one; a doc id must be non-empty and hold no NUL (trec_eval's C code would end
the id there).

**Hashes** (SHA-256, hex) name content, not bytes. A corpus's hash is over one line per
document in file order, the compact JSON array `[id, title, text]` (as
`json.dumps(..., ensure_ascii=False, separators=(",", ":"))` writes it) and a newline: key
order, spacing, escapes, a BOM or CRLF line ends do not change it. A qrels hash is over the
lines `[query_id, doc_id, grade]` sorted by query and doc id: TREC or JSONL, in any
order, the same judgments hash alike. write_run returns the hash of the bytes it writes.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import BinaryIO

import orjson

from ..io.query_ids import query_id_problem
from ..io.reading import ProblemCollector, RepeatedKey, jsonl_lines, loads_line, read_text
from .outcome import Ranking, strictly_decreasing

__all__ = ["Corpus", "Qrels", "load_corpus", "load_qrels", "read_run", "write_run", "run_file_hash",
           "encode_id", "decode_id"]

_WHITESPACE = [chr(c) for c in range(0x3001) if chr(c).isspace()]  # U+3000 is the last (a test checks)
_ESCAPES = {ch: "".join(f"%{b:02X}" for b in ch.encode("utf-8")) for ch in ["%", *_WHITESPACE]}
_TO_ESCAPE = re.compile("[" + re.escape("".join(_ESCAPES)) + "]")
_ESCAPED = re.compile("|".join(sorted(_ESCAPES.values(), key=len, reverse=True)), re.IGNORECASE)
_UNESCAPE = {escape: ch for ch, escape in _ESCAPES.items()}
_SURROGATE = re.compile("[\ud800-\udfff]")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_GRADES = range(-2**31, 2**31)


def encode_id(value: str) -> str:
    """`value` as a TREC file holds it: `%` and white space percent-encoded (module docstring)."""
    if not _TO_ESCAPE.search(value):
        return value
    return _TO_ESCAPE.sub(lambda m: _ESCAPES[m.group()], value)


def decode_id(field: str) -> str:
    """The id a TREC file's field holds: encode_id undone; any other `%` is kept."""
    if "%" not in field:
        return field
    return _ESCAPED.sub(lambda m: _UNESCAPE[m.group().upper()], field)


@dataclass(frozen=True, slots=True)
class Corpus:
    """The documents of a corpus file, in file order (three aligned lists)."""

    path: str
    ids: list[str]
    titles: list[str]
    texts: list[str]
    hash: str
    """SHA-256 of the documents' canonical form (module docstring), not of the file's bytes."""


@dataclass(frozen=True, slots=True)
class Qrels:
    """Relevance judgments: query id -> doc id -> grade, in file order."""

    path: str
    judgments: dict[str, dict[str, int]]
    hash: str
    """SHA-256 of the judgments sorted (module docstring): the same for TREC and JSONL."""


def _shown(value: object) -> str:
    """A value in a problem line: JSON, escaped (one line, whatever it holds), cut at 60 characters."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _id_problem(field: str, value: str) -> str | None:
    if not value:
        return "must not be empty"
    if field == "query_id":
        return query_id_problem(value)
    if "\x00" in value:
        return f"{_shown(value)} holds U+0000 (NUL), which trec_eval reads as the end of the id"
    if _SURROGATE.search(value):  # only a caller's string can: no UTF-8 file holds one
        return f"{_shown(value)} holds a lone surrogate, which UTF-8 cannot write"
    return None


def _json_objects(text: str, sink: ProblemCollector) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each JSONL line that is a JSON object; problems for the rest."""
    lines = jsonl_lines(text)
    del text  # the caller passes the only reference: a corpus's text is freed, its lines kept
    for lineno, raw in enumerate(lines, start=1):
        if sink.full:
            return
        if not raw or raw.isspace():
            continue
        try:
            obj = loads_line(raw)
        except RepeatedKey as exc:
            exc.add_to(sink, lineno)
            continue
        except ValueError as exc:
            sink.add(lineno, "json", f"malformed JSON ({exc})")
            continue
        if type(obj) is not dict:
            sink.add(lineno, "json", f"expected a JSON object (got {_shown(obj)})")
            continue
        yield lineno, obj


_MISSING = object()


def _string(obj: dict, key: str, lineno: int, sink: ProblemCollector, default: str | None = None) -> str | None:
    """obj[key] when it is a string (and a valid id, for the id keys); else a problem and None."""
    value = obj.get(key, _MISSING)
    if value is _MISSING and default is not None:
        return default
    if value is _MISSING:
        sink.add(lineno, key, "required field is missing")
    elif type(value) is not str:
        sink.add(lineno, key, f"must be a string (got {_shown(value)})")
    elif key in ("id", "query_id", "doc_id") and (problem := _id_problem(key, value)):
        sink.add(lineno, key, problem)
    else:
        return value
    return None


def load_corpus(path: str | Path) -> Corpus:
    """A corpus JSONL file (module docstring); raises InputError naming every problem."""
    sink = ProblemCollector(str(path))
    ids: list[str] = []
    titles: list[str] = []
    texts: list[str] = []
    first_line: dict[str, int] = {}
    digest = hashlib.sha256()
    for lineno, obj in _json_objects(read_text(Path(path), "corpus"), sink):
        doc_id = _string(obj, "id", lineno, sink)
        title = _string(obj, "title", lineno, sink, default="")
        text = _string(obj, "text", lineno, sink)
        if doc_id is not None and doc_id in first_line:
            sink.add(lineno, "id", f"duplicate id {_shown(doc_id)} (first on line {first_line[doc_id]})")
            continue
        if doc_id is None or title is None or text is None:
            continue
        if not (title.strip() or text.strip()):
            sink.add(lineno, "text", "document has no title and no text: nothing in it can be found")
            continue
        first_line[doc_id] = lineno
        ids.append(doc_id)
        titles.append(title)
        texts.append(text)
        digest.update(orjson.dumps([doc_id, title, text]) + b"\n")
    if not sink.problems and not ids:
        sink.add(0, "corpus", 'no documents in the file; write one JSON object per line: {"id", "title", "text"}')
    sink.raise_if_any()
    return Corpus(str(path), ids, titles, texts, digest.hexdigest())


def _trec_lines(text: str, layout: str, sink: ProblemCollector) -> Iterator[tuple[int, list[str]]]:
    """(line number, fields) for each non-blank line with as many fields as `layout` names."""
    width = len(layout.split())
    for lineno, raw in enumerate(jsonl_lines(text), start=1):
        if sink.full:
            return
        fields = raw.split()
        if not fields:
            continue
        if len(fields) != width:
            sink.add(lineno, "fields",
                     f"expected {width} fields separated by white space ({layout}), found {len(fields)}")
            continue
        yield lineno, fields


def _trec_id(field_text: str, field: str, lineno: int, sink: ProblemCollector) -> str | None:
    value = decode_id(field_text)
    if problem := _id_problem(field, value):
        sink.add(lineno, field, problem)
        return None
    return value


def _grade(value: object, lineno: int, sink: ProblemCollector) -> int | None:
    if type(value) is not int or value not in _GRADES:
        sink.add(lineno, "grade", f"must be an integer in [-2147483648, 2147483647] (got {_shown(value)})")
        return None
    return value


def _qrels_rows(text: str, sink: ProblemCollector) -> Iterator[tuple[int, str | None, str | None, int | None]]:
    """(line number, query id, doc id, grade) per judgment line, None where a value is refused."""
    if text.lstrip()[:1] == "{":
        for lineno, obj in _json_objects(text, sink):
            qid, doc = _string(obj, "query_id", lineno, sink), _string(obj, "doc_id", lineno, sink)
            if "grade" not in obj:
                sink.add(lineno, "grade", "required field is missing")
            yield lineno, qid, doc, _grade(obj["grade"], lineno, sink) if "grade" in obj else None
    else:
        for lineno, (qid, _iteration, doc, grade) in _trec_lines(text, "query_id iteration doc_id grade", sink):
            yield (lineno, _trec_id(qid, "query_id", lineno, sink), _trec_id(doc, "doc_id", lineno, sink),
                   _grade(int(grade) if _INTEGER.fullmatch(grade) else grade, lineno, sink))


def load_qrels(path: str | Path) -> Qrels:
    """A qrels file, TREC or JSONL (module docstring); raises InputError naming every problem."""
    sink = ProblemCollector(str(path))
    judgments: dict[str, dict[str, int]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for lineno, qid, doc, grade in _qrels_rows(read_text(Path(path), "qrels"), sink):
        if qid is None or doc is None or grade is None:
            continue
        if (qid, doc) in first_line:
            sink.add(lineno, "doc_id", f"{_shown(doc)} is judged twice for query {_shown(qid)} "
                                       f"(first on line {first_line[qid, doc]})")
            continue
        first_line[qid, doc] = lineno
        judgments.setdefault(qid, {})[doc] = grade
    if not sink.problems and not judgments:
        sink.add(0, "qrels", "no judgments in the file; write `query_id 0 doc_id grade` lines (TREC) or JSONL")
    sink.raise_if_any()
    rows = sorted((qid, doc, grade) for qid, docs in judgments.items() for doc, grade in docs.items())
    return Qrels(str(path), judgments, hashlib.sha256(b"".join(orjson.dumps(row) + b"\n" for row in rows)).hexdigest())


def _score(field_text: str, lineno: int, sink: ProblemCollector) -> float | None:
    value = float(field_text) if _NUMBER.fullmatch(field_text) else math.nan
    if not math.isfinite(value):
        sink.add(lineno, "score", f"must be a finite number (got {field_text!r})")
        return None
    return value


def read_run(path: str | Path) -> dict[str, Ranking]:
    """A TREC run file: query id -> its ranking, queries in order of first appearance.

    Each ranking is in trec_eval's order (score descending, then doc id descending), and
    its scores are made strictly decreasing (outcome.strictly_decreasing), which moves a
    tied score one float step and keeps that order. Raises InputError naming every problem."""
    sink = ProblemCollector(str(path))
    found: dict[str, dict[str, tuple[float, int]]] = {}
    text = read_text(Path(path), "run file")
    for lineno, (qid, _q0, doc, rank, score, _tag) in _trec_lines(text, "query_id Q0 doc_id rank score tag", sink):
        qid, doc = _trec_id(qid, "query_id", lineno, sink), _trec_id(doc, "doc_id", lineno, sink)
        value = _score(score, lineno, sink)
        if not _INTEGER.fullmatch(rank):
            sink.add(lineno, "rank", f"must be an integer (got {rank!r})")
            continue
        if qid is None or doc is None or value is None:
            continue
        docs = found.setdefault(qid, {})
        if doc in docs:
            sink.add(lineno, "doc_id", f"{_shown(doc)} is ranked twice for query {_shown(qid)} "
                                       f"(first on line {docs[doc][1]})")
            continue
        docs[doc] = (value, lineno)
    if not sink.problems and not found:
        sink.add(0, "run file", "no results in the file; write `query_id Q0 doc_id rank score tag` lines")
    sink.raise_if_any()
    rankings = {}
    for qid, docs in found.items():
        ordered = sorted(((score, doc) for doc, (score, _line) in docs.items()), reverse=True)
        rankings[qid] = Ranking([doc for _score, doc in ordered], strictly_decreasing([s for s, _doc in ordered]))
    return rankings


def _ranking_problem(ranking: Ranking) -> str | None:
    """Why read_run would not read `ranking` back as it is, else None."""
    ids, scores = ranking.ids, ranking.scores
    if len(ids) != len(scores):
        return f"{len(ids)} ids but {len(scores)} scores"
    if len(set(ids)) != len(ids):
        return "a doc id is ranked twice"
    joined = "".join(ids)
    if "\x00" in joined or "" in ids or not joined.isascii() and _SURROGATE.search(joined):
        return "doc id " + next(p for doc in ids if (p := _id_problem("doc_id", doc)))
    if not all(map(math.isfinite, scores)):
        return "a score is not finite"
    if any(not later < earlier for earlier, later in zip(scores, scores[1:])):
        return "scores are not strictly decreasing (outcome.strictly_decreasing makes them so)"
    return None


def write_run(target: str | os.PathLike | BinaryIO | None, run: dict[str, Ranking], tag: str) -> str:
    """Write `run` as a TREC run file and return the SHA-256 (hex) of the bytes written.

    `target` is a path (written whole, through a temporary file renamed over it), a binary
    stream (written to, left open) or None (nothing written: the hash alone). Queries in the
    dict's order, one line per document, ranks from 1, ids and the tag encoded (encode_id);
    a query with an empty ranking has no line. Raises ValueError, before writing anything,
    for a run read_run would not read back as it is: a ranking whose scores are not finite
    and strictly decreasing, whose ids and scores differ in number, that repeats a doc id,
    or an id read_run refuses.

    >>> import io
    >>> sink = io.BytesIO()
    >>> digest = write_run(sink, {"q 1": Ranking(["d1", "d 2"], [2.5, 0.1])}, "bm25")
    >>> print(sink.getvalue().decode(), end="")
    q%201 Q0 d1 1 2.5 bm25
    q%201 Q0 d%202 2 0.1 bm25
    >>> digest == hashlib.sha256(sink.getvalue()).hexdigest()
    True
    """
    if not tag:
        raise ValueError("a run file's tag must not be empty")
    for qid, ranking in run.items():
        if problem := _id_problem("query_id", qid) or _ranking_problem(ranking):
            raise ValueError(f"run file, query {_shown(qid)}: {problem}")
    if target is None or hasattr(target, "write"):
        return _write_stream(target, run, tag)
    target = Path(target)
    partial = target.with_name(f".{target.name}.{secrets.token_hex(6)}.partial")
    try:
        with partial.open("xb") as handle:
            digest = _write_stream(handle, run, tag)
        os.replace(partial, target)  # a reader sees the whole file or none
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return digest


def _write_stream(stream: BinaryIO | None, run: dict[str, Ranking], tag: str) -> str:
    digest = hashlib.sha256()
    suffix = f" {encode_id(tag)}\n"
    for qid, ranking in run.items():
        prefix = f"{encode_id(qid)} Q0 "
        ids = ranking.ids
        if _TO_ESCAPE.search("".join(ids)):  # the rare case: one search per query, not per id
            ids = [encode_id(doc) for doc in ids]
        data = "".join([f"{prefix}{doc} {rank} {score!r}{suffix}"
                        for rank, doc, score in zip(count(1), ids, map(float, ranking.scores))]).encode("utf-8")
        digest.update(data)
        if stream is not None:
            stream.write(data)
    return digest.hexdigest()


def run_file_hash(run: dict[str, Ranking], tag: str) -> str:
    """The SHA-256 (hex) of the run file write_run would write, computed without one."""
    return write_run(None, run, tag)
