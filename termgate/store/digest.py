"""Digests of a stored run: what its header record in the audit chain vouches for (SPEC §4).

A run's header names its run id, content hash, author, gate decision and reasons, domains,
a digest of its `runs` row and a digest of its per-query and per-term rows. Both digests
are recomputed from the store by `audit verify`, `gate` and `evaluate`, so editing a
stored drift flag, status or gate decision after the run was stored is caught.

Every row is written as DuckDB's JSON of its columns (one fixed column list per table), in
a total order. Columns added later (RUN_ADDED and RUN_RETRIEVAL, QUERY_ADDED) enter a row's
JSON only when the row sets them (the first one of each addition not NULL): a run stored
before they existed keeps its digest, and setting or clearing one afterwards changes the
digest, so either is caught. Likewise a run's retrieval rows (schema 17) enter the rows
digest only when it has any. SHA-256 runs over the lengths and bytes of those texts in
Python (hashlib is several times faster than SQL's sha256 per row, and the texts never
leave Arrow buffers).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pyarrow as pa

__all__ = ["DIGEST_VERSION", "RUN_COLUMNS", "QUERY_COLUMNS", "RUN_ADDED", "RUN_RETRIEVAL", "QUERY_ADDED", "TERM_COLUMNS",
           "RETRIEVAL_COLUMNS", "rows_digest", "run_digest", "run_row_text", "run_header"]

DIGEST_VERSION = 1
RUN_COLUMNS = (
    "run_id", "created_at", "name", "prompt_version", "golden_path", "generated_path", "golden_hash",
    "generated_hash", "content_hash", "domains", "high_risk_domains", "domain_context", "drift_judge",
    "drift_judge_config", "author", "evalcore_version", "baseline_id", "gate_decision", "gate_reasons",
    "total_queries", "passed", "failed", "errored", "aggregate_precision", "aggregate_recall", "aggregate_f1",
    "mean_term_drift_score", "micro_precision", "micro_recall", "micro_f1", "micro_tp", "micro_fp", "micro_fn",
    "regression_detected", "regressed_queries", "improved_queries", "added_queries", "removed_queries",
    "delta_summary", "golden_set_changed", "mean_f1_delta", "thresholds", "recommendations", "usage", "statistics")
QUERY_COLUMNS = (
    "run_id", "position", "query_id", "query", "domain", "critical", "precision", "recall", "f1",
    "term_drift_score", "passed", "failure_reasons", "notes", "error", "n_generated", "n_expected", "n_tp",
    "n_fp", "n_fn", "n_drift", "regression_status", "baseline_f1", "generated_terms", "generated_weights",
    "expected_terms", "expected_min_weights", "true_positives", "drift_terms", "drift_reasons", "unjudged_terms",
    "noise_floor", "within_noise")
RUN_ADDED = ("golden_name", "golden_changed_queries")
"""runs columns added after DIGEST_VERSION 1 (schema 12): in the JSON when golden_name is set."""
RUN_RETRIEVAL = ("retrieval",)
"""runs columns added at schema 17: when `retrieval` is set, the JSON holds every column
(RUN_COLUMNS, RUN_ADDED and these); else it is what it was before."""
QUERY_ADDED = ("golden_entry_hash",)
"""query_results columns added after DIGEST_VERSION 1 (schema 12): in the JSON when set."""
TERM_COLUMNS = ("run_id", "query_id", "term", "kind", "weight", "min_weight", "drift", "unjudged", "reason",
                "gen_pos", "exp_pos")
RETRIEVAL_COLUMNS = ("run_id", "query_id", "variant", "ndcg", "recall", "mrr", "precision", "top_ids", "top_grades",
                     "top_titles", "brought_by")
"""retrieval_results (schema 17), ordered by its key (query_id, variant) within a run."""


def _json(columns: tuple[str, ...], *added: tuple[str, ...]) -> str:
    """SQL for a row's JSON text; each of `added` (oldest first) enters it, with every
    addition before it, when its first column is set."""
    if not added:
        return "to_json(struct_pack(" + ", ".join(f'"{c}" := "{c}"' for c in columns) + "))::VARCHAR"
    *older, newest = added
    every = columns + tuple(c for group in added for c in group)
    return f'CASE WHEN "{newest[0]}" IS NULL THEN {_json(columns, *older)} ELSE {_json(every)} END'


def _present(con, table: str, *added: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """The additions (oldest first) the table has: not those still to come while an older
    schema is being migrated (a migration that digests runs, e.g. the adoption, runs before
    the columns exist)."""
    names = {r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()}
    present = []
    for group in added:
        if not all(c in names for c in group):
            break
        present.append(group)
    return tuple(present)


def _has_table(con, schema: str, table: str) -> bool:
    """Whether the table exists (asked of the catalog: a failed statement would abort the
    caller's transaction, such as a migration's)."""
    database = schema.rstrip(".")
    return bool(con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = ? AND database_name = "
        + ("?" if database else "current_database()"), [table, database] if database else [table]).fetchall()[0][0])



def _feed(digest, reader) -> int:
    """Hash each text's length and bytes (so no two row lists share a byte stream); rows."""
    rows = 0
    for batch in reader:
        texts = batch.column(0)
        rows += len(texts)
        if texts.null_count:
            raise ValueError("a row digest text is NULL")
        width = np.int64 if pa.types.is_large_string(texts.type) else np.int32
        offsets = np.frombuffer(texts.buffers()[1], dtype=width)[texts.offset:texts.offset + len(texts) + 1]
        digest.update(np.diff(offsets).astype("<i8").tobytes())
        digest.update(texts.buffers()[2][int(offsets[0]):int(offsets[-1])])
    return rows


