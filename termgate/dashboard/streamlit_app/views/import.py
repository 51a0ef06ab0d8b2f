"""Import: evaluate uploaded outputs, or run a prompt at a configured endpoint (both in a child process)."""

import streamlit as st

from termgate.dashboard import auth, data, ui
from termgate.dashboard.importer import run_harness, run_import, server_url
from termgate.config import load_settings

st.title("Import a run")
st.caption("Work runs in a separate `termgate` process with the CLI's validation. Uploads stay in a private "
           "temporary folder that is removed when it finishes; the run stores what its pages need.")
account = auth.account()
refusal = auth.run_refusal(account)
if refusal:
    st.info(refusal, icon=":material/lock:")
if data.signing_keys()[0] is not None:  # a signed store (SPEC §4): only the CI's key attests a run
    st.warning("This store is signed, and the dashboard signs no runs: a run imported here is **unattested**, "
               "never releasable. Use it to look; evaluate the run that ships in CI with its key (docs/ci.md).",
               icon=":material/verified_user:")
runs = data.runs()
by_id = runs.set_index("run_id")
baseline_label = lambda rid: ui.run_choice(by_id.loc[rid].to_dict() | {"run_id": rid}) if rid else "(none)"  # noqa: E731
endpoints = load_settings().endpoints
RETRIEVAL_HELP = ("With relevance judgments, the golden queries are searched unexpanded, with the baseline's terms "
                  "and with this run's, and the run measures nDCG, recall, MRR and P and gates on lost nDCG "
                  "(docs/retrieval.md). The corpus is what the embedded engine indexes; leave it out when the "
                  "server's termgate.toml names your own engine ([retrieval] engine = \"http\").")


def retrieval_uploads(prefix: str) -> tuple:
    """The optional corpus and judgments of a run that measures its retrieval effect."""
    cols = st.columns(2)
    return (cols[0].file_uploader("Corpus (optional, JSONL of id, title, text)", type=["jsonl", "json"],
                                  key=f"{prefix}_corpus", help=RETRIEVAL_HELP),
            cols[1].file_uploader("Relevance judgments (optional, TREC qrels or JSONL)", key=f"{prefix}_qrels",
                                  help=RETRIEVAL_HELP))


evaluate_tab, harness_tab = st.tabs(["Evaluate generated expansions", "Run a prompt (harness)"])
with evaluate_tab, st.form("import_form"):
    golden = st.file_uploader("Golden set (JSONL)", type=["jsonl", "json"], key="imp_golden")
    generated = st.file_uploader("Generated expansions (JSONL or JSON object)", type=["jsonl", "json"], key="imp_gen")
    thresholds = st.file_uploader("Thresholds (optional, JSON or TOML)", type=["json", "toml"], key="imp_thr")
    corpus, qrels = retrieval_uploads("imp")
    cols = st.columns(3)
    name = cols[0].text_input("Run name", key="imp_name")
    version = cols[1].text_input("Prompt version", key="imp_version")
    judge = cols[2].selectbox("Drift judge", ["default", "embedding", "none"], key="imp_judge")
    golden_name = st.text_input("Golden set name (optional)", key="imp_golden_name",
                                help="Runs with one name are runs on one golden set; its content is the revision. "
                                     "Default: the uploaded file's name.")
    baseline = st.selectbox("Baseline (optional)", [""] + list(runs["run_id"]), key="imp_base",
                            format_func=baseline_label)
    submitted = st.form_submit_button("Evaluate", type="primary", disabled=bool(refusal))
