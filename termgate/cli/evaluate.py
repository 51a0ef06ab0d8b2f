"""`termgate evaluate`: score generated expansions against a golden set."""

from __future__ import annotations

import dataclasses
import sys
import threading
from pathlib import Path
from urllib.parse import urlencode

import click

from ..config import Settings, default_db_path, load_settings, settings_files
from ..drift.judge import JUDGE_NAMES
from ..llm.client import DEFAULT_MAX_TOKENS
from ..errors import ChainBroken, UsageError
from ..evaluation import EvaluationRun, evaluate, ignored_environment
from ..gc_pause import without_gc_pauses
from ..io import load_baseline_report
from ..drift.resolve import resolve_judge
from ..scoring.regression import Baseline
from ..report import STDOUT, PendingFile, build_report, check_outputs, iter_report_json, render_html, render_junit
from ..governance.chain_guard import append_intact, require_intact
from ..governance.ci_key import check_ci_key
from ..governance.signoff import ReleaseState, parse_head, release_state, unsigned_state
from ..store.postgres import is_postgres
from ..store import StoredVectors, check_store_path, exists, load_baseline, repeat_runs, save_run
from ..store.connection import shown_db
from ..text import terminal_safe
from .ci import PipelineFiles, ci_options, ci_paths, run_findings, tell_pipeline
from .common import (EXIT_NOT_RELEASABLE, delta_line, echo, exits_130_when_interrupted, expect_head_option, fail,
                     judge_endpoint, report_options, retrieval_options, retrieval_setup, run_cli, say_endpoints,
                     store_option, trec_run_paths)

__all__ = ["evaluate_command", "resolve_baseline", "dashboard_link", "print_summary", "finish", "write_outputs",
           "with_max_tokens",
           "warn_ignored_environment", "note_default_judge", "check_paths", "chain_refusal", "refuse_broken_chain"]


def resolve_baseline(value: str | None, db: str) -> Baseline | None:
    """SPEC §2 rule 8: a report file when the path exists, else a stored run id. A value
    that looks like a path (a separator, or ending .json) and is neither says the file is
    missing, not that the run is unknown."""
    from ..errors import UnknownRunError

    if value is None:
        return None
    if Path(value).exists():
        return load_baseline_report(value)
    missing_file = UsageError(f"--baseline {value}: no such file, and no stored run has that id")
    path_like = "/" in value or "\\" in value or value.lower().endswith(".json")
    if not exists(db):
        if path_like:
            raise missing_file
        raise UsageError(f"--baseline {value}: no such report file, and no store at {db} to look up a run id")
    try:
        return load_baseline(db, value)
    except UnknownRunError:
        if path_like:
            raise missing_file from None
        raise


def dashboard_link(url: str, run_id: str, baseline_id: str | None) -> str:
    """Where a reviewer sees this run: Compare with its baseline, else the run list."""
    base = url.rstrip("/")
    if baseline_id:
        return f"{base}/compare?{urlencode({'run': run_id, 'baseline': baseline_id})}"
    return f"{base}/?{urlencode({'run': run_id})}"


class _ReportsFailed(Exception):
    """The reports could not be written: the store's transaction rolls back."""


def chain_refusal(db: str, expect_head: str | None = None) -> str | None:
    """SPEC §4: the line refusing to store a run on this store's audit chain (its records
    and accounts verified, and `expect_head` still held), or None when it is intact. On an
    intact chain, TERMGATE_CI_KEY is checked against it (governance.ci_key): a key that
    would not attest the run is UsageError (exit 2) before anything is scored or stored."""
    try:
        chain = require_intact(db, expect_head)
    except ChainBroken as exc:
        return refusal_line(exc)
    warning = check_ci_key(chain)
    if warning:
        echo(warning, err=True)
    return None


def refusal_line(exc: ChainBroken) -> str:
    return f"error: {exc}; nothing is appended to a broken chain: the run was not stored and no report was written"


def refuse_broken_chain(fn, *args, **kwargs):
    """fn(...), a broken audit chain found meanwhile being its one line and exit 1 (SPEC §3)."""
    try:
        return fn(*args, **kwargs)
    except ChainBroken as exc:
        fail([refusal_line(exc)], EXIT_NOT_RELEASABLE)


