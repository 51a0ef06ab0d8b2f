"""JSON in a reply, and code (SPEC §6, docs/harness.md step 2): the first fenced block or
bracket span holding a term list is the answer; a fence whose content parses as JSON is
data whatever its tag; a program (a code fence that does not parse as JSON) is never read
as terms. Part of the reading in termgate.llm.replies."""

from __future__ import annotations

import json
import re

from .reply_items import LEAD_WORDS, is_query, is_term, list_of, split_line, unquote
from .reply_prose import QUERY

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.S)
_TERM_KEYS = ("terms", "synonyms", "expansions")
# fences that hold text, not code: a plain list may be fenced; any other language is code (rule 2)
_TEXT_FENCES = ("", "text", "txt", "plain", "plaintext", "markdown", "md", "csv", "list")
_JSON_FENCES = ("json", "jsonc", "json5")
# a code statement: a definition, a call of print or json.dump(s)/load(s), an assignment of a
# collection, a string or a call (`x = {`, `data = get(…)`), `from x import y`; `import x`
# and `return …` count only beside another statement ("import duty", "return policy" are terms)
_CODE_LINE = re.compile(r"^[ \t]*(?:from\s+[\w.]+\s+import\s+\w|(?:async\s+)?def\s+\w+\s*\(|class\s+[A-Z]\w*\s*(?:\([^)\n]*\))?:\s*$|"
                        r"print\s*\(|(?:const|let|var)\s+\w+\s*=|[A-Za-z_][\w.]*(?:\[[^\]\n]*\])?\s*=\s*"
                        r"(?:[\[{\"']|[A-Za-z_][\w.]*\s*\()|.*\bjson\.(?:dumps?|loads?)\s*\()", re.M)
_WEAK_CODE_LINE = re.compile(r"^[ \t]*(?:import\s+\w|return\b)", re.M)
# where a term list or an object holding one can begin: `[` before a string, an object or
# `]`, `{` before a key or `}` (so "[[[[…" or "{{{{…" costs no parse per bracket)
_JSON_START = re.compile(r'\[(?=\s*["{\]])|\{(?=\s*["}])')
_MAX_STARTS = 200
# JSON records (step 2): the fields that name a record's term, first found first; the fields
# that never do (a record's kind, key, labels, explanation)
_NAME_KEYS = ("name", "term", "keyword", "word", "synonym", "value", "defaultValue")
_NOT_TERM_KEYS = frozenset(("type", "kind", "id", "key", "tags", "tag", "label", "labels", "description",
                            "definition", "category", "categories", "note", "notes", "example", "examples",
                            "url", "source", "explanation"))
_MAX_DEPTH = 32
# the keys of an answer list, wherever it stands in the JSON (sixth round)
_ANSWER_KEYS = frozenset(_TERM_KEYS + ("aliases",))
# a string literal in a program, in double or single quotes
_STRING_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'')


def term_entries(entries: list) -> list:
    """`entries` when it is a list of terms (strings or objects with a string `term`); else
    ValueError saying what it is."""
    if not isinstance(entries, list):
        raise ValueError("JSON is neither a list of terms nor an object with a terms, synonyms or expansions list")
    for i, entry in enumerate(entries):
        if not (isinstance(entry, str) or (isinstance(entry, dict) and isinstance(entry.get("term"), str))):
            raise ValueError(f"JSON item {i} is neither a string nor an object with a term")
    return entries


def _as_terms(value, records: bool = True) -> list | None:
    """The term list a parsed JSON value holds, or None when it holds none; with `records`
    false (beside a program, records are the program's data), no record's name."""
    if isinstance(value, dict):
        for key in _TERM_KEYS:
            if key in value:
                return _as_terms(value[key], records) if isinstance(value[key], list) else None
    listed = _answer_lists(value, 0)
    if listed:  # sixth round: a record's own "synonyms" list is its answer, not its name
        return listed
    if isinstance(value, dict):
        while (len(value) == 1 and isinstance(next(iter(value.values())), dict)
               and not LEAD_WORDS.search(str(next(iter(value))).replace("_", " "))):
            value = next(iter(value.values()))  # {"living_trust": {"name": …, "description": …}}: a wrapper naming one record
        name = next((value[key] for key in _NAME_KEYS if isinstance(value.get(key), str)), None)
        if name is not None and (QUERY.get() is None or is_query(name)):
            # one record as the whole JSON, or under one key naming it, is the thing described
            # ({"name": "cell_phone", …}): its name is no term, what its other fields list may
            # be; with the query known, only a record naming the query is (seventh round:
            # {"healthcare_proxy": {"name": "Healthcare", …}} offers "Healthcare")
            value = {key: field for key, field in value.items() if key not in _NAME_KEYS}
        return _named(value, records)
    try:
        return term_entries(value)
    except ValueError:
        pass
    return _named(value, records)


