"""One item of a reply read as terms (SPEC §6, docs/harness.md steps 5 and 6): markers,
emphasis, quotes and notes off, labels, pairs, comma lists inside an item, and what is not a
term. Part of the reading in termgate.llm.replies."""

from __future__ import annotations

import re
from functools import lru_cache

from .reply_prose import (ARTICLE_OPENING, QUERY, RELATIVE_PRONOUN, SENTENCE, STATEMENT, is_clause, is_sentence,
                          is_statement, names_a_kind, query_words, reads_as_sentence, shares_word, speaks_of, states_a_condition)

# a list marker: a symbol bullet ("-", "*", "•", "→", "✅", an emoji, a blockquote ">"),
# numbering ("1.", "1)", "(1)", "[1]", "a)", "ii."), then white space; a checkbox "[ ]"/"[x]"
# after it goes too. "E. coli", "V. cholerae" and "#1" are not markers.
BULLET = re.compile(r"^\s*(?:[^\w\s\"'“”‘’«»„()\[\]{}<`#@$%&/\\.,:;!?]{1,2}|\d{1,3}[.)]|\(\d{1,3}\)|\[\d{1,3}\]|"
                     r"#\d{1,3}[.)]?|[a-zA-Z]\)|[ivx]{1,5}\.|[IVX]{2,5}\.)\s+(?:\[[ xX✓✔]?\]\s+)?")
# lead-ins and closings (rule 6): a line starting so is not an item; in a bulleted list only
# the sentence-like ones count ("- Note 20 Ultra", "- Sure deodorant", "- This Is Us" are names);
# tenth round: a summing-up or an address to the reader ("In summary, …", "You can also …")
NOT_A_TERM = re.compile(
    r"^(?i:here\b|sure\b|certainly\b|of\s+course\b|notes?\b|hope\b|let\s+me\b|feel\s+free\b|please\b|"
    r"absolutely\b|the\s+following\b|these\b|this\b|they\b|those\b|p\.\s?s\.|ps:|in\s+summary\b|"
    r"in\s+conclusion\b|overall\b|keep\s+in\s+mind\b|it\s+is\b|it(?:'|’)s\b|there\s+(?:are|is)\b|"
    r"you\s+(?:can|may|might|could|should)\b|we\s+(?:can|have|hope|suggest)\b)|^I(?:\s|(?:'|’)(?:m|d|ve|ll)\b)")
_NOT_A_BULLETED_TERM = re.compile(
    r"^(?i:here\s+(?:are|is)\b|hope\s+this\b|let\s+me\b|feel\s+free\b|please\b)|^I(?:\s|(?:'|’)(?:m|d|ve|ll)\b)")
# words that name the list rather than belong to it ("Synonyms: A, B", "Keywords — A, B"); not
# inside a hyphenated word, which is a term's ("Age-related claims", "Long-term care" — eighth round)
LEAD_WORDS = re.compile(r"(?<![\w-])(?:synonyms?|terms?|expansions?|alternatives?|related|keywords?|words?|"
                         r"suggest(?:ions?)?|variants?|phrases?|names?|queries|list|answer|expanded)(?![\w-])", re.I)
# labels of commentary: "Note: …", "Source: MeSH", "Disclaimer: …" are not terms at all, nor
# (tenth round) a reply's own fields ("Language: English", "Confidence: high", "Format: …")
META_LABEL = re.compile(r"^(?i:notes?|disclaimer|sources?|references?|tips?|warning|caution|explanation|context|"
                         r"query|domain|intent|input|output|reasoning|rationale|remember|important|nb|p\.?s|"
                         r"language|locale|format|version|status|confidence|score|results?|response|tone|audience|"
                         r"comments?|remarks?|"
                         r"assumptions?|caveats?|clarification|"
                         # after fresh31-fresh34: a chat transcript's labels ("Chat: SmolLM-BabyToy", "User: …")
                         r"chat(?:\s+history)?|conversation|user|assistant|system|bot|"
                         # after fresh19-fresh22: a prompt's domain echoed with its name ("Legal Domain: Legal",
                         # "Finance Domain: …"); "Public domain: …" is a term
                         r"(?:medical|health|healthcare|legal|law|finance|financial|banking|ecommerce|e-commerce|"
                         r"retail|shopping|travel|software|technology|tech|insurance|search)\s+domain)$")
# the headings of an explanation, naming what is said of the topic ("Etymology: …", "Definition: …"):
# no term, and nothing after them unless it is a list of terms ("Examples: sofa, couch"); tenth
# round: what is said of a thing ("Purpose: …", "Risks: dry eyes, glare", "Features: …")
_EXPLANATION_HEADING = re.compile(r"^(?i:etymology|etymological|definitions?|meanings?|origins?|usage|examples?|"
                                  r"example\s+sentences?|descriptions?|summary|overview|background|history|pronunciation|"
                                  r"purpose|functions?|benefits?|advantages?|disadvantages?|risks?|features|"
                                  r"specifications?|details|characteristics|properties|interpretation)$")
# a heading of an explanation standing alone ("1. **Etymology**" over a paragraph) is no term either;
# words that are also terms ("usage", "history", "tips", "output") are left to be
_HEADING_WORD = re.compile(r"^(?i:etymology|etymological|definitions?|meanings?|pronunciation|overview|summary|"
                           r"descriptions?|examples?|explanation|disclaimer)$")
