"""How a drift judge's verdicts and probabilities compare with labelled rows (issue 36
"Measured"): precision, recall, ROC AUC, accuracy per kind, the expected calibration error,
the share of drift scored confidently not drift, the share sent to review, and the goals.

Drift is the positive class. A term sent to review (unjudged) counts as NOT flagged in
precision and recall (strict: review does not catch drift), and as wrong in accuracy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..scoring.metrics import f1_score, safe_ratio

__all__ = ["Figures", "figures", "roc_auc", "expected_calibration_error", "HARD_KINDS", "GOALS", "CONFIDENT",
           "unmet_goals", "report_lines"]

HARD_KINDS = ("lookalike", "sense_shift", "opposite", "abbrev_other_sense", "abbreviation", "jargon", "archaic",
              "sibling", "other_sense", "brand_generic", "regional")

CONFIDENT = 0.1
"""A drift term scored below this is 'confidently not drift': it passes without review."""

GOALS = {"precision": 0.9, "recall": 0.85, "drift_below": 0.05, "review": 0.10}
"""Issue 36 on realistic drift: recall ≥ 0.85 at precision ≥ 0.9; at most 5% of drift terms
scored below CONFIDENT; at most 10% of terms sent to review."""


def roc_auc(scores: np.ndarray, positives: np.ndarray) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    scores, positives = np.asarray(scores, dtype=float), np.asarray(positives, dtype=bool)
    n_pos, n_neg = int(positives.sum()), int((~positives).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    values, inverse = np.unique(scores, return_inverse=True)
    order = np.argsort(scores, kind="mergesort")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    mean_rank = np.bincount(inverse, weights=ranks) / np.bincount(inverse)  # ties share their mean rank
    ranks = mean_rank[inverse]
    return float((ranks[positives].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def expected_calibration_error(probabilities: np.ndarray, drift: np.ndarray, bins: int = 10) -> float:
    """Σ over `bins` equal-width probability bins [k/bins, (k+1)/bins) (1.0 in the last) of
    (the bin's share of all terms) × |mean probability in it − share of drift in it|."""
    p, y = np.asarray(probabilities, dtype=float), np.asarray(drift, dtype=float)
    if not len(p):
        return float("nan")
    which = np.minimum(np.floor(p * bins).astype(int), bins - 1)
    counts = np.bincount(which, minlength=bins)
    sum_p = np.bincount(which, weights=p, minlength=bins)
    sum_y = np.bincount(which, weights=y, minlength=bins)
    used = counts > 0
    return float(np.sum(np.abs(sum_p[used] - sum_y[used])) / len(p))  # = Σ n_b/N · |mean p_b − rate_b|


@dataclass(frozen=True)
class Figures:
    """How a judge's verdicts compare with the labels (drift is the positive class)."""

    label: str
    rows: int
    precision: float
    recall: float
    f1: float
    auc: float
    accuracy: float
    hard_accuracy: float
    unjudged: int
    per_kind: dict[str, tuple[int, int]] = field(default_factory=dict)
    """kind -> (correct, rows)."""
    ece: float = float("nan")
    """Expected calibration error of its probabilities (NaN: the judge gives none)."""
    drift_below: float = float("nan")
    """Share of the drift terms scored below CONFIDENT (NaN: no probabilities, or no drift rows)."""
    drift_rows: int = -1
    """Rows labelled drift (-1: not counted)."""

    @property
    def review(self) -> float:
        """Share of the terms sent to review (unjudged)."""
        return safe_ratio(self.unjudged, self.rows)


def figures(label: str, rows: Sequence, flagged: np.ndarray, score: np.ndarray,
            unjudged: np.ndarray | None = None, probability: np.ndarray | None = None) -> Figures:
    """Figures of verdicts `flagged` (and a drift score for ROC AUC; `probability`, when the
    judge has one, for the calibration error and the confidently-not-drift share). Unjudged
    rows count as not flagged in precision and recall, and as wrong in accuracy."""
    drift = np.array([r.drift for r in rows], dtype=bool)
    flagged = np.asarray(flagged, dtype=bool)
    unjudged = np.zeros(len(rows), bool) if unjudged is None else np.asarray(unjudged, dtype=bool)
    correct = (flagged == drift) & ~unjudged
    tp = int((flagged & drift & ~unjudged).sum())
    p, r = safe_ratio(tp, int((flagged & ~unjudged).sum())), safe_ratio(tp, int(drift.sum()))
    kinds = np.array([row.kind for row in rows])
    hard = np.isin(kinds, HARD_KINDS)
    per_kind = {k: (int(correct[kinds == k].sum()), int((kinds == k).sum())) for k in sorted(set(kinds))}
    ece = below = float("nan")
    if probability is not None:
        probability = np.asarray(probability, dtype=float)
        ece = expected_calibration_error(probability, drift)
        if drift.any():
            below = float((probability[drift] < CONFIDENT).mean())
    # roc_auc is NaN with one class only
    return Figures(label, len(rows), p, r, f1_score(p, r), roc_auc(score, drift), safe_ratio(int(correct.sum()), len(rows)),
                   safe_ratio(int(correct[hard].sum()), int(hard.sum())), int(unjudged.sum()), per_kind, ece, below,
                   int(drift.sum()))


def unmet_goals(f: Figures) -> list[str]:
    """The GOALS `f` misses, by name ([] when all are met); a goal it has no figure for
    (no probabilities; no drift rows: no recall) is not judged."""
    unmet = []
    if f.drift_rows != 0 and (f.precision < GOALS["precision"] or f.recall < GOALS["recall"]):
        unmet.append("recall at precision")
    if not math.isnan(f.drift_below) and f.drift_below > GOALS["drift_below"]:
        unmet.append("drift < 0.1")
    if f.review > GOALS["review"]:
        unmet.append("review")
    return unmet


def _cell(value: float, form: str) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, form)


