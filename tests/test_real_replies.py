"""termgate reads a real model's replies as a person does (issue 35, item 2).

The replies are SmolLM2-135M-Instruct's, recorded from a real llama.cpp server
(tests/data/real_replies/README.md); the labels are a person's reading, each set labelled
blind and committed before termgate read it. The held-out rows were not looked at while the
rules were first tuned; each later round tuned on the newest fresh set after measuring it
once (FLOOR says the blind figures); fresh14-fresh18 measured the seventh round's rules
frozen, fresh19-fresh22 the eighth round's, fresh23-fresh26 the ninth's, fresh27-fresh30 the
tenth's, fresh31-fresh34 the eleventh's, fresh35-fresh38 the twelfth's.
"""

from __future__ import annotations

import pytest

from real_replies import PARTS, agreement, load

GOAL = 0.97
"""Issue 35's goal for the share of finished replies read as the person read them, on replies
no rule was tuned on. The rules as they stood after fresh13's fix, measured once on the five
sets recorded and labelled after it (fresh14-fresh18), read 548 of 565 (96.99%); the eighth
round's, measured once on fresh19-fresh22, 435 of 454 (95.8%), no prose read as terms in
either; the ninth round's, on fresh23-fresh26, 429 of 448 (95.8%), two prose replies read as
terms. Earlier rounds' blind figures are in FLOOR's note."""
FLOOR = {"tuning": 213 / 215, "heldout": 112 / 114, "fresh": 114 / 115, "fresh2": 115 / 115,
         "fresh3": 109 / 114, "fresh4": 115 / 115, "fresh5": 114 / 115, "fresh6": 117 / 118,
         "fresh7": 117 / 118, "fresh8": 111 / 114, "fresh9": 113 / 116, "fresh10": 109 / 111,
         "fresh11": 116 / 120, "fresh12": 111 / 116, "fresh13": 114 / 116, "fresh14": 115 / 117,
         "fresh15": 108 / 108, "fresh16": 116 / 116, "fresh17": 112 / 113, "fresh18": 110 / 111,
         "fresh19": 117 / 118, "fresh20": 109 / 111, "fresh21": 113 / 113, "fresh22": 112 / 112,
         "fresh23": 110 / 114, "fresh24": 110 / 112, "fresh25": 112 / 113, "fresh26": 108 / 109,
         "fresh27": 117 / 122, "fresh28": 117 / 121, "fresh29": 111 / 115, "fresh30": 121 / 124,
         "fresh31": 110 / 114, "fresh32": 111 / 114, "fresh33": 109 / 113, "fresh34": 113 / 118,
         "fresh35": 113 / 119, "fresh36": 100 / 110, "fresh37": 110 / 114, "fresh38": 114 / 120}
"""What the reading reaches on each labelled part (tests/data/real_replies/README.md, "Where
it stands now"), the labels relabelled by the code convention; a change to the reading may not
fall below it. Each fresh set was measured once, blind, before any rule was tuned on it:
fresh 106/115 (92.2%, after round 2), fresh2 110/115 (95.7%, round 3), fresh3 105/114 (92.1%,
round 4), fresh4 110/115 (95.7%, round 5), fresh5 109/115 (94.8%, round 6), fresh6 111/118
(94.1%; 112/118 after the ISO date-time rule), fresh7 113/118 (95.8%, round 7), fresh8 104/114
(91.2%), fresh9 112/116 (96.6%), fresh10 101/111 (91.0%), fresh11 114/120 (95.0%), fresh12
107/116 (92.2%), fresh13 110/116 (94.8%), each after the fixes the set before it led to; then,
the rules frozen after fresh13's fix: fresh14 114/117 (97.4%), fresh15 107/108 (99.1%), fresh16
110/116 (94.8%), fresh17 109/113 (96.5%), fresh18 108/111 (97.3%; 109 after the unpaired-quote
fix); then the eighth round's rules, frozen, on fresh19 114/118 (96.6%), fresh20 106/111
(95.5%), fresh21 111/113 (98.2%), fresh22 104/112 (92.9%): 435/454 (95.8%), no prose read as
terms, 385/387 (99.5%) of the replies without a judgement call; then the ninth round's,
frozen, on fresh23 108/114 (94.7%, two prose replies read as terms), fresh24 104/112
(92.9%), fresh25 112/113 (99.1%), fresh26 105/109 (96.3%): 429/448 (95.8%), 375/380 (98.7%)
of the replies without a judgement call; then the tenth round's, frozen, on fresh27 111/122
(91.0%), fresh28 113/121 (93.4%, three prose replies read as terms), fresh29 110/115 (95.7%),
fresh30 119/124 (96.0%): 453/482 (94.0%), 393/398 (98.7%) of the replies without a judgement
call; then the eleventh round's, frozen, on fresh31 106/114 (93.0%, one prose reply read as
terms), fresh32 107/114 (93.9%, one), fresh33 108/113 (95.6%, one), fresh34 110/118 (93.2%,
one): 431/459 (93.9%), 360/367 (98.1%) of the replies without a judgement call. After it
fresh, fresh3, fresh5 and fresh11 went down by one each on purpose: the query as a label over
a sentence gives nothing (the guide's words, and ten of the thirteen labellers since fresh18),
where their early labellers took the query; then the twelfth round's, frozen, on fresh35
112/119 (94.1%, one prose reply read as terms), fresh36 100/110 (90.9%), fresh37 110/114
(96.5%), fresh38 113/120 (94.2%, one): 435/463 (94.0%), 374/381 (98.2%) of the replies without
a judgement call. In the ninth round fresh3
went from 111 to 110 on purpose: its `explain-t0-hiking_boots` (`Hi-lax - Hi-lo-la, a
combination of …`) was read with the second form by its labeller, and five labellers since
read that shape as the term alone. fresh3 went from 112 to 111 in round 7 on purpose: its `bullets-t0-living_trust` (the
query as every label over definitions) was read as a term by its labeller and as prose by
three others over four such replies."""
KNOWN_PROSE: dict[str, set[str]] = {"fresh12": {"bullets-t0-numb_fingers"}, "fresh28": {"bullets-t0-power_bank"},
                                     "fresh35": {"comma-t0-garlic_crusher"}}
