"""The same findings where a pipeline points at lines: GitHub workflow-command annotations
(`::error file=…,line=…::…`) and GitLab's Code Quality report.

A value from data can never issue a workflow command: GitHub's own encoding (`%` → `%25`,
CR → `%0D`, LF → `%0A`; in properties also `:` → `%3A` and `,` → `%2C`) keeps every
annotation on one line, the other line breaks (VT, FF, NEL, U+2028, U+2029) are encoded
as LF, and the remaining control characters and BiDi overrides are removed. So a term
holding `\\n::set-output` or `::add-mask::` stays text inside its own annotation.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

from ..scoring.regression import NEWLY_FAILING, regression_label
from ..text import json_escaped, strip_controls
from .findings import DriftFinding, FlaggedQuery, Findings

__all__ = ["workflow_data", "workflow_property", "annotation", "github_annotations", "codequality_report",
           "repository_path", "ANNOTATIONS_PER_KIND"]

ANNOTATIONS_PER_KIND = 10
"""GitHub shows at most 10 error and 10 warning annotations per step."""

_LINE_BREAKS = re.compile("[\x0b\x0c\x85\u2028\u2029]")


def workflow_data(text: object) -> str:
    """A value as the message of a workflow command (GitHub's escapeData)."""
    text = _LINE_BREAKS.sub("\n", str(text))
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return strip_controls(text)


def workflow_property(text: object) -> str:
    """A value as a workflow command's property (GitHub's escapeProperty)."""
    return workflow_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(kind: str, message: str, file: str | None = None, line: int | None = None,
               title: str | None = None) -> str:
    """One workflow command line: `::error file=F,line=N,title=T::message`."""
    props = [f"{key}={workflow_property(value)}" for key, value in (("file", file), ("line", line), ("title", title))
             if value is not None]
    return f"::{kind}{' ' + ','.join(props) if props else ''}::{workflow_data(message)}"


def repository_path(path: str, root: str | None) -> str:
    """The golden file's path relative to the checkout (`$GITHUB_WORKSPACE`,
    `$CI_PROJECT_DIR`) when it lies inside; otherwise as given."""
    if not root:
        return Path(path).as_posix()
    absolute = os.path.abspath(path)
    base = os.path.abspath(root)
    if os.path.commonpath([absolute, base]) != base:
        return Path(path).as_posix()
    return Path(os.path.relpath(absolute, base)).as_posix()


def _terms(terms: tuple[str, ...], shown: int = 8) -> str:
    return ", ".join(terms[:shown]) + (f" (+{len(terms) - shown} more)" if len(terms) > shown else "")


def _flag_message(q: FlaggedQuery, baseline_id: str | None) -> str:
    parts = []
    if q.regressed:
        label = regression_label("regressed", q.f1, q.baseline_f1)
        why = " (passed there, fails now)" if label == NEWLY_FAILING else ""
        parts.append(f"{label} against baseline {baseline_id}{why}: F1 {q.baseline_f1:.3f} → {q.f1:.3f}"
                     if q.baseline_f1 is not None else f"{label}: F1 {q.f1:.3f}")
    if q.critical_failed:
        parts.append(f"critical query failed (F1 {q.f1:.3f})")
    if q.lost_correct:
        parts.append(f"{'lost correct' if q.versus_baseline else 'missing expected'}: {_terms(q.lost_correct)}")
    if q.new_wrong:
        parts.append(f"{'new wrong' if q.versus_baseline else 'wrong'}: {_terms(q.new_wrong)}")
    if q.reasons:
        parts.append("; ".join(q.reasons))
    return f"{q.query_id} ({q.query!r}): " + "; ".join(parts)


def _flag_title(q: FlaggedQuery) -> str:
    what = regression_label("regressed", q.f1, q.baseline_f1) if q.regressed else "failed critical"
    return f"termgate: {what} query {q.query_id}"


def _drift_message(d: DriftFinding) -> str:
    return f"drift term {d.term!r} in {d.query_id} ({d.query!r}): {d.reason}"


def github_annotations(f: Findings, path: str, limit: int = ANNOTATIONS_PER_KIND) -> list[str]:
    """`::error` per regressed or failed critical query and `::warning` per drift term, at
    the query's line of the golden file, at most `limit` of each kind, then one `::notice`
    per kind counting the rest."""
    out = [annotation("error", _flag_message(q, f.baseline_id), path, f.lines.get(q.query_id), _flag_title(q))
           for q in f.flagged[:limit]]
    if len(f.flagged) > limit:
        rest = len(f.flagged) - limit
        out.append(annotation("notice", f"{rest} more regressed or failed critical quer{'y' if rest == 1 else 'ies'} "
                              "not annotated; see the job summary or the report", title="termgate"))
    out += [annotation("warning", _drift_message(d), path, f.lines.get(d.query_id), f"termgate: drift in {d.query_id}")
            for d in f.drift[:limit]]
    if len(f.drift) > limit:
        rest = len(f.drift) - limit
        out.append(annotation("notice", f"{rest} more drift term{'' if rest == 1 else 's'} not annotated; see the "
                              "job summary or the report", title="termgate"))
    return out


def _fingerprint(*parts: str) -> str:
    """Stable across runs of one golden set, so GitLab tracks an item from run to run."""
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()


FINGERPRINT_CHECKS = {"termgate.regressed": "evalcore.regressed", "termgate.critical_failed": "evalcore.critical_failed",
                      "termgate.drift": "evalcore.drift"}
"""The check names as evalcore spelled them, which the fingerprints keep hashing so GitLab
goes on tracking an item across the rename (docs/historical-names.md)."""


def _issue(f: Findings, path: str, query_id: str, check: str, severity: str, description: str,
           *key: str) -> dict:
    line = f.lines.get(query_id)
    fingerprint = _fingerprint(f.golden_name, FINGERPRINT_CHECKS[check], query_id, *key)
    return {"description": description + ("" if line else " (its line in the golden file is not known)"),
            "check_name": check, "fingerprint": fingerprint,
            "severity": severity, "location": {"path": path, "lines": {"begin": line or 1}}}


def codequality_report(f: Findings, path: str) -> str:
    """GitLab's Code Quality report (a JSON array): every flagged query and drift term,
    located at the query's line of the golden file (line 1, saying so, when not known)."""
    items = [_issue(f, path, q.query_id, "termgate.regressed" if q.regressed else "termgate.critical_failed",
                    "critical" if q.critical_failed else "major", _flag_message(q, f.baseline_id))
             for q in f.flagged]
    items += [_issue(f, path, d.query_id, "termgate.drift", "minor", _drift_message(d), d.term) for d in f.drift]
    return json_escaped(json.dumps(items, ensure_ascii=False, indent=1)) + "\n"
