"""Trustworthy deltas (SPEC §6 Statistics): paired bootstrap intervals, sign-flip
permutation p-values, per-domain Holm correction, the minimum detectable effect, and the
noise floor of repeated runs.

Definitions follow SciPy: `bootstrap((d,), np.mean, method="percentile")` and
`permutation_test((d,), np.mean, permutation_type="samples")` (a sign flip per query;
exact over all 2**n flips when that is no more than the resamples, else randomised with
SciPy's +1 adjustment and its tolerance for ties). The resampling is vectorised by
grouping equal values: a bootstrap resample is a multinomial draw of counts over the
distinct deltas, and a sign-flip sum is a binomial draw per distinct |delta| — exactly the
same distributions as resampling query by query, at a cost that depends on the number
of distinct values rather than on n.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .metrics import EPSILON
from .regression import Baseline

__all__ = ["RESAMPLES", "SEED", "MDE_FACTOR", "QueryMetrics", "paired_deltas", "bootstrap_interval", "sign_flip_p_value",
           "holm", "mde", "DeltaStats", "describe_delta", "compute_statistics", "describe_pairs", "mark_noise"]

RESAMPLES = 10_000
SEED = 0
MDE_FACTOR = 2.8016  # z(0.975) + z(0.8): two-sided alpha 0.05, power 0.8
_BATCH_CELLS = 20_000_000  # draws per vectorised batch (memory bound)
_SERIAL_CELLS = 20_000_000
"""Up to this many draws (n x resamples) mostly distinct deltas are resampled serially, with
SciPy's own stream (its results exactly); beyond, in parallel chunks (the same distribution,
results independent of the core count): retrieval metrics of 10,000 queries are mostly
distinct values."""
_EPS = np.finfo(np.float64).eps * 100


@dataclass(frozen=True, slots=True)
class QueryMetrics:
    """What the paired statistics read of a run: per-query columns in golden-set order."""

    query_ids: Sequence[str]
    domains: Sequence[str | None]
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    errored: np.ndarray


def paired_deltas(current: QueryMetrics, baseline: Baseline, metric: str = "f1",
                  domain: str | None = None) -> np.ndarray:
    """candidate − baseline per query on both sides, errored ones left out (golden order)."""
    values = getattr(current, metric)
    out = []
    for i, query_id in enumerate(current.query_ids):
        base = baseline.rows.get(query_id)
        if base is None or base.errored or current.errored[i]:
            continue
        if domain is not None and current.domains[i] != domain:
            continue
        out.append(float(values[i]) - getattr(base, metric))
    return np.asarray(out, dtype=float)


def _groups(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    uniq, counts = np.unique(values, return_counts=True)
    return uniq, counts


_CHUNKS = 8  # fixed: results do not depend on how many cores run them


def _in_parallel(work, resamples: int, seed: int) -> np.ndarray:
    """Run `work(rng, rows)` over a fixed split of the resamples, each chunk with its own
    child seed, on a thread per core (NumPy releases the GIL in the heavy parts)."""
    from concurrent.futures import ThreadPoolExecutor

    sizes = [resamples // _CHUNKS + (1 if i < resamples % _CHUNKS else 0) for i in range(_CHUNKS)]
    seeds = np.random.SeedSequence(seed).spawn(_CHUNKS)
    with ThreadPoolExecutor(max_workers=min(_CHUNKS, os.cpu_count() or 1)) as pool:
        parts = list(pool.map(lambda i: work(np.random.default_rng(seeds[i]), sizes[i]), range(_CHUNKS)))
    return np.concatenate(parts)


def _split(values: np.ndarray, counts: np.ndarray, pooled_cost: float) -> np.ndarray:
    """Which distinct values to draw as groups (one binomial each per resample) rather than
    element by element (pooled_cost each): the threshold on the count that costs least."""
    order = np.sort(counts)
    best_t, best = np.inf, pooled_cost * counts.sum()
    for t in np.unique(order):
        cost = np.count_nonzero(counts >= t) + pooled_cost * counts[counts < t].sum()
        if cost < best:
            best_t, best = t, cost
    return counts >= best_t


def bootstrap_means(deltas: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> np.ndarray:
    """Means of `resamples` bootstrap resamples (with replacement, size n) of `deltas`.

    A resample is a multinomial over the values: frequent values get their counts from
    the multinomial directly; the rest are drawn element by element from their pool.
    """
    deltas = np.asarray(deltas, dtype=float)
    n = len(deltas)
    rng = np.random.default_rng(seed)
    values, counts = _groups(deltas)
    if len(values) == 1:
        return np.full(resamples, values[0])
    if len(values) * 4 >= n and n * resamples <= _SERIAL_CELLS:  # mostly distinct: SciPy's own scheme and stream
        means = np.empty(resamples)
        batch = max(1, _BATCH_CELLS // n)
        for start in range(0, resamples, batch):
            stop = min(resamples, start + batch)
            means[start:stop] = deltas[rng.integers(0, n, size=(stop - start, n))].mean(axis=1)
        return means
    if len(values) * 4 >= n:  # as many, more than one core's worth: the same draws in parallel chunks

        def draws(gen: np.random.Generator, rows: int) -> np.ndarray:
            out = np.empty(rows)
            batch = max(1, _BATCH_CELLS // n)
            for start in range(0, rows, batch):
                stop = min(rows, start + batch)
                out[start:stop] = deltas[gen.integers(0, n, size=(stop - start, n), dtype=np.int32)].mean(axis=1)
            return out

        return _in_parallel(draws, resamples, seed)
    grouped = _split(values, counts, pooled_cost=0.12)  # a binomial costs ~8 pooled draws
    g_values, g_counts = values[grouped], counts[grouped]
    pool = np.repeat(values[~grouped], counts[~grouped])
    probs = np.append(g_counts, len(pool)) / n
    # pooled draws per resample are Binomial(n, |pool|/n): bound the row width generously
    width = int(len(pool) + 8 * math.sqrt(len(pool) + 1) + 16) if len(pool) else 0
    batch = max(1, _BATCH_CELLS // max(len(g_values) + 1, width, 1))

    def chunk(rng: np.random.Generator, rows: int) -> np.ndarray:
        out = np.empty(rows)
        for start in range(0, rows, batch):
            size = min(rows, start + batch) - start
            drawn = rng.multinomial(n, probs, size=size)
            sums = drawn[:, :-1] @ g_values
            if len(pool):
                per_row = drawn[:, -1]
                columns = np.arange(max(width, int(per_row.max())))  # wider only in astronomically rare cases
                picks = pool[rng.integers(0, len(pool), size=(size, len(columns)), dtype=np.int32)]
                sums += np.where(columns[None, :] < per_row[:, None], picks, 0.0).sum(axis=1)
            out[start:start + size] = sums / n
        return out

    return _in_parallel(chunk, resamples, seed)


def bootstrap_interval(deltas: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED,
                       level: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean; (nan, nan) for fewer than 2 values."""
    if len(deltas) < 2:
        return float("nan"), float("nan")
    means = bootstrap_means(np.asarray(deltas, dtype=float), resamples, seed)
    alpha = (1 - level) / 2
    low, high = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)


