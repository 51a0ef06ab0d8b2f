"""Runs: every run with its gate and metrics, the trend across prompt versions, open a run."""

import plotly.express as px
import streamlit as st

from termgate.dashboard import agreement_view, data, ui

st.title("Runs")
runs = data.runs()
if runs.empty:
    ui.empty_store_notice()
    st.stop()

states = data.release_states(runs["run_id"])
table = runs.assign(
    gate=runs["gate_decision"].str.upper(),
    domains=runs["domains"].map(ui.terms),
    sign_off=runs["run_id"].map(states),
)
# What a reader compares runs by comes first and narrow, so F1 and drift show without a
# horizontal scroll from 1280 px up; when, on what and against what come last.
metric = lambda label: st.column_config.NumberColumn(label, format="%.3f", width=56)  # noqa: E731
count = lambda label: st.column_config.NumberColumn(label, width=64)  # noqa: E731
st.dataframe(
    table[["run_id", "name", "prompt_version", "gate", "aggregate_f1", "mean_term_drift_score", "aggregate_precision",
           "aggregate_recall", "sign_off", "failed", "errored", "regressed", "improved", "total_queries", "domains",
           "created_at", "baseline_id"]].style.map(ui.color_gate, subset=["gate"]),
    hide_index=True, width="stretch",
    column_config={"run_id": st.column_config.TextColumn("run_id", width=170),
                   "name": st.column_config.TextColumn("name", width=120),
                   "prompt_version": st.column_config.TextColumn("prompt", width=60),
                   "gate": st.column_config.TextColumn("gate", width=66),
                   "aggregate_f1": metric("F1"), "mean_term_drift_score": metric("drift"),
                   "aggregate_precision": metric("P"), "aggregate_recall": metric("R"),
                   "sign_off": st.column_config.TextColumn("sign-off", width=130),
                   "failed": count("failed"), "errored": count("errored"), "regressed": count("regressed"),
                   "improved": count("improved"), "total_queries": count("queries")})

st.subheader("Trend across prompt versions")
golden_sets = runs.drop_duplicates("golden_name")
labels = {r.golden_name: r.golden_name for r in golden_sets.itertuples()}
golden = st.selectbox("Golden set", list(labels), format_func=labels.get, key="runs_golden")
trend = data.trend(golden)
long = trend.melt(id_vars=["prompt_version", "run_id"], value_vars=[
    "aggregate_precision", "aggregate_recall", "aggregate_f1", "mean_term_drift_score"],
    var_name="metric", value_name="value")
long["prompt_version"] = ui.chart_column(long["prompt_version"])  # ticks and hover render HTML
long["run_id"] = ui.chart_column(long["run_id"])
long["metric"] = long["metric"].map({"aggregate_precision": "precision", "aggregate_recall": "recall",
                                     "aggregate_f1": "F1", "mean_term_drift_score": "drift score"})
fig = px.line(long, x="prompt_version", y="value", color="metric", markers=True, hover_data=["run_id"])
fig.update_layout(height=320, margin=dict(l=10, r=10, t=10, b=10), yaxis_range=[0, 1.02],
                  xaxis_title="prompt version (oldest first)", yaxis_title=None)
st.plotly_chart(fig, width="stretch")

st.subheader("Open a run")
chosen = st.selectbox("Run", runs["run_id"], key="runs_open",
                      index=int(runs.index[runs["run_id"] == st.query_params.get("run")][0])
                      if st.query_params.get("run") in set(runs["run_id"]) else 0,
                      format_func=lambda rid: ui.run_label(runs.set_index("run_id").loc[rid].to_dict() | {"run_id": rid}))
row = runs.set_index("run_id").loc[chosen]
st.markdown(f"**{ui.literal(row['gate_decision'].upper())}** · {row['total_queries']} queries · "
            f"F1 {row['aggregate_f1']:.3f} · drift judge {ui.literal(row['drift_judge'])} · "
            f"by {ui.literal(row['author'])}")
if row["errored"]:
    st.warning(f"{row['errored']} errored items: the evaluation is incomplete (a rerun retries exactly those).")
    for item in data.errored(chosen).itertuples():
        st.markdown(f"**{ui.literal(item.query_id)}** {ui.literal(item.query)} · error: {ui.literal(item.error)}")
baseline = row["baseline_id"] if isinstance(row["baseline_id"], str) else None
cols = st.columns(3)
if baseline:
    cols[0].page_link("views/compare.py", label="Compare with its baseline",
                      query_params={"run": chosen, "baseline": baseline}, icon=":material/compare_arrows:")
else:
    cols[0].caption("No baseline recorded: pick one on the Compare page.")
    cols[0].page_link("views/compare.py", label="Compare", query_params={"run": chosen}, icon=":material/compare_arrows:")
cols[1].page_link("views/regressions.py", label="Flagged items", icon=":material/flag:")
if row["gate_decision"] == "review" or len(row["high_risk_domains"]):
    cols[2].page_link("views/signoff.py", label="Sign-off", icon=":material/verified_user:", query_params={"run": chosen})

agreement_view.section()
