"""UI conventions shared by every page: one colour per meaning, labels, small renderers."""

from __future__ import annotations

import streamlit as st

# The same colour means the same thing on every page and chart.
STATUS_COLORS = {"regressed": "#cf222e", "improved": "#1a7f37", "unchanged": "#8c959f",
                 "added": "#0969da", "removed": "#6e7781"}
DRIFT_COLOR = "#8250df"
GATE_COLORS = {"pass": "#1a7f37", "fail": "#cf222e", "review": "#9a6700"}


def run_label(row) -> str:
    """`medical demo · v2 · 20261129-225454-b9cf7a` for pickers."""
    name = row.get("name") if isinstance(row.get("name"), str) else "run"
    version = row.get("prompt_version") if isinstance(row.get("prompt_version"), str) else None
    return " · ".join(str(p) for p in (name, version, row["run_id"]) if p)


def terms(values) -> str:
    """A list column as readable text."""
    if isinstance(values, str):
        return values
    try:
        return ", ".join(str(v) for v in values)
    except TypeError:  # None, NaN, pd.NA: a side of the pair without this query
        return ""


def color_gate(value: str) -> str:
    color = GATE_COLORS.get(str(value).lower())
    return f"color: {color}; font-weight: 600" if color else ""


def color_status(value: str) -> str:
    color = STATUS_COLORS.get(value)
    return f"color: {color}; font-weight: 600" if color else ""


def empty_store_notice() -> None:
    st.info("No runs yet. Record one with `evalcore evaluate --golden G.jsonl --generated C.jsonl`, "
            "load the demo with `make run`, or use the Import page.")
