"""The lexicon cache: a lexical resource's entry per term (WordNet's synsets, relations),
as JSON text by (source, term), so a warm run needs the resource no more than it needs the
embedding model (embedding_cache). `source` names the resource and its entry format."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from .connection import connect as connect_file, exists
from .pg_rows import Rows
from .pg_runs import insert_rows
from .postgres import is_postgres
from .reading import connect

__all__ = ["StoredLexicon", "load_lexicon", "save_lexicon"]


def load_lexicon(db_path: str | Path, source: str, terms: list[str]) -> dict[str, str]:
    """Cached entries of `terms` from `source` (absent terms are simply missing)."""
    wanted = pa.table({"term": pa.array(list(dict.fromkeys(terms)), pa.string())})
    with connect(db_path, rows={"lexicon_cache": Rows("source = %s AND term = ANY(%s)", (source, list(terms)),
                                                       ("source", "term", "entry"))}) as con:
        con.register("_termgate_wanted", wanted)
        rows = con.execute("SELECT c.term, c.entry FROM lexicon_cache c JOIN _termgate_wanted w "
                           "ON c.term = w.term WHERE c.source = ?", [source]).fetchall()
    return dict(rows)


def save_lexicon(db_path: str | Path, source: str, entries: dict[str, str]) -> None:
    """Add entries to the cache; terms already cached (by another process) are kept."""
    from ..clock import utc_now

    table = pa.table({"source": pa.array([source] * len(entries), pa.string()),
                      "term": pa.array(list(entries), pa.string()),
                      "entry": pa.array(list(entries.values()), pa.string()),
                      "created_at": pa.array([utc_now()] * len(entries), pa.string())})
    if not table.num_rows:
        return
    if is_postgres(db_path):
        return insert_rows(str(db_path), "lexicon_cache", table, key=("source", "term"))
    with connect_file(db_path, write=True) as con:
        con.register("_termgate_entries", table)
        con.execute("INSERT OR IGNORE INTO lexicon_cache SELECT source, term, entry, created_at FROM _termgate_entries")


class StoredLexicon:
    """The lexicon cache of one store, with load/save as the drift judge's lexicon reads it."""

    def __init__(self, db_path: str | Path):
        self.db_path = db_path

    def load(self, source: str, terms: list[str]) -> dict[str, str]:
        if not exists(self.db_path) or not terms:
            return {}
        return load_lexicon(self.db_path, source, terms)

    def save(self, source: str, entries: dict[str, str]) -> None:
        save_lexicon(self.db_path, source, entries)
