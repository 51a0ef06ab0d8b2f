"""The Compare page's filter bar and paged side-by-side table (kept out of the page file)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from evalcore.comparison import SORTS, STATUSES, CompareFilter

from . import data, ui

PAGE_SIZE = 50
LIST_COLUMNS = ["gained_correct", "lost_correct", "new_wrong", "new_drift", "tp", "fp", "fn",
                "base_tp", "base_fp", "base_fn", "drift_terms", "failure_reasons"]


def render_intervals(stats: dict) -> None:
    """Mean per-query deltas with their 95% bootstrap intervals, p-values and the MDE."""
    import plotly.graph_objects as go

    names = [("F1", stats["f1"]), ("precision", stats["precision"]), ("recall", stats["recall"])]
    names += [(f"F1 · {d}", v["f1"]) for d, v in stats["by_domain"].items()]  # domains come from data
    shown = [(n, v) for n, v in names if v["ci_low"] is not None]
    if not shown:
        st.caption("Too few paired queries for intervals.")
        return
    fig = go.Figure(go.Scatter(
        x=[v["mean_delta"] for _, v in shown], y=[ui.chart_text(n) for n, _ in shown], mode="markers",
        marker=dict(size=10, color=[ui.STATUS_COLORS["regressed"] if v["ci_high"] < 0 else
                                    ui.STATUS_COLORS["improved"] if v["ci_low"] > 0 else ui.STATUS_COLORS["unchanged"]
                                    for _, v in shown]),
        error_x=dict(type="data", symmetric=False, array=[v["ci_high"] - v["mean_delta"] for _, v in shown],
                     arrayminus=[v["mean_delta"] - v["ci_low"] for _, v in shown]),
        customdata=[[v["p_value"], v.get("p_value_holm"), v["n"]] for _, v in shown],
        hovertemplate="%{y}: mean Δ %{x:+.4f}<br>p = %{customdata[0]:.4f} (Holm %{customdata[1]})<br>"
                      "n = %{customdata[2]}<extra></extra>"))
    fig.add_vline(x=0, line_dash="dot", line_color="#8c959f")
    fig.update_layout(height=60 + 34 * len(shown), margin=dict(l=10, r=10, t=10, b=10),
                      xaxis_title="mean per-query change with 95% bootstrap interval", yaxis_autorange="reversed")
    cols = st.columns([3, 2])
    cols[0].plotly_chart(fig, width="stretch")
    lines = [f"**{ui.literal(n)}**: {v['mean_delta']:+.4f} [{v['ci_low']:+.4f}, {v['ci_high']:+.4f}], p = {v['p_value']:.4f}"
             + (f" (Holm {v['p_value_holm']:.4f})" if v.get("p_value_holm") is not None else "") for n, v in shown]
    cols[1].markdown("  \n".join(lines))
    if stats.get("mde_warning"):
        cols[1].warning(f"Golden set too small: {stats['mde_warning']}.")
    elif stats.get("mde_f1") is not None:
        cols[1].caption(f"Minimum detectable F1 change at this size: {stats['mde_f1']:.3f} (80% power).")


def filters_from_widgets(domains: list[str]) -> CompareFilter:
    st.subheader("Queries")
    row = st.columns([3, 2, 2, 3])
    statuses = row[0].multiselect("Status", STATUSES, key="cmp_status", placeholder="all statuses")
    domain = row[1].selectbox("Domain", ["all"] + domains, key="cmp_domain")
    sort = row[2].selectbox("Sort", list(SORTS), key="cmp_sort")
    text = row[3].text_input("Search query text or id", key="cmp_text")
    flags = st.columns(4)
    failed = flags[0].checkbox("Failed only", key="cmp_failed")
    critical = flags[1].checkbox("Critical only", key="cmp_critical")
    drift = flags[2].checkbox("With drift terms", key="cmp_drift")
    return CompareFilter(tuple(statuses), failed, critical, drift, None if domain == "all" else domain, text, sort)


def _table(df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for col in LIST_COLUMNS:
        out[col] = out[col].map(ui.terms)
    out["critical"] = out["critical"].map(lambda c: "⚑" if c else "")
    # what a reviewer reads first fits in 1280 px: the F1 change and the term diff
    return out[["status", "query_id", "query", "critical", "base_f1", "f1", "delta_f1", "lost_correct",
                "new_wrong", "new_drift", "gained_correct", "base_precision", "precision", "base_recall", "recall",
                "tp", "fp", "fn", "base_tp", "base_fp", "base_fn", "drift_terms", "failure_reasons", "domain"]]


def render_rows(run_id: str, baseline_id: str, flt: CompareFilter) -> None:
    _, total = data.compare_page(run_id, baseline_id, flt, 0, 1)
    pages = max(1, -(-total // PAGE_SIZE))
    page = st.number_input(f"Page (of {pages})", min_value=1, max_value=pages, value=1, key="cmp_page") \
        if pages > 1 else 1
    df, total = data.compare_page(run_id, baseline_id, flt, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    st.caption(f"{total:,} queries match · showing {len(df)} · baseline left, candidate right · "
               "lost correct / new wrong / new drift are the term diff against the baseline")
    if df.empty:
        st.info("No query matches these filters.")
        return
    styled = _table(df).style.map(ui.color_status, subset=["status"]).map(
        lambda v: f"color: {ui.DRIFT_COLOR}; font-weight: 600" if v else "", subset=["new_drift", "drift_terms"])
    number = lambda label: st.column_config.NumberColumn(label, format="%.3f", width=62)  # noqa: E731
    st.dataframe(styled, hide_index=True, width="stretch", height=min(38 + 35 * len(df), 740),
                 column_config={"base_f1": number("F1 base"), "f1": number("F1"), "delta_f1": number("ΔF1"),
                                "base_precision": number("P base"), "precision": number("P"),
                                "base_recall": number("R base"), "recall": number("R"),
                                "critical": st.column_config.TextColumn("crit", width=40),
                                "query_id": st.column_config.TextColumn("query_id", width=80),
                                "query": st.column_config.TextColumn("query", width=150),
                                "lost_correct": st.column_config.TextColumn("lost correct", width=180),
                                "new_wrong": st.column_config.TextColumn("new wrong", width=150),
                                "new_drift": st.column_config.TextColumn("new drift", width=110),
                                "gained_correct": st.column_config.TextColumn("gained correct", width=150),
                                "status": st.column_config.TextColumn("status", width=85),
                                "tp": "TP", "fp": "FP", "fn": "FN", "base_tp": "TP base", "base_fp": "FP base",
                                "base_fn": "FN base", "drift_terms": "drift terms",
                                "failure_reasons": "why it fails"})
    st.page_link("views/query.py", label="Open one query's history", icon=":material/history:",
                 query_params={"query_id": str(df["query_id"].iloc[0])})
