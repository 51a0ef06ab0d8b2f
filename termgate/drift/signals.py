"""The signals the drift combiner weighs, per candidate term (issue 18 item 1).

Every signal is computed offline: embedding similarities (one batch of vectors from the
cached embedder), lexical features of the strings, and WordNet relations from cached
lexicon entries. A *reference* is the query or one of its expected terms; lexical and
WordNet signals take the best reference and remember which, so a verdict's reason can
name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .lexical import (NEGATIONS, char_overlap, differing_words, edit_ratio, head_word, is_abbreviation,
                      opposite_prefix, residual, token_overlap)
from .lexical import tokens as _words
from ..gc_pause import without_gc_pauses
from .lexicon import (EMPTY, GLOSS_STOPWORDS, CachedLexicon, LexiconEntry, gloss_stem, intended_senses,
                      merged_closure, phrase_head, relate)
from .senses import SENSE_FEATURES, head_of, query_words, review_reason, sense_signals, sense_text
from ..scoring.metrics import normalize_term

__all__ = ["FEATURES", "DOMAIN_GLOSSES", "Signals", "compute_signals", "without_gc_pauses", "edit_ratio", "char_overlap",
           "token_overlap", "is_abbreviation", "opposite_prefix", "domain_text", "review_reason"]

FEATURES = (
    "sim_query", "sim_domain", "domain_fit", "sim_expected_max", "sim_expected_mean", "sim_context",
    "token_overlap", "spelled_alike", "lookalike", "short_form_of", "expansion_of", "expansion_sim",
    "short_form", "opposite_prefix", "modified", "same_head", "other_head", "residual_sim_query", "residual_sim_domain",
    "wn_synonym_query", "wn_synonym_expected", "wn_synonym_specific", "wn_hypernym_query", "wn_hypernym_expected",
    "wn_path_query", "wn_path_expected", "wn_antonym", "wn_derived", "wn_term_known", "wn_unrelated",
    "wn_topic_in_domain", "wn_topic_elsewhere", "spelling_variant",
    "wn_head_known", "wn_intended", "wn_other_sense", "wn_path_intended", "opposite_word", "wn_gloss_overlap",
    "wn_gloss_shared", "wn_depth_intended",
) + SENSE_FEATURES
"""The combiner's inputs, in this order (the coefficients file names them too); the first 41
as before issue 36, then the sense-aware ones (termgate/drift/senses.py)."""

DOMAIN_GLOSSES = {
    "medical": "medicine, health, diseases, symptoms and treatment",
    "legal": "law, courts, lawsuits, contracts and legal procedure",
    "ecommerce": "shopping for products: clothing, shoes, electronics, appliances, furniture, home, kitchen, "
                 "beauty, baby and sports goods",
    "e-commerce": "shopping for products: clothing, shoes, electronics, appliances, furniture, home, kitchen, "
                  "beauty, baby and sports goods",
    "general": "general English",
}
"""The domain context embedded for a bare domain label: one word carries little meaning."""

def domain_text(domain: str) -> str:
    return DOMAIN_GLOSSES.get(normalize_term(domain), domain)


@dataclass(slots=True)
class Signals:
    """One candidate's signal values (`FEATURES` order) and the references behind them."""

    values: np.ndarray
    nearest_expected: str | None = None
    references: dict[str, str] = field(default_factory=dict)
    """Signal name -> the query or expected term it was measured against."""

    facts: dict[str, float] = field(default_factory=dict)
    """Every value measured, the combiner's inputs and the rest (wn_term_known, wn_unrelated)."""

    def __getitem__(self, name: str) -> float:
        return float(self.facts[name]) if name in self.facts else float(self.values[FEATURES.index(name)])


