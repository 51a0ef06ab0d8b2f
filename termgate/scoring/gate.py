"""Thresholds -> pass / fail / review (SPEC §2 rule 9), and rule-based recommendations.

Both read `ScoreFacts`: the per-query columns the scorer leaves.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .scorer import ScoreFacts
from .metrics import EPSILON, MacroMicro, meets
from ..models import Gate, Thresholds
from .regression import (DIFFERENT_GOLDEN_SET, OTHER_REVISION, RegressionResult, newly_failing_aside,
                         other_name_note)

__all__ = ["NO_ACTION", "decide_gate", "recommend"]

NO_ACTION = "Every check passed; no action needed."
"""The recommendation when there is none: dropped where a note follows that asks for one."""


def _n(count: int, noun: str) -> str:
    """`1 query`, `2 queries`: the count with the noun in the right number."""
    plural = noun[:-1] + "ies" if noun.endswith("query") else noun + "s"
    return f"{count} {noun if count == 1 else plural}"


def _ids(facts: ScoreFacts, mask: np.ndarray, limit: int = 5) -> str:
    count = int(mask.sum())
    shown = ", ".join(facts.ids(mask, limit))
    return shown + (f" and {count - limit} more" if count > limit else "")


def _below(values: np.ndarray, minimum: float) -> np.ndarray:
    """Not meets(value, minimum), element-wise (the same comparison as metrics.meets)."""
    return ~(values >= minimum - EPSILON)


def decide_gate(facts: ScoreFacts, agg: MacroMicro, regression: RegressionResult,
                thresholds: Thresholds, high_risk_domains: Sequence[str],
                ci_high: float | None = None, retrieval: dict | None = None) -> Gate:
    """Apply rule 9 in order; every reason that applies is listed. `retrieval` is the
    run's retrieval summary (termgate.retrieval.effect), None when it measured none."""
    fail: list[str] = []
    if not meets(agg.macro_precision, thresholds.mean_precision_min):
        fail.append(f"macro precision {agg.macro_precision:.4f} < {thresholds.mean_precision_min:g}")
    if not meets(agg.macro_recall, thresholds.mean_recall_min):
        fail.append(f"macro recall {agg.macro_recall:.4f} < {thresholds.mean_recall_min:g}")
    floor = (facts.n_expected > 0) & _below(facts.recall, thresholds.recall_floor)
    if floor.any():
        fail.append(f"{_n(int(floor.sum()), 'query')} below the recall floor {thresholds.recall_floor:g}: "
                    f"{_ids(facts, floor)}")
    if regression.regressed:
        fail.append(f"{_n(len(regression.regressed), 'query')} regressed against baseline "
                    f"{regression.baseline_id}{newly_failing_aside(len(regression.newly_failing))}: "
                    f"{', '.join(regression.regressed[:5])}"
                    + (" ..." if len(regression.regressed) > 5 else ""))
    critical = facts.critical & ~facts.passed
    if critical.any():
        fail.append(f"{_n(int(critical.sum()), 'critical query')} failed: {_ids(facts, critical)}")
    errored = facts.errored
    if errored.any():
        fail.append(f"{_n(int(errored.sum()), 'item')} errored, the evaluation is incomplete: {_ids(facts, errored)}")
    if thresholds.ci_gate == 1 and ci_high is not None and ci_high < 0:
        fail.append(f"95% interval of the mean F1 delta lies wholly below zero (upper {ci_high:+.4f})")
    lost = _retrieval_reasons(retrieval, thresholds) if retrieval is not None else ([], [])
    fail += lost[0]
    if fail:
        return Gate(decision="fail", reasons=fail)
    review: list[str] = lost[1]
    drifting = (facts.n_drift > 0) & _below(facts.term_drift_score, thresholds.drift_min)
    if drifting.any():
        review.append(f"{_n(int(drifting.sum()), 'query')} failed the drift check: {_ids(facts, drifting)}")
    unjudged = facts.n_unjudged > 0
    if unjudged.any():
        count = int(facts.n_unjudged.sum())
        review.append(f"{_n(count, 'term')} could not be judged for drift in {_ids(facts, unjudged)}")
    if high_risk_domains:
        review.append(f"high-risk domain ({', '.join(high_risk_domains)}) needs sign-off")
    if review:
        return Gate(decision="review", reasons=review)
    return Gate(decision="pass", reasons=["every gate check passed"])


