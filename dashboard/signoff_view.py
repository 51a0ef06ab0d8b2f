"""Sign-off page pieces: login, flagged items with acknowledgements, the decision form."""

from __future__ import annotations

import json

import streamlit as st

from evalcore import signoff as so
from evalcore.errors import EvalcoreError
from evalcore.report.record import render_record_html

from . import data

ACCOUNT_KEY = "so_account"


def _oidc_available() -> bool:
    try:
        return "auth" in st.secrets
    except (FileNotFoundError, KeyError, Exception):  # no secrets file at all
        return False


def login() -> so.Account | None:
    """The signed-in account: a local account (name + password) or OIDC via st.login."""
    if ACCOUNT_KEY in st.session_state:
        account = st.session_state[ACCOUNT_KEY]
        cols = st.columns([4, 1])
        cols[0].caption(f"Signed in as **{account.name}** ({account.role}"
                        f"{'; ' + ', '.join(account.domains) if account.domains else ''})")
        if cols[1].button("Sign out", key="so_logout"):
            del st.session_state[ACCOUNT_KEY]
            st.rerun()
        return account
    if _oidc_available() and getattr(st, "user", None) is not None and st.user.is_logged_in:
        try:
            st.session_state[ACCOUNT_KEY] = so.current_account(data.db_path(), st.user.email)
            st.rerun()
        except so.SignoffRefused as exc:
            st.error(f"{exc}: ask an admin to run `evalcore users add {st.user.email} --role approver`")
    with st.form("so_login"):
        st.markdown("**Sign in to record a decision**")
        name = st.text_input("Account", key="so_name")
        password = st.text_input("Password", type="password", key="so_password")
        if st.form_submit_button("Sign in"):
            try:
                st.session_state[ACCOUNT_KEY] = so.authenticate(data.db_path(), name, password)
                st.rerun()
            except so.SignoffRefused as exc:
                st.error(str(exc))
    if _oidc_available():
        st.button("Sign in with single sign-on", on_click=st.login, key="so_sso")
    return None


def acknowledge(items: list[so.FlaggedItem], run_id: str, account: so.Account | None) -> set[str]:
    """One checkbox per flagged item, private to this reviewer and run; returns the keys acknowledged."""
    if not items:
        st.success("Nothing flagged in this run.")
        return set()
    st.markdown(f"**{len(items)} flagged items** — acknowledge each after reviewing it:")
    done = set()
    for i, item in enumerate(items):
        label = f"[{item.kind}] `{item.query_id}` {item.query} — {item.detail}"
        who = account.name if account else "-"
        if st.checkbox(label, key=f"so_ack_{who}_{run_id}_{i}", disabled=account is None):
            done.add(item.key)
    return done


def decision_form(run: dict, account: so.Account, items: list[so.FlaggedItem], acked: set[str]) -> None:
    blockers = so.approval_blockers(data.db_path(), run, account)
    unacked = len(items) - len(acked & {i.key for i in items})
    comment = st.text_area("Comment (required)", key=f"so_comment_{run['run_id']}")
    cols = st.columns(2)
    approve_disabled = bool(blockers) or unacked > 0 or not comment.strip()
    approve = cols[0].button("Approve", type="primary", disabled=approve_disabled, key="so_approve")
    reject = cols[1].button("Reject", disabled=not comment.strip() or account.role not in so.CAN_REJECT,
                            key="so_reject")
    for reason in blockers:
        st.caption(f"Approve is disabled: {reason}")
    if unacked and not blockers:
        st.caption(f"Approve is disabled until all {len(items)} flagged items are acknowledged ({unacked} left).")
    if approve or reject:
        try:
            record = so.decide_as(data.db_path(), run["run_id"], account, "approve" if approve else "reject",
                                  comment, acknowledged=acked)
            st.success(f"Recorded {record['decision']} (audit record {record['seq']}).")
        except EvalcoreError as exc:
            st.error(str(exc))


def history(run: dict) -> None:
    records = data.decisions_on_content(run["content_hash"])
    if not records:
        st.caption("No decisions recorded for this run yet.")
        return
    for r in records:
        cols = st.columns([6, 1, 1])
        on = "" if r["run_id"] == run["run_id"] else f" (on identical run `{r['run_id']}`)"
        cols[0].markdown(f"**{r['decision']}** by `{r['actor']}` at {r['created_at']}{on} — {r['comment']}")
        cols[1].download_button("JSON", json.dumps(r, indent=2, ensure_ascii=False), f"signoff-{r['seq']}.json",
                                mime="application/json", key=f"so_json_{r['seq']}")
        cols[2].download_button("HTML", render_record_html(r), f"signoff-{r['seq']}.html", mime="text/html",
                                key=f"so_html_{r['seq']}")
