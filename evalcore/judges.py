"""Picking the drift judge a run uses, by name (SPEC §2 rule 5, §1.4 `[drift]`)."""

from __future__ import annotations

from .drift import (DEFAULT_EMBEDDING_THRESHOLD, JUDGE_NAMES, DriftJudge, EmbeddingDriftJudge, NoDriftJudge,
                    embedding_available)
from .embeddings import VectorCache
from .errors import UsageError

__all__ = ["resolve_judge"]


def resolve_judge(name: str | None, settings=None, vectors: VectorCache | None = None,
                  domain_context: str | None = None) -> DriftJudge:
    """The judge for a CLI/config name; None picks the default (SPEC §2 rule 5):
    `[drift] judge` from the settings, else embedding when installed, else none.
    `vectors` caches embedding vectors across runs (None: memory only)."""
    drift_settings = dict(settings.drift) if settings is not None else {}
    if name is None:
        name = drift_settings.get("judge") or ("embedding" if embedding_available() else "none")
    if name == "none":
        return NoDriftJudge()
    if name == "embedding":
        from .embeddings import make_embedder
        threshold = drift_settings.get("threshold", DEFAULT_EMBEDDING_THRESHOLD)
        if type(threshold) not in (int, float) or not 0 <= threshold <= 1:
            raise UsageError(f"[drift] threshold = {threshold!r}: expected a number in [0, 1]")
        return EmbeddingDriftJudge(make_embedder(drift_settings, vectors), float(threshold), domain_context)
    if name == "llm":
        from .llm_judge import LLMDriftJudge
        return LLMDriftJudge.from_settings(drift_settings, domain_context,
                                           settings.llm if settings is not None else {})
    raise UsageError(f"unknown drift judge '{name}' (choose from {', '.join(JUDGE_NAMES)})")
