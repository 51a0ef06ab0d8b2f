"""JUnit XML: one testcase per query, <failure> for failed, <error> for errored (SPEC §3)."""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

__all__ = ["render_junit"]

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _clean(text: object) -> str:
    return _INVALID_XML.sub("\ufffd", "" if text is None else str(text))


def render_junit(report: dict) -> str:
    """A <testsuite> named after the run; the gate decision is a property."""
    rows = report["per_query_results"]
    failures = sum(1 for q in rows if not q["passed"] and not q.get("error"))
    errors = sum(1 for q in rows if q.get("error"))
    name = report["run"].get("name") or "evalcore"
    out = [
        '<?xml version="1.0" encoding="UTF-8"?>\n',
        f"<testsuites><testsuite name={quoteattr(_clean(name))} tests=\"{len(rows)}\" "
        f"failures=\"{failures}\" errors=\"{errors}\" timestamp={quoteattr(report['timestamp'])}>\n",
        "<properties>",
        f"<property name=\"evaluation_id\" value={quoteattr(report['evaluation_id'])}/>",
        f"<property name=\"gate\" value={quoteattr(report['gate']['decision'])}/>",
        "</properties>\n",
    ]
    for q in rows:
        classname = quoteattr(_clean(f"evalcore.{q.get('domain') or 'queries'}"))
        out.append(f"<testcase classname={classname} name={quoteattr(_clean(q['query_id']))}>")
        detail = escape(_clean(
            f"query: {q['original_query']}\nP={q['precision']:.4f} R={q['recall']:.4f} F1={q['f1']:.4f} "
            f"drift={q['term_drift_score']:.4f}\nfalse positives: {', '.join(q['false_positives'])}\n"
            f"false negatives: {', '.join(q['false_negatives'])}\ndrift terms: {', '.join(q['drift_terms'])}"))
        message = quoteattr(_clean("; ".join(q["failure_reasons"])))
        if q.get("error"):
            out.append(f"<error message={message} type=\"errored\">{detail}</error>")
        elif not q["passed"]:
            out.append(f"<failure message={message} type=\"failed\">{detail}</failure>")
        out.append("</testcase>\n")
    out.append("</testsuite></testsuites>\n")
    return "".join(out)
