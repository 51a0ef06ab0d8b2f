"""The dashboard's service key (SPEC §4, issue 33): every record the dashboard appends for a
signed-in reviewer (a decision with its acknowledgements, a verdict, the first single
sign-on's binding) is appended inside `signed_as`, and nowhere else.

The key is a server secret, never in the store: `TERMGATE_DASHBOARD_KEY` in the server's
environment, else `signing_key` under `[termgate]` in its Streamlit secrets; either the text
of a key file (`termgate keys new --out FILE`) or its path. It is read when a record is about
to be appended and dropped after: never shown, logged, or kept in the session state.

A record it signs names the identity the dashboard authenticated: {"account": NAME} after a
password sign-in, and {"account", "iss", "sub"} after single sign-on. On a store with a trust
root the dashboard records only with the key the chain registers for `service:dashboard`;
with no key, or another one, it refuses and appends nothing (such a record would carry no
authority; the refusal says so at once, and how to mend it). On a store without a trust root
it records unsigned, as before.
"""

from __future__ import annotations

import contextlib

import streamlit as st

from ..environment import setting, setting_source
from ..errors import ChainBroken, SignoffRefused, UsageError
from ..governance.accounts import Account
from ..governance.signatures import holder_of_service
from ..signing import PrivateKey, Signer, load_key_text, signing_as
from . import data

__all__ = ["HOLDER", "identity_of", "refusal", "recording_refusal", "signed_for", "signed_as"]

HOLDER = holder_of_service("dashboard")
"""`service:dashboard`: the holder the chain registers the dashboard's key for (termgate.governance.trust)."""
_SECRET_SECTION, _SECRET_NAME = "termgate", "signing_key"
_REGISTER = "`termgate keys register --service dashboard --key-file FILE --admin NAME`"


def identity_of(account: Account) -> dict:
    """Who the dashboard authenticated: the account, and the issuer and subject when it
    signed in through single sign-on (Account.via)."""
    return {"account": account.name, **(account.via.claims() if account.via is not None else {})}


def _key_text() -> tuple[str, str] | None:
    """(the configured key's text or path, where it was found), or None."""
    value = setting("DASHBOARD_KEY")
    if value and value.strip():
        return value, setting_source("DASHBOARD_KEY")
    try:
        section = st.secrets.get(_SECRET_SECTION)
    except Exception:  # no secrets file at all
        section = None
    value = section.get(_SECRET_NAME) if hasattr(section, "get") else None
    if value:
        return str(value), f"{_SECRET_NAME} under [{_SECRET_SECTION}] in the dashboard's Streamlit secrets"
    return None


def _key() -> tuple[PrivateKey, str] | None:
    found = _key_text()
    if found is None:
        return None
    try:
        return load_key_text(*found), found[1]
    except UsageError as exc:  # names where it was found, never its text
        raise SignoffRefused(f"this dashboard's signing key cannot be read: {exc}") from None


def refusal(root: str | None, registered: str | None) -> str | None:
    """Why this dashboard may not record on a store with trust root `root` whose chain
    registers `registered` (a fingerprint, or None) for the dashboard; None: it may."""
    if root is None:
        return None
    try:
        return _problem(_key(), registered)
    except SignoffRefused as exc:
        return str(exc)


def _problem(found: tuple[PrivateKey, str] | None, registered: str | None) -> str | None:
    if found is None:
        return (f"this dashboard has no signing key registered in the store: the server has none "
                f"(TERMGATE_DASHBOARD_KEY, or {_SECRET_NAME} under [{_SECRET_SECTION}] in its Streamlit secrets); an "
                f"admin makes one (`termgate keys new --out FILE`), gives the server that file and registers it with "
                f"{_REGISTER}")
    key, where = found
    if registered is None:
        return (f"this dashboard has no signing key registered in the store: its key ({where}) is {key.fingerprint}; "
                f"an admin registers it with {_REGISTER}")
    if registered != key.fingerprint:
        return (f"this dashboard's signing key is not the one registered in the store: its key ({where}) is "
                f"{key.fingerprint}, the store's for the dashboard is {registered}; an admin registers this one with "
                f"{_REGISTER}, or the server is given the registered key")
    return None


@contextlib.contextmanager
def signed_for(db, identity: dict):
    """Inside, the records appended are signed by the dashboard's key for `identity`
    ({"account": NAME}, with "iss" and "sub" after single sign-on) when the store has a trust
    root; unsigned when it has none. SignoffRefused before anything is appended when the
    dashboard's key is missing, unreadable or not the one the chain registers, or the chain
    is broken."""
    from ..governance.trust import authority

    try:
        auth = authority(db)[1]
    except ChainBroken as exc:
        raise SignoffRefused(f"nothing can be recorded: {exc}") from None
    if auth.root is None:
        yield None
        return
    registered, found = auth.key_of(HOLDER), _key()
    why = _problem(found, registered["fingerprint"] if registered else None)
    if why is not None:
        raise SignoffRefused(why)
    with signing_as(Signer(found[0], service="dashboard", identity=dict(identity))) as signer:
        yield signer


def signed_as(db, account: Account):
    """signed_for the identity the dashboard authenticated as `account` (identity_of)."""
    return signed_for(db, identity_of(account))


def recording_refusal(chain=None) -> str | None:
    """refusal() for this dashboard's store, for a page to say before anyone fills in a form
    (`chain`: the page's ChainReport, when it has one). signed_for checks again when recording."""
    return refusal(*data.signing_keys(chain))
