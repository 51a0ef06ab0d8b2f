"""metrics.py: normalisation, matching and P/R/F1, hand-computed and by invariant."""

from __future__ import annotations

import random
import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from termgate.scoring.metrics import aggregate_columns, f1_score, normalize_term, safe_ratio

from conftest import golden_row


def reference_normalize(term: str) -> str:
    """SPEC §2 rule 1, literally."""
    return " ".join(unicodedata.normalize("NFKC", term).casefold().split())


@pytest.mark.parametrize("raw, expected", [
    ("Myocardial Infarction", "myocardial infarction"),
    ("  heart\tattack \n", "heart attack"),            # tabs, newlines, edges
    ("ＭＩ", "mi"),                                      # full-width letters (NFKC)
    ("Sjo\u0308gren", "sjögren"),                        # decomposed ö composes
    ("STRASSE", "strasse"), ("Straße", "strasse"),       # casefold, not lower
    ("ﬁbrosis", "fibrosis"),                             # ligature
    ("a\u00a0b", "a b"),                                 # no-break space is white space
    ("\u3000", ""),                                       # ideographic space only
    ("§ 1983  Claim", "§ 1983 claim"),
])
def test_normalize_table(raw, expected):
    assert normalize_term(raw) == expected


@given(st.text(max_size=30))
def test_normalize_matches_the_spec_formula(term):
    assert normalize_term(term) == reference_normalize(term)


@pytest.mark.parametrize("num, den, expected", [(1, 2, 0.5), (0, 0, 0.0), (3, 0, 0.0), (0, 4, 0.0)])
def test_safe_ratio(num, den, expected):
    assert safe_ratio(num, den) == expected


@pytest.mark.parametrize("p, r, expected", [(1.0, 1.0, 1.0), (0.5, 1.0, 2 / 3), (0.0, 0.0, 0.0), (0.0, 1.0, 0.0)])
def test_f1(p, r, expected):
    assert f1_score(p, r) == pytest.approx(expected)


def test_matching_by_min_weight_keeps_order(score):
    run = score([golden_row("q1", "q", [{"term": "myocardial infarction", "min_weight": 0.5}, "mi", "heart attack"])],
                [{"query_id": "q1", "terms": [{"term": "mi", "weight": 0.3},
                                              {"term": "myocardial infarction", "weight": 0.4}, "cardiac arrest"]}])
    m = run.scores[0]
    # mi has no min_weight -> matched at 0.3; MI-the-long-form is 0.4 < 0.5 -> underweight
    assert m.true_positives == ["mi"]
    assert m.false_positives == ["myocardial infarction", "cardiac arrest"]
    assert m.false_negatives == ["myocardial infarction", "heart attack"]
    assert "underweight: myocardial infarction 0.40 < 0.50" in m.failure_reasons
    assert m.precision == pytest.approx(1 / 3)
    assert m.recall == pytest.approx(1 / 3)


def test_min_weight_boundary_allows_epsilon(score):
    # 0.3 - 1e-12 must still match a min_weight of 0.3 (rule 6's 1e-9 in the query's favour)
    m = score([golden_row("q1", "q", [{"term": "x", "min_weight": 0.3}])],
              [{"query_id": "q1", "terms": [{"term": "x", "weight": 0.3 - 1e-12}]}]).scores[0]
    assert m.true_positives == ["x"]
    m = score([golden_row("q1", "q", [{"term": "x", "min_weight": 0.3}])],
              [{"query_id": "q1", "terms": [{"term": "x", "weight": 0.3 - 1e-8}]}]).scores[0]
    assert m.true_positives == []


vocabulary = st.sampled_from([f"t{i}" for i in range(12)])
weights = st.floats(min_value=0, max_value=1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(queries=st.lists(st.tuples(st.dictionaries(vocabulary, weights, max_size=8),
                                  st.dictionaries(vocabulary, weights, max_size=10)), min_size=1, max_size=6))
def test_invariants(score, queries):
    run = score([golden_row(f"q{i}", "q", [{"term": t, "min_weight": w} for t, w in expected.items()])
                 for i, (expected, _) in enumerate(queries)],
                [{"query_id": f"q{i}", "terms": [{"term": t, "weight": w} for t, w in generated.items()]}
                 for i, (_, generated) in enumerate(queries)])
    for m, (expected, generated) in zip(run.scores, queries, strict=True):
        assert len(m.true_positives) + len(m.false_positives) == len(generated)
        assert len(m.true_positives) + len(m.false_negatives) == len(expected)
        for value in (m.precision, m.recall, m.f1, m.term_drift_score):
            assert 0.0 <= value <= 1.0


def test_macro_and_micro_against_scikit_learn(score):
    """Macro P/R/F1 equal scikit-learn's average='samples' on random multilabel data."""
    from sklearn.metrics import f1_score as sk_f1
    from sklearn.metrics import precision_score, recall_score
    from sklearn.preprocessing import MultiLabelBinarizer

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(40)]
    golds = [rng.sample(vocab, rng.randint(1, 8)) for _ in range(300)]
    preds = [rng.sample(vocab, rng.randint(1, 10)) for _ in range(300)]
    run = score([golden_row(f"q{i}", "q", gold) for i, gold in enumerate(golds)],
                [{"query_id": f"q{i}", "terms": pred} for i, pred in enumerate(preds)])
    mlb = MultiLabelBinarizer(classes=vocab)
    y_true, y_pred = mlb.fit_transform(golds), mlb.transform(preds)
    agg = run.aggregate
    assert agg.macro_precision == pytest.approx(precision_score(y_true, y_pred, average="samples", zero_division=0))
    assert agg.macro_recall == pytest.approx(recall_score(y_true, y_pred, average="samples", zero_division=0))
    assert agg.macro_f1 == pytest.approx(sk_f1(y_true, y_pred, average="samples", zero_division=0))
    assert agg.micro_f1 == pytest.approx(sk_f1(y_true, y_pred, average="micro"))


def test_aggregate_of_nothing_is_zero():
    agg = aggregate_columns([], [], [], [], [], [], [])
    assert (agg.macro_precision, agg.macro_recall, agg.macro_f1, agg.micro_f1) == (0.0, 0.0, 0.0, 0.0)
