"""What a pipeline is told about one run: the facts the job summary, the pull-request
comment, the annotations and the Code Quality report render.

One set of facts (`Findings`), built the same way from a fresh evaluation (`evaluate`,
`harness`) and from a stored run (`gate RUN`): the caller hands over the per-query rows
with the JSON report's keys, the baseline's terms and the sign-off state; the renderers
in `markdown` and `annotations` read only this.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..scoring.run import EvaluationRun

__all__ = ["Headline", "FlaggedQuery", "DriftFinding", "Findings", "BaselineTerms",
           "flagged_rows", "find_flagged", "headline", "FLAGGED_COLUMNS"]

FLAGGED_COLUMNS = ("query_id", "original_query", "domain", "critical", "passed", "f1", "true_positives",
                   "generated_terms", "expected_terms", "drift_terms", "drift_reasons", "failure_reasons",
                   "regression_status", "baseline_f1")
"""The per-query keys (the JSON report's names) the findings are built from."""


@dataclass(frozen=True, slots=True)
class Headline:
    """One headline metric: this run's macro mean beside the baseline's, and the paired
    mean per-query delta with its 95% bootstrap interval (termgate.scoring.stats) when known."""

    metric: str
    value: float
    baseline: float | None = None
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    paired: bool = True
    """False: `delta` is the difference of the macro means (no interval is computed)."""
    note: str | None = None
    """Shown beside the value, such as "2 of 2 terms unjudged" for drift."""


@dataclass(frozen=True, slots=True)
class FlaggedQuery:
    """A regressed or failed critical query, with what changed in its terms."""

    query_id: str
    query: str
    domain: str | None
    regressed: bool
    critical_failed: bool
    f1: float
    baseline_f1: float | None
    lost_correct: tuple[str, ...]
    """Correct in the baseline, not now; without a baseline row: expected terms not matched."""
    new_wrong: tuple[str, ...]
    """Wrong now and not generated in the baseline; without a baseline row: every wrong term."""
    versus_baseline: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class DriftFinding:
    """One drift term with the judge's (or the forbidden list's) reason."""

    query_id: str
    query: str
    term: str
    reason: str


@dataclass(slots=True)
class Findings:
    """Everything the CI outputs say about one run (values from data kept raw: each
    renderer escapes them for its own format)."""

    run_id: str
    run_name: str | None
    golden_name: str
    """The golden set's name (SPEC §1.1): --golden-name, else its path from the repository root."""
    golden_path: str
    """The golden file as given (annotations point here)."""
    decision: str
    reasons: list[str]
    headline: list[Headline]
    total: int
    passed: int
    errored: int
    baseline_id: str | None
    flagged: list[FlaggedQuery]
    drift: list[DriftFinding]
    signoff: str
    """The release state: releasable, not releasable, awaiting sign-off, incomplete."""
    signoff_reasons: list[str]
    links: list[tuple[str, str]] = field(default_factory=list)
    """(label, URL) of the dashboard pages for this run; empty for a run not stored."""
    lines: dict[str, int] = field(default_factory=dict)
    """query_id -> its line in the golden file (filled in for annotations)."""
    audit_head: str | None = None
    """COUNT:HASH of the audit chain the sign-off state relied on (verified intact); None
    for a run not stored or a broken chain. Kept by whoever reads the summary, it shows a
    later truncation or rewrite of the store (`audit verify --expect-head`, SPEC §4)."""
    retrieval: dict | None = None
    """The run's retrieval effect (the JSON report's `retrieval` object, its per_query cut
    to the regressed queries); None when the run measured none."""
    trust: list[str] = field(default_factory=list)
    """What the chain's signatures say (ChainReport.trust_lines: its trust root and whether
    it is pinned, or that nothing is attested; each record whose signature fails); empty
    for a run not stored or a broken chain (SPEC §4)."""


@dataclass(slots=True)
class BaselineTerms:
    """What the baseline generated and got right, per query_id (for the term diffs), and
    its macro means (metric -> value) when known."""

    terms: Mapping[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    """query_id -> (true_positives, generated_terms)."""
    macro: Mapping[str, float] = field(default_factory=dict)


def flagged_rows(run: EvaluationRun) -> list[dict]:
    """The rows of a fresh run that a pipeline is told about (regressed, failed critical,
    or carrying drift terms), in golden-set order, with FLAGGED_COLUMNS' keys. Read in the
    scorer's database, so a million-query run hands over only these."""
    compared = "regression_status" in run.queries.comparison_columns
    columns = ("query_id, query AS original_query, domain, critical, passed, f1, true_positives, generated_terms, "
               "expected_terms, drift_terms, drift_reasons, failure_reasons, query_scores.position AS pos, "
               + ("regression_status, baseline_f1" if compared else "NULL AS regression_status, "
                                                                    "CAST(NULL AS DOUBLE) AS baseline_f1"))
    cursor = run.queries.con.cursor()  # its own cursor: runs beside the store's insert
    try:
        table = cursor.sql(
            f"SELECT * EXCLUDE (pos) FROM ({run.queries.select_rows(columns)}) WHERE "
            "coalesce(regression_status = 'regressed', false) OR (critical AND NOT passed) OR len(drift_terms) > 0 "
            "ORDER BY pos").to_arrow_table()
    finally:
        cursor.close()
    return table.to_pylist()


def _diff(row: dict, base: tuple[list[str], list[str]] | None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(lost correct, new wrong) against the baseline's terms, or against the golden set."""
    tp = set(row["true_positives"])
    wrong = [t for t in row["generated_terms"] if t not in tp]
    if base is None:
        return tuple(t for t in row["expected_terms"] if t not in tp), tuple(wrong)
    base_tp, base_generated = base
    before = set(base_generated)
    return tuple(t for t in base_tp if t not in tp), tuple(t for t in wrong if t not in before)


def find_flagged(rows: Iterable[dict], baseline: BaselineTerms) -> tuple[list[FlaggedQuery], list[DriftFinding]]:
    """Regressed and failed critical queries, and drift terms, in golden-set order."""
    flagged: list[FlaggedQuery] = []
    drift: list[DriftFinding] = []
    for row in rows:
        regressed = row.get("regression_status") == "regressed"
        critical_failed = bool(row["critical"]) and not row["passed"]
        if regressed or critical_failed:
            base = baseline.terms.get(row["query_id"])
            lost, new = _diff(row, base)
            flagged.append(FlaggedQuery(row["query_id"], row["original_query"], row.get("domain"), regressed,
                                        critical_failed, row["f1"], row.get("baseline_f1"), lost, new,
                                        base is not None, tuple(row["failure_reasons"] or ())))
        reasons = list(row.get("drift_reasons") or [])
        for i, term in enumerate(row["drift_terms"] or []):
            drift.append(DriftFinding(row["query_id"], row["original_query"], term,
                                      reasons[i] if i < len(reasons) and reasons[i] else "drift"))
    return flagged, drift


def headline(macro: Mapping[str, float], statistics: Mapping | None, baseline: Mapping[str, float],
             unjudged: str | None = None) -> list[Headline]:
    """P, R and F1 with the paired statistics' mean delta and 95% interval (SPEC §6), and
    drift with the difference of the macro means (the statistics do not cover drift) and
    `unjudged` beside it (ScoreFacts.unjudged_line)."""
    out = []
    for metric in ("precision", "recall", "f1"):
        stats = (statistics or {}).get(metric) or {}
        out.append(Headline(metric, macro[metric], baseline.get(metric), stats.get("mean_delta"),
                            stats.get("ci_low"), stats.get("ci_high")))
    base_drift = baseline.get("drift")
    out.append(Headline("drift", macro["drift"], base_drift,
                        None if base_drift is None else macro["drift"] - base_drift, paired=False, note=unjudged))
    return out
