"""The columnar scoring engine: SPEC §1.1–1.2 and §2 rules 1–6 as DuckDB SQL.

`evaluate` runs here: DuckDB's JSON reader parses both files into one row per golden
query holding its term lists; terms are normalised in SQL (non-ASCII terms once per
distinct text, in Python), and TP/FP/FN, P/R/F1, drift and pass/fail come from list
functions over each row. Nothing is built per query in Python: a million queries score
in about 2 GB (docs/performance.md).

The engine accepts only input it can vouch for: any line that is not plainly valid raises
`Fallback`, and the caller then runs the Python loaders (`evalcore.io`), which name the
file, line and field of every problem, and the Python scorer (`evalcore.scoring`), which
is the reference implementation. Tests hold the two engines to the same reports and hashes.
"""

from __future__ import annotations

import threading
from pathlib import Path

import duckdb

from ..drift import DriftJudge
from ..models import Thresholds
from .engine import ColumnarScores, EngineError, Fallback, ScoreFacts, _connect
from .loading import (_check_file, _link_generated, _load_generated, _load_golden, _normalise, _plain_generated,
                      _plain_golden, _source)
from .scoring import _collect, _judge, _score

SPLIT = 16_384
"""Golden sets at least this large are scored in two parts on two cursors: DuckDB gives a
table scan one thread per row group (122,880 rows), so below a few row groups one
statement would keep one core busy."""

__all__ = ["Fallback", "EngineError", "ColumnarScores", "ScoreFacts", "score_files"]


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

    threads = [threading.Thread(target=run, args=(i,), name=f"evalcore-engine-{i}") for i in range(1, len(jobs))]
    for thread in threads:
        thread.start()
    run(0)
    for thread in threads:
        thread.join()
    if errors:
        raise next((e for e in errors if isinstance(e, Fallback)), errors[0])
    return results


def score_files(golden_path: str | Path, generated_path: str | Path, thresholds: Thresholds,
                judge: DriftJudge, domain_context: str | None = None) -> ColumnarScores:
    """Load, validate and score both files in DuckDB; Fallback when the input is not plainly valid."""
    con = _connect()
    judged = False
    try:
        golden, generated = _source(golden_path), _source(generated_path)
        # DuckDB loads both files while Python checks them for what DuckDB's reader forgives
        (total, golden_hash), generated_total, (golden_lines, generated_lines) = _parallel(
            con, lambda cur: _load_golden(cur, golden), lambda cur: _load_generated(cur, generated),
            lambda cur: (_check_file(golden, _plain_golden), _check_file(generated, _plain_generated)))
        if golden_lines == 0 or total != golden_lines or generated_total != generated_lines:
            raise Fallback("a line DuckDB read differently from the Python loader (or an empty golden set)")
        _link_generated(con)
        bounds = [0, total // 2, total] if total >= SPLIT else [0, total]
        parts = [f"j{i}" for i in range(len(bounds) - 1)]
        reordered = _parallel(con, *[
            lambda cur, i=i: _normalise(cur, domain_context, parts[i], bounds[i], bounds[i + 1])
            for i in range(len(parts))])
        for name in ("g1", "c0"):
            con.execute(f"DROP TABLE {name}")
        judged = True  # past this point a fallback would ask the drift judge again
        verdicts = _judge(con, judge, parts)
        targets = ["q"] if len(parts) == 1 else [f"q{i}" for i in range(len(parts))]
        _parallel(con, *[lambda cur, i=i: _score(cur, thresholds, verdicts, parts[i], targets[i], reordered[i])
                         for i in range(len(parts))])
        if len(targets) > 1:  # UNION ALL keeps its inputs' order: q reads in golden-set order
            con.execute("CREATE VIEW q AS " + " UNION ALL ".join(f"SELECT * FROM {t}" for t in targets))
        if verdicts:
            con.execute("DROP TABLE vd")
        return _collect(con, total, golden_hash)
    except Fallback:
        con.close()
        raise
    except Exception as exc:  # DuckDB refused the input, or an engine fault: the reference decides
        con.close()
        if judged and judge.name != "none":
            raise EngineError(f"scoring failed after drift judging ({type(exc).__name__}: {exc}); "
                              "set EVALCORE_ENGINE=python to score with the Python engine") from exc
        raise Fallback(f"{type(exc).__name__}: {exc}") from None
    except BaseException:
        con.close()
        raise
