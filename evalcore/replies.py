"""A chat model's reply read as the terms a person reading it would list (SPEC §6).

The reading, in order:

1. Reasoning blocks (`<think>…</think>`, `<thinking>`, `<reasoning>`, `<reflection>`) are
   dropped; a reply that opens a block and never closes it gave no answer.
2. JSON: the first fenced block or bracket span that parses to a list of terms (strings or
   `{"term", "weight"}`) or to an object whose `terms`, `synonyms` or `expansions` key holds
   one is the answer. A ```json fence, or a whole reply starting with `[` or `{`, that holds
   no such JSON is invalid JSON; other brackets are plain text.
3. A reply that opens with a refusal or apology ("I'm sorry", "I can't", "I cannot", "I am
   unable", "As an AI", …) and lists nothing as bullets or numbers is a refusal.
4. Otherwise a list: when some lines are bulleted or numbered, only those lines are items;
   else every non-empty line is one; when one line is left after lead-in and closing lines
   are set aside, it is split on commas or semicolons (not inside brackets), and a leading
   "and"/"or" after the last comma is dropped ("A, B, and C"). A one-line lead-in that
   ends in a colon before the list ("Synonyms: A, B, C") is set aside too.
5. From each item, bullets, numbering, Markdown emphasis, backticks, surrounding quotes and
   a trailing full stop are removed, and so is a trailing note in parentheses, after a dash
   with spaces on both sides, or after a colon (`naloxone (generic name)`,
   `MI – abbreviation`, `**Coumadin**: brand name`); `X-ray` and `COVID-19` stay whole.
6. Not terms: a line ending with `:`, a Markdown heading or rule, a code fence line, an item
   of more than six words, an item holding a sentence break (`. ` before a capital, after a
   word: `E. coli` and `St. John's wort` stay) or ending with `!` or `?`, and a line starting
   "Here", "Sure", "Certainly", "Of course", "Note", "I'm", "I " (and the like: "I'd",
   "Hope", "Let me know", "Feel free").
7. A reply with no term left, empty text, or invalid JSON raises ValueError naming why; the
   client retries it and, after the last try, the item is errored `unparseable reply: <why>`.
   `[]` is a valid empty expansion.

Choices the spec leaves open are the ones above marked "and the like" and the colon note of
rule 5; docs/harness.md lists them with examples.
"""

from __future__ import annotations

import json
import re

__all__ = ["read_reply", "read_json_reply", "term_entries", "RESPONSE_SCHEMA"]

RESPONSE_SCHEMA = {
    "type": "json_schema",
    "json_schema": {
        "name": "query_expansion",
        "strict": True,
        "schema": {
            "type": "object",
            "properties": {"terms": {"type": "array", "items": {"type": "string"}}},
            "required": ["terms"],
            "additionalProperties": False,
        },
    },
}
"""What `harness --response-format json` asks the endpoint for: an object with a `terms` list."""

_REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "scratchpad")
_BLOCK = re.compile(r"<(%s)\b[^>]*>.*?</\1\s*>" % "|".join(_REASONING_TAGS), re.S | re.I)
_OPEN = re.compile(r"<(%s)\b[^>]*>" % "|".join(_REASONING_TAGS), re.I)
_CLOSE = re.compile(r"</(%s)\s*>" % "|".join(_REASONING_TAGS), re.I)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_TERM_KEYS = ("terms", "synonyms", "expansions")
# where a term list or an object holding one can begin: `[` before a string, an object or
# `]`, `{` before a key or `}` (so "[[[[…" or "{{{{…" costs no parse per bracket)
_JSON_START = re.compile(r'\[(?=\s*["{\]])|\{(?=\s*["}])')
_MAX_STARTS = 1000

_BULLET = re.compile(r"^\s*(?:[-*•+–—·▪►‣○◦]|\d{1,3}[.)]|\(\d{1,3}\)|\[\d{1,3}\]|[a-zA-Z][)])\s+")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|#{1,6}$|[-*_=]{3,}\s*$)")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*$")
_FENCE_LINE = re.compile(r"^\s*(?:```|~~~)")
_REFUSAL = re.compile(
    r"^\W*(?:i(?:'|’)?m\s+sorry|sorry\b|i\s+apologi[sz]e|my\s+apologies|i\s+can(?:'|’)?t\b|i\s+cannot\b|"
    r"i\s+can\s+not\b|i\s+am\s+unable|i(?:'|’)m\s+unable|i\s+am\s+not\s+able|i(?:'|’)m\s+not\s+able|"
    r"i\s+won(?:'|’)?t\b|i\s+will\s+not\b|i\s+do\s+not\s+(?:provide|give|offer)|as\s+an\s+ai\b|"
    r"unfortunately,?\s+i\b)", re.I)