"""Prose replies the reading still takes terms from, measured once on a blind set: named so
that any other one fails the test, and so that a fix is seen (drop the name then)."""
@pytest.mark.parametrize("part", PARTS)
def test_finished_replies_read_as_the_person_read_them(part):
    rows = load(part)
    result = agreement(rows)
    assert result.rows >= (150 if part == "tuning" else 100)
    shown = "\n".join(f"{row_id}: person {sorted(p) if p else 'error'} / termgate {sorted(t) if t else 'error'}"
                      for row_id, p, t in result.disagreements)
    assert result.share >= FLOOR[part] - 1e-9, f"{result.agreed}/{result.rows} agree:\n{shown}"


@pytest.mark.parametrize("part", PARTS)
def test_replies_the_labeller_did_not_call_a_judgement_call_read_at_the_goal(part):
    """The replies whose label carries no judgement-call note (real_replies.JUDGEMENT, written
    blind) read at 97% or better in every part; blind, they read at 98.6% (579/587) over
    fresh7-fresh12, 99.4% (471/474) over fresh14-fresh18, 99.5% (385/387) over
    fresh19-fresh22, 98.7% (375/380) over fresh23-fresh26, 98.7% (393/398) over
    fresh27-fresh30, 98.1% (360/367) over fresh31-fresh34 and 98.2% (374/381) over
    fresh35-fresh38, the rules frozen."""
    result = agreement(load(part))
    assert result.clear_rows >= 80
    assert result.clear_share >= GOAL, f"{result.clear_agreed}/{result.clear_rows}"


@pytest.mark.parametrize("part", PARTS)
def test_no_prose_reply_is_read_as_terms(part):
    result = agreement(load(part))
    assert set(result.prose_read_as_terms) == KNOWN_PROSE.get(part, set())


def test_the_labelled_set_is_whole():
    """At least 300 labelled replies in the first recording, 100 finished ones in every
    held-out part, every reply labelled once, no reply in two parts, and every fresh set asks
    queries no other part asked (so each measured once what no rule had seen)."""
    parts = {part: load(part) for part in PARTS}
    assert len(parts["tuning"]) + len(parts["heldout"]) >= 300
    ids = [row.id for rows in parts.values() for row in rows]
    assert len(ids) == len(set(ids))
    queries = {part: {row.id.split("-", 2)[-1] for row in rows} for part, rows in parts.items()}
    for part, rows in parts.items():
        if part != "tuning":
            assert sum(row.finished for row in rows) >= 100, part
        if part.startswith("fresh"):
            others = set().union(*(q for other, q in queries.items() if other != part))
            assert not queries[part] & others, part
        for row in rows:
            assert row.label["reading"] in ("terms", "error"), row.id
            if row.label["reading"] == "terms":
                assert row.label["terms"] and all(isinstance(t, str) and t.strip() for t in row.label["terms"]), row.id
            else:
                assert row.label["why"] in ("prose", "refusal", "empty", "no_terms", "invalid_json", "code"), row.id
