"""Reviewer accounts as the store holds them (SPEC §4): an account's name, role, domains and
aliases, read again before every action. Creating and changing them is termgate.governance.signoff's."""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import store
from ..errors import SignoffRefused
from ..identity import SsoIdentity, fold_name
from ..store.records import SSO_PASSWORD_HASH

__all__ = ["Account", "account_of", "current_account", "password_fingerprint"]


@dataclass(frozen=True)
class Account:
    name: str
    role: str
    domains: tuple[str, ...]
    disabled: bool
    aliases: tuple[str, ...] = ()
    sso: bool = False
    """Signs in only through the identity provider (`users add --sso`): it has no password."""
    via: SsoIdentity | None = field(default=None, compare=False)
    """Set when this session signed in through the identity provider (termgate.governance.sso): a
    decision it records stores the issuer and subject."""

    def covers(self, domain: str) -> bool:
        return not self.domains or domain in self.domains


def account_of(row: dict) -> Account:
    return Account(row["name"], row["role"], tuple(row["domains"] or ()), bool(row["disabled"]),
                   tuple(row["aliases"] or ()), row.get("password_hash") == SSO_PASSWORD_HASH)


def current_account(db, name: str) -> Account:
    """The account as stored now (a dashboard session re-checks it before every decision)."""
    row = store.get_user(db, fold_name(name))
    if row is None:
        raise SignoffRefused(f"unknown account '{name}'")
    if row["disabled"]:
        raise SignoffRefused(f"account '{name}' is disabled")
    return account_of(row)


def password_fingerprint(db, name: str) -> str | None:
    """The SHA-256 of the account's stored password hash (as the audit chain records it), or
    None for no such account: a dashboard session kept across reloads ends when it changes."""
    import hashlib

    row = store.get_user(db, fold_name(name))
    return hashlib.sha256(str(row["password_hash"]).encode()).hexdigest() if row is not None else None
