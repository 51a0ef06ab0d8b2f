"""Prompt evaluations: runs and per-case results of `termgate prompt-eval`, and the views
that compare prompt versions on the same dataset (same dataset_hash).

When a prompt version was evaluated more than once on a dataset, the comparisons use its
newest run. A run stored without a prompt version is labelled by its eval_id.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import UsageError
from .connection import connect as connect_file, shown_db
from .reading import connect
from .pg_rows import Rows, every
from .postgres import is_postgres

if TYPE_CHECKING:  # pandas loads on first use: `evaluate` never needs it
    import pandas as pd

__all__ = ["RUN_COLUMNS", "RESULT_COLUMNS", "save_prompt_eval", "list_prompt_evals", "prompt_eval_datasets",
           "prompt_eval_versions", "prompt_eval_scores", "prompt_eval_matrix", "prompt_eval_results",
           "find_dataset_hash"]

RUN_COLUMNS = ("eval_id", "created_at", "name", "dataset_path", "dataset_hash", "prompt_version", "model",
               "judge_model", "pass_threshold", "extra_criteria", "total_cases", "scored_cases", "average_score",
               "stdev_score", "pass_rate", "usage")
RESULT_COLUMNS = ("eval_id", "case_index", "scenario", "prompt_inputs", "solution_criteria", "output", "score",
                  "passed", "reasoning", "strengths", "weaknesses", "violated_extra_criteria", "error")

# The newest run of each prompt version on one dataset; `version` is the label shown.
_LATEST = """
    SELECT *, coalesce(prompt_version, eval_id) AS version FROM prompt_eval_runs WHERE dataset_hash = ?
    QUALIFY row_number() OVER (PARTITION BY coalesce(prompt_version, eval_id)
                               ORDER BY created_at DESC, eval_id DESC) = 1"""


def _dataset(dataset_hash: str) -> dict[str, Rows]:
    """The runs on one dataset and their cases (what _LATEST and its joins read)."""
    return {"prompt_eval_runs": Rows("dataset_hash = %s", (dataset_hash,)),
            "prompt_eval_results": Rows("eval_id IN (SELECT eval_id FROM prompt_eval_runs WHERE dataset_hash = %s)",
                                        (dataset_hash,))}


def save_prompt_eval_pg(url: str, run_values: list, result_values: list[list]) -> None:
    """save_prompt_eval on the PostgreSQL store: the run and its cases in one transaction."""
    from .pg_runs import retrying
    from .postgres import migrate_pg

    def work(cur):
        cur.execute(f"INSERT INTO prompt_eval_runs ({', '.join(RUN_COLUMNS)}) "
                    f"VALUES ({', '.join(['%s'] * len(RUN_COLUMNS))})", run_values)
        if result_values:
            cur.executemany(f"INSERT INTO prompt_eval_results ({', '.join(RESULT_COLUMNS)}) "
                            f"VALUES ({', '.join(['%s'] * len(RESULT_COLUMNS))})", result_values)
    migrate_pg(url)
    retrying(url, work, "store prompt evaluations")


def _values(row: dict, columns: tuple[str, ...], label: str) -> list:
    unknown = set(row) - set(columns)
    if unknown:
        raise ValueError(f"{label}: unknown columns {sorted(unknown)}")
    return [row.get(c) for c in columns]


def save_prompt_eval(db_path: str | Path, run_row: dict, result_rows: list[dict]) -> None:
    """Store one prompt evaluation and its per-case rows in one transaction.

    Keys are column names of prompt_eval_runs / prompt_eval_results; missing ones are NULL.
    """
    run_values = _values(run_row, RUN_COLUMNS, "run_row")
    result_values = [_values(r, RESULT_COLUMNS, "result_rows") for r in result_rows]
    if is_postgres(db_path):
        return save_prompt_eval_pg(str(db_path), run_values, result_values)
    with connect_file(db_path, write=True) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            # constant column names; every value is a bound parameter
            con.execute(f"INSERT INTO prompt_eval_runs ({', '.join(RUN_COLUMNS)}) "
                        f"VALUES ({', '.join('?' * len(RUN_COLUMNS))})", run_values)
            if result_values:
                con.executemany(f"INSERT INTO prompt_eval_results ({', '.join(RESULT_COLUMNS)}) "
                                f"VALUES ({', '.join('?' * len(RESULT_COLUMNS))})", result_values)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise


def list_prompt_evals(db_path: str | Path, dataset_hash: str | None = None) -> pd.DataFrame:
    """Stored prompt evaluations, newest first; only those on one dataset when given."""
    with connect(db_path, rows=every("prompt_eval_runs")) as con:
        if dataset_hash is None:
            return con.execute("SELECT * FROM prompt_eval_runs ORDER BY created_at DESC, eval_id DESC").df()
        return con.execute("SELECT * FROM prompt_eval_runs WHERE dataset_hash = ? "
                           "ORDER BY created_at DESC, eval_id DESC", [dataset_hash]).df()


def prompt_eval_datasets(db_path: str | Path) -> pd.DataFrame:
    """One row per dataset: its hash, newest path, runs, distinct versions, newest run time."""
    with connect(db_path, rows=every("prompt_eval_runs")) as con:
        return con.execute("""
            SELECT dataset_hash, arg_max(dataset_path, created_at) AS dataset_path, count(*) AS runs,
                   count(DISTINCT coalesce(prompt_version, eval_id)) AS versions, max(created_at) AS last_run
            FROM prompt_eval_runs GROUP BY dataset_hash ORDER BY last_run DESC""").df()


def find_dataset_hash(db_path: str | Path, text: str) -> str | None:
    """The stored dataset hash equal to `text` or starting with it (unique prefix), else None."""
    with connect(db_path, rows={"prompt_eval_runs": Rows(columns=("dataset_hash",))}) as con:
        rows = con.execute("SELECT DISTINCT dataset_hash FROM prompt_eval_runs WHERE starts_with(dataset_hash, ?)",
                           [text.strip().lower()]).fetchall()
    return rows[0][0] if len(rows) == 1 else None


def prompt_eval_versions(db_path: str | Path, dataset_hash: str) -> pd.DataFrame:
    """Per prompt version on a dataset (its newest run), oldest first: averages, spread, pass rate."""
    with connect(db_path, rows=_dataset(dataset_hash)) as con:
        return con.execute(f"""
            SELECT version, eval_id, created_at, name, model, judge_model, pass_threshold, total_cases,
                   scored_cases, total_cases - scored_cases AS errored_cases, average_score, stdev_score, pass_rate
            FROM ({_LATEST}) ORDER BY created_at, eval_id""", [dataset_hash]).df()


def prompt_eval_scores(db_path: str | Path, dataset_hash: str) -> pd.DataFrame:
    """Long form: one row per (version, case) with score, passed and error."""
    with connect(db_path, rows=_dataset(dataset_hash)) as con:
        return con.execute(f"""
            SELECT l.version, l.eval_id, l.created_at, r.case_index, r.scenario, r.score, r.passed, r.error
            FROM ({_LATEST}) l JOIN prompt_eval_results r ON r.eval_id = l.eval_id
            ORDER BY l.created_at, l.eval_id, r.case_index""", [dataset_hash]).df()


def prompt_eval_matrix(db_path: str | Path, dataset_hash: str) -> pd.DataFrame:
    """Scores as case_index (rows) x prompt version (columns, oldest first); NaN where unscored."""
    long = prompt_eval_scores(db_path, dataset_hash)
    if long.empty:
        import pandas as pd

        return pd.DataFrame(index=pd.Index([], name="case_index", dtype="int64"))
    order = list(dict.fromkeys(long["version"]))
    matrix = long.pivot(index="case_index", columns="version", values="score").reindex(columns=order)
    matrix.columns.name = "prompt_version"
    return matrix.astype(float)


def prompt_eval_results(db_path: str | Path, eval_id: str) -> pd.DataFrame:
    """Every case of one stored evaluation, in dataset order; UsageError for an unknown eval_id."""
    with connect(db_path, rows={t: Rows("eval_id = %s", (eval_id,)) for t in ("prompt_eval_runs",
                                                                              "prompt_eval_results")}) as con:
        known = con.execute("SELECT count(*) FROM prompt_eval_runs WHERE eval_id = ?", [eval_id]).fetchall()[0][0]
        if not known:
            raise UsageError(f"unknown prompt evaluation '{eval_id}' in {shown_db(db_path)}")
        return con.execute("SELECT * EXCLUDE (eval_id) FROM prompt_eval_results WHERE eval_id = ? "
                           "ORDER BY case_index", [eval_id]).df()
