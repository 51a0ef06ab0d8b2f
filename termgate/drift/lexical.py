"""String-level signals of the drift combiner: word overlap, spelling, abbreviations, opposite
affixes and the head of a phrase (termgate.drift.signals weighs them with the rest)."""

from __future__ import annotations

from functools import lru_cache

from rapidfuzz.distance import Levenshtein

from .lexicon import WORD, phrase_head

__all__ = ["OPPOSITES", "OPPOSITE_SUFFIXES", "NEGATIONS", "tokens", "edit_ratio", "char_overlap", "token_overlap",
           "is_abbreviation", "opposite_prefix", "differing_words", "residual", "head_word"]

OPPOSITES = (("hyper", "hypo"), ("tachy", "brady"), ("over", "under"), ("macro", "micro"), ("pre", "post"),
             ("inter", "intra"), ("hyper", "hyp"), ("endo", "exo"), ("pro", "anti"), ("in", "out"),
             ("up", "down"), ("inc", "dec"), ("max", "min"), ("poly", "oligo"), ("hetero", "homo"),
             ("ante", "post"), ("supra", "infra"), ("super", "sub"), ("plaintiff", "defendant"),
             ("", "un"), ("", "non"), ("", "dis"), ("", "anti"), ("", "in"), ("", "a"), ("ab", "ad"))


@lru_cache(maxsize=1 << 16)
def tokens(text: str) -> tuple[str, ...]:
    """The word tokens of a text (memoised: a query and its expected terms recur per candidate)."""
    return tuple(WORD.findall(text))


def edit_ratio(a: str, b: str, floor: float = 0.0) -> float:
    """1 − Levenshtein distance / longer length (1.0: equal); 0.0 when it falls below `floor`.
    The distance is rapidfuzz's, which stops once more edits than the floor allows are certain."""
    if a == b:
        return 1.0
    longer = max(len(a), len(b))
    allowed = int((1.0 - floor) * longer + 1e-9)  # 'bifocals'/'binoculars': 4 edits of 10 reach 0.6
    ratio = 1.0 - Levenshtein.distance(a, b, score_cutoff=allowed) / longer
    return ratio if ratio >= floor else 0.0


@lru_cache(maxsize=1 << 16)
def _grams(text: str, n: int = 3) -> frozenset[str]:
    padded = f" {text} "
    return frozenset(padded[i:i + n] for i in range(max(1, len(padded) - n + 1)))


def char_overlap(a: str, b: str) -> float:
    """Dice coefficient of character trigrams (space-padded)."""
    ga, gb = _grams(a), _grams(b)
    return 2 * len(ga & gb) / (len(ga) + len(gb))


def token_overlap(a: str, b: str) -> float:
    """Jaccard overlap of word tokens."""
    ta, tb = _token_set(a), _token_set(b)
    return len(ta & tb) / len(ta | tb) if ta | tb else 0.0


@lru_cache(maxsize=1 << 16)
def _token_set(text: str) -> frozenset[str]:
    return frozenset(tokens(text))


_STOPWORDS = frozenset("of for and the to in on a an with by at or".split())


def is_abbreviation(short: str, long: str) -> bool:
    """`short` is an acronym of `long` or of a run of its words ('gord' of 'gastro-oesophageal
    reflux disease', 'poa' of 'power of attorney for health care', stop words optional), or a
    truncation of its one word ('approx')."""
    if " " in short.strip():
        return False
    compact = "".join(tokens(short))
    words = tokens(long)
    if len(compact) < 2 or not words or compact == "".join(words):
        return False
    if len(words) == 1:
        return len(compact) >= 3 and words[0].startswith(compact) and len(words[0]) > len(compact)
    if len(compact) > len(words) or compact[0] not in {w[0] for w in words}:
        return False  # an acronym has one letter per word at most, and starts with one
    for start in range(len(words)):
        for stop in range(start + 2, len(words) + 1):
            run = words[start:stop]
            if compact in ("".join(w[0] for w in run), "".join(w[0] for w in run if w not in _STOPWORDS)):
                return True
    return False


OPPOSITE_SUFFIXES = (("or", "ee"), ("er", "ee"))
"""The two sides of a legal relation: lessor/lessee, employer/employee, mortgagor/mortgagee."""
_OPPOSITE_PAIRS = frozenset(pair for p, q in OPPOSITES for pair in ((p, q), (q, p)))
_SUFFIX_PAIRS = frozenset(pair for p, q in OPPOSITE_SUFFIXES for pair in ((p, q), (q, p)))


def opposite_prefix(a: str, b: str) -> str | None:
    """The pair of opposite prefixes that turns one word of `a` into one of `b` ('hyper/hypo'),
    or of opposite suffixes ('-or/-ee'), else None. The words must keep a common stem of at
    least 3 letters (4 for suffixes)."""
    for wa in tokens(a):
        for wb in tokens(b):
            if wa != wb and (wa[-1] == wb[-1] or wa[:4] == wb[:4]):
                found = _opposite_words(wa, wb)
                if found:
                    return found
    return None


@lru_cache(maxsize=1 << 16)
def _opposite_words(wa: str, wb: str) -> str | None:
    """`opposite_prefix` of two words (memoised: words recur across a run's terms)."""
    stem = 0  # the common suffix
    while stem < min(len(wa), len(wb)) and wa[-1 - stem] == wb[-1 - stem]:
        stem += 1
    for k in range(stem, 2, -1):
        x, y = wa[:len(wa) - k], wb[:len(wb) - k]
        if (x, y) in _OPPOSITE_PAIRS:
            return f"{x or '-'}/{y or '-'}"
    stem = 0  # the common prefix
    while stem < min(len(wa), len(wb)) and wa[stem] == wb[stem]:
        stem += 1
    for k in range(stem, 3, -1):  # 'employe|r', 'employe|e': the stem is 'employ'
        if (wa[k:], wb[k:]) in _SUFFIX_PAIRS:
            return f"-{wa[k:]}/-{wb[k:]}"
    return None


NEGATIONS = frozenset("not no non without un".split())


def differing_words(a: str, b: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(words only in `a`, words only in `b`) when the two share a word, else None."""
    wa, wb = tokens(a), tokens(b)
    if not set(wa) & set(wb):
        return None
    return tuple(w for w in wa if w not in wb), tuple(w for w in wb if w not in wa)


def residual(term: str, refs: list[str]) -> str | None:
    """The words a compound adds to the words it shares with a reference ('basketball' of
    'basketball court' for 'court'); None when it shares none or adds none."""
    words = tokens(term)
    known = {w for r in refs for w in tokens(r)}
    extra = [w for w in words if w not in known]
    return " ".join(extra) if extra and len(extra) < len(words) else None


@lru_cache(maxsize=1 << 16)
def head_word(text: str) -> str | None:
    """The head of a noun phrase (`lexicon.phrase_head`: its last word, or the word before
    its first preposition, 'chest' of 'chest of drawers'), a plural 's' dropped."""
    words = tokens(text)
    if not words:
        return None
    head = phrase_head(words) or words[-1]
    return head[:-1] if len(head) > 3 and head.endswith("s") and not head.endswith("ss") else head
