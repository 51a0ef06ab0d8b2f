"""metrics.py: normalisation, matching and P/R/F1, hand-computed and by invariant."""

from __future__ import annotations

import random
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalcore.metrics import aggregate_scores, f1_score, match_terms, normalize_term, safe_ratio


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


def test_match_terms_min_weight_and_order():
    expected = {"myocardial infarction": 0.5, "mi": 0.0, "heart attack": 0.0}
    generated = {"mi": 0.3, "myocardial infarction": 0.4, "cardiac arrest": 1.0}
    m = match_terms(expected, generated)
    # mi has no min_weight -> matched at 0.3; MI-the-long-form is 0.4 < 0.5 -> underweight
    assert m.true_positives == ["mi"]
    assert m.false_positives == ["myocardial infarction", "cardiac arrest"]
    assert m.false_negatives == ["myocardial infarction", "heart attack"]
    assert m.underweight == [("myocardial infarction", 0.4, 0.5)]
    assert m.precision == pytest.approx(1 / 3)
    assert m.recall == pytest.approx(1 / 3)


def test_min_weight_boundary_allows_epsilon():
    # 0.1 + 0.2 = 0.30000000000000004 > 0.3, but 0.3 - 1e-12 must still match
    m = match_terms({"x": 0.3}, {"x": 0.3 - 1e-12})
    assert m.true_positives == ["x"]


terms = st.lists(st.sampled_from([f"t{i}" for i in range(12)]), max_size=10, unique=True)
weights = st.floats(min_value=0, max_value=1)


@settings(max_examples=300)
@given(expected=st.dictionaries(st.sampled_from([f"t{i}" for i in range(12)]), weights, max_size=8),
       generated=st.dictionaries(st.sampled_from([f"t{i}" for i in range(12)]), weights, max_size=10))
def test_invariants(expected, generated):
    m = match_terms(expected, generated)
    assert len(m.true_positives) + len(m.false_positives) == len(generated)
    assert len(m.true_positives) + len(m.false_negatives) == len(expected)
    for value in (m.precision, m.recall, f1_score(m.precision, m.recall)):
        assert 0.0 <= value <= 1.0


def test_macro_and_micro_against_scikit_learn():
    """Macro P/R/F1 equal scikit-learn's average='samples' on random multilabel data."""
    from sklearn.metrics import f1_score as sk_f1
    from sklearn.metrics import precision_score, recall_score
    from sklearn.preprocessing import MultiLabelBinarizer

    rng = random.Random(7)
    vocab = [f"w{i}" for i in range(40)]
    golds, preds, rows = [], [], []
    for _ in range(300):
        gold = rng.sample(vocab, rng.randint(1, 8))
        pred = rng.sample(vocab, rng.randint(1, 10))
        m = match_terms({t: 0.0 for t in gold}, {t: 1.0 for t in pred})
        p, r = m.precision, m.recall
        rows.append((p, r, f1_score(p, r), 1.0, len(m.true_positives), len(m.false_positives),
                     len(m.false_negatives)))
        golds.append(gold)
        preds.append(pred)
    mlb = MultiLabelBinarizer(classes=vocab)
    y_true, y_pred = mlb.fit_transform(golds), mlb.transform(preds)
    agg = aggregate_scores(rows)
    assert agg.macro_precision == pytest.approx(precision_score(y_true, y_pred, average="samples", zero_division=0))
    assert agg.macro_recall == pytest.approx(recall_score(y_true, y_pred, average="samples", zero_division=0))
    assert agg.macro_f1 == pytest.approx(sk_f1(y_true, y_pred, average="samples", zero_division=0))
    assert agg.micro_f1 == pytest.approx(sk_f1(y_true, y_pred, average="micro"))


def test_aggregate_of_nothing_is_zero():
    agg = aggregate_scores([])
    assert (agg.macro_precision, agg.macro_recall, agg.macro_f1, agg.micro_f1) == (0.0, 0.0, 0.0, 0.0)
