"""Statistics against SciPy on fixed data (SPEC §6 Statistics, issue 7)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats as sp

from termgate.models import Thresholds
from termgate.scoring.regression import Baseline, BaselineRow
from termgate.report import build_report, render_html, report_json
from termgate.scoring.stats import bootstrap_interval, holm, mde, sign_flip_p_value

from conftest import golden_row

FIXED = np.array([-0.2, -0.1, -0.1, 0.0, 0.05, -0.3, 0.1, -0.05, -0.15, 0.0, -0.25, 0.2, -0.1, -0.05, 0.0,
                  -0.4, 0.1, -0.2, -0.05, 0.0, 0.3, -0.1, -0.1, 0.05, -0.2])


def scipy_interval(d):
    r = sp.bootstrap((d,), np.mean, method="percentile", n_resamples=10_000, random_state=np.random.default_rng(0))
    return r.confidence_interval.low, r.confidence_interval.high


def scipy_p(d):
    return sp.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=10_000, vectorized=True,
                               random_state=np.random.default_rng(0)).pvalue


def test_bootstrap_interval_equals_scipy_on_fixed_data():
    assert bootstrap_interval(FIXED) == pytest.approx(scipy_interval(FIXED), abs=1e-12)


def test_bootstrap_with_few_distinct_values_matches_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(3)
    d = rng.choice([-0.25, -0.125, 0.0, 0.0, 0.125], size=400)  # the grouped (multinomial) path
    low, high = bootstrap_interval(d)
    s_low, s_high = scipy_interval(d)
    width = s_high - s_low
    assert abs(low - s_low) < 0.05 * width and abs(high - s_high) < 0.05 * width


@pytest.mark.parametrize("data", [FIXED, FIXED[:10], np.array([0.1, -0.2, 0.3, 0.0, 0.05, -0.05, 0.2, 0.1])])
def test_sign_flip_p_value_equals_scipy(data):
    # 8 and 10 values: exact over all 2**n sign patterns; 25 values: randomised, +1 adjustment
    ours = sign_flip_p_value(data)
    theirs = scipy_p(data)
    if len(data) <= 13:
        assert ours == pytest.approx(theirs, abs=1e-12)
    else:
        assert ours == pytest.approx(theirs, abs=0.01)


def test_holm_correction_hand_computed():
    # sorted p: 0.01 (×3 = 0.03), 0.02 (×2 = 0.04), 0.04 (×1, but monotone: max(0.04, 0.04))
    assert holm({"a": 0.04, "b": 0.01, "c": 0.02}) == pytest.approx({"a": 0.04, "b": 0.03, "c": 0.04})
    assert holm({"a": 0.5, "b": 0.6}) == pytest.approx({"a": 1.0, "b": 1.0})


def test_mde_formula():
    assert mde(FIXED) == pytest.approx(2.8016 * np.std(FIXED, ddof=1) / np.sqrt(len(FIXED)))


def test_report_statistics_block_and_gate(score):
    golden = [golden_row(f"q{i}", f"query {i}", ["a", "b", "c", "d"], domain="legal" if i % 2 else "ecommerce")
              for i in range(20)]
    generated = [{"query_id": f"q{i}", "terms": ["a", "b", "c"] if i % 3 else ["a", "b"]} for i in range(20)]
    base = Baseline("base", "test", {f"q{i}": BaselineRow(1.0, True, 1.0, 1.0) for i in range(20)})
    run = score(golden, generated, baseline=base, thresholds=Thresholds(regression_delta=0.5, recall_floor=0.0,
                                                                        mean_recall_min=0.0, recall_min=0.0))
    report = json.loads(report_json(build_report(run)))
    st = report["statistics"]
    deltas = np.array([s.f1 - 1.0 for s in run.scores])
    assert st["f1"]["mean_delta"] == pytest.approx(deltas.mean())
    assert (st["f1"]["ci_low"], st["f1"]["ci_high"]) == pytest.approx(scipy_interval(deltas))
    assert st["f1"]["n"] == 20 and st["seed"] == 0 and st["resamples"] == 10_000
    assert set(st["by_domain"]) == {"legal", "ecommerce"}
    assert st["by_domain"]["legal"]["f1"]["p_value_holm"] >= st["by_domain"]["legal"]["f1"]["p_value"]
    assert st["mde_f1"] == pytest.approx(mde(deltas))
    assert "Statistics (paired" in render_html(build_report(run))
    gated = score(golden, generated, baseline=base, thresholds=Thresholds(
        regression_delta=0.5, recall_floor=0.0, mean_recall_min=0.0, recall_min=0.0, ci_gate=1))
    assert gated.gate.decision == "fail" and "wholly below zero" in gated.gate.reasons[-1]


def test_small_set_warns_about_minimum_detectable_effect(score):
    golden = [golden_row(f"q{i}", f"query {i}", ["a", "b"]) for i in range(6)]
    generated = [{"query_id": f"q{i}", "terms": ["a", "b"] if i % 2 else ["a"]} for i in range(6)]
    base = Baseline("base", "test", {f"q{i}": BaselineRow(0.8, True, 1.0, 1.0) for i in range(6)})
    run = score(golden, generated, baseline=base, thresholds=Thresholds(mean_recall_min=0, recall_floor=0,
                                                                        recall_min=0))
    assert run.statistics["mde_warning"] and "regression_delta" in run.statistics["mde_warning"]
    assert any("Golden set too small" in r for r in run.recommendations)


def test_noise_floor_marks_deltas_of_repeated_runs(score):
    golden = [golden_row("q1", "one", ["a", "b"]), golden_row("q2", "two", ["c", "d"])]
    generated = [{"query_id": "q1", "terms": ["a"]}, {"query_id": "q2", "terms": ["c", "d"]}]
    base = Baseline("base", "test", {"q1": BaselineRow(1.0, True), "q2": BaselineRow(1.0, True)})
    # an earlier run of the same prompt version scored q1 at 1.0: q1 varies by 1/3 between repeats
    repeat = Baseline("rep", "test", {"q1": BaselineRow(1.0, True), "q2": BaselineRow(1.0, True)})
    from termgate.scoring.stats import QueryMetrics, mark_noise
    run = score(golden, generated, baseline=base)
    metrics = QueryMetrics([s.query_id for s in run.scores], [s.domain for s in run.scores],
                           np.array([s.precision for s in run.scores]), np.array([s.recall for s in run.scores]),
                           np.array([s.f1 for s in run.scores]), np.array([False, False]))
    info, floors, within = mark_noise(metrics, base, [repeat])
    assert floors == [pytest.approx(1 - 2 / 3), 0.0] and within == [True, False]
    assert info == {"repeat_runs": 1, "queries_with_variation": 1, "deltas_within_noise": 1,
                    "mean_floor": pytest.approx((1 / 3) / 2)}
