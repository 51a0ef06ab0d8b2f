"""Secrets out of URLs and messages before anything is stored or printed (SPEC §5).

A base URL may carry a key: as userinfo (`https://user:KEY@host/v1`) or as a query or
fragment parameter (`?api-key=KEY`, `#access_token=KEY`). `redact_url` keeps what names
the endpoint (scheme, host, port, path, and parameters that are not secrets) and writes
`***` for the rest; a URL with nothing to hide comes back unchanged, character for
character, so cache keys and content hashes of ordinary runs do not move.
`redact_text` does the same to every URL inside a message and blanks given secrets.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["MASK", "redact_url", "redact_text", "url_secrets", "is_secret_parameter"]

MASK = "***"

_SECRET_NAMES = frozenset({"key", "apikey", "token", "accesstoken", "code", "sig", "signature", "secret",
                           "password", "passwd", "pwd", "auth", "authorization", "credential", "credentials",
                           "session", "sessionid", "jwt", "bearer"})
_SECRET_PARTS = ("key", "token", "secret", "password", "signature", "credential")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_MIN_SECRET = 4  # shorter strings would blank ordinary words


def is_secret_parameter(name: str) -> bool:
    """`api-key`, `api_key`, `key`, `token`, `access_token`, `code`, `sig`, `X-Amz-Signature`...:
    a query parameter whose value is a credential."""
    plain = re.sub(r"[^a-z0-9]", "", unquote(name).casefold())
    return plain in _SECRET_NAMES or any(part in plain for part in _SECRET_PARTS)


def _redact_pairs(text: str) -> tuple[str, list[str]]:
    """`a=1&api-key=K` -> (`a=1&api-key=***`, [K]); other pieces kept as written."""
    pieces, found = [], []
    for piece in text.split("&"):
        name, sep, value = piece.partition("=")
        if sep and value and is_secret_parameter(name):
            found.append(value)
            piece = f"{name}={MASK}"
        pieces.append(piece)
    return "&".join(pieces), found


def _split(url: str):
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return None
    return parts


def _scan(url: str) -> tuple[str, list[str]]:
    """The URL redacted, and the secrets taken out of it (as written, and decoded)."""
    parts = _split(url)
    if parts is None:  # not parseable as a URL: hide everything after the scheme's host part
        head = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
        return ((head.group(0) if head else "") + MASK, [url])
    secrets: list[str] = []
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        # with a password, the user name is only a name; alone, it is the key (`https://KEY@host`)
        secrets += [password] if colon and password else [user] if user else []
        netloc = f"{MASK}@{hostport}"
    query, found = _redact_pairs(parts.query)
    secrets += found
    fragment, found = _redact_pairs(parts.fragment)
    secrets += found
    if not secrets:
        return url, []
    secrets += [unquote(s) for s in secrets if unquote(s) != s]
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment)), secrets


def redact_url(url: str | None) -> str | None:
    """The URL with its credentials replaced by `***` (None stays None)."""
    if not url:
        return url
    return _scan(url)[0]


def url_secrets(url: str | None) -> list[str]:
    """The credentials inside a URL (userinfo, secret parameters), to blank elsewhere too."""
    return _scan(url)[1] if url else []


def redact_text(text: str | None, secrets: Iterable[str | None] = ()) -> str | None:
    """Every URL inside `text` redacted, and every given secret (an API key, what
    url_secrets found) replaced by `***` wherever it occurs."""
    if not text:
        return text
    found: list[str] = []

    def one(match: re.Match) -> str:
        redacted, inside = _scan(match.group(0))
        found.extend(inside)
        return redacted

    text = _URL.sub(one, text)
    for secret in sorted({s for s in [*secrets, *found] if s and len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
