"""A reply read as a list (SPEC §6, docs/harness.md step 4): which lines are items (bulleted
or numbered lines, or every line with lead-ins and closings set aside, a table's first
column), sub-items, and each line's comma list. Part of the reading in termgate.llm.replies."""

from __future__ import annotations

import re

from .reply_items import (BULLET, ENDS_IN_PREPOSITION, LEAD_WORDS, META_LABEL, NOT_A_TERM, QUOTES, colon_in_sentence,
                          colon_label, figures, is_query, is_term, list_of, prose_before_colon, split_line, strip_note,
                          terms_of, unmark, unquote)
from .reply_prose import (ARTICLE_OPENING, QUERY, defines, is_sentence, is_statement, reads_as_sentence, shares_word,
                          states_a_condition)

_NUMBERED = re.compile(r"^\s*\d{1,3}[.)]\s")
_HEADING = re.compile(r"^\s*(?:#{1,6}\s|#{1,6}$|[-*_=]{3,}\s*$)")
_TABLE_ROW = re.compile(r"^\s*\|(.*)\|\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?[\s:|-]*-[\s:|-]*$")
_FENCE_LINE = re.compile(r"^\s*(?:```|~~~)")
# a title line without a colon: "Synonyms for flu", "Related terms"
_TITLE = re.compile(r"^(?i:(?:synonyms?|expansions?|alternatives?|keywords?|related\s+terms?)(?:\s+(?:for|of)\b.*)?)$")


def _line_is_out(line: str) -> bool:
    """A lead-in or closing line (rule 6) of an unbulleted reply."""
    plain = unmark(line)
    head, rest = strip_note(plain)
    if rest is not None and META_LABEL.match(unmark(head).strip()):
        return True
    if rest is not None and plain.rstrip().endswith(":") and rest.strip(" :") and shares_word(head, rest, 6):
        return False  # "Retirement savings: Retirement savings:": a value repeating its label, a stray colon
    return (plain.rstrip().endswith(":") or bool(_TITLE.match(plain))
            or (bool(NOT_A_TERM.match(plain)) and _lead_in(line, False) is None))


def _lead_in(line: str, single: bool) -> str | None:
    """The list after a lead-in on the same line ("Here are some: A, B"), or None."""
    head, sep, rest = unmark(line).partition(": ")
    if not sep or not rest.strip() or colon_in_sentence(head, rest):
        return None
    if ENDS_IN_PREPOSITION.search(head.strip()) or prose_before_colon(head):
        return None  # "Suggest query expansions for: X" is a sentence, the colon inside it
    if NOT_A_TERM.match(head) or LEAD_WORDS.search(head) or (single and any(c in rest for c in ",;")):
        return rest
    return None


def labelled_sentence(line: str) -> bool:
    """Whether a line is a label over a sentence ("Severity: 15 years in prison for every
    offense …", "Impact on employment: Sexual harassment can have …"): commentary on a
    topic, the body of the reply rather than a lead-in or closing line around a list."""
    labelled = colon_label(unmark(line))
    return labelled is not None and len(labelled[0].split()) <= 4 and (is_sentence(labelled[1]) or is_statement(labelled[1]))


def _is_prose(line: str) -> bool:
    """A line that reads as a sentence, not as a term or a list of terms."""
    parts = split_line(line)
    return not parts or not all(terms_of(part, False) for part in parts)


_INLINE_NUMBER = re.compile(r"(?:^|(?<=\s))(\d{1,2})\.\s+")


def _inline_items(line: str) -> list[str]:
    """A line holding a numbered list inline, three or more numbers running on ("1. Webcams -
    2. Cameras - 3. VideoCameras - 4."), as one line per item (after fresh11; a lead-in
    before the first number stays a line of its own); any other line as it is."""
    found = list(_INLINE_NUMBER.finditer(line))
    numbers = [int(m.group(1)) for m in found]
    if len(found) < 3 or any(b != a + 1 for a, b in zip(numbers, numbers[1:])):
        return [line]
    cuts = [m.start() for m in found] + [len(line)]
    items = [line[a:b].strip().rstrip("-–—,;").strip() for a, b in zip(cuts, cuts[1:])]
    lead = line[:cuts[0]].strip()
    return ([lead] if lead else []) + [item for item in items if not _INLINE_NUMBER.fullmatch(item + " ")]


# a short label whose value opens a numbered list that runs on below ("English: 1. tonsillitis"
# then "2. tonsillectomies"): a heading, and the list's first item on a line of its own (eighth round)
_FIRST_ITEM_AFTER_LABEL = re.compile(r"^([^\n:]{1,40}:)[ \t]+(1[.)][ \t]+\S[^\n]*)(?=\n\s*2[.)]\s)", re.M)