def _lexical(term: str, query: str, refs: list[str], out: dict[str, float],
             where: dict[str, str]) -> list[tuple[str, float]]:
    """The string signals; returns every reference the term is spelled alike (`spelled_alike`
    keeps the largest of those `kind_of_shared_piece` does not rule out), in order."""
    out["token_overlap"] = out["spelling_variant"] = 0.0
    alikes = []
    compact = "".join(_words(term))
    for ref in refs:
        ref_compact = "".join(_words(ref))
        if compact == ref_compact or (min(len(compact), len(ref_compact)) >= max(6, 0.9 * max(len(compact), len(ref_compact)))
                                      and edit_ratio(compact, ref_compact, floor=0.9) > 0.9):
            # 'bed sore', 'moisturiser'; one edit in ten letters is not enough ('stationary', 'hepatitis b')
            out["spelling_variant"], where["spelling_variant"] = 1.0, ref
    overlaps = [token_overlap(term, ref) for ref in refs]
    shares = any(overlaps)
    for ref, overlap in zip(refs, overlaps):
        if overlap > out["token_overlap"]:
            out["token_overlap"], where["token_overlap"] = overlap, ref
        # spelled alike without a shared word: 'torte' for 'tort', 'anomia' for 'anaemia'
        alike = 0.0
        if not shares and not out["spelling_variant"]:
            alike = char_overlap(term, ref)
            if min(len(term), len(ref)) >= 0.6 * max(len(term), len(ref)):  # else the edit ratio is < 0.6
                alike = max(alike, edit_ratio(term, ref, floor=max(0.6, alike)))  # only if it beats the trigrams
        if alike >= 0.6:  # below that, any two words
            alikes.append((ref, alike))
        if "short_form_of" not in where and is_abbreviation(term, ref):
            where["short_form_of"] = ref
        if "expansion_of" not in where and is_abbreviation(ref, term):
            where["expansion_of"] = ref
        if "opposite_prefix" not in where and opposite_prefix(term, ref):
            where["opposite_prefix"] = ref
    out["short_form_of"] = float("short_form_of" in where)
    out["expansion_of"] = float("expansion_of" in where)
    out["opposite_prefix"] = float("opposite_prefix" in where)
    out["short_form"] = float(len(term.replace(".", "")) <= 5 and " " not in term)
    return alikes


def shared_pieces(term: str, ref: str) -> list[str]:
    """The words two spelled-alike terms may share inside their words: every ending of their
    words' common ending and every beginning of their common beginning, 4 letters or more
    ('irus' and 'virus' of 'rotavirus' and 'norovirus')."""
    out: dict[str, None] = {}
    for w in _words(term):
        for r in _words(ref):
            end = 0
            while end < min(len(w), len(r)) and w[-1 - end] == r[-1 - end]:
                end += 1
            out.update(dict.fromkeys(w[len(w) - k:] for k in range(4, end + 1)))
            start = 0
            while start < min(len(w), len(r)) and w[start] == r[start]:
                start += 1
            out.update(dict.fromkeys(w[:k] for k in range(4, start + 1)))
    return list(out)


def kind_of_shared_piece(term: str, ref: str, entries: dict[str, LexiconEntry]) -> str | None:
    """A word the two share inside their words that WordNet files the term under, in a
    sense the reference is filed under too when WordNet knows it ('rotavirus' is a kind of
    virus, as 'norovirus' reads): their likeness is shared meaning, not a look-alike. Not
    'court case' for 'suitcase': a case of law, not a container."""
    mine, other = entries[term], entries[ref]
    for piece in shared_pieces(term, ref):
        kinds = {s for s in entries[piece].synsets if mine.closure.get(s, 0) > 0}
        if kinds and (not other.closure or kinds & other.closure.keys()):
            return piece
    return None


DOMAIN_TOPICS = {"medical": "n06045562", "legal": "n08441203", "ecommerce": "n01090446", "e-commerce": "n01090446"}
"""WordNet topic of each domain label: medical science, law, commerce (and their hyponyms)."""


def lexicon_words(prepared: Sequence[tuple], lexical: Sequence[tuple]) -> list[str]:
    """What `compute_signals` asks the lexicon for: each term and reference, the words by
    which a term and a reference sharing a word differ (`_opposite_word` looks for antonyms),
    and the pieces a term shares with the references it is spelled like (`kind_of_shared_piece`)."""
    out: dict[str, None] = {}
    for (term, _query, refs, _rest, diffs), (_, _, alikes) in zip(prepared, lexical):
        out[term] = None
        out.update(dict.fromkeys(refs))
        out.update(dict.fromkeys(head_of(r) for r in refs))  # senses.sense_signals reads a compound's head
        out.update(dict.fromkeys(query_words(_query)))         # ... and the query's words one by one
        for diff in diffs:
            if diff:
                out.update(dict.fromkeys(diff[0] + diff[1]))
        for ref, _ in alikes:
            out.update(dict.fromkeys(shared_pieces(term, ref)))
    return list(out)