# the prompt's own words echoed as an item (after fresh31-fresh34: '1. 5 alternative search terms for
# "colander"'): a count of what was asked for, no term ("Terms of service" is one)
_ASKED_FOR = re.compile(r"^\d+\s+(?:(?:alternative|other|related|similar|search|more)\s+)*"
                        r"(?:terms|synonyms|alternatives|keywords|expansions|queries|phrases|words)\b", re.I)
# "there are none": not a term (rule 7 then makes the reply unparseable)
_NONE_WORDS = re.compile(r"^(?i:\d{1,2}|none|none found|n/?a|nil|null|nothing(?: found)?|etc|and so on|"
                         r"no (?:synonyms?|terms?|expansions?|results?|alternatives?|matches)(?: (?:found|available))?)$")
MAX_TERM_CHARS = 100
"""An item longer than this is not a term (a pasted paragraph, a runaway token), whatever its words."""
_STARS = re.compile(r"\*+|(?<!\w)_+|_+(?!\w)")
QUOTES = (('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"), ("«", "»"), ("„", "“"), ("`", "`"))
_DASHES = (" - ", " -- ", " – ", " — ")
# a label ending with a preposition is the start of a sentence, not a heading ("… expansions for: X")
ENDS_IN_PREPOSITION = re.compile(r"\b(?i:for|to|of|about|with|in|on|by|from|as|at|into|like)$")
# a note after a dash describes ("a thick, scaly layer", "the clinical term"); a list of terms does not
# ("used to treat …" describes, "used car" is a term)
_DESCRIBES = re.compile(r"^\W*(?i:a|an|the|of|to|for|used\s+(?:to|for|as|in|by|when|with)|refers?|means?|not|also|"
                       r"see|as|such|e\.g\.|i\.e\.|usually|often|especially|including|sometimes|"
                       # after fresh19-fresh22: "Antimicrobial, specifically referring to antibiotics";
                       # tenth round: a pointer or relative word ("where a third party holds …")
                       r"referring|describing|meaning|specifically|particularly|commonly|typically|generally|"
                       r"mainly|primarily|that|where|when|this|these|it|its|relating|related\s+to|involving|"
                       r"characterized|characterised|something|someone|anything|anyone|"
                       # after fresh27-fresh30: a degree adverb ("very unruly, noisy, or untamed.")
                       r"very|quite|extremely|highly|rather|somewhat|fairly|slightly|too|so|less|more\s+\w+\s+than)(?:\s|$)")
# a label naming a kind of word, or a record's field: its value is the term ("Noun: Nursing",
# "Abbreviation: MI", after fresh19-fresh22; "Product: Sleeper Sofa", after fresh23-fresh26;
# tenth round: any field of a product record, "Category: Furniture", "Colour: Oak")
_KIND_LABEL = re.compile(r"^(?i:nouns?|verbs?|adjectives?|adverbs?|plural|singular|abbreviations?|abbr|acronyms?|"
                         r"initialism|gerund|participle|past\s+tense|(?:(?:brand|generic|common|medical|legal|"
                         r"scientific|informal|formal|technical)\s+)?names?|spellings?|(?:alternate|alternative|"
                         r"other|british|american|us|uk)\s+spellings?|products?|items?|brands?|models?|titles?|"
                         r"categor(?:y|ies)|types?|class(?:es)?|kinds?|genres?|styles?|colou?rs?|sizes?|materials?|manufacturers?|"
                         r"makers?|departments?|sections?|collections?|series)$")
# a note naming what kind of term the one before it is ("Tylenol - Brand name", "MI: Abbreviation")
_KIND = re.compile(r"\b(?i:terms?|names?|words?|abbreviations?|abbr|acronyms?|initialism|spellings?|synonyms?|"
                   r"variants?|slang|usage|forms?|plural|singular|nouns?|verbs?|adjectives?|adverbs?|brand|generic|"
                   r"informal|formal|colloquial|equivalent|translation|example)\W*$")
# a lower-case article inside a phrase: a list of eight or more words whose first part of four
# or more words holds one is a description that names things ("Using the + operator for addition, subtraction, …")
_ARTICLE = re.compile(r"\s(?:the|a|an)\s")
# a comma part that opens with a note word is a note on the part before it, not a term
# ("Security deposit dispute, including additional details", "DUINED, also spelled duh-deed")
_NOTE_PART = re.compile(r"^\W*(?i:including|includes|such\s+as|e\.\s?g\.|i\.\s?e\.|for\s+(?:example|instance)|"
                        r"also\s+(?:spelled|spelt|written|known\s+as|called|referred\s+to\s+as)|a\.?k\.?a\.?|"
                        r"especially|particularly|(?:slang|short|shorthand|abbreviation|another\s+(?:word|name))\s+(?:for|of))(?:\s|$|\W)")
# a part that opens with a note label ends a comma list: it and what follows are a note
# ("sofa, couch; Note: both are informal", "A, B, P.S. ask me for more")
_NOTE_LABEL_PART = re.compile(r"[,;]\s*(?i:(?:notes?|nb|p\.?\s?s)\s*:|p\.\s?s\.)\s*\S")
# an e-mail address or a web address alone: contact details, not a search term
_CONTACT = re.compile(r"<?(?:[\w.+-]+@[\w-]+(?:\.[\w-]+)+|(?:https?://|www\.)\S+)>?")
# a number that names something, not a figure: a code of 3-8 digits (a CPT code, a tax form)
_CODE = re.compile(r"\d{3,8}")
# a date and time written as ISO 8601 does ("2019-08-31T14:57:56.133Z"): its letters are
# separators, and like any date it is no term
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?")
# after fresh27-fresh30: an ISO date opening an item stamps it ("2019-08-31 20:45:57.BULLEDER (CA)"),
# no term; as a label it stamps its value, which is the term ("1. 2023-08-24: Changing Table")
_DATED = re.compile(r"\d{4}-\d{2}-\d{2}(?!\d)")
# an amount (after fresh12): a figure with grouped thousands, decimals or a per cent, and at
# most one word, a unit or a currency ("10,000,000 USD", "2.5 mg", "20%"), is no term
_AMOUNT = re.compile(r"\W*(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+\.\d+|\d+(?:\.\d+)?\s*%)(?:\s*[A-Za-z$€£¥]+)?")
# a figure, not a term (fifth round): a number, maybe a per cent, and at most one word after it,
# or "etc."; a list of them after a label annotates the label ("Flat tire: 20% flat, 30% flat",
# "Interest rate: 3%, 4%, 6, etc."), which is the term ("3M", "7-Eleven", "401k" are names)
_NUMBER = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:[.,]\d+)?)"  # "1,250,000" groups thousands
QUANTITY = re.compile(rf"^\W*(?:{_NUMBER}\s*%?(?:\s+\w+)?|etc\.?)$")
# a dotted abbreviation followed by "for …" says what it stands for: "p.s. for permanent
# agreements" gives "p.s." ("CBT for anxiety", undotted, is a term as written)
_ABBREVIATION_FOR = re.compile(r"^((?:[A-Za-z]\.){2,})\s+for\s+\w")
# a phrase that ends with an article, a preposition or a conjunction is cut off, not a side of `A = B`
_CUT_PHRASE = re.compile(r"\b(?i:the|a|an|of|to|for|and|or|with|in|on|by)$")
# a clause after a comma that explains what comes before it ("Fares = flights, which can be …")
_CLAUSE = re.compile(r",\s*(?i:which|who|whose|where|that|as\s+in|as\s+it|i\.e\.|e\.g\.|meaning|referring)\b")


