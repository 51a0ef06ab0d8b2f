"""A chat model's reply read as the terms a person reading it would list (SPEC §6).

The reading, in order (docs/harness.md has every rule with examples, and marks the
choices the spec leaves open):

0. The text is cleaned: NFKC, line breaks as "\n", terminal escapes, control, zero-width
   and BiDi characters removed, runs of blanks folded.
1. Reasoning blocks (`<think>…</think>` and the like) are dropped; a reply that opens one
   and never closes it gave no answer; a lone closing tag drops what precedes it.
2. JSON: the first fenced block or bracket span that parses to a list of terms (strings or
   `{"term", "weight"}`; or records with a `name`, which give the names) or to an object
   whose `terms`, `synonyms` or `expansions` key holds one is the answer (a bare `[]` only
   as the whole reply or a whole fence; a string holding a comma list of terms is that
   list). A ```json fence, or a whole reply starting with `[` or `{`, that holds no such
   JSON is invalid JSON; other brackets are plain text.
3. A reply whose first line is a refusal or apology and that lists nothing is a refusal.
4. Otherwise a list: when some lines are bulleted or numbered, only those lines are items
   (sub-items under a heading item too, indented numbering that goes on, and a term line
   right under them); else every non-empty line is one, lead-in, title and closing lines
   set aside; a line, or a bulleted item, is split on commas or semicolons outside
   brackets, and "and"/"or" after the last comma is dropped ("A, B, and C") — only when
   every part is a term with no verb in lower case (else the commas are a sentence's and
   the line gives none). A ```python block holding no term list is code, not terms.
5. From each item: markers, emphasis, backticks, quotes, a trailing full stop, a stray
   colon or hyphen and a trailing note (in parentheses, after a spaced dash, after a colon
   outside brackets) are removed; a label before a colon whose rest is a list gives the
   list, one whose value repeats its word gives the value, one whose value is a sentence
   or that ends a sentence gives nothing; a commentary label ("Note:", "Source:") makes no
   term. `X-ray`, `COVID-19`, `E. coli` stay whole.
6. Not terms: more than six words or 100 characters, a sentence break, a trailing `!` or
   `?`, an unbulleted statement ending with a full stop, no letter or digit, words saying
   there is nothing ("None", "N/A").
7. No term left, empty text or invalid JSON raises ValueError naming why; the client
   retries it and, after the last try, the item is errored `unparseable reply: <why>`.
   `[]` is a valid empty expansion.

Every step is linear in the reply's length (bench/bench_replies.py).
"""

from __future__ import annotations

import json
import re
import unicodedata

from ..text import strip_controls

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

_REASONING_TAGS = ("think", "thinking", "reasoning", "reflection", "scratchpad")
_OPEN = re.compile(r"<(%s)\b[^>]*>" % "|".join(_REASONING_TAGS), re.I)
_CLOSE = re.compile(r"</(%s)\s*>" % "|".join(_REASONING_TAGS), re.I)
_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_TERM_KEYS = ("terms", "synonyms", "expansions")
# fences that hold text, not code: a plain list may be fenced; any other language is code (rule 2)
_TEXT_FENCES = ("", "text", "txt", "plain", "plaintext", "markdown", "md", "csv", "list")
_JSON_FENCES = ("json", "jsonc", "json5")
# a code statement: an import, a definition, a call of print or json.dump(s)/load(s), an
# assignment of a literal, a collection or a call (`x = {`, `data = get(…)`), a return
_CODE_LINE = re.compile(r"^[ \t]*(?:import\s+\w|from\s+[\w.]+\s+import\b|(?:async\s+)?def\s+\w+\s*\(|class\s+\w+\s*[(:]|"
                        r"return\b|print\s*\(|(?:const|let|var)\s+\w+\s*=|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?\s*=\s*"
                        r"(?:[\[{(\"']|[A-Za-z_][\w.]*\s*\()|.*\bjson\.(?:dumps?|loads?)\s*\()", re.M)
