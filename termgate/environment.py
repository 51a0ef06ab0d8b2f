"""The TERMGATE_* environment variables, and for one release the EVALCORE_* names they replace.

Every read of a termgate variable goes through `setting`, so the old name works everywhere
the new one does and says so once (CHANGELOG.md, docs/historical-names.md).
"""

from __future__ import annotations

import os
import sys

__all__ = ["setting", "legacy_notice", "PREFIX", "LEGACY_PREFIX"]

PREFIX = "TERMGATE_"
LEGACY_PREFIX = "EVALCORE_"
_noticed: set[str] = set()


def legacy_notice(old: str, new: str) -> None:
    """One line on standard error, once per process per name: `old` was read in place of `new`."""
    if old in _noticed:
        return
    _noticed.add(old)
    print(f"termgate: warning: {old} is the old name and is read for one more release; use {new}",
          file=sys.stderr, flush=True)


def setting(name: str, default: str | None = None) -> str | None:
    """`TERMGATE_<name>` when set (even empty); else `EVALCORE_<name>`, with one warning line
    naming the new variable; else `default`."""
    value = os.environ.get(PREFIX + name)
    if value is not None:
        return value
    value = os.environ.get(LEGACY_PREFIX + name)
    if value is not None:
        legacy_notice(LEGACY_PREFIX + name, PREFIX + name)
        return value
    return default
