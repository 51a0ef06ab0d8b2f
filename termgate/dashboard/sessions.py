"""Password sign-in that survives a reload and a deep link (issue 31): a session cookie.

A Streamlit page run cannot set a cookie (it talks over a WebSocket), and a cookie a script
can read is a token a script can steal. So the dashboard's server (`streamlit_app/server.py`,
`st.App` with one route of its own) sets it, HttpOnly:

1. the sign-in form's page run, on the right password, starts a session here: a random
   token (kept only as its SHA-256, with its account's name and its end) and a one-time
   code for it (60 s, bound to this browser when Streamlit's XSRF cookie is on);
2. the page sends the code, never the token, in the body of a POST to `/_termgate/session`
   from the same origin; the route swaps it for the token and answers with the cookie
   `termgate_session` (HttpOnly, SameSite=Strict, Path=/, Secure on https, Max-Age the
   session's lifetime);
3. a page run that finds no one signed in reads the cookie (`st.context.cookies`, sent with
   the WebSocket's handshake) and signs its account in, checked against the store as any
   sign-in is;
4. sign-out ends the session here (the cookie is worthless from then on) and asks the route
   to delete the cookie.

No token or code ever goes into a URL: the dashboard's links are pasted into PR comments.
Sessions live in the server process's memory: a restart, or another replica, signs everyone
out (single sign-on is unaffected). Their lifetime is TERMGATE_DASHBOARD_SESSION_HOURS
(default 8; 0 keeps the old behaviour, sign-in for the open tab only).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass

from termgate.environment import setting
from termgate.errors import UsageError

__all__ = ["COOKIE", "ROUTE", "browser_of", "lifetime", "start", "redeem", "account_of", "end", "routes"]

COOKIE = "termgate_session"
ROUTE = "/_termgate/session"
HANDOFF_FOR = 60.0
"""Seconds a sign-in's one-time code may be swapped for its cookie."""
_DEFAULT_HOURS = "8"


@dataclass
class _Session:
    name: str
    ends: float
    password: str | None  # the account's password fingerprint at sign-in: a new password ends the session


_lock = threading.Lock()
_sessions: dict[str, _Session] = {}  # SHA-256 of a token -> its session
_handoffs: dict[str, tuple[str, str | None, float]] = {}  # SHA-256 of a code -> (token, browser, until)


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def browser_of(cookie: str | None) -> str | None:
    """A key for a browser that survives a round trip: the hash of its XSRF token (the
    `_streamlit_xsrf` cookie). The cookie holds the token masked anew on each response
    ("2|mask|masked|time", Tornado's form, which Streamlit keeps), so it is unmasked first."""
    parts = cookie.split("|") if isinstance(cookie, str) else []
    if len(parts) != 4 or parts[0] != "2":
        return None
    try:
        mask, masked = bytes.fromhex(parts[1]), bytes.fromhex(parts[2])
    except ValueError:
        return None
    if not mask:
        return None
    token = bytes(b ^ mask[i % len(mask)] for i, b in enumerate(masked))
    return hashlib.sha256(token).hexdigest()


def lifetime() -> float:
    """Seconds a password sign-in lasts in this browser (TERMGATE_DASHBOARD_SESSION_HOURS);
    0: only while the tab is open. UsageError naming the variable on a bad value."""
    raw = setting("DASHBOARD_SESSION_HOURS", _DEFAULT_HOURS)
    try:
        hours = float(raw or "")
    except ValueError:
        hours = -1.0
    if not 0 <= hours <= 24 * 90:
        raise UsageError(f"TERMGATE_DASHBOARD_SESSION_HOURS={raw!r}: give the hours a password sign-in lasts, "
                         "from 0 (only while the tab is open) to 2160")
    return hours * 3600


def _sweep(now: float) -> None:
    for key in [k for k, s in _sessions.items() if s.ends <= now]:
        del _sessions[key]
    for key in [k for k, h in _handoffs.items() if h[2] <= now]:
        del _handoffs[key]


def start(name: str, browser: str | None, password: str | None = None) -> tuple[str, str] | None:
    """A new session for account `name` (`password`: the fingerprint of its password now,
    accounts.password_fingerprint): (the SHA-256 of its token, the one-time code the page
    hands to the route), or None when sessions are off (lifetime 0)."""
    seconds = lifetime()
    if seconds <= 0:
        return None
    token, code, now = secrets.token_urlsafe(32), secrets.token_urlsafe(32), time.time()
    with _lock:
        _sweep(now)
        _sessions[_digest(token)] = _Session(name, now + seconds, password)
        _handoffs[_digest(code)] = (token, browser, now + HANDOFF_FOR)
    return _digest(token), code


def redeem(code: str, browser: str | None) -> tuple[str, float] | None:
    """(the token, seconds it has left) for a one-time code, once; None for an unknown,
    used or expired code, or one that another browser was given."""
    now = time.time()
    with _lock:
        _sweep(now)
        found = _handoffs.pop(_digest(code), None)
        if found is None or (found[1] is not None and not hmac.compare_digest(found[1], browser or "")):
            return None
        session = _sessions.get(_digest(found[0]))
        return (found[0], session.ends - now) if session is not None else None


def account_of(token: str | None) -> tuple[str, str, str | None] | None:
    """(the account's name, the token's SHA-256, the password fingerprint it began with) of
    a live session; None otherwise."""
    if not isinstance(token, str) or not token:
        return None
    key = _digest(token)
    with _lock:
        _sweep(time.time())
        session = _sessions.get(key)
        return (session.name, key, session.password) if session is not None else None


def end(token_hash: str | None) -> None:
    """End a session (sign-out, or its account can no longer sign in): its cookie is refused from now on."""
    if token_hash:
        with _lock:
            _sessions.pop(token_hash, None)


def routes() -> list:
    """The server's route (Starlette) that sets and deletes the HttpOnly session cookie."""
    from starlette.responses import Response
    from starlette.routing import Route

    def same_origin(request) -> bool:
        # a cross-site page cannot plant its own sign-in in this browser (login CSRF)
        origin, host = request.headers.get("origin"), request.headers.get("host")
        return bool(origin and host) and origin.split("://", 1)[-1] == host

    async def session(request):
        if not same_origin(request):
            return Response(status_code=403)
        if request.method == "DELETE":
            end(_digest(request.cookies[COOKIE]) if request.cookies.get(COOKIE) else None)
            response = Response(status_code=204)
            response.delete_cookie(COOKIE, path="/", httponly=True, samesite="strict")
            return response
        code = (await request.body()).decode("ascii", "replace").strip()
        found = redeem(code, browser_of(request.cookies.get("_streamlit_xsrf"))) if code else None
        if found is None:
            return Response(status_code=403)
        response = Response(status_code=204)
        response.set_cookie(COOKIE, found[0], max_age=max(1, int(found[1])), path="/", httponly=True,
                            samesite="strict", secure=request.url.scheme == "https")
        response.headers["Cache-Control"] = "no-store"
        return response

    return [Route(ROUTE, session, methods=["POST", "DELETE"])]
