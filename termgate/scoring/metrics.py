"""The rules' building blocks, each defined once: normalisation (rule 1), ratios and F1
with their zero denominators (rule 3), the threshold tolerance (rule 6), the numbers in
failure reasons, macro and micro means (rule 7). The scorer's SQL (termgate.scoring.scorer)
applies them per query."""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "normalize_term",
    "format_pair",
    "safe_ratio",
    "f1_score",
    "meets",
    "EPSILON",
    "FORBIDDEN_FAILS",
    "FORBIDDEN_REASON",
    "MacroMicro",
    "aggregate_columns",
]

EPSILON = 1e-9
"""Every threshold comparison allows this much in the query's favour (rule 6)."""

FORBIDDEN_FAILS = "(n_forbidden > 0 AND ($ff = 'all' OR ($ff = 'critical' AND coalesce(critical, false))))"
"""Rule 6's forbidden-term check as SQL, once: over a row's `n_forbidden` (generated forbidden
terms) and `critical`, with `$ff` the thresholds' forbidden_fails (critical / all / none),
true when a forbidden term fails the query whatever its drift score. The scorer applies it;
the comparison applies it again under the baseline's rule (regression.passed_under)."""

FORBIDDEN_REASON = "forbidden term: "
"""The failure reason's prefix, then the term, for each forbidden term that failed the query."""


def normalize_term(term: str) -> str:
    """Rule 1: NFKC, casefold, collapse white space.

    ASCII text is NFKC-stable and casefolds like lower(), so it skips the Unicode tables.
    """
    if term.isascii():
        return " ".join(term.lower().split())
    return " ".join(unicodedata.normalize("NFKC", term).casefold().split())


def safe_ratio(numerator: float, denominator: float) -> float:
    """numerator / denominator, or 0.0 when the denominator is 0 (rule 3)."""
    return numerator / denominator if denominator else 0.0


def f1_score(precision: float, recall: float) -> float:
    """Harmonic mean of precision and recall; 0.0 when both are 0."""
    return safe_ratio(2 * precision * recall, precision + recall)


def meets(value: float, minimum: float) -> bool:
    """value ≥ minimum, with EPSILON in the value's favour."""
    return value >= minimum - EPSILON


def format_pair(value: float, limit: float) -> tuple[str, str]:
    """Two decimals, or more when two decimals would print `0.67 < 0.67`."""
    for digits in range(2, 10):
        a, b = f"{value:.{digits}f}", f"{limit:.{digits}f}"
        if a != b:
            return a, b
    return repr(value), repr(limit)


@dataclass(frozen=True, slots=True)
class MacroMicro:
    """Macro means over queries and micro (pooled) scores (rule 7)."""

    macro_precision: float
    macro_recall: float
    macro_f1: float
    macro_drift: float
    micro_precision: float
    micro_recall: float
    micro_f1: float
    tp: int
    fp: int
    fn: int


def aggregate_columns(precision: Sequence[float], recall: Sequence[float], f1: Sequence[float],
                      drift: Sequence[float], tp: Sequence[int], fp: Sequence[int], fn: Sequence[int]) -> MacroMicro:
    """Rule 7 over per-query columns. Means use math.fsum (exactly rounded, so the result
    does not depend on summation order). Empty input gives zeros."""
    n = len(precision)
    total_tp, total_fp, total_fn = int(sum(tp)), int(sum(fp)), int(sum(fn))
    micro_p = safe_ratio(total_tp, total_tp + total_fp)
    micro_r = safe_ratio(total_tp, total_tp + total_fn)

    def mean(values: Sequence[float]) -> float:
        return safe_ratio(math.fsum(values), n)

    return MacroMicro(mean(precision), mean(recall), mean(f1), mean(drift),
                      micro_p, micro_r, f1_score(micro_p, micro_r), total_tp, total_fp, total_fn)