# where a term list or an object holding one can begin: `[` before a string, an object or
# `]`, `{` before a key or `}` (so "[[[[…" or "{{{{…" costs no parse per bracket)
_JSON_START = re.compile(r'\[(?=\s*["{\]])|\{(?=\s*["}])')
_MAX_STARTS = 200

# a list marker: a symbol bullet ("-", "*", "•", "→", "✅", an emoji, a blockquote ">"),
# numbering ("1.", "1)", "(1)", "[1]", "a)", "ii."), then white space; a checkbox "[ ]"/"[x]"
# after it goes too. "E. coli", "V. cholerae" and "#1" are not markers.
_BULLET = re.compile(r"^\s*(?:[^\w\s\"'“”‘’«»„()\[\]{}<`#@$%&/\\.,:;!?]{1,2}|\d{1,3}[.)]|\(\d{1,3}\)|\[\d{1,3}\]|"
                     r"#\d{1,3}|[a-zA-Z]\)|[ivx]{1,5}\.|[IVX]{2,5}\.)\s+(?:\[[ xX✓✔]?\]\s+)?")
_NUMBERED = re.compile(r"^\s*\d{1,3}[.)]\s")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|#{1,6}$|[-*_=]{3,}\s*$)")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*$")
_FENCE_LINE = re.compile(r"^\s*(?:```|~~~)")
_REFUSAL = re.compile(
    r"^\W*(?:i(?:'|’)?m\s+sorry|sorry\b|i\s+apologi[sz]e|my\s+apologies|i\s+can(?:'|’)?t\b|i\s+cannot\b|"
    r"i\s+can\s+not\b|i\s+am\s+unable|i(?:'|’)m\s+unable|i\s+am\s+not\s+able|i(?:'|’)m\s+not\s+able|"
    r"i\s+won(?:'|’)?t\b|i\s+will\s+not\b|i\s+do\s+not\s+(?:provide|give|offer)|as\s+an\s+ai\b|"
    r"unfortunately,?\s+i\b)", re.I)
# lead-ins and closings (rule 6): a line starting so is not an item; in a bulleted list only
# the sentence-like ones count ("- Note 20 Ultra", "- Sure deodorant", "- This Is Us" are names)
_NOT_A_TERM = re.compile(
    r"^(?i:here\b|sure\b|certainly\b|of\s+course\b|notes?\b|hope\b|let\s+me\b|feel\s+free\b|please\b|"
    r"absolutely\b|the\s+following\b|these\b|this\b|they\b|those\b)|^I(?:\s|(?:'|’)(?:m|d|ve|ll)\b)")
_NOT_A_BULLETED_TERM = re.compile(
    r"^(?i:here\s+(?:are|is)\b|hope\s+this\b|let\s+me\b|feel\s+free\b|please\b)|^I(?:\s|(?:'|’)(?:m|d|ve|ll)\b)")
# words that name the list rather than belong to it ("Synonyms: A, B", "Keywords — A, B")
_LEAD_WORDS = re.compile(r"\b(?:synonyms?|terms?|expansions?|alternatives?|related|keywords?|words?|"
                         r"suggest(?:ions?)?|variants?|phrases?|names?|queries|list|answer|expanded)\b", re.I)
# a title line without a colon: "Synonyms for flu", "Related terms"
_TITLE = re.compile(r"^(?i:(?:synonyms?|expansions?|alternatives?|keywords?|related\s+terms?)(?:\s+(?:for|of)\b.*)?)$")
# labels of commentary: "Note: …", "Source: MeSH", "Disclaimer: …" are not terms at all
_META_LABEL = re.compile(r"^(?i:notes?|disclaimer|sources?|references?|tips?|warning|caution|explanation|context|"
                         r"query|input|output|reasoning|rationale|remember|important|nb|p\.?s)$")
# "there are none": not a term (rule 7 then makes the reply unparseable)
_NONE_WORDS = re.compile(r"^(?i:\d{1,2}|none|none found|n/?a|nil|null|nothing(?: found)?|etc|and so on|"
                         r"no (?:synonyms?|terms?|expansions?|results?|alternatives?|matches)(?: (?:found|available))?)$")
