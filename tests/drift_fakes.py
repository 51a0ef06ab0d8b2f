"""Stand-ins for the drift combiner's tests: an embedder with chosen vectors, a lexicon cache
in memory, and a hand-made model, so signals, reasons and the band are computed by hand."""

from __future__ import annotations

import hashlib

import numpy as np

from termgate.drift.model import DriftModel
from termgate.drift.signals import FEATURES
from termgate.drift.lexicon import EMPTY, CachedLexicon, LexiconEntry

DIM = 256


def unit(*pairs: tuple[int, float]) -> np.ndarray:
    """A unit vector with the given (axis, value) components, e.g. unit((0, 0.6), (1, 0.8))."""
    v = np.zeros(DIM, dtype=np.float32)
    for axis, value in pairs:
        v[axis] = value
    return v / np.linalg.norm(v)


class FakeEmbedder:
    """Chosen vectors for chosen texts; any other text a random direction on axes ≥ 16, so
    nearly orthogonal to the chosen ones (|cosine| well under 0.3)."""

    model_id = "fake/embedder"

    def __init__(self, vectors: dict[str, np.ndarray] | None = None):
        self.vectors = dict(vectors or {})
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        rows = []
        for t in texts:
            if t not in self.vectors:
                rng = np.random.default_rng(int(hashlib.sha256(t.encode()).hexdigest()[:8], 16))
                v = np.zeros(DIM, dtype=np.float32)
                v[16:] = rng.standard_normal(DIM - 16)
                self.vectors[t] = v / np.linalg.norm(v)
            rows.append(self.vectors[t])
        return np.stack(rows) if rows else np.zeros((0, DIM), dtype=np.float32)


class MemoryLexiconCache:
    """The two methods of termgate.store.StoredLexicon, over a dict; counts its calls."""

    def __init__(self):
        self.entries: dict[tuple[str, str], str] = {}
        self.loads = self.saves = 0

    def load(self, source, terms):
        self.loads += 1
        return {t: self.entries[(source, t)] for t in terms if (source, t) in self.entries}

    def save(self, source, entries):
        self.saves += 1
        self.entries.update({(source, t): e for t, e in entries.items()})


class HandWordNet:
    """A WordNet stand-in answering hand-made entries (others: not in WordNet)."""

    def __init__(self, entries: dict[str, LexiconEntry] | None = None):
        self.entries = entries or {}
        self.asked: list[str] = []

    def lookup(self, term):
        self.asked.append(term)
        return self.entries.get(term, EMPTY)

    def definition(self, sid):
        """A synset's definition: the ones set in `definitions` (else none)."""
        return getattr(self, "definitions", {}).get(sid, "")


def hand_lexicon(entries: dict[str, LexiconEntry] | None = None) -> CachedLexicon:
    return CachedLexicon(MemoryLexiconCache(), HandWordNet(entries))


def entry(synsets, closure=None, antonyms=(), derived=()) -> LexiconEntry:
    closure = dict(closure or {})
    closure.update({s: 0 for s in synsets})
    return LexiconEntry(tuple(synsets), closure, frozenset(antonyms), frozenset(derived))


def hand_model(weights: dict[str, float], intercept: float = 0.0, cutoff: float = 0.5,
               band: tuple[float, float] = (0.4, 0.6)) -> DriftModel:
    """A combiner with no standardisation (mean 0, scale 1) and the given weights."""
    w = np.array([weights.get(f, 0.0) for f in FEATURES])
    return DriftModel(FEATURES, np.zeros(len(FEATURES)), np.ones(len(FEATURES)), w, intercept, cutoff, band)
