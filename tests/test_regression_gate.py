"""Regression against a baseline (rule 8) and the gate decision (rule 9)."""

from __future__ import annotations

import pytest

from termgate.config import Settings
from termgate.models import Thresholds
from termgate.scoring.regression import Baseline, BaselineRow, compare_to_baseline

from conftest import golden_row


def baseline(rows: dict, golden_hash=None) -> Baseline:
    return Baseline("base-1", "test", {q: BaselineRow(f1, passed) for q, (f1, passed) in rows.items()}, golden_hash)


@pytest.mark.parametrize("base_f1, base_passed, f1, passed, status", [
    (0.9, True, 0.75, True, "regressed"),      # dropped 0.15 > 0.1
    (0.9, True, 0.8, True, "unchanged"),       # dropped exactly 0.1: not more than delta
    (0.7, True, 0.69, False, "regressed"),     # passed before, fails now
    (0.5, False, 0.65, False, "improved"),     # rose 0.15
    (0.5, False, 0.55, True, "improved"),      # failed before, passes now
    (0.8, False, 0.85, False, "unchanged"),
])
def test_classification(base_f1, base_passed, f1, passed, status):
    result = compare_to_baseline([("q", f1, passed)], baseline({"q": (base_f1, base_passed)}), 0.1)
    assert result.status["q"] == status
    assert (result.regressed == ["q"]) == (status == "regressed")
    assert (result.improved == ["q"]) == (status == "improved")


def test_added_and_removed_never_regress():
    result = compare_to_baseline([("new", 0.0, False)], baseline({"old": (1.0, True)}), 0.1)
    assert result.added == ["new"] and result.removed == ["old"]
    assert not result.detected


def test_golden_set_change_is_reported():
    result = compare_to_baseline([("q", 1.0, True)], baseline({"q": (1.0, True)}, golden_hash="aaa"), 0.1,
                                 golden_hash="bbb")
    assert result.golden_set_changed
    assert "different golden set" in result.summary


def test_no_baseline_says_so():
    result = compare_to_baseline([("q", 1.0, True)], None, 0.1)
    assert not result.detected and result.regressed == [] and "No baseline" in result.summary


GOOD = [{"query_id": "q1", "terms": ["a", "b"]}, {"query_id": "q2", "terms": ["c", "d"]}]


def two(domain="ecommerce", critical=False, forbidden=None):
    return [golden_row("q1", "one", ["a", "b"], domain=domain, critical=critical, forbidden=forbidden),
            golden_row("q2", "two", ["c", "d"], domain=domain)]


def test_gate_pass(score):
    run = score(two(), GOOD)
    assert run.gate.decision == "pass"


def test_gate_review_for_high_risk_domain(score):
    run = score(two(domain="Medical"), GOOD)  # normalised to "medical"
    assert run.domains == ["medical"]
    assert run.gate.decision == "review"
    assert any("high-risk" in r for r in run.gate.reasons)


def test_gate_fail_on_macro_recall(score):
    run = score(two(), [{"query_id": "q1", "terms": ["a"]}, {"query_id": "q2", "terms": ["c", "d"]}])
    # q1 recall 0.5 -> macro recall 0.75 < 0.85, and below the recall floor 0.6
    assert run.gate.decision == "fail"
    assert any(r.startswith("macro recall 0.7500 < 0.85") for r in run.gate.reasons)
    assert any("recall floor" in r for r in run.gate.reasons)


def test_gate_fail_on_critical_query(score):
    thresholds = Thresholds(mean_recall_min=0.0, mean_precision_min=0.0, recall_floor=0.0)
    run = score(two(critical=True), [{"query_id": "q1", "terms": ["a"]}, {"query_id": "q2", "terms": ["c", "d"]}],
                thresholds=thresholds)
    assert run.gate.decision == "fail"
    assert run.gate.reasons == ["1 critical query failed: q1"]


def test_gate_fail_on_regression(score):
    run = score(two(), GOOD, baseline=baseline({"q1": (1.0, True), "q2": (1.0, True)}))
    assert run.gate.decision == "pass"
    worse = [{"query_id": "q1", "terms": ["a", "b", "x"]}, {"query_id": "q2", "terms": ["c", "d"]}]
    thresholds = Thresholds(mean_precision_min=0.0)
    run = score(two(), worse, baseline=baseline({"q1": (1.0, True), "q2": (1.0, True)}), thresholds=thresholds)
    # q1 F1 1.0 -> 0.8: a drop of 0.2
    assert run.regression.regressed == ["q1"]
    assert run.gate.decision == "fail"


