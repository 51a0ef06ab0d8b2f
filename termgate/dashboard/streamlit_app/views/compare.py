"""Compare: a run and its baseline, query by query, one query side by side
(deep link /compare?run=&baseline=&query=)."""

import streamlit as st

from termgate.dashboard import compare_view, data, side_by_side, ui
from termgate.dashboard.compare_view import filters_from_widgets, render_overview, render_queries

st.title("Compare")
runs = data.runs()
if runs.empty:
    ui.empty_store_notice()
    st.stop()
picked = compare_view.pick_runs(runs)
if picked is None:
    st.stop()
run_id, baseline_id = picked
data.open_query(run_id, baseline_id, side_by_side.opened())  # read while the pair is read

# A link that opens a query lands on it: the overview folds away (and is not computed while
# folded) until the query is closed.
if side_by_side.opened() is None:
    st.session_state["cmp_landed"] = False
if st.session_state.setdefault("cmp_landed", True):
    overview = st.expander("Overview: metrics and charts of the pair", key="cmp_overview", on_change="rerun")
    if overview.open:
        with overview:
            render_overview(run_id, baseline_id)
else:
    render_overview(run_id, baseline_id)

flt = filters_from_widgets(data.domains(run_id, baseline_id), data.retrieval(run_id) is not None)
render_queries(run_id, baseline_id, flt)
