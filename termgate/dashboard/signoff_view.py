"""Sign-off page pieces: flagged items with acknowledgements, the decision form, the history
(sign-in is the sidebar's: dashboard.auth)."""

from __future__ import annotations

import json

import streamlit as st

from ..governance import signoff as so
from termgate.errors import TermgateError
from termgate.report.record import render_record_html
from termgate.text import counted

from . import auth, busy, data, service_key
from .side_by_side import QUERY_ITEM_KINDS
from .ui import literal

_RECORDED = "so_recorded"  # session key: the note of a decision just recorded, for the next run


def signatures(chain) -> None:
    """Under the chain's status: its trust root (or that it has none) and whether it is
    pinned, then every record whose signature fails, which carries no authority (SPEC §4)."""
    failing = list(chain.failing)
    for line in (line for line in chain.trust_lines() if line not in failing):
        if line.startswith("warning: "):
            st.warning(literal(line.removeprefix("warning: ")), icon=":material/warning:")
        else:
            st.caption(literal(line))
    if failing:
        carry = "it carries" if len(failing) == 1 else "they carry"
        with st.expander(f"{counted(len(failing), 'record')} whose signature fails: {carry} no authority",
                         icon=":material/gpp_bad:"):
            st.markdown("\n".join(f"- {literal(line)}" for line in failing))


def acknowledge(items: list[so.FlaggedItem], run_id: str, account: so.Account | None) -> set[str]:
    """One checkbox per flagged item, private to this reviewer and run; returns the keys acknowledged."""
    if not items:
        st.success("Nothing flagged in this run.")
        return set()
    st.markdown(f"**{counted(len(items), 'flagged item')}** — acknowledge each after reviewing it:")
    done = set()
    for i, item in enumerate(items):
        about = f"{item.query_id} · {item.query} — " if item.kind in QUERY_ITEM_KINDS else ""  # else the run's own
        label = literal(f"[{item.kind}] {about}{item.detail}")
        who = account.name if account else "-"
        if st.checkbox(label, key=f"so_ack_{who}_{run_id}_{i}", disabled=account is None):
            done.add(item.key)
    return done


def decision_form(run: dict, account: so.Account, items: list[so.FlaggedItem], acked: set[str], chain=None) -> None:
    """The comment and the Approve and Reject buttons (`chain`: the page's ChainReport)."""
    refused = service_key.recording_refusal(chain)
    if refused:
        st.error(f"Nothing can be recorded here: {literal(refused)}")
    blockers = so.approval_blockers(data.db_path(), run, account)
    unacked = len(items) - len(acked & {i.key for i in items})
    comment = st.text_area("Comment (required)", key=f"so_comment_{run['run_id']}")
    cols = st.columns(2)
    approve_disabled = bool(blockers) or unacked > 0 or not comment.strip() or bool(refused)
    approve = cols[0].button("Approve", type="primary", disabled=approve_disabled, key="so_approve")
    reject = cols[1].button("Reject", disabled=not comment.strip() or account.role not in so.CAN_REJECT
                            or bool(refused), key="so_reject")
    for reason in blockers:
        st.caption(f"Approve is disabled: {literal(reason)}")
    if unacked and not blockers:
        st.caption(f"Approve is disabled until every flagged item is acknowledged ({unacked} of {len(items)} left).")
    if approve or reject:
        current = auth.recheck()  # the account as stored now, not as it was at sign-in
        if current is None:
            st.error("You are signed out: sign in again in the sidebar.")
            return
        try:
            with service_key.signed_as(data.db_path(), current):  # the dashboard's key, naming `current`
                record = busy.patiently(so.decide_as, data.db_path(), run["run_id"], current,
                                        "approve" if approve else "reject", comment, acknowledged=acked)
        except TermgateError as exc:
            st.error(literal(str(exc)))
            return
        # The state, the chain's record count and the lists above were drawn before the
        # decision: drop the cached reads and draw the page again, the note kept for it.
        data.clear()
        st.session_state[_RECORDED] = {"message": f"Recorded {literal(record['decision'])} (audit record "
                                                  f"{record['seq']}).", "comment": f"so_comment_{run['run_id']}"}
        st.rerun()


def recorded_notice() -> None:
    """The decision the previous run of the page recorded, shown once at the top; its comment
    box starts empty again."""
    note = st.session_state.pop(_RECORDED, None)
    if note:
        # Set, not popped: only a value the script sets reaches the browser, which otherwise
        # keeps showing the old comment while the page reads "" (both buttons disabled).
        st.session_state[note["comment"]] = ""  # before the text area exists: allowed
        st.success(note["message"])


def signed_by(check) -> str:
    """How a decision is signed, in a reviewer's words (check: its signatures.RecordCheck)."""
    if check is None or check.status == "before trust root":
        return ""
    if check.status == "fails":
        return f"signature fails: {check.problem}; it does not count"
    if check.service == "dashboard":
        who = check.identity or {}
        via = f", single sign-on {who['iss']} · {who['sub']}" if who.get("iss") else ""
        return f"signed by the dashboard's key for {who.get('account')}{via}"
    return f"signed by {check.actor}'s key"


def history(run: dict, chain=None) -> None:
    """Every decision on this run's content (`chain`: the page's ChainReport, to say how each is signed)."""
    from ..governance.signatures import authority_of

    records = data.decisions_on_content(run["content_hash"])
    if not records:
        st.caption("No decisions recorded for this run yet.")
        return
    checks = authority_of(chain.log).checks if chain is not None and chain.ok else {}
    for r in records:
        cols = st.columns([6, 1, 1])
        on = "" if r["run_id"] == run["run_id"] else f" (on identical run {literal(r['run_id'])})"
        signed = signed_by(checks.get(r["seq"]))
        cols[0].markdown(f"**{literal(r['decision'])}** by {literal(r['actor'])} at {literal(r['created_at'])}{on}"
                         + (f" · {literal(signed)}" if signed else ""))
        cols[0].text(r["comment"] or "")  # the comment as written, line breaks kept
        cols[1].download_button("JSON", json.dumps(r, indent=2, ensure_ascii=False), f"signoff-{r['seq']}.json",
                                mime="application/json", key=f"so_json_{r['seq']}")
        cols[2].download_button("HTML", render_record_html(r), f"signoff-{r['seq']}.html", mime="text/html",
                                key=f"so_html_{r['seq']}")
