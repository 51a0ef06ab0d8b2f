"""WordNet 3.0 relations for the drift judge, read from Debian's `wordnet-base` files.

The data files are searched in place (the index files are sorted, so a lemma is a binary
search over a memory map; a synset is one read at its byte offset): nothing is loaded up
front, and a run whose terms are all in the store's lexicon cache never opens WordNet.

Each term's cache entry (`LexiconEntry`, JSON in the store under `SOURCE`) holds enough to
relate two terms with no WordNet at hand: its synset ids, its hypernym closure with the
shortest distance to each ancestor (path similarity), the synsets of its antonyms and of
its derivationally related words.

WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. Used under the
WordNet 3.0 licence: see data/drift/WORDNET_LICENSE and docs/drift.md.
"""

from __future__ import annotations

import json
import mmap
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import orjson

from ..environment import setting
from ..errors import UsageError

__all__ = ["SOURCE", "DEFINITIONS", "WORDNET_ROOT", "LexiconEntry", "closure_path", "Relation", "WordNet", "LexiconCache", "CachedLexicon",
           "relate", "merged_closure", "depth_similarity", "intended_senses", "phrase_head", "WORD", "PREPOSITIONS", "kind_of", "gloss_stem", "wordnet_available"]

SOURCE = "wordnet-3.0/v4"
"""Names the lexicon and the entry format in the cache: bump it when `LexiconEntry` changes."""
DEFINITIONS = "wordnet-3.0/definitions/v1"
"""The cache source of synset definitions (keyed by synset id), for reasons that name a sense."""
WORDNET_ROOT = "/usr/share/wordnet"
_POS = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_HYPERNYM = {"@", "@i"}
_SUFFIXES = {  # WordNet's morphy detachment rules
    "n": [("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"), ("men", "man"),
          ("ies", "y")],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"), ("ing", "")],
    "a": [("er", ""), ("est", ""), ("er", "e"), ("est", "e")],
    "r": [],
}


_GLOSS_WORD = re.compile(r"[^\W\d_]+")
WORD = re.compile(r"[^\W_]+")
"""A word of a term: letters and digits ('gastro-oesophageal' is two)."""
PREPOSITIONS = frozenset("of in for on to with from under".split())


def phrase_head(words: Sequence[str]) -> str | None:
    """The head of a noun phrase of several words: its last word, or the word before its
    first preposition ('chest' of 'chest of drawers'); None for one word."""
    if len(words) < 2:
        return None
    for i, w in enumerate(words):
        if w in PREPOSITIONS and i > 0:
            return words[i - 1]
    return words[-1]


WORDNET_FILES = tuple(f"{kind}.{pos}" for pos in _POS.values() for kind in ("index", "data")) + tuple(
    f"{pos}.exc" for pos in _POS.values())
"""Every file `WordNet` reads: a folder missing one is not WordNet (a judge would fail mid-run)."""


def wordnet_available(root: str | Path | None = None) -> bool:
    """True when all of WordNet's data files are where `WordNet` looks for them."""
    folder = Path(root or setting("WORDNET", WORDNET_ROOT))
    return all((folder / name).is_file() for name in WORDNET_FILES)


