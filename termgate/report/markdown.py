"""The job summary and the pull-request comment: GitHub-flavoured Markdown of a run's
findings, every value from data shown as typed and nothing from data able to render,
link, mention or ping.

`md(value)` is the one escape: terminal controls and BiDi overrides go, line breaks fold
into a visible `\\n`, a word joiner (U+2060, invisible) follows every `@` and `#` and
breaks `http:`, `https:`, `www.` and `GH-` (GitHub finds mentions, issue references and
autolinks after escapes are resolved), and every ASCII punctuation character gets a
backslash (CommonMark's escape: no emphasis, code span, link, image, table pipe or raw
HTML can start). Sizes are counted in UTF-8 bytes, which bounds characters too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ..scoring.regression import regression_label
from ..text import terminal_safe
from .findings import DriftFinding, FlaggedQuery, Findings, Headline

__all__ = ["md", "render_summary", "render_pr_comment", "comment_marker", "SUMMARY_LIMIT", "COMMENT_LIMIT",
           "TOP_ROWS"]

SUMMARY_LIMIT = 1_000_000
"""Bytes: GitHub takes up to 1 MiB (1,048,576 bytes) of job summary per step."""
COMMENT_LIMIT = 65_000
"""Bytes (so characters too): GitHub refuses a comment of 65,536 characters or more."""
TOP_ROWS = 20
"""Rows shown in each table before the rest is folded into <details>."""

WORD_JOINER = "\u2060"
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LINKERS = re.compile(r"(?i)(?<=[@#])|(?<=https)(?=:)|(?<=http)(?=:)|(?<=www)(?=\.)|(?<=\bgh)(?=-)")
_GATE = {"pass": "✅ PASS", "fail": "❌ FAIL", "review": "🟡 REVIEW"}


def md(value: object, limit: int = 200) -> str:
    """A value from data as inline Markdown text, cut to `limit` characters (with …)."""
    text = terminal_safe("" if value is None else value)
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _PUNCTUATION.sub(r"\\\1", _LINKERS.sub(WORD_JOINER, text))


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _num(value: float | None, spec: str = ".3f") -> str:
    return "—" if value is None else format(value, spec).replace("-", "−")


def _terms(terms: Sequence[str], shown: int = 8) -> str:
    if not terms:
        return "—"
    out = ", ".join(md(t, 60) for t in terms[:shown])
    return out + (f" (+{len(terms) - shown} more)" if len(terms) > shown else "")


def _cells(values: Sequence[str]) -> str:
    return "| " + " | ".join(values) + " |\n"


def _flag_row(q: FlaggedQuery) -> str:
    regressed = regression_label("regressed", q.f1, q.baseline_f1)
    what = " · ".join(w for w, on in ((regressed, q.regressed), ("critical failed", q.critical_failed)) if on)
    f1 = f"{_num(q.baseline_f1)} → {_num(q.f1)}" if q.baseline_f1 is not None else _num(q.f1)
    diff = "" if q.versus_baseline else " (vs golden)"
    return _cells([md(q.query_id, 80), md(q.query, 120), md(q.domain or "—", 40), what, f1,
                   _terms(q.lost_correct) + (diff if q.lost_correct else ""),
                   _terms(q.new_wrong) + (diff if q.new_wrong else ""), md("; ".join(q.reasons), 300)])


def _drift_row(d: DriftFinding) -> str:
    return _cells([md(d.query_id, 80), md(d.query, 120), md(d.term, 80), md(d.reason, 300)])


_FLAG_HEAD = ("| query | text | domain | flag | F1 (baseline → now) | lost correct terms | new wrong terms | reasons |\n"
              "|---|---|---|---|---|---|---|---|\n")
_DRIFT_HEAD = "| query | text | term | why it is drift |\n|---|---|---|---|\n"


def _table(title: str, head: str, items: Sequence, row: Callable[[object], str], budget: int, what: str) -> str:
    """A heading, the first TOP_ROWS rows as a table, the rest folded into <details>, all
    within `budget` bytes; whatever does not fit is counted."""
    if not items:
        return ""
    out = [f"\n### {title} ({len(items)})\n\n", head]
    used = _size(out[0]) + _size(head)
    note_room = 200  # the closing count line and </details>
    shown = 0
    for item in items:
        line = row(item)
        if shown == TOP_ROWS:
            fold = f"\n<details><summary>{len(items) - TOP_ROWS} more {what}</summary>\n\n{head}"
            if used + _size(fold) + _size(line) + note_room > budget:
                break
            out.append(fold)
            used += _size(fold)
        if used + _size(line) + note_room > budget:
            break
        out.append(line)
        used += _size(line)
        shown += 1
    if shown > TOP_ROWS:
        out.append("\n</details>\n")
    if shown < len(items):
        out.append(f"\n… and {len(items) - shown} more {what} not shown here (size limit): "
                   "see the JSON report or the dashboard.\n")
    return "".join(out)


def _headline(rows: list[Headline]) -> str:
    out = ["| metric | this run | baseline | Δ | 95% interval of Δ |\n|---|---:|---:|---:|---|\n"]
    for h in rows:
        interval = (f"{_num(h.ci_low, '+.4f')} … {_num(h.ci_high, '+.4f')}" if h.ci_low is not None
                    else "—" if h.paired else "— (difference of the means)")
        value = _num(h.value) + (f" ({md(h.note)})" if h.note else "")
        out.append(_cells([h.metric, value, _num(h.baseline), _num(h.delta, "+.4f"), interval]))
    return "".join(out)


def _head(f: Findings) -> str:
    title = md(f.run_name, 120) if f.run_name else md(f.run_id)
    facts = [f"run {md(f.run_id)}", f"golden set {md(f.golden_name, 200)}"]
    if f.baseline_id:
        facts.append(f"baseline {md(f.baseline_id, 120)}")
    reasons = "".join(f"- {md(r, 400)}\n" for r in f.reasons[:20]) or "- every check passed\n"
    if len(f.reasons) > 20:
        reasons += f"- … and {len(f.reasons) - 20} more\n"
    return (f"## termgate gate: {_GATE.get(f.decision, md(f.decision))} · {title}\n\n"
            + " · ".join(facts) + "\n\n" + reasons + "\n" + _headline(f.headline)
            + f"\n{f.total} queries · {f.passed} passed · {f.total - f.passed} failed · {f.errored} errored\n")


def _audit_head(head: str | None) -> str:
    """The audit head the state relied on, whole, and how to check it later (escaped as
    data is: no code span either)."""
    if not head:
        return ""
    return (f"\nAudit head: **{md(head)}** — keep it: {md(f'termgate audit verify --expect-head {head}')} shows "
            "later whether the store was truncated or rewritten since\n")


def _trust(lines: list[str]) -> str:
    """The signatures' lines (trust root, pin, records whose signature fails), at most ten."""
    if not lines:
        return ""
    more = f"- … and {len(lines) - 10} more (`termgate audit verify` names them all)\n" if len(lines) > 10 else ""
    return "\n" + "".join(f"- {md(line, 400)}\n" for line in lines[:10]) + more


