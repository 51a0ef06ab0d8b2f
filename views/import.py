"""Import: evaluate uploaded outputs, or run a prompt over a golden set (both in a child process)."""

import streamlit as st

from dashboard import data
from dashboard.importer import run_harness, run_import

st.title("Import a run")
st.caption("Work runs in a separate `evalcore` process with the CLI's validation; uploads are kept "
           "under data/uploads/.")
runs = data.runs()
evaluate_tab, harness_tab = st.tabs(["Evaluate generated expansions", "Run a prompt (harness)"])
with evaluate_tab, st.form("import_form"):
    golden = st.file_uploader("Golden set (JSONL)", type=["jsonl", "json"], key="imp_golden")
    generated = st.file_uploader("Generated expansions (JSONL or JSON object)", type=["jsonl", "json"], key="imp_gen")
    thresholds = st.file_uploader("Thresholds (optional, JSON or TOML)", type=["json", "toml"], key="imp_thr")
    cols = st.columns(3)
    name = cols[0].text_input("Run name", key="imp_name")
    version = cols[1].text_input("Prompt version", key="imp_version")
    judge = cols[2].selectbox("Drift judge", ["default", "embedding", "none"], key="imp_judge")
    baseline = st.selectbox("Baseline (optional)", [""] + list(runs["run_id"]), key="imp_base")
    submitted = st.form_submit_button("Evaluate", type="primary")
with harness_tab, st.form("harness_form"):
    h_golden = st.file_uploader("Golden set (JSONL)", type=["jsonl", "json"], key="har_golden")
    h_prompt = st.file_uploader("Prompt file with {query}, {domain}, {intent}", type=["txt", "md"], key="har_prompt")
    cols = st.columns(3)
    model = cols[0].text_input("Model", key="har_model")
    base_url = cols[1].text_input("Base URL (empty: OPENAI_BASE_URL)", key="har_url")
    concurrency = cols[2].number_input("Concurrency", 1, 256, 8, key="har_conc")
    h_name = st.text_input("Run name", key="har_name")
    h_base = st.selectbox("Baseline (optional)", [""] + list(runs["run_id"]), key="har_base")
    launched = st.form_submit_button("Run harness", type="primary")


def show(result, baseline_id: str) -> None:
    if result.problems:
        st.error("Nothing was recorded. Fix these problems and try again:")
        st.code("\n".join(result.problems), language=None)
        return
    data.clear()
    st.success(f"Recorded run `{result.run_id}`: gate **{result.gate}**")
    st.code(result.output, language=None)
    st.page_link("views/compare.py", label="Open in Compare", icon=":material/compare_arrows:",
                 query_params={"run": result.run_id} | ({"baseline": baseline_id} if baseline_id else {}))


if submitted:
    if golden is None or generated is None:
        st.error("Upload both a golden set and the generated expansions.")
    else:
        with st.spinner("Evaluating…"):
            show(run_import(golden, generated, thresholds, name=name, prompt_version=version,
                            judge=None if judge == "default" else judge, baseline=baseline or None), baseline)
if launched:
    if h_golden is None or h_prompt is None or not model:
        st.error("Upload a golden set and a prompt file, and name the model.")
    else:
        bar = st.progress(0.0, text="Starting…")
        show(run_harness(h_golden, h_prompt, model=model, base_url=base_url, concurrency=int(concurrency),
                         name=h_name, baseline=h_base or None,
                         progress=lambda done, total: bar.progress(done / total, text=f"{done}/{total} queries")),
             h_base)
