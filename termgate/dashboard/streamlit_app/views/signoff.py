"""Sign-off: review every flagged item of a run, then approve or reject its release."""

import streamlit as st

from termgate.dashboard import auth, data, side_by_side, signoff_view, ui

st.title("Sign-off")
signoff_view.recorded_notice()
chain = data.chain_report()
(st.success if chain.ok else st.error)(f"Audit chain: {ui.literal(chain.message)}")
signoff_view.signatures(chain)
runs = data.signoff_runs()
if runs.empty:
    st.info("No run awaits sign-off: runs with gate review or a high-risk domain appear here.")
    st.stop()
account = auth.account()
if account is None:
    st.info("Sign in (in the sidebar) to acknowledge flagged items and record a decision.", icon=":material/lock:")

ids = list(runs["run_id"])
wanted = st.query_params.get("run")
if wanted and wanted not in ids:
    st.warning(f"Unknown run id {ui.literal(wanted)} in the link, or it awaits no sign-off. Pick one below.")
by_id = runs.set_index("run_id")
label = lambda rid: f"{by_id.loc[rid, 'gate_decision'].upper()} {ui.run_label(by_id.loc[rid].to_dict() | {'run_id': rid})}"  # noqa: E731
run_id = st.selectbox("Run", ids, index=ids.index(wanted) if wanted in ids else 0, format_func=label, key="so_run")
if st.query_params.get("run") != run_id:
    st.query_params["run"] = run_id
run = data.run_row(run_id)
state = data.release_state(run_id, chain)
reasons = [r.removeprefix(f"{state.status}: ") for r in state.reasons]  # "unattested: …" once, not twice
st.markdown(f"**{ui.literal(state.status)}** — {ui.literal('; '.join(reasons))} · "
            f"author {ui.literal(run['author'])} · content {ui.literal(run['content_hash'][:16])}")
policy = data.policy()
st.caption(f"Counted under the store's {ui.literal(policy.label())}: high-risk "
           f"{ui.literal(', '.join(policy.high_risk_domains) or 'none')}; approvals "
           f"{ui.literal(', '.join(f'{d} {policy.approvals_for(d)}' for d in policy.high_risk_domains) or '-')} "
           "(`termgate policy show`).")
if run["gate_decision"] == "fail":
    st.warning("This run failed its gate: it can be rejected but never approved.")
if state.status == "unattested":
    st.warning("This run is unattested: it is never releasable, whatever is approved. Evaluate it again in CI, "
               "with the CI's key.")

items = data.flagged_for_signoff(run_id)
if any(i.kind in side_by_side.QUERY_ITEM_KINDS for i in items):
    st.subheader("Flagged queries side by side")
    side_by_side.flagged(run_id, run["baseline_id"], items, "so")
acked = signoff_view.acknowledge(items, run_id, account)
if account is not None:
    signoff_view.decision_form(run, account, items, acked, chain)
st.subheader("Decisions on this run")
signoff_view.history(run, chain)
