"""Term-drift judges behind one protocol (SPEC §2 rule 5).

Forbidden terms are checked by the scorer for every judge. A judge is asked only about
false positives that are neither forbidden nor an underweight expected term, and
answers per term: drift, not drift, or undecided (`drift=None`, listed as unjudged).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


__all__ = ["DriftCandidate", "DriftVerdict", "DriftJudge", "NoDriftJudge", "EmbeddingDriftJudge",
           "JUDGE_NAMES", "DEFAULT_EMBEDDING_THRESHOLD", "embedding_available"]

JUDGE_NAMES = ("none", "embedding", "llm")


@dataclass(frozen=True, slots=True)
class DriftCandidate:
    """A false positive to judge, with what the judge may weigh it against."""

    query_id: str
    query: str
    term: str
    domain: str | None
    intent: str | None
    expected_terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DriftVerdict:
    """drift True/False, or None when the judge could not decide; reason says why."""

    drift: bool | None
    reason: str


@runtime_checkable
class DriftJudge(Protocol):
    """Decides whether false positives are unrelated to their query and domain."""

    name: str

    def config(self) -> dict:
        """Everything that changes verdicts (model, threshold...); part of the content hash."""

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        """One verdict per candidate, in order."""


class NoDriftJudge:
    """`--drift-judge none`: only forbidden terms are drift; nothing is left unjudged."""

    name = "none"

    def config(self) -> dict:
        return {"judge": "none"}

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        return [DriftVerdict(False, "not judged (--drift-judge none)") for _ in candidates]


def embedding_available() -> bool:
    """True when the offline embedding judge can run on this installation."""
    from .embeddings import packaged_model_available
    return packaged_model_available()


DEFAULT_EMBEDDING_THRESHOLD = 0.34
"""Chosen by `evalcore drift calibrate` on data/drift_calibration.csv (docs/drift.md)."""


class EmbeddingDriftJudge:
    """Drift when a term is far from the query, from the domain context and from every
    expected term: max cosine similarity to all three below `threshold`.

    The reason names all three similarities and the nearest expected term, so a reviewer
    can see why. Needs no network; vectors are cached per (model, text).
    """

    name = "embedding"

    def __init__(self, embedder, threshold: float = DEFAULT_EMBEDDING_THRESHOLD,
                 domain_context: str | None = None):
        self.embedder = embedder
        self.threshold = threshold
        self.domain_context = domain_context

    def config(self) -> dict:
        return {"judge": "embedding", "model": self.embedder.model_id, "threshold": self.threshold,
                "domain_context": self.domain_context}

    def similarities(self, candidates: Sequence[DriftCandidate]) -> list[tuple[float, float | None, str | None, float | None]]:
        """Per candidate: (similarity to query, to domain or None, nearest expected term, its similarity)."""
        import numpy as np

        domains = [self.domain_context or c.domain for c in candidates]
        texts = list(dict.fromkeys([c.term for c in candidates] + [c.query for c in candidates]
                                   + [d for d in domains if d] + [e for c in candidates for e in c.expected_terms]))
        index = {t: i for i, t in enumerate(texts)}
        vectors = self.embedder.embed(texts)
        out = []
        for c, domain in zip(candidates, domains):
            term = vectors[index[c.term]]
            sim_query = float(term @ vectors[index[c.query]])
            sim_domain = float(term @ vectors[index[domain]]) if domain else None
            nearest, sim_expected = None, None
            if c.expected_terms:
                sims = vectors[[index[e] for e in c.expected_terms]] @ term
                best = int(np.argmax(sims))
                nearest, sim_expected = c.expected_terms[best], float(sims[best])
            out.append((sim_query, sim_domain, nearest, sim_expected))
        return out

    @staticmethod
    def relatedness(sims: tuple[float, float | None, str | None, float | None]) -> float:
        return max(v for v in (sims[0], sims[1], sims[3]) if v is not None)

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        verdicts = []
        for c, sims in zip(candidates, self.similarities(candidates)):
            related = self.relatedness(sims)
            parts = [f"query {sims[0]:.2f}"]
            if sims[1] is not None:
                parts.append(f"domain '{self.domain_context or c.domain}' {sims[1]:.2f}")
            if sims[2] is not None:
                parts.append(f"nearest expected '{sims[2]}' {sims[3]:.2f}")
            verdicts.append(DriftVerdict(related < self.threshold,
                                         f"unrelated: similarity {related:.3f} < {self.threshold:.3f} "
                                         f"({', '.join(parts)})" if related < self.threshold else
                                         f"related: similarity {related:.3f} ({', '.join(parts)})"))
        return verdicts
