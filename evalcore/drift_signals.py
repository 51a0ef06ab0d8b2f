"""The signals the drift combiner weighs, per candidate term (issue 18 item 1).

Every signal is computed offline: embedding similarities (one batch of vectors from the
cached embedder), lexical features of the strings, and WordNet relations from cached
lexicon entries. A *reference* is the query or one of its expected terms; lexical and
WordNet signals take the best reference and remember which, so a verdict's reason can
name it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .lexicon import CachedLexicon, relate
from .metrics import normalize_term

__all__ = ["FEATURES", "DOMAIN_GLOSSES", "Signals", "compute_signals", "edit_ratio", "char_overlap",
           "token_overlap", "is_abbreviation", "opposite_prefix", "domain_text"]

FEATURES = (
    "sim_query", "sim_domain", "domain_fit", "sim_expected_max", "sim_expected_mean", "sim_context",
    "token_overlap", "spelled_alike", "lookalike", "short_form_of", "expansion_of", "expansion_sim",
    "short_form", "opposite_prefix", "modified", "same_head", "other_head", "residual_sim_query", "residual_sim_domain",
    "wn_synonym_query", "wn_synonym_expected", "wn_synonym_specific", "wn_hypernym_query", "wn_hypernym_expected",
    "wn_path_query", "wn_path_expected", "wn_antonym", "wn_derived", "wn_term_known", "wn_unrelated",
    "wn_topic_in_domain", "wn_topic_elsewhere", "spelling_variant",
)
"""The combiner's inputs, in this order (the coefficients file names them too)."""

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

OPPOSITES = (("hyper", "hypo"), ("tachy", "brady"), ("over", "under"), ("macro", "micro"), ("pre", "post"),
             ("inter", "intra"), ("hyper", "hyp"), ("endo", "exo"), ("pro", "anti"), ("in", "out"),
             ("up", "down"), ("inc", "dec"), ("max", "min"), ("poly", "oligo"), ("hetero", "homo"),
             ("ante", "post"), ("supra", "infra"), ("super", "sub"), ("plaintiff", "defendant"),
             ("", "un"), ("", "non"), ("", "dis"), ("", "anti"), ("", "in"), ("", "a"), ("ab", "ad"))
_TOKEN = re.compile(r"[^\W_]+")


@lru_cache(maxsize=1 << 16)
def _words(text: str) -> tuple[str, ...]:
    """The word tokens of a text (memoised: a query and its expected terms recur per candidate)."""
    return tuple(_TOKEN.findall(text))


def domain_text(domain: str) -> str:
    return DOMAIN_GLOSSES.get(normalize_term(domain), domain)


def edit_ratio(a: str, b: str, floor: float = 0.0) -> float:
    """1 − Levenshtein distance / longer length (1.0: equal); 0.0 as soon as it is certain to
    fall below `floor`."""
    if a == b:
        return 1.0
    if not a or not b:
        return 0.0
    if len(a) > len(b):
        a, b = b, a
    limit = (1.0 - floor) * len(b)  # a larger distance is below the floor
    if floor and len(b) - sum(min(a.count(c), b.count(c)) for c in set(a)) > limit:
        return 0.0  # every letter not shared costs an edit
    previous = list(range(len(a) + 1))
    for j, cb in enumerate(b, 1):
        current = [j]
        left = j
        for i, ca in enumerate(a):
            left = min(previous[i + 1] + 1, left + 1, previous[i] + (ca != cb))
            current.append(left)
        if floor and min(current) > limit:
            return 0.0
        previous = current
    ratio = 1.0 - previous[-1] / len(b)
    return ratio if ratio >= floor else 0.0


def _grams(text: str, n: int = 3) -> set[str]:
    padded = f" {text} "
    return {padded[i:i + n] for i in range(max(1, len(padded) - n + 1))}


def char_overlap(a: str, b: str) -> float:
    """Dice coefficient of character trigrams (space-padded)."""
    ga, gb = _grams(a), _grams(b)
    return 2 * len(ga & gb) / (len(ga) + len(gb))


def token_overlap(a: str, b: str) -> float:
    """Jaccard overlap of word tokens."""
    ta, tb = set(_words(a)), set(_words(b))
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


_STOPWORDS = frozenset("of for and the to in on a an with by at or".split())


def is_abbreviation(short: str, long: str) -> bool:
    """`short` is an acronym of `long` or of a run of its words ('gord' of 'gastro-oesophageal
    reflux disease', 'poa' of 'power of attorney for health care', stop words optional), or a
    truncation of its one word ('approx')."""
    compact = "".join(_words(short))
    words = _words(long)
    if len(compact) < 2 or not words or " " in short.strip() or compact == "".join(words):
        return False
    if len(words) == 1:
        return len(compact) >= 3 and words[0].startswith(compact) and len(words[0]) > len(compact)
    for start in range(len(words)):
        for stop in range(start + 2, len(words) + 1):
            run = words[start:stop]
            if compact in ("".join(w[0] for w in run), "".join(w[0] for w in run if w not in _STOPWORDS)):
                return True
    return False