MAX_TERM_CHARS = 100
"""An item longer than this is not a term (a pasted paragraph, a runaway token), whatever its words."""
_STARS = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)")
_QUOTES = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("„", "“"), ("`", "`"))
_DASHES = (" - ", " -- ", " – ", " — ")
# a sentence break (rule 6: ". " inside an item): a word of two or more letters, ". " (or
# "? ", "! "), then more text; an initial or a common abbreviation before the stop is not a
# break ("E. coli", "St. John's wort", "Roe vs. Wade" are terms)
_SENTENCE = re.compile(r"(?<![A-Za-z])(?!(?i:vs|etc|approx|incl|cf|viz|al|st|dr|mr|mrs|ms|jr|sr|no|co|inc|ltd|mt|ft|"
                       r"gen|gov|sen|rep|corp|dept|univ|ave|fig)\.)[A-Za-z][a-z]+[.?!]\s+\w")
# a label ending with a preposition is the start of a sentence, not a heading ("… expansions for: X")
_ENDS_IN_PREPOSITION = re.compile(r"\b(?i:for|to|of|about|with|in|on|by|from|as|at|into|like)$")
# a finite verb written in lower case: an unbulleted line ending with a full stop that holds one
# is a statement, not a term ("- This Is Us", a title, is bulleted and capitalised)
_STATEMENT = re.compile(r"\s(?:is|are|was|were|has|have|had|can|could|will|would|should|refers?|means?|involves?)\s")
# a note after a dash describes ("a thick, scaly layer", "the clinical term"); a list of terms does not
_DESCRIBES = re.compile(r"^\W*(?i:a|an|the|of|to|for|used|refers?|means?|not|also|see|as|such|e\.g\.|i\.e\.|"
                       r"usually|often|especially|including|sometimes)(?:\s|$)")
# a note naming what kind of term the one before it is ("Tylenol - Brand name", "MI: Abbreviation")
_KIND = re.compile(r"\b(?i:terms?|names?|words?|abbreviations?|abbr|acronyms?|initialism|spellings?|synonyms?|"
                   r"variants?|slang|usage|forms?|plural|singular|nouns?|verbs?|adjectives?|adverbs?|brand|generic|"
                   r"informal|formal|colloquial|equivalent|translation|example)\W*$")
# a lower-case article inside a phrase: a list whose first part of four or more words holds one
# is a description that names things ("Using the + operator for addition, subtraction, …")
_ARTICLE = re.compile(r"\s(?:the|a|an)\s")
# a clause after a comma that explains what comes before it ("Fares = flights, which can be …")
_CLAUSE = re.compile(r",\s*(?i:which|who|whose|where|that|as\s+in|as\s+it|i\.e\.|e\.g\.|meaning|referring)\b")
_ZERO_WIDTH = re.compile(r"[\u200b-\u200d\u2060-\u2064\ufeff]")
_ANSWER_TAGS = re.compile(r"</?(?i:answer|output|result|response|terms|synonyms|final)>")
_MAX_WS = re.compile(r"[ \t]{2,}")
_BREAKS = re.compile(r"[\r\x85\u2028\u2029]")
_INTERJECTION = re.compile(r"^(?i:sure|certainly|of course|absolutely|okay|ok|great|yes)[!.,]\s+")


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
        pass
    # a list of records each naming one ([{"name": "MI", "description": "…"}]): the names
    if isinstance(value, list) and value and all(isinstance(e, dict) and isinstance(e.get("name"), str)
                                                 for e in value):
        return [name for name in (_unquote(e["name"]) for e in value) if _is_term(name, True)]  # read as items
    return None


def _json_entry(entry) -> list:
    """A JSON entry of a text reply: a string holding a comma list of terms is that list
    (`["Lambda, Lua, Python"]`, rule 4 wherever a list stands); anything else as it is."""
    if not isinstance(entry, str) or not any(c in entry for c in ",;") or len(_split_line(entry)) < 2:
        return [entry]
    return _list_of(entry, lambda part: [_unquote(part)] if _is_term(_unquote(part), True) else []) or [entry]


