"""One evaluation run end to end: load, score, compare, gate (the use case behind
`evaluate`, `harness`, the demo and the dashboard's Import)."""

from __future__ import annotations

import getpass
import hashlib
import json
import os
import secrets
import shlex
from dataclasses import replace
from pathlib import Path

import pyarrow as pa

from .clock import utc_now
from . import __version__
from .config import Settings, load_settings
from .drift.judge import DriftJudge, hashed_config
from .drift.resolve import resolve_judge
from .errors import InputError, Problem, UsageError
from .scoring.gate import NO_ACTION, decide_gate, recommend
from .identity import canonical_domain, canonical_name
from .io import default_golden_name, load_thresholds
from .scoring.metrics import aggregate_columns
from .models import Thresholds
from .scoring.regression import Baseline, RegressionResult, compare_to_baseline, passed_under
from .scoring.run import EvaluationRun
from .scoring.scorer import ScoredQueries, score
from .store import StoredVectors, golden_names

__all__ = ["EvaluationRun", "evaluate", "new_run_id", "utc_now", "ignored_environment", "content_hash"]

IGNORED_VARIABLES = {
    "EVALCORE_ENGINE": "every run is scored by the one DuckDB scorer",
    "EVALCORE_ENGINE_MEMORY": "the scorer's memory cap is TERMGATE_DUCKDB_MEMORY (default 2GB)",
}


def ignored_environment() -> list[str]:
    """Warnings for environment variables earlier versions read and this one ignores."""
    return [f"{name} is set but no longer read: {why}" for name, why in IGNORED_VARIABLES.items()
            if os.environ.get(name) is not None]


def new_run_id(timestamp: str) -> str:
    """Sortable, readable and unique: 20261129-223000-1a2b3c."""
    stamp = timestamp[:19].replace("-", "").replace(":", "").replace("T", "-")
    return f"{stamp}-{secrets.token_hex(3)}"


def _stat_notes(statistics: dict | None, decision: str) -> list[str]:
    """Rule-based advice from the paired statistics, listed after the gate's reasons and
    never against them: on a failed gate the interval speaks of the mean only (SPEC §6)."""
    if not statistics:
        return []
    out = []
    f1 = statistics["f1"]
    if f1["ci_low"] is not None and f1["ci_low"] <= 0 <= f1["ci_high"]:
        figures = (f"(95% CI {f1['ci_low']:+.4f} to {f1['ci_high']:+.4f}, p = {f1['p_value']:.3f}, "
                   f"n = {f1['n']})")
        out.append(f"The mean F1 change {f1['mean_delta']:+.4f} is not significant {figures}: treat it as noise."
                   if decision != "fail" else
                   f"The mean F1 change {f1['mean_delta']:+.4f} is not significant {figures}. This is about the "
                   "mean only: the gate failed for the reasons above, and they stand.")
    if statistics.get("mde_warning"):
        out.append(f"Golden set too small: {statistics['mde_warning']}; add queries.")
    noise = statistics.get("noise") or {}
    if noise.get("deltas_within_noise"):
        out.append(f"{noise['deltas_within_noise']} per-query F1 changes lie within the noise floor of "
                   f"{noise['repeat_runs'] + 1} runs of this prompt version.")
    return out