def write_outputs(run: EvaluationRun, db: str | None, paths: dict[str, str | None],
                  store_with: dict | None = None, expect_head: str | None = None) -> list[str]:
    """Store the run and write the requested reports, all or nothing (SPEC §5).

    Reports stream into temporary files while the store write runs in a thread (DuckDB
    releases the GIL); `store_with` are save_run's extra keywords (the harness's replies).
    The store commits only once every report is written and closed,
    and the files are renamed into place only once the run is stored: a full disk while
    writing a report leaves neither a stored run nor a report. Nor does a broken audit
    chain (ChainBroken; SPEC §4): the run goes only onto a chain verified intact, in its
    records and accounts (and `expect_head`), up to the head the run's header links to.
    """
    errors: list[BaseException] = []
    written = threading.Event()
    failed: list[bool] = []

    def reports_written() -> None:  # the store's last step before COMMIT
        written.wait()
        if failed:
            raise _ReportsFailed

    def store() -> None:
        try:
            append_intact(db, lambda extends: save_run(db, run, before_commit=reports_written, extends=extends,
                                                       **(store_with or {})), expect_head)
        except BaseException as exc:  # re-raised in the caller's thread
            errors.append(exc)

    pending: list[PendingFile] = []
    kinds = [k for k in ("json", "html", "junit", *TREC_KEYS) if paths.get(k)
             and (not k.startswith("trec_") or run.retrieval is not None and k[5:] in run.retrieval.runs)]
    try:  # create every output file first: an unwritable path stops us before anything is stored
        for key in kinds:
            pending.append(PendingFile(paths[key], "json" if key == "json" else "markup"))
    except OSError as exc:
        for item in pending:
            item.discard()
        raise UsageError(f"cannot write {_flag(key)} {paths[key]}: {exc.strerror or exc}") from None
    files = dict(zip(kinds, pending))
    writer = threading.Thread(target=store, name="termgate-store") if db else None
    if writer:
        writer.start()
    key = None
    try:
        report = None
        for key, item in files.items():
            if key == "json":
                item.write(iter_report_json(run))
            elif key.startswith("trec_"):
                from ..retrieval.effect import run_tag
                from ..retrieval.inputs import write_run
                write_run(item, run.retrieval.runs[key[5:]], run_tag(key[5:]))
            else:
                report = report or build_report(run)
                item.write((render_html if key == "html" else render_junit)(report))
            item.close()  # flushes: a full disk shows here, before the store commits
    except OSError as exc:
        failed.append(True)
        raise UsageError(f"cannot write {_flag(key)} {paths[key]}: {exc.strerror or exc}") from None
    except BaseException:
        failed.append(True)
        raise
    finally:
        written.set()
        if writer:
            writer.join()
        if errors or failed:
            for item in pending:
                item.discard()
    if errors:
        raise errors[0]
    for item in pending:
        item.commit()
    return [str(paths[key]) for key in files]  # as the user gave them


TREC_KEYS = ("trec_unexpanded", "trec_baseline", "trec_candidate")


def _flag(key: str) -> str:
    return "--trec-runs" if key.startswith("trec_") else f"--{key}"


def print_summary(run: EvaluationRun, stored_in: str | None, err: bool = False) -> None:
    """The human summary (on standard error when a report goes to standard output)."""
    agg = run.aggregate
    unjudged = run.queries.facts.unjudged_line()
    lines = [f"run {run.evaluation_id}  ({run.total} queries, drift judge {run.judge.name}"
             + (f", name {terminal_safe(run.name)}" if run.name else "") + ")",
             f"  macro P {agg.macro_precision:.3f}  R {agg.macro_recall:.3f}  F1 {agg.macro_f1:.3f}  "
             f"drift {agg.macro_drift:.3f}{f' ({unjudged})' if unjudged else ''}   micro F1 {agg.micro_f1:.3f}",
             f"  passed {run.passed}  failed {run.total - run.passed}  errored {run.errored}",
             f"  {terminal_safe(run.regression.summary)}",
             *(retrieval_lines(run.retrieval.summary) if run.retrieval is not None else []),
             f"gate: {run.gate.decision.upper()}"]
    lines += [f"  - {terminal_safe(reason)}" for reason in run.gate.reasons]
    policy = run.policy or {}
    if policy.get("tightened"):  # a local file or variable asked for more than the store's policy
        where = f"policy record {policy['record']}" if policy.get("record") else "the default policy"
        lines.append(f"policy: {where}, tightened for this run by local settings: "
                     f"{terminal_safe('; '.join(policy['tightened']))}")
    cache = run.cache_use or {}
    others = [w for w in cache.get("used", []) if w != cache.get("writer")]
    if others:  # the default trusts nobody else: say whose entries the setting let in
        lines.append(f"cache: used entries written by {terminal_safe(', '.join(others))} (TERMGATE_CACHE_TRUST)")
    if stored_in:
        lines.append(f"stored in {shown_db(stored_in)}")
    for line in lines:
        echo(line, err=err)


