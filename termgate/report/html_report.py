"""A self-contained HTML report: no external assets, every value escaped."""

from __future__ import annotations

from html import escape

from ..scoring.regression import regression_label

__all__ = ["render_html"]

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1f2328}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px}
.muted{color:#656d76} .badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff}
.pass{background:#1a7f37} .fail{background:#cf222e} .review{background:#9a6700}
table{border-collapse:collapse;width:100%;margin-top:6px} th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f6f8fa;position:sticky;top:0} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.regressed td{background:#ffebe9} tr.improved td{background:#dafbe1} tr.failed td:first-child{border-left:4px solid #cf222e}
.tp{color:#1a7f37} .fp{color:#9a6700} .fn{color:#cf222e} .drift{color:#fff;background:#8250df;padding:0 4px;border-radius:3px}
.cards{display:flex;gap:12px;flex-wrap:wrap} .card{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;min-width:110px}
.card b{display:block;font-size:20px}
"""


def _e(value: object) -> str:
    return escape("" if value is None else str(value), quote=True)


def _terms(terms: list[str], css: str, drift: set[str] | None = None) -> str:
    drift = drift or set()
    return ", ".join(f'<span class="{"drift" if t in drift else css}">{_e(t)}</span>' for t in terms)


def _row(q: dict) -> str:
    status = q.get("regression_status") or ""
    classes = " ".join(c for c in (status, "" if q["passed"] else "failed") if c)
    drift = set(q["drift_terms"])
    base = q.get("baseline_f1")
    label = regression_label(status, q["f1"], base) or ""
    reasons = "; ".join(q["failure_reasons"] + q.get("notes", []))
    return (
        f'<tr class="{classes}"><td>{_e(q["query_id"])}{" ⚑" if q.get("critical") else ""}</td>'
        f'<td>{_e(q["original_query"])}</td><td>{_e(q.get("domain"))}</td>'
        f'<td class="num">{q["precision"]:.3f}</td><td class="num">{q["recall"]:.3f}</td>'
        f'<td class="num">{q["f1"]:.3f}</td>'
        f'<td class="num">{"" if base is None else f"{base:.3f}"}</td>'
        f'<td class="num">{q["term_drift_score"]:.3f}</td>'
        f'<td>{"pass" if q["passed"] else "fail"}{(" · " + _e(label)) if label else ""}</td>'
        f'<td>{_terms(q["true_positives"], "tp")}</td><td>{_terms(q["false_positives"], "fp", drift)}</td>'
        f'<td>{_terms(q["false_negatives"], "fn")}</td><td>{_e(reasons)}</td></tr>'
    )


def _order(rows: list[dict]) -> list[dict]:
    rank = {"regressed": 0}
    return sorted(rows, key=lambda q: (rank.get(q.get("regression_status"), 1),
                                       0 if not q["passed"] else 1))


def _fmt(v, spec="+.4f") -> str:
    return "—" if v is None else format(v, spec)


def _statistics(stats: dict | None) -> str:
    if not stats:
        return ""
    rows = "".join(
        f"<tr><td>{_e(name)}</td><td class=\"num\">{_fmt(s['mean_delta'])}</td>"
        f"<td class=\"num\">{_fmt(s['ci_low'])} … {_fmt(s['ci_high'])}</td>"
        f"<td class=\"num\">{_fmt(s['p_value'], '.4f')}</td>"
        f"<td class=\"num\">{_fmt(s.get('p_value_holm'), '.4f')}</td><td class=\"num\">{s['n']}</td></tr>"
        for name, s in [("F1", stats["f1"]), ("precision", stats["precision"]), ("recall", stats["recall"])]
        + [(f"F1 · {domain}", v["f1"]) for domain, v in stats["by_domain"].items()])
    warn = f"<p><b>Warning:</b> {_e(stats['mde_warning'])}</p>" if stats.get("mde_warning") else ""
    return (f"<h2>Statistics (paired, candidate − baseline)</h2>{warn}<table><thead><tr><th>metric</th>"
            "<th>mean Δ</th><th>95% interval (bootstrap)</th><th>p (sign-flip)</th><th>p (Holm)</th><th>n</th>"
            f"</tr></thead><tbody>{rows}</tbody></table><p class=\"muted\">Minimum detectable F1 change "
            f"{_fmt(stats.get('mde_f1'), '.4f')} (80% power, α 0.05); {stats['resamples']:,} resamples, "
            f"seed {stats['seed']}.</p>")


def render_html(report: dict) -> str:
    """The whole report as one HTML document; regressions first, then failures."""
    s, gate, reg, run = report["summary"], report["gate"], report["regression_analysis"], report["run"]
    title = f"termgate report {report['evaluation_id']}"
    cards = "".join(f'<div class="card"><span class="muted">{_e(k)}</span><b>{_e(v)}</b></div>' for k, v in (
        ("queries", s["total_queries"]), ("passed", s["passed"]), ("failed", s["failed"]),
        ("errored", s.get("errored", 0)),
        ("precision", f"{s['aggregate_precision']:.3f}"), ("recall", f"{s['aggregate_recall']:.3f}"),
        ("F1", f"{s['aggregate_f1']:.3f}"), ("drift score", f"{s['mean_term_drift_score']:.3f}" + (
            f" ({s['terms_unjudged']} of {s['terms_put_to_judge']} terms unjudged)" if s.get("terms_unjudged") else "")),
        ("micro F1", f"{report['micro']['f1']:.3f}")))
    parts = [
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(run.get('name') or 'Evaluation')} <span class=\"badge {_e(gate['decision'])}\">"
        f"{_e(gate['decision'].upper())}</span></h1>",
        f"<div class=\"muted\">run {_e(report['evaluation_id'])} · {_e(report['timestamp'])} · "
        f"prompt {_e(run.get('prompt_version'))} · domains {_e(', '.join(run.get('domains', [])))} · "
        f"drift judge {_e(run.get('drift_judge'))} · content {_e(run.get('content_hash', '')[:12])}</div>",
        "<h2>Gate</h2><ul>", "".join(f"<li>{_e(r)}</li>" for r in gate["reasons"]), "</ul>",
        f"<div class=\"cards\">{cards}</div>",
        f"<h2>Regression analysis</h2><p>{_e(reg['delta_summary'])}</p>",
        _statistics(report.get("statistics")),
        "<h2>Recommendations</h2><ul>", "".join(f"<li>{_e(r)}</li>" for r in report["recommendations"]), "</ul>",
        "<h2>Queries</h2><table><thead><tr><th>query_id</th><th>query</th><th>domain</th><th>P</th><th>R</th>"
        "<th>F1</th><th>baseline F1</th><th>drift</th><th>result</th><th>true positives</th>"
        "<th>false positives (drift highlighted)</th><th>false negatives</th><th>reasons</th></tr></thead><tbody>",
    ]
    parts.extend(_row(q) for q in _order(report["per_query_results"]))
    parts.append("</tbody></table><p class=\"muted\">⚑ critical query. Generated by termgate "
                 f"{_e(run.get('evalcore_version'))}.</p></body></html>\n")
    return "".join(parts)