def _null_means(deltas: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[np.ndarray, bool]:
    """Means under random sign flips: exact enumeration for small n; otherwise a binomial
    count of positive signs per frequent |delta| and one random bit per remaining element."""
    n = len(deltas)
    if n <= 30 and 2 ** n <= resamples:  # exact: every sign pattern once
        signs = ((np.arange(2 ** n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
        return signs @ deltas / n, True
    magnitudes, counts = _groups(np.abs(deltas))
    keep = magnitudes > 0
    magnitudes, counts = magnitudes[keep], counts[keep]
    if len(magnitudes) == 0:
        return np.zeros(resamples), False
    grouped = _split(magnitudes, counts, pooled_cost=0.02)
    g_mag, g_counts = magnitudes[grouped], counts[grouped]
    pool = np.repeat(magnitudes[~grouped], counts[~grouped])
    batch = max(1, _BATCH_CELLS // max(len(g_mag), len(pool), 1))

    def chunk(gen: np.random.Generator, rows_total: int) -> np.ndarray:
        out = np.empty(rows_total)
        for start in range(0, rows_total, batch):
            rows = min(rows_total, start + batch) - start
            total = np.zeros(rows)
            if len(g_mag):
                positives = gen.binomial(g_counts, 0.5, size=(rows, len(g_counts)))
                total += (2 * positives - g_counts) @ g_mag
            if len(pool):
                bits = np.unpackbits(gen.integers(0, 256, size=(rows, (len(pool) + 7) // 8), dtype=np.uint8),
                                     axis=1, count=len(pool))
                total += 2 * (bits @ pool) - pool.sum()
            out[start:start + rows] = total / n
        return out

    return _in_parallel(chunk, resamples, int(rng.integers(0, 2 ** 32))), False


def sign_flip_p_value(deltas: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> float:
    """Two-sided paired permutation (sign-flip) p-value of the mean, as SciPy computes it."""
    deltas = np.asarray(deltas, dtype=float)
    if len(deltas) == 0:
        return float("nan")
    observed = deltas.mean()
    null, exact = _null_means(deltas, resamples, np.random.default_rng(seed))
    adjustment = 0 if exact else 1
    gamma = abs(_EPS * observed)
    total = len(null) + adjustment
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / total
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / total
    return float(min(1.0, max(0.0, 2 * min(less, greater))))


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm–Bonferroni adjusted p-values (NaNs are left out and stay NaN)."""
    valid = sorted((p, k) for k, p in p_values.items() if not math.isnan(p))
    m, running, out = len(valid), 0.0, {k: float("nan") for k in p_values}
    for i, (p, key) in enumerate(valid):
        running = max(running, min(1.0, (m - i) * p))
        out[key] = running
    return out


def mde(deltas: np.ndarray) -> float:
    """Minimum detectable mean F1 change: 2.8016 · sd(ΔF1) / √n (sample sd)."""
    n = len(deltas)
    if n < 2:
        return float("nan")
    return float(MDE_FACTOR * np.std(deltas, ddof=1) / math.sqrt(n))


@dataclass(frozen=True)
class DeltaStats:
    mean_delta: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int

    def as_dict(self) -> dict:
        clean = lambda v: None if isinstance(v, float) and math.isnan(v) else v  # noqa: E731
        return {"mean_delta": clean(self.mean_delta), "ci_low": clean(self.ci_low), "ci_high": clean(self.ci_high),
                "p_value": clean(self.p_value), "n": self.n}


def describe_delta(deltas: np.ndarray, resamples: int = RESAMPLES, seed: int = SEED) -> DeltaStats:
    mean = float(deltas.mean()) if len(deltas) else float("nan")
    low, high = bootstrap_interval(deltas, resamples, seed)
    return DeltaStats(mean, low, high, sign_flip_p_value(deltas, resamples, seed), len(deltas))


def compute_statistics(current: QueryMetrics, baseline: Baseline, regression_delta: float,
                       resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """The report's `statistics` block (SPEC §6) for a run against its baseline."""
    pairs = [(i, current.domains[i]) for i, query_id in enumerate(current.query_ids)
             if query_id in baseline.rows and not baseline.rows[query_id].errored and not current.errored[i]]
    return describe_pairs(paired_deltas(current, baseline, "f1"), paired_deltas(current, baseline, "precision"),
                          paired_deltas(current, baseline, "recall"), [d for _, d in pairs], regression_delta,
                          sorted({d for d in current.domains if d}), resamples, seed)


def describe_pairs(f1: np.ndarray, precision: np.ndarray, recall: np.ndarray, domains: Sequence[str | None],
                   regression_delta: float, all_domains: Sequence[str] | None = None,
                   resamples: int = RESAMPLES, seed: int = SEED) -> dict:
    """The `statistics` block from paired per-query deltas (candidate − baseline, errored
    queries left out) and each pair's domain; the one composition the report and the
    dashboard's Compare page both show. `all_domains` lists the slices to describe
    (default: the domains among the pairs)."""
    out: dict = {}
    for metric, deltas in (("f1", f1), ("precision", precision), ("recall", recall)):
        out[metric] = describe_delta(np.asarray(deltas, dtype=float), resamples, seed).as_dict()
    domain_of = np.asarray([d if d is not None else "" for d in domains], dtype=object)
    f1 = np.asarray(f1, dtype=float)
    slices = all_domains if all_domains is not None else sorted({d for d in domains if d})
    by_domain = {d: describe_delta(f1[domain_of == d], resamples, seed).as_dict() for d in slices}
    adjusted = holm({d: (v["p_value"] if v["p_value"] is not None else float("nan")) for d, v in by_domain.items()})
    out["by_domain"] = {d: {"f1": dict(v, p_value_holm=None if math.isnan(adjusted[d]) else adjusted[d])}
                        for d, v in by_domain.items()}
    detectable = mde(f1)
    out["mde_f1"] = None if math.isnan(detectable) else detectable
    out["seed"], out["resamples"] = seed, resamples
    out["mde_warning"] = (f"{len(f1)} paired queries can only detect a mean F1 change of {detectable:.3f} "
                          f"(80% power, α 0.05), more than regression_delta {regression_delta:.3f}: "
                          "a change of that size could go unnoticed" if not math.isnan(detectable)
                          and detectable > regression_delta else None)
    return out


def mark_noise(current: QueryMetrics, baseline: Baseline,
               repeats: Sequence[Baseline]) -> tuple[dict, list[float] | None, list[bool] | None]:
    """Noise floor per query: the largest F1 spread among runs of the same prompt version on
    the same golden set (the repeats and this run). A query whose |ΔF1| against the baseline
    is within its floor is `within_noise`. Returns the summary and, per query, the floor
    and the flag; without repeats there is no floor (None, None)."""
    if not repeats:
        return ({"repeat_runs": 0, "queries_with_variation": 0, "deltas_within_noise": 0, "mean_floor": None},
                None, None)
    floors, flags = [], []
    for i, query_id in enumerate(current.query_ids):
        f1 = float(current.f1[i])
        values = [f1] + [r.rows[query_id].f1 for r in repeats if query_id in r.rows]
        floor = max(values) - min(values)
        base = baseline.rows.get(query_id)
        flags.append(bool(base is not None and not current.errored[i] and floor > 0
                          and abs(f1 - base.f1) <= floor + EPSILON))
        floors.append(floor)
    summary = {"repeat_runs": len(repeats), "queries_with_variation": sum(1 for f in floors if f > 0),
               "deltas_within_noise": sum(flags), "mean_floor": float(np.mean(floors)) if floors else None}
    return summary, floors, flags
