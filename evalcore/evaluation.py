"""One evaluation run end to end: load, score, compare, gate (the library behind `evaluate`)."""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pyarrow as pa

from . import __version__
from .columnar import ColumnarScores, Fallback, ScoreFacts, score_files
from .config import Settings, load_settings
from .errors import UsageError
from .drift import DriftJudge, resolve_judge
from .hashing import combine, generated_item_digest
from .gate import decide_gate, recommend
from .io import GeneratedSet, GoldenSet, load_generated, load_golden_set, load_thresholds
from .metrics import MacroMicro, aggregate_columns, aggregate_scores
from .models import Gate, Thresholds
from .regression import Baseline, RegressionResult, compare_to_baseline
from .scoring import QueryScore, score_facts, score_golden_set

__all__ = ["EvaluationRun", "evaluate", "evaluate_loaded", "new_run_id", "utc_now"]


@dataclass(slots=True)
class EvaluationRun:
    """Everything one evaluation produced; reports and the store are written from this."""

    evaluation_id: str
    timestamp: str
    golden: GoldenSet
    generated_path: str | None
    thresholds: Thresholds
    judge: DriftJudge
    scored: list[QueryScore] | None
    """Per-query objects from the Python scorer; None when the columnar engine scored the run
    (`scores` then builds them from its tables on first use)."""
    aggregate: MacroMicro
    regression: RegressionResult
    gate: Gate
    recommendations: list[str]
    domains: list[str]
    high_risk_domains: list[str]
    content_hash: str
    generated_hash: str
    name: str | None
    prompt_version: str | None
    domain_context: str | None
    author: str
    statistics: dict | None = None
    """Paired statistics against the baseline (SPEC §6); None without a baseline."""
    facts: ScoreFacts | None = None
    engine: ColumnarScores | None = None
    """The columnar engine's tables (in-memory DuckDB), when it scored the run."""
    fallback: str | None = None
    """Why the columnar engine handed this input to the Python engine, if it did."""

    def close(self) -> None:
        """Free the columnar engine's memory; store and report the run before closing it."""
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    @property
    def scores(self) -> list[QueryScore]:
        if self.scored is None:
            if self.engine is None:
                raise RuntimeError("the run was closed before its per-query scores were read")
            self.scored = _materialise(self.engine)
        return self.scored

    @property
    def total(self) -> int:
        return len(self.facts.passed)

    @property
    def errored(self) -> int:
        return int(self.facts.errored.sum())

    @property
    def passed(self) -> int:
        return int(self.facts.passed.sum())


def _materialise(engine: ColumnarScores) -> list[QueryScore]:
    """QueryScore objects from the columnar engine's tables (library callers, HTML, JUnit)."""
    noise = "noise_floor" in engine.side_columns
    rows = engine.con.execute(f"""
        SELECT q.query_id, q.query, q.domain, q.critical, q.generated_terms, q.generated_weights,
               q.expected_terms, q.expected_min_weights, q.true_positives, q.false_positives, q.false_negatives,
               q.precision, q.recall, q.f1, q.drift_terms, q.drift_reasons, q.unjudged_terms, q.term_drift_score,
               q.passed, q.failure_reasons, q.notes, {'s.noise_floor, s.within_noise' if noise else 'NULL, false'}
        FROM q {'LEFT JOIN side s USING (query_id)' if noise else ''} ORDER BY q.pos""").fetchall()
    out = []
    for (qid, query, domain, critical, gen_terms, gen_weights, exp_terms, exp_weights, tp, fp, fn, precision,
         recall, f1, drift, reasons, unjudged, drift_score, passed, failures, notes, floor, within) in rows:
        out.append(QueryScore(qid, query, domain, critical, dict(zip(gen_terms, gen_weights)),
                              dict(zip(exp_terms, exp_weights)), tp, fp, fn, precision, recall, f1,
                              drift_terms=drift, drift_reasons=dict(zip(drift, reasons)), unjudged_terms=unjudged,
                              term_drift_score=drift_score, passed=passed, failure_reasons=failures, notes=notes,
                              noise_floor=floor, within_noise=bool(within)))
    return out


