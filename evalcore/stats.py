"""Paired statistics of per-query deltas against a baseline (SPEC §6 Statistics).

This module holds the bootstrap interval the opt-in `ci_gate` rule needs; the full
statistics block of the report builds on it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .regression import Baseline
from .scoring import QueryScore

__all__ = ["bootstrap_interval", "paired_deltas", "paired_f1_interval"]

RESAMPLES = 10_000
SEED = 0


def paired_deltas(scores: Sequence[QueryScore], baseline: Baseline, metric: str = "f1") -> np.ndarray:
    """candidate − baseline per query present on both sides, errored ones left out."""
    out = []
    for s in scores:
        base = baseline.rows.get(s.query_id)
        if base is None or base.errored or s.error is not None:
            continue
        out.append(getattr(s, metric) - getattr(base, metric))
    return np.asarray(out, dtype=float)


def bootstrap_interval(deltas: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean delta; (nan, nan) for fewer than 2 values."""
    n = len(deltas)
    if n < 2:
        return float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.empty(resamples)
    batch = max(1, min(resamples, 10_000_000 // n))
    for start in range(0, resamples, batch):
        stop = min(resamples, start + batch)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = deltas[idx].mean(axis=1)
    alpha = (1 - level) / 2
    low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def paired_f1_interval(scores: Sequence[QueryScore], baseline: Baseline) -> float | None:
    """Upper end of the 95% interval of the mean F1 delta, None when it cannot be computed."""
    deltas = paired_deltas(scores, baseline)
    _, high = bootstrap_interval(deltas)
    return None if np.isnan(high) else high
