"""Verdicts on one query's terms, under the side-by-side panel (issue 19): the standing
verdicts, the form an engineer records one with, and a random sample of the run's false
positives the judge did not flag, so agreement is measured where it said "not drift" too.

Recording goes through termgate.governance.verdicts.record_verdict with the account as stored right
now (auth.recheck), as a sign-off decision does; every value from data is text.
"""

from __future__ import annotations

import secrets

import pandas as pd
import streamlit as st

from ..governance import verdicts as vd
from termgate.errors import TermgateError

from . import auth, busy, data, service_key
from .ui import literal

LABEL_WORDS = {"synonym": "synonym — correct, missing from the golden set",
               "related": "related — not drift, not a synonym",
               "drift": "drift — confirmed"}
SAMPLE_SIZE = 10
_RECORDED = "vd_recorded"  # session key: the verdict the previous page run recorded
_NONCE = "_vd_nonce"  # session key (after the panel's key): the open form's one-time token


def section(run_id: str, query_id: str, generated: list, key: str, open_query) -> None:
    """Verdicts on the candidate run's generated terms of this query (`generated`: its
    chips, side_by_side.Chip, missed ones left out); `open_query(query_id)` opens another."""
    # read only while open (a rerun opens it): the standing verdicts and the sample are reads
    # of their own, which the panel's first render does not wait for
    box = st.expander("Verdicts on this query's terms", expanded=bool(st.session_state.get(_RECORDED)),
                      key=f"{key}_vd_open", on_change="rerun")
    if not box.open:
        return
    with box:
        note = st.session_state.pop(_RECORDED, None)
        if note:
            st.success(note)
        _standing(run_id, query_id)
        _form(run_id, query_id, generated, key)
        _sample(run_id, key, open_query)


def _standing(run_id: str, query_id: str) -> None:
    rows = [v for v in data.verdicts(run_id) if v.query_id == query_id]
    if not rows:
        st.caption("No verdicts on this query's terms in this run yet.")
        return
    st.dataframe(pd.DataFrame([{"term": v.term, "verdict": v.label, "forbid": "yes" if v.forbid else "",
                                "judge said": v.judge_verdict, "reviewer": v.reviewer, "at": v.created_at,
                                "comment": v.comment or ""} for v in rows]), hide_index=True, width="stretch")


def _form(run_id: str, query_id: str, generated: list, key: str) -> None:
    account = auth.account()
    if account is None:
        st.caption("Sign in (in the sidebar) as an engineer, approver or admin to record a verdict.")
        return
    if account.role not in vd.CAN_RECORD:
        st.caption(f"Role {literal(account.role)} may not record verdicts (engineer, approver or admin may).")
        return
    if not generated:
        st.caption("The candidate generated no terms for this query: nothing to record a verdict on.")
        return
    refused = service_key.recording_refusal()
    if refused:
        st.error(f"Nothing can be recorded here: {literal(refused)}")
        return
    said = {c.term: ("flagged drift" if c.kind == "drift" else "unjudged" if c.unjudged else c.kind)
            for c in generated}
    order = sorted(said, key=lambda t: (said[t] != "flagged drift", said[t] == "matched"))  # flagged first
    # One form per one-time token (issue 31): recording consumes it, and the next form has new
    # widget ids. The second click of a double-click names the old form's button, which is gone,
    # so it records nothing; and as the browser keeps what was chosen (no clear_on_submit), a
    # click that interrupts the first one's page run carries the same choice, never the defaults.
    nonce_key = f"{key}{_NONCE}"
    nonce = st.session_state.setdefault(nonce_key, secrets.token_hex(8))
    with st.form(f"{key}_verdict_{run_id}_{query_id}_{nonce}", border=False):
        term = st.selectbox("Term", order, format_func=lambda t: f"{t} · {said[t]}", key=f"{key}_vd_term_{nonce}")
        label = st.radio("Verdict", vd.LABELS, format_func=LABEL_WORDS.get, key=f"{key}_vd_label_{nonce}")
        forbid = st.checkbox("Forbid this term from now on (golden propose adds it to forbidden terms)",
                             key=f"{key}_vd_forbid_{nonce}")
        comment = st.text_input("Comment", key=f"{key}_vd_comment_{nonce}")
        submitted = st.form_submit_button("Record verdict", type="primary")
    if submitted and st.session_state.get(nonce_key) == nonce:
        _record(run_id, query_id, term, label, forbid, comment, nonce_key)


def _record(run_id: str, query_id: str, term: str, label: str, forbid: bool, comment: str, nonce_key: str) -> None:
    current = auth.recheck()  # the account as stored now, not as it was at sign-in
    if current is None:
        st.error("You are signed out: sign in again in the sidebar.")
        return
    # consumed before the write, with no Streamlit call in between (a page run is interrupted
    # only at one): one form's token records once
    nonce = st.session_state.pop(nonce_key)
    try:
        with service_key.signed_as(data.db_path(), current):  # the dashboard's key, naming `current`
            record = busy.patiently(vd.record_verdict, data.db_path(), current, run_id, query_id, term, label,
                                    forbid, comment)
    except TermgateError as exc:
        st.session_state[nonce_key] = nonce  # nothing recorded: the same form may be sent again
        st.error(literal(str(exc)))
        return
    data.clear()
    st.session_state[_RECORDED] = (f"Recorded verdict {literal(label)}{' (forbid)' if forbid else ''} on "
                                   f"{literal(term)} (audit record {record['seq']}).")
    st.rerun()


def _sample(run_id: str, key: str, open_query) -> None:
    sample = data.unflagged_sample(run_id, SAMPLE_SIZE)
    st.markdown("**Not flagged by the judge** — a random sample of this run's false positives the drift judge "
                "let through; open one and record a verdict, so agreement is measured on both sides")
    if not sample:
        st.caption("This run has no unflagged false positives.")
        return
    for i, (query_id, term) in enumerate(sample):
        st.button(literal(f"{query_id} · {term}"), key=f"{key}_vd_sample_{i}", on_click=open_query,
                  args=(query_id,), type="tertiary")