# a list marker alone on its line, the item on the next ("1. " then "Futon - FUTON, …"): one item
_MARKER_ALONE = re.compile(r"^([ \t]*(?:\d{1,3}[.)]|[-*•]))[ \t]*\n[ \t]*(?=[^\s\d*•-])", re.M)


def list_terms(text: str) -> list[str]:
    """Rules 4-6: the terms of a reply read as a list."""
    if text.count(". ") >= 3:
        text = "\n".join(item for line in text.split("\n") for item in _inline_items(line))
    text = _FIRST_ITEM_AFTER_LABEL.sub(r"\1\n\2", text)
    text = _MARKER_ALONE.sub(r"\1 ", text)
    lines = [line for line in text.split("\n") if line.strip()
             and not _FENCE_LINE.match(line) and not _HEADING.match(line)]
    rows = [line for line in lines if _TABLE_ROW.match(line)]
    if rows:  # a Markdown table: the first cell of each row under the header row
        body = [line for line in rows if not _TABLE_RULE.match(line)][1:]
        return [t for line in body for t in terms_of(_TABLE_ROW.match(line).group(1).split("|")[0], True)]
    bulleted = [line for line in lines if BULLET.match(line)]
    if bulleted:
        items = _with_run_on(text) if len(bulleted) < len(lines) else bulleted
        items = _spaced_glosses(_top_items(items))
        return _unless_sentences(_without_topic(_figures_on_labels([(line, terms_of(line, True)) for line in items])))
    if len(lines) > 1 and all(unmark(line).rstrip().endswith(":") for line in lines):
        # sixth round: every line "Phrase:" with nothing after it heads nothing; the colons are
        # stray, as after a bulleted "- Luggage Bags:" with nothing under it (a lead-in stays one)
        lines = [line if _line_is_out(line.rstrip()[:-1]) else line.rstrip()[:-1] for line in lines]
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
        if (len(listy) == 1 and len(split_line(listy[0])) > 1  # commas in brackets make no list
                and not any(labelled_sentence(line) for line in kept)):
            kept = listy
    return _unless_sentences(_without_topic(_figures_on_labels([(line, _line_terms(line)) for line in kept])))