def _retrieval_reasons(summary: dict, thresholds: Thresholds) -> tuple[list[str], list[str]]:
    """(fail, review) reasons of the retrieval rules (docs/spec.md §2 rule 11): a query whose
    nDCG fell by more than retrieval_delta fails the gate in a high-risk domain or under
    retrieval_regressed = "fail", else sends the run to review; with ci_gate = 1 an interval
    of the mean nDCG change wholly below zero fails it, as for F1."""
    fail: list[str] = []
    review: list[str] = []
    label = summary["labels"]["ndcg"]
    against = "the unexpanded query" if summary["reference"] == "unexpanded" else "the baseline"
    regressed = summary["regressed_queries"]
    risky = set(summary["regressed_high_risk"])
    failing = regressed if thresholds.retrieval_regressed == "fail" else [q for q in regressed if q in risky]
    others = [q for q in regressed if q not in set(failing)]

    def line(ids: list[str], where: str) -> str:
        shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
        return (f"{_n(len(ids), 'query')}{where} lost more than {thresholds.retrieval_delta:g} {label} against "
                f"{against}: {shown}")

    if failing:
        fail.append(line(failing, " in a high-risk domain" if thresholds.retrieval_regressed != "fail" else ""))
    if others:
        review.append(line(others, ""))
    moved = [m for m in summary.get("identifiers", []) if m["moved_by"] == "expansion"]
    for m in moved:
        where = f"at rank {m['candidate_rank']}" if m["candidate_rank"] else f"out of the top {summary['depth']}"
        reason = (f"query {m['query_id']}: the expansion moved {m['document']!r}, which it must find first, "
                  f"{where}")
        (fail if m["high_risk"] or thresholds.retrieval_regressed == "fail" else review).append(reason)
    stats = summary.get("statistics") or {}
    ndcg = stats.get("ndcg") or {}
    if thresholds.ci_gate == 1 and ndcg.get("ci_high") is not None and ndcg["ci_high"] < 0:
        fail.append(f"95% interval of the mean {label} delta lies wholly below zero (upper {ndcg['ci_high']:+.4f})")
    return fail, review


def recommend(facts: ScoreFacts, agg: MacroMicro, regression: RegressionResult,
              thresholds: Thresholds, gate: Gate, high_risk_domains: Sequence[str]) -> list[str]:
    """Rule-based advice, each line computed from the results (rule 10)."""
    out: list[str] = []
    if regression.regressed:
        out.append(f"Review the {len(regression.regressed)} regressed queries side by side with "
                   f"baseline {regression.baseline_id} ({', '.join(regression.regressed[:5])}) "
                   "before releasing.")
    errored = facts.errored
    if errored.any():
        out.append(f"Re-run the {int(errored.sum())} errored items ({_ids(facts, errored)}); the gate cannot pass "
                   "on an incomplete evaluation.")
    empty = (facts.n_generated == 0) & ~errored
    if empty.any():
        out.append(f"{_n(int(empty.sum()), 'query')} got an empty expansion ({_ids(facts, empty)}): check that the "
                   "system under test answered every golden query.")
    forbidden = int(facts.n_forbidden.sum())
    if forbidden:
        out.append(f"{_n(forbidden, 'forbidden term')} generated: add them as negative examples "
                   "to the expansion prompt.")
    low_recall = (facts.n_expected > 0) & _below(facts.recall, thresholds.recall_min)
    if low_recall.any():
        out.append(f"{_n(int(low_recall.sum()), 'query')} miss expected synonyms (recall < "
                   f"{thresholds.recall_min:.2f}), e.g. {_ids(facts, low_recall, 3)}: the prompt drops good terms.")
    if not meets(agg.macro_precision, thresholds.mean_precision_min):
        out.append(f"Macro precision {agg.macro_precision:.2f} is below {thresholds.mean_precision_min:.2f}: "
                   "the expansion adds terms the golden set does not expect; review the top false positives.")
    underweight = int(facts.n_underweight.sum())
    if underweight:
        out.append(f"{_n(underweight, 'expected term')} generated below min_weight: "
                   "check the weighting of expansions.")
    no_golden = facts.n_expected == 0
    if no_golden.any():
        out.append(f"{_n(int(no_golden.sum()), 'query')} without golden terms ({_ids(facts, no_golden, 3)}): curate "
                   "expected expansions so recall means something for them.")
    if regression.rules_changed:
        out.append(regression.rules_changed)
    if regression.golden_set_changed:
        out.append(OTHER_REVISION if regression.other_revision else other_name_note(*regression.other_name)
                   if regression.other_name else DIFFERENT_GOLDEN_SET)
    if gate.decision == "review" and high_risk_domains:
        out.append(f"High-risk domain ({', '.join(high_risk_domains)}): a named approver must "
                   "sign off before release.")
    if not out:
        out.append(NO_ACTION)
    return out
