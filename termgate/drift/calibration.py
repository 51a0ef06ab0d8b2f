"""Calibrate drift judges on labelled rows (issue 18 item 3): fit the combiner, cross-validate
it grouped by query, choose its uncertain band, and measure any judge the same way.

Rows are JSON lines `{"id", "group", "domain", "query", "expected_terms", "term", "label":
"drift"|"not_drift", "kind", "source"}` (data/drift/), or the older CSV `query, domain,
term, related`.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .judge import DriftCandidate
from ..errors import InputError, Problem
from ..scoring.metrics import f1_score, normalize_term, safe_ratio

__all__ = ["LabelledRow", "Figures", "HARD_KINDS", "load_rows", "load_calibration", "candidates_of", "roc_auc",
           "grouped_folds", "cross_validate", "figures", "choose_band", "choose_cutoff", "calibrate_combiner", "measure_judge",
           "L2_CHOICES", "log_loss", "choose_l2"]

HARD_KINDS = ("lookalike", "sense_shift", "opposite", "abbrev_other_sense", "abbreviation", "jargon", "archaic")


@dataclass(frozen=True, slots=True)
class LabelledRow:
    """One labelled candidate: is `term` drift for `query`?"""

    id: str
    group: str
    domain: str
    query: str
    expected_terms: tuple[str, ...]
    term: str
    drift: bool
    kind: str
    source: str


def _jsonl_row(rec: dict) -> LabelledRow:
    if rec.get("label") not in ("drift", "not_drift") or not rec.get("query") or not rec.get("term"):
        raise ValueError("needs query, term and label drift or not_drift")
    expected = tuple(normalize_term(e) for e in rec.get("expected_terms") or ())
    return LabelledRow(str(rec.get("id", "")), str(rec.get("group") or rec["query"]), rec.get("domain") or "",
                       rec["query"], expected, normalize_term(rec["term"]), rec["label"] == "drift",
                       rec.get("kind") or rec["label"], rec.get("source") or "")


def load_rows(path: str | Path) -> list[LabelledRow]:
    """Labelled rows from a .jsonl file (data/drift/) or the older CSV (query, domain, term, related)."""
    path = Path(path)
    rows, problems = [], []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        if path.suffix == ".csv":
            for line, rec in enumerate(csv.DictReader(handle), start=2):
                if rec.get("related") not in ("0", "1") or not rec.get("query") or not rec.get("term"):
                    problems.append(Problem(str(path), line, "related", "needs query, term and related 0 or 1"))
                    continue
                drift = rec["related"] == "0"
                rows.append(LabelledRow(f"csv-{line}", rec["query"], rec.get("domain") or "", rec["query"], (),
                                        normalize_term(rec["term"]), drift, "unrelated" if drift else "related",
                                        rec.get("source") or ""))
        else:
            for line, text in enumerate(handle, start=1):
                if not text.strip():
                    continue
                try:
                    rows.append(_jsonl_row(json.loads(text)))
                except (ValueError, TypeError, AttributeError) as exc:
                    problems.append(Problem(str(path), line, "row", str(exc)))
    if problems:
        raise InputError(problems)
    return rows


load_calibration = load_rows


def candidates_of(rows: Sequence[LabelledRow]) -> list[DriftCandidate]:
    """The rows as a judge sees them; rows of one group and query share a query id (one LLM call)."""
    return [DriftCandidate(f"{r.group}\u241f{r.query}", r.query, r.term, r.domain or None, None, r.expected_terms)
            for r in rows]


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


def grouped_folds(groups: Sequence[str], k: int = 5, seed: int = 0) -> np.ndarray:
    """Fold number per row; every row of a group in the same fold."""
    unique = sorted(set(groups))
    np.random.default_rng(seed).shuffle(unique)
    fold_of = {g: i % k for i, g in enumerate(unique)}
    return np.array([fold_of[g] for g in groups])


def cross_validate(x: np.ndarray, y: np.ndarray, groups: Sequence[str], k: int = 5, l2: float = 1.0,
                   sample_weight: np.ndarray | None = None) -> np.ndarray:
    """Out-of-fold drift probabilities: each fold scored by a model fitted on the others."""
    from .model import DriftModel
    folds = grouped_folds(groups, k)
    sw = np.ones(len(y)) if sample_weight is None else sample_weight
    out = np.zeros(len(y))
    for f in range(k):
        test = folds == f
        if test.any() and (~test).any():
            out[test] = DriftModel.fit(x[~test], y[~test], l2, sample_weight=sw[~test]).probability(x[test])
    return out


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


def figures(label: str, rows: Sequence[LabelledRow], flagged: np.ndarray, score: np.ndarray,
            unjudged: np.ndarray | None = None) -> Figures:
    """Figures of verdicts `flagged` (and a drift score for ROC AUC). Unjudged rows count as
    not flagged in precision and recall, and as wrong in accuracy."""
    drift = np.array([r.drift for r in rows], dtype=bool)
    flagged = np.asarray(flagged, dtype=bool)
    unjudged = np.zeros(len(rows), bool) if unjudged is None else np.asarray(unjudged, dtype=bool)
    correct = (flagged == drift) & ~unjudged
    tp = int((flagged & drift & ~unjudged).sum())
    p, r = safe_ratio(tp, int((flagged & ~unjudged).sum())), safe_ratio(tp, int(drift.sum()))
    kinds = np.array([row.kind for row in rows])
    hard = np.isin(kinds, HARD_KINDS)
    per_kind = {k: (int(correct[kinds == k].sum()), int((kinds == k).sum())) for k in sorted(set(kinds))}
    return Figures(label, len(rows), p, r, f1_score(p, r), roc_auc(score, drift), safe_ratio(int(correct.sum()), len(rows)),
                   safe_ratio(int(correct[hard].sum()), int(hard.sum())), int(unjudged.sum()), per_kind)


def choose_band(cutoff: float, *probability_sets: np.ndarray, max_fraction: float = 0.05,
                step: float = 0.005) -> tuple[float, float]:
    """The widest band [cutoff − w, cutoff + w) (w a multiple of `step`) holding at most
    `max_fraction` of every set of probabilities."""
    def fits(w: float) -> bool:
        return all(((p >= cutoff - w) & (p < cutoff + w)).mean() <= max_fraction for p in probability_sets if len(p))
    w = 0.0
    while w + step <= 0.5 and fits(w + step):
        w += step
    return round(max(0.0, cutoff - w), 4), round(min(1.0, cutoff + w), 4)


def measure_judge(label: str, judge, rows: Sequence[LabelledRow]) -> Figures:
    """Any DriftJudge's verdicts on the rows (an unjudged verdict counts as in `figures`)."""
    verdicts = judge.judge(candidates_of(rows))
    flagged = np.array([v.drift is True for v in verdicts])
    unjudged = np.array([v.drift is None for v in verdicts])
    return figures(label, rows, flagged, np.where(unjudged, 0.5, flagged.astype(float)), unjudged)


