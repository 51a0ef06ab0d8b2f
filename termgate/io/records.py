"""Thresholds (SPEC §1.3) and baseline report files (SPEC §2 rule 8)."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

from pydantic import ValidationError

from ..models import Thresholds
from ..models import Baseline
from .query_ids import query_id_problem
from .reading import ProblemCollector, RepeatedKey, line_of, loads_strict, read_text, toml_error_line


def load_thresholds(path: str | Path | None) -> Thresholds:
    """Thresholds from a JSON or TOML object; defaults when path is None (SPEC §1.3)."""
    if path is None:
        return Thresholds()
    path = Path(path)
    sink = ProblemCollector(str(path))
    text = read_text(path, "thresholds")
    try:
        if path.suffix.lower() == ".toml":
            data = tomllib.loads(text)
        else:
            data = loads_strict(text)  # a repeated key would loosen the gate silently
    except RepeatedKey as exc:
        exc.add_to(sink, exc.line_in(text))
        sink.raise_if_any()
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        line = getattr(exc, "lineno", None) or toml_error_line(exc)
        sink.add(line, "json" if path.suffix.lower() != ".toml" else "toml", f"malformed file ({exc})")
        sink.raise_if_any()
    if not isinstance(data, dict):
        sink.add(1, "thresholds", "expected an object of threshold names to values")
        sink.raise_if_any()
    try:
        thresholds = Thresholds.model_validate(data)
    except ValidationError as exc:
        for err in exc.errors(include_url=False):
            key = str(err["loc"][0]) if err["loc"] else "retrieval_depth" if "retrieval_depth" in err["msg"] \
                else "thresholds"
            line = line_of(text, f'"{key}"') if path.suffix.lower() != ".toml" else line_of(text, key)
            if err["type"] == "extra_forbidden":
                known = ", ".join(Thresholds.model_fields)
                sink.add(line, key, f"unknown threshold (known: {known})")
            elif key == "ci_gate":
                sink.add(line, key, f"must be 0 or 1 (got {json.dumps(err.get('input'))})")
            elif key == "forbidden_fails":
                sink.add(line, key, f"must be \"critical\", \"all\" or \"none\" (got {json.dumps(err.get('input'))})")
            elif key == "retrieval_regressed":
                sink.add(line, key, f"must be \"review\" or \"fail\" (got {json.dumps(err.get('input'))})")
            elif key in ("retrieval_k", "retrieval_depth") and err["loc"]:
                top = Thresholds.model_fields[key].metadata[-1].le
                sink.add(line, key, f"must be a whole number in [1, {top}] (got {json.dumps(err.get('input'))})")
            elif not err["loc"]:
                sink.add(line, key, err["msg"].removeprefix("Value error, "))
            else:
                sink.add(line, key, f"must be a number in [0, 1] (got {json.dumps(err.get('input'))})")
    sink.raise_if_any()
    return thresholds


def _repeat_line(text: str, qid: str) -> int:
    """The line of the second `"query_id": qid` in a report's text (pretty-printed or not)."""
    found = [m.start() for m in re.finditer('"query_id"\\s*:\\s*' + re.escape(json.dumps(qid, ensure_ascii=False)), text)]
    return text.count("\n", 0, found[1]) + 1 if len(found) > 1 else line_of(text, '"per_query_results"')


def _id_line(text: str, qid: str) -> int:
    """The line of the first `"query_id": qid` in a report's text, escaped as json.dumps writes it."""
    for spelling in (json.dumps(qid), json.dumps(qid, ensure_ascii=False)):
        found = re.search('"query_id"\\s*:\\s*' + re.escape(spelling), text)
        if found:
            return text.count("\n", 0, found.start()) + 1
    return line_of(text, '"per_query_results"')


def load_baseline_report(path: str | Path) -> Baseline:
    """A JSON report file as a baseline (SPEC §2 rule 8): its stored values, used as they are."""
    from ..models import BaselineRow

    path = Path(path)
    sink = ProblemCollector(str(path))
    text = read_text(path, "baseline report")
    try:
        report = loads_strict(text)
    except RepeatedKey as exc:
        exc.add_to(sink, exc.line_in(text))
        sink.raise_if_any()
    except ValueError as exc:
        sink.add(getattr(exc, "lineno", 1), "json", f"malformed JSON ({exc})")
        sink.raise_if_any()
    rows = report.get("per_query_results") if isinstance(report, dict) else None
    if not isinstance(rows, list):
        sink.add(1, "per_query_results", "missing: is this a termgate JSON report?")
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
            if not all(0 <= row.get(k, 0.0) <= 1 for k in ("f1", "precision", "recall")):
                raise TypeError
        except (KeyError, TypeError):
            sink.add(line_of(text, '"per_query_results"'), f"per_query_results[{i}]",
                     "needs query_id (string), f1 (number), passed (boolean) and precision/recall, numbers in [0, 1]")
            if sink.full:
                break
            continue
        if problem := query_id_problem(qid):  # one rule for every input carrying a query_id (SPEC §1.1)
            sink.add(_id_line(text, qid), f"per_query_results[{i}].query_id", problem)
            continue
        if qid in out:  # two rows of one query: neither may silently win (SPEC §5)
            sink.add(_repeat_line(text, qid), f"per_query_results[{i}].query_id", f"duplicate query_id {qid!r}")
            continue
        entry = row.get("golden_entry_hash")
        out[qid] = BaselineRow(float(f1), passed, float(row.get("precision", 0.0)),
                               float(row.get("recall", 0.0)), bool(row.get("error")),
                               entry if isinstance(entry, str) else None, _terms(row))
    sink.raise_if_any()
    run = report.get("run") if isinstance(report.get("run"), dict) else {}
    name = run.get("golden_name")
    thresholds = report.get("thresholds")
    if isinstance(thresholds, dict) and thresholds.get("forbidden_fails", "none") not in ("critical", "all", "none"):
        sink.add(line_of(text, '"forbidden_fails"'), "thresholds.forbidden_fails",
                 f"must be \"critical\", \"all\" or \"none\" (got {json.dumps(thresholds['forbidden_fails'])})")
        sink.raise_if_any()
    return Baseline(str(report.get("evaluation_id") or path), f"report {path}", out,
                    run.get("golden_hash"), run.get("content_hash"), name if isinstance(name, str) else None,
                    thresholds if isinstance(thresholds, dict) else None)


def _terms(row: dict) -> tuple[tuple[str, float], ...] | None:
    """A report row's generated terms with their weights (1.0 where the report has none);
    None when the row's lists are missing or malformed: the retrieval effect then has no
    baseline variant for that query."""
    terms, weights = row.get("generated_terms"), row.get("weights")
    if not isinstance(terms, list) or not all(isinstance(t, str) for t in terms) or row.get("error"):
        return None
    if not isinstance(weights, list) or len(weights) != len(terms) \
            or not all(type(w) in (int, float) and 0 <= w <= 1 for w in weights):
        weights = [1.0] * len(terms)
    return tuple((t, float(w)) for t, w in zip(terms, weights))