def content_hash(golden_hash: str, generated_hash: str, thresholds: Thresholds, judge: DriftJudge,
                 domains: list[str], baseline: Baseline | None, retrieval: dict | None = None) -> str:
    """SPEC §4: SHA-256 of canonical JSON over everything that decides the results
    (`retrieval`: retrieval_fingerprint's, present only for a run that measured retrieval)."""
    payload = {
        "baseline_content_hash": baseline.fingerprint() if baseline else None,
        "domains": sorted(domains),
        "drift_judge": hashed_config(judge),
        "evalcore_version": __version__,
        "generated": generated_hash,
        "golden": golden_hash,
        "thresholds": thresholds.model_dump(),
    }
    if retrieval is not None:
        payload["retrieval"] = retrieval
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _compare(scored: ScoredQueries, baseline: Baseline | None, thresholds: Thresholds,
             repeats: list[Baseline] | None, golden_name: str) -> tuple[RegressionResult, dict | None]:
    """Rule 8 and the paired statistics; the per-query comparison columns go beside query_scores."""
    if baseline is None:
        return compare_to_baseline([], None, thresholds.regression_delta, scored.golden_hash), None
    from .scoring.stats import QueryMetrics, compute_statistics, mark_noise

    rows = scored.con.execute("SELECT query_id, f1, passed, golden_entry_hash FROM query_scores").fetchall()
    as_baseline = None
    if baseline.forbidden_fails is not None and baseline.forbidden_fails != thresholds.forbidden_fails:
        side = scored.con.sql("SELECT passed, failure_reasons, drift_reasons, critical FROM query_scores")
        as_baseline = passed_under(side.to_arrow_table(), baseline.forbidden_fails).to_pylist()
    regression = compare_to_baseline(rows, baseline, thresholds.regression_delta, scored.golden_hash, golden_name,
                                     thresholds.model_dump(), as_baseline)
    ids = [r[0] for r in rows]
    metrics = QueryMetrics(ids, scored.domain_column(), scored.precision, scored.recall, scored.f1,
                           scored.facts.errored)
    statistics = compute_statistics(metrics, _without(baseline, regression.golden_changed),
                                    thresholds.regression_delta)
    statistics["noise"], floors, within = mark_noise(metrics, baseline, repeats or [])
    columns = {"query_id": pa.array(ids, pa.string()),
               "regression_status": pa.array([regression.status.get(q) for q in ids], pa.string()),
               "baseline_f1": pa.array([regression.baseline_f1.get(q) for q in ids], pa.float64())}
    if floors is not None:
        columns["noise_floor"] = pa.array(floors, pa.float64())
        columns["within_noise"] = pa.array(within, pa.bool_())
    scored.set_comparison(pa.table(columns))
    return regression, statistics


def _retrieval(setup, scored: ScoredQueries, baseline: Baseline | None, thresholds: Thresholds,
               high_risk: set[str], first: dict[str, str]):
    """The run's retrieval effect (termgate.retrieval.effect) over the scored rows: each
    query's normalised terms and weights, errored items not searched."""
    from .retrieval.effect import QueryInput, measure_effect

    rows = scored.con.execute("SELECT query_id, query, domain, generated_terms, generated_weights, "
                              "error IS NOT NULL FROM query_scores ORDER BY position").fetchall()
    queries = [QueryInput(q, text, domain, tuple(zip(terms or [], weights or [])), errored)
               for q, text, domain, terms, weights, errored in rows]
    baseline_terms = None if baseline is None else \
        {q: None if r.errored else r.terms for q, r in baseline.rows.items()}
    return measure_effect(setup, queries, baseline_terms, k=thresholds.retrieval_k,
                          depth=thresholds.retrieval_depth, delta=thresholds.retrieval_delta,
                          high_risk_domains=high_risk, first=first)


def first_documents(golden_path) -> dict[str, str]:
    """The golden entries' `must_find_first` documents (termgate.retrieval.identifiers)."""
    from .retrieval.identifiers import first_documents as read

    return read(golden_path)


def retrieval_fingerprint(setup, outcome, thresholds: Thresholds, baseline: Baseline | None,
                          first: dict[str, str]) -> dict:
    """What decides a run's retrieval results besides its own terms: the corpus, the
    judgments, the engine with its version and query template, k and depth, the baseline's
    terms, and for an engine termgate does not embed the rankings it returned."""
    out = setup.fingerprint(thresholds.retrieval_k, thresholds.retrieval_depth)
    out["baseline_terms"] = baseline.terms_digest() if baseline is not None else None
    out["must_find_first"] = dict(sorted(first.items()))
    if out["engine"].get("engine") != "tantivy":
        out["run_files"] = outcome.summary["run_files"]
    return out


def _without(baseline: Baseline, query_ids: list[str]) -> Baseline:
    """The baseline without these queries: a golden_changed query is left out of the
    statistics (SPEC §2 rule 8)."""
    if not query_ids:
        return baseline
    left_out = set(query_ids)
    return replace(baseline, rows={q: r for q, r in baseline.rows.items() if q not in left_out})


