"""termgate reads a real model's replies as a person does (issue 35, item 2).

The replies are SmolLM2-135M-Instruct's, recorded from a real llama.cpp server
(tests/data/real_replies/README.md); the labels are a person's reading. The held-out rows
were not looked at while the rules were first tuned; in the second round both parts were,
in the third round the fresh part too, in the fourth the fresh2 part, in the fifth
the fresh3 part (measured once, blind, after the fourth round), and in the sixth the fresh4
part (measured once, blind, after the fifth round). fresh5 was measured once, blind, after
the sixth round.
"""

from __future__ import annotations

import pytest

from real_replies import agreement, load

GOAL = 0.97
"""Issue 35's goal for the share of finished replies read as the person read them. Both parts
now read above it, but both were read while tuning: a fresh set measures it."""
FLOOR = {"tuning": 212 / 215, "heldout": 112 / 114, "fresh": 115 / 115, "fresh2": 115 / 115, "fresh3": 112 / 114, "fresh4": 115 / 115,
         "fresh5": 110 / 115, "fresh6": 112 / 118}
"""What the reading reached in issue 35's fourth round (tests/data/real_replies/README.md),
the labels relabelled by the code convention: tuning 212/215 (98.6%), the first round's
held-out part 112/114 (98.2%), `fresh` 115/115 and `fresh2` 115/115. A change to the reading
may not fall below it. `fresh` was measured once after the second round (106/115, 92.2%),
`fresh2` once after the third (110/115, 95.7%, two prose replies read as terms); the rounds
after each tuned on them, so all four parts are tuning data now. `fresh3` was measured once
after the fourth round: 105/114 (92.1%), two prose replies read as terms; the fifth round
tuned on it to 112/114 (a clause is a statement without its stop, labels over sentences
are prose, and four judgement calls read by general rules), so
it is tuning data too now. `fresh4` was measured once after the fifth round: 110/115
(95.7%), one prose reply read as terms; the sixth round tuned on it to 115/115 and none
(contractions, one topic over remarks, records' synonyms, letterless parts, lists of empty
labels, long noun phrases), so it is tuning data too now. `fresh5` was measured once after the sixth round: 109/115
(94.8%), one prose reply read as terms (`Chat: help@…` under chat: a label over an
address now gives nothing, so fresh5 reads 110/115 and none, and is tuning data too).
`fresh6`, recorded after that and read by no round first, measures the rules as they stand:
111/118 (94.1%), three prose replies read as terms; an ISO date-time is no term since
(112/118, two left: KNOWN_PROSE)."""
KNOWN_PROSE: dict[str, set[str]] = {
    "fresh6": {"bullets-t0-pink_eye", "comma-t0-insulin_pump"}}
"""Prose replies the reading still takes terms from, measured once on a blind set: named so
that any other one fails the test, and so that a fix is seen (drop the name then)."""
PARTS = ["tuning", "heldout", "fresh", "fresh2", "fresh3", "fresh4", "fresh5", "fresh6"]


@pytest.mark.parametrize("part", PARTS)
def test_finished_replies_read_as_the_person_read_them(part):
    rows = load(part)
    result = agreement(rows)
    assert result.rows >= (150 if part == "tuning" else 100)
    shown = "\n".join(f"{row_id}: person {sorted(p) if p else 'error'} / termgate {sorted(t) if t else 'error'}"
                      for row_id, p, t in result.disagreements)
    assert result.share >= FLOOR[part] - 1e-9, f"{result.agreed}/{result.rows} agree:\n{shown}"


@pytest.mark.parametrize("part", PARTS)
def test_no_prose_reply_is_read_as_terms(part):
    result = agreement(load(part))
    assert set(result.prose_read_as_terms) == KNOWN_PROSE.get(part, set())


def test_the_labelled_set_is_whole():
    """At least 300 labelled replies, 100 finished ones held out, every reply labelled once,
    no reply in both parts."""
    tuning, held, fresh = load("tuning"), load("heldout"), load("fresh")
    assert len(tuning) + len(held) >= 300
    assert sum(row.finished for row in held) >= 100 and sum(row.finished for row in fresh) >= 100
    ids = [row.id for row in tuning + held + fresh]
    assert len(ids) == len(set(ids))
    assert not {row.id.split("-t0-")[-1] for row in fresh} & {row.id.split("-", 2)[-1] for row in tuning + held}
    for row in tuning + held + fresh:
        assert row.label["reading"] in ("terms", "error"), row.id
        if row.label["reading"] == "terms":
            assert row.label["terms"] and all(isinstance(t, str) and t.strip() for t in row.label["terms"]), row.id
        else:
            assert row.label["why"] in ("prose", "refusal", "empty", "no_terms", "invalid_json", "code"), row.id