_OPPOSITE_PAIRS = frozenset(pair for p, q in OPPOSITES for pair in ((p, q), (q, p)))


def opposite_prefix(a: str, b: str) -> str | None:
    """The pair of opposite prefixes that turns one word of `a` into one of `b` ('hyper/hypo'),
    else None. The words must keep a common stem of at least 3 letters."""
    for wa in _words(a):
        for wb in _words(b):
            if wa == wb:
                continue
            stem = 0  # the common suffix
            while stem < min(len(wa), len(wb)) and wa[-1 - stem] == wb[-1 - stem]:
                stem += 1
            for k in range(stem, 2, -1):
                x, y = wa[:len(wa) - k], wb[:len(wb) - k]
                if (x, y) in _OPPOSITE_PAIRS:
                    return f"{x or '-'}/{y or '-'}"
    return None


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


def _lexical(term: str, query: str, refs: list[str], out: dict[str, float], where: dict[str, str]) -> None:
    out["token_overlap"] = out["spelled_alike"] = out["spelling_variant"] = 0.0
    compact = "".join(_words(term))
    for ref in refs:
        ref_compact = "".join(_words(ref))
        if compact == ref_compact or (min(len(compact), len(ref_compact)) >= max(6, 0.9 * max(len(compact), len(ref_compact)))
                                      and edit_ratio(compact, ref_compact, floor=0.9) >= 0.9):
            out["spelling_variant"], where["spelling_variant"] = 1.0, ref  # 'bed sore', 'moisturiser'
    shares = any(token_overlap(term, ref) for ref in refs)
    for ref in refs:
        overlap = token_overlap(term, ref)
        if overlap > out["token_overlap"]:
            out["token_overlap"], where["token_overlap"] = overlap, ref
        # spelled alike without a shared word: 'torte' for 'tort', 'anomia' for 'anaemia'
        alike = 0.0
        if not shares and not out["spelling_variant"]:
            alike = char_overlap(term, ref)
            if min(len(term), len(ref)) >= 0.6 * max(len(term), len(ref)):  # else the edit ratio is < 0.6
                alike = max(alike, edit_ratio(term, ref, floor=0.6))
        alike = alike if alike >= 0.6 else 0.0  # below that, any two words
        if alike > out["spelled_alike"]:
            out["spelled_alike"], where["spelled_alike"] = alike, ref
        if "short_form_of" not in where and is_abbreviation(term, ref):
            where["short_form_of"] = ref
        if "expansion_of" not in where and is_abbreviation(ref, term):
            where["expansion_of"] = ref
        if "opposite_prefix" not in where and opposite_prefix(term, ref):
            where["opposite_prefix"] = ref
    out["short_form_of"] = float("short_form_of" in where)
    out["expansion_of"] = float("expansion_of" in where)
    out["expansion_sim"] = out["expansion_of"] * out["sim_query"]
    out["opposite_prefix"] = float("opposite_prefix" in where)
    out["short_form"] = float(len(term.replace(".", "")) <= 5 and " " not in term)


def residual(term: str, refs: list[str]) -> str | None:
    """The words a compound adds to the words it shares with a reference ('basketball' of
    'basketball court' for 'court'); None when it shares none or adds none."""
    words = _words(term)
    known = {w for r in refs for w in _words(r)}
    extra = [w for w in words if w not in known]
    return " ".join(extra) if extra and len(extra) < len(words) else None


_PREPOSITIONS = frozenset("of in for on to with from under".split())


def head_word(text: str) -> str | None:
    """The head of a noun phrase: its last word, or the word before its first preposition
    ('chest' of 'chest of drawers'); a plural 's' dropped."""
    words = list(_words(text))
    for i, w in enumerate(words):
        if w in _PREPOSITIONS and i > 0:
            words = words[:i]
            break
    if not words:
        return None
    head = words[-1]
    return head[:-1] if len(head) > 3 and head.endswith("s") and not head.endswith("ss") else head


DOMAIN_TOPICS = {"medical": "n06045562", "legal": "n08441203", "ecommerce": "n01090446", "e-commerce": "n01090446"}
"""WordNet topic of each domain label: medical science, law, commerce (and their hyponyms)."""


