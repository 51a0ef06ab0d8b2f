"""Secrets out of URLs and messages before anything is stored or printed (SPEC §5).

One rule, two uses:

- **Shown or stored for display** (`redact_url`, `redact_text`): a URL keeps what names
  the endpoint (scheme, host, port, path) and the values of the parameters known to be
  harmless (`HARMLESS_PARAMETERS`: `api-version`, libpq's `sslmode`, `connect_timeout`,
  `application_name`, `options`…); its user info and the value of every other query or
  fragment parameter become `***`, whatever the parameter's name (`?pw=`, `?pass=`, `?x=`).
  A URL with nothing to hide comes back unchanged, character for character.
- **Inside a hash** (`strip_credentials`: LLM cache keys, a drift judge in the content
  hash): only what is known to be a credential is taken out (the user info, and parameters
  named like one: `key`, `token`, `password`, `pw`…), so two different endpoints never
  share a cache entry or a content hash, a rotated key keeps the cache, and no hash over a
  short password can be searched for it offline. A key kept in the clear (the embedding
  cache's model id) is `stored_key`: the shown form and a digest of the hashed one.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit, urlunsplit

__all__ = ["MASK", "HARMLESS_PARAMETERS", "redact_url", "redact_text", "url_secrets", "strip_credentials",
           "stored_key", "is_secret_parameter"]

MASK = "***"

HARMLESS_PARAMETERS = frozenset({
    # OpenAI-compatible endpoints (Azure OpenAI's API version)
    "api-version", "api_version",
    # libpq connection parameters that never hold a credential
    "sslmode", "sslnegotiation", "sslrootcert", "sslcert", "sslcrl", "sslcrldir", "sslsni", "sslcompression",
    "requiressl", "gssencmode", "channel_binding", "require_auth", "connect_timeout", "application_name",
    "fallback_application_name", "options", "client_encoding", "target_session_attrs", "load_balance_hosts",
    "keepalives", "keepalives_idle", "keepalives_interval", "keepalives_count", "tcp_user_timeout", "host",
    "hostaddr", "port", "dbname", "krbsrvname", "gsslib", "replication",
})
"""Query or fragment parameters whose values are shown (case-insensitive names). Every other
parameter's value is `***` in what is shown or stored: an unknown name may hold a password.
`user` is not here: the user info is hidden too."""

_SECRET_NAMES = frozenset({"key", "apikey", "token", "accesstoken", "code", "sig", "signature", "secret",
                           "password", "passwd", "pwd", "pw", "pass", "passphrase", "passcode", "auth",
                           "authorization", "credential", "credentials", "session", "sessionid", "jwt", "bearer"})
_SECRET_PARTS = ("key", "token", "secret", "password", "signature", "credential")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_MIN_SECRET = 4  # shorter strings would blank ordinary words


def is_secret_parameter(name: str) -> bool:
    """`api-key`, `api_key`, `key`, `token`, `access_token`, `code`, `sig`, `X-Amz-Signature`,
    `pw`, `sslpassword`...: a query parameter known to hold a credential."""
    plain = re.sub(r"[^a-z0-9]", "", unquote(name).casefold())
    return plain in _SECRET_NAMES or any(part in plain for part in _SECRET_PARTS)


def _is_harmless(name: str) -> bool:
    return unquote(name).strip().casefold() in HARMLESS_PARAMETERS


def _redact_pairs(text: str, hide) -> tuple[str, list[str]]:
    """`a=1&api-key=K` -> (`a=1&api-key=***`, [K]) for the names `hide` picks; a piece
    without `=` (`?KEY`) is hidden whole when `hide("")`; other pieces kept as written."""
    pieces, found = [], []
    for piece in text.split("&"):
        name, sep, value = piece.partition("=")
        if sep and value and hide(name):
            found.append(value)
            piece = f"{name}={MASK}"
        elif not sep and piece and hide(""):
            found.append(piece)
            piece = MASK
        pieces.append(piece)
    return "&".join(pieces), found


def _split(url: str):
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except ValueError:
        return None
    return parts


def _loose_userinfo(url: str) -> list[str]:
    """The user info's secret of a URL too malformed to parse (`postgresql://u:pw@[::1/db`):
    what lies between `://` and the last `@` of the authority, as a parser would have it."""
    authority = url.partition("://")[2]
    userinfo = authority.rpartition("@")[0] if "@" in authority else ""
    user, colon, password = userinfo.partition(":")
    return _with_pieces([s for s in ([password] if colon and password else [user]) if s])


def _with_pieces(secrets: list[str]) -> list[str]:
    """The secrets and, of one holding `@`, each piece between them: libpq ends the user info
    at the first `@` (Python at the last), so its message names the rest as the host."""
    return [*secrets, *(piece for s in secrets if "@" in s for piece in s.split("@") if piece)]


def _scan(url: str, hide) -> tuple[str, list[str]]:
    """The URL with the user info and the parameters `hide` picks as `***`, and the
    secrets taken out of it (as written, and decoded)."""
    parts = _split(url)
    if parts is None:  # not parseable as a URL: hide everything after the scheme
        head = re.match(r"[A-Za-z][A-Za-z0-9+.-]*://", url)
        return ((head.group(0) if head else "") + MASK, [url, *_loose_userinfo(url)])
    secrets: list[str] = []
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        # with a password, the user name is only a name; alone, it is the key (`https://KEY@host`)
        secrets += _with_pieces([password] if colon and password else [user] if user else [])
        netloc = f"{MASK}@{hostport}"
    query, found = _redact_pairs(parts.query, hide)
    secrets += found
    fragment, found = _redact_pairs(parts.fragment, hide)
    secrets += found
    if not secrets and netloc == parts.netloc:
        return url, []
    secrets += [unquote(s) for s in secrets if unquote(s) != s]
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment)), secrets


def _shown(name: str) -> bool:
    return not _is_harmless(name)


def _credential(name: str) -> bool:
    return bool(name) and is_secret_parameter(name)


def redact_url(url: str | None) -> str | None:
    """The URL as it may be shown or stored for display: user info and every parameter
    value but the harmless ones as `***` (None stays None)."""
    if not url:
        return url
    return _scan(url, _shown)[0]


def strip_credentials(url: str | None) -> str | None:
    """The URL as a hash may see it: user info and parameters named like a credential as
    `***`, everything else as written (so distinct endpoints stay distinct). Never shown:
    an unknown parameter may hold a secret."""
    if not url:
        return url
    return _scan(url, _credential)[0]


def stored_key(url: str | None) -> str | None:
    """The URL as a key kept in the clear may hold it (the embedding cache's model id): as
    redact_url shows it, followed by `#` and 16 hex digits of SHA-256 over strip_credentials
    when the two differ, so endpoints shown alike keep apart and no value is stored in the
    clear. A URL that hides nothing but credentials is its redact_url form, unchanged."""
    shown, hashed = redact_url(url), strip_credentials(url)
    if shown == hashed:
        return shown
    import hashlib

    return f"{shown}#{hashlib.sha256(hashed.encode()).hexdigest()[:16]}"


def url_secrets(url: str | None) -> list[str]:
    """Everything `redact_url` hides in a URL (user info, parameter values), to blank
    elsewhere too (an error message that repeats them)."""
    return _scan(url, _shown)[1] if url else []


def redact_text(text: str | None, secrets: Iterable[str | None] = ()) -> str | None:
    """Every URL inside `text` redacted as `redact_url` does, and every given secret (an
    API key, what url_secrets found) replaced by `***` wherever it occurs."""
    if not text:
        return text
    found: list[str] = []

    def one(match: re.Match) -> str:
        redacted, inside = _scan(match.group(0), _shown)
        found.extend(inside)
        return redacted

    text = _URL.sub(one, text)
    for secret in sorted({s for s in [*secrets, *found] if s and len(s) >= _MIN_SECRET}, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text