def _opposite_word(refs: list[str], diffs: Sequence, entries: dict[str, LexiconEntry]) -> str | None:
    """A reference the term turns into its opposite by one word: a negation added or dropped
    ('not guilty verdict' / 'guilty verdict'), or a WordNet antonym ('extra small' / 'extra large');
    `diffs`: the term's `differing_words` with each reference."""
    for ref, diff in zip(refs, diffs):
        if diff is None:
            continue
        mine, theirs = diff
        if (mine or theirs) and set(mine + theirs) <= NEGATIONS:
            return ref
        for a in mine:
            for b in theirs:
                ea, eb = entries.get(a, EMPTY), entries.get(b, EMPTY)
                if ea.known and eb.known and (ea.antonyms & set(eb.synsets) or eb.antonyms & set(ea.synsets)):
                    return ref
    return None


@lru_cache(maxsize=1 << 16)
def _stems(text: str) -> frozenset[str]:
    return frozenset(gloss_stem(w) for w in _words(text) if len(w) > 2 and w not in GLOSS_STOPWORDS)


def gloss_overlap(term: str, mine: LexiconEntry, ref: str, other: LexiconEntry) -> int:
    """Words one side's WordNet definitions share with the other side's words, beyond the
    words the two terms share ('percolator': 'a coffeepot ... ground coffee beans', for
    'coffee maker'), counted by `gloss_stem`."""
    ours, theirs = _stems(term), _stems(ref)
    return len(mine.gloss & (theirs - ours)) + len(other.gloss & (ours - theirs))


def _senses(refs: list[str], entries: dict[str, LexiconEntry], memo: dict) -> dict[str, tuple]:
    """Each reference's entry, the senses the others pick out (`intended_senses`) and those
    senses' closure, once per query (the candidates of a query share their references)."""
    key = tuple(refs)
    if key not in memo:
        memo[key] = {}
        for r in refs:
            e = entries[r]
            meant = intended_senses(e, [entries[o] for o in refs if o != r])
            whole = len(meant) == len(e.synsets)
            memo[key][r] = (e, meant, e.closure if whole else merged_closure(e, meant), whole)
    return memo[key]


def _close(rel) -> bool:
    """Synonyms, derivations, or at most two levels apart."""
    return rel.synonym or rel.derived or min(rel.broader or 9, rel.narrower or 9) <= 2


_WORDNET_MAXIMA = ("wn_synonym_query", "wn_synonym_expected", "wn_synonym_specific", "wn_hypernym_query",
                   "wn_hypernym_expected", "wn_path_query", "wn_path_expected", "wn_antonym", "wn_derived",
                   "wn_intended", "wn_path_intended", "wn_gloss_overlap", "wn_gloss_shared", "wn_depth_intended",
                   "wn_path_other")


def _relations(term: str, query: str, mine: LexiconEntry, senses: dict, out: dict[str, float],
               where: dict[str, str]) -> str | None:
    """The WordNet signals that take the best reference (the first reference with the largest
    value); returns a reference the term relates to only through a sense other than the one
    meant (None when there is none)."""
    best = dict.fromkeys(_WORDNET_MAXIMA, 0.0)
    other_sense = None
    for ref, (other, intended, intended_closure, whole) in senses.items():
        rel = relate(mine, other)
        meant = rel if whole else relate(mine, other, intended, intended_closure)
        query_side = ref == query
        values = (
            ("wn_synonym_query" if query_side else "wn_synonym_expected", float(rel.synonym)),
            ("wn_antonym", float(rel.antonym)), ("wn_derived", float(rel.derived)),
            ("wn_hypernym_query" if query_side else "wn_hypernym_expected",
             float(rel.broader is not None or rel.narrower is not None)),
            ("wn_synonym_specific", 1 / len(other.synsets) if rel.synonym else 0.0),
            ("wn_path_query" if query_side else "wn_path_expected", rel.path_similarity),
            ("wn_intended", 1.0 if _close(meant) else 0.0),
            ("wn_path_intended", meant.path_similarity), ("wn_depth_intended", meant.depth_similarity),
            ("wn_gloss_overlap", min(gloss_overlap(term, mine, ref, other), 2) / 2),
            ("wn_gloss_shared", min(len(mine.gloss & other.gloss), 4) / 4),
            ("wn_path_other", max(0.0, rel.path_similarity - meant.path_similarity)))  # only through another sense
        for name, value in values:
            if value > best[name]:
                best[name], where[name] = value, ref
        if other_sense is None and not _close(meant) and _close(rel):
            other_sense = ref
    out.update(best)
    return None if best["wn_intended"] else other_sense


