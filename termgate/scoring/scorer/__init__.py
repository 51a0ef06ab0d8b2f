"""The scorer: SPEC §1.1–1.2 and §2 rules 1–6, the one implementation, as DuckDB SQL.

`score` reads both inputs into an in-memory DuckDB (termgate.scoring.scorer.loading): DuckDB
parses the files directly while a Python thread vouches for every line, or, when DuckDB
cannot read an input as it is (the mapping form, lines its reader would take differently,
a file name it would expand), the Python validator (termgate.io) parses it and hands it
over as Arrow. The validator also names the file, line and field of every problem. Then
terms are normalised as each row is built (rule 1: SQL for ASCII and Latin-1 letters, a
Python function for the rest), and TP/FP/FN, P/R/F1, drift and pass/fail come from list functions
over one row per query (termgate.scoring.scorer.rules). Nothing is built per query in Python: a
million queries score in about 2 GB (docs/performance.md).

tests/oracle.py holds an independent Python implementation the differential tests check
this one against.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import duckdb
import pyarrow as pa

from ...drift.judge import DriftJudge
from ...errors import TermgateError, UsageError
from ...io import GENERATED_SCHEMA, load_generated, load_golden_set
from ...models import Thresholds
from .database import ScoredQueries, ScoreFacts, connect_scorer
from .loading import (HandOver, check_links, golden_hash, load_arrow, normalise, plain_generated, plain_golden,
                      read_generated, read_golden, source_path, vouch_for_file)
from .rules import collect, judge_drift, score_part

__all__ = ["SPLIT", "ScoreFacts", "ScoredQueries", "GENERATED_SCHEMA", "score"]

SPLIT = 16_384
"""Golden sets at least this large are scored in two parts on two cursors: DuckDB gives a
table scan one thread per row group (122,880 rows), so below a few row groups one
statement would keep one core busy."""


def _parallel(con: duckdb.DuckDBPyConnection, *jobs) -> list:
    """Run jobs on their own cursors at once: many steps scan one row group, which DuckDB
    gives one thread, so two independent chains keep both cores busy."""
    results: list = [None] * len(jobs)
    errors: list[BaseException] = []

    def run(index: int) -> None:
        cursor = con.cursor()
        try:
            results[index] = jobs[index](cursor)
        except BaseException as exc:  # re-raised below, in the caller's thread
            errors.append(exc)
        finally:
            cursor.close()

    threads = [threading.Thread(target=run, args=(i,), name=f"termgate-scorer-{i}") for i in range(1, len(jobs))]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise next((e for e in errors if isinstance(e, HandOver)), errors[0])
    return results


def _read_golden_and_hash(con: duckdb.DuckDBPyConnection, golden: Path) -> tuple[int, str]:
    return read_golden(con, golden), golden_hash(con)


def _regular(path: str | Path | None) -> bool:
    """Whether an input can be read more than once: a regular file (not a FIFO, a pipe from
    `<(…)` or /dev/stdin, whose second reader would wait forever or read nothing)."""
    try:
        return path is None or stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # the reader names the problem


def _read_directly(con: duckdb.DuckDBPyConnection, golden_path: str | Path,
                   generated: str | Path | pa.Table) -> tuple[int, str]:
    """Both inputs parsed by DuckDB while Python vouches for every line; HandOver otherwise.
    Returns the golden line count and the golden set's hash."""
    golden = source_path(golden_path)
    if not all(_regular(p) for p in (golden, None if isinstance(generated, pa.Table) else generated)):
        raise HandOver("an input is a FIFO or a pipe: it can be read once, so the Python validator reads it")
    if isinstance(generated, pa.Table):
        (total, digest), golden_lines = _parallel(con, lambda cur: _read_golden_and_hash(cur, golden),
                                                  lambda cur: vouch_for_file(golden, plain_golden))
        load_arrow(con, None, generated)
        generated_ok = True
    else:
        path = source_path(generated)
        (total, digest), generated_total, (golden_lines, generated_lines) = _parallel(
            con, lambda cur: _read_golden_and_hash(cur, golden), lambda cur: read_generated(cur, path),
            lambda cur: (vouch_for_file(golden, plain_golden), vouch_for_file(path, plain_generated)))
        generated_ok = generated_total == generated_lines
    if golden_lines == 0 or total != golden_lines or not generated_ok:
        raise HandOver("a line DuckDB read differently from the Python validator (or an empty golden set)")
    check_links(con)
    return total, digest


def _validate(golden_path: str | Path, generated: str | Path | pa.Table,
              domain_context: str | None) -> tuple[pa.Table, pa.Table]:
    """The Python validator's verdict: InputError naming every problem, else both inputs
    as parsed, as Arrow."""
    golden = load_golden_set(golden_path, domain_context)
    if isinstance(generated, pa.Table):
        unknown = set(generated.column("query_id").to_pylist()) - golden.query_ids()
        if unknown:
            raise UsageError(f"generated rows for {len(unknown)} query_ids not in the golden set "
                             f"{golden_path}, e.g. {sorted(unknown)[0]!r}")
        return golden.table(), generated
    return golden.table(), load_generated(generated, golden.query_ids()).table()


def score(golden_path: str | Path, generated: str | Path | pa.Table, thresholds: Thresholds, judge: DriftJudge,
          domain_context: str | None = None) -> ScoredQueries:
    """Load, validate and score; InputError (file, line, field) on bad input.

    `generated` is a generated-expansions file, or a table of GENERATED_SCHEMA (what the
    harness produced, errored items included).
    """
    con = connect_scorer()
    try:
        try:
            total, digest = _read_directly(con, golden_path, generated)
            handed_over = False
        except HandOver:
            load_arrow(con, *_validate(golden_path, generated, domain_context))
            total = con.execute("SELECT count(*) FROM golden_lines").fetchall()[0][0]
            digest = golden_hash(con)
            handed_over = True
        bounds = [0, total // 2, total] if total >= SPLIT else [0, total]
        parts = [f"normalised_{i}" for i in range(len(bounds) - 1)]
        try:
            reordered = _parallel(con, *[
                lambda cur, i=i: normalise(cur, domain_context, parts[i], bounds[i], bounds[i + 1])
                for i in range(len(parts))])
        except HandOver as exc:  # a term empty after normalisation, or both expected and forbidden
            if not handed_over:
                _validate(golden_path, generated, domain_context)  # names the problem
            raise TermgateError(f"internal error: the scorer refused input the validator accepts ({exc}); "
                                "please report it with the input files") from None
        for name in ("golden_lines", "generated_lines"):
            con.execute(f"DROP TABLE {name}")
        judged = judge_drift(con, judge, parts)
        targets = ["query_scores"] if len(parts) == 1 else [f"query_scores_{i}" for i in range(len(parts))]
        _parallel(con, *[lambda cur, i=i: score_part(cur, thresholds, judged, parts[i], targets[i], reordered[i])
                         for i in range(len(parts))])
        if len(targets) > 1:  # UNION ALL keeps its inputs' order: query_scores reads in golden-set order
            con.execute("CREATE VIEW query_scores AS " + " UNION ALL ".join(f"SELECT * FROM {t}" for t in targets))
        if judged:
            con.execute("DROP TABLE verdicts")
        return collect(con, total, digest)
    except BaseException:
        con.close()
        raise