def _json_answer(text: str) -> list | None:
    """Rule 2: the first fenced block or bracket span that holds a term list; in a reply
    holding a program, only JSON data outside it (a whole fence that parses), else
    ValueError `code, not terms`."""
    fences = list(_FENCE.finditer(text))
    if any(_is_program(m) for m in fences):
        for m in fences:
            if _parses(m.group(2)):
                terms = _json_span(m.group(2))
                if terms is not None:
                    return terms
        raise ValueError("code, not terms")  # strings inside code are not the reply's answer
    return _json_span(text)


def _parses(body: str) -> bool:
    """Whether `body` is JSON as a whole."""
    try:
        json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def _is_program(fence: re.Match) -> bool:
    """A fenced block that holds code: tagged with a programming language, or holding code
    statements (`import`, `def`, `x = {…}`, `print(`, `json.dumps(`), and not parsing as
    JSON (JSON is data, whatever the fence's tag)."""
    tag, body = fence.group(1).lower(), fence.group(2)
    coded = (tag not in _TEXT_FENCES and tag not in _JSON_FENCES) or bool(_CODE_LINE.search(body))
    return coded and bool(body.strip()) and not _parses(body)


def _json_span(text: str) -> list | None:
    """The first fenced block or bracket span of `text` that holds a term list."""
    decoder = json.JSONDecoder()
    starts = sorted({m.start(2) for m in _FENCE.finditer(text)} | {m.start() for m in _JSON_START.finditer(text)})
    for start in starts[:_MAX_STARTS]:
        body = text[start:].lstrip()
        if not body.startswith(("[", "{")):
            continue
        try:
            value, end = decoder.raw_decode(body)
        except (json.JSONDecodeError, RecursionError):
            continue
        terms = _as_terms(value)
        if terms == [] and isinstance(value, list) and not _alone(text, body[:end]):
            continue  # "Output format: []" or a checkbox "[ ]" in prose is not the answer
        if terms is not None:
            return terms
    return None


def _alone(text: str, span: str) -> bool:
    """Whether `span` is the whole reply or the whole of a fenced block."""
    return text.strip() == span.strip() or any(m.group(2).strip() == span.strip() for m in _FENCE.finditer(text))


def _must_be_json(text: str) -> str | None:
    """Why a reply that claims to be JSON is invalid (rule 2), or None when it does not claim to."""
    stripped = text.strip()
    fences = [m for m in _FENCE.finditer(text) if m.group(1).lower() in _JSON_FENCES]
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


def _clean(text: str) -> str:
    """The reply as plain lines: NFKC (as terms are compared, SPEC §2 rule 1), line breaks as
    `\n`, terminal escapes, control, zero-width and BiDi characters removed, runs of blanks
    folded (so no pattern below meets a long run of white space)."""
    text = unicodedata.normalize("NFKC", text).replace("\r\n", "\n")
    text = _BREAKS.sub("\n", text)
    text = _ZERO_WIDTH.sub("", strip_controls(text))  # escapes, C0/C1 controls, BiDi: termgate.text
    return _MAX_WS.sub(" ", text.replace("\t", " "))


def _strip_note(item: str) -> tuple[str, str | None]:
    """(head, rest) of `head: rest` or `head – rest`, or (item, None); a colon or dash inside
    brackets is part of a note there ("(user intent: symptom lookup)"), not a separator.
    Linear: str.find, or one scan when the item holds a bracket."""
    if "(" not in item and "[" not in item and "{" not in item:
        cut = item.find(": ")
        dash = min((i for i in (item.find(d) for d in _DASHES) if i > 0), default=-1)
        if cut > 0 and (dash < 0 or cut < dash):
            return item[:cut], item[cut + 2:]
        if dash > 0:
            return item[:dash], item[dash:].lstrip(" -–—")
        return item, None
    depth, dash_at = 0, -1
    for i, char in enumerate(item):
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        elif depth or i == 0:
            continue
        elif char == ":" and item.startswith(": ", i):
            if dash_at < 0:
                return item[:i], item[i + 2:]
            break
        elif dash_at < 0 and char == " " and any(item.startswith(d, i) for d in _DASHES):
            dash_at = i
    if dash_at > 0:
        return item[:dash_at], item[dash_at:].lstrip(" -–—")
    return item, None


