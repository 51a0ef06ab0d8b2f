"""Commands over stored runs: runs, show, compare, gate, demo."""

from __future__ import annotations

import sys

import click
import pandas as pd

from ..config import default_db_path, load_settings, settings_files
from ..demo import seed_demo
from ..governance.release import pinned_release_state
from ..comparison import CompareFilter, compare_page, pair_notes
from ..report import STDOUT, check_outputs
from ..scoring.regression import regression_label
from ..store import drift_terms, get_run, list_runs, query_rows
from ..store.connection import shown_db
from ..store.postgres import is_postgres
from ..text import terminal_safe as safe
from ..signing import parse_fingerprint
from .ci import PipelineFiles, ci_options, ci_paths, stored_findings, tell_pipeline
from .common import echo, expect_head_option, format_table, run_cli, say_trust, store_option, trust_root_option
from .waiting import final_line, wait_for_decision, wait_options, wait_plan

__all__ = ["runs_command", "show_command", "compare_command", "gate_command", "demo_command"]


def _print_runs(db: str, limit: int | None) -> None:
    df = run_cli(list_runs, db, limit)
    if df.empty:
        echo(f"no runs in {shown_db(db)}")
        return
    def repeat(r) -> str:  # harness --repeat: which sample of how many
        return "-" if pd.isna(r.repeats) or pd.isna(r.repeat) else f"{int(r.repeat)}/{int(r.repeats)}"
    rows = [(r.run_id, r.name, r.prompt_version, r.gate_decision, list(r.domains), r.total_queries,
             r.failed, r.errored, r.aggregate_precision, r.aggregate_recall, r.aggregate_f1,
             r.mean_term_drift_score, r.baseline_id, repeat(r)) for r in df.itertuples()]
    echo(format_table(["run", "name", "prompt", "gate", "domains", "queries", "failed", "errored", "P", "R",
                       "F1", "drift", "baseline", "repeat"], rows))


@click.command("runs")
@store_option
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Show only the newest N runs.")
def runs_command(db, limit):
    """List stored runs, newest first.

    Example: termgate runs --db data/termgate.duckdb --limit 10
    """
    _print_runs(db or default_db_path(), limit)


@click.command("show")
@click.argument("run_id", metavar="RUN")
@store_option
@click.option("--failed-only", is_flag=True, help="Only queries that failed.")
def show_command(run_id, db, failed_only):
    """Show one run: summary, gate and per-query results.

    Example: termgate show 20261129-223000-1a2b3c --failed-only
    """
    db = db or default_db_path()
    run = run_cli(get_run, db, run_id)
    df = run_cli(query_rows, db, run_id)
    echo(f"run {run['run_id']}  {safe(run['name'] or '')}  prompt {safe(run['prompt_version'] or '-')}  "
         f"created {run['created_at']} by {safe(run['author'])}")
    cache = _cache_writers(run.get("usage"))
    if cache:
        echo(f"  cache entries used from: {safe(', '.join(cache['used']))} (this run's own writer: "
             f"{safe(cache['writer'])})")
    unjudged = sum(len(terms) for terms in df["unjudged_terms"] if terms is not None) if len(df) else 0
    note = f" ({unjudged} {'term' if unjudged == 1 else 'terms'} unjudged)" if unjudged else ""
    echo(f"  macro P {run['aggregate_precision']:.3f}  R {run['aggregate_recall']:.3f}  "
               f"F1 {run['aggregate_f1']:.3f}  drift {run['mean_term_drift_score']:.3f}{note}  "
               f"passed {run['passed']}/{run['total_queries']}  errored {run['errored']}")
    echo(f"  {safe(run['delta_summary'])}")
    if run.get("retrieval"):
        from .evaluate import retrieval_lines
        for line in retrieval_lines(run["retrieval"]):
            echo(line)
    echo(f"gate: {run['gate_decision'].upper()}")
    for reason in run["gate_reasons"]:
        echo(f"  - {safe(reason)}")
    if failed_only:
        df = df[~df["passed"]]
    rows = [(r.query_id, r.query, r.critical, r.precision, r.recall, r.f1, r.term_drift_score,
             "pass" if r.passed else "FAIL", regression_label(r.regression_status, r.f1, r.baseline_f1),
             "; ".join(r.failure_reasons))
            for r in df.itertuples()]
    echo("")
    echo(format_table(["query_id", "query", "critical", "P", "R", "F1", "drift", "result",
                             "vs baseline", "reasons"], rows, max_width=60))
    _print_errors(df)
    _print_drift(db, run_id, None)


