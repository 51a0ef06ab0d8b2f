"""Data printed on a terminal is text (SPEC §5): no escape sequence from a query, a term,
a name or a comment reaches the terminal, and a newline in data cannot forge a line.

`terminal_safe(value)` is for a value from data inside a line we print: it removes C0 and
C1 controls, CSI / OSC / other ESC sequences and BiDi overrides, and folds line breaks
into a visible `\\n`. `terminal_lines(value)` is the same for multi-line data printed as
lines of its own (a model's reply): every line break of the data ends a line, none
survives inside one. `strip_controls(text)` is the same for a whole block of our own
output (our own newlines stay); every CLI line goes through it (termgate.cli.common.echo).
`json_escaped(text)` writes those characters of a JSON document as `\\u` escapes, so the
data keeps its value and the terminal gets none of them.
"""

from __future__ import annotations

import re

__all__ = ["terminal_safe", "terminal_lines", "strip_controls", "json_escaped", "visible_controls", "counted"]

_SEQUENCES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"            # CSI … final byte (colours, cursor moves, clears)
    r"|\x9b[0-?]*[ -/]*[@-~]"             # 8-bit CSI
    r"|[\x1b\x9d]\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC … BEL/ST (titles, hyperlinks)
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"             # DCS, SOS, PM, APC … ST
    r"|[\x90\x98\x9e\x9f][^\x1b\x9c]*(?:\x1b\\|\x9c)?"     # their 8-bit forms
    r"|\x1b[ -/]*[0-~]?")                 # any other ESC sequence (or a lone ESC)
_BREAKS = re.compile(r"\r\n|[\n\r\x0b\x0c\x85\u2028\u2029]")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Every control character but tab and newline, and the BiDi marks and overrides."""


def terminal_safe(value: object) -> str:
    """A data value as one line of plain text."""
    text = _SEQUENCES.sub("", str(value))
    text = _BREAKS.sub(r"\\n", text).replace("\t", " ")
    return _CONTROLS.sub("", text)


def strip_controls(text: str) -> str:
    """Our own multi-line output with every control sequence removed; newlines and tabs stay."""
    text = _SEQUENCES.sub("", text).replace("\r\n", "\n")
    return _CONTROLS.sub("", text)


def terminal_lines(value: object) -> list[str]:
    """Multi-line data as plain text lines: sequences and controls removed, and every line
    break (CR, VT, FF, NEL, LS and PS too) ends a line, so no line can overwrite another."""
    return [terminal_safe(line) for line in _BREAKS.split(_SEQUENCES.sub("", str(value)))]


_JSON_CONTROLS = re.compile(r"[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def json_escaped(text: str) -> str:
    """JSON text from json.dumps (which escapes C0 controls already) with DEL, the C1
    controls and the BiDi marks written as \\u escapes too: the same values, nothing a
    terminal acts on (such characters occur only inside strings)."""
    return _JSON_CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


_BREAK_KEEPING = re.compile(r"\r\n?")


def visible_controls(text: str) -> str:
    """Multi-line data shown as it is, with every control character but tab and newline and
    every BiDi mark written as a visible `\\uXXXX` escape (a raw model reply in the
    dashboard: an ESC or a right-to-left override is shown, never acted on)."""
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", _BREAK_KEEPING.sub("\n", text))


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 flagged item`, `2 flagged items`: a count with its noun in the right number."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
