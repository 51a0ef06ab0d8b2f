"""Cached sign-off states for lists of runs, in a reviewer's words (rejected, approved,
awaiting sign-off), read from the audit chain by termgate.governance.signoff (no rule here: the words
name what `release_state` decided).

Like dashboard.data: cached for 5 s, and `data.clear()` (st.cache_data.clear) drops it, so a
decision recorded on the Sign-off page shows at once.
"""

from __future__ import annotations

import streamlit as st

from termgate.dashboard.data import TTL, db_path

__all__ = ["sign_off_states", "sign_off_word"]


def sign_off_word(state) -> str:
    """A ReleaseState as one word or two: `rejected` when a standing rejection holds,
    `approved` when the approvals it needed are in, `awaiting sign-off`, and otherwise the
    state itself (`releasable` for a passed gate, `not releasable` for a failed gate or a
    broken chain, `incomplete` for errored items)."""
    if state.status == "not releasable" and any(d.get("decision") == "reject" for d in state.decisions):
        return "rejected"
    if state.status == "releasable" and any(d.get("decision") == "approve" for d in state.decisions):
        return "approved"
    return state.status


@st.cache_data(ttl=TTL, show_spinner=False)
def _sign_off_states(db: str, run_ids: tuple[str, ...]) -> dict[str, str]:
    """One chain check (records and accounts) for the whole list, as data.release_states."""
    from ..governance.signoff import release_states, verify_chain

    states = release_states(db, run_ids, chain=verify_chain(db, runs=None))
    return {rid: sign_off_word(states[rid]) for rid in run_ids}


def sign_off_states(run_ids) -> dict[str, str]:
    """run_id -> rejected / approved / awaiting sign-off / releasable / not releasable / incomplete."""
    return _sign_off_states(db_path(), tuple(run_ids))