def _figures_on_labels(read: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """The query as a label over figures offers nothing (reply_items), unless another label
    of the list is over figures too: then the figures annotate every label, the query's
    included, and each label is a term (fifth round: "1. **Flat tire**: 20% flat" then "2.
    **Floats on the road**: 45% flat"; "Luggage scale: 1.2" then "Ascender: 3.0")."""
    pairs = [colon_label(unmark(line)) for line, _ in read]
    over = {i for i, pair in enumerate(pairs) if pair and figures(pair[1])}
    if not any(not is_query(pairs[i][0]) and not is_query(pairs[i][0], hyphens=True) for i in over):
        return read
    out = []
    for i, (line, terms) in enumerate(read):
        if i in over and not terms:
            terms = [term for term in [unquote(unmark(pairs[i][0]).strip())] if is_term(term, True)]
        out.append((line, terms))
    return out


def _without_topic(read: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """A label repeated over two or more items, each giving it and a list (two or more terms)
    after it, names the
    topic the lists expand, not a term ("1. Credit Score - credit card, credit-rating" then
    "2. Credit Score - credit-factor, credit-value"): those items give only their lists. One
    such item keeps its label ("breach - breaching, breached" is three terms), and so does a
    label repeated over one second term ("CAGR: Compound annual growth rate" twice)."""
    read = _without_topic_of_prose(read)
    heads: dict[str, int] = {}
    for _, terms in read:
        if len(terms) > 2:
            heads[terms[0].casefold()] = heads.get(terms[0].casefold(), 0) + 1
    repeated = {head for head, count in heads.items() if count > 1}
    if not repeated:
        return read
    out = []
    for line, terms in read:
        head = strip_note(unquote(unmark(line)))[0]
        if (len(terms) > 2 and terms[0].casefold() in repeated and unquote(head).casefold() == terms[0].casefold()
                and not is_query(head)):
            terms = terms[1:]  # the query as the label already gave only its values (eighth round:
            # "- Wireless Router: wireless router, Wi-Fi, …" twice lists the query among them)
        out.append((line, terms))
    return out


def _without_topic_of_prose(read: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """One label heading every item of a list (two or more), over sentences or statements
    after its colon most of which are remarks — they do not say what the label is
    (`defines`) — is the topic of commentary, not a term (sixth round: "1. Slow computers:
    20 years ago, they were called slow computers." … "5. Slow computers: They're not old
    anymore."): no item gives a term, its short values included, fragments of the same
    commentary (as in a list of mostly sentences). The same label over definitions
    ("Living Trusts: A living trust is …" four times), or after a dash ("hair dryer - a
    device that …"), and distinct labels over sentences ("Asthma inhalers: Asthma
    medications … can be used …") stay terms; a note in brackets after the label is no
    other label ("**pink eye** (also known as …):"). Seventh round: when the label is the
    query itself, over sentences, definitions too are commentary ("1. Index Funds: A
    financial instrument that …" three times offers no expansion): three blind labellers
    read four such replies so, one read a fifth ("Living Trusts: A living trust is …") as
    the term."""
    pairs = [colon_label(unmark(line)) for line, _ in read]
    explained = {i for i, pair in enumerate(pairs) if _explains_query(pair)} if QUERY.get() is not None else set()
    if explained and 2 * len(explained) > len(read):
        # after fresh10: the query over sentences in most items ("1. **Rotator Cuff Tear**:
        # Rotator cuff tears can be described as …" twice, then another label): those items
        # explain the query and give nothing; the others keep their terms (the label heads
        # its explanation: neither a term nor a sentence for the mostly-sentences rule)
        return [(f"{pairs[i][0]}:", []) if i in explained else item for i, item in enumerate(read)]
    if len(read) < 2 or any(pair is None for pair in pairs):
        return read  # an item without a colon: no one topic
    label = unquote(pairs[0][0])
    if any(unquote(head).casefold() != label.casefold() for head, _ in pairs):
        return read  # another label: no one topic
    labelled = pairs
    topic = is_query(label)  # seventh round: the query over sentences is explained, not expanded
    said = [(is_sentence(rest) or is_statement(rest)) and (topic or not defines(rest, label)) for _, rest in labelled]
    if 2 * sum(said) <= len(read):
        return read
    return [(line, []) for line, _ in read]  # its short values too: fragments of the same commentary


def _explains_query(pair: tuple[str, str] | None) -> bool:
    """Whether an item's `colon_label` is the query as its label over a sentence or a statement."""
    # after fresh23-fresh26: a phrase opening with an article and ending with a full stop
    # defines what it follows as a sentence does ("Crib sheets: A marketing tool for advertising.")
    return pair is not None and is_query(pair[0], hyphens=True) and (
        is_sentence(pair[1]) or is_statement(pair[1])
        or (ARTICLE_OPENING.match(pair[1]) is not None and pair[1].rstrip().endswith(".")))


def _unless_sentences(read: list[tuple[str, list[str]]]) -> list[str]:
    """The terms of a list's items, none when most of its items are sentences (longer than a
    term can be, and giving no term): its few short items are then fragments of the same
    prose ("1. Printer Support:" over "- Supports printing on any type of device that …"
    five times, and once "- Supports printing on multiple platforms"). A heading item
    ("Brand names:") counts as neither. After fresh27-fresh30: a short condition read as a
    term ("No mouse is available.", "Blood is vital for survival.") is a statement too when
    most items are statements or sentences giving no term ("The mouse is lost.", "Blood
    transfusions can be life-saving."); the list's other terms stay."""
    given, items, sentences, statements = [], 0, 0, 0
    for line, terms in read:
        plain = unmark(line).rstrip()
        if terms:
            given.append((terms, states_a_condition(plain)))
            items += 1
            continue
        if not plain.endswith(":"):
            items += 1
            sentences += reads_as_sentence(plain)
            statements += len(plain.split()) <= 6 and is_statement(plain)
    if 2 * sentences > items:
        return []
    among_statements = 2 * (sentences + statements) > items
    return [term for terms, condition in given if not (condition and among_statements) for term in terms]


def _line_terms(line: str) -> list[str]:
    """The terms of one line of an unbulleted reply: a labelled line as rule 5 reads it, a
    comma or semicolon list when every part is a term, else the line as one item; a line
    that reads as a statement ("The medical domain is diabetes medication.") holds none."""
    line = unmark(line).strip()
    for left, right in QUOTES:  # a whole list in quotes: "A, B, C"
        if len(line) > 2 and line.startswith(left) and line.endswith(right) and "," in line:
            line = line[len(left):-len(right)]
            break
    head, rest = strip_note(line)
    if rest is not None and (line[len(head):len(head) + 2] == ": " or is_query(head)
                             or (LEAD_WORDS.search(head) and len(head.split()) <= 4)):
        # a labelled line, or the query or a list's name before a dash ("travel pillow - travel
        # pillows, bed pillows", "Related terms - sofa, couch", eighth round): the label's rule
        # reads it, not the commas around the dash
        return terms_of(line, False)
    parts = split_line(line)
    if len(parts) > 1:
        return list_of(line, lambda part: terms_of(part, False), parts)
    if is_statement(line, by_words=rest is None):
        return []  # "The medical domain is diabetes medication.", "Viruses cause it." ("Sofa - a seat." is a note's)
    return terms_of(line, False)


# an item's first word joined by a bare hyphen to a phrase of two or more words after it
_HYPHENED_HEAD = re.compile(r"([^\s-]+)-(\S+(?:\s+\S+)+)")


def _spaced_glosses(items: list[str]) -> list[str]:
    """A list's items, where one that joins a word to a phrase with a bare hyphen reads as
    `word - phrase` when the same word, or the same phrase, stands beside a spaced dash in
    another item (tenth round: "2. mammagallina - breast health and wellness" then
    "8. mammagallina-breast health and wellness", "Dislodged-to remove, break something …"):
    the hyphen is the dash written short, not a compound ("Long-term care" is one where no
    item is "Long - …")."""
    heads, glosses = set(), set()
    for line in items:
        head, rest = strip_note(unmark(line))
        if rest is not None and not unmark(line)[len(head):].startswith(": "):
            heads.add(head.strip().lower())
            glosses.add(rest.strip().lower())
    if not heads:
        return items
    out = []
    for line in items:
        marker = BULLET.match(line)
        body = line[marker.end():] if marker else line
        joined = _HYPHENED_HEAD.fullmatch(body.strip())
        if (joined and (joined.group(1).lower() in heads or joined.group(2).lower() in glosses)
                and strip_note(unmark(line))[1] is None):
            line = f"{line[:len(line) - len(body)]}{joined.group(1)} - {joined.group(2)}"
        out.append(line)
    return out


def _with_run_on(text: str) -> list[str]:
    """The bulleted lines, and an unbulleted line that follows one with no blank line
    between when it reads as a term ("* Diabetes Medications" then "Diabetes-Medication"):
    the list runs on. A closing line after a blank line, or a sentence, does not."""
    out, listing = [], False
    for line in text.split("\n"):
        if not line.strip() or _FENCE_LINE.match(line) or _HEADING.match(line) or _TABLE_ROW.match(line):
            listing = False
        elif BULLET.match(line):
            out.append(line)
            listing = True
        elif listing and not line.rstrip().endswith(":") and is_term(unquote(unmark(line))):
            out.append(line)
        else:
            listing = False
    return out


def _top_items(bulleted: list[str]) -> list[str]:
    """The items of a bulleted list: indented sub-items belong to a heading item ("- Brand
    names:" then "  - Tylenol"), and are notes under an item that is a term ("1. Sofa" then
    "   - most common")."""
    indent = [len(line) - len(line.lstrip()) for line in bulleted]
    kinds = [_marker_kind(line) for line in bulleted]
    top = min(indent)
    items, under_heading, numbered, heads = [], True, False, None
    for i, (line, depth) in enumerate(zip(bulleted, indent)):
        if numbered and depth > top and _NUMBERED.match(line):
            items.append(line)  # "1. sofa" then "  2. couch": numbering goes on, an indented sibling
            continue
        if depth <= top and kinds[i] != heads:
            numbered = line.lstrip()[:1].isdigit() and bool(_NUMBERED.match(line))
            under_heading = unmark(line).rstrip().endswith(":")
            # "1. Printer Support:" then "- Supports …" at the same indent: another kind of
            # marker under a heading item is its body, as an indented one is
            nxt = i + 1 < len(bulleted) and indent[i + 1] <= top and kinds[i + 1] != kinds[i]
            heads = kinds[i + 1] if under_heading and nxt else None
            if under_heading and heads is None and (i + 1 == len(bulleted) or indent[i + 1] <= top) \
                    and not LEAD_WORDS.search(unmark(line)) \
                    and (i + 1 == len(bulleted) or len(unquote(unmark(bulleted[i + 1])).split()) <= 6):
                # "- Luggage Bags:" with nothing under it: a stray colon; over a sentence item
                # ("- Printer Support:" then "- Supports printing on any type of device …") it heads it;
                # the next item's note in brackets is no sentence (after fresh27-fresh30: "3. **Pressure**:"
                # then "4. **Pounds** (to emphasize the weight of air)")
                line = line.rstrip()[:-1]
            items.append(line)
        elif under_heading:
            items.append(line)
    return items


def _marker_kind(line: str) -> str:
    """An item's kind of marker: "1" for numbering, else its first character ("-", "*")."""
    marker = line.lstrip()[:1]
    return "1" if marker.isdigit() else marker
