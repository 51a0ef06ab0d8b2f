"""Issue 36's sense-aware drift signals, each on cases built by hand (hand-made WordNet
entries, chosen definitions), and `review_reason`."""

from __future__ import annotations

import numpy as np
import pytest

from termgate.drift.judge import DriftCandidate
from termgate.drift.lexicon import CachedLexicon, LexiconEntry, WordNet, wordnet_available
from termgate.drift.model import describe
from termgate.drift.opposites import (OPPOSITE_PAIRS, SIBLING_SETS, curated_opposite, curated_same, curated_sibling,
                                      string_sibling)
from termgate.drift.senses import SENSE_FEATURES, opposed
from termgate.drift.signals import FEATURES, Signals, compute_signals, review_reason

from drift_fakes import FakeEmbedder, MemoryLexiconCache, entry, hand_lexicon, hand_model
from test_drift_signals import sensed

LAW, SPORT = "an assembly (including one or more judges) to conduct judicial business", \
    "a specially marked horizontal area within which a game is played"


def court_lexicon(**more: LexiconEntry) -> CachedLexicon:
    """'court': a law sense n1 (under n10, with 'tribunal') and a sports sense n3 (under n30)."""
    lexicon = hand_lexicon({
        "court": sensed({"n1": {"n10": 1}, "n3": {"n30": 1}}),
        "tribunal": entry(["n2"], {"n10": 1}),
        # compounds WordNet files under one sense of 'court' each
        "basketball court": entry(["n4"], {"n3": 1, "n30": 2}),
        "appeals court": entry(["n5"], {"n1": 1, "n10": 2}),
        # a phrase WordNet lacks, whose other word is near the sports sense only
        "tennis": entry(["n6"], {"n30": 1}),
        "grass court": LexiconEntry((), {"n1": 1, "n3": 1, "n10": 2, "n30": 2}, frozenset(), frozenset()),
        "tennis grass court": LexiconEntry((), {"n3": 1, "n30": 2}, frozenset(), frozenset()),
        # a phrase WordNet knows that is no kind of court
        "food court": entry(["n40"], {"n41": 1}),
        **more,
    })
    lexicon.wordnet.definitions = {"n1": LAW, "n3": SPORT, "n40": "an area where fast food is sold"}
    return lexicon


def judge(lexicon, *pairs, query="court", expected=("tribunal",), domain=None):
    return compute_signals([DriftCandidate("q", query, t, domain, None, expected) for t in pairs],
                           FakeEmbedder(), lexicon)


def test_the_new_signals_follow_the_previous_ones_in_order():
    assert FEATURES[-len(SENSE_FEATURES):] == SENSE_FEATURES and len(FEATURES) == 41 + len(SENSE_FEATURES)
    assert len(set(FEATURES)) == len(FEATURES)


def test_a_compound_counts_as_kin_only_in_the_head_sense_the_query_means():
    shifted, meant, other_thing = judge(court_lexicon(), "basketball court", "appeals court", "food court")
    assert shifted["same_head"] == meant["same_head"] == 1.0  # the previous signal cannot tell them apart
    assert shifted["head_sense_other"] == 1.0 and shifted["head_sense_meant"] == 0.0
    assert meant["head_sense_meant"] == 1.0 and meant["head_sense_other"] == 0.0
    assert other_thing["head_not_kind"] == 1.0 and other_thing["head_sense_meant"] == 0.0
    # the reason names the sense assumed and the one meant, from their definitions
    assert shifted.references["sense"] == (f"'basketball court' reads as 'court': {SPORT}; "
                                           "the query means an assembly to conduct judicial business")
    assert "sense" not in meant.references
    assert other_thing.references["sense"] == ("'food court' is an area where fast food is sold; "
                                               "the query means an assembly to conduct judicial business")


def test_a_phrase_wordnet_lacks_counts_only_when_its_words_pick_a_sense_clearly():
    lexicon = court_lexicon()
    undecided, sporty = judge(lexicon, "grass court", "tennis grass court")
    assert undecided["same_head"] == 1.0  # 'grass' is near no sense of 'court' (not in this WordNet)
    assert undecided["head_sense_meant"] == undecided["head_sense_other"] == undecided["head_not_kind"] == 0.0
    assert sporty["head_sense_other"] == 1.0  # 'tennis' sits by the sports court only