def retrieval_lines(summary: dict) -> list[str]:
    """The retrieval lines of a run's summary (`evaluate`, `harness`, `show`): each
    variant's means, what the candidate changed, which term did it, moved identifiers."""
    from ..retrieval.outcome import METRICS, VARIANTS, reference_name  # a stored summary's keys come back sorted

    labels = summary["labels"]
    lines = [f"  retrieval ({summary['engine'].get('engine')}, {summary['compared_queries']} of "
             f"{summary['judged_queries']} judged queries compared against {reference_name(summary['reference'])})"]
    for variant in [v for v in VARIANTS if v in summary["means"]]:
        means = summary["means"][variant]
        figures = "  ".join(f"{labels[m]} {means[m]:.3f}" for m in METRICS if means.get(m) is not None)
        lines.append(f"    {variant:<11} {figures or 'no judged query'}")
    stats = (summary.get("statistics") or {}).get("ndcg")
    if stats and stats.get("mean_delta") is not None:
        lines.append(f"    {labels['ndcg']} change {delta_line(stats, '.3f')}")
    lost = summary["regressed_queries"]
    lines.append(f"    {len(lost)} {'query' if len(lost) == 1 else 'queries'} lost more than {summary['delta']:g} {labels['ndcg']}, "
                 f"{len(summary['improved_queries'])} gained"
                 + (f": {terminal_safe(', '.join(lost[:5]))}{' ...' if len(lost) > 5 else ''}" if lost else ""))
    from ..retrieval.attribution import brought_in_line

    for qid in lost[:5]:
        terms = summary["attribution"].get(qid) or []
        if terms:
            lines.append(f"    {terminal_safe(qid)}: {terminal_safe(brought_in_line(terms[0], summary['k']))}")
    for moved in summary["identifiers"]:
        where = f"rank {moved['candidate_rank']}" if moved["candidate_rank"] else f"not in the top {summary['depth']}"
        lines.append(f"    {terminal_safe(moved['query_id'])}: must find {terminal_safe(moved['document'])!s} first; "
                     f"the {'expansion moved it to' if moved['moved_by'] == 'expansion' else 'engine has it at'} "
                     f"{where}")
    return lines


def check_paths(outputs: dict[str, str | None], inputs: dict[str, str | None], db: str | None,
                expect_head: str | None = None) -> Settings:
    """SPEC §5: refuse, before any work, an output that could destroy something (a device,
    a FIFO, an input, the config or a refit's coefficients, the store, one file twice), a
    --db that is not a termgate store, and an --expect-head that is not COUNT:HASH (or has
    no store to check). Returns the settings, read once here."""
    settings = run_cli(load_settings)
    inputs = {**inputs, **settings_files(settings)}
    run_cli(check_outputs, outputs, inputs, None if db is not None and is_postgres(db) else db)  # a URL is no file
    if db is not None:
        run_cli(check_store_path, db)
    if expect_head is not None:
        if db is None:
            raise click.UsageError("--expect-head checks the store's audit chain: it cannot go with --no-store")
        run_cli(parse_head, expect_head)
    return settings


@click.command("evaluate")
@click.option("--golden", required=True, type=click.Path(), help="Golden set (JSONL).")
@click.option("--generated", required=True, type=click.Path(),
              help="Output of the system under test (JSONL, or one JSON object query_id -> terms).")
@click.option("--thresholds", type=click.Path(), help="Thresholds (JSON or TOML); every key optional.")
@click.option("--domain", "domain_context", help="Free-text domain context; fills context.domain where missing.")
@click.option("--baseline", help="Baseline: a JSON report file when the path exists, else a stored run id.")
@click.option("--drift-judge", type=click.Choice(JUDGE_NAMES),
              help="Drift judge [default: embedding when installed, else none].")
