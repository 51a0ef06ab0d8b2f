"""The Compare page's run pickers, filter bar, paged table and open query (kept out of the page file)."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from termgate.comparison import RETRIEVAL_SORTS, SORTS, STATUSES, CompareFilter, default_baseline, golden_sets_differ
from termgate.scoring.regression import regression_label

from . import data, retrieval_view, side_by_side, ui

PAGE_SIZE = 50
LIST_COLUMNS = ["gained_correct", "lost_correct", "new_wrong", "new_drift", "tp", "fp", "fn",
                "base_tp", "base_fp", "base_fn", "drift_terms", "failure_reasons"]


def _forget_baseline() -> None:
    """A new candidate gets its own default baseline, not the one picked for the last."""
    st.session_state.pop("cmp_base", None)


def pick_runs(runs: pd.DataFrame) -> tuple[str, str] | None:
    """The candidate and baseline pickers, from the link (run, baseline) when it names them;
    a baseline the link does not name is default_baseline's, and the page says which. None
    when there is nothing to compare yet."""
    ids = list(runs["run_id"])
    by_id = runs.set_index("run_id")
    label = lambda rid: ui.run_label(by_id.loc[rid].to_dict() | {"run_id": rid})  # noqa: E731
    wanted_run, wanted_base = st.query_params.get("run"), st.query_params.get("baseline")
    for key, wanted in (("run", wanted_run), ("baseline", wanted_base)):
        if wanted and wanted not in by_id.index:
            st.warning(f"Unknown {key} id {ui.literal(wanted)} in the link: it is not in this store. Pick one below.")
    if wanted_run and wanted_run == wanted_base:
        st.warning("The link names the same run as candidate and baseline: pick another baseline below.")
    left, right = st.columns(2)
    run_id = left.selectbox("Run (candidate)", ids, index=ids.index(wanted_run) if wanted_run in by_id.index else 0,
                            format_func=label, key="cmp_run", on_change=_forget_baseline)
    base_options = [i for i in ids if i != run_id]
    if not base_options:
        st.info("Only one run is stored: record another to compare.")
        return None
    choice = default_baseline(runs, run_id)
    linked = wanted_base if wanted_base in base_options and wanted_run in (None, run_id) else None
    default = linked or choice.baseline_id
    baseline_id = right.selectbox("Baseline", base_options, format_func=label, key="cmp_base",
                                  index=base_options.index(default) if default in base_options else None,
                                  placeholder="pick a baseline")
    if baseline_id is None:
        st.info(f"No baseline chosen: {ui.literal(choice.why)}. Pick one above.")
        return None
    why = ("named in the link" if baseline_id == linked else choice.why if baseline_id == choice.baseline_id
           else "picked here")
    st.caption(f"Baseline: {ui.literal(why)}.")
    warning = golden_sets_differ(runs, run_id, baseline_id)
    if warning:
        st.warning(ui.literal(warning))
    if (st.query_params.get("run"), st.query_params.get("baseline")) != (run_id, baseline_id):
        st.query_params.update({"run": run_id, "baseline": baseline_id})  # shareable URL
    return run_id, baseline_id


def render_overview(run_id: str, baseline_id: str) -> None:
    """The pair's macro metrics, status counts, intervals and the two F1 charts."""
    import plotly.express as px

    if rules := data.pair(run_id, baseline_id).rules_changed:
        st.warning(ui.literal(rules))
    head = data.headline(run_id, baseline_id)
    metrics = st.columns(4)
    for col, (name, key) in zip(metrics, (("Precision", "precision"), ("Recall", "recall"), ("F1", "f1"),
                                          ("Drift score", "drift"))):
        value, base = head[key], head[f"base_{key}"]
        col.metric(name, "—" if value is None else f"{value:.3f}",
                   None if value is None or base is None else f"{value - base:+.3f}")
    st.markdown(" · ".join(
        f"<span style='color:{ui.STATUS_COLORS[s]};font-weight:600'>{head[s]} {s}</span>" for s in STATUSES)
        + f" · {head['failed']} failed · {head['critical_failed']} critical failed · "
          f"<span style='color:{ui.DRIFT_COLOR};font-weight:600'>{head['drift_terms'] or 0} drift terms</span>",
        unsafe_allow_html=True)
    retrieval_view.overview(run_id, baseline_id)

    render_intervals(data.pair_statistics(run_id, baseline_id))

    points, total = data.points(run_id, baseline_id)
    points = points.assign(query=ui.chart_column(points["query"]), query_id=ui.chart_column(points["query_id"]))
    charts = st.columns(2)
    scatter = px.scatter(points, x="base_f1", y="f1", color="status", color_discrete_map=ui.STATUS_COLORS,
                         hover_name="query", hover_data={"query_id": True, "delta_f1": ":.3f"},
                         labels={"base_f1": "baseline F1", "f1": "candidate F1"}, render_mode="webgl")
    scatter.add_shape(type="line", x0=0, y0=0, x1=1, y1=1, line=dict(color="#8c959f", dash="dot"))
    scatter.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10), title="F1 per query")
    charts[0].plotly_chart(scatter, width="stretch")
    hist = px.histogram(points, x="delta_f1", color="status", color_discrete_map=ui.STATUS_COLORS, nbins=40,
                        labels={"delta_f1": "F1 change (candidate − baseline)"})
    hist.update_layout(height=340, margin=dict(l=10, r=10, t=30, b=10), title="Distribution of F1 changes")
    charts[1].plotly_chart(hist, width="stretch")
    if total > len(points):
        st.caption(f"Charts show {len(points):,} of {total:,} shared queries (every regressed and improved one).")


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