def test_another_kind_of_the_same_head_swaps_a_reference_s_words():
    lexicon = hand_lexicon()
    swapped, narrower, narrower_of_query = compute_signals(
        [DriftCandidate("q", "acetaminophen overdose", "ibuprofen overdose", None, None, ("paracetamol poisoning",)),
         DriftCandidate("q", "acetaminophen overdose", "intentional acetaminophen overdose", None, None, ()),
         DriftCandidate("q", "vacuum", "shark vacuum", None, None, ("dyson vacuum",))], FakeEmbedder(), lexicon)
    assert swapped["modifier_swap"] == 1.0 and swapped.references["modifier_swap"] == "acetaminophen overdose"
    assert narrower["modifier_swap"] == 0.0           # adds a word to the query: a kind of it
    assert narrower_of_query["modifier_swap"] == 0.0  # a kind of the query 'vacuum', whatever 'dyson vacuum' says


def test_a_query_phrase_that_is_no_kind_of_its_last_word_means_none_of_its_senses():
    lexicon = hand_lexicon({
        "media": sensed({"n1": {"n10": 1}, "n2": {"n20": 1}}),
        "otitis media": entry(["n5"], {"n50": 1}),                       # inflammation, not a medium
        "social media": entry(["n6"], {"n2": 1, "n20": 2}),  # WordNet files it under one sense of media
    })
    social, = judge(lexicon, "social media", query="otitis media", expected=("middle ear infection",))
    assert social["same_head"] == 1.0 and social["head_sense_other"] == 1.0


def test_a_relation_counts_through_the_meant_sense_only():
    # 'seal': a legal sense n1 (with 'stamp' under n10) and the animal n3 (under n30, with the walrus)
    lexicon = hand_lexicon({
        "seal": sensed({"n1": {"n10": 1}, "n3": {"n30": 1}}),
        "stamp": entry(["n2"], {"n10": 1}),
        "walrus": entry(["n5"], {"n30": 1}),
        "notary stamp": entry(["n6"], {"n2": 1, "n10": 2}),
    })
    lexicon.wordnet.definitions = {"n5": "either of two large northern marine mammals", "n1": "a device incised to make an impression"}
    walrus, notary = judge(lexicon, "walrus", "notary stamp", query="seal", expected=("stamp",))
    assert walrus["wn_path_query"] == pytest.approx(1 / 3)  # walrus - n30 - seal (the animal)
    assert walrus["wn_path_other"] == pytest.approx(1 / 3) and walrus.references["wn_path_other"] == "seal"
    assert walrus["wn_sibling"] == 0.0  # a sibling of the animal, not of the seal meant
    assert notary["wn_path_other"] == 0.0
    assert walrus.references["sense"] == ("'walrus' is either of two large northern marine mammals; "
                                          "the query means a device incised to make an impression")


def test_a_word_of_the_query_counts_in_the_sense_the_query_picks():
    # 'pupil': a learner n1 (under n10) and the eye's aperture n2 (under n20); the query's other
    # word and its expected term sit near the aperture, so the query means n2
    lexicon = hand_lexicon({
        "pupil": sensed({"n1": {"n10": 1}, "n2": {"n20": 1, "n99": 2}}),
        "dilation": entry(["n31"], {"n20": 1}),
        "mydriasis": entry(["n30"], {"n20": 1}),
        "student": entry(["n1"], {"n10": 1}),
        "aperture": entry(["n20"], {"n99": 1}),
    })
    lexicon.wordnet.definitions = {"n1": "a learner who is enrolled in an educational institution",
                                   "n2": "the contractile aperture in the center of the iris of the eye"}
    student, aperture = judge(lexicon, "student", "aperture", query="pupil dilation", expected=("mydriasis",))
    assert student["word_sense_other"] == 1.0 and student["word_sense_meant"] == 0.0
    assert student.references["word_sense_other"] == "pupil"
    assert student.references["sense"] == ("'student' is a learner who is enrolled in an educational institution; "
                                           "the query means the contractile aperture in the center of the iris of the eye")
    assert aperture["word_sense_meant"] == 1.0 and aperture["word_sense_other"] == 0.0
    # nothing around 'pupil' picks a sense: no signal either way
    lone, = judge(lexicon, "student", query="pupil size", expected=())
    assert lone["word_sense_other"] == lone["word_sense_meant"] == 0.0


