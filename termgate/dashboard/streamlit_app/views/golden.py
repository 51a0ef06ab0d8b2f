"""Golden sets: each set's revisions, who proposed and approved them, their diffs and the runs on
them (deep link /golden?name=&revision=)."""

import streamlit as st

from termgate.dashboard import data, golden_view, ui

st.title("Golden sets")
st.caption("A golden set's revision is its content hash. Reviewers' term verdicts become a proposed revision; an "
           "approver who did not propose it approves it. Both are records in the audit chain, like sign-offs.")
problem = data.chain_problem()
if problem:
    st.error(f"The audit chain is broken, so these proposals and approvals cannot be trusted: {ui.literal(problem)}")
revisions = data.golden_revisions()
runs = data.runs()
if not revisions:
    st.info("No golden-set revision has been proposed yet. Propose one, and approve it, from the command line:")
    st.code(golden_view.HOW_TO, language="sh")
names = golden_view.golden_sets(revisions, runs)
if not names:
    st.stop()

name, entry = golden_view.pick(names, revisions, runs)
golden_view.overview(golden_view.entries(name, revisions, runs))
golden_view.revision(name, entry)
