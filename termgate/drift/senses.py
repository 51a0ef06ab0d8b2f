"""Signals that respect the sense the query means (issue 36), beside those of signals.py.

A compound read as a kind of its head word counts as kin only when it is read in the head's
meant sense ('food court' is not a court of law); a WordNet relation counts as kin only
through the meant sense ('seal' the animal for a legal seal); opposites come from WordNet's
antonyms one step further (similar adjectives, derived words), attribute pairs and a curated
list (termgate/drift/opposites.py); siblings (co-hyponyms, 'hepatitis a' / 'hepatitis b',
rival brands) are their own signal. `review_reason` says when a term's signals cannot be
trusted to give a confident verdict.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .lexical import tokens
from .lexicon import EMPTY, LexiconEntry, intended_senses, phrase_head
from .lexicon import closure_path as _closeness_path
from .lexical import head_word
from .opposites import curated_opposite, curated_same, curated_sibling, string_sibling

__all__ = ["SENSE_SIGNALS", "SENSE_FEATURES", "sense_signals", "opposed", "review_reason", "sense_text", "head_of"]

SENSE_SIGNALS = (
    "residual_sim_context", "same_head_fit", "head_sense_meant", "head_sense_other", "head_not_kind",
    "wn_path_other", "wn_sibling", "string_sibling", "curated_sibling", "curated_same", "modifier_swap",
    "wn_opposite", "opposite_curated", "short_lookalike", "unknown_word", "unknown_word_context", "unknown_word_domain",
    "word_sense_meant", "word_sense_other",
)
"""Every signal added in issue 36, computed for every term (`Signals.facts`; `review_reason`
reads them)."""

SENSE_FEATURES = (
    "residual_sim_context", "same_head_fit", "head_sense_meant", "head_sense_other", "head_not_kind", "wn_path_other",
    "wn_sibling", "string_sibling", "curated_sibling", "curated_same", "modifier_swap", "wn_opposite",
    "opposite_curated", "short_lookalike", "unknown_word_domain", "word_sense_meant", "word_sense_other",
)
"""Those the combiner weighs (after signals.FEATURES' first 41, in `SENSE_SIGNALS` order): the
ones grouped cross-validation keeps on the training rows (scripts/drift_select_signals.py: all
but those whose removal lowered the log-loss by 0.0005 or more, removed one at a time, the
largest first), plus every signal an earlier round's combiner weighed, so that its
coefficients file can still be scored by name (docs/drift.md)."""


@lru_cache(maxsize=1 << 16)
def head_of(text: str) -> str:
    """The word a phrase is a kind of, as WordNet reads it (`phrase_head`); a word itself."""
    words = tokens(text)
    return phrase_head(words) or (words[0] if words else text)


def _parents(closure: dict[str, int]) -> set[str]:
    return {a for a, d in closure.items() if d == 1}


def opposed(a: LexiconEntry, b: LexiconEntry) -> bool:
    """WordNet opposes the two beyond a direct antonym: an antonym of a similar adjective or
    of a word one is derived from (`LexiconEntry.opposed`), or two adjectives with a common
    attribute that share no sense (values of one attribute: benign / malignant)."""
    if not a.known or not b.known:
        return False
    if not a.opposed.isdisjoint(b.synsets) or not b.opposed.isdisjoint(a.synsets):
        return True
    return (not a.attributes.isdisjoint(b.attributes) and set(a.synsets).isdisjoint(b.synsets)
            and all(s[0] == "a" for s in a.synsets) and all(s[0] == "a" for s in b.synsets))


def _head_reading(term: str, mine: LexiconEntry, ref: str, refs: list[str], entries: dict,
                  memo: dict) -> tuple[str, tuple[str, ...], set[str], tuple[str, ...]]:
    """(head word, its senses, the senses the term is read in, the senses the references mean)."""
    head = head_of(ref)
    h = entries.get(head, EMPTY)
    key = ("head", ref, tuple(refs))
    if key not in memo:
        if ref != head:  # a phrase: the head senses it is a kind of (none: 'otitis media' is no medium)
            whole = entries.get(ref, EMPTY)
            meant = tuple(_read_as(ref, whole, head, entries))
            if not meant and not whole.known:
                meant = h.synsets  # a phrase WordNet lacks, its words picking no sense: undecided
        else:
            others = [entries[o] for o in refs if o not in (ref, head) and entries.get(o, EMPTY).closure]
            meant = intended_senses(h, others) if others else h.synsets
        memo[key] = meant
    return head, h.synsets, _read_as(term, mine, head, entries), memo[key]


def _read_as(text: str, mine: LexiconEntry, head: str, entries: dict) -> list[str]:
    """The senses of the word `head` a phrase is a kind of: those WordNet files it under, or
    for a phrase WordNet lacks, the one its other words pick clearly (`clear_sense`; `kind_of`'s
    nearest senses are too often a guess: 'rain boots' is no kick), else none."""
    h = entries.get(head, EMPTY)
    if mine.known:
        return [s for s in h.synsets if mine.closure.get(s, 0) > 0]
    picked = clear_sense(h, [entries[w] for w in tokens(text) if w != head and entries.get(w, EMPTY).known])
    return [picked] if picked else []


def query_words(query: str) -> tuple[str, ...]:
    """The words of a query of several words that `_word_senses` reads on their own."""
    words = tokens(query)
    return tuple(w for w in words if len(w) > 2 and w not in _PARTICLES) if len(words) > 1 else ()


_PARTICLES = frozenset("of for and the to in on a an with by at or from under not".split())


def _near_senses(mine: LexiconEntry, word: LexiconEntry) -> set[str]:
    """The senses of `word` the term is a synonym of, or at most two levels above or below."""
    found = set(word.synsets).intersection(mine.synsets)
    found.update(s for s in word.synsets if 0 < mine.closure.get(s, 9) <= 2)
    found.update(s for s in word.synsets if any(0 < word.sense_closure(s).get(t, 9) <= 2 for t in mine.synsets))
    return found


def clear_sense(entry: LexiconEntry, others: list[LexiconEntry], margin: float = 0.05) -> str | None:
    """The noun sense of `entry` nearest (path similarity) to `others`, when it is nearer than
    every other noun sense by `margin`; None when the others do not tell ('court' beside
    'appeal' and 'judge' is the court of law; beside 'county', no sense stands out)."""
    nouns = [s for s in entry.synsets if s[0] == "n"]
    if len(nouns) < 2 or not others:
        return None
    scores = sorted(((max((_closeness_path(entry.sense_closure(s), o.closure) for o in others), default=0.0), s)
                     for s in nouns), reverse=True)
    return scores[0][1] if scores[0][0] > 0 and scores[0][0] - scores[1][0] >= margin else None


def _word_senses(term: str, query: str, refs: list[str], entries: dict, memo: dict, where: dict) -> tuple[float, float]:
    """(meant, other): the term is WordNet-close to a word of the query (a synonym, or at most
    two levels apart) in the sense the query means, or only in another ('student' for 'pupil
    reaction to light': the pupil of the eye; 'synagogue' for 'temple headache'); or the term
    is a compound on that word whose other words pick its sense ('tax return' for 'return
    policy'). Senses count only when the words around them pick one clearly (`clear_sense`)."""
    mine = entries[term]
    if not mine.closure:
        return 0.0, 0.0
    own = set(tokens(term))
    head = head_of(term) if len(own) > 1 else None
    meant_hit = other_hit = None
    for w in query_words(query):
        e = entries.get(w, EMPTY)
        key = ("word", w, tuple(refs))
        if key not in memo:
            others = [entries[o] for o in refs if o != query and entries[o].closure]
            others += [entries[x] for x in query_words(query) if x != w and entries.get(x, EMPTY).known]
            memo[key] = clear_sense(e, others)
        meant = memo[key]
        if meant is None:
            continue  # one sense, or the query does not pick one
        if w in own:
            if w != head:
                continue  # a shared modifier: its sense in the term is not read
            via = set(_read_as(term, mine, w, entries))
        else:
            via = _near_senses(mine, e)
        if meant in via:
            meant_hit = meant_hit or w
        elif via:
            other_hit = other_hit or (w, sorted(via, key=e.synsets.index)[0], meant)
    if other_hit and not meant_hit:
        w, sense, query_sense = other_hit
        where["word_sense_other"] = w
        if "sense_term" not in where:
            where["sense_term"] = sense if w in own or not mine.synsets else mine.synsets[0]
            where["sense_ref"], where["sense_head"] = query_sense, w
            if w in own:
                where["head_sense_other"] = w
        return 0.0, 1.0
    if meant_hit:
        where["word_sense_meant"] = meant_hit
        return 1.0, 0.0
    return 0.0, 0.0


def sense_signals(term: str, query: str, refs: list[str], diffs, domain: str | None, entries: dict, senses: dict,
                  v: dict[str, float], where: dict[str, str], memo: dict) -> None:
    """Fill `v` with `SENSE_SIGNALS` (all but residual_sim_context, an embedding signal set
    before), naming references in `where` and the senses a reason may name (`sense_*`)."""
    mine = entries[term]
    v["same_head_fit"] = v["same_head"] * v["residual_sim_context"]
    v["head_sense_meant"] = v["head_sense_other"] = v["head_not_kind"] = 0.0
    if v["same_head"]:
        ref = where["same_head"]
        head, synsets, read, meant = _head_reading(term, mine, ref, refs, entries, memo)
        nouns = [s for s in synsets if s[0] == "n"] or list(synsets)  # a phrase's head names a thing
        read, meant = [s for s in read if s in nouns], [s for s in meant if s in nouns]
        if not read:
            if mine.known and synsets:
                v["head_not_kind"], where["head_not_kind"] = 1.0, ref
                if meant and len(meant) < len(nouns):  # 'coat of arms' is ...; the query means ...
                    where["sense_term"], where["sense_ref"] = mine.synsets[0], meant[0]
        elif not set(read) & set(meant):
            v["head_sense_other"], where["head_sense_other"] = 1.0, ref
            where["sense_term"], where["sense_head"] = read[0], head
            whole = entries.get(ref, EMPTY)
            if meant or whole.known:
                where["sense_ref"] = meant[0] if meant else whole.synsets[0]
        elif len(nouns) == 1 or (len(read) < len(nouns) and len(meant) < len(nouns)):
            v["head_sense_meant"], where["head_sense_meant"] = 1.0, ref
        # else: the term's words or the references do not pick a sense of the head: neither
    # siblings: co-hyponyms of a reference's meant sense, not its synonyms nor kinds of it
    v["wn_sibling"] = 0.0
    if mine.known:
        own = _parents(mine.closure)
        parents = memo.get(("parents", id(senses)))
        if parents is None:  # once per query: its candidates share the references
            parents = memo[("parents", id(senses))] = {ref: _parents(c) for ref, (_, _, c, _) in senses.items()}
        for ref, (other, intended, intended_closure, _whole) in senses.items():
            if not other.known or own.isdisjoint(parents[ref]) or not set(mine.synsets).isdisjoint(intended):
                continue
            if not any(intended_closure.get(s, 0) > 0 for s in mine.synsets) \
                    and not any(mine.closure.get(s, 0) > 0 for s in intended):
                v["wn_sibling"], where["wn_sibling"] = 1.0, ref
                break
    for name, found in (("string_sibling", string_sibling(term, refs)), ("curated_sibling", curated_sibling(term, query, [r for r in refs if r != query])),
                        ("curated_same", curated_same(term, refs)),
                        ("opposite_curated", curated_opposite(term, refs, domain))):
        v[name] = float(found is not None)
        if found is not None:
            where[name] = found
    # another kind of the same thing: the head kept, a reference's other words swapped for the
    # term's ('ibuprofen overdose' for 'acetaminophen overdose'), and no reference it narrows
    v["modifier_swap"] = 0.0
    if v["same_head"]:
        own, words = head_word(term), set(tokens(term))
        if not any(set(tokens(r)) <= words for r in refs if head_word(r) == own):
            v["modifier_swap"], where["modifier_swap"] = 1.0, where["same_head"]
    v["wn_opposite"] = 0.0
    for ref, diff in zip(refs, diffs):
        pairs = [(term, ref)] + ([(a, b) for a in diff[0] for b in diff[1]] if diff else [])
        if any(opposed(entries.get(a, EMPTY), entries.get(b, EMPTY)) for a, b in pairs):
            v["wn_opposite"], where["wn_opposite"] = 1.0, ref
            break
    v["short_lookalike"] = float(bool(v["short_form"]) and v["spelled_alike"] > 0 and not v["short_form_of"])
    v["word_sense_meant"], v["word_sense_other"] = _word_senses(term, query, refs, entries, memo, where)
    single = len(tokens(term)) == 1
    v["unknown_word"] = float(single and not mine.known)
    v["unknown_word_context"] = v["unknown_word"] * v["sim_context"]
    v["unknown_word_domain"] = v["unknown_word"] * v["domain_fit"]
    if (v["wn_other_sense"] or v["wn_path_other"] >= 0.25) and "sense_term" not in where:
        ref = where.get("wn_other_sense") or where["wn_path_other"]
        other, intended, _closure, whole = senses[ref]
        if not whole and mine.synsets:
            where["sense_term"], where["sense_ref"], where["sense_head"] = mine.synsets[0], intended[0], ref


_PARENTHESES = re.compile(r"\s*\([^)]*\)")


def _clean(definition: str, limit: int = 80) -> str:
    text = " ".join(_PARENTHESES.sub("", definition).split()).rstrip(".")
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + "…"


def sense_text(term: str, where: dict[str, str], definitions: dict[str, str]) -> str | None:
    """'food court' is an area where fast food is sold; the query means a court of law — from
    the WordNet definitions of the sense the term is read in and the sense the query means."""
    mine, theirs = definitions.get(where.get("sense_term", "")), definitions.get(where.get("sense_ref", ""))
    if not mine or not theirs:
        return None
    if "head_sense_other" in where:
        return f"'{term}' reads as '{where['sense_head']}': {_clean(mine)}; the query means {_clean(theirs)}"
    return f"'{term}' is {_clean(mine)}; the query means {_clean(theirs)}"


_KIN = ("wn_synonym_query", "wn_synonym_expected", "short_form_of", "curated_same")
_APART = ("opposite_prefix", "opposite_word", "wn_antonym", "wn_opposite", "opposite_curated", "wn_sibling",
          "string_sibling", "curated_sibling", "head_sense_other")


def review_reason(signals) -> str | None:
    """Why a term's verdict should go to review rather than be trusted, or None: its strong
    signals disagree (a kinship signal — a synonym, a spelling, an abbreviation, a kind of the
    query's word in its meant sense — and an opposite or sibling signal both on), or its only
    tie to the query is a WordNet relation through another sense while the embedding puts it
    near the query (MiniLM does not tell senses apart: 'heat stroke' for 'cerebrovascular
    accident', 'tea kettle' for 'electric kettle'). `signals`: a signals.Signals."""
    def on(name: str) -> bool:
        try:
            return bool(signals[name])
        except (KeyError, ValueError):
            return False

    refs = signals.references
    kin = [n for n in _KIN if on(n)]
    if on("expansion_of") and signals["expansion_sim"] >= 0.5:
        kin.append("expansion_of")
    apart = [n for n in _APART if on(n)]
    if kin and apart:
        return (f"signals disagree: {_NAMES[kin[0]]} '{refs.get(kin[0], '?')}' but "
                f"{_NAMES[apart[0]]} '{refs.get(apart[0], '?')}'")
    if (on("wn_other_sense") and not on("wn_intended") and not kin
            and max(signals["sim_context"], signals["sim_expected_max"]) >= 0.5):
        return (f"only related to '{refs.get('wn_other_sense', '?')}' through another WordNet sense, "
                f"yet close to the query's meaning ({max(signals['sim_context'], signals['sim_expected_max']):.2f})")
    return None


_NAMES = {
    "wn_synonym_query": "a WordNet synonym of", "wn_synonym_expected": "a WordNet synonym of",
    "spelling_variant": "a spelling of", "short_form_of": "an abbreviation of", "expansion_of": "the expansion of",
    "head_sense_meant": "a kind of", "opposite_prefix": "an opposite prefix to", "opposite_word": "the opposite of",
    "wn_antonym": "a WordNet antonym of", "wn_opposite": "opposed in WordNet to", "opposite_curated": "the opposite of",
    "wn_sibling": "a sibling of", "string_sibling": "a sibling of", "curated_sibling": "a sibling of", "curated_same": "another name of",
    "head_sense_other": "in another sense than",
}
