"""Thresholds -> pass / fail / review (SPEC §2 rule 9), and rule-based recommendations."""

from __future__ import annotations

from collections.abc import Sequence

from .metrics import MacroMicro, meets
from .models import Gate, Thresholds
from .regression import RegressionResult
from .scoring import QueryScore

__all__ = ["decide_gate", "recommend"]


def _n(count: int, noun: str) -> str:
    """`1 query`, `2 queries`: the count with the noun in the right number."""
    plural = noun[:-1] + "ies" if noun.endswith("query") else noun + "s"
    return f"{count} {noun if count == 1 else plural}"


def _ids(scores: Sequence[QueryScore], limit: int = 5) -> str:
    ids = [s.query_id for s in scores]
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def decide_gate(scores: Sequence[QueryScore], agg: MacroMicro, regression: RegressionResult,
                thresholds: Thresholds, high_risk_domains: Sequence[str],
                ci_high: float | None = None) -> Gate:
    """Apply rule 9 in order; every reason that applies is listed."""
    fail: list[str] = []
    if not meets(agg.macro_precision, thresholds.mean_precision_min):
        fail.append(f"macro precision {agg.macro_precision:.4f} < {thresholds.mean_precision_min:g}")
    if not meets(agg.macro_recall, thresholds.mean_recall_min):
        fail.append(f"macro recall {agg.macro_recall:.4f} < {thresholds.mean_recall_min:g}")
    floor = [s for s in scores if s.expected and not meets(s.recall, thresholds.recall_floor)]
    if floor:
        fail.append(f"{_n(len(floor), 'query')} below the recall floor {thresholds.recall_floor:g}: {_ids(floor)}")
    if regression.regressed:
        fail.append(f"{_n(len(regression.regressed), 'query')} regressed against baseline "
                    f"{regression.baseline_id}: {', '.join(regression.regressed[:5])}"
                    + (" ..." if len(regression.regressed) > 5 else ""))
    critical = [s for s in scores if s.critical and not s.passed]
    if critical:
        fail.append(f"{_n(len(critical), 'critical query')} failed: {_ids(critical)}")
    errored = [s for s in scores if s.error is not None]
    if errored:
        fail.append(f"{_n(len(errored), 'item')} errored, the evaluation is incomplete: {_ids(errored)}")
    if thresholds.ci_gate == 1 and ci_high is not None and ci_high < 0:
        fail.append(f"95% interval of the mean F1 delta lies wholly below zero (upper {ci_high:+.4f})")
    if fail:
        return Gate(decision="fail", reasons=fail)
    review: list[str] = []
    drifting = [s for s in scores if s.drift_terms and not meets(s.term_drift_score, thresholds.drift_min)]
    if drifting:
        review.append(f"{_n(len(drifting), 'query')} failed the drift check: {_ids(drifting)}")
    unjudged = [s for s in scores if s.unjudged_terms]
    if unjudged:
        count = sum(len(s.unjudged_terms) for s in unjudged)
        review.append(f"{_n(count, 'term')} could not be judged for drift in {_ids(unjudged)}")
    if high_risk_domains:
        review.append(f"high-risk domain ({', '.join(high_risk_domains)}) needs sign-off")
    if review:
        return Gate(decision="review", reasons=review)
    return Gate(decision="pass", reasons=["every gate check passed"])


def recommend(scores: Sequence[QueryScore], agg: MacroMicro, regression: RegressionResult,
              thresholds: Thresholds, gate: Gate, high_risk_domains: Sequence[str]) -> list[str]:
    """Rule-based advice, each line computed from the results (rule 10)."""
    out: list[str] = []
    if regression.regressed:
        out.append(f"Review the {len(regression.regressed)} regressed queries side by side with "
                   f"baseline {regression.baseline_id} ({', '.join(regression.regressed[:5])}) "
                   "before releasing.")
    errored = [s for s in scores if s.error is not None]
    if errored:
        out.append(f"Re-run the {len(errored)} errored items ({_ids(errored)}); the gate cannot pass "
                   "on an incomplete evaluation.")
    empty = [s for s in scores if not s.generated and s.error is None]
    if empty:
        out.append(f"{_n(len(empty), 'query')} got an empty expansion ({_ids(empty)}): check that the "
                   "system under test answered every golden query.")
    forbidden = sum(1 for s in scores for t in s.drift_terms if s.drift_reasons.get(t) == "forbidden term")
    if forbidden:
        out.append(f"{_n(forbidden, 'forbidden term')} generated: add them as negative examples "
                   "to the expansion prompt.")
    low_recall = [s for s in scores if s.expected and not meets(s.recall, thresholds.recall_min)]
    if low_recall:
        out.append(f"{_n(len(low_recall), 'query')} miss expected synonyms (recall < "
                   f"{thresholds.recall_min:.2f}), e.g. {_ids(low_recall, 3)}: the prompt drops good terms.")
    if not meets(agg.macro_precision, thresholds.mean_precision_min):
        out.append(f"Macro precision {agg.macro_precision:.2f} is below {thresholds.mean_precision_min:.2f}: "
                   "the expansion adds terms the golden set does not expect; review the top false positives.")
    underweight = sum(1 for s in scores for r in s.failure_reasons if r.startswith("underweight:"))
    if underweight:
        out.append(f"{_n(underweight, 'expected term')} generated below min_weight: "
                   "check the weighting of expansions.")
    no_golden = [s for s in scores if not s.expected]
    if no_golden:
        out.append(f"{_n(len(no_golden), 'query')} without golden terms ({_ids(no_golden, 3)}): curate "
                   "expected expansions so recall means something for them.")
    if regression.golden_set_changed:
        out.append("The baseline was scored on a different golden set: deltas mix curation "
                   "changes with model changes.")
    if gate.decision == "review" and high_risk_domains:
        out.append(f"High-risk domain ({', '.join(high_risk_domains)}): a named approver must "
                   "sign off before release.")
    if not out:
        out.append("Every check passed; no action needed.")
    return out
