"""`termgate retrieval`: measure TREC run files against relevance judgments, outside a run
(docs/retrieval.md)."""

from __future__ import annotations

import json

import click

from ..report import STDOUT, PendingFile, check_outputs
from ..text import terminal_safe
from .common import delta_line, echo, run_cli

__all__ = ["retrieval_group"]


@click.group("retrieval")
def retrieval_group():
    """Retrieval metrics of TREC run files (docs/retrieval.md).

    `evaluate --corpus --qrels` and `harness` measure a run's retrieval effect
    themselves; this measures run files you have, with the same code and rules.

    \b
    Example:
      termgate retrieval measure --qrels qrels.txt out/runs/candidate.trec
    """


@retrieval_group.command("measure")
@click.option("--qrels", required=True, type=click.Path(dir_okay=False),
              help="Relevance judgments: TREC qrels, or JSONL of query_id, doc_id, grade.")
@click.argument("runs", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("--k", "k", type=click.IntRange(1, 1000), default=10, show_default=True,
              help="Cutoff of nDCG and precision.")
@click.option("--depth", type=click.IntRange(1, 10_000), default=100, show_default=True,
              help="Depth of recall and reciprocal rank.")
@click.option("--per-query", is_flag=True, help="Print every judged query's metrics too.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, allow_dash=True),
              help="Write the metrics (and with two runs the paired statistics) as JSON here (- for standard output).")
def measure_command(qrels, runs, k, depth, per_query, json_out):
    """Measure one TREC run file, or compare two (the second against the first).

    Per judged query (one with a relevant document): nDCG@k with trec_eval's linear gain,
    recall and reciprocal rank within the depth, P@k; a judged query the run lacks scores
    0 (trec_eval -c). With two runs: the paired bootstrap interval and permutation p-value
    of each mean change, Holm-adjusted across the four metrics. Exit 2 on bad input.

    \b
    Example:
      termgate retrieval measure --qrels qrels.txt out/runs/baseline.trec out/runs/candidate.trec
    """
    from ..retrieval.inputs import load_qrels, read_run
    from ..retrieval.measures import compare, labels, measure
    from ..retrieval.outcome import METRICS

    if len(runs) > 2:
        raise click.UsageError("give one run file to measure, or two to compare (the second against the first)")
    if depth < k:
        raise click.UsageError(f"--depth {depth} must be at least --k {k}: the top k is read from the retrieved documents")
    if json_out:
        run_cli(check_outputs, {"json": json_out}, {"qrels": qrels, **{f"run {i + 1}": r for i, r in enumerate(runs)}})
    judgments = run_cli(load_qrels, qrels).judgments
    read = [run_cli(read_run, path) for path in runs]
    scores = [run_cli(measure, judgments, run, k, depth) for run in read]
    names = labels(k, depth)
    err = json_out == STDOUT
    out: dict = {"k": k, "depth": depth, "labels": names, "runs": []}
    for path, s in zip(runs, scores):
        means = {m: (sum(q[m] for q in s.values()) / len(s) if s else None) for m in METRICS}
        out["runs"].append({"path": path, "judged_queries": len(s), "means": means,
                            **({"per_query": s} if per_query or json_out else {})})
        echo(f"{terminal_safe(path)}  ({len(s)} judged queries)", err=err)
        echo("  " + "  ".join(f"{names[m]} {v:.4f}" for m, v in means.items() if v is not None), err=err)
        if per_query:
            for qid, metrics in s.items():
                echo(f"    {terminal_safe(qid)}  " + "  ".join(f"{names[m]} {metrics[m]:.4f}" for m in METRICS), err=err)
    if len(scores) == 2:
        paired = [q for q in scores[0] if q in scores[1]]
        stats = compare(scores[0], scores[1], paired)
        out["statistics"] = stats
        echo(f"second against first, {len(paired)} paired queries:", err=err)
        for m in METRICS:
            s = stats[m]
            if s["mean_delta"] is None:
                continue
            echo(f"  {names[m]:<8} {delta_line(s)}", err=err)
    if json_out:
        target = PendingFile(json_out, "json")
        try:
            target.write(json.dumps(out, ensure_ascii=False, indent=1))
            target.commit()
        except BaseException:
            target.discard()
            raise