# lead-ins and closings: not terms even when short (rule 6), matched at the start of a line
_NOT_A_TERM = re.compile(
    r"^(?i:here\b|sure\b|certainly\b|of\s+course\b|notes?\b|hope\b|let\s+me\b|feel\s+free\b|please\b|"
    r"absolutely\b|the\s+following\b|these\b|this\b|they\b|those\b)|^I(?:\s|(?:'|’)(?:m|d|ve|ll)\b)")
_LEAD_WORDS = re.compile(r"\b(?:synonyms?|terms?|expansions?|alternatives?|related|keywords?|words?|"
                         r"variants?|phrases?|names?|queries|list)\b", re.I)
_EMPHASIS = re.compile(r"(\*\*\*|\*\*|\*)(?=\S)(.+?)(?<=\S)\1|(?<!\w)(__|_)(?=\S)(.+?)(?<=\S)\3(?!\w)")
_STARS = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)")
_QUOTES = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("„", "“"), ("`", "`"))
_DASH_NOTE = re.compile(r"\s+(?:-{1,2}|–|—)\s+.*$")
_PAREN_NOTE = re.compile(r"\s*[(\[][^()\[\]]*[)\]]\s*$")
_COLON_NOTE = re.compile(r":\s+.*$")
# a sentence break: a word of two or more lower-case letters, ". ", then a capital ("E. coli",
# "St. John's wort" and "Roe vs. Wade" are not sentences)
_SENTENCE = re.compile(r"(?<![A-Za-z])(?!(?i:vs|etc|approx|incl|cf|viz|al|st|dr|mr|mrs|ms|jr|sr|no|co|inc|ltd|mt|ft|"
                       r"gen|gov|sen|rep|corp|dept|univ|ave)\.)[A-Za-z][a-z]+\.\s+[A-Z]")


def term_entries(entries: list) -> list:
    """`entries` when it is a list of terms (strings or objects with a string `term`); else
    ValueError saying what it is."""
    if not isinstance(entries, list):
        raise ValueError("JSON is neither a list of terms nor an object with a terms, synonyms or expansions list")
    for i, entry in enumerate(entries):
        if not (isinstance(entry, str) or (isinstance(entry, dict) and isinstance(entry.get("term"), str))):
            raise ValueError(f"JSON item {i} is neither a string nor an object with a term")
    return entries


def _as_terms(value) -> list | None:
    """The term list a parsed JSON value holds, or None when it holds none."""
    if isinstance(value, dict):
        for key in _TERM_KEYS:
            if key in value:
                return _as_terms(value[key]) if isinstance(value[key], list) else None
        return None
    try:
        return term_entries(value)
    except ValueError:
        return None


def _drop_reasoning(text: str) -> str:
    text = _BLOCK.sub("\n", text)
    close = None
    for close in _CLOSE.finditer(text):  # a closing tag whose opening was in the prompt template
        pass
    if close is not None:
        text = text[close.end():]
    opened = _OPEN.search(text)
    if opened is not None:  # opened and never closed: the reply stopped while reasoning
        text = text[:opened.start()]
    return text


def _json_answer(text: str) -> list | None:
    """Rule 2: the first fenced block or bracket span that holds a term list."""
    decoder = json.JSONDecoder()
    starts = sorted({m.start(2) for m in _FENCE.finditer(text)} | {m.start() for m in _JSON_START.finditer(text)})
    for start in starts[:_MAX_STARTS]:
        body = text[start:].lstrip()
        if not body.startswith(("[", "{")):
            continue
        try:
            value, _ = decoder.raw_decode(body)
        except (json.JSONDecodeError, RecursionError):
            continue
        terms = _as_terms(value)
        if terms is not None:
            return terms
    return None


def _must_be_json(text: str) -> str | None:
    """Why a reply that claims to be JSON is invalid (rule 2), or None when it does not claim to."""
    stripped = text.strip()
    fences = [m for m in _FENCE.finditer(text) if m.group(1).lower() in ("json", "jsonc", "json5")]
    if not fences and not stripped.startswith(("[", "{")):
        return None
    body = fences[0].group(2) if fences else stripped
    if not body.strip():
        return "empty code fence"
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        return f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
    except RecursionError:
        return "invalid JSON: nested too deeply"
    return "JSON is neither a list of terms nor an object with a terms, synonyms or expansions list"


