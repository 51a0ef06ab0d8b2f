"""One query side by side — the baseline's expansion on the left, the candidate's on the
right, each term a chip — with the golden entry, the failure reasons, P/R/F1 of both, and
Previous/Next through the page's list. Compare, Regressions and Sign-off all show this one.

The open query is the URL's `query` parameter, so a link opens it. Chips are st.badge,
whose label and tooltip are Markdown: every value from data goes through ui.literal
(ui.badge undoes its bracket escapes, which st.badge adds itself). Colour is never the
only signal: each chip starts with its symbol, the legend names them, the tooltip says
the kind in words.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial

import pandas as pd
import streamlit as st

from termgate.comparison import Walk
from ..scoring.metrics import format_pair
from ..scoring.regression import regression_label

from . import data, retrieval_view, ui, verdict_view

QUERY_PARAM = "query"


@dataclass(frozen=True)
class Kind:
    symbol: str
    word: str
    color: str
    """An st.badge colour."""


KINDS = {"matched": Kind("✓", "matched", "green"), "wrong": Kind("✗", "wrong", "orange"),
         "drift": Kind("⚠", "drift", "violet"), "underweight": Kind("↓", "underweight", "yellow"),
         "missed": Kind("–", "missed", "gray")}
STATUS_BADGES = {"regressed": "red", "improved": "green", "unchanged": "gray", "added": "blue", "removed": "gray",
                 "golden_changed": "orange"}


@dataclass(frozen=True)
class Chip:
    """One term of one side, as a reviewer reads it."""

    term: str
    kind: str
    """A key of KINDS."""
    weight: float | None = None
    min_weight: float | None = None
    reason: str | None = None
    """Why the drift judge flagged it (drift chips)."""
    unjudged: bool = False


def _value(v):
    """A cell as Python: None for NULL, NaN and pd.NA."""
    return None if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v


def chips(terms: pd.DataFrame) -> list[Chip]:
    """A query's term rows (store.term_rows, generated order then expected order) as chips:
    generated terms first, then the expected terms missed. A term generated below its
    min_weight is one underweight chip: the rule counts it as a false positive and its
    expected twin as a false negative, which would otherwise show it twice."""
    out, underweight = [], set()
    for row in terms.itertuples():
        if row.kind == "TP":
            kind = "matched"
        elif row.kind == "FP":
            kind = ("drift" if _value(row.drift) else
                    "underweight" if _value(row.exp_pos) is not None else "wrong")
            if kind == "underweight":
                underweight.add(row.term)
        elif row.term in underweight:
            continue
        else:
            kind = "missed"
        out.append(Chip(row.term, kind, _value(row.weight), _value(row.min_weight), _value(row.reason),
                        bool(_value(row.unjudged))))
    return out


def chip_label(chip: Chip) -> str:
    """The chip's Markdown label: symbol, term (struck when missed), and what makes it so."""
    kind = KINDS[chip.kind]
    term = ui.badge(chip.term)
    if chip.kind == "missed":
        term = f"~~{term}~~"
    elif chip.kind == "underweight" and chip.weight is not None and chip.min_weight is not None:
        term += " " + " < ".join(format_pair(chip.weight, chip.min_weight))
    elif chip.kind == "drift":
        term += " · drift"
    return f"{kind.symbol} {term}" + (" · unjudged" if chip.unjudged else "")


def chip_help(chip: Chip) -> str:
    """The tooltip: the kind in words, the weights, the drift reason."""
    parts = [f"{KINDS[chip.kind].word}: {chip.term}"]
    if chip.weight is not None:
        parts.append(f"weight {chip.weight:.2f}")
    if chip.min_weight:  # 0.0, the default, says nothing
        parts.append(f"min_weight {chip.min_weight:.2f}")
    if chip.reason:
        parts.append(f"why drift: {chip.reason}")
    if chip.unjudged:
        parts.append("the drift judge could not decide")
    return ui.literal(" · ".join(parts))