def _unmark(item: str) -> str:
    """Bullets, numbering, emphasis and backticks off one item."""
    for _ in range(2):  # "> - x", "**1.** x"
        item = _BULLET.sub("", item, count=1)
        item = _STARS.sub("", item.replace("`", "")).strip()
    return item


def _terms_of(item: str, bulleted: bool, labelled: bool = True) -> list[str]:
    """Rules 5 and 6 on one item: the terms it holds (none, one, or — once, not within a
    list already labelled — a labelled list)."""
    item = _unmark(item)
    if not item:
        return []
    if " = " in item:
        pair = _equated(item, bulleted)
        if pair:
            return pair
    head, rest = _strip_note(item)
    colon = rest is not None and item[len(head):len(head) + 2] == ": "
    if rest is not None and labelled:
        label = _unquote(_unmark(head).strip(" :").strip())  # "scabies (medical term)": the note is no lead word
        if _META_LABEL.match(label):
            return []  # "Note: …", "Source: MeSH"
        if colon and (_ENDS_IN_PREPOSITION.search(label) or _prose_before_colon(label)):
            return []  # "Suggest query expansions for: X": the colon is inside a sentence
        listy = any(c in rest for c in ",;")
        listed = rest.strip() and (label.isdigit() or (_LEAD_WORDS.search(label) and (colon or listy))
                                   or _NOT_A_TERM.match(label) or (colon and listy))
        if listed:  # "Synonyms: A, B", "Brand names: Tylenol, Panadol", "1: tablet"
            return _list_of(rest, lambda part: _terms_of(part, True, False))
        if (listy and not colon and len(_split_line(rest)) > 1 and not rest.rstrip().endswith(".")
                and not any(_DESCRIBES.match(part) for part in _split_line(rest))):
            # "breach - breaching, breached": a list of terms, not a note ("a disease, spread by contact")
            more = _list_of(rest, lambda part: _terms_of(part, True, False))
            if more:
                return _terms_of(head, bulleted, False) + more
        if bulleted and not listy and _second_term(head, rest):
            # "1. Financial crisis - Financial disaster", "* Last Will and Ends: Last Will and Die"
            return _terms_of(head, bulleted, False) + [_unquote(_unmark(rest))]
        if colon and not bulleted and _is_sentence(rest):
            return []  # "Coffee maker: A coffee maker is a device …", "Chatbot: Hey there! …"
        if colon and not bulleted:
            value = _unquote(_unmark(rest).rstrip(":"))  # a stray colon after the value goes
            if _is_term(value) and _variant(label, value):
                return [value]  # "Laptop bag: laptop bags": the label names the topic, the value is the term
    if rest is not None:
        item = head  # "Coumadin: brand name", "MI – abbreviation": the rest is a note
    if bulleted and rest is None and ("," in item or ";" in item) and len(_split_line(item)) > 1:
        return _list_of(item, lambda part: _terms_of(part, True, False))  # "- Dissolution, divorce"
    item = _unquote(item)
    if not _is_term(item, bulleted):
        return []
    return [item]


def _second_term(head: str, rest: str) -> bool:
    """Whether the `B` of a list item `A - B` or `A: B` is a second term rather than a note
    on `A`: both are written as names are, starting with a capital letter, and `B` is a term
    (rule 6) that opens with no describing word and names no kind of term ("Brand name",
    "Abbreviation"), as notes do ("MI – abbreviation", "Coumadin: the brand name")."""
    a, b = _unquote(_unmark(head)), _unquote(_unmark(rest))
    return (a[:1].isupper() and b[:1].isupper() and _is_term(b, True) and not _is_sentence(rest)
            and not _DESCRIBES.match(b) and not _KIND.search(b))


