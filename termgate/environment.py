"""The TERMGATE_* environment variables, and for one release the EVALCORE_* names they replace.

Every read of a termgate variable goes through `setting`, so the old name works everywhere
the new one does and says so once (CHANGELOG.md, docs/historical-names.md).
"""

from __future__ import annotations

import os
import sys

__all__ = ["setting", "setting_names", "setting_source", "legacy_notice", "ignored_notice", "notice_once", "PREFIX",
           "LEGACY_PREFIX"]

PREFIX = "TERMGATE_"
LEGACY_PREFIX = "EVALCORE_"
_noticed: set[str] = set()


def notice_once(key: str, message: str) -> None:
    """One line on standard error, once per process per key (a warning, never an error)."""
    if key in _noticed:
        return
    _noticed.add(key)
    print(f"termgate: warning: {message}", file=sys.stderr, flush=True)


def legacy_notice(old: str, new: str) -> None:
    """`old` (evalcore's name) was read in place of `new`."""
    notice_once(old, f"{old} is the old name and is read for one more release; use {new}")


def ignored_notice(old: str, new: str) -> None:
    """`old` is there but `new` wins: say so, or a user keeps editing a file nothing reads."""
    notice_once(old, f"{old} is ignored: {new} is read instead (remove or rename the old one)")


def setting(name: str, default: str | None = None) -> str | None:
    """`TERMGATE_<name>` when set (even empty); else `EVALCORE_<name>`, with one warning line
    naming the new variable; else `default`."""
    new, old = setting_names(name)
    value = os.environ.get(new)
    if value is not None:
        if value.strip() == "" and os.environ.get(old, "").strip():
            ignored_notice(old, f"{new} (set, and empty)")
        return value
    value = os.environ.get(old)
    if value is not None:
        legacy_notice(old, new)
        return value
    return default


def setting_source(name: str) -> str:
    """The variable `setting(name)` reads: for messages about its value."""
    new, old = setting_names(name)
    return old if new not in os.environ and old in os.environ else new


def setting_names(name: str) -> tuple[str, str]:
    """Both variables that carry one setting, the new name first: what a child process must
    be given or kept from (a password under either name is a secret)."""
    return PREFIX + name, LEGACY_PREFIX + name
