"""Single sign-on (SPEC §4): an OpenID Connect identity to a termgate account.

The dashboard signs people in through the company's identity provider (Streamlit's
`st.login`, configured by `[auth]` in its secrets) and hands the ID token's claims here.
The rules:

- the token's email must be verified (`email_verified` true) and is mapped to the account
  whose name or alias it is, in canonical form; no such account, no sign-in;
- at the first sign-in the issuer and subject are bound to that account as an alias
  (`identity.oidc_alias`), recorded in the audit chain like every account change
  (kind `user_sso_bind`, actor the account, payload `sso: {iss, sub, email}`), so four-eyes
  checks a run's author against it too;
- afterwards the identity must still be that account's: a subject bound to another
  account, or an account bound to another subject at the same issuer (an email address
  handed to a new person), is refused until an admin removes the old alias.

Accounts created with `users add --sso` have no password and sign in only this way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace

from .. import store
from .accounts import Account, current_account
from ..errors import TermgateError, SignoffRefused, StoreBusyError, UsageError
from ..identity import SsoIdentity, canonical_name, oidc_issuer_prefix

__all__ = ["SsoIdentity", "identity_from_claims", "sign_in", "BIND_KIND"]

BIND_KIND = "user_sso_bind"
"""The audit record kind of an identity bound to an account at its first sign-in."""


def _verified(value: object) -> bool:
    # JSON true; a few providers send the string "true" in the ID token
    return value is True or (isinstance(value, str) and value.strip().lower() == "true")


def identity_from_claims(claims: Mapping) -> SsoIdentity:
    """The identity in an ID token's claims (as `st.user` holds them); SignoffRefused when
    the email is missing or not verified, or the issuer or subject is missing."""
    email = claims.get("email")
    if not isinstance(email, str) or not email.strip():
        raise SignoffRefused("the identity provider sent no email: single sign-on needs the email scope and a "
                             "verified email address")
    if not _verified(claims.get("email_verified")):
        raise SignoffRefused(f"the identity provider has not verified the email {email!r} (email_verified is not "
                             "true): verify it with the provider, then sign in again")
    issuer, subject = claims.get("iss"), claims.get("sub")
    if not isinstance(issuer, str) or not issuer or not isinstance(subject, str) or not subject:
        raise SignoffRefused("the identity provider's token has no issuer (iss) or subject (sub)")
    try:
        return SsoIdentity(issuer, subject, canonical_name(email, "email"))
    except UsageError as exc:
        raise SignoffRefused(f"{exc}: no termgate account can have this email") from None


def _owner(rows: list[dict], identity: str) -> dict | None:
    return next((r for r in rows if identity == r["name"] or identity in (r["aliases"] or [])), None)


def _account_for(rows: list[dict], identity: SsoIdentity) -> tuple[dict, bool]:
    """(the account's row, whether this identity is bound to it already)."""
    row = _owner(rows, identity.email)
    if row is None:
        raise SignoffRefused(f"no termgate account has the email {identity.email!r} as its name or alias: an admin "
                             f"adds one (`termgate users add NAME --role ROLE --sso --alias {identity.email}`) or "
                             f"gives an account that alias (`termgate users alias NAME --add {identity.email}`)")
    bound = _owner(rows, identity.alias)
    if bound is not None and bound["name"] != row["name"]:
        raise SignoffRefused(f"this identity (issuer {identity.issuer!r}, subject {identity.subject!r}) is bound to "
                             f"account {bound['name']!r}, but the email {identity.email!r} is account "
                             f"{row['name']!r}'s: an admin decides which is right")
    if bound is None:
        others = [a for a in row["aliases"] or [] if a.startswith(oidc_issuer_prefix(identity.issuer))]
        if others:
            raise SignoffRefused(f"account {row['name']!r} is bound to another subject at {identity.issuer!r} "
                                 f"({others[0]}), not to {identity.subject!r}: if the email now belongs to someone "
                                 f"else, they need their own account; if it is the same person, an admin removes the "
                                 f"old binding (`termgate users alias {row['name']} --remove {others[0]}`)")
    return row, bound is not None


def _unsigned(identity: dict) -> AbstractContextManager:
    return nullcontext()


def _bind(db, row: dict, identity: SsoIdentity) -> None:
    from ..clock import utc_now

    aliases = sorted({*(row["aliases"] or []), identity.alias})
    payload = {"sso": {**identity.claims(), "email": identity.email}, "alias": identity.alias}
    try:
        store.write_account(db, row["name"], {"aliases": aliases},
                            {"created_at": utc_now(), "kind": BIND_KIND, "actor": row["name"], "payload": payload})
    except StoreBusyError:
        raise
    except TermgateError as exc:  # e.g. the team store's dashboard role may not change accounts
        raise SignoffRefused(f"first single sign-on of account {row['name']!r}: its identity could not be bound "
                             f"({exc}); the store's owner binds it with `termgate users alias {row['name']} --add "
                             f"{identity.alias}`") from None


def sign_in(db, claims: Mapping, signing: Callable[[dict], AbstractContextManager] | None = None) -> Account:
    """The account these ID-token claims sign in as, with `via` set (its decisions store
    the issuer and subject); binds the identity at the first sign-in, inside
    `signing({"account", "iss", "sub"})` when given (a context in which the binding is signed:
    the dashboard's, with its service key). SignoffRefused (the reason, for the person signing
    in) when the claims do not map to an enabled account, or `signing` refuses."""
    identity = identity_from_claims(claims)
    row, bound = _account_for(store.users_rows(db), identity)
    if row["disabled"]:
        raise SignoffRefused(f"account {row['name']!r} is disabled")
    if not bound:
        with (signing or _unsigned)({"account": row["name"], **identity.claims()}):
            _bind(db, row, identity)
    return replace(current_account(db, row["name"]), via=identity)
