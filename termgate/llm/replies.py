"""A chat model's reply read as the terms a person reading it would list (SPEC §6).

The reading, in order (docs/harness.md has every rule with examples, and marks the
choices the spec leaves open):

0. The text is cleaned: NFKC, line breaks as "\n", terminal escapes, control, zero-width
   and BiDi characters removed, runs of blanks folded.
1. Reasoning blocks (`<think>…</think>` and the like) are dropped; a reply that opens one
   and never closes it gave no answer; a lone closing tag drops what precedes it.
2. JSON: the first fenced block or bracket span that parses to a list of terms (strings or
   `{"term", "weight"}`) or to an object whose `terms`, `synonyms` or `expansions` key
   holds one, or to JSON holding records (each gives its naming field: `name`, `term`,
   `keyword`, …; `type`, `id`, `tags`, `description`, … never name one) is the answer (a bare `[]` only
   as the whole reply or a whole fence; a string holding a comma list of terms is that
   list). A ```json fence, or a whole reply starting with `[` or `{`, that holds no such
   JSON is invalid JSON; other brackets are plain text. A fence whose content parses as
   JSON is data, whatever its tag; a program (a fence tagged python, js, … or holding code
   statements, that does not parse as JSON) is never read as terms, strings in it or its
   quoted output included: only JSON data fenced beside it as JSON or text, holding terms the
   program does not hold itself, is; else "code, not terms".
   With the query known, a record naming it is the thing described (its own answer list's
   records are the terms); a trailing comma before a closing bracket is forgiven.
3. A reply whose first line is a refusal or apology and that lists nothing, or only echoes
   the prompt up to an empty answer heading ("Expansion terms:"), is a refusal.
4. Otherwise a list: when some lines are bulleted or numbered, only those lines are items
   (sub-items under a heading item too, indented numbering that goes on, and a term line
   right under them); else every non-empty line is one, lead-in, title and closing lines
   set aside; a line, or a bulleted item, is split on commas or semicolons outside
   brackets, and "and"/"or" after the last comma is dropped ("A, B, and C") — only when
   every part is a term with no verb in lower case (else the commas are a sentence's and
   the line gives none, as when its first part is a phrase of four or more words with
   an article: "Using the + operator for addition, subtraction, …"); a short part opening
   with a note word ("including", "also spelled", "e.g.") is a note on the one before, and
   one opening with a note label ("Note:", "P.S.") ends the list. Another kind of marker
   under a heading item is its body; a list whose items are mostly sentences (more than
   half longer than six words and giving no term) is prose: no terms. A label over a
   sentence is the body, never a line set aside around a list; a label repeated over
   items each with a list after it names the topic, not a term.
5. From each item: markers, emphasis, backticks, quotes, a trailing full stop, a stray
   colon or hyphen and a trailing note (in parentheses, after a spaced dash, after a colon
   outside brackets) are removed; a label before a colon whose rest is a list gives the
   list, one whose value repeats its word gives the value, one whose value is a sentence
   or that ends a sentence gives nothing; a commentary label ("Note:", "Source:") makes no
   term. In a list item, `A - B` or `A: B` with both capitalised and `B` a term naming no
   kind of term is two terms; `A = B` is two terms, a clause after B's comma a note, only
   A when B defines it ("to be …", "mouth and nose"); a sentence after a list item's
   colon explains its label when it speaks of it (repeats a word of it, or opens "This",
   "It", "A" …), else the label heads prose; explanation headings ("Etymology:",
   "Definition:") give only a list after them; a dotted abbreviation's "for …" is a note;
   a trailing "..." and a bracket without its pair go, a bracket inside a term is a gloss;
   figures after a label ("20% flat, 30% flat") or "=" ("Lost = ⅛ 2,000") leave the label; a label
   that is the query gives its list, or its one term after a colon. A comma part opening
   "which"/"who"/"whose", or in a bulleted item a long description opening with an article
   ("Colonic, a medical term used to …"), is a note; a long name (title case, or no mark of
   a sentence) is no term and no sentence; a sentence adverb ("additionally, …") opens no list. `X-ray`, `COVID-19`, `E. coli` stay whole.
6. Not terms: more than six words or 100 characters, a sentence break, a trailing `!` or
   `?`, a statement ending with a full stop (a lower-case verb, or a pronoun such as
   "the"), a clause with or without its stop ("Landlords can repair their homes"), no letter or digit, words saying
   there is nothing ("None", "N/A").
7. No term left, empty text or invalid JSON raises ValueError naming why; the client
   retries it and, after the last try, the item is errored `unparseable reply: <why>`.
   `[]` is a valid empty expansion.

Every step is linear in the reply's length (bench/bench_replies.py). The steps live in
reply_clean (0, 1), reply_json (2 and code), reply_lists (4), reply_items (5, 6) and
reply_prose (what reads as a sentence or statement); this module runs them in order.
"""