def rows_digest(con, run_id: str, schema: str = "") -> dict:
    """{"digest", "query_rows", "term_rows"} over the run's stored rows (`schema` is a
    catalog prefix such as "store." when the store is attached to another database), with
    "retrieval_rows" when the run has any (schema 17: then they are in the digest too)."""
    digest = hashlib.sha256(f"evalcore rows v{DIGEST_VERSION}\n".encode())
    queries = _feed(digest, con.sql(
        f"SELECT {_json(QUERY_COLUMNS, *_present(con, schema + 'query_results', QUERY_ADDED))} "
        f"FROM {schema}query_results WHERE run_id = ? ORDER BY position, query_id",
        params=[run_id]).to_arrow_reader(65_536))
    digest.update(b"\nterm_rows\n")
    terms = _feed(digest, con.sql(
        f"SELECT {_json(TERM_COLUMNS)} FROM {schema}term_rows WHERE run_id = ? "
        "ORDER BY query_id, kind, gen_pos, exp_pos, term", params=[run_id]).to_arrow_reader(65_536))
    retrieval = 0
    if _has_table(con, schema, "retrieval_results"):
        extended = digest.copy()  # the run's digest as before when it has no retrieval rows
        extended.update(b"\nretrieval_results\n")
        retrieval = _feed(extended, con.sql(
            f"SELECT {_json(RETRIEVAL_COLUMNS)} FROM {schema}retrieval_results WHERE run_id = ? "
            "ORDER BY query_id, variant", params=[run_id]).to_arrow_reader(65_536))
        digest = extended if retrieval else digest
    rows = {"digest": digest.hexdigest(), "query_rows": queries, "term_rows": terms}
    return rows | ({"retrieval_rows": retrieval} if retrieval else {})


def run_row_text(con, run_id: str, schema: str = "") -> str | None:
    """The run's `runs` row as the JSON text run_digest hashes; None when the run is not
    stored. An attestation carries it (governance.attest), so what it says about the run
    (prompt version, generated and golden hashes) is checked against the signed header."""
    added = _present(con, schema + "runs", RUN_ADDED, RUN_RETRIEVAL)
    rows = con.execute(f"SELECT {_json(RUN_COLUMNS, *added)} FROM {schema}runs WHERE run_id = ?", [run_id]).fetchall()
    return rows[0][0] if rows else None


def run_digest(con, run_id: str, schema: str = "") -> str | None:
    """SHA-256 of the run's `runs` row as JSON; None when the run is not stored."""
    text = run_row_text(con, run_id, schema)
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def run_header(con, run_id: str, schema: str = "") -> dict:
    """What the chain records about a stored run (its `run` record's payload)."""
    cur = con.execute(f"SELECT content_hash, author, gate_decision, gate_reasons, domains, high_risk_domains, "
                      f"errored FROM {schema}runs WHERE run_id = ?", [run_id])
    content_hash, author, gate, reasons, domains, high_risk, errored = cur.fetchall()[0]
    return {"run_id": run_id, "content_hash": content_hash, "author": author, "gate": gate,
            "gate_reasons": list(reasons or []), "domains": list(domains or []),
            "high_risk_domains": list(high_risk or []), "errored": errored,
            "run_digest": run_digest(con, run_id, schema), "rows": rows_digest(con, run_id, schema),
            "digest_version": DIGEST_VERSION}
