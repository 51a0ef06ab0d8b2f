"""Compare a run with its baseline, matched by query_id (SPEC §2 rule 8)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .metrics import EPSILON

__all__ = ["BaselineRow", "Baseline", "RegressionResult", "compare_to_baseline"]


@dataclass(frozen=True, slots=True)
class BaselineRow:
    """What the baseline stored for one query; used as stored, never rescored."""

    f1: float
    passed: bool
    precision: float = 0.0
    recall: float = 0.0
    errored: bool = False


@dataclass(slots=True)
class Baseline:
    """A baseline run: from the store or from a JSON report file."""

    evaluation_id: str
    source: str
    rows: dict[str, BaselineRow]
    golden_hash: str | None = None
    content_hash: str | None = None

    def fingerprint(self) -> str:
        """SHA-256 over the stated content hash and every stored value the comparison uses,
        so an edited baseline report can never carry over another run's sign-off."""
        import hashlib
        import json

        rows = [[q, r.f1, r.passed, r.precision, r.recall, r.errored] for q, r in sorted(self.rows.items())]
        canonical = json.dumps([self.content_hash, rows], separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()


@dataclass(slots=True)
class RegressionResult:
    """Outcome of the comparison; `status` maps query_id -> regressed/improved/unchanged/added."""

    baseline_id: str | None
    regressed: list[str] = field(default_factory=list)
    improved: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    baseline_f1: dict[str, float] = field(default_factory=dict)
    golden_set_changed: bool = False
    mean_f1_delta: float | None = None
    summary: str = "No baseline was given: regression analysis skipped."

    @property
    def detected(self) -> bool:
        return bool(self.regressed)


def _classify(f1: float, passed: bool, base: BaselineRow, delta: float) -> str:
    change = f1 - base.f1
    if -change > delta + EPSILON or (base.passed and not passed):
        return "regressed"
    if change > delta - EPSILON or (not base.passed and passed):
        return "improved"
    return "unchanged"


def compare_to_baseline(rows: list[tuple[str, float, bool]], baseline: Baseline | None,
                        regression_delta: float, golden_hash: str | None = None) -> RegressionResult:
    """rows: (query_id, f1, passed) of the current run, in golden-set order."""
    if baseline is None:
        return RegressionResult(None)
    result = RegressionResult(baseline.evaluation_id)
    deltas: list[float] = []
    seen: set[str] = set()
    for query_id, f1, passed in rows:
        seen.add(query_id)
        base = baseline.rows.get(query_id)
        if base is None:
            result.added.append(query_id)
            result.status[query_id] = "added"
            continue
        result.baseline_f1[query_id] = base.f1
        deltas.append(f1 - base.f1)
        status = _classify(f1, passed, base, regression_delta)
        result.status[query_id] = status
        if status == "regressed":
            result.regressed.append(query_id)
        elif status == "improved":
            result.improved.append(query_id)
    result.removed = [q for q in baseline.rows if q not in seen]
    result.golden_set_changed = (golden_hash is not None and baseline.golden_hash is not None
                                 and golden_hash != baseline.golden_hash)
    result.mean_f1_delta = sum(deltas) / len(deltas) if deltas else None
    result.summary = _describe(result, len(deltas))
    return result


def _describe(result: RegressionResult, paired: int) -> str:
    parts = [f"Against baseline {result.baseline_id}: {len(result.regressed)} regressed, "
             f"{len(result.improved)} improved, "
             f"{paired - len(result.regressed) - len(result.improved)} unchanged of {paired} shared queries"]
    if result.mean_f1_delta is not None:
        parts.append(f"mean F1 delta {result.mean_f1_delta:+.4f}")
    if result.added or result.removed:
        parts.append(f"{len(result.added)} added, {len(result.removed)} removed")
    if result.golden_set_changed:
        parts.append("the baseline was scored on a different golden set")
    return "; ".join(parts) + "."
