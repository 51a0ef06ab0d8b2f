"""The prompt-evaluation HTML report: self-contained (no external assets), every value escaped."""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from ..scoring.metrics import EPSILON

if TYPE_CHECKING:
    from ..llm.prompt_models import CaseResult, PromptEvalResults

__all__ = ["render_prompt_html", "write_prompt_html", "badge_class", "BADGE_COLORS"]

# One colour per meaning: passed, below the threshold, capped range (<= 3), unscored.
BADGE_COLORS = {"score-high": "#1a7f37", "score-mid": "#9a6700", "score-low": "#cf222e", "score-none": "#6e7781"}

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#1f2328;max-width:1100px}
h1{font-size:22px;margin:0 0 4px} h2{font-size:17px;margin:28px 0 8px} h3{font-size:15px;margin:0 0 8px}
.muted{color:#656d76} .badge{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin-top:12px}
.card{border:1px solid #d0d7de;border-radius:6px;padding:8px 14px;min-width:110px} .card b{display:block;font-size:20px}
.case{border:1px solid #d0d7de;border-radius:6px;padding:12px 16px;margin:14px 0}
.case.errored{border-left:4px solid #6e7781} .head{display:flex;justify-content:space-between;gap:12px}
table{border-collapse:collapse;margin:4px 0} th,td{border:1px solid #d0d7de;padding:4px 8px;vertical-align:top;text-align:left}
th{background:#f6f8fa} pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:8px;white-space:pre-wrap}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px} .error{color:#cf222e;font-weight:600}
.violated{color:#cf222e}
""" + "".join(f".{name}{{background:{color}}}" for name, color in BADGE_COLORS.items())


def _e(value: object) -> str:
    if value is not None and not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, default=str)
    return escape("" if value is None else value, quote=True)


def _num(value: float | None, fmt: str = ".2f") -> str:
    return "—" if value is None else format(value, fmt)


def badge_class(score: float | None, pass_threshold: float) -> str:
    """score-high at or above the threshold, score-low at 3 or below, score-mid between, score-none unscored."""
    if score is None:
        return "score-none"
    if score >= pass_threshold - EPSILON:  # the same comparison as CaseResult.passed
        return "score-high"
    return "score-low" if score <= 3 else "score-mid"


def _items(title: str, values: list[str], css: str = "") -> str:
    if not values:
        return f"<h4>{_e(title)}</h4><p class=\"muted\">none</p>"
    return f"<h4>{_e(title)}</h4><ul class=\"{css}\">" + "".join(f"<li>{_e(v)}</li>" for v in values) + "</ul>"


def _case(c: CaseResult, threshold: float) -> str:
    label = "unscored" if c.score is None else f"{c.score:g} / 10"
    inputs = "".join(f"<tr><th>{_e(k)}</th><td><pre>{_e(v)}</pre></td></tr>" for k, v in c.prompt_inputs.items())
    parts = [f'<section class="case{" errored" if c.error else ""}" id="case-{c.index}"><div class="head">'
             f"<h3>Case {c.index + 1}: {_e(c.scenario)}</h3>"
             f'<span class="badge {badge_class(c.score, threshold)}">{_e(label)}</span></div>']
    if c.error:
        parts.append(f'<p class="error">Errored (not scored): {_e(c.error)}</p>')
    parts.append(f"<h4>Inputs</h4><table>{inputs}</table>")
    parts.append(_items("Solution criteria", c.solution_criteria))
    parts.append("<h4>Output</h4>" + ("<p class=\"muted\">no output</p>" if c.output is None
                                      else f"<pre>{_e(c.output)}</pre>"))
    if c.score is not None:
        parts.append(f"<h4>Judge's reasoning</h4><p>{_e(c.reasoning)}</p>")
        parts.append(f'<div class="cols"><div>{_items("Strengths", c.strengths)}</div>'
                     f'<div>{_items("Weaknesses", c.weaknesses)}</div></div>')
        if c.violated_extra_criteria:
            note = f" (judge gave {c.judge_score:g}; capped at 3)" if c.capped else ""
            parts.append(_items(f"Violated extra criteria{note}", c.violated_extra_criteria, "violated"))
    parts.append("</section>")
    return "".join(parts)


def render_prompt_html(results: PromptEvalResults) -> str:
    """The whole report as one HTML document, cases in dataset order."""
    s = results.summary
    title = results.name or "Prompt evaluation"
    cards = "".join(f'<div class="card"><span class="muted">{_e(k)}</span><b>{_e(v)}</b></div>' for k, v in (
        ("total cases", s.total), ("scored", s.scored), ("errored", s.errored),
        ("average score", _num(s.average)), ("std dev", _num(s.stdev)),
        (f"pass rate (≥ {s.pass_threshold:g})", f"{s.pass_rate:.0%}"), ("passed", s.passed)))
    meta = " · ".join(f"{k} {_e(v)}" for k, v in (
        ("evaluation", results.eval_id), ("created", results.created_at), ("prompt", results.prompt_version),
        ("model", results.model), ("judge", results.judge_model), ("dataset", results.dataset_path),
        ("dataset hash", results.dataset_hash[:12])) if v)
    extras = ("<h2>Extra criteria (a violation caps the score at 3)</h2><ul>"
              + "".join(f"<li>{_e(c)}</li>" for c in results.extra_criteria) + "</ul>") if results.extra_criteria else ""
    return "".join([
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">",
        f"<title>{_e(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_e(title)}</h1><div class=\"muted\">{meta}</div>",
        f"<div class=\"cards\">{cards}</div>",
        f"<h2>Task</h2><p>{_e(results.task_description)}</p>", extras,
        "<h2>Cases</h2>", "".join(_case(c, s.pass_threshold) for c in results.results),
        f"<p class=\"muted\">Generated by termgate. Scores are 1–10 from the judge model; a case passes at "
        f"≥ {s.pass_threshold:g}; errored cases are unscored and not passes.</p></body></html>\n"])


def write_prompt_html(results: PromptEvalResults, path: str | Path) -> None:
    """The prompt evaluation as one self-contained HTML file (every value escaped), written
    atomically: a reader never sees half of it."""
    from .files import write_atomically
    write_atomically(path, render_prompt_html(results))