def _equated(item: str, bulleted: bool) -> list[str]:
    """`A = B` offers two terms as one meaning ("Fares = flights, which can be …"): both,
    when both are terms; a clause after B's comma ("which …", "as in …") is a note. None
    when a side is not a term (then the item is read as any other)."""
    left, _, right = item.partition(" = ")
    clause = _CLAUSE.search(right)
    if clause:
        right = right[:clause.start()]
    a, b = _unquote(left), _list_of(right, lambda part: _terms_of(part, True, False))
    if not b or not _is_term(a, bulleted):
        return []
    return [a] + b


def _list_of(text: str, read, parts: list[str] | None = None) -> list[str]:
    """The terms of a comma or semicolon list when every part of it is a term; none when a
    part is not (then the commas are a sentence's: "It is designed with comfort, elegance,
    and beauty in mind, making it perfect for parties")."""
    found = []
    parts = _split_line(text) if parts is None else parts
    if parts and len(parts[0].split()) >= 4 and _ARTICLE.search(f" {parts[0].strip()} "):
        return []  # "Using the + operator for addition, subtraction, …": a description naming things
    for part in parts:
        if " " in part.strip() and _STATEMENT.search(f" {part.strip()} "):
            return []  # "The sofa is designed with comfort, elegance, …": a clause
        terms = read(part)
        if not terms:
            return []
        found.extend(terms)
    return found


def _prose_before_colon(head: str) -> bool:
    """Whether the text before a colon is sentences whose last one names no list ("… in a
    query? I can provide more details: X"); "You are an assistant. I suggest: X" names one."""
    last = None
    for last in _SENTENCE.finditer(head):
        pass
    return last is not None and not _LEAD_WORDS.search(head[last.end() - 1:])


def _variant(label: str, value: str) -> bool:
    """Whether `value` repeats a word of `label`, whole or inflected ("sofa" / "sofas")."""
    mine = [w for w in re.findall(r"\w{3,}", label.lower())][:6]
    return any(a.startswith(b) or b.startswith(a) for a in mine for b in re.findall(r"\w{3,}", value.lower())[:6])


def _is_sentence(text: str) -> bool:
    """Whether `text` reads as a sentence rather than a short note: it holds a sentence
    break, ends with `!` or `?`, or ends with a full stop after more than six words."""
    text = text.strip()
    return bool(_SENTENCE.search(text)) or text.endswith(("!", "?")) or (text.endswith(".") and len(text.split()) > 6)


def _unquote(item: str) -> str:
    """Trailing notes in brackets, a trailing full stop and surrounding quotes (a few passes:
    each pass removes one layer, so nothing here is quadratic)."""
    for _ in range(4):
        before = item
        item = item.strip().rstrip(",;").strip()
        if item.endswith((")", "]")):
            opening = item.rfind("(" if item.endswith(")") else "[")
            if opening == 0:  # a term wholly in brackets: "(MI)"
                item = item[1:-1]
            elif opening > 0 and not any(c in item[opening + 1:-1] for c in "()[]"):
                item = item[:opening]  # "naloxone (generic name)"
        item = item.strip()
        if len(item) > 2 and item.endswith("-") and item[-2].isalpha():  # "run- (verb)"
            item = item[:-1]
        if item.endswith("..."):  # "luggables...": a trailing ellipsis says the list goes on, not part of a term
            item = item.rstrip(".")
        elif item.endswith(".") and "." not in item.rsplit(None, 1)[-1][:-1]:  # "U.S." keeps its stop
            item = item[:-1]
        for left, right in _QUOTES:
            if len(item) >= 2 and item.startswith(left) and item.endswith(right):
                item = item[len(left):-len(right)]
        if item == before:
            break
    return item.strip()


def _is_term(item: str, bulleted: bool = False) -> bool:
    """Rule 6 on a cleaned item."""
    starters = _NOT_A_BULLETED_TERM if bulleted else _NOT_A_TERM
    return (bool(item) and any(c.isalnum() for c in item) and len(item) <= MAX_TERM_CHARS and len(item.split()) <= 6
            and not item.endswith(("!", "?", ":")) and not _SENTENCE.search(item)
            and not starters.match(item) and not _NONE_WORDS.match(item))