def is_query(text: str, hyphens: bool = False) -> bool:
    """Whether `text` is the query's own text (rule 1, a plural folded), when the query is known;
    with `hyphens`, a hyphen is a space on both sides ("High-yield savings" for "high yield
    savings"; a hyphenated label giving a list, "breach-of-contract - …", is a spelling of its own)."""
    query = QUERY.get()
    if query is None:
        return False
    words = query_words(unquote(unmark(text)))
    if hyphens:
        return _unhyphened(words) == _unhyphened(query)
    return words == query


def _unhyphened(words: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(part for word in words for part in word.split("-") if part)


# a label opening with a preposition: where, in which language or for whom ("In French", "For adults")
_PLACE_LABEL = re.compile(r"^(?i:in|for|on|at|from|under|within|among)\s")
# quoted phrases, and what may stand between alternatives: "or", "and", "/", commas
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”')
_ALTERNATIVES = re.compile(r"[\s,;/]*(?:(?i:or|and)(?:[\s,;/]+|$))*")
_DOUBLE_QUOTES = (('"', '"'), ("“", "”"), ("«", "»"))
# a quoted phrase named by what it is: 'The search query "X"', 'the term “X”.'
_FRAMED = re.compile(r'\W*(?i:the\s+)?(?i:search\s+|expanded\s+|alternative\s+)?'
                     r'(?i:query|term|word|phrase|keyword|expansion|synonym)\s+(?:"([^"]+)"|“([^”]+)”)\W*')
_NOTED_PAIR = re.compile(r"([^()]+?\s*\([^()]*\))\s+(?i:and|or)\s+([^()]+?\s*\([^()]*\))\W*")
"""Two terms joined by "and" or "or", each with its note in brackets."""
_BRACKETED_NOTE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
"""A bracketed note (innermost), removed to see what stands outside brackets."""


def colon_label(item: str) -> tuple[str, str] | None:
    """`(label, value)` when an item (markers removed) is `Label: value`, the colon outside
    brackets and followed by a space; None otherwise (no colon, or a note after a dash)."""
    head, rest = strip_note(item)
    return (head, rest) if rest is not None and item[len(head):len(head) + 2] == ": " else None


def strip_note(item: str) -> tuple[str, str | None]:
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


@lru_cache(maxsize=8192)  # pure; a list's items are unmarked by several steps
def unmark(item: str) -> str:
    """Bullets, numbering, emphasis and backticks off one item, and a note that ends it after
    a comma or semicolon ("sofa, couch; Note: both are informal", "…, P.S. ask for more")."""
    for _ in range(2):  # "> - x", "**1.** x"
        item = BULLET.sub("", item, count=1)
        item = _STARS.sub("", item.replace("`", "")).strip()
    note = _NOTE_LABEL_PART.search(item) if ("," in item or ";" in item) else None
    return item[:note.start()].strip() if note else item


def terms_of(item: str, bulleted: bool, labelled: bool = True) -> list[str]:
    """Rules 5 and 6 on one item: the terms it holds (none, one, or — once, not within a
    list already labelled — a labelled list)."""
    item = unmark(item)
    if not item or _INSTRUCTION.match(item):
        return []  # after fresh23-fresh26: 'Use "supplement" instead of "ingredient": "…"' is advice
    # a sign in a note pairs nothing: in brackets ("Plantar fasciitis (fascia = tissue)") or
    # after a spaced dash ("Medical malpractice - medical = medical, legal = legal")
    if " = " in _BRACKETED_NOTE.sub("", item).split(" - ", 1)[0]:
        if not bulleted and _IDENTIFIER.fullmatch(item.partition(" = ")[0].strip()):
            return []  # after fresh19-fresh22: "loan_default_judgment = …" on a line of its own assigns a
            # variable, a line of code; in a numbered list ("1. medical_bill = medical_bills") it pairs words
        pair = _equated(item, bulleted)
        if pair:
            return pair
    head, rest = strip_note(item)
    colon = rest is not None and item[len(head):len(head) + 2] == ": "  # as colon_label reads it
    if rest is not None and labelled:
        label = unquote(unmark(head).strip(" :").strip())  # "scabies (medical term)": the note is no lead word
        if META_LABEL.match(label):
            return []  # "Note: …", "Source: MeSH"
        if colon and _CONTACT.fullmatch(rest.strip()):
            return []  # "Chat: smolLM@gmail.com", "Website: https://…": a contact field, neither side a term
        if colon and (ENDS_IN_PREPOSITION.search(label) or prose_before_colon(label) or colon_in_sentence(label, rest)):
            return []  # "Suggest query expansions for: X": the colon is inside a sentence
        listy = any(c in _BRACKETED_NOTE.sub("", rest) for c in ",;")  # "Toiletteer (toileth, not …)" is one value
        if colon and (_PLACE_LABEL.match(label) or (_KIND_LABEL.match(label) and rest.strip())):
            # a heading, its value the term: a label opening with a preposition says where or for
            # whom (after fresh10: "In French: MRI", "For adults: …"); one naming a kind of word
            # or a record's field says what the value is (after fresh19-fresh22: "2. Adjective:
            # Nourishing", "Abbreviation: MI", "Product: Sleeper Sofa")
            return (list_of(rest, lambda part: terms_of(part, True, False)) if listy
                    else terms_of(rest, bulleted, False))
        if _EXPLANATION_HEADING.match(label):
            return list_of(rest, lambda part: terms_of(part, True, False)) if colon and listy else []
        query_label = is_query(label) or (colon and is_query(label, hyphens=True))
        values = _query_label(rest, colon) if query_label else None
        if values:
            return values
        if query_label and colon and (figures(rest) or is_sentence(rest) or is_statement(rest)
                                      or len(rest.split()) > 6):
            # the query over what gives no term offers nothing: a figure (after fresh27-fresh30:
            # "Wire transfer fee: 1.5%"; among other labels over figures it annotates them all, and
            # reply_lists gives it back) or a sentence (after fresh31-fresh34: "* Subpoena: A legal
            # term that refers to …"; the guide: the query as a label gives the values; ten of the
            # thirteen labellers since fresh18; earlier ones took the query, as a label over a sentence is)
            return []
        if listy and all(QUANTITY.match(unquote(part)) for part in split_line(rest)):
            return terms_of(head, bulleted, False)  # "**Flat tire**: 20% flat, 30% flat": figures on the label
        listed = rest.strip() and (label.isdigit() or (colon and _DATED.fullmatch(label) is not None)
                                   or (colon and len(label) == 1 and label.isalpha())  # "1. A: Pepper-grinded"
                                   or (LEAD_WORDS.search(label) and (colon or listy)
                                                       and not is_query(label, hyphens=True))  # "name change …"
                                   or NOT_A_TERM.match(label) or (colon and listy and not is_sentence(rest)))
        # "Synonyms: A, B", "Brand names: Tylenol, Panadol", "1: tablet"; a sentence after a
        # term's colon explains it, commas or not ("Asthma inhalers: Asthma medications, such as …, can be used …")
        if listed:
            return list_of(rest, lambda part: terms_of(part, True, False))
        if (listy and not colon and len(split_line(rest)) > 1  # a stop ends a description, or (tenth
                # round) a list of short words ("Measured - Measureful, precise.")
                and (not rest.rstrip().endswith(".") or all(len(part.split()) <= 3 for part in split_line(rest)))
                and not _defines(rest)  # after fresh31-fresh34: "protection against loss or misfortune; safety net"
                and not any(_DESCRIBES.match(part) or " = " in part
                            or _PARTICIPLE.search(f" {_BRACKETED_NOTE.sub('', part)} ") for part in split_line(rest))):
            # "breach - breaching, breached": a list of terms, not a note ("a disease, spread by
            # contact"; "medical = medical, legal = legal" glosses; "injury caused by …")
            more = list_of(rest, lambda part: terms_of(part, True, False))
            if more:
                return terms_of(head, bulleted, False) + more
        if bulleted and not listy and _second_term(head, rest):
            # "1. Financial crisis - Financial disaster", "* Last Will and Ends: Last Will and Die"
            return terms_of(head, bulleted, False) + [unquote(unmark(rest))]
        if colon and bulleted and is_sentence(rest) and ((not speaks_of(rest, label) and not names_a_kind(rest))
                                                         or _ADDRESSED.match(rest)):
            return []  # "1. Etymology: The word "ear" is derived from …": a heading over a sentence, not a term
        if colon and not bulleted and (is_sentence(rest) or is_statement(rest)
                                       or (len(rest.split()) > 6 and not speaks_of(rest, label))):
            # "Coffee maker: A coffee maker is a device …", "Chatbot: Hey there! …"; a label over
            # a long phrase not about it heads commentary ("Severity: 15 years in prison for …")
            return []
        if (colon and not bulleted and not listy and QUERY.get() is not None and _second_term(head, rest)
                and not is_query(label, hyphens=True) and not is_query(rest)):
            # after fresh19-fresh22: on a line of its own, as in a list item, `A: B` both written
            # as names are two terms ("Narcan: Nalonamine patches", "Ecommerce: E-commerce");
            # the query on either side is the label's rule
            return terms_of(head, bulleted, False) + [unquote(unmark(rest))]
        if colon and not bulleted:
            value = unquote(unmark(rest).rstrip(":"))  # a stray colon after the value goes
            if is_term(value) and shares_word(label, value, 6) and not is_query(value):
                return [value]  # "Laptop bag: laptop bags": the label names the topic, the value is the term
                # (the query as the value says what the label means: "encroaching: Encroachment")
    if rest is not None:
        item = head  # "Coumadin: brand name", "MI – abbreviation": the rest is a note
    if bulleted and rest is None and ("," in item or ";" in item) and len(split_line(item)) > 1:
        return list_of(item, lambda part: terms_of(part, True, False), item=True)  # "- Dissolution, divorce"
    noted = _NOTED_PAIR.fullmatch(item) if rest is None else None
    if noted:
        # after fresh27-fresh30: "Salad (French) and Spinning (Italian)": each word with its own
        # note is its own term; "Salt and pepper (seasoning)" stays one
        return [term for term in (unquote(noted.group(1)), unquote(noted.group(2))) if is_term(term, bulleted)]
    outside = _BRACKETED_NOTE.sub("", item)
    quoted = _QUOTED.findall(outside)
    if len(quoted) > 1 and _ALTERNATIVES.fullmatch(_QUOTED.sub("", outside)):
        # after fresh10: '"bluetooth is down" or "battery is low" (…)': quoted alternatives
        return [term for term in (unquote(a or b) for a, b in quoted) if is_term(term, bulleted)]
    framed = _FRAMED.fullmatch(outside.strip()) if rest is None else None
    if framed:
        # after fresh19-fresh22: '- The search query "tying up feet" (with synonyms)': the frame
        # names what the quoted phrase is, the phrase is the term
        return [term for term in [unquote(framed.group(1) or framed.group(2))] if is_term(term, bulleted)]
    if bulleted and labelled and rest is None and is_statement(item) and not states_a_condition(item):
        return []  # "1. Restart the printer.", "- The cable is loose.": a statement (a comma list's parts are not)
    abbreviation = _ABBREVIATION_FOR.match(item)
    if abbreviation:
        item = abbreviation.group(1)  # "p.s. for permanent agreements": the rest says what it stands for
    item = unquote(item)
    if not is_term(item, bulleted):
        return []
    return [item]


def figures(value: str) -> bool:
    """Whether a label's value is only figures: numbers, amounts, per cents, ISO dates
    ("10,000", "1.5%", "1.234, 2.56", "2023-08-24 25% OFF")."""
    parts = [_DATED.sub("", unquote(unmark(part))).strip() for part in split_line(value)]
    parts = [part for part in parts if part]
    return bool(parts) and all(QUANTITY.match(part) or _AMOUNT.fullmatch(part) for part in parts)


def _query_label(rest: str, colon: bool) -> list[str] | None:
    """The values of an item whose label is the query itself, when they are a list of terms
    (seventh round, the labelling guide's "a label that is the query itself gives the
    values": "Credit Score - credit card, credit-rating", "cheap flights: cheap, fleets");
    None otherwise: over one value, a note or a definition the query stays the term it
    explains ("Divorce: the legal end of a marriage")."""
    parts = split_line(rest)
    if len(parts) > 1 and not any(_DESCRIBES.match(part) or " = " in part for part in parts):
        return list_of(rest, lambda part: terms_of(part, True, False), parts) or None
    value = unquote(unmark(rest))
    if colon and len(parts) == 1 and is_term(value, True) and not _DESCRIBES.match(value) \
            and not is_statement(rest, by_words=False) \
            and not QUANTITY.match(value) and not is_sentence(rest):
        return [value]  # "1. Insulin pumps: insulin-pump injector"
    return None


def _second_term(head: str, rest: str) -> bool:
    """Whether the `B` of a list item `A - B` or `A: B` is a second term rather than a note
    on `A`: both are written as names are, starting with a capital letter, and `B` is a term
    (rule 6) that opens with no describing word, names no kind of term ("Brand name",
    "Abbreviation"), holds no lower-case finite verb ("It is used in medicine") and no
    participle with its preposition ("Substances used for …"), as notes do ("MI –
    abbreviation", "Coumadin: the brand name"); or (ninth round) `B` is a short form of `A`
    in lower case, quoted or on its stem ('email - "emails"', "travel-adapter - travel
    adapters"), or (tenth round) words joined by underscores ("Mixing Bars: mix_barns").
    A single letter ("Child - C") is none."""
    a, b = unquote(unmark(head)), unquote(unmark(rest))
    if len(b) < 2 or not is_term(b, True) or _DESCRIBES.match(b) or _KIND.search(b) or STATEMENT.search(f" {b} "):
        return False  # a letter abbreviates the term (after fresh23-fresh26: "Child - C"); a note
    if a[:1].isupper() and b[:1].isupper():
        return not is_sentence(rest) and not _PARTICIPLE.search(b)
    # ninth round: a short form of the word in lower case, quoted or on its stem
    # ('email (prefix) - "emails"', "travel-adapter - travel adapters")
    return len(b.split()) <= 3 and (unmark(rest).lstrip()[:1] in "\"“" or shares_word(a, b)
                                    or _IDENTIFIER.fullmatch(b) is not None)


# a participle and its preposition inside a phrase describe what it names (after fresh19-fresh22:
# "Chemotherapeutic agents: Substances used for treating cancer." is a term and its definition);
# tenth round: any regular participle ("delivered to", "located in"), and the common irregular ones
_PARTICIPLE = re.compile(r"\s(?:[a-z]{2,}ed|given|made|taken|found|known|built|meant|worn|sold|done|seen|held|"
                         r"kept|left|put|set|shown|written|spelt|spelled|chosen|driven|grown|drawn|spent|bought|brought|caught|"
                         r"taught|thought|paid|laid|led|fed|bred|spread|bound|ground|hung|struck|stuck|spun|won)\s+"
                         r"(?:to|for|in|as|by|with|when|on|after|during)\s")


# an instruction: an imperative verb, then a quoted phrase ('Use "X" instead of "Y"', 'Try "X"'), or
# (after fresh31-fresh38) a pronoun and its purpose ("Use it as a reference:", "Using it as a verb:")
# or a piece of writing ("Add a hyphen", "Use a comma")
_INSTRUCTION = re.compile(r'^\W*(?i:use|using|try|replace|avoid|add|adding|include|type|search\s+for|write|say|'
                          r'combine|consider|enter|create)\s+(?:["“]|(?i:it|this|them|these)\s+(?i:as|for|to|in|with|when)\b|'
                          r'(?i:a|an)\s+(?i:hyphen|comma|word|phrase|prefix|suffix|apostrophe|space|synonym|term)\b)')
# after fresh31-fresh34: a sentence addressed to the reader after a label advises, it does not
# say what the label is ("2. **Fashion**: You can use bulleted lists in fashion, …")
_ADDRESSED = re.compile(r"^\W*(?i:you|you'll|you're|we|let's)\s")
_IDENTIFIER = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+")
"""A variable's name, words joined by underscores ("loan_default_judgment")."""


def _equated(item: str, bulleted: bool) -> list[str]:
    """`A = B` offers two terms as one meaning ("Fares = flights, which can be …"): both,
    when both are terms; a clause after B's comma ("which …", "as in …") is a note. None
    when a side is not a term (then the item is read as any other)."""
    left, _, right = item.partition(" = ")
    clause = _CLAUSE.search(right)
    if clause:
        right = right[:clause.start()]
    a = unquote(left)
    if _CUT_PHRASE.search(a):
        return []  # "Using the *= operator …": the " = " is inside a phrase, not between two sides
    if not any(c.isalpha() for c in right):
        return [a] if is_term(a, bulleted) else []  # "Lost = ⅛ 2,000": a figure on A, as after a label
    if _defines(unquote(unmark(right))):
        return [a] if is_term(a, bulleted) else []  # "SORE = to be very painful": B defines A
    b = list_of(right, lambda part: terms_of(part, True, False))
    if b and is_query(a, hyphens=True):
        return b  # after fresh19-fresh22: "vpn-not-connecting = vpn-connected", the query as a label gives B
    if not b or not is_term(a, bulleted):
        return []
    return [a] + b


def _defines(text: str) -> bool:
    """Whether the `B` of `A = B` is a definition of `A` rather than a second term: it opens
    with a describing word ("to be very painful", "a device …") or is a lower-case phrase
    joining words with "and" or "or" ("mouth and nose", "pain or discomfort caused by
    injury") or opening with a participle and its preposition (after fresh35-fresh38:
    "wounded by injury", "spelt with a 'w' sound"); a name ("Fares = flights", "MI =
    myocardial infarction") is a term."""
    first = text.split(",")[0].strip()
    return bool(_DESCRIBES.match(text)) or (first[:1].islower() and (bool(re.search(r"\s(?:and|or)\s", first))
                                                                     or _PARTICIPLE.match(f" {first} ") is not None))


# a relative clause after a comma says more of the part before it, to the end of the item
# (seventh round): "Inflamation of the conjunctiva, which can lead to infection …"; not after
# a sentence ("The word "ear" is derived from …, which refers to …"), nor a part opening with
# an article ("The drug, which is cheap, helps …") unless the clause ends a list item (eighth
# round: "* A night's light, which is often used as a metaphor …")
_RELATIVE = re.compile(r"^\s*(?:which|who|whose)\s")
# a sentence adverb that links to what came before: a comma after it opens a sentence's clause
# (after fresh8: "additionally, the search query "adopemodel" with synonyms.")
_CONNECTIVE = re.compile(r"^\W*(?i:additionally|however|furthermore|moreover|therefore|thus|hence|"
                         r"consequently|meanwhile|nevertheless|nonetheless|otherwise|instead|similarly|likewise|"
                         r"in\s+addition|in\s+contrast|in\s+general|in\s+summary|in\s+conclusion|for\s+example|"
                         r"for\s+instance|as\s+a\s+result|on\s+the\s+other\s+hand)\W*$")
_RELATIVE_AFTER = re.compile(r"[,;]\s*(?:which|who|whose)\s")


def list_of(text: str, read, parts: list[str] | None = None, item: bool = False) -> list[str]:
    """The terms of a comma or semicolon list when every part of it is a term; none when a
    part is not (then the commas are a sentence's: "It is designed with comfort, elegance,
    and beauty in mind, making it perfect for parties"). `item`: the list is a bulleted or
    numbered item's, where a long description after a comma is an appositive note."""
    found, skipped = [], 0
    parts = split_line(text) if parts is None else parts
    relative = next((i for i, part in enumerate(parts) if i and _RELATIVE.match(part)), None)
    head = _RELATIVE_AFTER.split(text, 1)[0]
    if (relative is not None and (not ARTICLE_OPENING.match(head) or (item and relative == len(parts) - 1))
            and not STATEMENT.search(f" {head} ")
            and not is_clause(head) and all(len(part.split()) <= 3 for part in parts[relative + 1:])):
        parts = parts[:relative]  # "Inflamation of the conjunctiva, which can lead to …": a note on what it follows
    appositive = next((i for i, part in enumerate(parts) if i and ARTICLE_OPENING.match(part)
                       and len(unquote(part).split()) > 6
                       and not STATEMENT.search(f" {RELATIVE_PRONOUN.split(part, 1)[0]} ")), None) if item else None
    if appositive is not None and not any(ARTICLE_OPENING.match(part) or STATEMENT.search(f" {part} ") or is_clause(part)
                                          for part in parts[:appositive]):
        # seventh round: "1. Colonic, a medical term used to describe any part of …": the item's
        # term, then a description of it opening with an article, to the end of the item
        parts = parts[:appositive]
    words = [_BRACKETED_NOTE.sub("", part).split() for part in parts]  # a note's words are no part of the list's
    if (words and len(words[0]) >= 4 and _ARTICLE.search(f" {' '.join(words[0])} ")
            and sum(len(part) for part in words) >= 8):
        return []  # "Using the + operator for addition, subtraction, …": a description naming things
    if parts and _CONNECTIVE.match(parts[0]):
        return []  # "additionally, the search query …": a sentence goes on, no list begins so
    for i, part in enumerate(parts):
        bare = _BRACKETED_NOTE.sub("", part).strip()  # "bungerbunk (both have the same sound)": the note's verb
        if " " in bare and (STATEMENT.search(f" {bare} ") or is_clause(bare)):
            return []  # "The sofa is designed with comfort, elegance, …", "tenants may ask for repairs, …": a clause
        if i and _NOTE_PART.match(part) and is_term(unquote(part), True):
            # "DUINED, also spelled duh-deed", "X, including Y": a note on the part before, to the
            # end of the list (tenth round: "Other devices running slow, such as tablets,
            # smartphones, laptops, etc."), unless a clause follows ("Theft, including money, is …")
            later = [_BRACKETED_NOTE.sub("", after).strip() for after in parts[i + 1:]]
            if any(" " in bare and (STATEMENT.search(f" {bare} ") or is_clause(bare)) for bare in later):
                return []
            break
        terms = read(part)
        if (not terms and i and len(unquote(part).split()) > 6
                and (not part.rstrip().endswith(".") or ARTICLE_OPENING.match(part))
                and not reads_as_sentence(unquote(part))):
            skipped += 1  # "UTI treatment, uromitrogenic medical device for urinary tract infection":
            continue      # a long name is no term, and no sentence's comma either
        if not terms:
            return []
        found.extend(terms)
    return found if len(found) >= skipped else []


# words that offer a list ("synonyms", "terms", "alternatives" …); "two words" or "the search
# term" speak of the query's make-up
_OFFERS = re.compile(r"\b(?i:synonyms?|terms|expansions|alternatives|keywords|suggestions|variants|options)\b")


def colon_in_sentence(head: str, rest: str) -> bool:
    """Whether a colon stands inside a sentence that goes on after it to one full stop
    (after fresh13, four times from the comma prompt: `The search query "insulin pump" is a
    compound word consisting of two words: insulin and pump.`): the last sentence before the
    colon holds a finite verb not at its end, runs past six words, offers no list and opens
    no lead-in, and after the colon stands one item ending the sentence. `The most common
    synonym is: MI.` and `Here is the best one: MI.` are lead-ins."""
    if "," in rest or ";" in rest or not rest.rstrip().endswith(('.', '."', '.”')):
        return False
    last = re.split(r"(?<=[.!?])\s+", head.strip())[-1]
    words = last.split()
    return (len(words) > 6 and not NOT_A_TERM.match(last) and not _OFFERS.search(last)
            and (bool(STATEMENT.search(f" {' '.join(words[:-1])} ")) or is_clause(last))
            and not STATEMENT.search(f" {words[-1]} "))


def prose_before_colon(head: str) -> bool:
    """Whether the text before a colon is sentences whose last one names no list ("… in a
    query? I can provide more details: X"); "You are an assistant. I suggest: X" names one."""
    last = None
    for last in SENTENCE.finditer(head):
        pass
    return last is not None and not LEAD_WORDS.search(head[last.end() - 1:])


# a note in brackets inside a term, words on both sides of it (fifth round): an acronym or a
# gloss, not a part of the term ("Ankle-foot-ankle (AFNA) ankle injury")
_INNER_NOTE = re.compile(r"(?<=\S)\s\([^()\[\]]*\)\s(?=\S)")


@lru_cache(maxsize=8192)
def unquote(item: str) -> str:
    """Notes in brackets (trailing, or inside a term), a trailing full stop and surrounding quotes (a few passes:
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
        item = _INNER_NOTE.sub(" ", item).strip()  # "Ankle-foot-ankle (AFNA) ankle injury": a gloss inside a term
        for left, right in ("()", "[]", "{}"):  # "journey)", "(journey": a bracket whose pair is not there
            if item.endswith(right) and left not in item:
                item = item[:-1].rstrip()
            if item.startswith(left) and right not in item:
                item = item[1:].lstrip()
        if len(item) > 2 and item.endswith("-") and item[-2].isalpha():  # "run- (verb)"
            item = item[:-1]
        if item.endswith("..."):  # "luggables...": a trailing ellipsis says the list goes on, not part of a term
            item = item.rstrip(".")
        elif item.endswith(".") and "." not in item.rsplit(None, 1)[-1][:-1]:  # "U.S." keeps its stop
            item = item[:-1]
        for left, right in QUOTES:
            if len(item) >= 2 and item.startswith(left) and item.endswith(right):
                item = item[len(left):-len(right)]
        for left, right in _DOUBLE_QUOTES:  # '"neck pillow': a double quote whose pair is not there
            if item.startswith(left) and right not in item[1:]:
                item = item[1:].lstrip()
            elif item.endswith(right) and left not in item[:-1]:
                item = item[:-1].rstrip()
        if item == before:
            break
    return item.strip()


def is_term(item: str, bulleted: bool = False) -> bool:
    """Rule 6 on a cleaned item."""
    starters = _NOT_A_BULLETED_TERM if bulleted else NOT_A_TERM
    # (sixth round) a term has a letter, or is a code of 3-8 digits (CPT 99213, form 1040, 911):
    # other digits and punctuation are a date, a price, a version or a count ("2018-07-31",
    # "10.95", "2.7.1", "3"), not a search term, and so is an ISO date-time ("…T14:57:56Z")
    return (bool(item) and (any(c.isalpha() for c in item) or _CODE.fullmatch(item) is not None)
            and _TIMESTAMP.fullmatch(item) is None and _AMOUNT.fullmatch(item) is None and not _DATED.match(item)
            and len(item) <= MAX_TERM_CHARS and len(item.split()) <= 6
            and not item.endswith(("!", "?", ":")) and not SENTENCE.search(item) and " = " not in item
            and not starters.match(item) and not _NONE_WORDS.match(item) and not _HEADING_WORD.match(item)
            # after fresh31-fresh34: an address alone ("smol@huggingface.com"), the prompt's count echoed
            and not _CONTACT.fullmatch(item) and not _ASKED_FOR.match(item))


# a comma between digits that groups thousands ("2,000", "1,250,000") separates no items
_THOUSANDS = re.compile(r"\d,\d{3}(?!\d)")
# nor does a date's comma before its year, after a day or a month ("September 31, 2019",
# "Tuesday, 2018"; after fresh19-fresh22)
_YEAR_AFTER = re.compile(r",\s?(?:1[89]|20)\d\d(?![\d,])")
_DATE_BEFORE = re.compile(r"(?:\b\d{1,2}(?:st|nd|rd|th)?|\b(?i:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|"
                          r"may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|"
                          r"dec(?:ember)?|monday|tuesday|wednesday|thursday|friday|saturday|sunday))$")


def split_line(line: str) -> list[str]:
    """One line's items: split on commas and semicolons outside brackets (rule 4); a line
    that is wholly one bracketed list ("['sofa', 'couch']") is split inside it."""
    stripped = line.strip()
    if len(stripped) > 2 and stripped[0] == "[" and stripped[-1] == "]" and "," in stripped:
        line = stripped[1:-1]
    items, depth, current = [], 0, []
    for i, char in enumerate(line):
        if char in "([{":
            depth += 1
        elif char in ")]}" and depth:
            depth -= 1
        grouping = char == "," and (_THOUSANDS.match(line, i - 1)
                                    or (_YEAR_AFTER.match(line, i) and _DATE_BEFORE.search(line, 0, i)))
        if char in ",;" and not depth and not grouping:
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
        if lead and LEAD_WORDS.search(lead.group(1)) and len(lead.group(1).split()) <= 6:
            items[0] = lead.group(2)
    return [i for i in items if i.strip()]