def _wordnet(term: str, query: str, refs: list[str], diffs: Sequence, domain: str | None, entries: dict,
             out: dict[str, float], where: dict[str, str], memo: dict) -> None:
    mine = entries[term]
    senses = _senses(refs, entries, memo)
    other_sense = _relations(term, query, mine, senses, out, where)
    out["wn_other_sense"] = float(other_sense is not None)
    if other_sense is not None:
        where["wn_other_sense"] = other_sense
    out["wn_term_known"] = float(mine.known)
    out["wn_head_known"] = float(not mine.known and bool(mine.closure))
    if out["wn_head_known"]:
        where["wn_head"] = phrase_head(_words(term)) or term
    related = any(out[n] for n in ("wn_synonym_query", "wn_synonym_expected", "wn_hypernym_query",
                                   "wn_hypernym_expected", "wn_derived", "wn_antonym"))
    ref_known = any(other.closure for other, *_ in senses.values())
    out["wn_unrelated"] = float(bool(mine.closure) and ref_known and not related
                                and max(out["wn_path_query"], out["wn_path_expected"]) < 0.25)
    root = DOMAIN_TOPICS.get(normalize_term(domain or ""))
    shared = next((r for r in refs if mine.topics & entries[r].topics), None)
    out["wn_topic_in_domain"] = float(shared is not None or (root is not None and root in mine.topic_closure))
    if shared is not None:
        where["wn_topic_in_domain"] = shared
    out["wn_topic_elsewhere"] = float(bool(mine.topics) and not out["wn_topic_in_domain"])
    opposite = _opposite_word(refs, diffs, entries)
    out["opposite_word"] = float(opposite is not None)
    if opposite:
        where["opposite_word"] = opposite


def context_text(candidate) -> str:
    """The query with its expected terms, embedded as one text: the sense the golden set means."""
    return "; ".join([candidate.query, *candidate.expected_terms])


def _similarities(candidates: Sequence, domains: list, contexts: list[str], rests: list, embedder) -> dict[str, np.ndarray]:
    """The embedding signals of every candidate at once: one `embed` call, row-wise dot products."""
    texts = list(dict.fromkeys([c.term for c in candidates] + [c.query for c in candidates]
                               + [d for d in domains if d] + [e for c in candidates for e in c.expected_terms]
                               + [r for r in rests if r] + contexts))
    index = {t: i for i, t in enumerate(texts)}
    vectors = embedder.embed(texts)

    def rows(items) -> np.ndarray:
        return vectors[np.fromiter((index[t] for t in items), dtype=np.int64, count=len(candidates))]

    def dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.einsum("ij,ij->i", a, b).astype(np.float64)

    term, query = rows(c.term for c in candidates), rows(c.query for c in candidates)
    has_domain = np.array([d is not None for d in domains])
    domain = rows(d if d else c.query for c, d in zip(candidates, domains))
    has_rest = np.array([r is not None for r in rests])
    rest = rows(r if r else c.term for c, r in zip(candidates, rests))
    context = rows(contexts)
    sim = {"sim_query": dot(term, query), "sim_context": dot(term, context)}
    sim["residual_sim_context"] = np.where(has_rest, dot(rest, context), sim["sim_context"])
    sim["sim_domain"] = np.where(has_domain, dot(term, domain), sim["sim_query"])
    sim["domain_fit"] = np.where(has_domain, sim["sim_domain"] - dot(query, domain), 0.0)
    counts = np.array([len(c.expected_terms) for c in candidates])
    owner = np.repeat(np.arange(len(candidates)), counts)
    expected = vectors[[index[e] for c in candidates for e in c.expected_terms]] if counts.sum() else None
    sim_max, sim_mean, nearest = sim["sim_query"].copy(), sim["sim_query"].copy(), np.full(len(candidates), -1)
    if expected is not None:
        pair = np.einsum("ij,ij->i", expected, term[owner]).astype(np.float64)
        starts = np.cumsum(counts) - counts
        some = counts > 0
        sim_max[some] = np.maximum.reduceat(pair, starts[some])
        sim_mean[some] = np.add.reduceat(pair, starts[some]) / counts[some]
        # the argmax within each candidate's own expected terms: its first pair at its maximum
        at_max = np.flatnonzero(pair == sim_max[owner])
        owners, first = np.unique(owner[at_max], return_index=True)
        nearest[owners] = at_max[first] - starts[owners]
    sim["sim_expected_max"], sim["sim_expected_mean"], sim["nearest"] = sim_max, sim_mean, nearest
    sim["residual_sim_query"] = np.where(has_rest, dot(rest, query), sim["sim_query"])
    sim["residual_sim_domain"] = np.where(has_rest & has_domain, dot(rest, domain),
                                          np.where(has_rest, sim["residual_sim_query"], sim["sim_domain"]))
    return sim


