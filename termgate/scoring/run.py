"""One evaluation's result: the value the evaluation produces and the store, the reports
and the gate read (SPEC §3). A plain record over the scorer's rows, below the store and the
reports, so neither needs the orchestration that made it (termgate.evaluation)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..drift.judge import DriftJudge
from ..models import Gate, Thresholds
from .metrics import MacroMicro
from .regression import RegressionResult
from .scorer import ScoredQueries, ScoreFacts

if TYPE_CHECKING:
    from ..retrieval.outcome import RetrievalOutcome

__all__ = ["EvaluationRun"]


@dataclass(slots=True)
class EvaluationRun:
    """Everything one evaluation produced; reports and the store are written from this.

    The per-query rows live in `queries` (the scorer's in-memory DuckDB): read them as the
    report's rows with `termgate.report.query_rows(run)`, or through the store writers.
    close() frees them.
    """

    evaluation_id: str
    timestamp: str
    golden_path: str
    golden_hash: str
    golden_name: str
    """SPEC §1.1: --golden-name, else the path from the repository root (io.default_golden_name)."""
    generated_path: str | None
    generated_hash: str
    thresholds: Thresholds
    judge: DriftJudge
    queries: ScoredQueries
    aggregate: MacroMicro
    regression: RegressionResult
    gate: Gate
    recommendations: list[str]
    domains: list[str]
    high_risk_domains: list[str]
    content_hash: str
    name: str | None
    prompt_version: str | None
    domain_context: str | None
    author: str
    statistics: dict | None = None
    """Paired statistics against the baseline (SPEC §6); None without a baseline."""
    golden_revision: dict | None = None
    """{"name", "revision", "approved", "approved_by"}: whether the store's audit chain held an
    approval of this golden revision at evaluation time (termgate.governance.golden_revisions); None
    without a store."""
    golden_name_note: str | None = None
    """The default golden name differs from the names runs on this golden content were stored
    under (SPEC §1.1): one line naming the old name and `--golden-name`; None otherwise."""
    cache_use: dict | None = None
    policy: dict | None = None
    """{"record", "digest", "tightened"}: the store's policy record this run was gated under
    (None: the default policy), its content's SHA-256, and what local settings tightened
    (termgate.governance.policy)."""
    """{"writer", "used"}: this run's cache writer and the writers whose cache entries it used,
    itself included when it stored its own (termgate.store.cache_writers); None when it used none."""

    retrieval: RetrievalOutcome | None = None
    """The retrieval effect (issue 34; docs/retrieval.md): None when the run measured none."""

    def close(self) -> None:
        """Free the per-query rows; store and report the run before closing it."""
        self.queries.close()

    @property
    def facts(self) -> ScoreFacts:
        return self.queries.facts

    @property
    def total(self) -> int:
        return self.queries.total

    @property
    def errored(self) -> int:
        return int(self.facts.errored.sum())

    @property
    def no_expansion(self) -> int:
        """Golden queries with no line in the generated file (errored items have theirs)."""
        return int(self.facts.no_line.sum())

    @property
    def passed(self) -> int:
        return int(self.facts.passed.sum())