def _tail(f: Findings) -> str:
    reasons = "; ".join(f.signoff_reasons[:10]) + (" …" if len(f.signoff_reasons) > 10 else "")
    out = f"\n### Sign-off\n\n**{md(f.signoff, 60)}**" + (f": {md(reasons, 1000)}" if reasons else "") + "\n"
    out += _audit_head(f.audit_head) + _trust(f.trust)
    if f.links:
        out += "\n" + " · ".join(f"[{md(label)}]({_url(url)})" for label, url in f.links) + "\n"
    else:
        out += "\nThe run was not stored (--no-store): it has no dashboard page.\n"
    return out


def _url(url: str) -> str:
    """A link destination that stays one: spaces, brackets and angle brackets encoded."""
    return "".join(f"%{ord(c):02X}" if c in " ()<>[]\\\"'`" or ord(c) < 0x21 else c for c in url)


def _retrieval(r: dict | None) -> str:
    """The retrieval table: each variant's means, the candidate's change against the
    reference with its interval and Holm-adjusted p-value."""
    if not r:
        return ""
    labels = r["labels"]
    stats = r.get("statistics") or {}
    from ..retrieval.outcome import METRICS, VARIANTS, reference_name  # a stored summary's keys come back sorted

    variants = [v for v in VARIANTS if v in r["means"]]
    out = [f"\n### Retrieval ({r['compared_queries']} of {r['judged_queries']} judged queries, "
           f"against {md(reference_name(r['reference']))})\n\n",
           _cells(["metric", *variants, "Δ", "95% interval of Δ", "p (Holm)"]),
           "|---|" + "---:|" * len(variants) + "---:|---|---:|\n"]
    for metric, label in ((m, labels[m]) for m in METRICS):
        s = stats.get(metric) or {}
        interval = (f"{_num(s['ci_low'], '+.4f')} … {_num(s['ci_high'], '+.4f')}"
                    if s.get("ci_low") is not None else "—")
        out.append(_cells([md(label), *(_num(r["means"][v].get(metric)) for v in variants),
                           _num(s.get("mean_delta"), "+.4f"), interval, _num(s.get("p_value_holm"))]))
    lost = r["regressed_queries"]
    out.append(f"\n{len(lost)} {'query' if len(lost) == 1 else 'queries'} lost more than {r['delta']:g} {md(labels['ndcg'])}, "
               f"{len(r['improved_queries'])} gained\n")
    return "".join(out)