@click.option("--max-tokens", type=click.IntRange(1, 1_000_000), default=None,
              help=f"Completion tokens per call of the llm or hybrid drift judge [default: [llm] max_tokens, else "
                   f"{DEFAULT_MAX_TOKENS}]; a query's verdicts may use 100 + 60 per candidate when that is more.")
@click.option("--golden-name", help="The golden set's name [default: the --golden path from the git repository's "
              "root, else from the working folder]; runs "
              "with one name are runs on one golden set, its content hash the revision (SPEC §1.1).")
@click.option("--name", help="A name for the run, shown in the dashboard.")
@click.option("--prompt-version", help="Version label of the prompt under test.")
@click.option("--author", help="Who created the run [default: the OS user]; may not approve it.")
@retrieval_options
@report_options
@ci_options
@store_option
@click.option("--no-store", is_flag=True, help="Do not record the run in the store.")
@expect_head_option
@click.option("--quiet", "-q", is_flag=True, help="Print only the gate, sign-off and audit head lines.")
@exits_130_when_interrupted("interrupted: evaluate stopped; the store takes a run whole or not at all and no report "
                            "was left half-written, so rerun it")
@without_gc_pauses  # a short-lived command building millions of objects; cycles are rare
def evaluate_command(golden, generated, thresholds, domain_context, baseline, drift_judge, max_tokens, golden_name, name,
                     prompt_version, author, corpus, qrels, search_engine, trec_runs, json_out, html_out, junit_out,
                     summary_out, comment_out, codequality_out, db, no_store, expect_head, quiet):
    """Score generated expansions against a golden set and decide the gate.

    Exit codes: 0 releasable, 1 not releasable (gate fail, a rejection, or a broken audit
    chain), 2 bad input or usage, 3 awaiting human sign-off (gate review), 5 incomplete
    (errored items), 130 interrupted (Ctrl-C). Nothing is appended to a broken audit chain:
    the run is then neither stored nor reported (exit 1). A stored run is checked against
    the audit chain before any decision counts, and the chain's head is printed as
    `audit head: COUNT:HASH`.

    In CI: --summary, --pr-comment and --codequality write Markdown and GitLab files; with
    $GITHUB_STEP_SUMMARY set the summary is appended there, and with GITHUB_ACTIONS=true
    regressed and failed critical queries and drift terms are annotated at their golden
    lines (docs/ci.md).

    Example:

      termgate evaluate --golden data/demo/medical/golden.jsonl
      --generated data/demo/medical/v2-candidate.jsonl --baseline RUN_ID --json out/report.json
    """
    if db is not None and no_store:
        raise click.UsageError("--db and --no-store exclude each other")
    db = db or default_db_path()
    outputs = {"json": json_out, "html": html_out, "junit": junit_out, **trec_run_paths(trec_runs),
               **ci_paths(summary_out, comment_out, codequality_out)}
    settings = check_paths(outputs,
                           {"golden": golden, "generated": generated, "thresholds": thresholds,
                            "baseline": baseline if baseline and Path(baseline).exists() else None,
                            "corpus": corpus, "qrels": qrels},
                           None if no_store else db, expect_head)
    warn_ignored_environment()
    settings = with_max_tokens(settings, max_tokens)
    retrieval = retrieval_setup(corpus, qrels, search_engine, trec_runs, settings)
    # a broken chain refuses the run (exit 1), after the inputs are read (exit 2 comes first) and
    # with the store's caches left alone: nothing is stored
    broken = None if no_store else run_cli(chain_refusal, db, expect_head)
    base = run_cli(resolve_baseline, baseline, db)
    vectors = None if no_store or broken else StoredVectors(db)
    judge = run_cli(resolve_judge, drift_judge, settings, vectors, domain_context)
    if max_tokens is not None and getattr(judge, "llm", None) is None:
        raise click.UsageError(f"--max-tokens sets the llm or hybrid drift judge's calls; the drift judge "
                               f"{judge.name} makes none")
    note_default_judge(drift_judge, settings, judge)
    if not quiet:
        say_endpoints(*judge_endpoint(judge))
    run = run_cli(evaluate, golden, generated, thresholds=thresholds, drift_judge=judge,
                  baseline=base, settings=settings, name=name, prompt_version=prompt_version,
                  domain_context=domain_context, author=author, cache_db=None if no_store or broken else db,
                  golden_name=golden_name, cache_use=vectors.use if vectors else None, retrieval=retrieval,
                  repeats_from=None if not exists(db) else
                  (lambda name, version: repeat_runs(db, name, version)))
    if broken:
        fail([broken], EXIT_NOT_RELEASABLE)
    finish(run, None if no_store else db, settings, outputs, quiet, expect_head=expect_head,
           baseline=(baseline, db))


