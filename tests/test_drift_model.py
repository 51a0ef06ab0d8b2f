"""The drift combiner (issue 18 item 2): the fit, the band, reasons in words, the coefficients
file and the content hash."""

from __future__ import annotations

import json
import re
from dataclasses import replace

import numpy as np
import pytest

from termgate.drift.calibration import CUTOFF_PRECISION, choose_band, choose_cutoff, grouped_folds, roc_auc
from termgate.drift.judge import DriftCandidate, EmbeddingDriftJudge
from termgate.drift.calibration import L2_CHOICES, choose_l2, log_loss
from termgate.drift.model import SHIPPED_MODEL, fit_logistic, load_model
from termgate.drift.signals import FEATURES
from termgate.errors import UsageError
from termgate.drift.lexicon import LexiconEntry

from drift_fakes import FakeEmbedder, entry, hand_lexicon, hand_model, unit


def test_fit_recovers_known_coefficients():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((40_000, 3))
    true_w, true_b = np.array([1.5, -2.0, 0.5]), 0.3
    y = (rng.random(40_000) < 1 / (1 + np.exp(-(x @ true_w + true_b)))).astype(float)
    w, b = fit_logistic(x, y, l2=1e-6)
    assert np.abs(w - true_w).max() < 0.06 and abs(b - true_b) < 0.05


def test_fit_matches_scikit_learn():
    linear_model = pytest.importorskip("sklearn.linear_model")
    rng = np.random.default_rng(3)
    x = rng.standard_normal((500, 5))
    y = (x[:, 0] - x[:, 1] + 0.5 * rng.standard_normal(500) > 0).astype(float)
    w, b = fit_logistic(x, y, l2=2.0)
    oracle = linear_model.LogisticRegression(C=1 / 2.0, tol=1e-12, max_iter=10_000).fit(x, y)
    assert np.allclose(w, oracle.coef_[0], atol=1e-5) and b == pytest.approx(oracle.intercept_[0], abs=1e-5)


def test_sample_weight_two_equals_the_row_twice():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    y = np.array([0.0, 1.0, 0.0, 1.0])
    doubled = fit_logistic(np.vstack([x, x[:1]]), np.append(y, y[0]), l2=0.5)
    weighted = fit_logistic(x, y, l2=0.5, sample_weight=np.array([2.0, 1, 1, 1]))
    assert np.allclose(doubled[0], weighted[0]) and doubled[1] == pytest.approx(weighted[1])


def test_l2_is_chosen_by_grouped_cv_log_loss():
    from termgate.drift.calibration import cross_validate
    rng = np.random.default_rng(11)
    x = rng.standard_normal((300, 8))  # two informative columns, six of noise
    y = (x[:, 0] - x[:, 1] + 1.5 * rng.standard_normal(300) > 0).astype(float)
    groups = [f"g{i // 3}" for i in range(300)]
    best, losses = choose_l2(x, y, groups)
    assert set(losses) == set(L2_CHOICES) and losses[best] == min(losses.values())
    assert losses[3.0] == pytest.approx(log_loss(cross_validate(x, y, groups, 5, 3.0), y))
    assert len(set(losses.values())) == len(L2_CHOICES)  # the penalty changes the fit


def test_band_holds_at_most_ten_percent_with_the_review_reasons():
    p = np.linspace(0, 1, 201)  # one probability every 0.005
    low, high = choose_band(0.5, p)
    inside = ((p >= low) & (p < high)).mean()
    assert inside <= 0.10 and low <= 0.5 <= high
    wider = ((p >= low - 0.005) & (p < high + 0.005)).mean()
    assert wider > 0.10  # the widest such band
    assert choose_band(0.5, np.full(10, 0.5)) == (0.5, 0.5)  # everything at the cut-off: no band
    # terms a review reason already sends to review use up the budget: 16 of the 201 far from
    # the cut-off leave room for at most 20 − 16 = 4 terms in the band (0.5 ± 0.01: 0.49, 0.495, 0.5, 0.505)
    review = (p < 0.04) | (p > 0.96)  # 8 + 8 terms
    low, high = choose_band(0.5, p, review)
    assert (((p >= low) & (p < high)) | review).sum() <= 20 and (low, high) == (0.49, 0.51)


