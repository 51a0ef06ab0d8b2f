"""Term-drift judges behind one protocol (SPEC §2 rule 5).

Forbidden terms are checked by the scorer for every judge. A judge is asked only about
false positives that are neither forbidden nor an underweight expected term, and
answers per term: drift, not drift, or undecided (`drift=None`, listed as unjudged).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable


__all__ = ["DriftCandidate", "DriftVerdict", "DriftJudge", "NoDriftJudge", "EmbeddingDriftJudge", "hashed_config",
           "CosineDriftJudge", "HybridDriftJudge", "JUDGE_NAMES", "DEFAULT_EMBEDDING_THRESHOLD",
           "embedding_available", "review_reasons"]

JUDGE_NAMES = ("none", "embedding", "hybrid", "llm")


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
        """Everything that changes verdicts (model, threshold...), as stored and shown (any
        URL redacted); part of the content hash unless the judge has an `identity()` (the same,
        with a URL as a hash may see it: hashed_config)."""

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        """One verdict per candidate, in order."""


class NoDriftJudge:
    """`--drift-judge none`: only forbidden terms are drift; nothing is left unjudged."""

    name = "none"

    def config(self) -> dict:
        return {"judge": "none"}

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        return [DriftVerdict(False, "not judged (--drift-judge none)") for _ in candidates]


def hashed_config(judge) -> dict:
    """What the content hash covers of a judge: its `identity()` when it has one (an LLM
    endpoint's URL with only its credentials taken out, so distinct endpoints hash apart),
    else its `config()`."""
    identity = getattr(judge, "identity", None)
    return identity() if callable(identity) else judge.config()


def embedding_available() -> bool:
    """True when the offline embedding judge can run on this installation: the packaged
    model and WordNet (Debian's wordnet-base) are both installed."""
    from .embeddings import packaged_model_available
    from .lexicon import wordnet_available
    return packaged_model_available() and wordnet_available()


DEFAULT_EMBEDDING_THRESHOLD = 0.34
"""The old cosine judge's threshold, chosen on data/drift_calibration.csv (docs/drift.md)."""


class EmbeddingDriftJudge:
    """The learned combiner (docs/drift.md): embedding, lexical and WordNet signals weighed by
    a logistic regression into a drift probability. Drift at or above the cut-off, unjudged
    inside the band around it; the reason names the strongest signals in words.

    Needs no network; vectors and WordNet entries are cached per term.
    """

    name = "embedding"

    def __init__(self, embedder, model=None, lexicon=None, domain_context: str | None = None):
        from .model import load_model
        from .lexicon import CachedLexicon
        self.embedder = embedder
        self.model = model if model is not None else load_model()
        self.lexicon = lexicon if lexicon is not None else CachedLexicon()
        self.domain_context = domain_context

    def config(self) -> dict:
        m = self.model
        return {"judge": "embedding", "model": self.embedder.model_id, "combiner": "logistic-regression",
                "coefficients_sha256": m.sha256 or hashlib.sha256(m.to_json().encode()).hexdigest(), "cutoff": m.cutoff, "band": list(m.band),
                "lexicon": self.lexicon.source, "domain_context": self.domain_context}

    def probabilities(self, candidates: Sequence[DriftCandidate]):
        """(drift probability per candidate, their Signals)."""
        import numpy as np
        from .signals import compute_signals
        signals = compute_signals(candidates, self.embedder, self.lexicon, self.domain_context)
        if not signals:
            return np.zeros(0), signals
        return self.model.probability(np.stack([s.values for s in signals])), signals

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        from ..gc_pause import without_gc_pauses
        return without_gc_pauses(self._judge)(candidates)

    def _judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        import numpy as np
        from .model import describe
        probs, signals = self.probabilities(candidates)
        low, high = self.model.band
        reasons = review_reasons(signals)
        flagged, unjudged = self.model.sides(probs, np.array([r is not None for r in reasons], dtype=bool))
        verdicts = []
        contributions = self.model.contributions(np.stack([s.values for s in signals])) if signals else np.zeros((0, 0))
        towards = (probs >= self.model.cutoff)[:, None]
        orders = np.argsort(np.where(towards, -contributions, contributions), axis=1)[:, :12]
        for c, p, s, contrib, order, review, flag, unsure in zip(candidates, probs.tolist(), signals, contributions,
                                                                 orders, reasons, flagged.tolist(), unjudged.tolist()):
            why = describe(self.model, s, p, self.domain_context or c.domain, contrib=contrib, order=order)
            side = "drift" if p >= self.model.cutoff else "not drift"
            if review is not None:
                verdicts.append(DriftVerdict(None, f"unjudged {p:.2f} ({review}; leaning {side}): {why}"))
            elif unsure:
                verdicts.append(DriftVerdict(None, f"unjudged {p:.2f} (uncertain band {low:.2f}-{high:.2f}, "
                                                   f"leaning {side}): {why}"))
            elif flag:
                verdicts.append(DriftVerdict(True, f"drift {p:.2f}: {why}"))
            else:
                verdicts.append(DriftVerdict(False, f"not drift {p:.2f}: {why}"))
        return verdicts


def review_reasons(signals: Sequence) -> list[str | None]:
    """Per term, why its signals cannot be trusted to decide (`signals.review_reason`: its
    evidence rests only on a relation through another sense, or its strong signals disagree),
    or None. Such a term is unjudged whatever its probability. None for every term when this
    version's signals module has no such rule."""
    from . import signals as signals_module
    rule = getattr(signals_module, "review_reason", None)
    if rule is None:
        return [None] * len(signals)
    return [rule(s) or None for s in signals]


class HybridDriftJudge:
    """The combiner first; only the terms it leaves unjudged (its uncertain band, and those a
    review reason sends to review) go to the LLM judge."""

    name = "hybrid"

    def __init__(self, combiner: EmbeddingDriftJudge, llm_judge):
        self.combiner = combiner
        self.llm_judge = llm_judge
        self.llm = llm_judge.llm  # the endpoint the CLI names
        self.log = llm_judge.log  # stored with the run, as the LLM judge's

    def config(self) -> dict:
        return {"judge": "hybrid", "combiner": self.combiner.config(), "llm": self.llm_judge.config()}

    def identity(self) -> dict:
        return {"judge": "hybrid", "combiner": hashed_config(self.combiner), "llm": hashed_config(self.llm_judge)}

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        verdicts = self.combiner.judge(candidates)
        band = [i for i, v in enumerate(verdicts) if v.drift is None]
        if band:
            asked = self.llm_judge.judge([candidates[i] for i in band])
            for i, answer in zip(band, asked):
                combiner = verdicts[i].reason
                verdicts[i] = DriftVerdict(answer.drift, f"{answer.reason} (combiner: {combiner})")
        return verdicts


class CosineDriftJudge:
    """The judge before issue 18, kept to compare against: drift when
    max(similarity to query, to domain, to nearest expected) < `threshold`."""

    name = "cosine"

    def __init__(self, embedder, threshold: float = DEFAULT_EMBEDDING_THRESHOLD,
                 domain_context: str | None = None):
        self.embedder = embedder
        self.threshold = threshold
        self.domain_context = domain_context

    def config(self) -> dict:
        return {"judge": "cosine", "model": self.embedder.model_id, "threshold": self.threshold,
                "domain_context": self.domain_context}

    def relatedness(self, candidates: Sequence[DriftCandidate]) -> list[float]:
        """max(similarity to query, to domain label, to nearest expected term) per candidate."""
        domains = [self.domain_context or c.domain for c in candidates]
        texts = list(dict.fromkeys([c.term for c in candidates] + [c.query for c in candidates]
                                   + [d for d in domains if d] + [e for c in candidates for e in c.expected_terms]))
        index = {t: i for i, t in enumerate(texts)}
        vectors = self.embedder.embed(texts)
        out = []
        for c, domain in zip(candidates, domains):
            refs = [c.query, *([domain] if domain else []), *c.expected_terms]
            out.append(float(max(vectors[index[r]] @ vectors[index[c.term]] for r in refs)))
        return out

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        return [DriftVerdict(r < self.threshold, f"similarity {r:.3f} {'<' if r < self.threshold else '>='} "
                                                 f"{self.threshold:.3f}")
                for r in self.relatedness(candidates)]