def _wordnet(term: str, query: str, refs: list[str], domain: str | None, entries: dict,
             out: dict[str, float], where: dict[str, str]) -> None:
    mine = entries[term]
    for name in ("wn_synonym_query", "wn_synonym_expected", "wn_synonym_specific", "wn_hypernym_query",
                 "wn_hypernym_expected", "wn_path_query", "wn_path_expected", "wn_antonym", "wn_derived"):
        out[name] = 0.0
    ref_known = False
    for ref in refs:
        other = entries[ref]
        ref_known |= other.known
        rel = relate(mine, other)
        side = "query" if ref == query else "expected"
        hits = ((f"wn_synonym_{side}", rel.synonym), (f"wn_hypernym_{side}", rel.broader is not None or rel.narrower is not None),
                ("wn_antonym", rel.antonym), ("wn_derived", rel.derived))
        for name, hit in hits:
            if hit and not out[name]:
                out[name], where[name] = 1.0, ref
        if rel.synonym and 1 / len(other.synsets) > out["wn_synonym_specific"]:
            out["wn_synonym_specific"], where["wn_synonym_specific"] = 1 / len(other.synsets), ref
        if rel.path_similarity > out[f"wn_path_{side}"]:
            out[f"wn_path_{side}"], where[f"wn_path_{side}"] = rel.path_similarity, ref
    out["wn_term_known"] = float(mine.known)
    related = any(out[n] for n in ("wn_synonym_query", "wn_synonym_expected", "wn_hypernym_query",
                                   "wn_hypernym_expected", "wn_derived", "wn_antonym"))
    out["wn_unrelated"] = float(mine.known and ref_known and not related
                                and max(out["wn_path_query"], out["wn_path_expected"]) < 0.25)
    root = DOMAIN_TOPICS.get(normalize_term(domain or ""))
    shared = any(mine.topics & entries[r].topics for r in refs)
    out["wn_topic_in_domain"] = float(shared or (root is not None and root in mine.topic_closure))
    out["wn_topic_elsewhere"] = float(bool(mine.topics) and not out["wn_topic_in_domain"])


def context_text(candidate) -> str:
    """The query with its expected terms, embedded as one text: the sense the golden set means."""
    return "; ".join([candidate.query, *candidate.expected_terms])


def compute_signals(candidates: Sequence, embedder, lexicon: CachedLexicon,
                    domain_context: str | None = None) -> list[Signals]:
    """Signals of each candidate (DriftCandidate), in order. One lexicon lookup and one
    `embedder.embed` call for all the texts involved."""
    labels = [domain_context or c.domain for c in candidates]
    domains = [domain_text(d) if d else None for d in labels]
    prepared = []
    contexts = [context_text(c) for c in candidates]
    for c in candidates:
        term = normalize_term(c.term)
        query = normalize_term(c.query)
        refs = [r for r in dict.fromkeys([query, *(normalize_term(e) for e in c.expected_terms)]) if r != term]
        prepared.append((term, query, refs or [query], residual(term, refs or [query])))
    texts = list(dict.fromkeys([c.term for c in candidates] + [c.query for c in candidates]
                               + [d for d in domains if d] + [e for c in candidates for e in c.expected_terms]
                               + [p[3] for p in prepared if p[3]] + contexts))
    index = {t: i for i, t in enumerate(texts)}
    words = list(dict.fromkeys(w for p in prepared for w in (p[0], *p[2])))
    entries = lexicon.entries(words)  # first: a missing WordNet is said before the model loads
    vectors = embedder.embed(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    out = []
    for c, label, domain, context, (term, query, refs, rest) in zip(candidates, labels, domains, contexts, prepared):
        vec = vectors[index[c.term]]
        query_vec = vectors[index[c.query]]
        v: dict[str, float] = {"sim_query": float(vec @ query_vec), "sim_context": float(vec @ vectors[index[context]])}
        domain_vec = vectors[index[domain]] if domain else None
        if domain_vec is not None:
            v["sim_domain"] = float(vec @ domain_vec)
            v["domain_fit"] = v["sim_domain"] - float(query_vec @ domain_vec)
        else:
            v["sim_domain"], v["domain_fit"] = v["sim_query"], 0.0
        nearest = None
        if c.expected_terms:
            sims = vectors[[index[e] for e in c.expected_terms]] @ vec
            best = int(np.argmax(sims))
            nearest = c.expected_terms[best]
            v["sim_expected_max"], v["sim_expected_mean"] = float(sims[best]), float(sims.mean())
        else:
            v["sim_expected_max"] = v["sim_expected_mean"] = v["sim_query"]
        where: dict[str, str] = {"domain": label} if label else {}
        _lexical(term, query, refs, v, where)
        v["lookalike"] = v["spelled_alike"] * (1 - max(v["sim_query"], v["sim_expected_max"]))
        where["lookalike"] = where.get("spelled_alike", query)
        v["modified"] = float(rest is not None)
        heads = {head_word(r) for r in refs}
        v["same_head"] = float(rest is not None and head_word(term) in heads)
        if v["same_head"]:
            where["same_head"] = next(r for r in refs if head_word(r) == head_word(term))
        v["other_head"] = float(rest is not None and head_word(term) not in heads)
        if rest is not None:
            rest_vec = vectors[index[rest]]
            v["residual_sim_query"] = float(rest_vec @ query_vec)
            v["residual_sim_domain"] = float(rest_vec @ domain_vec) if domain_vec is not None else v["residual_sim_query"]
            where["modified"] = rest
        else:
            v["residual_sim_query"], v["residual_sim_domain"] = v["sim_query"], v["sim_domain"]
        _wordnet(term, query, refs, label, entries, v, where)
        out.append(Signals(np.array([v[name] for name in FEATURES]), nearest, where, v))
    return out