def _answer_lists(value, depth: int) -> list[str]:
    """The strings of the answer lists nested in `value` (sixth round): a `terms`, `synonyms`,
    `expansions` or `aliases` key holding a list of strings, wherever it stands (`{"blood_test":
    [{"name": "Blood Test Results", "synonyms": ["blood test result", …]}, {"name": "Medical
    Tests", …}]}` is the synonyms); where the JSON holds one, the records' names, keywords and
    tags are no answer beside it."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, dict):
        found = []
        for key, field in value.items():
            if str(key).lower() in _ANSWER_KEYS and isinstance(field, list) and field \
                    and all(isinstance(entry, str) for entry in field):
                found.extend(entry for entry in field if is_term(unquote(entry), True))
            elif str(key).lower() not in _NOT_TERM_KEYS:
                found.extend(_answer_lists(field, depth + 1))
        return found
    if isinstance(value, list):
        return [term for entry in value for term in _answer_lists(entry, depth + 1)]
    return []


def _named(value, records: bool = True) -> list | None:
    """The terms `value` holds as records and lists (docs/harness.md step 2), each read as an
    item; None when it holds none."""
    names = [name for name in (unquote(n) for n in _record_names(value, records, 0)) if is_term(name, True)]
    return names or None


_KEYWORD_KEY = re.compile(r"(?i:keyword|key|value|term|synonym|word)_?\d+")
"""A field numbering the terms it holds ("Keyword1", "key2", "value_3")."""


def _record_names(value, records: bool, depth: int) -> list[str]:
    """The terms in `value`: a record (an object with one of `_NAME_KEYS` holding a string)
    gives that field, the first found, and nothing else; another object gives what its
    fields hold, but for fields that never name a term (`_NOT_TERM_KEYS`: type, id, tags,
    description, category, …); a list gives its strings and what its objects and lists
    hold. With `records` false, records give no name."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, dict):
        named = next((key for key in _NAME_KEYS if isinstance(value.get(key), str)), None)
        if named is None:  # no record: what its fields hold, but for the fields that never name a term;
            # after fresh31-fresh34, a string under a numbered keyword field is a term ({"Keyword1":
            # "lumbar puncture", "KeyWord2": "lukerence"}, {"key1": "fees", "type": "string"})
            return [name for key, field in value.items() if str(key).lower() not in _NOT_TERM_KEYS
                    for name in ([field] if isinstance(field, str) and _KEYWORD_KEY.fullmatch(str(key))
                                 else _record_names(field, records, depth + 1))]
        held = [name for key, field in value.items() if str(key).lower() in _ANSWER_KEYS
                for name in _record_names(field, records, depth + 1)]
        if held:
            # a record with records under an answer key of its own (seventh round): they are
            # what it is called, its name the thing described ({"name": "Acid Reflux",
            # "synonyms": [{"type": "adjective"}, {"value": "acetic acid"}]} is "acetic acid")
            return held
        return [value[named]] if records else []
    if isinstance(value, list):
        return [name for entry in value for name in
                ([entry] if isinstance(entry, str) else _record_names(entry, records, depth + 1))]
    return []


def json_entry(entry) -> list:
    """A JSON entry of a text reply: a string holding a comma list of terms is that list
    (`["Lambda, Lua, Python"]`, rule 4 wherever a list stands); anything else as it is."""
    if not isinstance(entry, str) or not any(c in entry for c in ",;") or len(split_line(entry)) < 2:
        return [entry]
    return list_of(entry, lambda part: [unquote(part)] if is_term(unquote(part), True) else []) or [entry]


def json_answer(text: str) -> list | None:
    """Rule 2: the first fenced block or bracket span that holds a term list; in a reply
    holding a program, only JSON data outside it (a whole fence that parses), else
    ValueError `code, not terms`."""
    fences = list(_FENCE.finditer(text))
    programs = [m.group(2) for m in fences if _is_program(m)]
    if programs:
        for m in fences:
            # data beside a program: a fence tagged as JSON or text (one tagged with a
            # language shows more of the program, or its output), holding terms the
            # program does not hold itself (else it is the program's data, quoted again)
            if m.group(1).lower() in _JSON_FENCES + _TEXT_FENCES and _parses(m.group(2)):
                terms = _json_span(m.group(2), records=False)
                if terms is not None and not _held_by(terms, programs):
                    return terms
        raise ValueError("code, not terms")  # strings inside code are not the reply's answer
    found = _json_span(text)
    if found is None and _TRAILING_COMMA.search(text):
        found = _json_span(_without_trailing_commas(text))
    return found


