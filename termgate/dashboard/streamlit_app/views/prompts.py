"""Prompts: compare prompt versions evaluated on the same dataset (deep link /prompts?dataset=HASH)."""

import plotly.express as px
import streamlit as st

from termgate.dashboard import prompts_data as data
from termgate.dashboard import ui
from termgate.demo_prompts import is_demo

st.title("Prompt versions")
datasets = data.datasets()
if datasets.empty:
    st.info("No prompt evaluations yet. Record one with "
            "`termgate prompt-eval run --dataset cases.json --prompt prompt.txt --model MODEL`.")
    st.stop()

hashes = list(datasets["dataset_hash"])
labels = {r.dataset_hash: f"{r.dataset_path or 'dataset'} · {r.dataset_hash[:12]} · {r.versions} version(s)"
          for r in datasets.itertuples()}
wanted = st.query_params.get("dataset")
matches = [h for h in hashes if wanted and h.startswith(wanted.lower())]
if wanted and not matches:
    st.warning(f"Unknown dataset {ui.literal(wanted)} in the link: no prompt evaluation in this store uses it. "
               "Pick one below.")
chosen = st.selectbox("Dataset", hashes, index=hashes.index(matches[0]) if matches else 0, format_func=labels.get,
                      key="prompts_dataset")
if st.query_params.get("dataset") != chosen[:12]:
    st.query_params["dataset"] = chosen[:12]  # shareable URL

versions = data.versions(chosen)
if any(is_demo(v.name, v.model) for v in versions.itertuples()):
    st.info("Demo data: hand-written sample outputs and judge verdicts for three versions of a query-expansion "
            "prompt (data/demo/prompts), stored by `termgate demo`; no model was called.", icon=":material/science:")
spread = versions["stdev_score"].map(lambda s: "" if s != s else f" ± {s:.2f}")  # NaN: fewer than 2 scores
table = versions.assign(average=versions["average_score"].map(lambda a: "—" if a != a else f"{a:.2f}") + spread)
st.dataframe(table[["version", "average", "pass_rate", "scored_cases", "errored_cases", "pass_threshold", "name",
                    "model", "judge_model", "created_at", "eval_id"]], hide_index=True, width="stretch",
             column_config={"average": "average ± sd", "pass_rate": st.column_config.NumberColumn("pass rate",
                                                                                                  format="percent"),
                            "scored_cases": "scored", "errored_cases": "errored", "pass_threshold": "threshold",
                            "judge_model": "judge"})

matrix = data.matrix(chosen)
order = list(versions["version"])
st.subheader("Score per case")
heat = px.imshow(matrix.reindex(columns=order), x=[ui.chart_text(v) for v in order], y=[f"case {i + 1}" for i in matrix.index], zmin=1, zmax=10,
                 color_continuous_scale="RdYlGn", text_auto=".1f", aspect="auto",
                 labels={"x": "prompt version", "y": "", "color": "score"})
heat.update_layout(height=min(120 + 28 * len(matrix), 900), margin=dict(l=10, r=10, t=10, b=10))
st.plotly_chart(heat, width="stretch")

scores = data.scores(chosen)
st.subheader("Spread of scores")
shown = scores.dropna(subset=["score"]).assign(version=lambda d: ui.chart_column(d["version"]))
box = px.box(shown, x="version", y="score", points="all", hover_data=["case_index"],
             category_orders={"version": [ui.chart_text(v) for v in order]}, labels={"version": "prompt version"})
box.update_layout(height=340, margin=dict(l=10, r=10, t=10, b=10), yaxis_range=[0.5, 10.5])
st.plotly_chart(box, width="stretch")

with st.expander("Scores per case as a table (– = errored, unscored)"):
    scenarios = scores.drop_duplicates("case_index").set_index("case_index")["scenario"]
    st.dataframe(matrix.reindex(columns=order).assign(scenario=scenarios).reset_index()[["case_index", "scenario",
                 *order]].assign(case_index=lambda d: d["case_index"] + 1),
                 hide_index=True, width="stretch", column_config={"case_index": "case"})