def evaluate(golden_path: str | Path, generated: str | Path | pa.Table, *,
             thresholds: Thresholds | str | Path | None = None, drift_judge: str | DriftJudge | None = None,
             baseline: Baseline | None = None, settings: Settings | None = None,
             name: str | None = None, prompt_version: str | None = None,
             domain_context: str | None = None, author: str | None = None,
             cache_db: str | Path | None = None, repeats_from=None, source: str | None = None,
             golden_name: str | None = None, cache_use=None, retrieval=None) -> EvaluationRun:
    """Validate and score the inputs, compare with the baseline and decide the gate.

    `generated` is a generated-expansions file, or a table of termgate.io.GENERATED_SCHEMA
    (the harness's outputs, errored items included; `source` then names it). Raises
    InputError naming file, line and field on bad input. `golden_name` names the golden
    set (SPEC §1.1; default: its path from the git repository's root, else from the working
    folder; `golden_name_note` says when that default differs from the name this golden
    content was stored under). `cache_db` is the store that
    caches drift-judge vectors (None: in memory only) and whose audit chain says whether the
    golden revision is approved (the report's run.golden_revision). `repeats_from(golden_name,
    prompt_version)` returns earlier runs of the same prompt version on the same golden
    set: their spread is the per-query noise floor. `cache_use` (termgate.store.cache_writers.CacheUse)
    records whose cache entries the given judge (and the harness's replies) used: the run
    keeps its record (run.cache_use); a judge made here from `cache_db` records its own.
    `retrieval` (termgate.retrieval.effect.RetrievalSetup) measures the run's retrieval
    effect against relevance judgments (docs/retrieval.md).
    """
    author = canonical_name(getpass.getuser() if author is None else author, "--author")  # SPEC §4: four-eyes
    settings = settings or load_settings()
    if domain_context is not None:
        canonical_domain(domain_context, "--domain")  # the identity rule of domains (issue 32)
    thresholds_file = None if isinstance(thresholds, Thresholds) or thresholds is None else str(thresholds)
    if not isinstance(thresholds, Thresholds):
        thresholds = load_thresholds(thresholds)
    if not isinstance(drift_judge, DriftJudge):
        vectors = StoredVectors(cache_db, cache_use) if cache_db is not None else None
        cache_use = vectors.use if vectors is not None else cache_use
        drift_judge = resolve_judge(drift_judge, settings, vectors, domain_context)
    judge = drift_judge
    if golden_name is not None and not golden_name.strip():
        raise UsageError("--golden-name: empty; give the golden set a name, or leave the option out (the name is "
                         "then the --golden path from the git repository's root, else from the working folder)")
    named = golden_name is not None
    golden_name = golden_name.strip() if named else default_golden_name(golden_path)
    scored = score(golden_path, generated, thresholds, judge, domain_context)
    try:
        name_note = None if named or cache_db is None else _rename_note(cache_db, golden_name, scored.golden_hash)
        repeats = (repeats_from(golden_name, prompt_version)
                   if baseline is not None and repeats_from and prompt_version else None)
        regression, statistics = _compare(scored, baseline, thresholds, repeats, golden_name)
        agg = aggregate_columns(scored.precision, scored.recall, scored.f1, scored.term_drift_score,
                                scored.n_tp, scored.n_fp, scored.n_fn)
        policy = _policy(cache_db, settings)
        high_risk = [d for d in scored.domains if d in policy.high_risk_domains]
        floors = policy.floor_problems(thresholds) if high_risk else []
        if floors:
            raise _below_floor(thresholds_file, floors[0], high_risk)
        ci_high = statistics["f1"]["ci_high"] if statistics else None
        first = None if retrieval is None else first_documents(golden_path)
        effect = None if retrieval is None else _retrieval(retrieval, scored, baseline, thresholds,
                                                           set(policy.high_risk_domains), first)
        gate = decide_gate(scored.facts, agg, regression, thresholds, high_risk, ci_high,
                           effect.summary if effect is not None else None)
        golden_revision = _golden_revision(cache_db, golden_name, scored, policy)
    except BaseException:
        scored.close()
        raise
    timestamp = utc_now()
    return EvaluationRun(
        evaluation_id=new_run_id(timestamp), timestamp=timestamp, golden_path=str(Path(golden_path)),
        golden_hash=scored.golden_hash, golden_name=golden_name,
        generated_path=source if isinstance(generated, pa.Table) else str(Path(generated)),
        generated_hash=scored.generated_hash, thresholds=thresholds, judge=judge, queries=scored,
        aggregate=agg, regression=regression, gate=gate,
        recommendations=_recommendations(recommend(scored.facts, agg, regression, thresholds, gate, high_risk)
                                         + _stat_notes(statistics, gate.decision)
                                         + _retrieval_notes(effect), name_note),
        domains=scored.domains, high_risk_domains=high_risk,
        content_hash=content_hash(scored.golden_hash, scored.generated_hash, thresholds, judge, scored.domains,
                                  baseline, None if effect is None else
                                  retrieval_fingerprint(retrieval, effect, thresholds, baseline, first)),
        retrieval=effect,
        name=name, prompt_version=prompt_version, domain_context=domain_context,
        author=author, statistics=statistics, golden_revision=golden_revision, golden_name_note=name_note,
        cache_use=cache_use.record() if cache_use is not None else None, policy=policy.recorded())


