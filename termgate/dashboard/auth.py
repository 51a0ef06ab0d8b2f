"""Sign-in for every page (in the sidebar) and who may start work from the dashboard.

Two ways, chosen by the server's Streamlit secrets: with an `[auth]` section, single sign-on
through the company's identity provider (OpenID Connect: `st.login`, `st.user`,
`st.logout`; the ID token's claims are mapped to an account by termgate.governance.sso, which needs a
verified email); without one, the local password form (the embedded default).

The session keeps only the account's name (or the provider's signed identity cookie); the
account is read again from the store on every page run (a disabled or demoted account
loses its rights at once) and again right before any action (`recheck`). A password
sign-in also lasts across reloads and links through an HttpOnly cookie the server sets
(termgate.dashboard.sessions), ended by Sign out.
"""

from __future__ import annotations

import json
import time

import streamlit as st

from ..governance import signoff as so
from ..governance import sso
from ..governance.accounts import password_fingerprint
from termgate.errors import StoreBusyError, UsageError

from . import data, service_key, sessions
from .ui import literal

__all__ = ["sidebar", "account", "recheck", "run_refusal", "sign_out", "return_after_sign_in"]

NAME_KEY = "auth_account"  # the signed-in account's name
_CHECKED = "auth_checked"  # the Account as read on this page run
_ERROR = "auth_error"
_SSO_ERROR = "auth_sso_error"  # why the provider's identity signs in as no account (this page run)
_SESSION = "auth_session"  # the SHA-256 of this sign-in's cookie token (never the token)
_HANDOFF = "auth_handoff"  # the one-time code this page hands to the server for the cookie
_FORGET = "auth_forget"  # signed out: the page asks the server to delete the cookie


def _oidc_available() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all
        return False


def _sso_claims() -> dict | None:
    """The ID token's claims when this browser signed in through the identity provider."""
    user = getattr(st, "user", None)
    if user is None or not user.is_logged_in:
        return None
    return user.to_dict()


def _sign_in() -> None:
    """The form's callback: runs before the page, so the password field can be cleared."""
    name, password = st.session_state.get("auth_name", ""), st.session_state.get("auth_password", "")
    st.session_state["auth_password"] = ""
    try:
        st.session_state[NAME_KEY] = so.authenticate(data.db_path(), name, password).name
        st.session_state.pop(_ERROR, None)
    except so.SignoffRefused as exc:
        st.session_state[_ERROR] = str(exc)
        return
    except StoreBusyError:
        st.session_state[_ERROR] = "store busy: another process holds the store; sign in again in a moment"
        return
    try:
        name = st.session_state[NAME_KEY]
        started = sessions.start(name, _browser(), password_fingerprint(data.db_path(), name))
    except UsageError as exc:  # a bad TERMGATE_DASHBOARD_SESSION_HOURS: signed in for this tab only
        st.session_state[_ERROR] = f"signed in for this tab only: {exc}"
        return
    if started is not None:
        st.session_state[_SESSION], st.session_state[_HANDOFF] = started
        st.session_state.pop(_FORGET, None)


def sign_out() -> None:
    """End the sign-in: this tab's, and the session cookie's on the server (so a reload or
    a link asks again); the page then asks the server to delete the cookie."""
    sessions.end(st.session_state.pop(_SESSION, None))
    if st.session_state.pop(NAME_KEY, None):
        st.session_state[_FORGET] = True
    for key in (_CHECKED, _HANDOFF):
        st.session_state.pop(key, None)


def _from_cookie() -> str | None:
    """The account name of this browser's session cookie, when it is live (a reload, a link)."""
    found = sessions.account_of(st.context.cookies.get(sessions.COOKIE))
    if found is None:
        return None
    name, token_hash, password = found
    if password_fingerprint(data.db_path(), name) != password:  # the password changed since: sign in again
        sessions.end(token_hash)
        return None
    st.session_state[NAME_KEY], st.session_state[_SESSION] = name, token_hash
    return name


def _read_sso_account() -> so.Account | None:
    st.session_state.pop(_SSO_ERROR, None)
    claims = _sso_claims()
    if claims is None:
        return None
    try:
        db = data.db_path()
        return sso.sign_in(db, claims, signing=lambda identity: service_key.signed_for(db, identity))
    except so.SignoffRefused as exc:
        st.session_state[_SSO_ERROR] = str(exc)
        return None