def _broken_json_fences(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a fence tagged as JSON whose content does not parse, a trailing
    comma forgiven (seventh round): a bracket span inside it is a piece of invalid JSON,
    not an answer (`"synonyms": ["heartache", "heartburn"]` in a block broken further on)."""
    return [(m.start(2), m.end(2)) for m in _FENCE.finditer(text) if m.group(1).lower() in _JSON_FENCES
            and not _parses(m.group(2)) and not _parses(_without_trailing_commas(m.group(2)))]


# a comma right before a closing bracket: JSON forbids it, and a reader forgives it
_TRAILING_COMMA = re.compile(r",\s*[\]}]")


def _without_trailing_commas(text: str) -> str:
    """`text` with each comma that stands right before a closing bracket, outside strings,
    taken out (seventh round: `{"keywords": [{…}, {…},]}` is JSON a person reads, and two
    of three labellers did). One pass, linear."""
    out, in_string, escaped, i = [], False, False, 0
    while i < len(text):
        char = text[i]
        if in_string:  # a string ends at its closing quote, or at a line break (no JSON string holds one)
            escaped, in_string = (False, char != "\n") if escaped else (char == "\\", char not in '"\n')
        elif char == '"':
            in_string = True
        elif char == ",":
            j = i + 1
            while j < len(text) and text[j] in " \t\r\n":
                j += 1
            if j < len(text) and text[j] in "]}":
                i += 1
                continue
        out.append(char)
        i += 1
    return "".join(out)


def _held_by(terms: list, programs: list[str]) -> bool:
    """Whether every term of `terms` stands as a string in one of `programs` (then the JSON
    is the program's own data or output, quoted again). Linear: the programs' string
    literals are collected once."""
    held = {a or b for body in programs for a, b in _STRING_LITERAL.findall(body)}
    return all((t if isinstance(t, str) else t.get("term", "")) in held for t in terms)


def _parses(body: str) -> bool:
    """Whether `body` is JSON as a whole."""
    try:
        json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return False
    return True


def _is_program(fence: re.Match) -> bool:
    """A fenced block that holds code: tagged with a programming language, or holding code
    statements (`def`, `x = {…}`, `print(`, `json.dumps(`; `import` and `return` two or
    more times), and not parsing as JSON (JSON is data, whatever the fence's tag)."""
    tag, body = fence.group(1).lower(), fence.group(2)
    coded = ((tag not in _TEXT_FENCES and tag not in _JSON_FENCES) or bool(_CODE_LINE.search(body))
             or len(_WEAK_CODE_LINE.findall(body)) > 1)
    return coded and bool(body.strip()) and not _parses(body)


def _json_span(text: str, records: bool = True) -> list | None:
    """The first fenced block or bracket span of `text` that holds a term list."""
    decoder = json.JSONDecoder()
    fenced = [(m.start(2), m.end(2)) for m in _FENCE.finditer(text)]
    starts = sorted({a for a, _ in fenced} | {m.start() for m in _JSON_START.finditer(text)})
    broken = _broken_json_fences(text)
    covered = -1  # a span inside JSON already read is part of it, not an answer beside it
    for start in starts[:_MAX_STARTS]:
        if start < covered or any(a <= start < b for a, b in broken):
            continue
        if broken and not any(a <= start < b for a, b in fenced):
            continue  # after fresh19-fresh22: the answer was the broken ```json block; a span in
            # the prose around it (`the ["type", "dataType"] syntax …`) is no answer either
        body = text[start:].lstrip()
        if not body.startswith(("[", "{")):
            continue
        try:
            value, end = decoder.raw_decode(body)
        except (json.JSONDecodeError, RecursionError):
            continue
        covered = len(text) - len(body) + end
        terms = _as_terms(value, records)
        if terms == [] and isinstance(value, list) and not _alone(text, body[:end]):
            continue  # "Output format: []" or a checkbox "[ ]" in prose is not the answer
        if terms is not None:
            return terms
    return None


def _alone(text: str, span: str) -> bool:
    """Whether `span` is the whole reply or the whole of a fenced block."""
    return text.strip() == span.strip() or any(m.group(2).strip() == span.strip() for m in _FENCE.finditer(text))


def must_be_json(text: str) -> str | None:
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