def signal_matrix(rows: Sequence[LabelledRow], embedder, lexicon) -> np.ndarray:
    """The combiner's signals of every row (one embedding batch, one lexicon lookup)."""
    from .signals import FEATURES, compute_signals
    signals = compute_signals(candidates_of(rows), embedder, lexicon)
    return np.stack([s.values for s in signals]) if signals else np.zeros((0, len(FEATURES)))


@dataclass(frozen=True)
class CombinerCalibration:
    """A refit combiner and its figures beside the old cosine judge's, on the same rows."""

    model: object
    """The DriftModel fitted on every training row, with its cut-off and band."""
    cv: list[Figures]
    heldout: list[Figures]
    band_cv: float
    """Fraction of cross-validated rows inside the band."""
    band_heldout: float


def choose_cutoff(probabilities: np.ndarray, drift: np.ndarray, precision: float = 0.95) -> float:
    """The lowest cut-off (0.50, 0.51, ... 0.95) at which flagging `probabilities` ≥ it has at
    least `precision` (a false flag costs a reviewer's time); 0.5 when none has."""
    for cut in np.round(np.arange(0.5, 0.951, 0.01), 2):
        flagged = probabilities >= cut
        if flagged.any() and (flagged & drift).sum() / flagged.sum() >= precision:
            return float(cut)
    return 0.5


def calibrate_combiner(train: Sequence[LabelledRow], heldout: Sequence[LabelledRow], embedder, lexicon,
                       cosine_judge=None, l2: float = 1.0, cutoff: float | None = None, folds: int = 5,
                       trained_on: str = "") -> CombinerCalibration:
    """Cross-validate the combiner grouped by query on `train`, fit it on all of `train`,
    choose its cut-off (None: the lowest with cross-validated precision ≥ 0.95) and its band (≤ 5% of cross-validated and of held-out rows), and measure it, and the
    old cosine judge beside it when given, on train (CV) and on held-out."""
    from .model import DriftModel
    from .signals import FEATURES
    x = signal_matrix(train, embedder, lexicon)
    y = np.array([r.drift for r in train], dtype=float)
    oof = cross_validate(x, y, [r.group for r in train], folds, l2)
    if cutoff is None:
        cutoff = choose_cutoff(oof, y.astype(bool))
    model = DriftModel.fit(x, y, l2, cutoff, (cutoff, cutoff), trained_on)
    xh = signal_matrix(heldout, embedder, lexicon) if heldout else np.zeros((0, len(FEATURES)))
    ph = model.probability(xh) if len(xh) else np.zeros(0)
    band = choose_band(cutoff, oof, ph)
    model = model.with_cutoff(cutoff, band)

    def inside(p: np.ndarray) -> np.ndarray:
        return (p >= band[0]) & (p < band[1])

    cv = [figures("combiner", train, oof >= cutoff, oof, inside(oof))]
    held = [figures("combiner", heldout, ph >= cutoff, ph, inside(ph))] if heldout else []
    if cosine_judge is not None:
        label = f"cosine < {cosine_judge.threshold:.2f}"
        for out, rows in ((cv, train), (held, heldout)):
            if rows:
                related = np.array(cosine_judge.relatedness(candidates_of(rows)))
                out.append(figures(label, rows, related < cosine_judge.threshold, -related))
    return CombinerCalibration(model, cv, held, float(inside(oof).mean()) if len(oof) else 0.0,
                               float(inside(ph).mean()) if len(ph) else 0.0)


L2_CHOICES = (0.3, 1.0, 3.0, 10.0, 30.0)
"""The L2 penalties `choose_l2` tries."""


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-9, 1 - 1e-9)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))) if len(y) else float("nan")


def choose_l2(x: np.ndarray, y: np.ndarray, groups, choices=L2_CHOICES, folds: int = 5) -> tuple[float, dict[float, float]]:
    """The L2 penalty with the lowest log-loss under cross-validation grouped by query, and
    the log-loss of each choice (the held-out rows play no part)."""
    losses = {float(l2): log_loss(cross_validate(x, y, groups, folds, l2), y) for l2 in choices}
    return min(losses, key=losses.get), losses