def test_cutoff_is_the_lowest_with_cv_precision_095():
    p = np.array([0.55, 0.6, 0.7, 0.8, 0.9, 0.91, 0.95, 0.96, 0.97, 0.98, 0.99])
    drift = np.array([False, False] + [True] * 9)
    assert CUTOFF_PRECISION == 0.95
    assert choose_cutoff(p, drift) == 0.61  # above 0.6 every flag is drift; from 0.56, 9 of 10 (0.90)
    assert choose_cutoff(p, drift, precision=0.9) == 0.56  # 9 of 11 flags drift below 0.56 (0.82); 9 of 10 from 0.56
    # a term sent to review is not flagged, so it does not count against the cut-off
    assert choose_cutoff(p, drift, precision=0.9, review=p == 0.6) == 0.5  # 9 of 10 from 0.50
    assert choose_cutoff(p, drift, review=p == 0.6) == 0.56


def test_roc_auc_with_ties():
    assert roc_auc(np.array([0.9, 0.5, 0.5, 0.1]), np.array([True, True, False, False])) == pytest.approx(0.875)


def test_groups_never_split_across_folds():
    groups = [f"g{i // 3}" for i in range(60)]
    folds = grouped_folds(groups, 5)
    assert all(len({f for f, g in zip(folds, groups) if g == grp}) == 1 for grp in set(groups))
    assert set(folds) == set(range(5))


def judge(model, vectors=None, entries=None):
    return EmbeddingDriftJudge(FakeEmbedder(vectors), model, hand_lexicon(entries))


def test_band_verdict_is_unjudged_and_outside_is_decided():
    # p = sigmoid(5 − 10·sim_query): sim 0.5 -> 0.5 (band), 1 -> 0.007, 0 -> 0.993
    model = hand_model({"sim_query": -10.0}, intercept=5.0, band=(0.4, 0.6))
    mean = model.mean.copy()
    mean[FEATURES.index("sim_query")] = 0.5  # reasons compare with an average term
    model = replace(model, mean=mean, intercept=0.0)  # the same probabilities
    vectors = {"q": unit((0, 1)), "middle": unit((0, 0.5), (1, 0.8660254)), "same": unit((0, 1)), "far": unit((2, 1))}
    middle, same, far = judge(model, vectors).judge([DriftCandidate("1", "q", t, None, None, ())
                                                     for t in ("middle", "same", "far")])
    assert middle.drift is None and middle.reason.startswith("unjudged 0.50 (uncertain band 0.40-0.60")
    assert same.drift is False and same.reason.startswith("not drift 0.01: close to the query 1.00")
    assert far.drift is True and far.reason.startswith("drift 0.99: far from the query 0.00")


def test_reasons_name_the_top_signals_in_words():
    model = hand_model({"lookalike": 6.0, "wn_unrelated": 2.0, "sim_expected_max": -3.0, "wn_synonym_query": -6.0,
                        "wn_synonym_expected": -6.0}, intercept=-1.0)
    entries = {"tort": entry(["n1"], {"n2": 1}), "torte": entry(["n5"], {"n6": 1}),
               "civil wrong": entry(["n1"], {"n2": 1}), "apoplexy": entry(["n7"]), "stroke": entry(["n7"]),
               "cerebrovascular accident": entry(["n7"])}
    vectors = {"apoplexy": unit((0, 1)), "cerebrovascular accident": unit((0, 0.71), (1, 0.7042))}
    torte, apoplexy = judge(model, vectors, entries).judge([
        DriftCandidate("1", "tort", "torte", "legal", None, ("civil wrong",)),
        DriftCandidate("2", "stroke", "apoplexy", "medical", None, ("cerebrovascular accident",))])
    assert torte.drift is True
    assert torte.reason.startswith("drift 0.9") and "looks like 'tort' but unrelated in meaning" in torte.reason
    assert "no WordNet relation" in torte.reason
    assert apoplexy.drift is False and apoplexy.reason.startswith("not drift 0.0")
    assert "WordNet synonym of 'stroke'" in apoplexy.reason
    assert "close to expected 'cerebrovascular accident' 0.71" in apoplexy.reason


