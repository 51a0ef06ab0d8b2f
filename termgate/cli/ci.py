"""What `evaluate`, `harness` and `gate RUN` tell a pipeline: `--summary`, `--pr-comment`
and `--codequality` files, the job summary appended to `$GITHUB_STEP_SUMMARY`, and, under
GitHub Actions (`GITHUB_ACTIONS=true`), annotations at the golden file's lines.

The facts come from a fresh run or from the store (termgate.report.findings); the
Markdown, annotations and Code Quality JSON are rendered by termgate.report.markdown and
termgate.report.annotations. The files are created before any work (so an unwritable
path stops the command before anything is stored), written whole and renamed into place
once the sign-off state is known, or removed.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from urllib.parse import urlencode

import click
import orjson

from ..errors import UnknownRunError, UsageError
from ..io import default_golden_name, golden_line_numbers
from ..store import stored_golden_name
from ..report import PendingFile
from ..report.annotations import codequality_report, github_annotations, repository_path
from ..report.findings import BaselineTerms, Findings, find_flagged, flagged_rows, headline
from ..report.markdown import render_pr_comment, render_summary
from ..text import terminal_safe
from .common import echo

__all__ = ["ci_options", "ci_paths", "PipelineFiles", "run_findings", "stored_findings", "tell_pipeline",
           "STEP_SUMMARY"]

STEP_SUMMARY = "$GITHUB_STEP_SUMMARY"
"""The output key of the job summary file GitHub names in the environment."""
_CI_KEYS = ("summary", "pr-comment", "codequality")


def ci_options(fn):
    """--summary, --pr-comment, --codequality (each a regular file, or - for standard output)."""
    helps = (("--summary", "summary_out", "FILE", "Write the Markdown job summary here (gate and reasons, P/R/F1/drift "
              "with deltas and 95% intervals, regressed and failed critical queries with term diffs, drift terms, "
              "sign-off, dashboard link); it is also appended to $GITHUB_STEP_SUMMARY when that is set."),
             ("--pr-comment", "comment_out", "FILE", "Write a pull-request comment body here: the summary under "
              "65,536 characters, first line a hidden marker <!-- termgate: GOLDEN/NAME --> that stays the same for "
              "every run of this --name on this golden set, so a workflow updates one comment."),
             ("--codequality", "codequality_out", "FILE", "Write a GitLab Code Quality report (JSON) here: every "
              "regressed or failed critical query and drift term at its line of the golden file."))
    for flag, dest, metavar, text in reversed(helps):
        fn = click.option(flag, dest, metavar=metavar, type=click.Path(dir_okay=False, allow_dash=True),
                          help=text)(fn)
    return fn


def ci_paths(summary_out: str | None, comment_out: str | None, codequality_out: str | None) -> dict[str, str | None]:
    """The CI outputs by flag, with $GITHUB_STEP_SUMMARY first (checked like any output:
    never an input or the store)."""
    paths = {STEP_SUMMARY: os.environ.get("GITHUB_STEP_SUMMARY") or None}
    paths.update({"summary": summary_out, "pr-comment": comment_out, "codequality": codequality_out})
    return paths


def _annotating() -> bool:
    return os.environ.get("GITHUB_ACTIONS") == "true"


class PipelineFiles:
    """The CI output files of one command, created before any work."""

    def __init__(self, paths: dict[str, str | None]):
        self.paths = {k: v for k, v in paths.items() if v and k in _CI_KEYS}
        self.step_summary = paths.get(STEP_SUMMARY)
        self.pending: dict[str, PendingFile] = {}
        try:
            for key, path in self.paths.items():
                self.pending[key] = PendingFile(path, "json" if key == "codequality" else "markup")
        except OSError as exc:
            self.discard()
            raise UsageError(f"cannot write --{key} {path}: {exc.strerror or exc}") from None

    @property
    def wanted(self) -> bool:
        """Whether the command has anything to tell the pipeline."""
        return bool(self.pending or self.step_summary or _annotating())

    @property
    def needs_lines(self) -> bool:
        return "codequality" in self.pending or _annotating()

    def discard(self) -> None:
        for item in self.pending.values():
            item.discard()

    def finish(self, findings: Findings, err: bool) -> list[str]:
        """Write every file, append the job summary, print the annotations; the paths written."""
        summary = render_summary(findings) if "summary" in self.pending or self.step_summary else ""
        bodies = {"summary": lambda: summary, "pr-comment": lambda: render_pr_comment(findings),
                  "codequality": lambda: codequality_report(findings, _golden_path(findings, "CI_PROJECT_DIR"))}
        key = None
        try:
            for key, item in self.pending.items():
                item.write(bodies[key]())
                item.close()
        except OSError as exc:
            self.discard()
            raise UsageError(f"cannot write --{key} {self.paths[key]}: {exc.strerror or exc}") from None
        for item in self.pending.values():
            item.commit()
        if self.step_summary:
            _append_step_summary(self.step_summary, summary)
        if _annotating():
            for line in github_annotations(findings, _golden_path(findings, None)):
                echo(line, err=err)
        return list(self.paths.values())


def _golden_path(findings: Findings, project_variable: str | None) -> str:
    """The golden file relative to the checkout: $GITHUB_WORKSPACE (or, for GitLab's
    report, $CI_PROJECT_DIR) when the file lies inside it; with neither set, relative to its
    git repository's root, as its default name is (SPEC §1.1)."""
    root = (os.environ.get(project_variable) if project_variable else None) or os.environ.get("GITHUB_WORKSPACE")
    return repository_path(findings.golden_path, root) if root else default_golden_name(findings.golden_path)