def test_a_clear_sense_needs_a_margin():
    from termgate.drift.senses import clear_sense
    court = sensed({"n1": {"n10": 1}, "n3": {"n30": 1}})
    assert clear_sense(court, [entry(["n2"], {"n10": 1})]) == "n1"
    assert clear_sense(court, [entry(["n2"], {"n10": 1}), entry(["n4"], {"n30": 1})]) is None  # a tie
    assert clear_sense(court, []) is None and clear_sense(entry(["n7"]), [court]) is None  # one sense


def test_a_co_hyponym_of_the_meant_sense_is_a_sibling_but_a_synonym_or_a_kind_is_not():
    lexicon = hand_lexicon({
        "hepatitis b": entry(["n1"], {"n10": 1, "n100": 2}),
        "hepatitis c": entry(["n2"], {"n10": 1, "n100": 2}),
        "serum hepatitis": entry(["n1"], {"n10": 1, "n100": 2}),
        "chronic hepatitis b": entry(["n3"], {"n1": 1, "n10": 2, "n100": 3}),
        "viral hepatitis": entry(["n10"], {"n100": 1}),
    })
    sibling, synonym, kind, broader = judge(lexicon, "hepatitis c", "serum hepatitis", "chronic hepatitis b",
                                            "viral hepatitis", query="hepatitis b", expected=())
    assert sibling["wn_sibling"] == 1.0 and sibling.references["wn_sibling"] == "hepatitis b"
    assert synonym["wn_sibling"] == kind["wn_sibling"] == broader["wn_sibling"] == 0.0


@pytest.mark.parametrize("term, refs, expected", [
    ("hepatitis a", ["hepatitis b"], "hepatitis b"),
    ("type 1 diabetes", ["diabetes", "type 2 diabetes"], "type 2 diabetes"),
    ("stage iv cancer", ["stage ii cancer"], "stage ii cancer"),
    ("first degree murder", ["second degree murder"], "second degree murder"),
    ("hepatitis", ["hepatitis b"], None),             # a broader term, not a sibling
    ("hepatitis b", ["hepatitis b"], None),
    ("acute hepatitis", ["viral hepatitis"], None),   # a differing word, not a letter or number
    ("type i diabetes", ["type 1 diabetes"], None),   # one number written another way: the same thing
    ("second degree burn", ["2 degree burn"], None),
    ("type ii diabetes", ["type 1 diabetes"], "type 1 diabetes"),
])
def test_string_siblings(term, refs, expected):
    assert string_sibling(term, refs) == expected


