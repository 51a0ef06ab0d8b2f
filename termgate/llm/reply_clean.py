"""A reply's text made plain before it is read (SPEC §6, docs/harness.md steps 0 and 1):
cleaning (NFKC, line breaks, controls, zero-width and BiDi characters, runs of blanks) and
reasoning blocks dropped. Part of the reading in termgate.llm.replies."""

from __future__ import annotations

import re
import unicodedata

from ..text import strip_controls

_REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "scratchpad")
_OPEN = re.compile(r"<(%s)\b[^>]*>" % "|".join(_REASONING_TAGS), re.I)
_CLOSE = re.compile(r"</(%s)\s*>" % "|".join(_REASONING_TAGS), re.I)
_ZERO_WIDTH = re.compile(r"[\u200b-\u200d\u2060-\u2064\ufeff]")
_MAX_WS = re.compile(r"[ \t]{2,}")
_BREAKS = re.compile(r"[\r\x85\u2028\u2029]")


def clean(text: str) -> str:
    """The reply as plain lines: NFKC (as terms are compared, SPEC §2 rule 1), line breaks as
    `\n`, terminal escapes, control, zero-width and BiDi characters removed, runs of blanks
    folded (so no pattern below meets a long run of white space)."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n")
    text = _BREAKS.sub("\n", text)
    text = _ZERO_WIDTH.sub("", strip_controls(text))  # escapes, C0/C1 controls, BiDi: termgate.text
    return _MAX_WS.sub(" ", text.replace("\t", " "))


def drop_reasoning(text: str) -> str:
    """Rule 1: reasoning blocks out (a linear scan; a block opened and never closed ends the text)."""
    out, pos = [], 0
    while True:
        opened = _OPEN.search(text, pos)
        if opened is None:
            out.append(text[pos:])
            break
        out.append(text[pos:opened.start()])
        closed = _CLOSE.search(text, opened.end())
        if closed is None:  # opened and never closed: the reply stopped while reasoning
            break
        pos = closed.end()
        out.append("\n")
    text = "".join(out)
    last = None
    for last in _CLOSE.finditer(text):  # a closing tag whose opening was in the chat template
        pass
    return text[last.end():] if last is not None else text
