"""Regressions: every flagged item of runs not yet releasable, grouped by run (deep link
/regressions?run=RUN opens that run's group; &query= opens one of its queries side by side)."""

import streamlit as st

from termgate.dashboard import data, release_data, side_by_side, ui
from termgate.text import counted

st.title("Regressions")
st.caption("Regressed queries, failed critical queries and drift terms of every run that is not "
           "signed off: gate fail, or gate review without the approvals it needs (awaiting sign-off or rejected).")
runs = data.runs()
if runs.empty:
    ui.empty_store_notice()
    st.stop()
states = release_data.sign_off_states(runs["run_id"])
open_runs = runs[runs["gate_decision"].isin(["fail", "review"])
                 & ~runs["run_id"].map(states).isin(["releasable", "approved"])]
kinds = st.multiselect("Show", ["regressed query", "failed critical query", "drift term"],
                       default=["regressed query", "failed critical query", "drift term"], key="reg_kinds")
items = data.flagged(list(open_runs["run_id"]))
items = items[items["kind"].isin(kinds)]
if items.empty:
    st.success("Nothing flagged in runs awaiting a decision.")
    st.stop()
st.caption(f"{counted(len(items), 'flagged item')} in {counted(items['run_id'].nunique(), 'run')}")
linked = st.query_params.get("run")  # /regressions?run=RUN opens that run's group, first, and only it
if linked and linked not in set(items["run_id"]):
    st.info(f"Run {ui.literal(linked)} in the link has nothing flagged here: it is not in this store, it passed its "
            "gate, it is signed off, or the kinds shown leave its items out.")
    linked = None
groups = sorted(items.groupby("run_id", sort=False), key=lambda g: g[0] != linked)  # stable: the rest keep order
for run_id, group in groups:
    first = group.iloc[0]
    # the gate beside the sign-off state: a rejected review run says so
    named = ui.run_label(first.to_dict(), unnamed=None)  # what the run has of name, version and id
    label = f"{first['gate_decision'].upper()} · {states[run_id]} — {named} — {len(group)} items"
    opened = run_id == linked if linked else len(items) < 60 or side_by_side.opened_for(run_id)
    with st.expander(ui.literal(label), expanded=opened):
        links = st.columns(2)
        if isinstance(first["baseline_id"], str):
            links[0].page_link("views/compare.py", label="Open in Compare", icon=":material/compare_arrows:",
                               query_params={"run": run_id, "baseline": first["baseline_id"]})
        if first["gate_decision"] == "review":
            links[1].page_link("views/signoff.py", label="Sign off", icon=":material/verified_user:",
                               query_params={"run": run_id})
        side_by_side.flagged(run_id, first["baseline_id"], group, "reg")
