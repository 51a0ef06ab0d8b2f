"""Names of people: account names, aliases and run authors in one canonical form (SPEC §4).

Four-eyes compares the run's author with every alias of the approver. For that to hold,
`Carol`, ` carol `, `CAROL` and `carol` + a zero-width space must not be four people: a
name is NFKC-normalised, case-folded and trimmed, and then may hold only
`a-z 0-9 . _ @ + -`. Anything else is refused where a name enters evalcore (account
names, aliases, `--author`), so look-alike letters from other scripts cannot pass.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import UsageError

__all__ = ["NAME_CHARACTERS", "canonical_name", "fold_name"]

NAME_CHARACTERS = "a-z 0-9 . _ @ + -"
_ALLOWED = re.compile(r"[a-z0-9._@+-]+")
_NOT_ALLOWED = re.compile(r"[^a-z0-9._@+-]")


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