def _cache_writers(usage: str | None) -> dict | None:
    """The run's record of whose cache entries it used (store.cache_writers), if it has one."""
    import json

    try:
        cache = (json.loads(usage) if usage else {}).get("cache")
    except (ValueError, AttributeError):
        return None
    return cache if isinstance(cache, dict) and cache.get("used") else None


def _print_errors(df) -> None:
    """Each errored item's whole reason (the table cuts long cells): the last try and, when
    it differs, the first."""
    errored = df[df["error"].notna()]
    if errored.empty:
        return
    echo(f"\nerrored items ({len(errored)}; `termgate replies RUN --errored` shows their prompts and replies):")
    for r in errored.itertuples():
        echo(f"  {safe(r.query_id)}: error: {safe(r.error)}")


def _print_drift(db: str, run_id: str, limit: int | None) -> None:
    drift = run_cli(drift_terms, db, run_id, limit)
    if drift.empty:
        return
    echo("\ndrift terms (why each was flagged):")
    echo(format_table(["query_id", "query", "term", "why"],
                            [(r.query_id, r.query, r.term, r.reason) for r in drift.itertuples()], max_width=110))


@click.command("compare")
@click.argument("run_id", metavar="RUN")
@click.option("--baseline", "baseline_id", required=True, metavar="RUN", help="Baseline run id.")
@store_option
@click.option("--changed-only", is_flag=True, help="Only queries whose F1 or pass/fail changed.")
def compare_command(run_id, baseline_id, db, changed_only):
    """Compare two stored runs query by query, side by side.

    Example: termgate compare RUN --baseline BASELINE_RUN --changed-only
    """
    db = db or default_db_path()
    here, there = (run_cli(get_run, db, rid) for rid in (run_id, baseline_id))  # an unknown id is exit 2
    for note in pair_notes(here, there):
        echo(f"note: {safe(note)}", err=True)
    df, _ = run_cli(compare_page, db, run_id, baseline_id, CompareFilter(sort="golden order"), 0, None)
    if changed_only:
        df = df[(df["delta_f1"].abs() > 1e-12) | (df["passed"] != df["base_passed"]) | df["f1"].isna()
                | df["base_f1"].isna()]
    rows = [(r.query_id, r.query, regression_label(r.status, r.f1, r.base_f1), r.base_precision, r.precision, r.base_recall, r.recall, r.base_f1,
             r.f1, r.delta_f1, r.base_passed, r.passed) for r in df.itertuples()]
    echo(format_table(["query_id", "query", "status", "P base", "P", "R base", "R", "F1 base", "F1",
                             "ΔF1", "passed base", "passed"], rows))