from __future__ import annotations

import re

from .reply_clean import clean, drop_reasoning
from .reply_items import BULLET, LEAD_WORDS
from .reply_prose import QUERY, query_words
from .reply_json import json_answer, json_entry, must_be_json, term_entries
from .reply_lists import list_terms

__all__ = ["read_reply", "read_json_reply", "drop_reasoning", "term_entries", "RESPONSE_SCHEMA"]

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

_REFUSAL = re.compile(
    r"^\W*(?:i(?:'|’)?m\s+sorry|i\s+am\s+sorry\b|sorry\b|i\s+apologi[sz]e|my\s+apologies|i\s+can(?:'|’)?t\b|i\s+cannot\b|"
    r"i\s+can\s+not\b|i\s+am\s+unable|i(?:'|’)m\s+unable|i\s+am\s+not\s+able|i(?:'|’)m\s+not\s+able|"
    r"i\s+won(?:'|’)?t\b|i\s+will\s+not\b|i\s+do\s+not\s+(?:provide|give|offer)|as\s+an\s+ai\b|"
    r"unfortunately,?\s+i\b)", re.I)
_ANSWER_TAGS = re.compile(r"</?(?i:answer|output|result|response|terms|synonyms|final)>")
_INTERJECTION = re.compile(r"^(?i:sure|certainly|of course|absolutely|okay|ok|great|yes)[!.,]\s+")


def read_reply(text: str | None, query: str | None = None) -> list:
    """The reply's terms as a list of strings or `{"term", "weight"}` objects (SPEC §6);
    ValueError naming why when the reply holds none. `query`, the query the reply expands,
    lets a label that is the query give its values (step 5)."""
    token = QUERY.set(query_words(query) if query and query.strip() else None)
    try:
        return _read(text)
    finally:
        QUERY.reset(token)


def _read(text: str | None) -> list:
    if text is None or not text.strip():
        raise ValueError("empty")
    body = drop_reasoning(clean(text))
    if not body.strip():
        raise ValueError("only reasoning, no answer")
    terms = json_answer(body)
    if terms is not None:
        return [term for entry in terms for term in json_entry(entry)]
    why = must_be_json(body)
    if why:
        raise ValueError(why)
    body = _INTERJECTION.sub("", _ANSWER_TAGS.sub("", body).lstrip(), count=1)  # "Certainly! MI, AMI"
    lines = [line for line in body.split("\n") if line.strip()]
    if not lines:
        raise ValueError("no terms found")
    if _REFUSAL.match(lines[0]) and not any(BULLET.match(line) for line in lines):
        rest = list_terms("\n".join(lines[1:])) if len(lines) > 1 and not _empty_heading(lines[-1]) else []
        # an apology that then echoes the prompt's fields and leaves its answer heading empty
        # ("Domain: software", "Expansion terms:") offered nothing
        if not rest:  # an apology before a list ("Sorry, here is the corrected list:") is not a refusal
            raise ValueError("refusal")
        return rest
    items = list_terms(body)
    if not items:
        shown = " ".join(body.split())
        raise ValueError(f"no terms found in {shown[:80] + '…' if len(shown) > 80 else shown!r}")
    return items


def _empty_heading(line: str) -> bool:
    """Whether `line` is an answer heading with nothing after it ("Expansion terms:")."""
    line = line.strip().strip("*_#").strip()
    return line.endswith(":") and len(line.split()) <= 4 and bool(LEAD_WORDS.search(line))


def read_json_reply(text: str | None) -> list:
    """What `--response-format json` accepts: rules 1, 2 and 7 only (the endpoint was asked
    for JSON; prose means it ignored the schema)."""
    if text is None or not text.strip():
        raise ValueError("empty")
    body = drop_reasoning(clean(text))
    terms = json_answer(body)
    if terms is not None:
        return terms
    raise ValueError(must_be_json(body) or "not JSON, although --response-format json asked for it")
