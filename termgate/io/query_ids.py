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


def _shown(query_id: str) -> str:
    return json.dumps(query_id if len(query_id) <= 40 else query_id[:37] + "...")  # escaped: one line


def query_id_problem(query_id: str) -> str | None:
    """Why `query_id` is refused (a message for `FILE:LINE: query_id: ...`), else None.

    Besides the refused categories: white space at either end, and text not in Unicode's
    composed form (NFC). Either way two ids would read alike in every report while
    comparing unequal ("q1" and "q1 ", "café" composed and decomposed), so one could
    never find the other's line."""
    if query_id.isascii() and query_id.isprintable():  # the common case, in C
        if query_id.strip(" ") != query_id:
            return _padded(query_id)
        return None
    for position, char in enumerate(query_id, start=1):
        kind = REFUSED_CATEGORIES.get(unicodedata.category(char))
        if kind:
            return (f"holds U+{ord(char):04X}, {kind}, at character {position} of {_shown(query_id)}: "
                    "a query_id must be printable text")
    if query_id.strip() != query_id:
        return _padded(query_id)
    return _not_composed(query_id)


def _padded(query_id: str) -> str:
    return f"{_shown(query_id)} begins or ends with white space: a query_id must not, or it reads as another"


def _not_composed(query_id: str) -> str | None:
    if unicodedata.is_normalized("NFC", query_id):
        return None
    return (f"{_shown(query_id)} is not in Unicode's composed form (NFC), so it reads like "
            f"{_shown(unicodedata.normalize('NFC', query_id))} but differs from it: write the id composed "
            "(most editors and Python's unicodedata.normalize('NFC', id) do)")
