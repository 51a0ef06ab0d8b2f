"""Whether a piece of a reply reads as prose rather than as a term (SPEC §6, docs/harness.md
steps 5 and 6): a sentence break, a statement, a sentence after a label's colon and whether
it speaks of that label. Part of the reading in termgate.llm.replies."""

from __future__ import annotations

import re
from contextvars import ContextVar

from ..scoring.metrics import normalize_term

QUERY: ContextVar[tuple[str, ...] | None] = ContextVar("QUERY", default=None)
"""The words of the query the reply answers (folded by `query_words`), while `read_reply` reads
it with the query given; None when it was not given."""


def query_words(text: str) -> tuple[str, ...]:
    """Rule-1 normalisation, word by word, a plural's "s" off ("Insulin pumps" is "insulin
    pump"), an identifier's underscores as spaces ("cell_phone")."""
    words = normalize_term(text.replace("_", " ")).split()
    return tuple(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


# a sentence break (rule 6: ". " inside an item): a word of two or more letters, ". " (or
# "? ", "! "), then more text; an initial or a common abbreviation before the stop is not a
# break ("E. coli", "St. John's wort", "Roe vs. Wade" are terms)
SENTENCE = re.compile(r"(?<![A-Za-z])(?!(?i:vs|etc|approx|incl|cf|viz|al|st|dr|mr|mrs|ms|jr|sr|no|co|inc|ltd|mt|ft|"
                      r"gen|gov|sen|rep|corp|dept|univ|ave|fig)\.)[A-Za-z][a-z]+[.?!]\s+\w")
# a finite verb written in lower case: an unbulleted line ending with a full stop that holds one
# is a statement, not a term ("- This Is Us", a title, is bulleted and capitalised)
# (sixth round) a contraction holding a verb is one too: "They're not old anymore.", "we've",
# "isn't", "don't", and "'s" after a pronoun ("it's", "there's"); after a noun "'s" is also a
# possessive ("St. John's wort", "Alzheimer's disease"), so it is none
_CONTRACTED = (r"(?:[A-Za-z](?:'|’)(?:re|ve|ll|m)|[A-Za-z]n(?:'|’)t|"
               r"\b(?i:it|that|there|here|what|he|she|who|where|let)(?:'|’)s)(?![A-Za-z])")
STATEMENT = re.compile(r"\s(?:is|are|was|were|has|have|had|can|could|will|would|should|refers?|means?|involves?|"
                       r"stands\s+for)\s"
                       r"|" + _CONTRACTED)
_BRACKETED = re.compile(r"\s*\([^()]*\)")
ARTICLE_OPENING = re.compile(r"^\W*(?i:the|a|an)\s")
"""A phrase opening with an article: a description ("Colonic, a medical term used to …"), or
a statement's subject ("The domain is medicine.")."""
# a lower-case pronoun or determiner inside an item: sentences have them, names of things rarely
_PRONOUNS = "the|your|you|my|it|its|them|their|our|we|this|that|these|those"
_PRONOUN = re.compile(rf"\s(?:{_PRONOUNS})\b")
# (after fresh10) in a statement an article counts too: "Reply with a comma-separated list."
_DETERMINER = re.compile(rf"\s(?:a|an|{_PRONOUNS})\b")
# where a relative clause begins: a verb after it is the clause's, not the sentence's
# ("a medical term used … that is not visible", "a person who is injured")
RELATIVE_PRONOUN = re.compile(r"\s(?:who|whom|whose|which|that|where)\s")
# a clause (fifth round): a subject, then a lower-case modal or auxiliary verb, then a lower-case
# word that is no joining word ("Landlords can repair their homes", stop or not); "Last Will and
# Testament", "trash can for the kitchen" and "wifi is down" are terms
_MODAL = frozenset("can could may might must should shall will would cannot".split())
_AUXILIARY = frozenset("is are was were has have had".split())
_JOINING = frozenset("and or nor of for vs versus with without in on by at to from as than".split())
# (sixth round) a verb contracted onto its subject or its "not": "They're", "we've", "I'm",
# "isn't", "won't", "it's" ("John's" is also a possessive, so it is none)
_CONTRACTION = re.compile(r"^[A-Za-z]*" + _CONTRACTED + "$")
# (after fresh9) a verb's "n't" after a noun is a searcher's phrase ("app doesn't work anymore",
# "car won't start"); after a pronoun it is a sentence's ("It doesn't work anymore")
_NOT = re.compile(r"n(?:'|’)t\W*$")
_SUBJECTS = frozenset("i you he she it we they this that there these those who what".split())
# after fresh23-fresh26: after a noun these open a relative clause, whose "n't" is the phrase's
# ("keyboard shortcuts that don't work"), not a sentence's ("That doesn't work", "It says that
# doesn't work": a pronoun opening the item is a sentence's subject)
_RELATIVES = frozenset(("that", "which", "who"))
_DASH_NOTE = re.compile(r"\s(?:--?|–|—)\s")
_QUESTION = re.compile(r"^\W*(?i:what|how|why|when|where|who|which|whose)\b")
# a sentence opening so points back to the label before its colon, or defines it
_REFERS_BACK = re.compile(r"^\W*(?i:this|it|these|they|a|an|another)\s")


def speaks_of(sentence: str, label: str) -> bool:
    """Whether a sentence after a list item's colon is about its label: it repeats a word of
    it, whole or inflected ("Asthma inhalers: Asthma medications … can be used …"), or
    opens by pointing back to it or defining it ("This is the medical term for …", "A long
    seat for …"); then the label is a term it explains. Else the label heads prose
    ("Etymological: Both "ear" and …", "Thesaurus: to add synonyms to your query.")."""
    return bool(_REFERS_BACK.match(sentence)) or shares_word(label, sentence)


_WORD = re.compile(r"\w{3,}")


def shares_word(label: str, text: str, first: int | None = None) -> bool:
    """Whether `text` (its first `first` words of three letters or more; all of them for None)
    repeats one of the first six such words of `label`, whole, inflected or on its stem ("sofa" /
    "sofas", "computer" / "computers", "encroachance" / "encroaching"): the one test of a
    value, a sentence or a sentence's first word speaking of its label."""
    mine = _WORD.findall(label.lower())[:6]
    return any(a.startswith(b) or b.startswith(a) or a[:_STEM] == b[:_STEM] != b
               for b in _WORD.findall(text.lower())[:first] for a in mine)


_STEM = 7
"""Two words sharing their first seven letters share a stem (eighth round: "Encroachance" and
"Encroaching", "chemotherapy" and "chemotherapeutic"); a shorter word shares one only when the
other starts with it."""


# (sixth round) a sentence opening so says what its label is: an article ("A living trust is
# …"), or a pointer with its verb ("This is the medical term for …", "They are used to …")
_DEFINING = re.compile(r"^\W*(?i:(?:a|an|the|another)\s|(?:this|it|these|those|they)\s+"
                       r"(?:is|are|was|were|refers?|means?|describes?)\b)")


def defines(sentence: str, label: str) -> bool:
    """Whether a sentence after a label's colon says what the label is: it opens with an
    article or a pointer and its verb ("A living trust is a legal arrangement …", "This is
    …"), or with a word of the label ("Asthma medications … can be used …"). A remark
    opens otherwise ("20 years ago, they were called …", "These days, we just call them
    …", "They're not old anymore.")."""
    if _DEFINING.match(sentence):
        return True
    return sentence.lstrip(" \"'“*_")[:1].isalpha() and shares_word(label, sentence, 1)


# words a definition by kind never opens with: a pronoun (a sentence's subject), or a preposition
# or conjunction (a purpose or a circumstance: "to add synonyms to your query", "when …")
_NOT_A_KIND = frozenset("to from in on for by with at of as when if because since while so".split()) | _SUBJECTS


def names_a_kind(text: str) -> bool:
    """Whether a value after a list item's colon defines its label by naming what kind of
    thing it is, a noun phrase whose verbs, if any, are a relative clause's or a participle's
    (after fresh19-fresh22: "Medications that are used to kill cancer cells.", "The science
    of using chemicals to treat diseases, including cancer.", "Treatment given to patients
    who have cancer."): then the label is the term it defines. A sentence with a verb of its
    own ("The word "ear" is derived from …"), one opening with a pronoun, a preposition or a
    conjunction ("to add synonyms to your search query.") does not."""
    text = _BRACKETED.sub("", text).strip()
    words = text.split()
    if not words or words[0].lower().strip("\"'“‘*_") in _NOT_A_KIND or SENTENCE.search(text):
        return False
    head = RELATIVE_PRONOUN.split(f" {text} ", 1)[0]
    return not STATEMENT.search(f"{head} ") and not is_clause(head) and not _PRONOUN.search(f"{head} ")


def is_clause(line: str) -> bool:
    """Whether an item is a clause, a statement with or without its full stop: after its first
    word, a lower-case modal verb ("can", "may", "should", "will" …) in an item of four or
    more words, or an auxiliary ("is", "are", "has" …) in one of five or more, or (sixth
    round) anywhere a contracted verb ("They're", "we've", "isn't", "won't") in one of four
    or more, followed by a lower-case word that joins nothing ("Landlords can repair their
    homes", "Tenants are responsible for minor repairs", "They're not old anymore"). "Last Will and Testament", "trash can for the
    kitchen", "wifi is not working" and a question a searcher types ("what is a living
    trust") are not, nor is a term with a note after a dash ("glitches (verb) - to make
    something appear … in a way that is not normal")."""
    words = _DASH_NOTE.split(_BRACKETED.sub("", line), 1)[0].split()  # a note after a dash is no part of it
    if len(words) < 4 or _QUESTION.match(line):
        return False
    query = QUERY.get() or ()  # seventh round: the query's own "won't" is no sign of a sentence
    for i in range(len(words) - 1):
        word, after = words[i], words[i + 1].strip("\"'“”‘’*_")
        verb = (_CONTRACTION.match(word.strip("\"“”‘*_")) if (i == 0 or word[:1].islower())
                and normalize_term(word.replace("’", "'")) not in query
                and not (i and _NOT.search(word) and (words[i - 1].lower() not in _SUBJECTS
                                                      or (i > 1 and words[i - 1].lower() in _RELATIVES
                                                          and words[0].lower() not in _SUBJECTS)))
                else None) \
            or (i and (word in _MODAL or (word in _AUXILIARY and len(words) >= 5)))
        if verb and after[:1].islower() and after.isalpha() and after not in _JOINING:
            return True
    return False


def is_statement(line: str, by_words: bool = True) -> bool:
    """Whether an item (or a value after its colon) ending with a full stop is a statement:
    it holds a lower-case finite verb ("The domain is medicine."), or (`by_words`: no note
    after a dash in it) three or more words of which one is a lower-case pronoun or
    determiner ("Restart the printer.", "Viruses cause it."); a term ending with a stray
    stop is not ("Acute coronary syndrome.", "laptop bags."), and a comma list is read as a
    list. One that opens with an article and holds such a verb, or a clause (`is_clause`), is
    a statement, full stop or not ("The legal domain is trademark registration"); "wifi is
    down" is a term."""
    line = _BRACKETED.sub("", line).strip()  # "Vegan (from the Latin word, which means plant)." is a term's note
    if (ARTICLE_OPENING.match(line) and STATEMENT.search(line)) or is_clause(line):
        return True  # "The medical domain is sore throat", "Landlords can fix their homes", full stop or not
    if not line.endswith(".") or line.endswith("..."):
        return False
    return bool(STATEMENT.search(line)) or (by_words and len(line.split()) >= 3 and bool(_DETERMINER.search(line)))


def states_a_condition(line: str) -> bool:
    """Whether a bulleted item that reads as a statement is a searcher's short phrase for a
    condition (after fresh11: "Keyboard is disabled.", "No power is available."): ending
    with a full stop, at most six words, "is" or "are" and no modal verb, opening with no
    pronoun or article and holding none, no sentence break. "Restart the printer.", "The domain is medicine.", "It is broken." are statements."""
    if not line.strip().endswith(".") or line.strip().endswith(".."):
        return False  # without its stop, only a clause is a statement ("Tenants must report damage quickly")
    text = line.strip().rstrip(".").strip()
    words = text.split()
    first = re.split(r"['’]", words[0])[0].lower() if words else ""  # "They're" is "they"
    return (2 <= len(words) <= 6 and first not in _SUBJECTS and first not in ("the", "a", "an")
            and any(word in ("is", "are") for word in words) and not any(word in _MODAL for word in words)
            and not _DETERMINER.search(f" {text}")
            and not SENTENCE.search(text) and not text.endswith(("!", "?")))


def is_sentence(text: str) -> bool:
    """Whether `text` reads as a sentence rather than a short note: it holds a sentence
    break, ends with `!` or `?`, or has more than six words and ends with a full stop or
    holds a lower-case finite verb ("Home loans are a type of financial product that …")."""
    text = text.strip()
    return (bool(SENTENCE.search(text)) or text.endswith(("!", "?"))
            or (len(text.split()) > 6 and (text.endswith(".") or bool(STATEMENT.search(f" {text} ")))))


# a fragment of prose opens with a verb: a gerund ("Providing assistance …") or a present tense
# before its object ("Supports printing …", "Allows the user …"); "Fees for wire transfers …" does not
_VERB_FIRST = re.compile(r"^\W*[A-Za-z]+ing\b|^\W*[A-Za-z]+s\s+(?:[a-z]+ing|the|a|an|your|their|its|our|you|users?|people)\b")


def reads_as_sentence(text: str) -> bool:
    """Whether an item that gives no term is a sentence for the mostly-sentences rule: longer
    than a term can be (more than six words, notes in brackets aside) and sentence-like — a
    sentence (`is_sentence`) or a clause before any relative pronoun, or, not in title case,
    opening with a verb as a fragment of prose does ("Supports printing on different types of
    devices", "Providing assistance in various areas …"), holding a pronoun or determiner
    ("legal document that gives you the right …") or a label over a long value. A long noun
    phrase is not, a note in brackets after it or not (sixth round: "business licenses with a
    small business label (also known as …)"), nor a long name in title case (seventh round),
    nor a phrase whose verbs are a relative clause's (after fresh12, in lower case: "legal
    claims of injury to a person who is injured by falling"; after fresh27-fresh30, with a
    capital too: "Paid maternity leave for children with parents who have died …", "Other
    fees that may not be …"). A lower-case line ending with a full stop reads as one."""
    text = _BRACKETED.sub("", text).strip()
    if len(text.split()) <= 6:
        return False
    head = RELATIVE_PRONOUN.split(text, 1)[0]  # the verbs after "who", "that" … are the clause's
    if is_sentence(head) or is_clause(head):
        return True
    if text[:1].islower() and not text.endswith("."):
        return bool(_PRONOUN.search(f" {text}")) or ": " in text  # a pronoun anywhere still speaks to someone
    if ARTICLE_OPENING.match(text) and is_sentence(text):
        return True  # "The drug, which is cheap, helps …"
    return not title_case(text) and (text[:1].islower() or bool(_PRONOUN.search(f" {head}")) or ": " in text
                                     or _VERB_FIRST.match(text) is not None)


def title_case(text: str) -> bool:
    """Whether a phrase is written as a name is, every word of four or more letters
    capitalised ("Uterine Proliferative Adenocarcinoma of the Urethral Vulpallus"): a long
    name, not a sentence, which capitalises only its first word (seventh round)."""
    words = [word for word in re.findall(r"[A-Za-z][\w'’-]*", text) if len(word) >= 4]
    return len(words) >= 2 and all(word[:1].isupper() for word in words)
