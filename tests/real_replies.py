"""The labelled real replies of tests/data/real_replies/ (issue 35; README.md there says how
they were recorded and labelled) and termgate's agreement with the person's reading.

The person's label is the oracle: a set of terms after rule-1 normalisation, or an error.
termgate's reading is the harness's text reader (termgate.llm.harness.parse_reply).
Used by tests/test_real_replies.py and bench/bench_replies.py (which prints the figures).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "real_replies"
PARTS = ["tuning", "heldout", "fresh"] + [f"fresh{n}" for n in range(2, 39)]
"""The labelled parts, in the order they were recorded (README.md there)."""


@dataclass(frozen=True)
class Labelled:
    id: str
    query: str
    reply: str
    finish_reason: str
    label: dict

    @property
    def finished(self) -> bool:
        return self.finish_reason == "stop"

    @property
    def person(self) -> frozenset[str] | None:
        """The person's terms, normalised as rule 1 does; None where they found none."""
        from termgate.scoring.metrics import normalize_term

        if self.label["reading"] != "terms":
            return None
        terms = frozenset(t for t in (normalize_term(term) for term in self.label["terms"]) if t)
        return terms or None


def load(part: str) -> list[Labelled]:
    """The rows of `part` (tuning or heldout) joined with their labels, in the replies' order."""
    rows = [json.loads(line) for line in (DATA / f"{part}.jsonl").read_text(encoding="utf-8").splitlines() if line]
    labels = {}
    for line in (DATA / f"{part}.labels.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            labels[entry["id"]] = entry["label"]
    return [Labelled(row["id"], row["query"], row["reply"], row["finish_reason"], labels[row["id"]]) for row in rows]


def termgate_reading(reply: str, query: str | None = None) -> frozenset[str] | None:
    """termgate's terms for a reply (normalised), or None when it errors the reply."""
    from termgate.llm.harness import parse_reply

    try:
        terms = frozenset(parse_reply(reply, query))
    except ValueError:
        return None
    return terms or None


JUDGEMENT = re.compile(r"judge?ment call|a reader could|arguabl|defensible|could (?:also|just as well|fairly)|"
                       r"close call", re.I)
"""A label whose note says the reading was a judgement call (the labeller wrote it blind,
before termgate read the set): "judgement call: …", "a reader could take …", "arguable"."""


@dataclass(frozen=True)
class Agreement:
    rows: int
    agreed: int
    prose_read_as_terms: tuple[str, ...]
    disagreements: tuple[tuple[str, frozenset[str] | None, frozenset[str] | None], ...]
    clear_rows: int = 0
    """Finished replies whose label the labeller did not call a judgement call."""
    clear_agreed: int = 0

    @property
    def share(self) -> float:
        return self.agreed / self.rows if self.rows else 0.0

    @property
    def clear_share(self) -> float:
        return self.clear_agreed / self.clear_rows if self.clear_rows else 0.0


def agreement(rows: list[Labelled]) -> Agreement:
    """How many finished replies termgate reads as the person did (the same normalised terms,
    or an error on both sides), and the prose replies read as terms."""
    finished = [row for row in rows if row.finished]
    agreed, prose, wrong, clear, clear_agreed = 0, [], [], 0, 0
    for row in finished:
        mine = termgate_reading(row.reply, row.query)
        if not JUDGEMENT.search(row.label.get("note", "")):
            clear += 1
            clear_agreed += mine == row.person
        if mine == row.person:
            agreed += 1
        else:
            wrong.append((row.id, row.person, mine))
        if row.label["reading"] == "error" and row.label.get("why") == "prose" and mine is not None:
            prose.append(row.id)
    return Agreement(len(finished), agreed, tuple(prose), tuple(wrong), clear, clear_agreed)


SECOND_READINGS = ("fresh20", "fresh22", "fresh25", "fresh28", "fresh32")
"""The parts a second helper labelled blind too (`PART.labels2.jsonl`), without the first
labeller's labels (fresh5's second reading saw six of the first's labels, so it is left out)."""


def two_people(part: str) -> tuple[int, int]:
    """(finished replies the part's two blind labellers read alike, finished replies)."""
    rows = [row for row in load(part) if row.finished]
    second = {}
    for line in (DATA / f"{part}.labels2.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            entry = json.loads(line)
            second[entry["id"]] = entry["label"]
    return sum(row.person == Labelled(row.id, row.query, row.reply, row.finish_reason, second[row.id]).person
               for row in rows), len(rows)
