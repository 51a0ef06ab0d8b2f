"""Score every golden query: match terms, judge drift, decide pass/fail (SPEC §2 rules 2–6)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .columnar import ScoreFacts
from .drift import DriftCandidate, DriftJudge
from .io import GeneratedSet, GoldenSet, PreparedItem
from .metrics import TermMatch, f1_score, format_pair, match_terms, meets, safe_ratio
from .models import Thresholds

__all__ = ["QueryScore", "score_golden_set", "score_facts"]

NO_GOLDEN_NOTE = "no golden terms provided"
EMPTY_LIST: list = []  # shared; never appended to (see QueryScore)
EMPTY_MAP: dict = {}


@dataclass(slots=True)
class QueryScore:
    """One scored golden query (the typed row behind a report's per_query_results)."""

    query_id: str
    query: str
    domain: str | None
    critical: bool
    generated: dict[str, float]
    expected: dict[str, float]
    true_positives: list[str]
    false_positives: list[str]
    false_negatives: list[str]
    precision: float
    recall: float
    f1: float
    # Most queries have no drift, notes or failures: these default to shared empty values
    # (a million empty lists cost ~100 MB) and are replaced, never mutated, when set.
    drift_terms: list[str] = field(default_factory=lambda: EMPTY_LIST)
    drift_reasons: dict[str, str] = field(default_factory=lambda: EMPTY_MAP)
    unjudged_terms: list[str] = field(default_factory=lambda: EMPTY_LIST)
    term_drift_score: float = 1.0
    passed: bool = False
    failure_reasons: list[str] = field(default_factory=lambda: EMPTY_LIST)
    notes: list[str] = field(default_factory=lambda: EMPTY_LIST)
    error: str | None = None
    noise_floor: float | None = None
    within_noise: bool = False


def _base_score(item: PreparedItem, generated: dict[str, float], match: TermMatch) -> QueryScore:
    if not generated:  # rule 4: an empty expansion wins over an empty golden list
        precision = recall = f1 = 0.0
    else:
        precision = match.precision
        recall = match.recall if item.expected else 1.0
        f1 = f1_score(precision, recall)
    score = QueryScore(item.query_id, item.query, item.domain, item.critical, generated,
                       item.expected, match.true_positives, match.false_positives,
                       match.false_negatives, precision, recall, f1)
    if not item.expected:
        score.notes = [NO_GOLDEN_NOTE]
    return score


def _finish(score: QueryScore, match: TermMatch, thresholds: Thresholds) -> None:
    n_generated = len(score.generated)
    score.term_drift_score = 1.0 - safe_ratio(len(score.drift_terms), n_generated) if n_generated else 1.0
    reasons: list[str] = []
    if score.error is not None:
        reasons.append(f"error: {score.error}")
    if not n_generated:
        reasons.append("empty expansion")
    for term, weight, min_weight in match.underweight:
        shown, needed = format_pair(weight, min_weight)
        reasons.append(f"underweight: {term} {shown} < {needed}")
    checks = (("precision", score.precision, thresholds.precision_min),
              ("recall", score.recall, thresholds.recall_min),
              ("term_drift_score", score.term_drift_score, thresholds.drift_min))
    ok = True
    for label, value, minimum in checks:
        if not meets(value, minimum):
            ok = False
            shown, needed = format_pair(value, minimum)
            reasons.append(f"{label} {shown} < {needed}")
    if reasons:
        score.failure_reasons = reasons
    score.passed = ok and score.error is None and bool(n_generated)


def _add_drift(score: QueryScore, term: str, reason: str) -> None:
    if score.drift_terms is EMPTY_LIST:
        score.drift_terms, score.drift_reasons = [], {}
    score.drift_terms.append(term)
    score.drift_reasons[term] = reason


def score_golden_set(golden: GoldenSet, generated: GeneratedSet, thresholds: Thresholds,
                     judge: DriftJudge, errors: dict[str, str] | None = None) -> list[QueryScore]:
    """Score every golden query in golden-set order.

    `errors` maps query_id -> reason for items the system under test failed to produce;
    they are scored as empty expansions and carry the error (SPEC §5).
    """
    errors = errors or {}
    empty: dict[str, float] = {}
    scores: list[QueryScore] = []
    matches: list[TermMatch] = []
    candidates: list[DriftCandidate] = []
    owners: list[int] = []
    judge_everything = judge.name != "none"
    for item in golden.items:
        gen = generated.expansions.get(item.query_id, empty)
        match = match_terms(item.expected, gen)
        score = _base_score(item, gen, match)
        score.error = errors.get(item.query_id)
        forbidden = item.forbidden
        expected = item.expected
        for term in match.false_positives:
            if term in forbidden:
                _add_drift(score, term, "forbidden term")
            elif judge_everything and term not in expected:
                candidates.append(DriftCandidate(item.query_id, item.query, term, item.domain,
                                                 item.intent, tuple(expected)))
                owners.append(len(scores))
        scores.append(score)
        matches.append(match)
    if candidates:
        verdicts = judge.judge(candidates)
        for index, candidate, verdict in zip(owners, candidates, verdicts, strict=True):
            score = scores[index]
            if verdict.drift is None:
                if score.unjudged_terms is EMPTY_LIST:
                    score.unjudged_terms = []
                score.unjudged_terms.append(candidate.term)
            elif verdict.drift:
                _add_drift(score, candidate.term, verdict.reason)
        for score in scores:  # keep drift terms in the generated order
            if len(score.drift_terms) > 1:
                order = {t: i for i, t in enumerate(score.generated)}
                score.drift_terms.sort(key=order.__getitem__)
    for score, match in zip(scores, matches):
        _finish(score, match, thresholds)
    return scores


def score_facts(scores: list[QueryScore]) -> ScoreFacts:
    """The gate's per-query columns from Python-scored queries."""
    import numpy as np
    import pyarrow as pa

    def column(values, dtype) -> np.ndarray:
        return np.fromiter(values, dtype=dtype, count=len(scores))

    return ScoreFacts(
        query_ids=pa.array([s.query_id for s in scores], pa.string()),
        n_expected=column((len(s.expected) for s in scores), np.int64),
        n_generated=column((len(s.generated) for s in scores), np.int64),
        recall=column((s.recall for s in scores), np.float64),
        critical=column((s.critical for s in scores), bool),
        passed=column((s.passed for s in scores), bool),
        errored=column((s.error is not None for s in scores), bool),
        n_drift=column((len(s.drift_terms) for s in scores), np.int64),
        term_drift_score=column((s.term_drift_score for s in scores), np.float64),
        n_unjudged=column((len(s.unjudged_terms) for s in scores), np.int64),
        n_forbidden=column((sum(1 for t in s.drift_terms if s.drift_reasons.get(t) == "forbidden term")
                            for s in scores), np.int64),
        n_underweight=column((sum(1 for r in s.failure_reasons if r.startswith("underweight:"))
                              for s in scores), np.int64),
    )
