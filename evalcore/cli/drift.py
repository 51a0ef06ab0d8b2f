"""`evalcore drift calibrate`: measure a drift judge on labelled rows."""

from __future__ import annotations

from dataclasses import replace

import click

from ..calibration import calibrate_embedding, load_calibration
from ..config import default_db_path, load_settings
from ..judges import resolve_judge
from ..store import StoredVectors
from .common import echo, run_cli, store_option

__all__ = ["drift_group"]


@click.group("drift")
def drift_group() -> None:
    """Term-drift judges: calibrate them on labelled data.

    Example: evalcore drift calibrate --data data/drift_calibration.csv
    """


@drift_group.command("calibrate")
@click.option("--data", "data_path", default="data/drift_calibration.csv", show_default=True,
              type=click.Path(dir_okay=False), help="CSV: query, domain, term, related (1/0).")
@click.option("--threshold", type=click.FloatRange(0, 1), help="Judge threshold [default: configured].")
@store_option
def calibrate_command(data_path, threshold, db):
    """Print precision, recall and ROC AUC of the embedding judge, and the threshold
    that maximises F1 of flagging unrelated terms.

    Example: evalcore drift calibrate --threshold 0.3
    """
    settings = run_cli(load_settings)
    if threshold is not None:
        settings = replace(settings, drift={**settings.drift, "threshold": threshold})
    judge = run_cli(resolve_judge, "embedding", settings, StoredVectors(db or default_db_path()))
    rows = run_cli(load_calibration, data_path)
    result = run_cli(calibrate_embedding, judge, rows)
    echo(f"drift judge: embedding ({judge.embedder.model_id})")
    echo(f"rows: {result.rows} ({result.unrelated} unrelated = drift, {result.rows - result.unrelated} related)")
    echo(f"ROC AUC: {result.auc:.4f}")
    echo(f"at threshold {result.threshold:.3f}: precision {result.precision:.3f}  "
               f"recall {result.recall:.3f}  F1 {result.f1:.3f}")
    echo(f"suggested threshold: {result.suggested_threshold:.3f} (F1 {result.suggested_f1:.3f})")
