"""Writing and reading runs, per-query rows and per-term rows."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import orjson
import pyarrow as pa

from .. import __version__
from ..errors import UnknownRunError
from ..models import QUERY_COLUMNS, Baseline, BaselineRow
from .digest import RETRIEVAL_COLUMNS, RUN_ADDED, RUN_RETRIEVAL
from .digest import RUN_COLUMNS as RUN_COLUMNS_DIGESTED
from .records import append_on, head_on, header_record
from .connection import attach, exists, make_folder, migrate, shown_db, store_write_error
from .reading import connect
from .pg_rows import Rows, every, of_runs
from .postgres import is_postgres

if TYPE_CHECKING:
    import pandas as pd

    from ..scoring.run import EvaluationRun

# ---------------------------------------------------------------- writing


RUN_INSERT_COLUMNS = tuple(c for c in RUN_COLUMNS_DIGESTED if c != "usage") + RUN_ADDED + RUN_RETRIEVAL
"""Every column of `runs` (the digest's list is held to the table by a test) but the LLM
usage, which save_run sets once the rows are in."""


def _run_row(run: EvaluationRun) -> list:
    agg, reg = run.aggregate, run.regression
    return [
        run.evaluation_id, run.timestamp, run.name, run.prompt_version, run.golden_path,
        run.generated_path, run.golden_hash, run.generated_hash, run.content_hash,
        run.domains, run.high_risk_domains, run.domain_context, run.judge.name,
        json.dumps(run.judge.config(), sort_keys=True), run.author,
        __version__, reg.baseline_id, run.gate.decision, run.gate.reasons,
        run.total, run.passed, run.total - run.passed, run.errored,
        agg.macro_precision, agg.macro_recall, agg.macro_f1, agg.macro_drift,
        agg.micro_precision, agg.micro_recall, agg.micro_f1, agg.tp, agg.fp, agg.fn,
        reg.detected, reg.regressed, reg.improved, reg.added, reg.removed, reg.summary,
        reg.golden_set_changed, reg.mean_f1_delta, run.thresholds.model_dump_json(),
        run.recommendations, None if run.statistics is None else json.dumps(run.statistics),
        run.golden_name, reg.golden_changed,
        None if getattr(run, "retrieval", None) is None else summary_text(run.retrieval.summary),
    ]


def summary_text(summary: dict) -> str:
    """A retrieval summary as the store keeps it (runs.retrieval, under the run's digest):
    canonical JSON, its keys sorted, no spaces, ASCII (so any text, NUL included, is stored
    as escapes on either backend). A non-finite number is written as Python writes it (NaN),
    which json.loads reads back."""
    return json.dumps(summary, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _retrieval_table(run: EvaluationRun) -> pa.Table | None:
    """The run's retrieval rows as retrieval_results holds them; None when it has none."""
    from ..errors import TermgateError
    from ..retrieval.outcome import ROWS_SCHEMA

    outcome = getattr(run, "retrieval", None)
    rows = outcome.rows if outcome is not None else None
    if rows is None or rows.num_rows == 0:
        return None
    missing = [name for name in ROWS_SCHEMA.names if name not in rows.column_names]
    if missing:
        raise TermgateError(f"internal: the run's retrieval rows lack {', '.join(missing)} (ROWS_SCHEMA)")
    rows = rows.select(ROWS_SCHEMA.names).cast(ROWS_SCHEMA)
    return rows.add_column(0, "run_id", pa.array([run.evaluation_id] * rows.num_rows, pa.string())).select(
        list(RETRIEVAL_COLUMNS))


def _insert_table(con, target: str, table: pa.Table) -> None:
    con.register("_termgate_rows", table)
    con.execute(f"INSERT INTO {target} BY NAME SELECT * FROM _termgate_rows")
    con.unregister("_termgate_rows")


def _judge_log(run: EvaluationRun) -> pa.Table | None:
    log = getattr(run.judge, "log", None)
    if not log:
        return None
    return pa.table({
        "run_id": [run.evaluation_id] * len(log), "query_id": [e["query_id"] for e in log],
        "judge": [run.judge.name] * len(log),
        "prompt": [json.dumps(e["prompt"], ensure_ascii=False) for e in log],
        "reply": pa.array([e["reply"] for e in log], pa.string()),
        "verdicts": pa.array([None if e["verdicts"] is None else json.dumps(e["verdicts"])
                              for e in log], pa.string()),
        "error": pa.array([e["error"] for e in log], pa.string())})


def _stored_columns(run: EvaluationRun) -> str:
    """The stored per-query columns (termgate.models.QUERY_COLUMNS) as select items."""
    present = set(run.queries.comparison_columns)
    items = []
    for column in QUERY_COLUMNS:
        if not column.stored:
            continue
        if column.comparison and column.name not in present:
            items.append(f"NULL::{column.sql_type} AS {column.name}")
        elif column.name == "position":
            items.append("query_scores.position::INTEGER AS position")
        else:
            items.append(column.name)
    return ", ".join(items)


# Term rows unfold from the scorer's per-term lists: one per generated term (TP or FP),
# one per expected term not matched (FN; an underweight term's expected twin among them).
_TERM_ROWS = """
INSERT INTO store.term_rows
SELECT $run, query_id, term, CASE WHEN tp THEN 'TP' ELSE 'FP' END, weight, min_weight, drift, unjudged, reason,
       k, exp_pos
FROM (SELECT query_id, unnest(generated_terms) AS term, unnest(generated_weights) AS weight,
             unnest(generated_matched) AS tp, unnest(generated_min_weight) AS min_weight,
             unnest(generated_drift) AS drift, unnest(generated_unjudged) AS unjudged,
             unnest(generated_reason) AS reason, unnest(range(n_generated)) AS k,
             unnest(generated_expected_pos) AS exp_pos FROM query_scores)
UNION ALL
SELECT $run, query_id, term, 'FN', weight, min_weight, false, false, NULL, NULL, k
FROM (SELECT query_id, unnest(expected_terms) AS term, unnest(expected_generated_weight) AS weight,
             unnest(expected_min_weights) AS min_weight, unnest(expected_matched) AS tp,
             unnest(range(n_expected)) AS k FROM query_scores)
WHERE NOT tp"""


def save_run(db_path: str | Path, run: EvaluationRun, before_commit=None,
             extra_rows: dict[str, pa.Table] | None = None, usage: dict | None = None, extends=None) -> None:
    """Store the run, its per-query and per-term rows, `extra_rows` (table name -> Arrow
    rows, e.g. the harness's replies) and the LLM `usage` in one transaction, with its
    header appended to the audit chain in the same transaction. before_commit() runs last
    inside it: if it raises, nothing is stored; so does extends(head) (store.backends.save_run),
    called first inside it (the file is attached: no other process can write it meanwhile).

    The rows go from the scorer's in-memory DuckDB to the store without leaving DuckDB:
    the store file is attached to it for the transaction (one wait for a busy store). A
    PostgreSQL store gets the very rows a DuckDB store would (store.pg_runs).
    """
    make_folder(db_path)
    con = run.queries.con.cursor()
    # rows go to the store in any order (readers sort by position): inserting in parallel
    # is faster, and this cursor's setting leaves the report's ordered reads alone
    con.execute("SET SESSION preserve_insertion_order = false")
    try:
        attach(con, str(db_path), "store")
        try:
            con.execute("USE store")  # create or migrate the store's schema, as connect() would
            migrate(con)
            con.execute("USE memory")
            con.execute("BEGIN TRANSACTION")
            if extends is not None:
                extends(head_on(con, "store."))
            stage_run(con, run, extra_rows, usage)
            append_on(con, header_record(con, run.evaluation_id, "store."), "store.")  # in the same transaction
            if before_commit is not None:
                before_commit()
            con.execute("COMMIT")
        except BaseException as exc:
            try:
                con.execute("ROLLBACK")
            except duckdb.Error:
                pass  # a failed COMMIT has already rolled back
            if _disk_fault(exc):
                raise store_write_error(db_path, exc) from None
            raise
        finally:
            try:
                con.execute("DETACH store")
            except duckdb.Error:
                pass
    except duckdb.Error as exc:
        if _disk_fault(exc):
            raise store_write_error(db_path, exc) from None
        raise
    finally:
        con.close()


def stage_run(con, run: EvaluationRun, extra_rows: dict[str, pa.Table] | None = None,
              usage: dict | None = None) -> None:
    """Every row the run stores, inserted into the store attached to the scorer's
    connection as `store` (the one definition of what a stored run is, for both backends)."""
    con.execute(f"INSERT INTO store.runs ({', '.join(RUN_INSERT_COLUMNS)}) "
                f"VALUES ({', '.join('?' * len(RUN_INSERT_COLUMNS))})", _run_row(run))
    con.execute(f"INSERT INTO store.query_results BY NAME SELECT $run AS run_id, "
                f"{_stored_columns(run)} FROM query_scores"
                + (" LEFT JOIN comparison USING (query_id)" if run.queries.comparison_columns else ""),
                {"run": run.evaluation_id})
    con.execute(_TERM_ROWS, {"run": run.evaluation_id})
    retrieval = _retrieval_table(run)
    if retrieval is not None:
        _insert_table(con, "store.retrieval_results", retrieval)
    _store_golden_file(con, run)
    extra = dict(extra_rows or {})
    log = _judge_log(run)
    if log is not None:
        extra["judge_log"] = log
    for table_name, rows in extra.items():
        _insert_table(con, f"store.{table_name}", rows)
    if run.cache_use is not None:  # whose cache entries it used, under the chain's digest of the row
        usage = {**(usage or {}), "cache": run.cache_use}
    if run.policy is not None:  # the policy it was gated under, under the chain's digest of the row
        usage = {**(usage or {}), "policy": run.policy}
    if usage is not None:
        con.execute("UPDATE store.runs SET usage = ? WHERE run_id = ?",
                    [json.dumps(usage, sort_keys=True), run.evaluation_id])


def _store_golden_file(con, run: EvaluationRun) -> None:
    """The golden file's text, once per golden revision (read as the scorer read it)."""
    if con.execute("SELECT count(*) FROM store.golden_files WHERE golden_hash = ?", [run.golden_hash]).fetchall()[0][0]:
        return
    try:
        if not stat.S_ISREG(os.stat(run.golden_path).st_mode):
            return  # a FIFO or pipe, read once already: the run's rows hold what the gate read
        content = Path(run.golden_path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError):
        return  # gone since it was scored: the run's rows still hold what the gate read
    con.execute("INSERT INTO store.golden_files VALUES (?, ?, ?, ?)",
                [run.golden_hash, run.golden_path, content, run.timestamp])


def golden_content(db_path: str | Path, golden_hash: str) -> str | None:
    """The golden file as given, stored with the runs that scored it; None when not stored."""
    with connect(db_path, rows={"golden_files": Rows("golden_hash = %s", (golden_hash,))}) as con:
        rows = con.execute("SELECT content FROM golden_files WHERE golden_hash = ?", [golden_hash]).fetchall()
    return rows[0][0] if rows else None


def golden_entry(db_path: str | Path, golden_hash: str, query_id: str) -> tuple[int, str] | None:
    """(line number, the line as given) of a query's entry in a stored golden file, its lines
    numbered as the loader numbers them (they end at \\n; io.golden_line_numbers) and a
    leading byte-order mark and a trailing \\r left out; None when the file is not stored
    or holds no such entry. The store sends back only the lines that can hold it: those
    holding the id as JSON writes it, or any escape (the id may be written with escapes); the
    first of them whose query_id is the id is the entry (a golden set holds each id once)."""
    needle = json.dumps(query_id, ensure_ascii=False)[1:-1]
    if is_postgres(db_path):
        from .pg_rows import golden_lines_pg

        candidates = golden_lines_pg(str(db_path), golden_hash, needle)
    else:
        with connect(db_path) as con:
            candidates = con.execute(GOLDEN_LINES, [golden_hash, needle]).fetchall()
    for line, text in candidates:
        text = text.removeprefix("\ufeff") if line == 1 else text
        try:
            if orjson.loads(text).get("query_id") == query_id:
                return line, text.rstrip("\r")
        except (orjson.JSONDecodeError, AttributeError):
            continue
    return None


GOLDEN_LINES = """SELECT line, text FROM (
    SELECT unnest(lines) AS text, generate_subscripts(lines, 1) AS line
    FROM (SELECT string_split(content, chr(10)) AS lines FROM golden_files WHERE golden_hash = $1))
    WHERE contains(text, $2) OR contains(text, chr(92)) ORDER BY line"""
"""golden_entry's candidate lines in a store file (pg_rows.GOLDEN_LINES_PG: the same on
PostgreSQL, run on the server, so a 50 MB golden file does not cross the wire for one line)."""


def _disk_fault(exc: BaseException) -> bool:
    """A write the file system refused (a full disk, a read-only or vanished file)."""
    return isinstance(exc, duckdb.IOException) or (isinstance(exc, duckdb.Error) and "space left" in str(exc).lower())


# ---------------------------------------------------------------- reading

RUN_COLUMNS = ("run_id, created_at, name, prompt_version, gate_decision, domains, total_queries, "
               "passed, failed, errored, aggregate_precision, aggregate_recall, aggregate_f1, "
               "mean_term_drift_score, regression_detected, baseline_id, author, golden_path, "
               "CAST(json_extract(usage, '$.repeat') AS INTEGER) AS repeat, "
               "CAST(json_extract(usage, '$.repeats') AS INTEGER) AS repeats")


def list_runs(db_path: str | Path, limit: int | None = None) -> pd.DataFrame:
    """Runs, newest first."""
    with connect(db_path, rows=every("runs")) as con:
        sql = f"SELECT {RUN_COLUMNS} FROM runs ORDER BY created_at DESC, run_id DESC"
        if limit is not None:
            return con.execute(sql + " LIMIT ?", [limit]).df()
        return con.execute(sql).df()


def get_run(db_path: str | Path, run_id: str) -> dict:
    """Every stored column of one run; UnknownRunError when absent."""
    found = get_runs(db_path, [run_id])
    if run_id not in found:
        raise UnknownRunError(f"unknown run '{run_id}' in {shown_db(db_path)} (see `termgate runs`)")
    return found[run_id]


def get_runs(db_path: str | Path, run_ids: list[str]) -> dict[str, dict]:
    """Every stored column of these runs, by run id, in one read (absent ids are missing)."""
    with connect(db_path, rows=of_runs(list(run_ids), "runs")) as con:
        cur = con.execute("SELECT * FROM runs WHERE list_contains(?::VARCHAR[], run_id)", [list(run_ids)])
        rows = cur.fetchall()  # always drain a result: DuckDB 2 refuses new work otherwise
        names = [d[0] for d in cur.description]
    found = {row[0]: dict(zip(names, row)) for row in rows}
    for run in found.values():
        run["retrieval"] = _retrieval_summary(run)
    return found


def _retrieval_summary(run: dict) -> dict | None:
    """A stored run's retrieval summary, parsed (schema 17); None when it has none."""
    from ..errors import TermgateError

    if not run.get("retrieval"):
        return None
    try:
        return json.loads(run["retrieval"])
    except ValueError:
        raise TermgateError(f"run {run['run_id']}: its stored retrieval summary is not JSON (edited by hand? "
                            "`termgate audit verify` names what was edited)") from None


def run_row(db_path: str | Path, run_id: str) -> str:
    """The run's `runs` row as the JSON text its header's run_digest hashes (store.digest);
    UnknownRunError when absent."""
    from .digest import run_row_text

    with connect(db_path, rows=of_runs([run_id], "runs")) as con:
        text = run_row_text(con, run_id)
    if text is None:
        raise UnknownRunError(f"unknown run '{run_id}' in {shown_db(db_path)} (see `termgate runs`)")
    return text


def find_run_by_content(db_path: str | Path, content_hash: str) -> str | None:
    """The newest run with this content hash, if any."""
    if not exists(db_path):
        return None
    with connect(db_path, rows={"runs": Rows("content_hash = %s", (content_hash,))}) as con:
        row = con.execute("SELECT run_id FROM runs WHERE content_hash = ? ORDER BY created_at DESC LIMIT 1",
                          [content_hash]).fetchall()
        row = row[0] if row else None
        return row[0] if row else None


def query_rows(db_path: str | Path, run_id: str) -> pd.DataFrame:
    """Per-query rows of a run in golden-set order."""
    get_run(db_path, run_id)
    with connect(db_path, rows=of_runs([run_id], "query_results")) as con:
        return con.execute("SELECT * EXCLUDE (run_id) FROM query_results WHERE run_id = ? ORDER BY position",
                           [run_id]).df()


def retrieval_rows(db_path: str | Path, run_id: str) -> pd.DataFrame:
    """retrieval_table's rows as a DataFrame."""
    return retrieval_table(db_path, run_id).to_pandas()


def retrieval_outcome(db_path: str | Path, run: dict):
    """A stored run's retrieval effect (its summary and per-query rows) as the evaluation
    made it (termgate.retrieval.outcome.RetrievalOutcome); None when it measured none.
    `run` is the run's get_run dict."""
    if not run.get("retrieval"):
        return None
    from ..retrieval.outcome import ROWS_SCHEMA, RetrievalOutcome

    return RetrievalOutcome(run["retrieval"], retrieval_table(db_path, run["run_id"]).cast(ROWS_SCHEMA))


def retrieval_table(db_path: str | Path, run_id: str) -> pa.Table:
    """A run's retrieval rows (query_id, variant, ndcg, recall, mrr, precision, top_ids: its
    top ids per variant, best first) in golden-set order, each query's variants in the
    order unexpanded, baseline, candidate; empty for a run stored without retrieval.
    UnknownRunError when the run is not stored."""
    from ..retrieval.outcome import VARIANTS

    wanted = {"runs": Rows("run_id = %s", (run_id,), ("run_id",)),
              "query_results": Rows("run_id = %s", (run_id,), ("run_id", "query_id", "position")),
              "retrieval_results": Rows("run_id = %s", (run_id,))}
    with connect(db_path, rows=wanted) as con:
        if not con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0]:
            raise UnknownRunError(f"unknown run '{run_id}' in {shown_db(db_path)} (see `termgate runs`)")
        columns = ", ".join(f"r.{c}" for c in RETRIEVAL_COLUMNS[1:])
        return con.execute(f"SELECT {columns} FROM retrieval_results r LEFT JOIN query_results q "
                           "ON q.run_id = r.run_id AND q.query_id = r.query_id WHERE r.run_id = ? "
                           "ORDER BY q.position NULLS LAST, r.query_id, list_position(?::VARCHAR[], r.variant) "
                           "NULLS LAST, r.variant", [run_id, list(VARIANTS)]).to_arrow_table()


def drift_terms(db_path: str | Path, run_id: str, limit: int | None = None) -> pd.DataFrame:
    """Drift terms of a run with their query and explanation, in golden order."""
    with connect(db_path, rows=of_runs([run_id], "term_rows", "query_results")) as con:
        sql = ("SELECT t.query_id, q.query, t.term, t.reason FROM term_rows t JOIN query_results q "
               "ON q.run_id = t.run_id AND q.query_id = t.query_id WHERE t.run_id = ? AND t.drift "
               "ORDER BY q.position, t.gen_pos")
        if limit is not None:
            return con.execute(sql + " LIMIT ?", [run_id, limit]).df()
        return con.execute(sql, [run_id]).df()


def judge_log(db_path: str | Path, run_id: str) -> pd.DataFrame:
    """Prompt, raw reply and parsed verdicts of an LLM drift judge, per query."""
    with connect(db_path, rows=of_runs([run_id], "judge_log")) as con:
        return con.execute("SELECT * EXCLUDE (run_id) FROM judge_log WHERE run_id = ? ORDER BY query_id",
                           [run_id]).df()


def term_rows(db_path: str | Path, run_id: str, query_id: str | None = None) -> pd.DataFrame:
    """Per-term rows (TP/FP/FN with weight, drift flag and reason) of a run."""
    wanted = (of_runs([run_id], "term_rows") if query_id is None
              else {"term_rows": Rows("run_id = %s AND query_id = %s", (run_id, query_id))})
    with connect(db_path, rows=wanted) as con:
        sql = "SELECT * EXCLUDE (run_id) FROM term_rows WHERE run_id = ?"
        params: list = [run_id]
        if query_id is not None:
            sql += " AND query_id = ?"
            params.append(query_id)
        return con.execute(sql + " ORDER BY query_id, coalesce(gen_pos, 100000 + exp_pos)", params).df()


def repeat_runs(db_path: str | Path, golden_name: str, prompt_version: str, limit: int = 10) -> list[Baseline]:
    """Earlier runs of this prompt version on this golden set, by name (SPEC §1.1), for the
    noise floor."""
    if not exists(db_path):
        return []
    with connect(db_path, rows={"runs": Rows("prompt_version = %s", (prompt_version,))}) as con:
        rows = con.execute("SELECT run_id, golden_name, golden_path FROM runs WHERE prompt_version = ? "
                           "ORDER BY created_at DESC", [prompt_version]).fetchall()
    ids = [rid for rid, name, path in rows
           if stored_golden_name({"golden_name": name, "golden_path": path}) == golden_name][:limit]
    return [load_baseline(db_path, rid) for rid in ids]


def load_baseline(db_path: str | Path, run_id: str) -> Baseline:
    """A stored run as a baseline: its stored per-query values, used as they are."""
    run = get_run(db_path, run_id)
    with connect(db_path, rows={"query_results": Rows("run_id = %s", (run_id,), (
            "run_id", "query_id", "position", "f1", "passed", "precision", "recall", "error",
            "golden_entry_hash", "generated_terms", "generated_weights"))}) as con:
        rows = con.execute("SELECT query_id, f1, passed, precision, recall, error IS NOT NULL, golden_entry_hash, "
                           "generated_terms, generated_weights "
                           "FROM query_results WHERE run_id = ? ORDER BY position", [run_id]).fetchall()
    return Baseline(run_id, f"store {shown_db(db_path)}",
                    {q: BaselineRow(f1, passed, p, r, err, entry,
                                    None if err else tuple(zip(terms or [], weights or [1.0] * len(terms or []))))
                     for q, f1, passed, p, r, err, entry, terms, weights in rows},
                    run["golden_hash"], run["content_hash"], stored_golden_name(run), _thresholds(run))


def _thresholds(run: dict) -> dict | None:
    """A stored run's thresholds as recorded (JSON); None when it recorded none."""
    import json

    value = json.loads(run["thresholds"]) if run.get("thresholds") else None
    return value if isinstance(value, dict) else None


def golden_names(db_path: str | Path, golden_hash: str) -> list[str]:
    """The names runs on this golden content (its hash) were stored under, the newest run's
    first (SPEC §1.1)."""
    if not exists(db_path):
        return []
    with connect(db_path, rows={"runs": Rows("golden_hash = %s", (golden_hash,))}) as con:
        rows = con.execute("SELECT golden_name, golden_path FROM runs WHERE golden_hash = ? "
                           "ORDER BY created_at DESC, run_id DESC", [golden_hash]).fetchall()
    names = (stored_golden_name({"golden_name": name, "golden_path": path}) for name, path in rows)
    return list(dict.fromkeys(name for name in names if name))


def stored_golden_name(run: dict) -> str | None:
    """A stored run's golden-set name (SPEC §1.1): as recorded, else (a run stored before
    names were kept) its golden path tidied, as the default name then was; None with neither."""
    from ..io import golden_set_name

    if run.get("golden_name"):
        return run["golden_name"]
    return golden_set_name(run["golden_path"]) if run.get("golden_path") else None