def _unwrap(item: str) -> str:
    """Rule 5 on one item: markup and a trailing note removed."""
    item = _BULLET.sub("", item, count=1).strip()
    for _ in range(3):  # nested emphasis: ***x***, **_x_**
        item = _EMPHASIS.sub(lambda m: m.group(2) or m.group(4), item)
    item = item.replace("`", "").replace("**", "").strip()
    before = None
    while before != item:
        before = item
        item = item.strip().rstrip(",;").strip()
        item = _DASH_NOTE.sub("", item)
        if _PAREN_NOTE.fullmatch(item):  # a term wholly in brackets: "(MI)"
            item = item.strip()[1:-1]
        else:
            item = _PAREN_NOTE.sub("", item)
        item = _COLON_NOTE.sub("", item)
        if item.endswith(".") and "." not in item.rsplit(None, 1)[-1][:-1]:  # "U.S." keeps its stop
            item = item[:-1]
        for left, right in _QUOTES:
            if len(item) >= 2 and item.startswith(left) and item.endswith(right):
                item = item[len(left):-len(right)]
    return item.strip()


def _is_term(item: str) -> bool:
    """Rule 6 on a cleaned item."""
    return bool(item) and len(item.split()) <= 6 and not item.endswith(("!", "?", ":")) \
        and not _SENTENCE.search(item) and not _NOT_A_TERM.match(item)


def _lead_in_split(line: str, single: bool) -> str | None:
    """The list after a lead-in on the same line ("Synonyms for flu: influenza, grippe"), or
    None. On a reply of one line, any head before a colon and a list is a lead-in."""
    head, sep, rest = line.partition(": ")
    if not sep or not rest.strip():
        return None
    head = _STARS.sub("", head).strip()
    if _NOT_A_TERM.match(head) or _LEAD_WORDS.search(head) or (single and ("," in rest or ";" in rest)):
        return rest
    return None


def _split_line(line: str) -> list[str]:
    """One line's items: split on commas and semicolons outside brackets (rule 4)."""
    items, depth, current = [], 0, []
    for char in line:
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        if char in ",;" and not depth:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    items.append("".join(current))
    if len(items) > 1:
        items[-1] = re.sub(r"^\s*(?:and|or)\s+", "", items[-1])
    return [i for i in items if i.strip()]


def _is_prose(line: str) -> bool:
    """A line that reads as a sentence, not as a term or a list of terms."""
    return not all(_is_term(_unwrap(part)) for part in _split_line(line))


def _list_items(text: str) -> list[str]:
    """Rules 4 and 6 on lines: the items of a reply read as a list, as raw strings."""
    lines = [line for line in text.split("\n") if line.strip()
             and not _FENCE_LINE.match(line) and not _HEADING.match(line)]
    rows = [i for i, line in enumerate(lines) if _TABLE_ROW.match(line)]
    if rows:  # a Markdown table: the first cell of each row under the header row
        body = [lines[i] for i in rows if not _TABLE_RULE.match(lines[i])][1:]
        return [_TABLE_ROW.match(line).group(1).split("|")[0] for line in body]
    bulleted = [line for line in lines if _BULLET.match(line)]
    if bulleted:
        return bulleted
    single = len(lines) == 1
    kept = []
    for line in lines:
        rest = _lead_in_split(line, single)
        if rest is not None:
            kept.append(rest)
        elif not _STARS.sub("", line).rstrip().endswith(":") and not _NOT_A_TERM.match(_unwrap(line)):
            kept.append(line)
    if len(kept) > 1:  # a lead-in or closing sentence around a one-line list
        listy = [line for line in kept if not _is_prose(line)]
        if len(listy) == 1 and any(sep in listy[0] for sep in ",;"):
            kept = listy
    if len(kept) == 1:
        return _split_line(kept[0])
    return kept


def read_reply(text: str | None) -> list:
    """The reply's terms as a list of strings or `{"term", "weight"}` objects (SPEC §6);
    ValueError naming why when the reply holds none."""
    if text is None or not text.strip():
        raise ValueError("empty")
    body = _drop_reasoning(text)
    if not body.strip():
        raise ValueError("only reasoning, no answer")
    terms = _json_answer(body)
    if terms is not None:
        return terms
    why = _must_be_json(body)
    if why:
        raise ValueError(why)
    first_line = next(line for line in body.split("\n") if line.strip())
    if _REFUSAL.match(first_line) and not any(_BULLET.match(line) for line in body.split("\n")):
        raise ValueError("refusal")
    items = [_unwrap(item) for item in _list_items(body)]
    items = [item for item in items if _is_term(item)]
    if not items:
        shown = " ".join(body.split())
        raise ValueError(f"no terms found in {shown[:80] + '…' if len(shown) > 80 else shown!r}")
    return items


def read_json_reply(text: str | None) -> list:
    """What `--response-format json` accepts: rules 1, 2 and 7 only (the endpoint was asked
    for JSON; prose means it ignored the schema)."""
    if text is None or not text.strip():
        raise ValueError("empty")
    body = _drop_reasoning(text)
    terms = _json_answer(body)
    if terms is not None:
        return terms
    raise ValueError(_must_be_json(body) or "not JSON, although --response-format json asked for it")
