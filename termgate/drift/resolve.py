"""Picking the drift judge a run uses, by name (SPEC §2 rule 5, §1.4 `[drift]`)."""

from __future__ import annotations

from .judge import JUDGE_NAMES, DriftJudge, EmbeddingDriftJudge, NoDriftJudge, embedding_available
from .embeddings import VectorCache
from ..errors import UsageError

__all__ = ["resolve_judge", "combiner_model", "lexicon_for"]


def _number(drift: dict, key: str):
    value = drift.get(key)
    if value is not None and (type(value) not in (int, float) or not 0 <= value <= 1):
        raise UsageError(f"[drift] {key} = {value!r}: expected a number in [0, 1]")
    return value


def combiner_model(drift_settings: dict):
    """The combiner's model: `[drift] coefficients` (a refit file; default the shipped one),
    its cut-off from `[drift] threshold` and its uncertain band from `[drift] band`."""
    from .model import load_model
    cutoff = _number(drift_settings, "threshold")
    band = drift_settings.get("band")
    if band is not None:
        if (not isinstance(band, (list, tuple)) or len(band) != 2
                or any(type(b) not in (int, float) or not 0 <= b <= 1 for b in band)):
            raise UsageError(f"[drift] band = {band!r}: expected [low, high], two numbers in [0, 1]")
        band = (float(band[0]), float(band[1]))
    return load_model(drift_settings.get("coefficients")).with_cutoff(
        None if cutoff is None else float(cutoff), band)


def lexicon_for(vectors):
    """WordNet behind the store's lexicon cache when `vectors` is a store's vector cache
    (same file or database), else behind memory only."""
    from .lexicon import CachedLexicon
    db_path = getattr(vectors, "db_path", None)
    if db_path is None:
        return CachedLexicon()
    from ..store import StoredLexicon
    return CachedLexicon(StoredLexicon(db_path, getattr(vectors, "use", None)))  # one record of whose entries


def resolve_judge(name: str | None, settings=None, vectors: VectorCache | None = None,
                  domain_context: str | None = None, lexicon=None) -> DriftJudge:
    """The judge for a CLI/config name; None picks the default (SPEC §2 rule 5):
    `[drift] judge` from the settings, else embedding when installed, else none.
    `vectors` caches embedding vectors across runs and, through its store, WordNet entries
    (None: memory only); `lexicon` overrides the latter."""
    drift_settings = dict(settings.drift) if settings is not None else {}
    if name is None:
        name = drift_settings.get("judge") or ("embedding" if embedding_available() else "none")
    if name == "none":
        return NoDriftJudge()
    if name in ("embedding", "hybrid"):
        from .embeddings import make_embedder
        model = combiner_model(drift_settings)
        combiner = EmbeddingDriftJudge(make_embedder(drift_settings, vectors), model,
                                       lexicon if lexicon is not None else lexicon_for(vectors), domain_context)
        if name == "embedding":
            return combiner
        from .judge import HybridDriftJudge
        return HybridDriftJudge(combiner, _llm_judge(drift_settings, settings, domain_context))
    if name == "llm":
        return _llm_judge(drift_settings, settings, domain_context)
    raise UsageError(f"unknown drift judge '{name}' (choose from {', '.join(JUDGE_NAMES)})")


def _llm_judge(drift_settings: dict, settings, domain_context: str | None):
    from .llm_judge import LLMDriftJudge
    return LLMDriftJudge.from_settings(drift_settings, domain_context, settings.llm if settings is not None else {})