def test_curated_siblings_and_other_names_and_opposites():
    assert curated_sibling("advil", "tylenol", ["paracetamol", "pain relief"]) == "tylenol"
    assert curated_sibling("advil", "ibuprofen", []) is None                   # its generic: the same drug
    assert curated_same("advil", ["ibuprofen"]) == "ibuprofen" and curated_same("advil", ["tylenol"]) is None
    assert curated_sibling("tylenol extra strength", "tylenol", []) is None    # the brand itself
    assert curated_same("tylenol extra strength", ["tylenol"]) is None         # ... by the same name
    assert curated_sibling("shark cordless vacuum", "dyson cordless vacuum", []) == "dyson cordless vacuum"
    assert curated_sibling("misdemeanour charge", "felony charge", ["felony offence"]) == "felony charge"
    assert curated_sibling("court of appeal", "court of appeals", []) is None  # another spelling of one identity
    assert curated_sibling("dyson vs shark", "dyson", []) is None              # names the query's too
    assert curated_sibling("macbook", "laptop", ["chromebook"]) is None        # the query names no identity
    assert curated_sibling("infraction", "misdemeanor", ["summary offence"]) is None  # the golden set spans grades
    for source, identities in SIBLING_SETS:
        assert source and len(identities) >= 2
    assert curated_opposite("tenant", ["landlord"], "legal") == "landlord"
    assert curated_opposite("sole custody", ["child custody", "joint custody"], "legal") == "joint custody"
    assert curated_opposite("benign tumor", ["malignant tumor"], "medical") == "malignant tumor"
    assert curated_opposite("benign tumor", ["malignant tumor"], "legal") is None  # another domain's list
    assert curated_opposite("benign tumor", ["malignant tumor"], None) == "malignant tumor"  # no domain: all lists
    assert curated_opposite("landlord tenant law", ["landlord"], "legal") is None  # holds both sides
    for pairs in OPPOSITE_PAIRS.values():
        assert all(a != b and source for a, b, source in pairs)


def test_wordnet_opposites_beyond_a_direct_antonym():
    acquittal = LexiconEntry(("n1",), {"n1": 0}, frozenset(), frozenset(), opposed=frozenset({"n2"}))
    conviction = entry(["n2"])
    benign = LexiconEntry(("a1",), {"a1": 0}, frozenset(), frozenset(), attributes=frozenset({"n9"}))
    malignant = LexiconEntry(("a2",), {"a2": 0}, frozenset(), frozenset(), attributes=frozenset({"n9"}))
    malignancy = LexiconEntry(("n9",), {"n9": 0}, frozenset(), frozenset(), attributes=frozenset({"a1", "a2"}))
    assert opposed(acquittal, conviction) and opposed(conviction, acquittal)
    assert opposed(benign, malignant)
    assert not opposed(benign, benign)               # one sense shared: not two values of the attribute
    assert not opposed(malignancy, benign)           # the attribute noun is no opposite of its value
    assert not opposed(acquittal, LexiconEntry((), {"n2": 1}, frozenset(), frozenset()))  # not in WordNet
    lexicon = hand_lexicon({"benign": benign, "malignant": malignant, "tumor": entry(["n5"])})
    one_word, = judge(lexicon, "benign tumor", query="malignant tumor", expected=())
    assert one_word["wn_opposite"] == 1.0 and one_word.references["wn_opposite"] == "malignant tumor"


@pytest.mark.skipif(not wordnet_available(), reason="needs Debian's wordnet-base")
def test_wordnet_reads_opposites_through_similar_adjectives_and_derived_words():
    wn = WordNet()
    assert opposed(wn.lookup("cancerous"), wn.lookup("benign"))    # cancerous ~ malignant ! benign
    assert opposed(wn.lookup("acquittal"), wn.lookup("convict"))   # acquittal + acquit ! convict
    assert not opposed(wn.lookup("landlord"), wn.lookup("tenant"))  # WordNet has none: the curated list
    assert wn.lookup("benign").attributes                         # 'benignity'
    assert LexiconEntry.from_json(wn.lookup("cancerous").to_json()) == wn.lookup("cancerous")


def test_entries_keep_their_further_opposites_and_attributes_in_the_cache():
    e = LexiconEntry(("a1",), {"a1": 0}, frozenset({"a2"}), frozenset(), opposed=frozenset({"a3", "a4"}),
                     attributes=frozenset({"n9"}))
    again = LexiconEntry.from_json(e.to_json())
    assert again == e and again.opposed == {"a3", "a4"} and again.attributes == {"n9"}
    bare = LexiconEntry(("n1",), {"n1": 0}, frozenset(), frozenset())
    assert "o" not in bare.to_json() and LexiconEntry.from_json(bare.to_json()).opposed == frozenset()