def report_lines(sets: Sequence[tuple[str, Sequence[Figures]]]) -> list[str]:
    """One table, a row per (evaluation set, judge), then accuracy per kind, a table per set."""
    head = (f"  {'set':24} {'judge':22} {'rows':>5} {'precision':>9} {'recall':>6} {'ROC AUC':>7} {'accuracy':>8} "
            f"{'hard':>5} {'ECE':>5} {'drift<0.1':>9} {'review':>6}  goals")
    lines = [f"goals: recall ≥ {GOALS['recall']} at precision ≥ {GOALS['precision']}; ≤ {GOALS['drift_below']:.0%} of "
             f"drift scored < {CONFIDENT}; ≤ {GOALS['review']:.0%} of terms sent to review (review counts as not "
             "flagged)", head]
    for name, figs in sets:
        for i, f in enumerate(figs):
            has_p = not math.isnan(f.ece)
            goals = ("met" if not unmet_goals(f) else "not met: " + ", ".join(unmet_goals(f))) if has_p else "-"
            lines.append(f"  {name if i == 0 else '':24} {f.label:22} {f.rows:5d} {f.precision:9.3f} {f.recall:6.3f} "
                         f"{_cell(f.auc, '7.3f'):>7} {f.accuracy:8.3f} {_cell(f.hard_accuracy, '5.3f'):>5} "
                         f"{_cell(f.ece, '5.3f'):>5} {_cell(f.drift_below, '9.1%'):>9} {f.review:6.1%}  {goals}")
    for name, figs in sets:
        kinds = sorted({k for f in figs for k in f.per_kind})
        lines.append(f"accuracy per kind, {name} (correct/rows):")
        lines.append("  " + f"{'kind':19}" + "".join(f"{f.label:>24}" for f in figs))
        for k in kinds:
            cells = []
            for f in figs:
                c, n = f.per_kind.get(k, (0, 0))
                cells.append(f"{c / n:.3f} ({c}/{n})" if n else "-")
            lines.append("  " + f"{k:19}" + "".join(f"{cell:>24}" for cell in cells))
    return lines
