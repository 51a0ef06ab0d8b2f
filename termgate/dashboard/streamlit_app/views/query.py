"""Query history: one query across every run — how its expansion and metrics changed."""

import pandas as pd
import plotly.express as px
import streamlit as st

from termgate.dashboard import data, ui

st.title("Query history")
search = st.text_input("Find a query (id or text)", key="qh_search")
found = data.query_ids(search)
if found.empty:
    st.info("No stored query matches." if data.store_exists() else "No runs yet.")
    st.stop()
options = list(found["query_id"])
wanted = st.query_params.get("query_id")
if wanted and wanted not in options and not search:
    st.warning(f"Unknown query id {ui.literal(wanted)} in the link.")
index = options.index(wanted) if wanted in options else 0
texts = dict(zip(found["query_id"], found["query"]))
query_id = st.selectbox("Query", options, index=index, format_func=lambda q: f"{q} — {texts[q]}", key="qh_query")
if st.query_params.get("query_id") != query_id:
    st.query_params["query_id"] = query_id

history = data.history(query_id)
st.caption(f"{len(history)} run{'' if len(history) == 1 else 's'} contain{'s' if len(history) == 1 else ''} "
           f"{ui.literal(query_id)}")
entry = data.golden_entry(history["run_id"].iloc[-1], query_id) if not history.empty else None
if entry is not None:
    with st.expander(f"Golden entry (line {entry[0]} of the newest run's golden set)"):
        st.code(entry[1], language="json", wrap_lines=True)
# One point per run at its time (repeated prompt versions no longer zigzag over categories),
# one small chart per metric so equal values never hide a line behind another.
metrics = {"precision": "precision", "recall": "recall", "f1": "F1", "term_drift_score": "drift score"}
chart = history[list(metrics)].assign(
    run_time=pd.to_datetime(history["created_at"], utc=True, format="ISO8601"),
    run_id=ui.chart_column(history["run_id"]),
    prompt_version=ui.chart_column(history["prompt_version"].fillna("-")),
    name=ui.chart_column(history["name"].fillna("-")))
long = chart.melt(id_vars=["run_time", "run_id", "prompt_version", "name"], value_vars=list(metrics),
                  var_name="metric").assign(metric=lambda d: d["metric"].map(metrics))
fig = px.line(long, x="run_time", y="value", color="metric", facet_col="metric", facet_col_wrap=2, markers=True,
              category_orders={"metric": list(metrics.values())},
              hover_data={"run_id": True, "prompt_version": True, "name": True, "metric": False, "value": ":.3f"},
              labels={"run_time": "run time", "run_id": "run", "prompt_version": "prompt"})
fig.for_each_annotation(lambda a: a.update(text=a.text.split("=", 1)[-1]))  # "metric=recall" -> "recall"
fig.update_yaxes(range=[0, 1.05], title=None)
fig.update_layout(height=380, margin=dict(l=10, r=10, t=30, b=10), showlegend=False)
st.plotly_chart(fig, width="stretch")
for item in history[history["error"].notna()].iloc[::-1].head(5).itertuples():  # the newest errored runs
    st.warning(f"Errored in run {ui.literal(item.run_id)}: error: {ui.literal(item.error)}")
table = history.assign(**{c: history[c].map(ui.terms) for c in
                          ("generated_terms", "true_positives", "drift_terms", "missed", "failure_reasons")})
st.dataframe(table[["run_id", "created_at", "prompt_version", "name", "f1", "passed", "generated_terms", "missed",
                    "drift_terms", "regression_status", "precision", "recall", "failure_reasons", "error"]],
             hide_index=True, width="stretch",
             column_config={c: st.column_config.NumberColumn(format="%.3f") for c in ("f1", "precision", "recall")})

replies = data.replies(query_id)
if not replies.empty:
    with st.expander(f"What the model replied (newest {len(replies)} harness run{'' if len(replies) == 1 else 's'})"):
        for item in replies.itertuples():  # st.code shows the text as it is: never Markdown, never HTML
            st.markdown(f"**{ui.literal(item.run_id)}** · prompt {ui.literal(item.prompt_version or '-')} · "
                        + (f"error: {ui.literal(item.error)}" if item.error else
                           f"terms: {ui.literal(ui.terms(item.terms) or '(none)')}"))
            st.caption("prompt")
            st.code(ui.visible(item.prompt) if item.prompt else "(a Python expander: no prompt)",
                    language=None, wrap_lines=True)
            st.caption("reply (control characters shown as \\u escapes)")
            st.code(ui.visible(item.reply) if item.reply is not None else "(no reply received)",
                    language=None, wrap_lines=True)