def utc_now() -> str:
    """UTC ISO 8601 with milliseconds, ending in Z."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def new_run_id(timestamp: str) -> str:
    """Sortable, readable and unique: 20261129-223000-1a2b3c."""
    stamp = timestamp[:19].replace("-", "").replace(":", "").replace("T", "-")
    return f"{stamp}-{secrets.token_hex(3)}"


def _generated_hash(golden: GoldenSet, generated: GeneratedSet, errors: dict[str, str]) -> str:
    empty: dict[str, float] = {}
    return combine(generated_item_digest(item.query_id, generated.expansions.get(item.query_id, empty),
                                         errors.get(item.query_id)) for item in golden.items)


def _stat_notes(statistics: dict | None) -> list[str]:
    """Rule-based advice from the paired statistics."""
    if not statistics:
        return []
    out = []
    f1 = statistics["f1"]
    if f1["ci_low"] is not None and f1["ci_low"] <= 0 <= f1["ci_high"]:
        out.append(f"The mean F1 change {f1['mean_delta']:+.4f} is not significant (95% CI "
                   f"{f1['ci_low']:+.4f} to {f1['ci_high']:+.4f}, p = {f1['p_value']:.3f}, n = {f1['n']}): "
                   "treat it as noise.")
    if statistics.get("mde_warning"):
        out.append(f"Golden set too small: {statistics['mde_warning']}; add queries.")
    noise = statistics.get("noise") or {}
    if noise.get("deltas_within_noise"):
        out.append(f"{noise['deltas_within_noise']} per-query F1 changes lie within the noise floor of "
                   f"{noise['repeat_runs'] + 1} runs of this prompt version.")
    return out


def content_hash(golden_hash: str, generated_hash: str, thresholds: Thresholds, judge: DriftJudge,
                 domains: list[str], baseline: Baseline | None) -> str:
    """SPEC §4: SHA-256 of canonical JSON over everything that decides the results."""
    payload = {
        "baseline_content_hash": baseline.fingerprint() if baseline else None,
        "domains": sorted(domains),
        "drift_judge": judge.config(),
        "evalcore_version": __version__,
        "generated": generated_hash,
        "golden": golden_hash,
        "thresholds": thresholds.model_dump(),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def evaluate_loaded(golden: GoldenSet, generated: GeneratedSet, thresholds: Thresholds, *,
                    judge: DriftJudge, baseline: Baseline | None = None,
                    settings: Settings | None = None, errors: dict[str, str] | None = None,
                    name: str | None = None, prompt_version: str | None = None,
                    domain_context: str | None = None, author: str | None = None,
                    repeats: list[Baseline] | None = None) -> EvaluationRun:
    """Score already-validated inputs and decide the gate.

    `repeats` are earlier runs of the same prompt version on the same golden set: their
    spread is the per-query noise floor against which deltas are marked as noise.
    """
    settings = settings or load_settings()
    errors = errors or {}
    scores = score_golden_set(golden, generated, thresholds, judge, errors)
    agg = aggregate_scores((s.precision, s.recall, s.f1, s.term_drift_score, len(s.true_positives),
                            len(s.false_positives), len(s.false_negatives)) for s in scores)
    regression = compare_to_baseline([(s.query_id, s.f1, s.passed) for s in scores], baseline,
                                     thresholds.regression_delta, golden.content_hash)
    domains = sorted({s.domain for s in scores if s.domain})
    statistics = None
    if baseline is not None:
        from .stats import compute_statistics, mark_noise
        statistics = compute_statistics(scores, baseline, thresholds.regression_delta)
        statistics["noise"] = mark_noise(scores, baseline, repeats or [])
    return _decide(golden, generated.path, _generated_hash(golden, generated, errors), thresholds, judge,
                   baseline, settings, score_facts(scores), agg, regression, domains, statistics,
                   scores=scores, name=name, prompt_version=prompt_version, domain_context=domain_context,
                   author=author)


def _decide(golden: GoldenSet, generated_path: str | None, gen_hash: str, thresholds: Thresholds,
            judge: DriftJudge, baseline: Baseline | None, settings: Settings, facts: ScoreFacts,
            agg: MacroMicro, regression: RegressionResult, domains: list[str], statistics: dict | None, *,
            scores: list[QueryScore] | None = None, engine: ColumnarScores | None = None,
            name: str | None, prompt_version: str | None, domain_context: str | None,
            author: str | None) -> EvaluationRun:
    """Gate, recommendations and hashes: the same for both scoring engines."""
    high_risk = [d for d in domains if d in settings.high_risk_domains]
    ci_high = statistics["f1"]["ci_high"] if statistics else None
    gate = decide_gate(facts, agg, regression, thresholds, high_risk, ci_high)
    timestamp = utc_now()
    return EvaluationRun(
        evaluation_id=new_run_id(timestamp), timestamp=timestamp, golden=golden,
        generated_path=generated_path, thresholds=thresholds, judge=judge, scored=scores,
        aggregate=agg, regression=regression, gate=gate,
        recommendations=recommend(facts, agg, regression, thresholds, gate, high_risk) + _stat_notes(statistics),
        domains=domains, high_risk_domains=high_risk,
        content_hash=content_hash(golden.content_hash, gen_hash, thresholds, judge, domains, baseline),
        generated_hash=gen_hash, name=name, prompt_version=prompt_version,
        domain_context=domain_context, author=author or getpass.getuser(), statistics=statistics,
        facts=facts, engine=engine,
    )


@dataclass(slots=True)
class _Paired:
    """What the paired statistics read of one query (columnar runs)."""

    query_id: str
    domain: str | None
    precision: float
    recall: float
    f1: float
    error: str | None = None
    noise_floor: float | None = None
    within_noise: bool = False


def _evaluate_columnar(scored: ColumnarScores, golden_path: str | Path, generated_path: str | Path,
                       thresholds: Thresholds, judge: DriftJudge, baseline: Baseline | None,
                       settings: Settings, repeats_from, **labels) -> EvaluationRun:
    golden = GoldenSet(str(Path(golden_path)), [], scored.golden_hash)  # as the Python loader keeps it
    agg = aggregate_columns(scored.precision, scored.recall, scored.f1, scored.term_drift_score,
                            scored.n_tp, scored.n_fp, scored.n_fn)
    regression = compare_to_baseline(scored.rows() if baseline is not None else [], baseline,
                                     thresholds.regression_delta, golden.content_hash)
    statistics = None
    if baseline is not None:
        from .stats import compute_statistics, mark_noise
        paired = [_Paired(*row) for row in scored.con.execute(
            "SELECT query_id, domain, precision, recall, f1 FROM q ORDER BY pos").fetchall()]
        version = labels.get("prompt_version")
        repeats = repeats_from(golden.content_hash, version) if repeats_from and version else None
        statistics = compute_statistics(paired, baseline, thresholds.regression_delta)
        statistics["noise"] = mark_noise(paired, baseline, repeats or [])
        side = {"query_id": pa.array([p.query_id for p in paired], pa.string()),
                "regression_status": pa.array([regression.status.get(p.query_id) for p in paired], pa.string()),
                "baseline_f1": pa.array([regression.baseline_f1.get(p.query_id) for p in paired], pa.float64())}
        if repeats:
            side["noise_floor"] = pa.array([p.noise_floor for p in paired], pa.float64())
            side["within_noise"] = pa.array([p.within_noise for p in paired], pa.bool_())
        scored.set_side(pa.table(side))
    return _decide(golden, str(Path(generated_path)), scored.generated_hash, thresholds, judge, baseline, settings,
                   scored.facts, agg, regression, scored.domains, statistics, engine=scored, **labels)


def columnar_enabled() -> bool:
    """EVALCORE_ENGINE=python forces the Python scorer (the reference implementation)."""
    value = os.environ.get("EVALCORE_ENGINE", "columnar").strip().lower() or "columnar"
    if value not in ("columnar", "python"):
        raise UsageError(f"EVALCORE_ENGINE={value!r}: expected columnar or python")
    return value == "columnar"


def evaluate(golden_path: str | Path, generated_path: str | Path, *,
             thresholds_path: str | Path | None = None, drift_judge: str | None = None,
             baseline: Baseline | None = None, settings: Settings | None = None,
             name: str | None = None, prompt_version: str | None = None,
             domain_context: str | None = None, author: str | None = None,
             cache_db: str | Path | None = None, repeats_from=None) -> EvaluationRun:
    """Load and validate the input files, then score them (raises InputError on bad input).

    `cache_db` is the store that caches drift-judge vectors (None: in memory only).
    """
    settings = settings or load_settings()
    thresholds = load_thresholds(thresholds_path)
    judge = resolve_judge(drift_judge, settings, cache_db, domain_context)
    labels = {"name": name, "prompt_version": prompt_version, "domain_context": domain_context, "author": author}
    fallback = None
    if columnar_enabled():
        try:
            scored = score_files(golden_path, generated_path, thresholds, judge, domain_context)
        except Fallback as exc:  # the Python loaders name every problem, or score what the engine would not vouch for
            fallback = str(exc)
        else:
            return _evaluate_columnar(scored, golden_path, generated_path, thresholds, judge, baseline,
                                      settings, repeats_from, **labels)
    golden = load_golden_set(golden_path, domain_context)
    generated = load_generated(generated_path, {item.query_id for item in golden.items})
    repeats = repeats_from(golden.content_hash, prompt_version) if repeats_from and prompt_version else None
    run = evaluate_loaded(golden, generated, thresholds, judge=judge, baseline=baseline,
                          settings=settings, name=name, prompt_version=prompt_version,
                          domain_context=domain_context, author=author, repeats=repeats)
    run.fallback = fallback
    return run