def test_gate_review_on_drift_check(score):
    rows = [golden_row("q1", "one", ["a", "b", "c"], forbidden=["bad"])]
    run = score(rows, [{"query_id": "q1", "terms": ["a", "b", "c", "bad"]}],
                thresholds=Thresholds(mean_precision_min=0.7, drift_min=0.9))
    assert run.scores[0].term_drift_score == 0.75
    assert run.gate.decision == "review"
    assert run.gate.reasons == ["1 query failed the drift check: q1"]


def test_gate_fail_on_errored_item(score):
    run = score(two(), GOOD, errors={"q2": "unparseable reply"})
    assert run.gate.decision == "fail"
    assert any("errored" in r for r in run.gate.reasons)


def test_ci_gate_fails_when_interval_below_zero(score):
    golden = [golden_row(f"q{i}", f"query {i}", ["a", "b"]) for i in range(30)]
    generated = [{"query_id": f"q{i}", "terms": ["a", "b", "x"]} for i in range(30)]  # F1 0.8 each
    base = baseline({f"q{i}": (0.85, True) for i in range(30)})  # every delta -0.05: not a regression
    loose = dict(mean_precision_min=0.0, precision_min=0.0)
    assert score(golden, generated, baseline=base, thresholds=Thresholds(**loose)).gate.decision == "pass"
    run = score(golden, generated, baseline=base, thresholds=Thresholds(ci_gate=1, **loose))
    assert run.gate.decision == "fail"
    assert "wholly below zero" in run.gate.reasons[0]


def test_recommendations_follow_results(score):
    run = score(two(domain="medical"), [{"query_id": "q1", "terms": []}, {"query_id": "q2", "terms": ["c", "d"]}])
    text = " ".join(run.recommendations)
    assert "empty expansion" in text and "q1" in text
    clean = score(two(), GOOD)
    assert clean.recommendations == ["Every check passed; no action needed."]


def test_settings_change_high_risk_domains(score, monkeypatch):
    monkeypatch.setenv("TERMGATE_HIGH_RISK_DOMAINS", "ecommerce")
    from termgate.config import load_settings
    assert load_settings().high_risk_domains == ("ecommerce",)
    assert Settings().high_risk_domains == ("legal", "medical")


# ---------------------------------------------------------------- how "regressed" reads (issue 31 item 9)


@pytest.mark.parametrize("status, f1, base_f1, label", [
    ("regressed", 0.75, 0.7, "newly failing"),   # passed, fails now, F1 rose
    ("regressed", 0.7, 0.7, "newly failing"),    # F1 unchanged
    ("regressed", 0.7 - 5e-10, 0.7, "newly failing"),  # within the 1e-9 tolerance: did not fall
    ("regressed", 0.69, 0.7, "regressed"),       # F1 fell (however little)
    ("regressed", 0.5, None, "regressed"),       # no baseline F1 known
    ("regressed", 0.5, float("nan"), "regressed"),
    ("improved", 0.9, 0.5, "improved"),
    (None, 0.9, None, None),
])
def test_regression_label(status, f1, base_f1, label):
    from termgate.scoring.regression import regression_label

    assert regression_label(status, f1, base_f1) == label


def test_a_regressed_query_whose_f1_rose_is_newly_failing_in_the_summary_and_the_gate():
    result = compare_to_baseline([("up", 0.75, False), ("down", 0.3, False)],
                                 baseline({"up": (0.7, True), "down": (0.9, True)}), 0.1)
    assert result.regressed == ["up", "down"] and result.status["up"] == "regressed"  # the rule is unchanged
    assert result.newly_failing == ["up"]
    assert "2 regressed (1 of them newly failing: passed in the baseline, fails now, F1 not down)" in result.summary


def test_the_gate_reason_says_newly_failing(score):
    # q1 generates a, x: precision 0.5 < 0.6 fails; F1 0.5 rose from the baseline's 0.4
    run = score(two(), [{"query_id": "q1", "terms": ["a", "x"]}, {"query_id": "q2", "terms": ["c", "d"]}],
                baseline=Baseline("base-1", "test", {"q1": BaselineRow(0.4, True), "q2": BaselineRow(1.0, True)}))
    assert run.regression.regressed == ["q1"]
    assert any(r.startswith("1 query regressed against baseline base-1 (1 of them newly failing") for r in
               run.gate.reasons)
