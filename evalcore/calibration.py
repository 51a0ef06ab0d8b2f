"""Calibrate a drift judge on labelled rows: precision, recall, ROC AUC, suggested threshold."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .drift import DriftCandidate, EmbeddingDriftJudge
from .errors import InputError, Problem
from .metrics import EPSILON, f1_score, normalize_term, safe_ratio

__all__ = ["CalibrationRow", "CalibrationResult", "load_calibration", "roc_auc", "calibrate_embedding"]


@dataclass(frozen=True, slots=True)
class CalibrationRow:
    """One labelled example: is `term` related to `query` in `domain`?"""

    query: str
    domain: str
    term: str
    related: bool


@dataclass(frozen=True, slots=True)
class CalibrationResult:
    """How well a judge separates drift (unrelated) from related terms."""

    rows: int
    unrelated: int
    auc: float
    threshold: float
    precision: float
    recall: float
    f1: float
    suggested_threshold: float
    suggested_f1: float


def load_calibration(path: str | Path) -> list[CalibrationRow]:
    """CSV with columns query, domain, term, related (1/0)."""
    rows, problems = [], []
    with Path(path).open(encoding="utf-8-sig", newline="") as handle:
        for line, rec in enumerate(csv.DictReader(handle), start=2):
            if rec.get("related") not in ("0", "1") or not rec.get("query") or not rec.get("term"):
                problems.append(Problem(str(path), line, "related", "needs query, term and related 0 or 1"))
                continue
            rows.append(CalibrationRow(rec["query"], rec.get("domain") or "", normalize_term(rec["term"]),
                                       rec["related"] == "1"))
    if problems:
        raise InputError(problems)
    return rows


def roc_auc(scores: np.ndarray, positives: np.ndarray) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    pos, neg = scores[positives], scores[~positives]
    if len(pos) == 0 or len(neg) == 0:
        return float("nan")
    order = np.argsort(np.concatenate([pos, neg]), kind="mergesort")
    ranks = np.empty(len(order))
    ranks[order] = np.arange(1, len(order) + 1)
    values = np.concatenate([pos, neg])
    for v in np.unique(values):  # average ranks of ties
        tied = values == v
        ranks[tied] = ranks[tied].mean()
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def _prf(flagged: np.ndarray, drift: np.ndarray) -> tuple[float, float, float]:
    tp = int((flagged & drift).sum())
    p, r = safe_ratio(tp, int(flagged.sum())), safe_ratio(tp, int(drift.sum()))
    return p, r, f1_score(p, r)


def calibrate_embedding(judge: EmbeddingDriftJudge, rows: list[CalibrationRow]) -> CalibrationResult:
    """Score every row with the judge's relatedness; drift (the positive class) is unrelated."""
    candidates = [DriftCandidate(f"cal-{i}", r.query, r.term, r.domain or None, None, ())
                  for i, r in enumerate(rows)]
    related = np.array([judge.relatedness(s) for s in judge.similarities(candidates)])
    drift = np.array([not r.related for r in rows])
    auc = roc_auc(-related, drift)
    p, r, f = _prf(related < judge.threshold, drift)
    best_t, best_f = judge.threshold, -1.0
    for t in np.unique(np.round(related, 3)):
        cand = _prf(related < t + EPSILON, drift)[2]
        if cand > best_f:
            best_t, best_f = float(t) + 0.001, cand
    return CalibrationResult(len(rows), int(drift.sum()), auc, judge.threshold, p, r, f,
                             round(best_t, 3), best_f)