_LOST_HEAD = "| query | nDCG (reference → now) | Δ | which term |\n|---|---:|---:|---|\n"


def _lost_row(q: dict) -> str:
    from ..retrieval.attribution import brought_in_line

    ours, reference = q["variants"].get("candidate", {}), q["variants"].get(q.get("reference", ""), {})
    terms = q.get("attribution") or []
    return _cells([md(q["query_id"], 80), f"{_num(reference.get('ndcg'))} → {_num(ours.get('ndcg'))}",
                   _num(q["ndcg_delta"], "+.4f"), md(brought_in_line(terms[0], q.get("k", 10)), 300) if terms else "—"])


def _markdown(f: Findings, limit: int) -> str:
    head, tail = _head(f) + _retrieval(f.retrieval), _tail(f)
    rest = limit - _size(head) - _size(tail) - 64
    drift_size = sum(_size(_drift_row(d)) for d in f.drift[:200]) + 400 if f.drift else 0
    flag_budget = max(rest // 2, rest - drift_size)
    flagged = _table("Regressed and failed critical queries", _FLAG_HEAD, f.flagged, _flag_row, flag_budget,
                     "regressed or failed critical queries")
    drift = _table("Drift terms", _DRIFT_HEAD, f.drift, _drift_row, rest - _size(flagged), "drift terms")
    lost = _table("Queries that lost retrieval", _LOST_HEAD, (f.retrieval or {}).get("per_query", []), _lost_row,
                  rest - _size(flagged) - _size(drift), "queries that lost retrieval")
    return head + flagged + lost + drift + tail


def render_summary(f: Findings, limit: int = SUMMARY_LIMIT) -> str:
    """The job summary: at most `limit` bytes of Markdown."""
    return _markdown(f, limit)


def _marker_part(value: str, keep: str = "") -> str:
    """Percent-encode all but a safe few characters: no `-->`, `--!>` or `>` can form, and
    no `--` or whitespace either."""
    out = []
    for i, c in enumerate(value):
        dashes = c == "-" and ((i > 0 and value[i - 1] == "-") or (i + 1 < len(value) and value[i + 1] == "-"))
        if (c.isascii() and (c.isalnum() or c in "._~@+=:,;" + keep)) or (c == "-" and not dashes):
            out.append(c)
        else:
            out.extend(f"%{b:02X}" for b in c.encode("utf-8"))
    return "".join(out)


def comment_marker(golden_name: str, run_name: str | None) -> str:
    """`<!-- termgate: GOLDEN/NAME -->`, the same for every run of one name on one golden
    set (SPEC §1.1): a workflow finds the comment to update by it. Slashes stay in the
    golden name and are encoded in the run name, so the last `/` separates them."""
    return f"<!-- termgate: {_marker_part(golden_name, '/')}/{_marker_part(run_name or '')} -->"


def render_pr_comment(f: Findings, limit: int = COMMENT_LIMIT) -> str:
    """The pull-request comment: the marker on its first line, then the summary, at most
    `limit` bytes in all."""
    marker = comment_marker(f.golden_name, f.run_name) + "\n"
    return marker + _markdown(f, limit - _size(marker))
