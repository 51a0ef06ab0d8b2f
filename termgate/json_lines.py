"""Where each value of a JSON text starts, so a problem found after parsing can name its line."""

from __future__ import annotations

import bisect
import re
from json.decoder import scanstring

__all__ = ["value_lines", "line_at"]

_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:Infinity|\d[\d.eE+-]*)|true|false|null|NaN")


def value_lines(text: str) -> dict[tuple, int]:
    """Path (keys and list indexes, as in a pydantic error's `loc`) -> the line where that
    value starts, for every value of `text`, a JSON text that has already parsed. {} when
    the text cannot be walked (nested too deeply): the lines are a help, not a check."""
    newlines = [m.start() for m in re.finditer("\n", text)]
    found: dict[tuple, int] = {}

    def walk(pos: int, path: tuple) -> int:
        pos = _SPACE.match(text, pos).end()
        found[path] = bisect.bisect_left(newlines, pos) + 1
        opener = text[pos]
        if opener == '"':
            return scanstring(text, pos + 1)[1]
        if opener not in "{[":
            return _SCALAR.match(text, pos).end()
        closer, index = ("}" if opener == "{" else "]"), 0
        pos = _SPACE.match(text, pos + 1).end()
        if text[pos] == closer:
            return pos + 1
        while True:
            if opener == "{":
                key, pos = scanstring(text, _SPACE.match(text, pos).end() + 1)
                child, pos = (*path, key), _SPACE.match(text, pos).end() + 1  # past the colon
            else:
                child, index = (*path, index), index + 1
            pos = _SPACE.match(text, walk(pos, child)).end()
            if text[pos] == closer:
                return pos + 1
            pos += 1  # the comma

    try:
        walk(0, ())
    except (RecursionError, ValueError, IndexError, AttributeError):
        return {}
    return found


def line_at(lines: dict[tuple, int], loc: tuple) -> int:
    """The line of `loc`, else of its nearest enclosing value that exists (a missing field:
    the object it is missing from); 1 when none is known."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return 1
