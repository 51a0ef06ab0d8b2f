"""The drift combiner's signals (issue 18 item 1), each on cases computed by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from termgate.drift.judge import DriftCandidate
from termgate.drift.signals import (FEATURES, char_overlap, compute_signals, context_text, domain_text, edit_ratio,
                                    head_word, is_abbreviation, opposite_prefix, residual, token_overlap)

from termgate.drift.signals import differing_words
from termgate.drift.lexicon import EMPTY, LexiconEntry, depth_similarity, intended_senses, kind_of

from drift_fakes import FakeEmbedder, entry, hand_lexicon, unit


@pytest.mark.parametrize("a, b, expected", [
    ("tort", "torte", 0.8),          # one insertion over 5 letters
    ("kitten", "sitting", 1 - 3 / 7),  # the textbook distance 3
    ("same", "same", 1.0),
    ("", "abc", 0.0),
])
def test_edit_ratio(a, b, expected):
    assert edit_ratio(a, b) == pytest.approx(expected)


def test_char_overlap_counts_padded_trigrams():
    # ' tort ' -> {' to', 'tor', 'ort', 'rt '}; ' torte ' -> {' to', 'tor', 'ort', 'rte', 'te '}: 3 shared
    assert char_overlap("tort", "torte") == pytest.approx(2 * 3 / (4 + 5))


def test_token_overlap_is_jaccard_of_words():
    assert token_overlap("basketball court", "court") == pytest.approx(1 / 2)
    assert token_overlap("guitar", "court") == 0.0


@pytest.mark.parametrize("short, long, expected", [
    ("gord", "gastro-oesophageal reflux disease", True),  # hyphens split words
    ("ami", "acute myocardial infarction", True),
    ("nda", "non-disclosure agreement", True),
    ("poa", "power of attorney for health care", True),  # a run of the words, 'of' kept
    ("tro", "temporary restraining order", True),
    ("approx", "approximately", True),                    # truncation of one word
    ("mi", "michigan", False),                            # two letters never a truncation
    ("ms", "multiple sclerosis", True),
    ("ms", "microsoft", False),
    ("heart attack", "myocardial infarction", False),
])
def test_is_abbreviation(short, long, expected):
    assert is_abbreviation(short, long) is expected


@pytest.mark.parametrize("a, b, expected", [
    ("hypertension", "hypotension", "hyper/hypo"),
    ("tachycardia", "bradycardia", "tachy/brady"),
    ("overweight", "underweight", "over/under"),
    ("hypertension", "hypertension", None),
    ("tort", "torte", None),
    ("lessor", "lessee", "-or/-ee"),                   # the two sides of a lease
    ("employer liability", "employee liability", "-er/-ee"),
    ("lee", "lessee", None),                           # no common stem of 4 letters
])
def test_opposite_prefix(a, b, expected):
    assert opposite_prefix(a, b) == expected


def test_residual_and_head_word():
    assert residual("basketball court", ["court", "tribunal"]) == "basketball"
    assert residual("court", ["court"]) is None        # adds nothing
    assert residual("guitar", ["court"]) is None       # shares nothing
    assert head_word("chest of drawers") == "chest"
    assert head_word("upright vacuums") == "vacuum"
    assert head_word("usb-c power bank") == "bank"


def test_known_domain_labels_are_glossed():
    assert "law" in domain_text("Legal") and domain_text("aviation") == "aviation"


def test_similarities_and_domain_fit_from_chosen_vectors():
    q, t, e1, e2 = "heart attack", "cardiac arrest", "myocardial infarction", "mi"
    gloss = domain_text("medical")
    c = DriftCandidate("q1", q, t, "medical", None, (e1, e2))
    embedder = FakeEmbedder({
        t: unit((0, 1.0)),
        q: unit((0, 0.6), (1, 0.8)),          # term·query = 0.6
        e1: unit((0, 0.8), (2, 0.6)),         # term·e1 = 0.8
        e2: unit((3, 1.0)),                   # term·e2 = 0
        gloss: unit((0, 0.5), (1, 0.5), (4, 0.7071068)),  # term·domain 0.5, query·domain 0.3 + 0.4 = 0.7
        context_text(c): unit((0, 0.9), (5, 0.4358899)),
    })
    (s,) = compute_signals([c], embedder, hand_lexicon())
    assert s["sim_query"] == pytest.approx(0.6, abs=1e-6)
    assert s["sim_expected_max"] == pytest.approx(0.8, abs=1e-6) and s.nearest_expected == e1
    assert s["sim_expected_mean"] == pytest.approx(0.4, abs=1e-6)
    assert s["sim_domain"] == pytest.approx(0.5, abs=1e-6)
    assert s["domain_fit"] == pytest.approx(0.5 - 0.7, abs=1e-6)
    assert s["sim_context"] == pytest.approx(0.9, abs=1e-6)
    assert s["wn_term_known"] == 0.0 and s["wn_unrelated"] == 0.0  # not in (this) WordNet
    assert len(s.values) == len(FEATURES)


def test_lexical_and_wordnet_signals_name_their_reference():
    lexicon = hand_lexicon({
        "stroke": entry(["n1", "n2", "n3", "n4"]),
        "cerebrovascular accident": entry(["n1"], {"n10": 1}),
        "apoplexy": entry(["n1"], {"n10": 1}),
        "torte": entry(["n20"], {"n21": 1, "n22": 2}),
        "tort": entry(["n30"], {"n31": 1}),
    })
    candidates = [DriftCandidate("q", "cerebrovascular accident", "apoplexy", None, None, ("stroke",)),
                  DriftCandidate("q", "tort", "torte", None, None, ("civil wrong",)),
                  DriftCandidate("q", "acute coronary syndrome", "acs", None, None, ())]
    apoplexy, torte, acs = compute_signals(candidates, FakeEmbedder(), lexicon)
    assert apoplexy["wn_synonym_query"] == 1.0 and apoplexy["wn_synonym_expected"] == 1.0
    assert apoplexy["wn_synonym_specific"] == 1.0  # shares the query's only synset ('stroke' has 4)
    assert torte["spelled_alike"] == pytest.approx(0.8) and torte.references["spelled_alike"] == "tort"
    assert torte["wn_unrelated"] == 1.0 and torte["wn_path_query"] == 0.0  # no common hypernym
    assert acs["short_form_of"] == 1.0 and acs.references["short_form_of"] == "acute coronary syndrome"


def test_edit_ratio_floor_gives_up_early_and_exactly():
    assert edit_ratio("tort", "guitar", floor=0.6) == 0.0   # 1 - 4/6 < 0.6
    assert edit_ratio("tort", "torte", floor=0.6) == pytest.approx(0.8)
    assert edit_ratio("kitten", "sitting", floor=0.5) == pytest.approx(1 - 3 / 7)
    assert edit_ratio("bifocals", "binoculars", floor=0.6) == 0.6  # 4 edits of 10: exactly on the floor


def _levenshtein(a: str, b: str) -> int:
    """The textbook dynamic programme, an oracle independent of rapidfuzz."""
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


@settings(max_examples=300, deadline=None)
@given(st.text("abcdeé -", max_size=9), st.text("abcdeé -", max_size=9), st.sampled_from([0.0, 0.5, 0.6, 0.9]))
def test_edit_ratio_agrees_with_the_textbook_distance(a, b, floor):
    exact = 1.0 if a == b else 1 - _levenshtein(a, b) / max(len(a), len(b))
    assert edit_ratio(a, b, floor) == pytest.approx(exact if exact >= floor else 0.0)


def sensed(synsets_closures: dict[str, dict[str, int]], **kw) -> LexiconEntry:
    """An entry with one closure per sense (each sense at 0 in its own)."""
    senses = {sid: {sid: 0, **c} for sid, c in synsets_closures.items()}
    merged: dict[str, int] = {}
    for c in senses.values():
        for anc, d in c.items():
            merged[anc] = min(d, merged.get(anc, d))
    return LexiconEntry(tuple(senses), merged, frozenset(), frozenset(), senses=senses if len(senses) > 1 else {}, **kw)


def test_a_relation_through_another_sense_of_the_query_speaks_for_drift():
    # 'court' has a law sense n1 (under n10, 'tribunal' n2 also under n10) and a sports sense n3
    # (under n30); 'basketball court' is a kind of the sports court, 'trial court' of the law court
    lexicon = hand_lexicon({
        "court": sensed({"n1": {"n10": 1}, "n3": {"n30": 1}}),
        "tribunal": entry(["n2"], {"n10": 1}),
        "basketball court": entry(["n4"], {"n3": 1, "n30": 2}),
        "trial court": entry(["n5"], {"n1": 1, "n10": 2}),
    })
    shifted, meant = compute_signals([DriftCandidate("q", "court", "basketball court", None, None, ("tribunal",)),
                                      DriftCandidate("q", "court", "trial court", None, None, ("tribunal",))],
                                     FakeEmbedder(), lexicon)
    assert shifted["wn_hypernym_query"] == 1.0  # a kind of 'court', in some sense ...
    assert shifted["wn_other_sense"] == 1.0 and shifted["wn_intended"] == 0.0  # ... not the one meant
    assert shifted.references["wn_other_sense"] == "court"
    assert meant["wn_intended"] == 1.0 and meant["wn_other_sense"] == 0.0


def test_intended_senses_are_those_nearest_the_other_references():
    court = sensed({"n1": {"n10": 1}, "n3": {"n30": 1}})
    assert intended_senses(court, [entry(["n2"], {"n10": 1})]) == ("n1",)
    assert intended_senses(court, [entry(["n9"])]) == ("n1", "n3")  # nothing nearer: every sense
    assert intended_senses(entry(["n7"]), [court]) == ("n7",)


def test_a_phrase_wordnet_lacks_is_a_kind_of_its_head_in_the_sense_its_words_pick():
    glass = sensed({"n1": {"n10": 1}, "n2": {"n20": 1}}, gloss=frozenset({"conta"}))  # vessel, spectacles
    wine = entry(["n3"], {"n10": 1})
    phrase = kind_of(glass, [wine])
    assert not phrase.known and phrase.closure == {"n1": 1, "n10": 2}  # one level below the vessel only
    assert phrase.gloss == glass.gloss
    assert kind_of(EMPTY) == EMPTY


def test_depth_similarity_prefers_a_deep_common_ancestor():
    # a: a -> p -> root (depth 2); b: b -> p -> root; c: c -> root
    a, b, c = {"a": 0, "p": 1, "r": 2}, {"b": 0, "p": 1, "r": 2}, {"c": 0, "r": 1}
    assert depth_similarity(a, b) == pytest.approx((1 + 1) / (2 + 2 + 2))  # meet at p, depth 1 on each side
    assert depth_similarity(a, c) == pytest.approx(0 / (2 + 1 + 2))        # meet only at the root
    assert depth_similarity(a, {"x": 0}) == 0.0


def test_definition_overlap_and_one_word_opposites():
    lexicon = hand_lexicon({
        # WordNet: 'a coffeepot in which boiling water ...', its words cut to five letters
        "percolator": LexiconEntry(("n1",), {"n1": 0, "n10": 1}, frozenset(), frozenset(),
                                   gloss=frozenset({"coffe", "boili"})),
        "coffee maker": entry(["n2"], {"n20": 1}),
        "large": entry(["a1"], antonyms=["a2"]),
        "small": entry(["a2"]),
    })
    candidates = [DriftCandidate("q", "coffee maker", "percolator", None, None, ()),
                  DriftCandidate("q", "extra large", "extra small", None, None, ()),
                  DriftCandidate("q", "acquittal", "guilty verdict", None, None, ("not guilty verdict",)),
                  DriftCandidate("q", "extra large", "extra roomy", None, None, ())]
    percolator, small, guilty, roomy = compute_signals(candidates, FakeEmbedder(), lexicon)
    assert percolator["wn_gloss_overlap"] == 0.5 and percolator.references["wn_gloss_overlap"] == "coffee maker"
    assert small["opposite_word"] == 1.0 and small.references["opposite_word"] == "extra large"  # WordNet antonyms
    assert guilty["opposite_word"] == 1.0 and guilty.references["opposite_word"] == "not guilty verdict"
    assert roomy["opposite_word"] == 0.0


def test_differing_words():
    assert differing_words("not guilty verdict", "guilty verdict") == (("not",), ())
    assert differing_words("tort", "torte") is None


def test_the_collector_is_paused_while_judging_and_resumed_after_a_failure():
    import gc

    from termgate.gc_pause import without_gc_pauses
    seen = []

    @without_gc_pauses
    def judge():
        seen.append(gc.isenabled())
        raise ValueError("a failing batch")

    was = gc.isenabled()
    try:
        gc.enable()
        with pytest.raises(ValueError):
            judge()
        assert seen == [False] and gc.isenabled()
        gc.disable()  # a caller that paused it itself keeps it paused
        assert without_gc_pauses(gc.isenabled)() is False and not gc.isenabled()
    finally:
        gc.enable() if was else gc.disable()


def test_pieces_two_spelled_alike_words_share():
    from termgate.drift.signals import shared_pieces
    assert shared_pieces("rotavirus", "norovirus") == ["irus", "virus"]  # 'avirus' and 'ovirus' differ
    assert shared_pieces("neurosyphilis", "syphilis") == ["ilis", "hilis", "philis", "yphilis", "syphilis"]
    assert shared_pieces("kitchenette", "kitchen") == ["kitc", "kitch", "kitche", "kitchen"]
    assert shared_pieces("torte", "tort") == ["tort"]
    assert shared_pieces("court case", "suitcase") == ["case"]
    assert shared_pieces("dyspepsia", "dyspnea") == ["dysp"]  # a beginning of 4, no word in it


def test_a_term_filed_under_the_word_it_shares_is_not_a_look_alike():
    virus, flu = entry(["n_virus"], {"n_organism": 1}), entry(["n_flu"], {"n_illness": 1})
    lexicon = hand_lexicon({
        "virus": virus,
        "rotavirus": entry(["n_rota"], {"n_reo": 1, "n_virus": 2, "n_organism": 3}),  # a kind of virus
        "stomach flu": flu,
        "case": entry(["n_container", "n_lawsuit"]),
        "suitcase": entry(["n_suitcase"], {"n_container": 1}),
        "court case": entry(["n_court_case"], {"n_lawsuit": 1}),  # a case, in another sense
        "tort": entry(["n30"], {"n31": 1}),
        "torte": entry(["n20"], {"n21": 1}),
    })
    rota, court, torte = compute_signals([
        DriftCandidate("q", "stomach flu", "rotavirus", None, None, ("norovirus",)),  # norovirus: not in WordNet
        DriftCandidate("q", "suitcase", "court case", None, None, ()),
        DriftCandidate("q", "tort", "torte", None, None, ())], FakeEmbedder(), lexicon)
    assert rota["spelled_alike"] == 0.0 and rota["lookalike"] == 0.0 and "spelled_alike" not in rota.references
    assert court["spelled_alike"] >= 0.6 and court.references["spelled_alike"] == "suitcase"
    assert torte["spelled_alike"] == pytest.approx(0.8)  # a torte is not filed under 'tort'


def test_a_look_alike_is_measured_against_the_references_that_are_not_kin():
    # 'rotaviral' (0.78) shares 'rota' with the term, under which WordNet (here) files both:
    # kin, not a look-alike. 'norovirus' (0.67) is another matter here: filed elsewhere.
    lexicon = hand_lexicon({
        "rota": entry(["n_rota"]), "virus": entry(["n_virus"]),
        "rotavirus": entry(["n_rv"], {"n_rota": 1, "n_virus": 2}),
        "rotaviral": entry(["n_rvl"], {"n_rota": 1}),
        "norovirus": entry(["n_nv"], {"n_calici": 1}),
    })
    [s] = compute_signals([DriftCandidate("q", "stomach flu", "rotavirus", None, None, ("rotaviral", "norovirus"))],
                          FakeEmbedder(), lexicon)
    assert s.references["spelled_alike"] == "norovirus"
    assert s["spelled_alike"] == pytest.approx(edit_ratio("rotavirus", "norovirus"))
