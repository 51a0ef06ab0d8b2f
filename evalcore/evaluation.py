"""One evaluation run end to end: load, score, compare, gate (the library behind `evaluate`)."""

from __future__ import annotations

import getpass
import hashlib
import json
import secrets
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import orjson

from . import __version__
from .config import Settings, load_settings
from .drift import DriftJudge, resolve_judge
from .gate import decide_gate, recommend
from .io import GeneratedSet, GoldenSet, load_generated, load_golden_set, load_thresholds
from .metrics import MacroMicro, aggregate_scores
from .models import Gate, Thresholds
from .regression import Baseline, RegressionResult, compare_to_baseline
from .scoring import QueryScore, score_golden_set

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
    scores: list[QueryScore]
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

    @property
    def errored(self) -> int:
        return sum(1 for s in self.scores if s.error is not None)

    @property
    def passed(self) -> int:
        return sum(1 for s in self.scores if s.passed)


def utc_now() -> str:
    """UTC ISO 8601 with milliseconds, ending in Z."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def new_run_id(timestamp: str) -> str:
    """Sortable, readable and unique: 20261129-223000-1a2b3c."""
    stamp = timestamp[:19].replace("-", "").replace(":", "").replace("T", "-")
    return f"{stamp}-{secrets.token_hex(3)}"


def _generated_hash(golden: GoldenSet, generated: GeneratedSet, errors: dict[str, str]) -> str:
    digest = hashlib.sha256()
    empty: dict[str, float] = {}
    for item in golden.items:
        terms = generated.expansions.get(item.query_id, empty)
        digest.update(orjson.dumps([item.query_id, list(terms.items()), errors.get(item.query_id)]))
        digest.update(b"\n")
    return digest.hexdigest()


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
    high_risk = [d for d in domains if d in settings.high_risk_domains]
    statistics = None
    if baseline is not None:
        from .stats import compute_statistics, mark_noise
        statistics = compute_statistics(scores, baseline, thresholds.regression_delta)
        statistics["noise"] = mark_noise(scores, baseline, repeats or [])
    ci_high = statistics["f1"]["ci_high"] if statistics else None
    gate = decide_gate(scores, agg, regression, thresholds, high_risk, ci_high)
    timestamp = utc_now()
    gen_hash = _generated_hash(golden, generated, errors)
    return EvaluationRun(
        evaluation_id=new_run_id(timestamp), timestamp=timestamp, golden=golden,
        generated_path=generated.path, thresholds=thresholds, judge=judge, scores=scores,
        aggregate=agg, regression=regression, gate=gate,
        recommendations=recommend(scores, agg, regression, thresholds, gate, high_risk) + _stat_notes(statistics),
        domains=domains, high_risk_domains=high_risk,
        content_hash=content_hash(golden.content_hash, gen_hash, thresholds, judge, domains, baseline),
        generated_hash=gen_hash, name=name, prompt_version=prompt_version,
        domain_context=domain_context, author=author or getpass.getuser(), statistics=statistics,
    )


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
    golden = load_golden_set(golden_path, domain_context)
    generated = load_generated(generated_path, {item.query_id for item in golden.items})
    repeats = repeats_from(golden.content_hash, prompt_version) if repeats_from and prompt_version else None
    return evaluate_loaded(golden, generated, thresholds, judge=judge, baseline=baseline,
                           settings=settings, name=name, prompt_version=prompt_version,
                           domain_context=domain_context, author=author, repeats=repeats)