def _append_step_summary(path: str, text: str) -> None:
    """Append to GitHub's job summary file in one write (as GitHub's own toolkit does), so
    two termgate commands in one step keep both summaries; a problem is a warning, never a
    change of the exit code (the file is GitHub's, not an output the user asked for)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666)
        try:
            data = memoryview((b"\n" if os.fstat(fd).st_size else b"") + text.encode("utf-8"))
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
    except OSError as exc:
        echo(f"warning: cannot append the job summary to $GITHUB_STEP_SUMMARY {terminal_safe(path)}: "
             f"{exc.strerror or exc}", err=True)


def relied_head(state) -> str | None:
    """COUNT:HASH of the chain the release state was counted on, when it verified intact
    (the line `audit head:` the command prints; SPEC §4)."""
    chain = getattr(state, "chain", None)
    return chain.head if chain is not None and chain.ok else None


def relied_trust(state) -> list[str]:
    """What the chain the release state was counted on says about signatures (its trust
    root, whether it is pinned, records whose signature fails; SPEC §4)."""
    chain = getattr(state, "chain", None)
    return chain.trust_lines() if chain is not None and chain.ok else []


def _links(settings, run_id: str, baseline_id: str | None, awaiting: bool) -> list[tuple[str, str]]:
    base = settings.dashboard_url.rstrip("/")
    links = [("Compare with the baseline in the dashboard", f"{base}/compare?{urlencode({'run': run_id, 'baseline': baseline_id})}")
             if baseline_id else ("Open the run in the dashboard", f"{base}/?{urlencode({'run': run_id})}")]
    if awaiting:
        links.append(("Sign off", f"{base}/signoff?{urlencode({'run': run_id})}"))
    return links


def _macro(summary: dict) -> dict[str, float]:
    return {"precision": summary["aggregate_precision"], "recall": summary["aggregate_recall"],
            "f1": summary["aggregate_f1"], "drift": summary["mean_term_drift_score"]}


def _baseline_from_report(path: str, wanted: set[str]) -> BaselineTerms:
    report = orjson.loads(Path(path).read_bytes())
    terms = {q["query_id"]: (list(q.get("true_positives") or []), list(q.get("generated_terms") or []))
             for q in report.get("per_query_results") or [] if q.get("query_id") in wanted}
    try:
        return BaselineTerms(terms, _macro(report["summary"]))
    except (KeyError, TypeError):
        return BaselineTerms(terms)


def _baseline_from_store(db: str, run_id: str, wanted: set[str]) -> BaselineTerms:
    from ..store import get_run, query_rows
    try:
        header = get_run(db, run_id)
    except UnknownRunError:
        return BaselineTerms()
    if not wanted:
        return BaselineTerms({}, _macro(header))
    df = query_rows(db, run_id)
    df = df[df["query_id"].isin(wanted)]
    terms = {r.query_id: (list(r.true_positives), list(r.generated_terms)) for r in df.itertuples()}
    return BaselineTerms(terms, _macro(header))


def _baseline(value: str | None, db: str | None, baseline_id: str | None, wanted: set[str]) -> BaselineTerms:
    """The baseline's terms and means: from the report file `value` names, else the store."""
    if not baseline_id:
        return BaselineTerms()
    if value and Path(value).exists():
        return _baseline_from_report(value, wanted)
    from ..store import exists
    return _baseline_from_store(db, baseline_id, wanted) if db and exists(db) else BaselineTerms()


