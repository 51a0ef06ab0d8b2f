"""Term-drift judges behind one protocol (SPEC §2 rule 5).

Forbidden terms are checked by the scorer for every judge. A judge is asked only about
false positives that are neither forbidden nor an underweight expected term, and
answers per term: drift, not drift, or undecided (`drift=None`, listed as unjudged).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .errors import UsageError

__all__ = ["DriftCandidate", "DriftVerdict", "DriftJudge", "NoDriftJudge",
           "JUDGE_NAMES", "resolve_judge"]

JUDGE_NAMES = ("none", "embedding", "llm")


@dataclass(frozen=True, slots=True)
class DriftCandidate:
    """A false positive to judge, with what the judge may weigh it against."""

    query_id: str
    query: str
    term: str
    domain: str | None
    intent: str | None
    expected_terms: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DriftVerdict:
    """drift True/False, or None when the judge could not decide; reason says why."""

    drift: bool | None
    reason: str


@runtime_checkable
class DriftJudge(Protocol):
    """Decides whether false positives are unrelated to their query and domain."""

    name: str

    def config(self) -> dict:
        """Everything that changes verdicts (model, threshold...); part of the content hash."""

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        """One verdict per candidate, in order."""


class NoDriftJudge:
    """`--drift-judge none`: only forbidden terms are drift; nothing is left unjudged."""

    name = "none"

    def config(self) -> dict:
        return {"judge": "none"}

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        return [DriftVerdict(False, "not judged (--drift-judge none)") for _ in candidates]


def embedding_available() -> bool:
    """True when the offline embedding judge can run on this installation."""
    return False


def resolve_judge(name: str | None) -> DriftJudge:
    """The judge for a CLI/config name; None picks the default (SPEC §2 rule 5)."""
    if name is None:
        name = "embedding" if embedding_available() else "none"
    if name == "none":
        return NoDriftJudge()
    if name in JUDGE_NAMES:
        raise UsageError(f"--drift-judge {name} is not available in this installation; "
                         "use --drift-judge none")
    raise UsageError(f"unknown drift judge '{name}' (choose from {', '.join(JUDGE_NAMES)})")