@without_gc_pauses
def compute_signals(candidates: Sequence, embedder, lexicon: CachedLexicon,
                    domain_context: str | None = None) -> list[Signals]:
    """Signals of each candidate (DriftCandidate), in order. One lexicon lookup and one
    `embedder.embed` call for all the texts involved."""
    if not candidates:
        return []
    labels = [domain_context or c.domain for c in candidates]
    domains = [domain_text(d) if d else None for d in labels]
    prepared = []
    contexts = [context_text(c) for c in candidates]
    references: dict[tuple, tuple[str, list[str]]] = {}  # the candidates of a query share them
    for c in candidates:
        term = normalize_term(c.term)
        key = (c.query, c.expected_terms)
        if key not in references:
            query = normalize_term(c.query)
            references[key] = query, list(dict.fromkeys([query, *(normalize_term(e) for e in c.expected_terms)]))
        query, all_refs = references[key]
        refs = [r for r in all_refs if r != term] or [query]
        prepared.append((term, query, refs, residual(term, refs), [differing_words(term, r) for r in refs]))
    lexical = []
    for term, query, refs, _rest, _diffs in prepared:
        out: dict[str, float] = {}
        where: dict[str, str] = {}
        lexical.append((out, where, _lexical(term, query, refs, out, where)))
    words = lexicon_words(prepared, lexical)
    entries = lexicon.entries(words)  # first: a missing WordNet is said before the model loads
    sims = _similarities(candidates, domains, contexts, [p[3] for p in prepared], embedder)
    columns = {name: sims[name].tolist() for name in sims}
    found = []
    memo: dict = {}
    for i, (c, label, (term, query, refs, rest, diffs), (lex, lex_where, alikes)) in enumerate(
            zip(candidates, labels, prepared, lexical)):
        v: dict[str, float] = {name: columns[name][i] for name in _EMBEDDING_SIGNALS}
        nearest = c.expected_terms[columns["nearest"][i]] if c.expected_terms else None
        where: dict[str, str] = {"domain": label} if label else {}
        v.update(lex)
        where.update(lex_where)
        v["expansion_sim"] = v["expansion_of"] * v["sim_query"]
        v["spelled_alike"] = 0.0
        for ref, alike in alikes:  # the first largest; alike in meaning is no look-alike ('rotavirus', 'norovirus')
            if alike > v["spelled_alike"] and kind_of_shared_piece(term, ref, entries) is None:
                v["spelled_alike"], where["spelled_alike"] = alike, ref
        v["lookalike"] = v["spelled_alike"] * (1 - max(v["sim_query"], v["sim_expected_max"]))
        where["lookalike"] = where.get("spelled_alike", query)
        v["modified"] = float(rest is not None)
        heads = {head_word(r) for r in refs}
        own_head = head_word(term)
        v["same_head"] = float(rest is not None and own_head in heads)
        if v["same_head"]:
            where["same_head"] = next(r for r in refs if head_word(r) == own_head)
        v["other_head"] = float(rest is not None and own_head not in heads)
        if rest is not None:
            where["modified"] = rest
        _wordnet(term, query, refs, diffs, label, entries, v, where, memo)
        sense_signals(term, query, refs, diffs, label, entries, memo[tuple(refs)], v, where, memo)
        found.append((nearest, where, v))
    _name_senses(found, [p[0] for p in prepared], lexicon)
    matrix = np.array([[v[name] for name in FEATURES] for _, _, v in found])  # one array, a row per candidate
    return [Signals(row, nearest, where, v) for row, (nearest, where, v) in zip(matrix, found)]


def _name_senses(found: list, terms: list[str], lexicon: CachedLexicon) -> None:
    """The sentence naming the sense a term is read in and the one the query means
    (`references['sense']`), for the few terms a sense signal fired on: one definitions lookup."""
    wanted = [(where, term) for (_, where, _), term in zip(found, terms) if "sense_term" in where]
    if not wanted:
        return
    definitions = lexicon.definitions([s for where, _ in wanted for s in (where["sense_term"], where.get("sense_ref")) if s])
    for where, term in wanted:
        text = sense_text(term, where, definitions)
        if text:
            where["sense"] = text


_EMBEDDING_SIGNALS = ("sim_query", "sim_context", "sim_domain", "domain_fit", "sim_expected_max", "sim_expected_mean",
                      "residual_sim_query", "residual_sim_domain", "residual_sim_context")
