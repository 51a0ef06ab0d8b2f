"""Import: upload a golden set and generated expansions and evaluate them (in a child process)."""

import streamlit as st

from dashboard import data
from dashboard.importer import run_import

st.title("Import a run")
st.caption("The evaluation runs in a separate `evalcore evaluate` process with the same validation "
           "as the CLI; uploads are kept under data/uploads/.")
with st.form("import_form"):
    golden = st.file_uploader("Golden set (JSONL)", type=["jsonl", "json"], key="imp_golden")
    generated = st.file_uploader("Generated expansions (JSONL or JSON object)", type=["jsonl", "json"], key="imp_gen")
    thresholds = st.file_uploader("Thresholds (optional, JSON or TOML)", type=["json", "toml"], key="imp_thr")
    cols = st.columns(3)
    name = cols[0].text_input("Run name", key="imp_name")
    version = cols[1].text_input("Prompt version", key="imp_version")
    judge = cols[2].selectbox("Drift judge", ["default", "embedding", "none"], key="imp_judge")
    runs = data.runs()
    baseline = st.selectbox("Baseline (optional)", [""] + list(runs["run_id"]), key="imp_base")
    submitted = st.form_submit_button("Evaluate", type="primary")

if submitted:
    if golden is None or generated is None:
        st.error("Upload both a golden set and the generated expansions.")
        st.stop()
    with st.spinner("Evaluating…"):
        result = run_import(golden, generated, thresholds, name=name, prompt_version=version,
                            judge=None if judge == "default" else judge, baseline=baseline or None)
    if result.problems:
        st.error("The files were not evaluated. Fix these problems and upload again:")
        st.code("\n".join(result.problems), language=None)
    else:
        data.clear()
        st.success(f"Recorded run `{result.run_id}`: gate **{result.gate}**")
        st.code(result.output, language=None)
        params = {"run": result.run_id} | ({"baseline": baseline} if baseline else {})
        st.page_link("views/compare.py", label="Open in Compare", icon=":material/compare_arrows:", query_params=params)