@dataclass(frozen=True, slots=True)
class LexiconEntry:
    """What WordNet says about one term (empty synsets: not in WordNet; then a phrase's
    closure and gloss are those of its head, see `kind_of`)."""

    synsets: tuple[str, ...]
    """Synset ids, e.g. 'n14103510'."""
    closure: dict[str, int]
    """Every hypernym of every synset (the synsets themselves at 0) -> shortest distance."""
    antonyms: frozenset[str]
    """Synsets holding an antonym of the term."""
    derived: frozenset[str]
    """Synsets of derivationally related words and adjectives' similar-to clusters."""
    topics: frozenset[str] = frozenset()
    """Topic domains (law, medicine, music...) of the synsets and their hypernyms."""
    topic_closure: frozenset[str] = frozenset()
    """The topics and every hypernym of them (law, medical science, ...)."""
    gloss: frozenset[str] = frozenset()
    """Stems (`gloss_stem`) of the content words of its senses' definitions."""
    senses: dict[str, dict[str, int]] = field(default_factory=dict, compare=False)
    """Synset id -> that one sense's hypernym closure, when the term has several senses
    (empty: every sense shares `closure`)."""
    opposed: frozenset[str] = frozenset()
    """Synsets opposed to a sense beyond its direct antonyms: the antonyms of the adjectives
    it is similar to (and their similar satellites), and the words derived from the antonyms
    of the words it is derived from (acquittal: acquit ! convict + conviction)."""
    attributes: frozenset[str] = frozenset()
    """The attribute nouns of an adjective ('benign' and 'malignant': malignancy), or the
    adjectives of an attribute noun."""

    @property
    def known(self) -> bool:
        return bool(self.synsets)

    def sense_closure(self, sid: str) -> dict[str, int]:
        return self.senses.get(sid) or self.closure

    def to_json(self) -> str:
        body = {"s": list(self.synsets), "h": self.closure, "a": sorted(self.antonyms), "d": sorted(self.derived),
                "t": sorted(self.topics), "tc": sorted(self.topic_closure)}
        if self.gloss:
            body["g"] = sorted(self.gloss)
        if self.senses:
            body["hs"] = self.senses
        if self.opposed:
            body["o"] = sorted(self.opposed)
        if self.attributes:
            body["at"] = sorted(self.attributes)
        return json.dumps(body, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> LexiconEntry:
        raw = orjson.loads(text)
        return cls(tuple(raw["s"]), raw["h"], frozenset(raw["a"]), frozenset(raw["d"]), frozenset(raw["t"]),
                   frozenset(raw["tc"]), frozenset(raw.get("g", ())), raw.get("hs") or {},
                   frozenset(raw.get("o", ())), frozenset(raw.get("at", ())))


EMPTY = LexiconEntry((), {}, frozenset(), frozenset())

GLOSS_STOPWORDS = frozenset("""a an the of or and to in on at by for from with without into onto as is are be been being
that which who whom whose this these those it its their his her one ones some any all each such other another than
then more most less least very often usually especially typically something someone somebody thing things used use
using made make makes having has have had not no can may might will would should being e g etc kind type form part
act state process quality person people way also either neither both about between within like than""".split())
"""Words of a definition that say nothing of its topic."""


def gloss_stem(word: str) -> str:
    """A word reduced to compare definitions and terms: its first five letters ('urination'
    and 'urinary' alike), shorter words whole."""
    return word[:5]


@dataclass(frozen=True, slots=True)
class Relation:
    """How WordNet relates two terms."""

    synonym: bool
    """They share a synset."""
    broader: int | None
    """Levels from the first term up to the second (the second is a hypernym), else None."""
    narrower: int | None
    """Levels from the second up to the first (the second is a hyponym), else None."""
    antonym: bool
    """One holds an antonym of the other."""
    derived: bool
    """Derivationally related (diagnose / diagnosis) or similar adjectives."""
    path_similarity: float
    """1 / (1 + shortest hypernym path between any two of their synsets); 0 when none."""
    depth_similarity: float = 0.0
    """`depth_similarity` of the two closures compared."""

    @property
    def any(self) -> bool:
        return self.synonym or self.broader is not None or self.narrower is not None or self.antonym or self.derived


_NONE = Relation(False, None, None, False, False, 0.0)


def _closeness(a: dict[str, int], b: dict[str, int]) -> tuple[float, float]:
    """(path similarity, depth similarity) of two hypernym closures, in one pass over their
    common ancestors: 1 / (1 + the shortest path through one), and `depth_similarity`."""
    common = a.keys() & b.keys() if a and b else ()
    if not common:
        return 0.0, 0.0
    da, db = max(a.values()), max(b.values())
    shortest, deepest = 1 << 30, -(1 << 30)
    for s in common:
        x, y = a[s], b[s]
        if x + y < shortest:
            shortest = x + y
        if deepest < da + db - x - y:
            deepest = da + db - x - y
    return 1.0 / (1 + shortest), deepest / (da + db + 2)


def closure_path(a: dict[str, int], b: dict[str, int]) -> float:
    """1 / (1 + the shortest path between two hypernym closures through a common ancestor)."""
    return _closeness(a, b)[0]


def depth_similarity(a: dict[str, int], b: dict[str, int]) -> float:
    """Wu-Palmer-like: 2·depth(common ancestor) / (depth(a) + depth(b)), the deepest common
    ancestor; depths counted up the closures (poncho and raincoat meet at 'overgarment', deep
    in the tree, though four edges apart). 0 when they share none."""
    return _closeness(a, b)[1]


def relate(a: LexiconEntry, b: LexiconEntry, senses: Sequence[str] | None = None,
           senses_closure: dict[str, int] | None = None) -> Relation:
    """The relation of term `a` to term `b`, from their cache entries alone; with `senses`,
    to those senses of `b` only (see `intended_senses`). An entry with a closure but no
    synsets (`kind_of`) relates through its closure."""
    if not a.closure or not b.closure:
        return _NONE
    b_set = set(b.synsets if senses is None else senses)
    if senses_closure is not None:
        b_closure = senses_closure  # the caller's merged_closure(b, senses)
    else:
        b_closure = b.closure if senses is None or len(b_set) == len(b.synsets) else merged_closure(b, b_set)
    a_closure, a_synsets = a.closure, a.synsets
    up = min((a_closure[s] for s in b_set if a_closure.get(s, 0) > 0), default=None)
    down = min((b_closure[s] for s in a_synsets if b_closure.get(s, 0) > 0), default=None)
    path, depth = _closeness(a_closure, b_closure)
    return Relation(not b_set.isdisjoint(a_synsets), up, down,
                    not a.antonyms.isdisjoint(b_set) or not b.antonyms.isdisjoint(a_synsets),
                    not a.derived.isdisjoint(b_set) or not b.derived.isdisjoint(a_synsets), path, depth)


def merged_closure(entry: LexiconEntry, senses) -> dict[str, int]:
    """The hypernym closure of some of the entry's senses."""
    merged: dict[str, int] = {}
    for sid in senses:
        for anc, d in entry.sense_closure(sid).items():
            if d < merged.get(anc, 1 << 30):
                merged[anc] = d
    return merged


def intended_senses(entry: LexiconEntry, others: Sequence[LexiconEntry]) -> tuple[str, ...]:
    """The senses of `entry` nearest (by path similarity) to any of `others`: the sense a
    query means is the one its expected terms share ('court' beside 'tribunal': the court of
    law, not the tennis court). Every sense when it has one, or none is nearer than another."""
    if len(entry.synsets) < 2 or not entry.senses:
        return entry.synsets
    scores = {sid: max((closure_path(entry.sense_closure(sid), o.closure) for o in others if o.closure), default=0.0)
              for sid in entry.synsets}
    best = max(scores.values())
    return entry.synsets if best <= 0 else tuple(s for s in entry.synsets if scores[s] == best)


def kind_of(head: LexiconEntry, modifiers: Sequence[LexiconEntry] = ()) -> LexiconEntry:
    """The entry of a phrase WordNet lacks, read as a kind of its head word ('jazz music' as a
    kind of 'music'): no synsets of its own, one level below the head's senses nearest its
    other words (`intended_senses`: 'wine glasses' below the drinking glass)."""
    if not head.known:
        return EMPTY
    senses = intended_senses(head, [m for m in modifiers if m.known])
    closure = head.closure if len(senses) == len(head.synsets) else merged_closure(head, set(senses))
    return LexiconEntry((), {s: d + 1 for s, d in closure.items()}, frozenset(), head.derived,
                        head.topics, head.topic_closure, head.gloss)


class WordNet:
    """WordNet 3.0's files searched in place (`root`, default /usr/share/wordnet)."""

    def __init__(self, root: str | Path | None = None):
        self.root = Path(root or setting("WORDNET", WORDNET_ROOT))
        if not wordnet_available(self.root):
            raise UsageError(f"WordNet not found in {self.root}: the drift judge needs Debian's wordnet-base "
                             "(apt-get install wordnet-base), or set TERMGATE_WORDNET to its folder")
        self._maps: dict[str, mmap.mmap] = {}
        self._exceptions: dict[str, dict[str, list[str]]] = {}
        self._synsets: dict[str, tuple] = {}
        self._entries: dict[str, LexiconEntry] = {}

    def _map(self, name: str) -> mmap.mmap:
        if name not in self._maps:
            with (self.root / name).open("rb") as handle:
                self._maps[name] = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        return self._maps[name]

    def _index(self, pos: str, lemma: str) -> list[str]:
        """Synset ids of `lemma` (underscored, lower case) as part of speech `pos`."""
        mm, key = self._map(f"index.{_POS[pos]}"), lemma.encode("utf-8")
        lo, hi = 0, len(mm)
        while lo < hi:
            start = mm.rfind(b"\n", 0, (lo + hi) // 2) + 1
            end = mm.find(b"\n", start)
            end = len(mm) if end < 0 else end
            line = mm[start:end]
            word = b"" if line.startswith(b"  ") else line.split(b" ", 1)[0]
            if word == key:
                fields = line.split()
                count, pointers = int(fields[2]), int(fields[3])
                return [pos + o.decode() for o in fields[6 + pointers:6 + pointers + count]]
            lo, hi = (end + 1, hi) if word < key else (lo, start)
        return []

    def _morphy(self, pos: str, word: str) -> list[str]:
        if pos not in self._exceptions:
            table: dict[str, list[str]] = {}
            for line in (self.root / f"{_POS[pos]}.exc").read_text(encoding="utf-8").splitlines():
                inflected, *bases = line.split()
                table[inflected] = bases
            self._exceptions[pos] = table
        forms = [word, *self._exceptions[pos].get(word, [])]
        forms += [word[:-len(old)] + new for old, new in _SUFFIXES[pos] if word.endswith(old) and len(word) > len(old) + 1]
        return list(dict.fromkeys(forms))

    def synset(self, sid: str) -> tuple[list[tuple[str, str, int]], str, str]:
        """(pointers as (symbol, target synset id, source word number), lexicographer file
        number, definition)."""
        if sid not in self._synsets:
            mm, offset = self._map(f"data.{_POS[sid[0]]}"), int(sid[1:])
            head, _, gloss = mm[offset:mm.find(b"\n", offset)].decode("utf-8").partition(" | ")
            fields = head.split()
            words = int(fields[3], 16)
            at = 4 + 2 * words
            count = int(fields[at])
            pointers = []
            for i in range(count):
                symbol, target, pos, st = fields[at + 1 + 4 * i:at + 5 + 4 * i]
                pointers.append((symbol, ("a" if pos == "s" else pos) + target, int(st[:2], 16)))
            self._synsets[sid] = (pointers, fields[1], gloss.split(";", 1)[0])
        return self._synsets[sid]

    def lookup(self, term: str) -> LexiconEntry:
        """The term's entry; `term` is already normalised (SPEC §2 rule 1)."""
        if term not in self._entries:  # a phrase's words recur in other phrases
            self._entries[term] = self._lookup(term)
        return self._entries[term]

    def _lookup(self, term: str) -> LexiconEntry:
        lemma = "_".join(term.split())
        synsets: list[str] = []
        for pos in _POS:
            head, _, last = lemma.rpartition("_")
            for form in self._morphy(pos, last):
                found = self._index(pos, f"{head}_{form}" if head else form)
                if found:
                    synsets += found
                    break
        synsets = list(dict.fromkeys(synsets))
        if not synsets:
            words = WORD.findall(term)
            head = phrase_head(words)
            if head is None:
                return EMPTY
            return kind_of(self.lookup(head), [self.lookup(w) for w in words if w != head and w not in PREPOSITIONS])
        closure = self._closure(synsets)
        senses = {sid: self._closure([sid]) for sid in synsets} if len(synsets) > 1 else {}
        topics = {t for sid in closure for symbol, t, _ in self.synset(sid)[0] if symbol == ";c"}
        antonyms, derived, attributes = set(), set(), set()
        similar, derived_from = set(), set()
        for sid in synsets:
            for symbol, target, _ in self.synset(sid)[0]:
                if symbol == "!":
                    antonyms.add(target)
                elif symbol in ("+", "&", "\\", "^"):
                    derived.add(target)
                    (similar if symbol == "&" else derived_from).add(target)
                elif symbol == "=":
                    attributes.add(target)
        opposed = self._opposed(similar, derived_from) - antonyms
        gloss = {gloss_stem(w) for sid in synsets for w in _GLOSS_WORD.findall(self.synset(sid)[2].lower())
                 if len(w) > 2 and w not in GLOSS_STOPWORDS}
        return LexiconEntry(tuple(synsets), closure, frozenset(antonyms), frozenset(derived), frozenset(topics),
                            frozenset(self._closure(sorted(topics))), frozenset(gloss), senses,
                            frozenset(opposed), frozenset(attributes))

    def _opposed(self, similar: set[str], derived_from: set[str]) -> set[str]:
        """Opposites one step beyond the direct antonyms (`LexiconEntry.opposed`)."""
        out: set[str] = set()
        for sid in similar:  # a satellite's head adjective, and its antonym's satellites
            for symbol, target, _ in self.synset(sid)[0]:
                if symbol == "!":
                    out.add(target)
                    out.update(t for s, t, _ in self.synset(target)[0] if s == "&")
        for sid in sorted(derived_from)[:12]:  # a derived word's antonym, and what derives from it
            for symbol, target, _ in self.synset(sid)[0]:
                if symbol == "!":
                    out.add(target)
                    out.update(t for s, t, _ in self.synset(target)[0] if s in ("+", "\\"))
        return out

    def definition(self, sid: str) -> str:
        """A synset's definition (its gloss up to the first ';')."""
        return self.synset(sid)[2].strip()

    def _closure(self, synsets: Sequence[str]) -> dict[str, int]:
        """Every hypernym (and instance hypernym) of `synsets`, themselves at 0 -> shortest distance."""
        closure: dict[str, int] = {}
        frontier = {s: 0 for s in synsets}
        while frontier:
            closure.update(frontier)
            nxt: dict[str, int] = {}
            for sid, dist in frontier.items():
                for symbol, target, _ in self.synset(sid)[0]:
                    if symbol in _HYPERNYM and target not in closure:
                        nxt[target] = min(nxt.get(target, dist + 1), dist + 1)
            frontier = nxt
        return closure


class LexiconCache(Protocol):
    """Where lexicon entries outlive a run (the store's lexicon cache, termgate.store.StoredLexicon)."""

    def load(self, source: str, terms: list[str]) -> dict[str, str]:
        """Cached JSON entries of `terms` (absent ones are missing)."""

    def save(self, source: str, entries: dict[str, str]) -> None:
        """Keep these entries."""


class CachedLexicon:
    """WordNet behind a cache: WordNet is opened only for terms the cache lacks, and terms
    WordNet does not know are cached too, so a warm rerun never opens it.

    `lookups` counts the terms looked up in WordNet itself.
    """

    def __init__(self, cache: LexiconCache | None = None, wordnet=None, source: str = SOURCE):
        self.cache = cache
        self.source = source
        self._wordnet = wordnet
        self.memory: dict[str, LexiconEntry] = {}
        self._definitions: dict[str, str] = {}
        self.lookups = 0

    @property
    def wordnet(self) -> WordNet:
        if self._wordnet is None:
            self._wordnet = WordNet()
        return self._wordnet

    def entries(self, terms: Sequence[str]) -> dict[str, LexiconEntry]:
        missing = list(dict.fromkeys(t for t in terms if t not in self.memory))
        if missing and self.cache is not None:
            for term, text in self.cache.load(self.source, missing).items():
                self.memory[term] = LexiconEntry.from_json(text)
            missing = [t for t in missing if t not in self.memory]
        if missing:
            found = {t: self.wordnet.lookup(t) for t in missing}
            self.lookups += len(found)
            self.memory.update(found)
            if self.cache is not None:
                self.cache.save(self.source, {t: e.to_json() for t, e in found.items()})
        return {t: self.memory[t] for t in terms}

    def definitions(self, synsets: Sequence[str]) -> dict[str, str]:
        """Definitions of synsets, cached like the entries (under `DEFINITIONS`): only the few
        terms whose reason names a sense ask for them."""
        missing = [s for s in dict.fromkeys(synsets) if s not in self._definitions]
        if missing and self.cache is not None:
            for sid, text in self.cache.load(DEFINITIONS, missing).items():
                self._definitions[sid] = orjson.loads(text)
            missing = [s for s in missing if s not in self._definitions]
        if missing:
            found = {s: self.wordnet.definition(s) for s in missing}
            self.lookups += len(found)
            self._definitions.update(found)
            if self.cache is not None:
                self.cache.save(DEFINITIONS, {s: json.dumps(d) for s, d in found.items()})
        return {s: self._definitions[s] for s in synsets}