def with_max_tokens(settings: Settings, max_tokens: int | None) -> Settings:
    """The settings with `--max-tokens` over `[llm] max_tokens` (the LLM drift judge's calls)."""
    if max_tokens is None:
        return settings
    return dataclasses.replace(settings, llm={**settings.llm, "max_tokens": max_tokens})


def note_default_judge(asked: str | None, settings: Settings, judge) -> None:
    """One line when nobody chose the drift judge and the default fell back to `none` because
    the embedding judge is not installed: drift is then only forbidden terms, which a user
    must not learn from a missing row of the report."""
    if asked is None and not settings.drift.get("judge") and judge.name == "none":
        click.echo("note: drift judge none (only forbidden terms count as drift): the embedding judge is not "
                   "installed here; `termgate doctor` says what is missing (`termgate drift install` adds the "
                   "model, `apt-get install wordnet-base` WordNet)", err=True)


def warn_ignored_environment() -> None:
    """One line per environment variable earlier versions read and this one ignores."""
    for line in ignored_environment():
        click.echo(f"warning: {line}", err=True)


def finish(run: EvaluationRun, db: str | None, settings, paths: dict, quiet: bool,
           store_with: dict | None = None, expect_head: str | None = None,
           baseline: tuple[str | None, str | None] = (None, None)) -> None:
    """Store, write reports, tell the pipeline, print, and exit with the release code
    (shared with `harness`). `paths` holds the reports' and the CI outputs' paths (ci_paths);
    `baseline` is (--baseline as given, the store it was looked up in), for the term diffs.

    SPEC §3: 2 (input) is raised before; then 1 for a broken audit chain, 5 for errored
    items, then the gate's own code (a review run counts decisions on identical content)."""
    pipeline = run_cli(PipelineFiles, paths)  # created before the run is stored: an unwritable path stops here
    try:
        _finish(run, db, settings, paths, quiet, store_with, expect_head, baseline, pipeline)
    finally:
        pipeline.discard()  # nothing half-written: whatever was not committed goes


def _finish(run: EvaluationRun, db: str | None, settings, paths: dict, quiet: bool, store_with: dict | None,
            expect_head: str | None, baseline: tuple[str | None, str | None], pipeline: PipelineFiles) -> None:
    outputs = run_cli(refuse_broken_chain, write_outputs, run, db, paths, store_with, expect_head)
    err = STDOUT in paths.values()  # a report on standard output: the summary goes to standard error
    if run.golden_name_note:
        echo(f"note: {terminal_safe(run.golden_name_note)}", err=True)
    if quiet:
        echo(f"gate: {run.gate.decision}", err=err)
    else:
        print_summary(run, db, err)
        for path in outputs:
            echo(f"wrote {'standard output' if path == STDOUT else terminal_safe(path)}", err=err)
        if db:
            echo(f"dashboard: {dashboard_link(settings.dashboard_url, run.evaluation_id, run.regression.baseline_id)}",
                 err=err)
    if db is None:
        state = unsigned_state(run.gate.decision, run.errored) or ReleaseState(
            "awaiting sign-off", 3, ["gate review; the run was not stored (--no-store), so nobody can sign it off"])
    else:
        state = run_cli(release_state, db, run.evaluation_id, settings, expect_head=expect_head)
        if state.chain is not None and state.chain.ok:
            echo(f"audit head: {state.chain.head}", err=err)
    run_cli(tell_pipeline, pipeline, lambda lines: run_findings(run, db, settings, state, *baseline, with_lines=lines),
            err)
    if state.exit_code != 0 or run.gate.decision == "review":
        echo(f"{'sign-off' if run.gate.decision == 'review' and state.exit_code in (0, 3) else 'release'}: "
             f"{state.status} ({terminal_safe('; '.join(state.reasons))})", err=err)
    sys.exit(state.exit_code)
