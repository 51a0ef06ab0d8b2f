"""The embedding-distance evaluator."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from .base import (DEFAULT_CONCURRENCY, Evaluator, EvalResult, EvaluatorError, check_concurrency, 
                   check_threshold, as_rows)



# -- embedding distance ---------------------------------------------------------------------------


class EmbeddingDistanceEvaluator(Evaluator):
    """Scores the cosine similarity of prediction and reference; passes at ≥ `threshold`.

    `embedder` is an `termgate.drift.embeddings.Embedder` (anything with `embed(texts) -> array`)
    or a plain callable `f(list[str]) -> array-like`, one row per text. Rows are normalised
    here whatever the embedder promises; a zero vector has similarity 0 with everything.
    `evaluate_dataset` embeds all rows in one call, so `concurrency` does not apply.

    Example:
        from termgate.drift.embeddings import NumpyEmbedder
        ev = EmbeddingDistanceEvaluator(NumpyEmbedder(), threshold=0.5)
        ev.evaluate("heart attack", "myocardial infarction").reasoning
        # "Cosine similarity: 0.5936, threshold: 0.5000" (all-MiniLM-L6-v2)
    """

    def __init__(self, embedder: Any, threshold: float):
        embed = getattr(embedder, "embed", None)
        if not callable(embed):
            embed = embedder if callable(embedder) else None
        if embed is None:
            raise EvaluatorError(f"embedder {embedder!r:.80}: expected an object with embed(texts) or a callable")
        self.embedder = embedder
        self.threshold = check_threshold(threshold, -1.0, 1.0, "a cosine similarity")
        self._embed: Callable[[list[str]], Any] = embed

    def _unit_rows(self, texts: list[str]) -> np.ndarray:
        rows = np.asarray(self._embed(texts), dtype=np.float64)
        if rows.ndim != 2 or rows.shape[0] != len(texts) or not np.isfinite(rows).all():
            raise EvaluatorError(f"the embedder returned an array of shape {rows.shape} for {len(texts)} texts: "
                                 "expected one finite row per text")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)

    def _result(self, similarity: float) -> EvalResult:
        similarity = float(np.clip(similarity, -1.0, 1.0))  # rounding can step just past ±1
        return EvalResult(score=similarity, passed=similarity >= self.threshold,
                          reasoning=f"Cosine similarity: {similarity:.4f}, threshold: {self.threshold:.4f}")

    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        first, second = self._unit_rows([prediction, reference])
        return self._result(first @ second)

    async def aevaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        """Runs the embedder on a worker thread, so the event loop stays responsive."""
        return await asyncio.to_thread(self.evaluate, prediction, reference, input)

    def evaluate_dataset(self, rows: Iterable[dict | tuple],
                         concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        items = as_rows(rows)
        check_concurrency(concurrency)
        if not items:
            return []
        texts = list(dict.fromkeys(t for prediction, reference, _ in items for t in (prediction, reference)))
        vectors = dict(zip(texts, self._unit_rows(texts)))
        return [self._result(vectors[p] @ vectors[r]) for p, r, _ in items]

    async def aevaluate_dataset(self, rows: Iterable[dict | tuple],
                                concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        return await asyncio.to_thread(self.evaluate_dataset, list(rows), concurrency)


