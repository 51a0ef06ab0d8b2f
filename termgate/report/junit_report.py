"""JUnit XML (SPEC §3): one testsuite per domain, one testcase per query; `<failure>` for
a failed or regressed query (a regressed query fails the gate even when it still meets
its thresholds), `<error>` for an errored one; properties run_id, content_hash, gate."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from ..scoring.regression import regression_label

__all__ = ["render_junit", "NO_DOMAIN"]

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
NO_DOMAIN = "queries"
"""The suite of queries with no domain."""


def _clean(text: object) -> str:
    return _INVALID_XML.sub("\ufffd", "" if text is None else str(text))


def _verdict(q: dict) -> str | None:
    """"error", "failure" or None (a pass)."""
    if q.get("error"):
        return "error"
    if not q["passed"] or q.get("regression_status") == "regressed":
        return "failure"
    return None


def _testcase(q: dict, classname: str) -> str:
    out = [f"<testcase classname={quoteattr(classname)} name={quoteattr(_clean(q['query_id']))}>"]
    base = q.get("baseline_f1")
    detail = escape(_clean(
        f"query: {q['original_query']}\nP={q['precision']:.4f} R={q['recall']:.4f} F1={q['f1']:.4f} "
        f"drift={q['term_drift_score']:.4f}" + (f" baseline F1={base:.4f}" if base is not None else "")
        + f"\nfalse positives: {', '.join(q['false_positives'])}\n"
        f"false negatives: {', '.join(q['false_negatives'])}\ndrift terms: {', '.join(q['drift_terms'])}"))
    verdict = _verdict(q)
    reasons = list(q["failure_reasons"])
    if q.get("regression_status") == "regressed":
        label = regression_label("regressed", q["f1"], base)
        reasons.append(f"{label}: F1 {base:.4f} -> {q['f1']:.4f}" if base is not None else label)
    message = quoteattr(_clean("; ".join(reasons)))
    if verdict == "error":
        out.append(f"<error message={message} type=\"errored\">{detail}</error>")
    elif verdict == "failure":
        kind = "regressed" if q["passed"] else "failed"
        out.append(f"<failure message={message} type=\"{kind}\">{detail}</failure>")
    out.append("</testcase>\n")
    return "".join(out)


def render_junit(report: dict) -> str:
    """A <testsuite> per domain (in first-seen order), each with the run's properties."""
    run = report["run"]
    name = run.get("name") or "termgate"
    suites: dict[str, list[dict]] = {}
    for q in report["per_query_results"]:
        suites.setdefault(q.get("domain") or NO_DOMAIN, []).append(q)
    properties = ("<properties>" + "".join(
        f"<property name=\"{key}\" value={quoteattr(_clean(value))}/>" for key, value in (
            ("run_id", report["evaluation_id"]), ("evaluation_id", report["evaluation_id"]),
            ("content_hash", run.get("content_hash") or ""), ("gate", report["gate"]["decision"])))
        + "</properties>\n")
    out = ['<?xml version="1.0" encoding="UTF-8"?>\n', f"<testsuites name={quoteattr(_clean(name))}>\n"]
    for domain, rows in suites.items():
        verdicts = [_verdict(q) for q in rows]
        out.append(f"<testsuite name={quoteattr(_clean(domain))} tests=\"{len(rows)}\" "
                   f"failures=\"{verdicts.count('failure')}\" errors=\"{verdicts.count('error')}\" "
                   f"timestamp={quoteattr(report['timestamp'])}>\n")
        out.append(properties)
        classname = _clean(f"termgate.{domain}")
        out.extend(_testcase(q, classname) for q in rows)
        out.append("</testsuite>\n")
    out.append("</testsuites>\n")
    return "".join(out)