def _split_line(line: str) -> list[str]:
    """One line's items: split on commas and semicolons outside brackets (rule 4); a line
    that is wholly one bracketed list ("['sofa', 'couch']") is split inside it."""
    stripped = line.strip()
    if len(stripped) > 2 and stripped[0] == "[" and stripped[-1] == "]" and "," in stripped:
        line = stripped[1:-1]
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
        # "Some synonyms are A, B and C": a short lead-in ends at its verb (a long one —
        # "The query can be expanded to include synonyms such as A, B" — is a sentence)
        lead = re.match(r"^(.*?\b(?:are|include|includes|is|would be)\b)\s+(.*)$", items[0], re.S)
        if lead and _LEAD_WORDS.search(lead.group(1)) and len(lead.group(1).split()) <= 6:
            items[0] = lead.group(2)
    return [i for i in items if i.strip()]


def _line_is_out(line: str) -> bool:
    """A lead-in or closing line (rule 6) of an unbulleted reply."""
    plain = _unmark(line)
    head, rest = _strip_note(plain)
    if rest is not None and _META_LABEL.match(_unmark(head).strip()):
        return True
    if rest is not None and plain.rstrip().endswith(":") and rest.strip(" :") and _variant(head, rest):
        return False  # "Retirement savings: Retirement savings:": a value repeating its label, a stray colon
    return (plain.rstrip().endswith(":") or bool(_TITLE.match(plain))
            or (bool(_NOT_A_TERM.match(plain)) and _lead_in(line, False) is None))


def _lead_in(line: str, single: bool) -> str | None:
    """The list after a lead-in on the same line ("Here are some: A, B"), or None."""
    head, sep, rest = _unmark(line).partition(": ")
    if not sep or not rest.strip():
        return None
    if _ENDS_IN_PREPOSITION.search(head.strip()) or _prose_before_colon(head):
        return None  # "Suggest query expansions for: X" is a sentence, the colon inside it
    if _NOT_A_TERM.match(head) or _LEAD_WORDS.search(head) or (single and any(c in rest for c in ",;")):
        return rest
    return None


def _is_prose(line: str) -> bool:
    """A line that reads as a sentence, not as a term or a list of terms."""
    parts = _split_line(line)
    return not parts or not all(_terms_of(part, False) for part in parts)


def _list_terms(text: str) -> list[str]:
    """Rules 4-6: the terms of a reply read as a list."""
    lines = [line for line in text.split("\n") if line.strip()
             and not _FENCE_LINE.match(line) and not _HEADING.match(line)]
    rows = [line for line in lines if _TABLE_ROW.match(line)]
    if rows:  # a Markdown table: the first cell of each row under the header row
        body = [line for line in rows if not _TABLE_RULE.match(line)][1:]
        return [t for line in body for t in _terms_of(_TABLE_ROW.match(line).group(1).split("|")[0], True)]
    bulleted = [line for line in lines if _BULLET.match(line)]
    if bulleted:
        items = _with_run_on(text) if len(bulleted) < len(lines) else bulleted
        return [term for line in _top_items(items) for term in _terms_of(line, True)]
    single = len(lines) == 1
    kept = []
    for line in lines:
        rest = _lead_in(line, single)
        if rest is not None:
            kept.append(rest)
        elif not _line_is_out(line):
            kept.append(line)
    if len(kept) > 1:  # a lead-in or closing sentence around a one-line list
        listy = [line for line in kept if not _is_prose(line)]
        if len(listy) == 1 and any(sep in listy[0] for sep in ",;"):
            kept = listy
    return [term for line in kept for term in _line_terms(line)]


def _line_terms(line: str) -> list[str]:
    """The terms of one line of an unbulleted reply: a labelled line as rule 5 reads it, a
    comma or semicolon list when every part is a term, else the line as one item; a line
    that reads as a statement ("The medical domain is diabetes medication.") holds none."""
    line = _unmark(line).strip()
    for left, right in _QUOTES:  # a whole list in quotes: "A, B, C"
        if len(line) > 2 and line.startswith(left) and line.endswith(right) and "," in line:
            line = line[len(left):-len(right)]
            break
    head, rest = _strip_note(line)
    if rest is not None and line[len(head):len(head) + 2] == ": ":
        return _terms_of(line, False)
    parts = _split_line(line)
    if len(parts) > 1:
        return _list_of(line, lambda part: _terms_of(part, False), parts)
    plain = _unmark(line).strip()
    if plain.endswith(".") and _STATEMENT.search(plain):
        return []
    return _terms_of(line, False)


