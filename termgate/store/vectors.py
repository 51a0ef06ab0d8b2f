"""The embedding cache: vectors by (model, normalised text)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa

from .cache_writers import CacheUse, pick_trusted, trust_filter_pg
from .connection import connect as connect_file, exists
from .reading import connect
from .pg_rows import Rows
from .pg_runs import insert_rows
from .postgres import is_postgres

if TYPE_CHECKING:
    import numpy as np

def load_vectors(db_path: str | Path, model: str, texts: list[str], use: CacheUse | None = None
                 ) -> dict[str, "np.ndarray"]:
    """Cached vectors of `texts` for `model` (absent texts are simply missing): of the
    writers `use` trusts (store.cache_writers; default: this process's own and
    TERMGATE_CACHE_TRUST's), whose writers `use` records."""
    import numpy as np

    use = use or CacheUse(db_path)
    trust = use.trust()
    where, params = trust_filter_pg(trust)
    wanted = pa.table({"text": pa.array(texts, pa.string())})
    with connect(db_path, rows={"embedding_cache": Rows(f"model = %s AND text = ANY(%s) AND {where}",
                                                         (model, list(texts), *params),
                                                         ("model", "text", "vector", "writer"))}) as con:
        con.register("_termgate_wanted", wanted)
        found = con.sql("SELECT c.text, c.vector, c.writer FROM embedding_cache c JOIN _termgate_wanted w "
                        "ON c.text = w.text AND c.model = ?" + pick_trusted(con, trust, "c.text"),
                        params=[model, trust.everyone]).to_arrow_table()
    use.read(set(found.column("writer").to_pylist()))
    # read as Arrow: one flat float buffer cut into rows, not a Python list per vector (10k
    # vectors: 0.2 s rather than 2 s)
    vectors = found.column("vector").combine_chunks()
    flat = np.asarray(vectors.flatten().to_numpy(zero_copy_only=False), dtype=np.float32)
    offsets = vectors.offsets.to_numpy()
    return {text: flat[offsets[i]:offsets[i + 1]] for i, text in enumerate(found.column("text").to_pylist())}


def save_vectors(db_path: str | Path, model: str, texts: list[str], vectors, use: CacheUse | None = None) -> None:
    """Add vectors to the cache under this process's writer; texts it cached already (in
    another process) are kept."""
    import numpy as np

    matrix = np.asarray(vectors, dtype=np.float32)
    flat = pa.array(matrix.reshape(-1), pa.float32())
    offsets = pa.array(np.arange(0, matrix.size + 1, max(matrix.shape[1], 1), dtype=np.int32))
    table = pa.table({"model": pa.array([model] * len(texts), pa.string()),
                      "text": pa.array(texts, pa.string()),
                      "vector": pa.ListArray.from_arrays(offsets, flat)})
    use = use or CacheUse(db_path)
    if is_postgres(db_path):
        from ..clock import utc_now

        insert_rows(str(db_path), "embedding_cache", table.append_column(
            "created_at", pa.array([utc_now()] * table.num_rows, pa.string())), key=("model", "text", "writer"))
        # the server fills in the writer (session_user)
    else:
        with connect_file(db_path, write=True) as con:
            con.register("_termgate_vectors", table)
            con.execute("INSERT OR IGNORE INTO embedding_cache (model, text, vector, created_at, writer) "
                        "SELECT model, text, vector, CAST(current_timestamp AS VARCHAR), ? FROM _termgate_vectors",
                        [use.writer])
    use.wrote()


class StoredVectors:
    """The embedding cache of one store, as termgate.drift.embeddings.VectorCache; `use`
    records whose entries were used (shared with the run's other caches of this store)."""

    def __init__(self, db_path: str | Path, use: CacheUse | None = None):
        self.db_path = db_path
        self.use = use or CacheUse(db_path)

    def load(self, model: str, texts: list[str]) -> dict[str, "np.ndarray"]:
        if not exists(self.db_path):
            return {}
        return load_vectors(self.db_path, model, texts, self.use)

    def save(self, model: str, texts: list[str], vectors) -> None:
        save_vectors(self.db_path, model, texts, vectors, self.use)
