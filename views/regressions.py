"""Regressions: every flagged item of runs not yet releasable, grouped by run."""

import streamlit as st

from dashboard import data, ui

st.title("Regressions")
st.caption("Regressed queries, failed critical queries and drift terms of every run whose gate is "
           "fail or review (runs that are not releasable without a decision).")
runs = data.runs()
if runs.empty:
    ui.empty_store_notice()
    st.stop()
open_runs = runs[runs["gate_decision"].isin(["fail", "review"])]
kinds = st.multiselect("Show", ["regressed query", "failed critical query", "drift term"],
                       default=["regressed query", "failed critical query", "drift term"], key="reg_kinds")
items = data.flagged(list(open_runs["run_id"]))
items = items[items["kind"].isin(kinds)]
if items.empty:
    st.success("Nothing flagged in runs awaiting a decision.")
    st.stop()
st.caption(f"{len(items)} flagged items in {items['run_id'].nunique()} runs")
for run_id, group in items.groupby("run_id", sort=False):
    first = group.iloc[0]
    with st.expander(f"{ui.gate_badge(first['gate_decision'])} {first['name'] or ''} · {first['prompt_version'] or ''} "
                     f"· {run_id} — {len(group)} items", expanded=len(items) < 60):
        if isinstance(first["baseline_id"], str):
            st.page_link("views/compare.py", label="Open in Compare", icon=":material/compare_arrows:",
                         query_params={"run": run_id, "baseline": first["baseline_id"]})
        st.dataframe(group[["kind", "query_id", "query", "detail"]], hide_index=True, width="stretch")