def filters_from_widgets(domains: list[str], retrieval: bool = False) -> CompareFilter:
    """The filter bar; `retrieval`: the candidate measured retrieval, so its nDCG change sorts too."""
    st.subheader("Queries")
    row = st.columns([3, 2, 2, 3])
    statuses = row[0].multiselect("Status", STATUSES, key="cmp_status", placeholder="all statuses")
    domain = row[1].selectbox("Domain", ["all"] + domains, key="cmp_domain")
    sorts = [s for s in SORTS if retrieval or s not in RETRIEVAL_SORTS]
    if st.session_state.get("cmp_sort") not in sorts:  # an nDCG sort kept from a run that had retrieval
        st.session_state.pop("cmp_sort", None)
    sort = row[2].selectbox("Sort", sorts, key="cmp_sort")
    text = row[3].text_input("Search query text or id", key="cmp_text")
    flags = st.columns(4)
    failed = flags[0].checkbox("Failed only", key="cmp_failed")
    critical = flags[1].checkbox("Critical only", key="cmp_critical")
    drift = flags[2].checkbox("With drift terms", key="cmp_drift")
    return CompareFilter(tuple(statuses), failed, critical, drift, None if domain == "all" else domain, text, sort)


def _table(df: pd.DataFrame, retrieval: bool = False) -> pd.DataFrame:
    """The rows as shown; with `retrieval`, the candidate's nDCG change and retrieval status beside ΔF1."""
    out = df.copy()
    for col in LIST_COLUMNS:
        out[col] = out[col].map(ui.terms)
    out["critical"] = out["critical"].map(lambda c: "⚑" if c else "")
    out["status"] = [regression_label(*v) for v in zip(out["status"], out["f1"], out["base_f1"])]
    # what a reviewer reads first fits in 1280 px: the F1 change and the term diff
    beside = ["ndcg_delta", "retrieval_status"] if retrieval else []
    return out[["status", "query_id", "query", "critical", "base_f1", "f1", "delta_f1", *beside, "lost_correct",
                "new_wrong", "new_drift", "gained_correct", "base_precision", "precision", "base_recall", "recall",
                "tp", "fp", "fn", "base_tp", "base_fp", "base_fn", "drift_terms", "failure_reasons", "domain"]]


def render_queries(run_id: str, baseline_id: str, flt: CompareFilter) -> None:
    """The open query side by side (the URL's `query`), else the table to open one from."""
    query_id = side_by_side.opened()
    if query_id is not None:
        walk = data.walk(run_id, baseline_id, flt, query_id)
        back = lambda: st.session_state.update(cmp_page=(walk.position - 1) // PAGE_SIZE + 1)  # noqa: E731
        if side_by_side.panel(run_id, baseline_id, query_id, walk, "cmp", on_back=back if walk.position else None):
            return
        st.warning(f"Unknown query id {ui.literal(query_id)} in the link: neither run has it. Pick one below.")
    render_rows(run_id, baseline_id, flt)


def render_rows(run_id: str, baseline_id: str, flt: CompareFilter) -> None:
    _, total = data.compare_page(run_id, baseline_id, flt, 0, 1)
    pages = max(1, -(-total // PAGE_SIZE))
    page = st.number_input(f"Page (of {pages})", min_value=1, max_value=pages, key="cmp_page") \
        if pages > 1 else 1
    df, total = data.compare_page(run_id, baseline_id, flt, (page - 1) * PAGE_SIZE, PAGE_SIZE)
    st.caption(f"{total:,} queries match · showing {len(df)} · select a row to open the query side by side · "
               "lost correct / new wrong / new drift are the term diff against the baseline")
    if df.empty:
        st.info("No query matches these filters.")
        return
    summary = data.retrieval(run_id)
    styled = _table(df, summary is not None).style.map(
        ui.color_status, subset=["status", "retrieval_status"] if summary is not None else ["status"]).map(
        lambda v: f"color: {ui.DRIFT_COLOR}; font-weight: 600" if v else "", subset=["new_drift", "drift_terms"])
    number = lambda label: st.column_config.NumberColumn(label, format="%.3f", width=62)  # noqa: E731
    st.dataframe(styled, hide_index=True, width="stretch", height=min(38 + 35 * len(df), 740),
                 **side_by_side.selectable("cmp_table", list(df["query_id"])),
                 column_config={"base_f1": number("F1 base"), "f1": number("F1"), "delta_f1": number("ΔF1"),
                                "ndcg_delta": number(f"Δ{summary['labels']['ndcg']}" if summary else "ΔnDCG"),
                                "retrieval_status": st.column_config.TextColumn("retrieval", width=85),
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
                                "failure_reasons": "reasons"})  # a passing query has notes too
    st.page_link("views/query.py", label="Open one query's history", icon=":material/history:",
                 query_params={"query_id": str(df["query_id"].iloc[0])})
