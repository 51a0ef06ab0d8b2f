"""The password sign-in's session cookie (issue 31 item 11): the server's route swaps a
one-time code for an HttpOnly cookie; only the token's hash is kept, for a set time; sign-out
ends it. The real browser's side is tests/test_browser.py."""

from __future__ import annotations

import pytest
from starlette.applications import Starlette
from starlette.testclient import TestClient

from termgate.dashboard import sessions
from termgate.errors import UsageError

from test_dashboard import db, page, sign_in  # noqa: F401 (db: the fixture)

ORIGIN = {"origin": "http://testserver"}


@pytest.fixture
def client():
    sessions._sessions.clear()
    sessions._handoffs.clear()
    with TestClient(Starlette(routes=sessions.routes())) as c:
        yield c


def test_a_one_time_code_becomes_an_http_only_cookie_once(client, monkeypatch):
    monkeypatch.setenv("TERMGATE_DASHBOARD_SESSION_HOURS", "2")
    token_hash, code = sessions.start("erin", None)
    assert client.post(sessions.ROUTE, content=code, headers={"origin": "http://evil.example"}).status_code == 403
    answer = client.post(sessions.ROUTE, content=code, headers=ORIGIN)
    assert answer.status_code == 204
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{sessions.COOKIE}=") and "HttpOnly" in cookie and "SameSite=strict" in cookie
    assert "Path=/" in cookie and ("Max-Age=7199" in cookie or "Max-Age=7200" in cookie)
    token = client.cookies[sessions.COOKIE]
    assert sessions.account_of(token) == ("erin", token_hash, None)
    assert token not in repr(sessions._sessions) and code not in repr(sessions._handoffs)  # hashes only
    assert client.post(sessions.ROUTE, content=code, headers=ORIGIN).status_code == 403  # used once
    assert client.request("DELETE", sessions.ROUTE, headers=ORIGIN).status_code == 204  # sign-out
    assert sessions.COOKIE not in client.cookies and sessions.account_of(token) is None


def test_a_code_given_to_another_browser_or_expired_is_refused(client, monkeypatch):
    monkeypatch.setenv("TERMGATE_DASHBOARD_SESSION_HOURS", "1")
    _, code = sessions.start("erin", "hash-of-another-browsers-xsrf-token")
    assert client.post(sessions.ROUTE, content=code, headers=ORIGIN).status_code == 403
    token_hash, code = sessions.start("erin", None)
    now = sessions.time.time()
    monkeypatch.setattr(sessions.time, "time", lambda: now + sessions.HANDOFF_FOR + 1)
    assert client.post(sessions.ROUTE, content=code, headers=ORIGIN).status_code == 403
    assert token_hash in sessions._sessions  # the session lasts its hour; only the code is gone
    monkeypatch.setattr(sessions.time, "time", lambda: now + 3601)
    assert sessions.account_of("anything") is None and token_hash not in sessions._sessions


def test_the_session_lifetime_is_a_setting(monkeypatch):
    monkeypatch.setenv("TERMGATE_DASHBOARD_SESSION_HOURS", "0")
    assert sessions.start("erin", None) is None  # the open tab only, as before
    monkeypatch.setenv("TERMGATE_DASHBOARD_SESSION_HOURS", "a day")
    with pytest.raises(UsageError, match="TERMGATE_DASHBOARD_SESSION_HOURS='a day'"):
        sessions.lifetime()
    monkeypatch.delenv("TERMGATE_DASHBOARD_SESSION_HOURS")
    assert sessions.lifetime() == 8 * 3600


@pytest.mark.slow
def test_signing_in_hands_the_page_a_code_and_signing_out_ends_the_session(db):
    """AppTest: the form's sign-in starts a session and the page carries its one-time code
    (never the token) to the server; Sign out ends the session on the server."""
    from termgate.governance import signoff as so

    so.add_user(db, "erin", "engineer", "erin-password-1")
    at = sign_in(page("query"), "erin", "erin-password-1")
    assert not at.exception
    token_hash = at.session_state["auth_session"]
    assert token_hash in sessions._sessions and sessions._sessions[token_hash].name == "erin"
    [handoff] = [h for h in at.get("html") if sessions.ROUTE.lstrip("/") in h.proto.body]
    [code_hash] = [k for k, (_, _, _) in sessions._handoffs.items()]
    assert '"POST"' in handoff.proto.body and sessions._handoffs[code_hash][0] not in handoff.proto.body
    next(b for b in at.sidebar.button if b.label == "Sign out").click().run()
    assert token_hash not in sessions._sessions
    assert any('"DELETE"' in h.proto.body for h in at.get("html"))


@pytest.mark.slow
def test_a_new_page_with_the_cookie_is_signed_in_until_the_password_changes(db, monkeypatch):
    """A reload or a link is a new Streamlit session: it signs in from the cookie (as the
    handshake sent it), and no longer once the account's password was changed."""
    from types import SimpleNamespace

    import streamlit as st

    from termgate.governance import signoff as so
    from termgate.governance.accounts import password_fingerprint

    so.add_user(db, "erin", "engineer", "erin-password-1")
    token_hash, code = sessions.start("erin", None, password_fingerprint(db, "erin"))
    token, _ = sessions.redeem(code, None)
    monkeypatch.setattr(st, "context", SimpleNamespace(cookies={sessions.COOKIE: token}))
    at = page("query")
    assert any("Signed in as **erin**" in c.value for c in at.sidebar.caption)
    so.set_password(db, "erin", "erin-password-2")
    at = page("query")
    assert not any("Signed in as" in c.value for c in at.sidebar.caption)
    assert token_hash not in sessions._sessions