def test_a_short_look_alike_is_not_a_short_form_and_unknown_words_carry_their_fit():
    lexicon = hand_lexicon({"ileum": entry(["n1"]), "ilium": entry(["n2"])})
    ileum, approx, jargon = compute_signals(
        [DriftCandidate("q", "ilium", "ileum", "medical", None, ("hip bone",)),
         DriftCandidate("q", "approximately", "approx", None, None, ()),
         DriftCandidate("q", "heart attack", "infarctus", "medical", None, ())], FakeEmbedder(), lexicon)
    assert ileum["short_form"] == 1.0 and ileum["short_lookalike"] == 1.0  # spelled like 'ilium', not its short form
    assert approx["short_form_of"] == 1.0 and approx["short_lookalike"] == 0.0
    assert ileum["unknown_word"] == 0.0 and approx["unknown_word"] == 1.0
    assert jargon["unknown_word"] == 1.0
    assert jargon["unknown_word_domain"] == pytest.approx(jargon["domain_fit"])
    assert jargon["unknown_word_context"] == pytest.approx(jargon["sim_context"])


def test_definitions_are_cached_like_entries():
    cache = MemoryLexiconCache()
    first = court_lexicon()
    first.cache = cache
    assert first.definitions(["n1", "n3"]) == {"n1": LAW, "n3": SPORT} and first.lookups == 2
    again = CachedLexicon(cache, wordnet=object())  # a WordNet it must not call
    assert again.definitions(["n3"]) == {"n3": SPORT} and again.lookups == 0


def row(refs: dict[str, str] | None = None, **facts: float) -> Signals:
    values = dict.fromkeys(FEATURES, 0.0)
    values.update(facts)
    return Signals(np.array([values[f] for f in FEATURES]), None, refs or {}, values)


def test_review_reason_when_kinship_and_an_opposite_or_sibling_both_fire():
    reason = review_reason(row({"wn_synonym_expected": "acetaminophen", "curated_sibling": "advil"},
                               wn_synonym_expected=1.0, curated_sibling=1.0))
    assert reason == "signals disagree: a WordNet synonym of 'acetaminophen' but a sibling of 'advil'"
    assert review_reason(row({"short_form_of": "hepatitis b", "string_sibling": "hepatitis b"},
                             short_form_of=1.0, string_sibling=1.0)).startswith("signals disagree: an abbreviation")
    assert review_reason(row(wn_synonym_query=1.0)) is None          # kin alone: a confident verdict
    assert review_reason(row(opposite_curated=1.0)) is None          # an opposite alone too
    assert review_reason(row(expansion_of=1.0, expansion_sim=0.2, wn_sibling=1.0)) is None  # expands another sense


def test_review_reason_when_the_only_tie_is_another_sense_the_embedding_cannot_tell_apart():
    near = row({"wn_other_sense": "seal"}, wn_other_sense=1.0, sim_context=0.62)
    assert review_reason(near) == ("only related to 'seal' through another WordNet sense, "
                                   "yet close to the query's meaning (0.62)")
    assert review_reason(row({"wn_other_sense": "seal"}, wn_other_sense=1.0, sim_context=0.2)) is None  # plainly far
    assert review_reason(row(wn_other_sense=1.0, wn_intended=1.0, sim_context=0.7)) is None  # also kin in the meant sense
    assert review_reason(row(wn_other_sense=1.0, wn_synonym_expected=1.0, sim_context=0.7)) is None  # kin elsewhere
    shared = row({"wn_other_sense": "stroke"}, wn_other_sense=1.0, token_overlap=0.5, sim_expected_max=0.55)
    assert review_reason(shared) == ("only related to 'stroke' through another WordNet sense, "
                                     "yet close to the query's meaning (0.55)")  # 'heat stroke'


def test_a_drift_reason_names_the_sense_it_assumed():
    shifted, meant = judge(court_lexicon(), "basketball court", "appeals court")
    model = hand_model({"modified": 4.0})  # a signal with no words of its own: only the sense is said
    assert describe(model, shifted, 0.98, "legal") == (f"'basketball court' reads as 'court': {SPORT}; "
                                                       "the query means an assembly to conduct judicial business")
    shifted.references["sense"] = "said only for drift"
    assert "said only for drift" not in describe(model, shifted, 0.02, "legal")
    assert "sense" not in meant.references