def _read_account() -> so.Account | None:
    if _oidc_available():  # the provider's identity only: the password form is not offered
        return _read_sso_account()
    name = st.session_state.get(NAME_KEY) or _from_cookie()
    if not name:
        return None
    try:
        return so.current_account(data.db_path(), name)
    except so.SignoffRefused as exc:
        sign_out()
        st.session_state[_ERROR] = f"signed out: {exc}"
        return None


# ---------------------------------------------------------------- back where sign-in began
# The provider sends the browser back to the app's root (Streamlit's callback), in a new
# session: the page a reviewer signed in from is kept here, under a hash of the browser's
# XSRF cookie (which survives the round trip), for ten minutes, and the first page run
# signed in goes back to it. Without that cookie (XSRF protection off) sign-in lands on Runs.
_RETURNS: dict[str, tuple[float, str, dict]] = {}
_RETURN_FOR = 600.0


def _browser() -> str | None:
    return sessions.browser_of(st.context.cookies.get("_streamlit_xsrf"))


def _sign_in_sso(page: str, params: dict) -> None:
    """The button's callback: remember the page (url path, query parameters), then go to the provider."""
    key, now = _browser(), time.monotonic()
    for old in [k for k, (at, _, _) in _RETURNS.items() if now - at > _RETURN_FOR]:
        _RETURNS.pop(old, None)
    if key is not None:
        _RETURNS[key] = (now, page, params)
    st.login()


def return_after_sign_in(pages: list) -> None:
    """On the first page run after a single sign-on, switch to the page it began on (`pages`:
    the app's st.Page list)."""
    key = _browser() if _oidc_available() and _sso_claims() is not None else None
    found = _RETURNS.pop(key, None) if key is not None else None
    if found is None or time.monotonic() - found[0] > _RETURN_FOR:
        return
    page = next((p for p in pages if p.url_path == found[1]), None)
    if page is not None and (found[1] or found[2]):  # not Runs without parameters: where it lands anyway
        st.switch_page(page, query_params=found[2])


def _sso_sidebar(account: so.Account | None, page: str) -> None:
    if account is not None:
        scope = f"; {', '.join(account.domains)}" if account.domains else ""
        st.caption(f"Signed in as **{literal(account.name)}** ({literal(account.role + scope)}) through single "
                   f"sign-on as {literal(account.via.email)}")
        st.button("Sign out", key="auth_logout", on_click=st.logout)
        return
    if st.session_state.get(_SSO_ERROR):
        st.error(f"Not signed in: {literal(st.session_state[_SSO_ERROR])}")
        st.button("Sign out of single sign-on", key="auth_logout", on_click=st.logout)
        return
    st.caption("Sign in with your company account to run evaluations or record a sign-off")
    st.button("Sign in with single sign-on", on_click=_sign_in_sso, args=(page, st.query_params.to_dict()),
              key="auth_sso", type="primary")


def sidebar(page: str = "") -> so.Account | None:
    """The sign-in (single sign-on, or the password form), or who is signed in with a Sign
    out button; every page shows it (`page`: its url path, where single sign-on returns)."""
    account = _read_account()
    st.session_state[_CHECKED] = account
    if _oidc_available():
        _sso_sidebar(account, page)
        return account
    if account is not None:
        scope = f"; {', '.join(account.domains)}" if account.domains else ""
        st.caption(f"Signed in as **{literal(account.name)}** ({literal(account.role + scope)})")
        st.button("Sign out", key="auth_logout", on_click=sign_out)
        _cookie_call("POST", st.session_state.pop(_HANDOFF, None))
        return account
    if st.session_state.pop(_FORGET, None):
        _cookie_call("DELETE", "")
    with st.form("auth_login"):
        st.caption("Sign in to run evaluations or record a sign-off")
        st.text_input("Account", key="auth_name")
        st.text_input("Password", type="password", key="auth_password")
        st.form_submit_button("Sign in", on_click=_sign_in)
    if st.session_state.get(_ERROR):
        st.error(literal(st.session_state[_ERROR]))
    return None


def _cookie_call(method: str, body: str | None) -> None:
    """Ask the server (its route, same origin) to set the session cookie for a one-time code,
    or to delete it: only the server can set an HttpOnly cookie. The code goes in the body,
    never in a URL; it is of URL-safe characters, and written as a JSON string."""
    if body is None:
        return
    st.html(f"<script>fetch({json.dumps(sessions.ROUTE.lstrip('/'))}, {{method: {json.dumps(method)}, "
            f"body: {json.dumps(body)} || null, credentials: 'same-origin', cache: 'no-store'}});</script>",
            unsafe_allow_javascript=True, width="content")


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
