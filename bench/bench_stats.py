"""bench_stats: paired statistics of 100k queries with 10,000 resamples (SPEC §7).

Times the F1 statistics alone (95% percentile bootstrap interval and two-sided sign-flip
permutation p-value of the mean per-query F1 delta) and SciPy's `bootstrap` and
`permutation_test` on the same data in the same run. Goal: ≤ 2 s.
F1 values are built like real ones: ratios of small term counts, so deltas repeat.

Usage: python bench/bench_stats.py [--queries 100000] [--skip-scipy]
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def f1_values(rng: np.random.Generator, n: int) -> np.ndarray:
    expected = rng.integers(3, 10, n)
    generated = rng.integers(3, 12, n)
    tp = np.minimum(rng.binomial(expected, 0.8), generated)
    p, r = tp / generated, tp / expected
    return np.where(p + r > 0, 2 * p * r / np.maximum(p + r, 1e-12), 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--skip-scipy", action="store_true")
    args = parser.parse_args()
    from termgate.scoring.stats import bootstrap_interval, sign_flip_p_value

    rng = np.random.default_rng(42)
    base = f1_values(rng, args.queries)
    cand = np.where(rng.random(args.queries) < 0.7, base, f1_values(rng, args.queries))
    deltas = cand - base
    start = time.perf_counter()
    low, high = bootstrap_interval(deltas)
    p = sign_flip_p_value(deltas)
    ours = time.perf_counter() - start
    line = (f"bench_stats {args.queries:,} paired queries, 10,000 resamples ({len(np.unique(deltas)):,} distinct ΔF1): "
            f"termgate {ours:.3f} s (95% CI [{low:+.5f}, {high:+.5f}], p = {p:.4f}) [goal ≤ 2 s]")
    if not args.skip_scipy:
        from scipy import stats

        start = time.perf_counter()
        ci = stats.bootstrap((deltas,), np.mean, method="percentile", n_resamples=10_000, batch=200,
                             random_state=np.random.default_rng(0)).confidence_interval
        sp_p = stats.permutation_test((deltas,), np.mean, permutation_type="samples", n_resamples=10_000,
                                      vectorized=True, batch=200, random_state=np.random.default_rng(0)).pvalue
        scipy_time = time.perf_counter() - start
        line += (f"; SciPy {scipy_time:.1f} s (CI [{ci.low:+.5f}, {ci.high:+.5f}], p = {sp_p:.4f}) = "
                 f"{scipy_time / ours:,.0f}× slower")
    print(line)


if __name__ == "__main__":
    main()
