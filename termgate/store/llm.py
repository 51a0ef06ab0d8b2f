"""The LLM response cache and per-query harness outputs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from .cache_writers import CacheUse, pick_trusted, trust_filter_pg
from .connection import connect as connect_file, exists
from .reading import connect
from .pg_rows import Rows, every, of_runs
from .pg_runs import insert_rows
from .postgres import is_postgres

__all__ = ["load_llm_cache", "save_llm_cache", "harness_output_rows", "harness_outputs", "query_replies",
           "StoredReplies"]


def load_llm_cache(db_path: str | Path, keys: list[str], use: CacheUse | None = None) -> dict[str, str]:
    """Cached replies for these request keys (absent keys are missing): of the writers `use`
    trusts (store.cache_writers; default: this process's own and TERMGATE_CACHE_TRUST's),
    whose writers `use` records."""
    if not keys or not exists(db_path):
        return {}
    use = use or CacheUse(db_path)
    trust = use.trust()
    where, params = trust_filter_pg(trust)
    with connect(db_path, rows={"llm_cache": Rows(f"key = ANY(%s) AND {where}", (list(keys), *params),
                                                   ("key", "reply", "writer"))}) as con:
        con.register("_termgate_keys", pa.table({"key": pa.array(keys, pa.string())}))
        rows = con.execute("SELECT c.key, c.reply, c.writer FROM llm_cache c JOIN _termgate_keys k ON c.key = k.key"
                           + pick_trusted(con, trust, "c.key"), [trust.everyone]).fetchall()
    use.read({writer for _, _, writer in rows})
    return {key: reply for key, reply, _ in rows}


def save_llm_cache(db_path: str | Path, entries: list[tuple[str, str, str, int, int]],
                   use: CacheUse | None = None) -> None:
    """(key, model, reply, prompt_tokens, completion_tokens) under this process's writer;
    keys it cached already (in another process) are kept."""
    if not entries:
        return
    table = pa.table({"key": pa.array([e[0] for e in entries], pa.string()),
                      "model": pa.array([e[1] for e in entries], pa.string()),
                      "reply": pa.array([e[2] for e in entries], pa.string()),
                      "prompt_tokens": pa.array([e[3] for e in entries], pa.int32()),  # the columns' INTEGER
                      "completion_tokens": pa.array([e[4] for e in entries], pa.int32())})
    use = use or CacheUse(db_path)
    if is_postgres(db_path):
        from ..clock import utc_now

        insert_rows(str(db_path), "llm_cache", table.append_column(  # the server fills in the writer
            "created_at", pa.array([utc_now()] * table.num_rows, pa.string())), key=("key", "writer"))
    else:
        with connect_file(db_path, write=True) as con:
            con.register("_termgate_cache", table)
            con.execute("INSERT OR IGNORE INTO llm_cache (key, model, reply, prompt_tokens, completion_tokens, "
                        "created_at, writer) SELECT key, model, reply, prompt_tokens, completion_tokens, "
                        "CAST(current_timestamp AS VARCHAR), ? FROM _termgate_cache", [use.writer])
    use.wrote()


def harness_output_rows(run_id: str, rows: list[dict]) -> pa.Table:
    """Prompt, raw reply, parsed terms and error per query of a harness run, as the rows
    save_run stores with the run (table harness_outputs)."""
    return pa.table({"run_id": pa.array([run_id] * len(rows), pa.string()),
                     "query_id": pa.array([r["query_id"] for r in rows], pa.string()),
                     "prompt": pa.array([r.get("prompt") for r in rows], pa.string()),
                     "reply": pa.array([r.get("reply") for r in rows], pa.string()),
                     "terms": pa.array([r.get("terms") for r in rows], pa.list_(pa.string())),
                     "error": pa.array([r.get("error") for r in rows], pa.string())})


def harness_outputs(db_path: str | Path, run_id: str):
    """A harness run's items (query_id, query, prompt, reply, terms, error) in golden-set
    order (query_results.position); empty for a run the harness did not make."""
    with connect(db_path, rows=of_runs([run_id], "harness_outputs", "query_results")) as con:
        return con.execute("""SELECT h.query_id, q.query, h.prompt, h.reply, h.terms, h.error
            FROM harness_outputs h LEFT JOIN query_results q ON q.run_id = h.run_id AND q.query_id = h.query_id
            WHERE h.run_id = ? ORDER BY q.position NULLS LAST, h.query_id""", [run_id]).df()


def query_replies(db_path: str | Path, query_id: str, limit: int = 10):
    """One query's harness items across runs, newest first (run_id, created_at,
    prompt_version, prompt, reply, terms, error); empty when no harness run holds it."""
    with connect(db_path, rows=every("runs") | {"harness_outputs": Rows("query_id = %s", (query_id,))}) as con:
        return con.execute("""SELECT h.run_id, r.created_at, r.prompt_version, h.prompt, h.reply, h.terms, h.error
            FROM harness_outputs h JOIN runs r USING (run_id) WHERE h.query_id = ?
            ORDER BY r.created_at DESC, h.run_id DESC LIMIT ?""", [query_id, limit]).df()


class StoredReplies:
    """The LLM reply cache of one store, as termgate.llm.client.ReplyCache; `use` records
    whose entries were used (shared with the run's other caches of this store)."""

    def __init__(self, db_path: str | Path, use: CacheUse | None = None):
        self.db_path = db_path
        self.use = use or CacheUse(db_path)

    def load(self, keys: list[str]) -> dict[str, str]:
        return load_llm_cache(self.db_path, keys, self.use)

    def save(self, entries: list[tuple[str, str, str, int, int]]) -> None:
        save_llm_cache(self.db_path, entries, self.use)
