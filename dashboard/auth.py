"""Sign-in for every page (in the sidebar) and who may start work from the dashboard.

The session keeps only the account's name; the account is read again from the store on
every page run (a disabled or demoted account loses its rights at once) and again right
before any action (`recheck`).
"""

from __future__ import annotations

import streamlit as st

from evalcore import signoff as so
from evalcore.errors import StoreBusyError

from . import data
from .ui import literal

__all__ = ["sidebar", "account", "recheck", "run_refusal", "sign_out"]

NAME_KEY = "auth_account"  # the signed-in account's name
_CHECKED = "auth_checked"  # the Account as read on this page run
_ERROR = "auth_error"


def _oidc_available() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def _sign_in() -> None:
    """The form's callback: runs before the page, so the password field can be cleared."""
    name, password = st.session_state.get("auth_name", ""), st.session_state.get("auth_password", "")
    st.session_state["auth_password"] = ""
    try:
        st.session_state[NAME_KEY] = so.authenticate(data.db_path(), name, password).name
        st.session_state.pop(_ERROR, None)
    except so.SignoffRefused as exc:
        st.session_state[_ERROR] = str(exc)
    except StoreBusyError:
        st.session_state[_ERROR] = "store busy: another process holds the store; sign in again in a moment"


def sign_out() -> None:
    for key in (NAME_KEY, _CHECKED):
        st.session_state.pop(key, None)


def _read_account() -> so.Account | None:
    name = st.session_state.get(NAME_KEY)
    if not name and _oidc_available() and getattr(st, "user", None) is not None and st.user.is_logged_in:
        name = st.user.email
    if not name:
        return None
    try:
        return so.current_account(data.db_path(), name)
    except so.SignoffRefused as exc:
        sign_out()
        st.session_state[_ERROR] = f"signed out: {exc}"
        return None


def sidebar() -> so.Account | None:
    """The sign-in form, or who is signed in with a Sign out button; every page shows it."""
    account = _read_account()
    st.session_state[_CHECKED] = account
    if account is not None:
        scope = f"; {', '.join(account.domains)}" if account.domains else ""
        st.caption(f"Signed in as **{literal(account.name)}** ({literal(account.role + scope)})")
        st.button("Sign out", key="auth_logout", on_click=sign_out)
        return account
    with st.form("auth_login"):
        st.caption("Sign in to run evaluations or record a sign-off")
        st.text_input("Account", key="auth_name")
        st.text_input("Password", type="password", key="auth_password")
        st.form_submit_button("Sign in", on_click=_sign_in)
    if st.session_state.get(_ERROR):
        st.error(literal(st.session_state[_ERROR]))
    if _oidc_available():
        st.button("Sign in with single sign-on", on_click=st.login, key="auth_sso")
    return None


def account() -> so.Account | None:
    """The account signed in on this page run (read from the store by the sidebar)."""
    return st.session_state.get(_CHECKED)


def recheck() -> so.Account | None:
    """The account as stored right now: call it right before an action."""
    account = _read_account()
    st.session_state[_CHECKED] = account
    return account


def run_refusal(account: so.Account | None) -> str | None:
    """Why this visitor may not start work from the dashboard (None: they may). Markdown-safe."""
    if account is None:
        return "Sign in (in the sidebar) with an engineer, approver or admin account to run anything here."
    if account.role not in so.CAN_RUN:
        return (f"Account **{literal(account.name)}** is a {literal(account.role)}: running evaluations needs an "
                "engineer, approver or admin account.")
    return None
