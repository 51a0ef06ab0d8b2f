"""The one rule for a query_id's characters (SPEC §1.1), for every input that carries one."""

from __future__ import annotations

import json
import unicodedata

__all__ = ["query_id_problem"]

REFUSED_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible format character",
                      "Cs": "a lone surrogate", "Zl": "a line separator", "Zp": "a paragraph separator"}
"""Unicode categories refused in a query_id: control characters (NUL, tab, newline, DEL,
U+0085 ...), invisible format characters (zero-width space, bidirectional overrides,
BOM ...), lone surrogates, and the line and paragraph separators. An id holding one splits
or hides in logs, reports, PR comments and the `FILE:LINE: FIELD: message` lines
themselves, or shows as another id. Spaces, no-break spaces and letters of any script
are printable and stay allowed."""


def query_id_problem(query_id: str) -> str | None:
    """Why `query_id` is refused (a message for `FILE:LINE: query_id: ...`), else None."""
    if query_id.isprintable():  # the common case, in C: no character of any refused category
        return None
    for position, char in enumerate(query_id, start=1):
        kind = REFUSED_CATEGORIES.get(unicodedata.category(char))
        if kind:
            shown = json.dumps(query_id if len(query_id) <= 40 else query_id[:37] + "...")  # escaped: one line
            return (f"holds U+{ord(char):04X}, {kind}, at character {position} of {shown}: "
                    "a query_id must be printable text")
    return None