def walk_in(ids: list[str], query_id: str) -> Walk:
    """A short list's Walk (Regressions, Sign-off); Compare's comes from PairedRuns.walk."""
    if query_id not in ids:
        return Walk(None, len(ids), None, ids[0] if ids else None)
    i = ids.index(query_id)
    return Walk(i + 1, len(ids), ids[i - 1] if i else None, ids[i + 1] if i + 1 < len(ids) else None)


# ---------------------------------------------------------------- opening and walking


_MOVED = "sbs_moved"  # session key: a callback changed the URL's query this run


def _open(query_id: str, extra: dict) -> None:
    st.query_params.update({**extra, QUERY_PARAM: query_id})
    st.session_state[_MOVED] = True


def _close(then) -> None:
    st.query_params.pop(QUERY_PARAM, None)
    st.session_state[_MOVED] = True
    if then is not None:
        then()


def _sync_url() -> None:
    """Send the URL again after a callback changed it: the browser keeps the address a
    callback sets only once the script itself sends it."""
    if st.session_state.pop(_MOVED, False):
        st.query_params.update({})


def _open_selected(key: str, extra: dict) -> None:
    rows = st.session_state[key].selection.rows
    ids = st.session_state.get(f"{key}_ids", [])
    if rows and rows[0] < len(ids):
        _open(ids[rows[0]], extra)


def selectable(key: str, ids: list[str], **extra) -> dict:
    """st.dataframe arguments that open the query of the row a reviewer selects; `ids` are
    the shown rows' query ids in order, `extra` more URL parameters to set (the run)."""
    st.session_state[f"{key}_ids"] = list(ids)
    return {"key": key, "on_select": partial(_open_selected, key, extra), "selection_mode": "single-row"}


def opened() -> str | None:
    """The query the URL opens, if any."""
    _sync_url()
    return st.query_params.get(QUERY_PARAM) or None


# ---------------------------------------------------------------- the panel


def panel(run_id: str, baseline_id: str | None, query_id: str, walk: Walk, key: str,
          list_name: str = "the filtered list", on_back=None, extra: dict | None = None) -> bool:
    """The open query, side by side; False (and nothing shown) when neither run holds it."""
    data.open_query(run_id, baseline_id, query_id)
    row = data.pair_query(run_id, baseline_id, query_id)
    if row is None:
        return False
    _navigation(walk, key, list_name, on_back, extra or {})
    _heading(row)
    runs = data.runs().set_index("run_id")
    _golden(runs, run_id, baseline_id, query_id)
    left, right = st.columns(2, border=True)
    with left:
        _side("Baseline", runs, baseline_id, query_id, row, "base_")
    with right:
        _side("Candidate", runs, run_id, query_id, row, "")
    st.caption("  ·  ".join(f"{k.symbol} {k.word}" for k in KINDS.values())
               + "  ·  hover a term for its weight and, for drift, why it was flagged")
    retrieval_view.query_section(run_id, baseline_id, query_id)
    if row["f1"] is not None:  # the candidate holds the query: its terms may get verdicts
        generated = [c for c in chips(data.query_terms(run_id, query_id)) if c.kind != "missed"]
        verdict_view.section(run_id, query_id, generated, key, partial(_open, extra=extra or {}))
    for neighbour in (walk.next, walk.previous):  # where Next and Previous go: read ahead
        data.open_query(run_id, baseline_id, neighbour)
    return True


def _navigation(walk: Walk, key: str, list_name: str, on_back, extra: dict) -> None:
    where = (f"query {walk.position:,} of {walk.total:,} in {list_name}" if walk.position else
             f"not in {list_name} ({walk.total:,} queries): Next opens its first" if walk.total else
             f"not in {list_name}, which is empty")
    with st.container(horizontal=True, vertical_alignment="center"):
        st.button("Previous", icon=":material/arrow_back:", key=f"{key}_previous", disabled=walk.previous is None,
                  on_click=_open, args=(walk.previous, extra), shortcut="P")
        st.button("Next", icon=":material/arrow_forward:", icon_position="right", key=f"{key}_next",
                  disabled=walk.next is None, on_click=_open, args=(walk.next, extra), shortcut="N")
        st.markdown(ui.literal(where), width="content")
        st.button("Back to the list", icon=":material/close:", key=f"{key}_back", type="tertiary",
                  on_click=_close, args=(on_back,))


