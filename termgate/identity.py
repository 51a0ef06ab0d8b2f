"""Names of people: account names, aliases and run authors in one canonical form (SPEC §4).

Four-eyes compares the run's author with every alias of the approver. For that to hold,
`Carol`, ` carol `, `CAROL` and `carol` + a zero-width space must not be four people: a
name is NFKC-normalised, case-folded and trimmed, and then may hold only
`a-z 0-9 . _ @ + -`. Anything else is refused where a name enters termgate (account
names, aliases, `--author`), so look-alike letters from other scripts cannot pass.

A single sign-on identity (an OpenID Connect issuer and subject) becomes an alias by
`oidc_alias`, which escapes every character outside that set, so two subjects that differ
only in case (subjects are case-sensitive) stay two aliases.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass

from .errors import UsageError

__all__ = ["canonical_domain", "NAME_CHARACTERS", "OIDC_PREFIX", "canonical_name", "fold_name", "oidc_alias", "oidc_issuer_prefix",
           "SsoIdentity", "same_person"]

NAME_CHARACTERS = "a-z 0-9 . _ @ + -"
_ALLOWED = re.compile(r"[a-z0-9._@+-]+")
_NOT_ALLOWED = re.compile(r"[^a-z0-9._@+-]")
_KEPT = frozenset("abcdefghijklmnopqrstuvwxyz0123456789.@-")  # what oidc_alias keeps as it is
OIDC_PREFIX = "oidc+"


def fold_name(text: str) -> str:
    """NFKC, casefold, trim: the form two spellings of one name share."""
    return unicodedata.normalize("NFKC", text).casefold().strip()


def canonical_name(text: str | None, what: str = "name") -> str:
    """The canonical form of a name given by a user; UsageError when it is empty or holds
    anything outside NAME_CHARACTERS once folded (the message shows the offending character)."""
    folded = fold_name(text or "")
    if not folded:
        raise UsageError(f"{what} is empty")
    if not _ALLOWED.fullmatch(folded):
        bad = _NOT_ALLOWED.search(folded).group()
        raise UsageError(f"{what} {ascii(text)}: {ascii(bad)} is not allowed; a name may hold only "
                         f"{NAME_CHARACTERS} (compared case-insensitively)")
    return folded


def canonical_domain(text: str, what: str = "domain") -> str:
    """A domain name in its one form (issue 32): NFKC, casefold, white space collapsed, as
    terms are (SPEC §2 rule 1); UsageError when it holds a control or invisible format
    character (a zero-width space, a soft hyphen, a BiDi override), so "medical" and
    "medical" + U+200B are never two domains that read alike. Accented names ("santé")
    stay allowed. Empty text gives ''."""
    from .io.query_ids import REFUSED_CATEGORIES

    if not (text.isascii() and text.isprintable()):
        for position, char in enumerate(text, start=1):
            kind = REFUSED_CATEGORIES.get(unicodedata.category(char))
            if kind:
                raise UsageError(f"{what} {json.dumps(text)}: holds U+{ord(char):04X}, {kind}, at character "
                                 f"{position}; a domain must be printable text")
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _escaped(text: str) -> str:
    """Every byte outside _KEPT as `_xx` (lower-case hex; `_` and `+` included), so the
    result is canonical and the escaping can be undone: no two texts share a form."""
    return "".join(chr(b) if chr(b) in _KEPT else f"_{b:02x}" for b in text.encode("utf-8"))


def oidc_issuer_prefix(issuer: str) -> str:
    """What every alias of one identity provider starts with: `oidc+ISSUER+`."""
    return f"{OIDC_PREFIX}{_escaped(issuer)}+"


def oidc_alias(issuer: str, subject: str) -> str:
    """The alias of an OpenID Connect identity, `oidc+ISSUER+SUBJECT` with both escaped
    (`http://idp:9400` -> `http_3a_2f_2fidp_3a9400`): a canonical name that only this
    issuer and subject produce, readable enough to recognise in `termgate users list`."""
    return oidc_issuer_prefix(issuer) + _escaped(subject)


@dataclass(frozen=True)
class SsoIdentity:
    """Who signed in through the identity provider: the ID token's issuer and subject, and
    its verified email (canonical)."""

    issuer: str
    subject: str
    email: str

    @property
    def alias(self) -> str:
        """The account alias this identity is bound to (oidc_alias)."""
        return oidc_alias(self.issuer, self.subject)

    def claims(self) -> dict:
        """As an audit record stores it: {"iss", "sub"}."""
        return {"iss": self.issuer, "sub": self.subject}


def same_person(author: str | None, name: str, aliases=()) -> bool:
    """Four-eyes: whether `author` is this person (name or any alias, canonical). An author
    stored before names were canonical that is not canonical now (a look-alike letter, a
    space) cannot be told apart from anyone: it counts as everyone's, so nobody approves
    that run — evaluate it again under a canonical --author."""
    mine = {fold_name(n) for n in (name, *aliases)}
    try:
        return canonical_name(author, "author") in mine
    except UsageError:
        return True