def run_findings(run, db: str | None, settings, state, baseline_value: str | None = None,
                 lookup_db: str | None = None, with_lines: bool = False) -> Findings:
    """The findings of a fresh run (`evaluate`, `harness`); lines from the file scored."""
    rows = flagged_rows(run)
    flagged_ids = {r["query_id"] for r in rows if r["regression_status"] == "regressed"
                   or (r["critical"] and not r["passed"])}
    base = _baseline(baseline_value, lookup_db, run.regression.baseline_id, flagged_ids)
    flagged, drift = find_flagged(rows, base)
    agg = run.aggregate
    macro = {"precision": agg.macro_precision, "recall": agg.macro_recall, "f1": agg.macro_f1,
             "drift": agg.macro_drift}
    findings = Findings(run.evaluation_id, run.name, run.golden_name, run.golden_path,
                        run.gate.decision, list(run.gate.reasons),
                        headline(macro, run.statistics, base.macro, run.facts.unjudged_line()),
                        run.total, run.passed, run.errored, run.regression.baseline_id, flagged, drift,
                        state.status, list(state.reasons),
                        _links(settings, run.evaluation_id, run.regression.baseline_id,
                               state.exit_code == 3) if db else [], audit_head=relied_head(state), trust=relied_trust(state),
                        retrieval=lost_retrieval(run.retrieval))
    if with_lines:
        try:
            findings.lines = golden_line_numbers(run.golden_path, {r["query_id"] for r in rows})
        except OSError:
            pass  # gone since it was scored: annotations then point at the file
    return findings


def _stored_row(r) -> dict:
    def terms(value) -> list[str]:
        return [] if value is None else list(value)
    baseline_f1 = r.baseline_f1
    return {"query_id": r.query_id, "original_query": r.query, "domain": r.domain, "critical": bool(r.critical),
            "passed": bool(r.passed), "f1": float(r.f1), "true_positives": terms(r.true_positives),
            "generated_terms": terms(r.generated_terms), "expected_terms": terms(r.expected_terms),
            "drift_terms": terms(r.drift_terms), "drift_reasons": terms(r.drift_reasons),
            "failure_reasons": terms(r.failure_reasons), "regression_status": r.regression_status,
            "baseline_f1": None if baseline_f1 is None or math.isnan(baseline_f1) else float(baseline_f1)}


def _stored_lines(db: str, golden_hash: str | None, findings: Findings) -> dict[str, int]:
    """Lines of the flagged queries in the golden file stored with the run (the original
    may be gone), read in one pass."""
    from ..store import golden_content
    content = golden_content(db, golden_hash) if golden_hash else None
    if content is None:
        return {}
    return golden_line_numbers(None, [q.query_id for q in findings.flagged] + [d.query_id for d in findings.drift],
                               text=content)


def stored_findings(db: str, run_id: str, settings, state, with_lines: bool = False) -> Findings:
    """The findings of a stored run (`gate RUN`): its rows, its baseline's when stored, and
    lines from the golden file stored with it (the original may be gone)."""
    import json

    from ..store import get_run, query_rows, retrieval_outcome
    run = get_run(db, run_id)
    df = query_rows(db, run_id)
    picked = df[(df["regression_status"] == "regressed") | (df["critical"] & ~df["passed"]) | (df["n_drift"] > 0)]
    rows = [_stored_row(r) for r in picked.itertuples()]
    flagged_ids = {r["query_id"] for r in rows if r["regression_status"] == "regressed"
                   or (r["critical"] and not r["passed"])}
    base = _baseline(None, db, run["baseline_id"], flagged_ids)
    flagged, drift = find_flagged(rows, base)
    statistics = json.loads(run["statistics"]) if run.get("statistics") else None
    findings = Findings(run_id, run["name"], stored_golden_name(run), run["golden_path"] or "",
                        run["gate_decision"], list(run["gate_reasons"] or []),
                        headline(_macro(run), statistics, base.macro), int(run["total_queries"]),
                        int(run["passed"]), int(run["errored"] or 0), run["baseline_id"], flagged, drift,
                        state.status, list(state.reasons),
                        _links(settings, run_id, run["baseline_id"], state.exit_code == 3),
                        audit_head=relied_head(state), trust=relied_trust(state),
                        retrieval=lost_retrieval(retrieval_outcome(db, run)))
    if with_lines:
        findings.lines = _stored_lines(db, run["golden_hash"], findings)
    return findings


def lost_retrieval(outcome) -> dict | None:
    """The report's retrieval object for the CI outputs: its per-query part cut to the
    regressed queries, the largest loss first, each naming its reference."""
    if outcome is None:
        return None
    report = outcome.report()
    lost = [{**q, "reference": report["reference"], "k": report["k"]} for q in report["per_query"]
            if q["status"] == "regressed"]
    return {**report, "per_query": sorted(lost, key=lambda q: q["ndcg_delta"])}


def tell_pipeline(files: PipelineFiles, build, err: bool) -> None:
    """Build the findings (`build(with_lines)`, only when something asks for them), write
    the files, print their `wrote` lines and the annotations."""
    if not files.wanted:
        return
    for path in files.finish(build(files.needs_lines), err):
        echo(f"wrote {'standard output' if path == '-' else terminal_safe(path)}", err=err)