def test_reasons_for_another_sense_an_opposite_and_a_definition():
    model = hand_model({"wn_other_sense": 6.0, "opposite_word": 6.0, "wn_gloss_overlap": -8.0}, intercept=-1.0)
    court = LexiconEntry(("n1", "n3"), {"n1": 0, "n3": 0, "n10": 1, "n30": 1}, frozenset(), frozenset(),
                         senses={"n1": {"n1": 0, "n10": 1}, "n3": {"n3": 0, "n30": 1}})  # law court, sports court
    entries = {"court": court, "tribunal": entry(["n2"], {"n10": 1}),
               "basketball court": entry(["n4"], {"n3": 1, "n30": 2}),
               "percolator": LexiconEntry(("n5",), {"n5": 0}, frozenset(), frozenset(), gloss=frozenset({"coffe"})),
               "coffee maker": entry(["n6"])}
    shifted, opposite, defined = judge(model, {}, entries).judge([
        DriftCandidate("1", "court", "basketball court", "legal", None, ("tribunal",)),
        DriftCandidate("2", "acquittal", "guilty verdict", "legal", None, ("not guilty verdict",)),
        DriftCandidate("3", "coffee maker", "percolator", "ecommerce", None, ())])
    assert shifted.drift is True and "WordNet relates it to 'court' only in another sense" in shifted.reason
    assert opposite.drift is True and "the opposite of 'not guilty verdict' by one word" in opposite.reason
    assert defined.drift is False and "WordNet's definition ties it to 'coffee maker'" in defined.reason


def test_shipped_coefficients_load_and_hold_their_band():
    model = load_model()
    assert model.features == FEATURES and len(model.weights) == len(FEATURES)
    assert model.band[0] <= model.cutoff <= model.band[1] and model.sha256
    raw = json.loads(SHIPPED_MODEL.read_text())
    assert raw["model"] == "logistic-regression" and raw["trained_on"]


def test_write_never_overwrites(tmp_path):
    model = hand_model({"sim_query": -1.0})
    with pytest.raises(UsageError, match="shipped"):
        model.write(SHIPPED_MODEL)
    out = tmp_path / "refit.json"
    model.write(out)
    assert load_model(out).weights[FEATURES.index("sim_query")] == -1.0
    out.write_text("keep me")
    with pytest.raises(UsageError, match="exists"):
        model.write(out)
    assert out.read_text() == "keep me" and sorted(p.name for p in tmp_path.iterdir()) == ["refit.json"]


@pytest.mark.parametrize("edit, message", [
    (lambda raw: raw["weights"].__setitem__(3, float("nan")), "NaN is not a JSON number"),
    (lambda raw: raw.__setitem__("intercept", float("-inf")), "-Infinity is not a JSON number"),
    (lambda raw: raw["scale"].__setitem__(0, 0.0), "finite numbers each (scale > 0)"),
    (lambda raw: raw["mean"].pop(), "finite numbers each"),
    (lambda raw: raw.__setitem__("band", [0.9, 0.95]), "must hold the cut-off"),
])
def test_coefficients_that_cannot_judge_are_refused(tmp_path, edit, message):
    """NaN coefficients make every probability NaN, which is neither drift nor unjudged: such
    a file would switch drift detection off without a word."""
    raw = json.loads(SHIPPED_MODEL.read_text())
    edit(raw)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(raw), encoding="utf-8")
    with pytest.raises(UsageError, match=re.escape(message)):
        load_model(path)


def test_a_refit_that_cannot_judge_is_not_written(tmp_path):
    model = hand_model({"sim_query": float("nan")})
    with pytest.raises(UsageError, match="cannot judge, nothing was written"):
        model.write(tmp_path / "refit.json")
    assert list(tmp_path.iterdir()) == []


def test_band_and_cutoff_settings_are_checked():
    from termgate.drift.resolve import combiner_model

    assert combiner_model({"threshold": 0.6, "band": [0.55, 0.7]}).band == (0.55, 0.7)
    with pytest.raises(UsageError, match="band"):
        combiner_model({"threshold": 0.6, "band": [0.7, 0.8]})  # must hold the cut-off
    with pytest.raises(UsageError, match="band"):
        combiner_model({"band": "wide"})


def test_config_changes_change_the_content_hash():
    from termgate.evaluation import content_hash
    from termgate.models import Thresholds

    def digest(model):
        return content_hash("g", "c", Thresholds(), judge(model), ["medical"], None)

    base = hand_model({"sim_query": -1.0})
    assert digest(base) == digest(hand_model({"sim_query": -1.0}))
    assert digest(base) != digest(base.with_cutoff(0.5, (0.45, 0.55)))       # the band
    assert digest(base) != digest(base.with_cutoff(0.6, (0.55, 0.65)))       # the cut-off
    assert digest(base) != digest(hand_model({"sim_query": -1.1}))          # the coefficients
    shipped = load_model()
    assert judge(shipped).config()["coefficients_sha256"] == shipped.sha256
