"""UI conventions shared by every page: one colour per meaning, labels, small renderers."""

from __future__ import annotations

import html
import json
import math
import re

import pandas as pd
import streamlit as st

# Markdown is everywhere in Streamlit: st.markdown/caption/write/success/error/warning/info,
# and the labels of expanders, checkboxes, buttons, tabs, metrics, radios and page links,
# with GitHub Markdown, KaTeX ($...$), :emoji: and :colour[...] shortcodes. CommonMark lets a
# backslash escape any ASCII punctuation, so escaping all of it shows every character as
# typed. GFM autolinks (http://, www., a@b.c) are found in the text *after* escapes are
# resolved, so a word joiner (U+2060, invisible and zero-width) breaks those three triggers.
# Selectbox and multiselect options, st.text, st.code and dataframe cells are plain text
# already and must not be escaped (the backslashes would show).
_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_AUTOLINK = re.compile(r"(?i)(?<=https)(?=:)|(?<=http)(?=:)|(?<=www)(?=\.)|(?<=@)")
_LINE_BREAKS = re.compile(r"\s*[\r\n\u2028\u2029]+\s*")
WORD_JOINER = "\u2060"

# The same colour means the same thing on every page and chart.
STATUS_COLORS = {"regressed": "#cf222e", "improved": "#1a7f37", "unchanged": "#8c959f",
                 "added": "#0969da", "removed": "#6e7781", "golden_changed": "#9a6700",
                 "newly failing": "#cf222e"}  # a regressed query whose F1 did not fall (regression_label)
DRIFT_COLOR = "#8250df"
GATE_COLORS = {"pass": "#1a7f37", "fail": "#cf222e", "review": "#9a6700"}


def literal(value) -> str:
    """`value` as Markdown that Streamlit shows exactly as typed: no emphasis, link, image,
    HTML, LaTeX or shortcode ever renders. Use it for every value from data in any
    Markdown context (see above); line breaks fold into one space (labels are one line)."""
    text = "" if value is None else str(value)
    text = _LINE_BREAKS.sub(" ", text)
    text = _AUTOLINK.sub(WORD_JOINER, text)
    return _PUNCTUATION.sub(r"\\\1", text)


def badge(value) -> str:
    """literal for an st.badge label: st.badge escapes [ and ] itself, so theirs are undone
    (every other backslash literal writes is doubled, so only these pairs match)."""
    return literal(value).replace("\\[", "[").replace("\\]", "]")


def chart_text(value) -> str:
    """A value from data for Plotly text (ticks, legends, hover): Plotly renders <a>, <b>,
    <br> and friends and decodes only &amp; &lt; &gt; (and numeric references), so escape
    exactly those three."""
    return html.escape("" if value is None else str(value), quote=False)


def chart_column(series):
    """chart_text over a pandas Series (category ticks, hover names, legends)."""
    return series.map(lambda v: v if v is None or v != v else chart_text(v))


def run_label(row, unnamed: str | None = "run") -> str:
    """`medical demo · v2 · 20261129-225454-b9cf7a` for pickers: what the run has of name,
    prompt version and id (never "nan"); a run without a name is called `unnamed`."""
    name = row.get("name") if isinstance(row.get("name"), str) else unnamed
    version = row.get("prompt_version") if isinstance(row.get("prompt_version"), str) else None
    return " · ".join(str(p) for p in (name, version, row["run_id"]) if p)


def run_choice(row) -> str:
    """A run in a picker of run ids: `20261129-225454-b9cf7a — medical demo · v2 ·
    2026-11-29 22:54 UTC · gate review` (what the run has of each; never "nan")."""
    name, version = (row.get(k) if isinstance(row.get(k), str) else None for k in ("name", "prompt_version"))
    created = row.get("created_at")
    when = f"{created[:10]} {created[11:16]} UTC" if isinstance(created, str) and len(created) >= 16 else None
    gate = f"gate {row['gate_decision']}" if isinstance(row.get("gate_decision"), str) else None
    return f"{row['run_id']} — " + " · ".join(p for p in (name, version, when, gate) if p)


def visible(text: str) -> str:
    """Raw multi-line data (a model's reply) for st.code: its controls and BiDi marks as
    visible escapes, never acted on by the browser."""
    from termgate.text import visible_controls
    return visible_controls(text)


def terms(values) -> str:
    """A list column as readable text."""
    if isinstance(values, str):
        return values
    try:
        return ", ".join(str(v) for v in values)
    except TypeError:  # None, NaN, pd.NA: a side of the pair without this query
        return ""


def number(value, decimals: int = 3) -> str:
    """A number as people read it, the dashboard's one formatter: whole numbers with
    thousands separators, others rounded to `decimals` places without trailing zeros
    (0.7749999999999999 → 0.775, 0.5 → 0.5), a tiny one to its first significant digits;
    a missing value as "-"."""
    if value is None or isinstance(value, bool):
        return "-" if value is None else str(value)
    value = float(value)
    if math.isnan(value):
        return "-"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value.is_integer():
        return f"{int(value):,}"
    rounded = round(value, decimals)
    if rounded == 0:
        return f"{value:.{decimals}g}"
    return f"{rounded:,.{decimals}f}".rstrip("0").rstrip(".")


def settings(text: str | None) -> str:
    """A stored JSON configuration (a drift judge's) as one line for people: `key value`
    pairs joined by " · ", numbers by `number`; text that is not JSON as it is."""
    try:
        parsed = json.loads(text or "null")
    except ValueError:
        return text or ""
    return _plain(parsed)


def _plain(value) -> str:
    if isinstance(value, dict):
        return " · ".join(f"{k} {_plain(v)}" for k, v in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(_plain(v) for v in value) + "]"
    if value is None:
        return "none"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value)
    return str(value).lower() if isinstance(value, bool) else str(value)


def cell(value) -> str:
    """A table cell as text for people: nothing for a missing value (st.dataframe shows a
    null as a grey "None"), a list as its items, a number by `number`."""
    if value is None or value is pd.NA or (isinstance(value, float) and value != value):
        return ""
    if isinstance(value, (list, tuple)):
        return terms(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return number(value)
    return str(value)


def color_gate(value: str) -> str:
    color = GATE_COLORS.get(str(value).lower())
    return f"color: {color}; font-weight: 600" if color else ""


def color_status(value: str) -> str:
    color = STATUS_COLORS.get(value)
    return f"color: {color}; font-weight: 600" if color else ""


def empty_store_notice() -> None:
    st.info("No runs yet. Record one with `termgate evaluate --golden G.jsonl --generated C.jsonl`, "
            "load the demo with `termgate demo`, or use the Import page.")
