"""Query history: one query across every run — how its expansion and metrics changed."""

import plotly.express as px
import streamlit as st

from dashboard import data, ui

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
chart = history.assign(run=ui.chart_column(history["prompt_version"].fillna(history["run_id"])),
                       run_id=ui.chart_column(history["run_id"]))
fig = px.line(chart.melt(id_vars=["run", "run_id"], value_vars=["precision", "recall", "f1", "term_drift_score"],
                         var_name="metric"), x="run", y="value", color="metric", markers=True, hover_data=["run_id"])
fig.update_layout(height=280, margin=dict(l=10, r=10, t=10, b=10), yaxis_range=[0, 1.02], yaxis_title=None)
st.plotly_chart(fig, width="stretch")
for item in history[history["error"].notna()].iloc[::-1].head(5).itertuples():  # the newest errored runs
    st.warning(f"Errored in run {ui.literal(item.run_id)}: error: {ui.literal(item.error)}")
table = history.assign(**{c: history[c].map(ui.terms) for c in
                          ("generated_terms", "true_positives", "drift_terms", "missed", "failure_reasons")})
st.dataframe(table[["prompt_version", "f1", "passed", "generated_terms", "missed", "drift_terms", "regression_status",
                    "precision", "recall", "failure_reasons", "error", "name", "created_at", "run_id"]],
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
