"""Issue 36 "Measured" and "knowing what it does not know": the calibration error and the
shares on a hand-computed example, the previous combiner scored by feature name, a
coefficients file naming an unknown signal, and terms a review reason sends to review."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.drift import signals as signals_module
from termgate.drift.calibration import LabelledRow, calibrate_combiner
from termgate.drift.judge import DriftCandidate, EmbeddingDriftJudge
from termgate.drift.measures import GOALS, expected_calibration_error, figures, report_lines, unmet_goals
from termgate.drift.model import SHIPPED_MODEL, load_model
from termgate.drift.signals import FEATURES
from termgate.errors import UsageError

from drift_fakes import FakeEmbedder, hand_lexicon, hand_model, unit


def row(term: str, drift: bool, kind: str = "related") -> LabelledRow:
    return LabelledRow(term, "g", "medical", "q", (), term, drift, kind, "hand")


# seven terms: (probability, drift?)
EXAMPLE = [(0.05, False), (0.05, True), (0.15, True), (0.55, False), (0.85, True), (0.95, True), (1.0, False)]


def test_calibration_error_and_shares_by_hand():
    p = np.array([q for q, _ in EXAMPLE])
    drift = np.array([d for _, d in EXAMPLE])
    # 10 equal-width bins; each bin adds |Σ p − Σ drift| / all terms (= its share × |mean p − drift rate|):
    #   [0.0, 0.1): 0.05, 0.05 with one drift   |0.10 − 1| = 0.90
    #   [0.1, 0.2): 0.15, drift                 |0.15 − 1| = 0.85
    #   [0.5, 0.6): 0.55, not drift             |0.55 − 0| = 0.55
    #   [0.8, 0.9): 0.85, drift                 |0.85 − 1| = 0.15
    #   [0.9, 1.0]: 0.95 drift and 1.0 not      |1.95 − 1| = 0.95  (1.0 falls in the last bin)
    #   (0.90 + 0.85 + 0.55 + 0.15 + 0.95) / 7 = 3.4 / 7
    assert expected_calibration_error(p, drift) == pytest.approx(3.4 / 7)
    # verdicts: flagged at p ≥ 0.5; the terms at 0.55 and 0.85 sent to review (not flagged)
    flagged, unjudged = p >= 0.5, np.isin(p, [0.55, 0.85])
    f = figures("x", [row(f"t{i}", d) for i, (_, d) in enumerate(EXAMPLE)], flagged, p, unjudged, p)
    assert f.ece == pytest.approx(3.4 / 7)
    assert f.drift_below == pytest.approx(1 / 4)  # of the 4 drift terms, one (0.05) scored below 0.1
    assert f.review == pytest.approx(2 / 7) and f.unjudged == 2
    assert f.precision == pytest.approx(1 / 2)  # flagged and judged: 0.95 (drift), 1.0 (not)
    assert f.recall == pytest.approx(1 / 4)  # 0.85 is drift but reviewed: not counted as caught
    # right: 0.05 (not drift, not flagged) and 0.95 (drift, flagged); the two reviewed count as wrong
    assert f.accuracy == pytest.approx(2 / 7)
    assert unmet_goals(f) == ["recall at precision", "drift < 0.1", "review"]


def test_goals_are_met_only_at_their_bounds():
    rows = [row(f"d{i}", True) for i in range(20)] + [row(f"n{i}", False) for i in range(20)]
    drift = np.array([r.drift for r in rows])
    # 18 of 20 drift flagged (recall 0.9), 2 false flags (precision 18/20 = 0.9); one drift
    # scored 0.05 (5% of drift below 0.1); 4 of 40 terms to review (10%)
    p = np.where(drift, 0.9, 0.2)
    p[0], p[1] = 0.05, 0.3
    p[20], p[21] = 0.9, 0.9
    unjudged = np.zeros(40, bool)
    unjudged[[30, 31, 32, 33]] = True
    f = figures("x", rows, p >= 0.5, p, unjudged, p)
    assert (f.precision, f.recall, f.drift_below, f.review) == pytest.approx((0.9, 0.9, 0.05, 0.1))
    assert unmet_goals(f) == []
    unjudged[34] = True
    assert unmet_goals(figures("x", rows, p >= 0.5, p, unjudged, p)) == ["review"]
    assert GOALS == {"precision": 0.9, "recall": 0.85, "drift_below": 0.05, "review": 0.10}
    # a set with no drift rows (synonym pairs only) has no recall to miss and no drift to score
    clean = figures("x", rows[20:], p[20:] >= 0.5, p[20:], unjudged[20:], p[20:])
    assert np.isnan(clean.drift_below) and clean.drift_rows == 0 and unmet_goals(clean) == ["review"]


def model_file(tmp_path, features, mean, scale, weights, intercept=0.5, name="m.json"):
    path = tmp_path / name
    path.write_text(json.dumps({"model": "logistic-regression", "features": features, "mean": mean, "scale": scale,
                                "weights": weights, "intercept": intercept, "cutoff": 0.7, "band": [0.6, 0.8]}),
                    encoding="utf-8")
    return path


def test_a_model_naming_fewer_features_scores_them_by_name(tmp_path):
    """The previous combiner names its own signals: they are matched by name, in any order, and
    the signals it does not name weigh nothing."""
    model = load_model(model_file(tmp_path, ["lookalike", "sim_query"], [0.2, 0.5], [0.5, 0.25], [2.0, -1.0]))
    assert model.features == FEATURES and model.named == 2
    x = np.random.default_rng(5).random((4, len(FEATURES)))
    lookalike, sim = x[:, FEATURES.index("lookalike")], x[:, FEATURES.index("sim_query")]
    z = 2.0 * (lookalike - 0.2) / 0.5 - 1.0 * (sim - 0.5) / 0.25 + 0.5
    assert model.probability(x) == pytest.approx(1 / (1 + np.exp(-z)))
    again = load_model(model_file(tmp_path, ["sim_query", "lookalike"], [0.5, 0.2], [0.25, 0.5], [-1.0, 2.0],
                                  name="reordered.json"))
    assert again.probability(x) == pytest.approx(model.probability(x))
    previous = load_model("data/drift/previous_model.json")  # today's shipped coefficients, kept
    raw = json.loads(open("data/drift/previous_model.json", encoding="utf-8").read())
    assert previous.named == len(raw["features"]) and previous.cutoff == raw["cutoff"]


@pytest.mark.parametrize("features, message", [
    (["sim_query", "made_up"], "it names 1 signal(s) this termgate does not compute: 'made_up'"),
    (["sim_query", "sim_query"], "it names a signal twice: 'sim_query'"),
])
def test_a_model_naming_an_unknown_or_repeated_feature_is_refused(tmp_path, features, message):
    path = model_file(tmp_path, features, [0, 0], [1, 1], [1, 1])
    with pytest.raises(UsageError, match="^cannot read drift coefficients .*: " + message.replace("(", r"\(")
                       .replace(")", r"\)") + "$"):
        load_model(path)


def test_calibrate_stops_on_an_unknown_feature_with_one_line(tmp_path):
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps({"group": g, "query": "q" + g, "term": t, "label": label})
                            + "\n" for g, t, label in (("1", "a", "drift"), ("2", "b", "not_drift"))), encoding="utf-8")
    bad = model_file(tmp_path, ["sim_query", "made_up"], [0, 0], [1, 1], [1, 1])
    result = CliRunner().invoke(main, ["drift", "calibrate", "--data", str(data), "--previous", str(bad),
                                       "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 2
    assert result.output.strip() == (f"error: cannot read drift coefficients {bad}: it names 1 signal(s) this "
                                     "termgate does not compute: 'made_up'")
    assert not (tmp_path / "s.duckdb").exists()  # stopped before any work


def fake_reason(s):
    """A review rule that reads a Signals row: 'other sense' when sim_query is exactly 0.5."""
    return "its only relation is through another sense" if abs(s["sim_query"] - 0.5) < 1e-6 else None


def test_the_judge_sends_a_review_reason_to_review(monkeypatch):
    # p = sigmoid(5 − 10·sim_query): 'middle' (sim 0.5) is 0.5, outside the band (0.2, 0.3)
    model = hand_model({"sim_query": -10.0}, intercept=5.0, cutoff=0.25, band=(0.2, 0.3))
    vectors = {"q": unit((0, 1)), "middle": unit((0, 0.5), (1, 0.8660254)), "far": unit((2, 1))}
    judge = EmbeddingDriftJudge(FakeEmbedder(vectors), model, hand_lexicon())
    candidates = [DriftCandidate("1", "q", t, None, None, ()) for t in ("middle", "far")]
    monkeypatch.delattr(signals_module, "review_reason", raising=False)
    before = judge.judge(candidates)
    assert before[0].drift is True and before[0].reason.startswith("drift 0.50")  # no rule: decided
    monkeypatch.setattr(signals_module, "review_reason", fake_reason, raising=False)
    middle, far = judge.judge(candidates)
    assert middle.drift is None
    assert middle.reason.startswith("unjudged 0.50 (its only relation is through another sense; leaning drift): ")
    assert far.drift is True and far.reason.startswith("drift 0.99")  # no reason: decided by probability


def test_calibration_counts_review_reasons_for_the_refit_not_the_previous(monkeypatch):
    vectors = {"q": unit((0, 1)), "middle": unit((0, 0.5), (1, 0.8660254))}
    rows = ([LabelledRow(f"n{i}", f"g{i}", "medical", "q", (), "middle" if i == 0 else f"near {i}", False, "related", "h")
             for i in range(12)]
            + [LabelledRow(f"d{i}", f"g{i}", "medical", "q", (), f"far {i}", True, "unrelated", "h") for i in range(12)])
    for i in range(1, 12):
        vectors[f"near {i}"] = unit((0, 1), (3 + i, 0.2))
    monkeypatch.setattr(signals_module, "review_reason", fake_reason, raising=False)
    previous = replace(hand_model({"sim_query": -10.0}, intercept=5.0, cutoff=0.5, band=(0.5, 0.5)),
                       trained_on="train.jsonl")
    result = calibrate_combiner(rows, [("held.jsonl", rows)], FakeEmbedder(vectors), hand_lexicon(), l2=1.0,
                                previous=previous, trained_on="train.jsonl")
    assert [s.name for s in result.sets] == ["CV (5 folds, grouped)", "held.jsonl"]
    refit, prev = result.sets[1].figures
    assert (refit.label, prev.label) == ("combiner", "previous")
    assert result.sets[0].figures[1].label == "previous (in-sample)"
    assert refit.unjudged >= 1 and refit.per_kind["related"][0] <= 11  # 'middle' sent to review, counted wrong
    assert prev.unjudged == 0  # as shipped: only its (empty) band sends terms to review
    lines = report_lines([(s.name, s.figures) for s in result.sets])
    assert any(line.split()[:2] == ["held.jsonl", "combiner"] for line in lines)
    other = calibrate_combiner(rows, [], FakeEmbedder(vectors), hand_lexicon(), l2=1.0, previous=previous,
                               trained_on="mine.jsonl")  # fitted on another file: not in-sample
    assert [f.label for f in other.sets[0].figures] == ["combiner", "previous"]


def test_shipped_and_previous_models_are_both_readable():
    assert load_model(SHIPPED_MODEL).named >= len(json.loads(open("data/drift/previous_model.json").read())["features"])