def _with_run_on(text: str) -> list[str]:
    """The bulleted lines, and an unbulleted line that follows one with no blank line
    between when it reads as a term ("* Diabetes Medications" then "Diabetes-Medication"):
    the list runs on. A closing line after a blank line, or a sentence, does not."""
    out, listing = [], False
    for line in text.split("\n"):
        if not line.strip() or _FENCE_LINE.match(line) or _HEADING.match(line) or _TABLE_ROW.match(line):
            listing = False
        elif _BULLET.match(line):
            out.append(line)
            listing = True
        elif listing and not line.rstrip().endswith(":") and _is_term(_unquote(_unmark(line))):
            out.append(line)
        else:
            listing = False
    return out


def _top_items(bulleted: list[str]) -> list[str]:
    """The items of a bulleted list: indented sub-items belong to a heading item ("- Brand
    names:" then "  - Tylenol"), and are notes under an item that is a term ("1. Sofa" then
    "   - most common")."""
    indent = [len(line) - len(line.lstrip()) for line in bulleted]
    top = min(indent)
    items, under_heading, numbered = [], True, False
    for i, (line, depth) in enumerate(zip(bulleted, indent)):
        if numbered and depth > top and _NUMBERED.match(line):
            items.append(line)  # "1. sofa" then "  2. couch": numbering goes on, an indented sibling
            continue
        if depth <= top:
            numbered = line.lstrip()[:1].isdigit() and bool(_NUMBERED.match(line))
            under_heading = _unmark(line).rstrip().endswith(":")
            if under_heading and (i + 1 == len(bulleted) or indent[i + 1] <= top) \
                    and not _LEAD_WORDS.search(_unmark(line)):
                line = line.rstrip()[:-1]  # "- Luggage Bags:" with nothing under it: a stray colon
            items.append(line)
        elif under_heading:
            items.append(line)
    return items


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


def read_reply(text: str | None) -> list:
    """The reply's terms as a list of strings or `{"term", "weight"}` objects (SPEC §6);
    ValueError naming why when the reply holds none."""
    if text is None or not text.strip():
        raise ValueError("empty")
    body = drop_reasoning(_clean(text))
    if not body.strip():
        raise ValueError("only reasoning, no answer")
    terms = _json_answer(body)
    if terms is not None:
        return [term for entry in terms for term in _json_entry(entry)]
    why = _must_be_json(body)
    if why:
        raise ValueError(why)
    body = _INTERJECTION.sub("", _ANSWER_TAGS.sub("", body).lstrip(), count=1)  # "Certainly! MI, AMI"
    lines = [line for line in body.split("\n") if line.strip()]
    if not lines:
        raise ValueError("no terms found")
    if _REFUSAL.match(lines[0]) and not any(_BULLET.match(line) for line in lines):
        rest = _list_terms("\n".join(lines[1:])) if len(lines) > 1 else []
        if not rest:  # an apology before a list ("Sorry, here is the corrected list:") is not a refusal
            raise ValueError("refusal")
        return rest
    items = _list_terms(body)
    if not items:
        shown = " ".join(body.split())
        raise ValueError(f"no terms found in {shown[:80] + '…' if len(shown) > 80 else shown!r}")
    return items


def read_json_reply(text: str | None) -> list:
    """What `--response-format json` accepts: rules 1, 2 and 7 only (the endpoint was asked
    for JSON; prose means it ignored the schema)."""
    if text is None or not text.strip():
        raise ValueError("empty")
    body = drop_reasoning(_clean(text))
    terms = _json_answer(body)
    if terms is not None:
        return terms
    raise ValueError(_must_be_json(body) or "not JSON, although --response-format json asked for it")