def _heading(row: dict) -> None:
    query = row["query"] if row["query"] is not None else row["base_query"]
    st.markdown(f"#### {ui.literal(row['query_id'])} · {ui.literal(query)}")
    with st.container(horizontal=True, vertical_alignment="center"):
        status = row["status"]
        st.badge(regression_label(status, row["f1"], row["base_f1"]), color=STATUS_BADGES.get(status, "gray"))
        if row["delta_f1"] is not None:
            st.badge(f"ΔF1 {row['delta_f1']:+.3f}", color="gray")
        if row["critical"] or row["base_critical"]:
            st.badge("⚑ critical", color="red")
        domain = row["domain"] if row["domain"] is not None else row["base_domain"]
        if domain:
            st.badge(ui.badge(f"domain {domain}"), color="gray")
        st.page_link("views/query.py", label="Query history", icon=":material/history:",
                     query_params={"query_id": row["query_id"]})


def _golden(runs: pd.DataFrame, run_id: str, baseline_id: str | None, query_id: str) -> None:
    golden = runs["golden_hash"].get(run_id)
    entry = data.golden_line(golden if isinstance(golden, str) else None, query_id)
    if entry is None:
        st.caption("Golden entry: the golden file is not stored with this run; the expected terms are "
                   "on each side below.")
        return
    line, text = entry
    st.markdown(_golden_summary(text))
    with st.expander(f"Golden entry as stored: line {line:,} of the run's golden file"):
        st.code(text, language="json", wrap_lines=True)
    base_golden = runs["golden_hash"].get(baseline_id) if baseline_id else None
    if isinstance(base_golden, str) and base_golden != golden:
        base_entry = data.golden_line(base_golden, query_id)
        if base_entry is not None and base_entry[1] != text:
            st.warning("The baseline's golden set holds another entry for this query "
                       f"(line {base_entry[0]:,}): its scores are against that one.")
            st.code(base_entry[1], language="json", wrap_lines=True)


def _golden_summary(text: str) -> str:
    """The golden line as a reader wants it: expected terms with min_weight, forbidden, critical."""
    try:
        item = json.loads(text)
    except ValueError:
        return "**Golden entry**: the stored line is not valid JSON (shown below)."
    expected = []
    for e in item.get("expected_expansions") or []:
        term = ui.literal(e.get("term")) if isinstance(e, dict) else ui.literal(e)
        weight = e.get("min_weight") if isinstance(e, dict) else None
        expected.append(f"{term} (min_weight {weight:.2f})" if isinstance(weight, (int, float)) and weight else term)
    forbidden = [ui.literal(t) for t in item.get("forbidden_terms") or []]
    return (f"**Golden entry** · expected: {' · '.join(expected) or 'none'}  \n"
            f"forbidden: {' · '.join(forbidden) or 'none'} · critical: {'yes ⚑' if item.get('critical') else 'no'}")


def _metrics(row: dict, prefix: str) -> str:
    parts = []
    for name, key in (("P", "precision"), ("R", "recall"), ("F1", "f1")):
        value, base = row[prefix + key], row["base_" + key]
        delta = f" ({value - base:+.3f})" if not prefix and value is not None and base is not None else ""
        parts.append(f"{name} **{'—' if value is None else f'{value:.3f}'}**{delta}")
    passed = row[prefix + "passed"]
    verdict = "✓ passes" if passed else "✗ fails" if passed is not None else ""
    return " · ".join(parts + ([verdict] if verdict else []))