def _retrieval_notes(effect) -> list[str]:
    """Advice from the retrieval effect, computed from it (SPEC §2 rule 10)."""
    if effect is None:
        return []
    summary = effect.summary
    out = []
    if summary["regressed_queries"]:
        ids = summary["regressed_queries"]
        from .retrieval.outcome import reference_name
        out.append(f"{len(ids)} {'query' if len(ids) == 1 else 'queries'} lost {summary['labels']['ndcg']} against {reference_name(summary['reference'])} "
                   f"({', '.join(ids[:5])}{' ...' if len(ids) > 5 else ''}): read their rankings side by side "
                   "(the JSON report's retrieval.per_query, or --trec-runs) before releasing.")
    if summary["judged_queries"] == 0:
        out.append("No golden query has a relevant document in the judgments: check that the qrels' query ids are "
                   "the golden set's query_ids.")
    if summary.get("query_problem_count"):
        first = summary["query_problems"][0]
        out.append(f"{summary['query_problem_count']} searches did not parse as written (e.g. {first['query_id']}, "
                   f"{first['variant']}: {first['message']}): see the report's retrieval.query_problems, and the "
                   "query template in [retrieval] (docs/retrieval.md).")
    if summary.get("relevant_not_in_corpus"):
        out.append(f"{summary['relevant_not_in_corpus']} relevant judged documents are not in the corpus: no engine "
                   "can find them, so recall cannot reach 1; check that the qrels' doc ids are the corpus's ids.")
    return out


def _below_floor(path: str | None, problem: str, high_risk: list[str]) -> InputError:
    """A thresholds file below the policy's floor: its line and key (the defaults: no file)."""
    key = problem.split(" ", 1)[0]
    line = 0
    if path is not None:
        try:
            text = Path(path).read_text(encoding="utf-8-sig")
        except OSError:
            text = ""
        index = text.find(key)
        line = text.count("\n", 0, index) + 1 if index >= 0 else 0
    return InputError([Problem(path or "(default thresholds)", line, key,
                               f"{problem.split(' ', 1)[1]}; this run is {', '.join(high_risk)}")])


def _policy(db, settings: Settings):
    """The store's policy in force, tightened by local settings (the default policy, so
    tightened, without a store)."""
    from .governance.policy import effective_policy, policy_of_store

    return policy_of_store(db, settings) if db is not None else effective_policy([], settings)


def _recommendations(found: list[str], name_note: str | None) -> list[str]:
    """The gate's recommendations, then the rename note, which asks for an action: "no
    action needed" does not stand before it."""
    if not name_note:
        return found
    return [line for line in found if line != NO_ACTION] + [name_note]


def _rename_note(db, golden_name: str, golden_hash: str) -> str | None:
    """SPEC §1.1: one line when runs on this golden content were stored under other names
    only (the path as typed, the default of earlier versions, say), and how to keep the old one."""
    earlier = golden_names(db, golden_hash)
    if not earlier or golden_name in earlier:
        return None
    return (f"golden set {golden_name!r}: earlier runs stored this golden content as {earlier[0]!r}; the default "
            "name is now the path from the git repository's root, else from the working folder (SPEC §1.1), and "
            "approvals, trends, the noise floor and the PR comment go by name: "
            f"pass --golden-name {shlex.quote(earlier[0])} to keep the old one")


def _golden_revision(db, golden_name: str, scored: ScoredQueries, settings) -> dict | None:
    """The golden revision's approval as the store's chain says now (None without a store).
    Sign-off reads it from the chain again (signoff.flagged_items): this is what the report says."""
    if db is None:
        return None
    from .governance.golden_approvals import revision_state
    return revision_state(db, golden_name, scored.golden_hash, settings)
