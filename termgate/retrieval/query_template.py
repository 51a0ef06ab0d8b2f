r"""The expanded query, built the way production engines build one (issue 34).

A *request* is `(query_text, [(term, weight), ...])`. Its query is the original query OR
each expansion term as a phrase boosted by its weight, in Tantivy's query syntax. With the
default template,

    QueryTemplate().render("what is a 401(k)?", [('say "hi"', 0.5), ("roth ira", 1.0)])

renders

    (what is a 401\(k\)\?) OR ("say \"hi\""^0.5) OR ("roth ira"^1)

The pieces are configurable (the fields of `QueryTemplate`):

- `query`: the query clause, `{query}` (the query's words, each one a should-clause);
- `term`: one expansion term's clause, `'"{term}"^{weight}'` (a phrase boosted by its weight);
- `fields`: the fields a clause searches, `("title", "text")`.

Substituted values are escaped for Tantivy's query grammar, so a query or a term is always
text, never syntax: every ASCII punctuation character gets a backslash (Tantivy reads `\c`
as the character `c`, inside a phrase or out of one), and so do the words AND, OR, NOT, IN
and TO, which Tantivy would read as operators (`\AND`). Spaces are left as they are:
outside quotes they separate words. Other whitespace (a no-break space, an em space) becomes
a space: Tantivy's grammar reads it neither as a separator nor as part of a word.
`{weight}` is written in fixed point with at most six decimals (`0.5`, `1`, `0.000125`):
Tantivy's boost takes no exponent, which `format(w, ".6g")` writes below 0.0001 (`1e-05`).

A term whose weight is 0 (or rounds to 0 at six decimals) is left out: it is not part of
the query. With no term left, the query is the query clause alone (the unexpanded query).
A blank clause (an empty query text) is left out too; a request with nothing left renders
as the empty query, which matches no document.

A template is checked when it is made: only the placeholders above, `{term}` in `term` and
`{query}` in `query`, known fields, and a sample request must parse. A bad one raises
`TemplateError` (a ValueError) whose `key` names the template key at fault.
"""

from __future__ import annotations

import functools
import math
import re
import string
from collections.abc import Sequence
from dataclasses import dataclass

import tantivy

__all__ = ["QueryTemplate", "TemplateError", "escape", "format_weight", "SEARCHABLE_FIELDS"]

SEARCHABLE_FIELDS = ("title", "text")
"""The corpus fields the index analyses; a template searches some of them."""
_PLACEHOLDERS = {"query": ("query",), "term": ("term", "weight")}
_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")
_OTHER_SPACE = re.compile(r"[^\S \t\r\n]")
"""Whitespace Tantivy's grammar neither skips nor reads as a word (no-break space, em space,
form feed...): it becomes a space, as the analyser would split there anyway."""
_SURROGATE = re.compile("[\ud800-\udfff]")
"""A lone surrogate (JSON's "\\ud800") cannot go to Tantivy as UTF-8: it becomes U+FFFD."""
_KEYWORD = re.compile(r"(?<!\S)(AND|OR|NOT|IN|TO)(?!\S)")
_SAMPLE = ("what is a 401(k)? AND -not* [x] {y}", [('say "hi" OR \\', 0.5), ("x^2:1", 1.0)])


class TemplateError(ValueError):
    """A query template that cannot work; `key` is the template key at fault."""

    def __init__(self, key: str, message: str):
        self.key = key
        super().__init__(f"query template `{key}`: {message}")


@functools.lru_cache(maxsize=1 << 16)  # a query is rendered once per variant, terms recur
def escape(value: str) -> str:
    """`value` as literal text in Tantivy's query grammar, inside a phrase or out of one."""
    value = _SURROGATE.sub("\ufffd", _OTHER_SPACE.sub(" ", value))
    return _KEYWORD.sub(r"\\\1", _SPECIAL.sub(r"\\\1", value))


@functools.lru_cache(maxsize=1 << 12)  # weights recur (two decimals, as models write them)
def format_weight(weight: float) -> str:
    """A boost Tantivy's grammar reads: fixed point, at most six decimals, no exponent."""
    text = f"{float(weight):.6f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"


@functools.cache
def _probe_index() -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    for name in SEARCHABLE_FIELDS:
        builder.add_text_field(name)
    return tantivy.Index(builder.build())


@dataclass(frozen=True)
class QueryTemplate:
    """How a request becomes one query in Tantivy's syntax (see the module docstring)."""

    query: str = "{query}"
    """The query clause; `{query}` is the query text, escaped."""
    term: str = '"{term}"^{weight}'
    """One expansion term's clause; `{term}` is the term, escaped, `{weight}` its weight."""
    fields: tuple[str, ...] = SEARCHABLE_FIELDS
    """The fields every clause searches (Tantivy's default fields)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        for key, allowed in _PLACEHOLDERS.items():
            _check_placeholders(key, getattr(self, key), allowed)
        unknown = [f for f in self.fields if f not in SEARCHABLE_FIELDS]
        if not self.fields or unknown or len(set(self.fields)) != len(self.fields):
            raise TemplateError("fields", f"{list(self.fields)} must name some of {list(SEARCHABLE_FIELDS)}, "
                                          "each once")
        text, terms = _SAMPLE
        for key, rendered in (("query", self.query_clause(text)), ("term", self.term_clause(*terms[0]))):
            try:
                _probe_index().parse_query(rendered, list(self.fields))
            except ValueError as exc:
                raise TemplateError(key, f"the sample {rendered!r} does not parse in Tantivy's query "
                                         f"syntax ({exc})") from None

    def query_clause(self, query: str) -> str:
        """The query clause of `query`, or "" for a blank query."""
        return self.query.format(query=escape(query)) if query.strip() else ""

    def term_clause(self, term: str, weight: float) -> str:
        """The clause of one term, or "" for a term that is left out (weight 0, a blank term)."""
        boost = format_weight(weight) if math.isfinite(weight) and weight > 0 else "0"
        if boost == "0" or not term.strip():
            return ""
        return self.term.format(term=escape(term), weight=boost)

    def render(self, query: str, terms: Sequence[tuple[str, float]] = ()) -> str:
        """The whole query: `(<query clause>) OR (<term clause>) OR ...`; the query clause
        alone when no term is left; "" (matches nothing) when nothing is left."""
        clauses = [c for c in [self.query_clause(query), *(self.term_clause(t, w) for t, w in terms)] if c]
        if len(clauses) == 1:
            return clauses[0]
        return " OR ".join(f"({clause})" for clause in clauses)

    def describe(self) -> dict:
        """JSON-ready: goes into the run's content hash and report."""
        return {"query": self.query, "term": self.term, "fields": list(self.fields)}


def _check_placeholders(key: str, template: str, allowed: tuple[str, ...]) -> None:
    if not isinstance(template, str) or not template.strip():
        raise TemplateError(key, "must be a non-empty string")
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise TemplateError(key, f"{exc} (write a literal brace as {{{{ or }}}})") from None
    names = set()
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in allowed:
            shown = ", ".join("{" + a + "}" for a in allowed)
            raise TemplateError(key, f"unknown placeholder {{{name}}}; it may use {shown}")
        if spec or conversion:
            raise TemplateError(key, f"placeholder {{{name}}} takes no format or conversion")
        names.add(name)
    if allowed[0] not in names:
        raise TemplateError(key, f"must use {{{allowed[0]}}}")