@click.command("gate")
@click.argument("run_id", metavar="RUN")
@expect_head_option
@trust_root_option
@store_option
@ci_options
@wait_options
def gate_command(run_id, expect_head, trust_root, db, summary_out, comment_out, codequality_out, wait, timeout,
                 interval):
    """Print a stored run's gate decision and sign-off state, after checking the audit
    chain (every record, the account table, this run's stored rows) and printing its head.

    Exit codes: 0 releasable, 1 not releasable (failed, rejected, unattested, a broken audit
    chain naming the first bad record, or a store whose trust root is not the pinned one),
    2 unknown run or bad option, 3 awaiting sign-off (with
    --wait: still, at the timeout), 5 incomplete (errored items; rerun them), 130
    interrupted while waiting (Ctrl-C).

    --wait reads the store every --interval seconds (10) until a decision closes it: 0 once
    approved, 1 once rejected (or the chain breaks), 3 after --timeout seconds (3600); each
    decision is printed with its reviewer as it is read. A run no sign-off can release
    (failed gate, errored items) returns at once. No connection is held between reads, so
    the dashboard can record the decision meanwhile (a DuckDB file or a PostgreSQL URL).

    --summary, --pr-comment and --codequality write the run's job summary, pull-request
    comment and GitLab Code Quality report as `evaluate` does, with the sign-off state at
    the end (after --wait); $GITHUB_STEP_SUMMARY and, under GITHUB_ACTIONS=true,
    annotations at the lines of the golden file stored with the run (the original may be
    gone) too (docs/ci.md).

    \b
    Example:
      termgate gate 20261129-223000-1a2b3c --expect-head 12:3f5a9c0d1e2f4a6b && deploy
      # CI holds the team store to the trust root committed in termgate.toml ([trust] root):
      termgate gate 20261129-223000-1a2b3c --trust-root ed25519:2Zq1...
      # a deployment job waiting up to 2 hours for a reviewer, reading the store every 30 s:
      termgate gate 20261129-223000-1a2b3c --wait --timeout 7200 --interval 30 --summary summary.md
    """
    db = db or default_db_path()
    plan = wait_plan(wait, timeout, interval)
    paths = ci_paths(summary_out, comment_out, codequality_out)
    run_cli(check_outputs, paths, settings_files(run_cli(load_settings)), None if is_postgres(db) else db)  # never over the store or the config
    if expect_head is not None:
        from ..governance.signoff import parse_head
        run_cli(parse_head, expect_head)
    if trust_root is not None:
        trust_root = run_cli(parse_fingerprint, trust_root)
    run = run_cli(get_run, db, run_id)
    err = STDOUT in paths.values()  # a file on standard output: our lines go to standard error
    pipeline = run_cli(PipelineFiles, paths)
    settings = run_cli(load_settings)
    try:
        echo(f"gate: {run['gate_decision']}", err=err)
        for reason in run["gate_reasons"]:
            echo(f"  - {safe(reason)}", err=err)
        if plan is None:
            state, last = run_cli(pinned_release_state, db, run_id, settings, expect_head, trust_root), None
        else:
            waited = wait_for_decision(db, run_id, settings, plan, expect_head, err, trust_root)
            state, last = waited.state, final_line(waited, plan)
        if state.chain.ok:
            echo(f"audit head: {state.chain.head}", err=err)
        say_trust(state.chain, err)
        run_cli(tell_pipeline, pipeline,
                lambda lines: stored_findings(db, run_id, settings, state, with_lines=lines), err)
        echo(last or f"{state.status}: {safe('; '.join(state.reasons))}", err=err)
    finally:
        pipeline.discard()
    sys.exit(state.exit_code)


@click.command("demo")
@store_option
@click.option("--data", "data_dir", default=None, type=click.Path(file_okay=False),
              help="A folder laid out like the demo data (DOMAIN/golden.jsonl, DOMAIN/v1-baseline.jsonl, …, "
                   "prompts/) [default: the demo data installed with termgate].")
def demo_command(db, data_dir):
    """Seed the demo runs and the demo prompt evaluations into the store (idempotent) and list them.

    Example: termgate demo --db data/termgate.duckdb
    """
    db = db or default_db_path()
    seeded = run_cli(seed_demo, db, data_dir)
    if not seeded.runs and not seeded.prompt_evals:
        echo(f"no demo data found under {data_dir or 'the installed package'}", err=True)
        sys.exit(2)
    for item in seeded.runs:
        state = "stored" if item.created else "already stored"
        echo(f"{item.domain:10} {item.prompt_version}  gate {item.gate:6}  run {item.run_id}  ({state})")
    for prompt in seeded.prompt_evals:
        state = "stored" if prompt.created else "already stored"
        average = "-" if prompt.average is None else f"{prompt.average:.1f}"
        echo(f"{'prompts':10} {prompt.prompt_version}  average {average:>4}  pass rate {prompt.pass_rate:4.0%}  "
             f"eval {prompt.eval_id}  ({state})")
    if seeded.prompt_evals:
        echo(f"prompt versions compared: {load_settings().dashboard_url.rstrip('/')}/prompts?dataset="
             f"{seeded.prompt_evals[0].dataset_hash[:12]}")
    echo("")
    _print_runs(db, None)
    for item in seeded.runs:
        if item.prompt_version != "v1":
            echo(f"\n== {item.domain} {item.prompt_version} (run {item.run_id}), gate {item.gate}")
            _print_drift(db, item.run_id, 6)