def _side(title: str, runs: pd.DataFrame, run_id: str | None, query_id: str, row: dict, prefix: str) -> None:
    if run_id is None:
        st.markdown(f"**{title}**")
        st.info("No baseline: this run records none, so there is nothing to compare with.")
        return
    name = ui.run_label(runs.loc[run_id].to_dict() | {"run_id": run_id}) if run_id in runs.index else run_id
    st.markdown(f"**{title}** · {ui.literal(name)}")
    if row[prefix + "f1"] is None:
        st.info(f"This run has no query {ui.literal(query_id)} "
                f"({'added since the baseline' if prefix else 'removed since the baseline'}).")
        return
    st.markdown(_metrics(row, prefix))
    found = chips(data.query_terms(run_id, query_id))
    generated = [c for c in found if c.kind != "missed"]
    missed = [c for c in found if c.kind == "missed"]
    _chip_row(f"Generated ({len(generated)})", generated)
    _chip_row(f"Missed ({len(missed)})", missed)
    for chip in (c for c in found if c.kind == "drift"):
        st.markdown(f"⚠ drift: **{ui.literal(chip.term)}** — {ui.literal(chip.reason or 'no reason recorded')}")
    reasons = row[prefix + "failure_reasons"] or []
    if reasons:
        st.markdown(f"**{reasons_heading(row[prefix + 'passed'])}:** " + " · ".join(ui.literal(r) for r in reasons))


def reasons_heading(passed: bool | None) -> str:
    """The heading of a query's recorded reasons, true to its status: a passing query's are
    notes (an underweight term that did not sink it), never why it fails."""
    return "Notes" if passed is None else "Noted, though it passes" if passed else "Why it fails"


def _chip_row(title: str, found: list[Chip]) -> None:
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.caption(title, width="content")
        if not found:
            st.caption("none", width="content")
        for chip in found:
            st.badge(chip_label(chip), color=KINDS[chip.kind].color, help=chip_help(chip))


# ---------------------------------------------------------------- a run's flagged items (Regressions, Sign-off)


def opened_for(run_id: str) -> bool:
    """Whether the URL opens a query of this run (`run` and `query`)."""
    return opened() is not None and st.query_params.get("run") == run_id


FLAGGED_COLUMNS = ["kind", "query_id", "query", "detail"]
QUERY_ITEM_KINDS = ("regressed query", "failed critical query", "drift term")
"""The kinds of flagged item store.flagged_items gives, each about one query."""


def flagged(run_id: str, baseline_id: str | None, items, key: str) -> None:
    """A run's flagged items (a frame of FLAGGED_COLUMNS, or signoff.FlaggedItem objects):
    the open query side by side, Previous/Next through the flagged queries, or the table to
    open one from."""
    if not isinstance(items, pd.DataFrame):
        items = pd.DataFrame([{c: getattr(i, c) for c in FLAGGED_COLUMNS} for i in items], columns=FLAGGED_COLUMNS)
    # the items about one query (store.flagged_items'); a run's own (an unapproved golden
    # revision, an unvalidated judge) have no query to open and are listed with the acknowledgements
    items = items[items["kind"].isin(QUERY_ITEM_KINDS)]
    ids = list(dict.fromkeys(items["query_id"]))  # each flagged query once, in the items' order
    baseline_id = baseline_id if isinstance(baseline_id, str) else None
    query_id = opened() if opened_for(run_id) else None
    if query_id is not None:
        if panel(run_id, baseline_id, query_id, walk_in(ids, query_id), key, "this run's flagged queries",
                 extra={"run": run_id}):
            return
        st.warning(f"Unknown query id {ui.literal(query_id)} in the link: this run has no such query.")
    shown = items[FLAGGED_COLUMNS].reset_index(drop=True)
    st.caption("Select a row to open the query side by side.")
    st.dataframe(shown, hide_index=True, width="stretch", height=min(38 + 35 * len(shown), 300),
                 **selectable(f"{key}_table_{run_id}", list(shown["query_id"]), run=run_id))
