"""The lexicon cache: a lexical resource's entry per term (WordNet's synsets, relations),
as JSON text by (source, term), so a warm run needs the resource no more than it needs the
embedding model (embedding_cache). `source` names the resource and its entry format."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from .cache_writers import CacheUse, pick_trusted, trust_filter_pg
from .connection import connect as connect_file, exists
from .pg_rows import Rows
from .pg_runs import insert_rows
from .postgres import is_postgres
from .reading import connect

__all__ = ["StoredLexicon", "load_lexicon", "save_lexicon"]


def load_lexicon(db_path: str | Path, source: str, terms: list[str], use: CacheUse | None = None) -> dict[str, str]:
    """Cached entries of `terms` from `source` (absent terms are simply missing): of the
    writers `use` trusts (store.cache_writers), whose writers `use` records."""
    use = use or CacheUse(db_path)
    trust = use.trust()
    where, params = trust_filter_pg(trust)
    wanted = pa.table({"term": pa.array(list(dict.fromkeys(terms)), pa.string())})
    with connect(db_path, rows={"lexicon_cache": Rows(f"source = %s AND term = ANY(%s) AND {where}",
                                                       (source, list(terms), *params),
                                                       ("source", "term", "entry", "writer"))}) as con:
        con.register("_termgate_wanted", wanted)
        rows = con.execute("SELECT c.term, c.entry, c.writer FROM lexicon_cache c JOIN _termgate_wanted w "
                           "ON c.term = w.term AND c.source = ?" + pick_trusted(con, trust, "c.term"),
                           [source, trust.everyone]).fetchall()
    use.read({writer for _, _, writer in rows})
    return {term: entry for term, entry, _ in rows}


def save_lexicon(db_path: str | Path, source: str, entries: dict[str, str], use: CacheUse | None = None) -> None:
    """Add entries to the cache under this process's writer; terms it cached already (in
    another process) are kept."""
    from ..clock import utc_now

    table = pa.table({"source": pa.array([source] * len(entries), pa.string()),
                      "term": pa.array(list(entries), pa.string()),
                      "entry": pa.array(list(entries.values()), pa.string()),
                      "created_at": pa.array([utc_now()] * len(entries), pa.string())})
    if not table.num_rows:
        return
    use = use or CacheUse(db_path)
    if is_postgres(db_path):
        insert_rows(str(db_path), "lexicon_cache", table, key=("source", "term", "writer"))  # the server's writer
    else:
        with connect_file(db_path, write=True) as con:
            con.register("_termgate_entries", table)
            con.execute("INSERT OR IGNORE INTO lexicon_cache (source, term, entry, created_at, writer) "
                        "SELECT source, term, entry, created_at, ? FROM _termgate_entries", [use.writer])
    use.wrote()


class StoredLexicon:
    """The lexicon cache of one store, with load/save as the drift judge's lexicon reads it;
    `use` records whose entries were used (shared with the run's other caches of this store)."""

    def __init__(self, db_path: str | Path, use: CacheUse | None = None):
        self.db_path = db_path
        self.use = use or CacheUse(db_path)

    def load(self, source: str, terms: list[str]) -> dict[str, str]:
        if not exists(self.db_path) or not terms:
            return {}
        return load_lexicon(self.db_path, source, terms, self.use)

    def save(self, source: str, entries: dict[str, str]) -> None:
        save_lexicon(self.db_path, source, entries, self.use)