launched = False
with harness_tab:
    if not endpoints:
        st.info("No endpoint is configured, so the dashboard calls none. To offer one here, add a table to "
                "termgate.toml (or the file $TERMGATE_CONFIG names) and set its key in the server's environment, "
                "then reload:")
        st.code('[llm.endpoints.local]\nbase_url = "http://127.0.0.1:8000/v1"\nmodel = "llama3"\n'
                'key_env = "LOCAL_LLM_KEY"   # the variable holding this endpoint\'s key; leave out if none',
                language="toml")
    else:
        with st.form("harness_form"):
            h_golden = st.file_uploader("Golden set (JSONL)", type=["jsonl", "json"], key="har_golden")
            h_prompt = st.file_uploader("Prompt file with {query}, {domain}, {intent}", type=["txt", "md"],
                                        key="har_prompt")
            h_corpus, h_qrels = retrieval_uploads("har")
            cols = st.columns(3)
            endpoint = cols[0].selectbox("Endpoint (configured on the server)", sorted(endpoints), key="har_endpoint",
                                         format_func=lambda n: f"{n} · {endpoints[n].model}")
            concurrency = cols[1].number_input("Concurrency", 1, 256, None, key="har_conc", placeholder="the endpoint's",
                                               help="Calls in flight at once. Blank: the endpoint's `concurrency` "
                                                    "setting, else 8 (docs/local-models.md).")
            h_name = cols[2].text_input("Run name", key="har_name")
            h_base = st.selectbox("Baseline (optional)", [""] + list(runs["run_id"]), key="har_base",
                                  format_func=baseline_label)
            h_golden_name = st.text_input("Golden set name (optional)", key="har_golden_name",
                                          help="Default: the uploaded file's name.")
            cols = st.columns(2)
            h_format = cols[0].selectbox(
                "Reply format", ["text", "json"], key="har_format",
                help="text: replies are read as a person would (JSON anywhere, else a list). json: the endpoint "
                     "is asked for JSON by schema, and a reply that is not JSON is an errored item.")
            h_repeat = cols[1].number_input(
                "Repeats", 1, 50, 1, key="har_repeat",
                help="Sample each query this many times (stored as that many runs of one prompt version): the "
                     "noise floor of the statistics, measured. The recorded result is repeat 1's.")
            launched = st.form_submit_button("Run harness", type="primary", disabled=bool(refusal))


def show(result, baseline_id: str) -> None:
    if result.problems:
        st.error("Nothing was recorded. Fix these problems and try again:")
        st.code("\n".join(result.problems), language=None)
        return
    data.clear()
    st.success(f"Recorded run {ui.literal(result.run_id)}: gate **{ui.literal(result.gate)}**")
    st.code(result.output, language=None)
    st.page_link("views/compare.py", label="Open in Compare", icon=":material/compare_arrows:",
                 query_params={"run": result.run_id} | ({"baseline": baseline_id} if baseline_id else {}))


def runner():
    """The account re-read from the store right before work starts; None (and why) when it may not run."""
    current = auth.recheck()
    reason = auth.run_refusal(current)
    if reason:
        st.error(reason)
        return None
    return current


if submitted and (who := runner()):
    if golden is None or generated is None:
        st.error("Upload both a golden set and the generated expansions.")
    else:
        with st.spinner("Evaluating…"):
            show(run_import(golden, generated, thresholds, author=who.name, name=name, prompt_version=version,
                            golden_name=golden_name,
                            judge=None if judge == "default" else judge, baseline=baseline or None,
                            corpus=corpus, qrels=qrels,
                            dashboard_url=server_url("import")), baseline)
if launched and (who := runner()):
    if h_golden is None or h_prompt is None:
        st.error("Upload a golden set and a prompt file.")
    else:
        bar = st.progress(0.0, text="Starting…")
        show(run_harness(h_golden, h_prompt, endpoint=endpoint, author=who.name, concurrency=None if concurrency is None else int(concurrency),
                         name=h_name, golden_name=h_golden_name, baseline=h_base or None, response_format=h_format,
                         repeat=int(h_repeat), corpus=h_corpus, qrels=h_qrels,
                         dashboard_url=server_url("import"),
                         progress=lambda done, total: bar.progress(done / total, text=f"{done}/{total} queries")),
             h_base)
