"""Compare: a run and its baseline side by side, query by query (deep link /compare?run=&baseline=)."""

import plotly.express as px
import streamlit as st

from dashboard import data, ui
from dashboard.compare_view import filters_from_widgets, render_intervals, render_rows
from evalcore.comparison import STATUSES

st.title("Compare")
runs = data.runs()
if runs.empty:
    ui.empty_store_notice()
    st.stop()
ids = list(runs["run_id"])
by_id = runs.set_index("run_id")
label = lambda rid: ui.run_label(by_id.loc[rid].to_dict() | {"run_id": rid})  # noqa: E731

wanted_run, wanted_base = st.query_params.get("run"), st.query_params.get("baseline")
for key, wanted in (("run", wanted_run), ("baseline", wanted_base)):
    if wanted and wanted not in by_id.index:
        st.warning(f"Unknown {key} id {ui.literal(wanted)} in the link: it is not in this store. Pick one below.")
if wanted_run and wanted_run == wanted_base:
    st.warning("The link names the same run as candidate and baseline: pick another baseline below.")
run_default = wanted_run if wanted_run in by_id.index else ids[0]
recorded = by_id.loc[run_default, "baseline_id"]
base_default = wanted_base if wanted_base in by_id.index else (recorded if recorded in by_id.index else None)

left, right = st.columns(2)
run_id = left.selectbox("Run (candidate)", ids, index=ids.index(run_default), format_func=label, key="cmp_run")
base_options = [i for i in ids if i != run_id]
if not base_options:
    st.info("Only one run is stored: record another to compare.")
    st.stop()
base_index = base_options.index(base_default) if base_default in base_options else 0
baseline_id = right.selectbox("Baseline", base_options, index=base_index, format_func=label, key="cmp_base")
if (st.query_params.get("run"), st.query_params.get("baseline")) != (run_id, baseline_id):
    st.query_params.update({"run": run_id, "baseline": baseline_id})  # shareable URL

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

flt = filters_from_widgets(data.domains(run_id))
render_rows(run_id, baseline_id, flt)
