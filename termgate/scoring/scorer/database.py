"""The scorer's database and results: a private in-memory DuckDB, its SQL macros and one
Python function, and what scoring leaves behind (ScoreFacts for the gate, ScoredQueries
for the outputs)."""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import weakref
from dataclasses import dataclass

import duckdb
import numpy as np
import pyarrow as pa

from ...sql import duckdb_memory_limit
from ..metrics import normalize_term

__all__ = ["PLAIN_TEXT", "ScoreFacts", "ScoredQueries", "connect_scorer"]

DEFAULT_MEMORY = "2GB"
"""The scorer's DuckDB memory cap unless TERMGATE_DUCKDB_MEMORY says otherwise; beyond it
DuckDB spills to a private temporary folder (a million queries peak at about 2.2 GB)."""

PLAIN_TEXT = "[\\x{0}-\\x{7f}\\x{c0}-\\x{d6}\\x{d8}-\\x{de}\\x{e0}-\\x{f6}\\x{f8}-\\x{ff}]*"
"""Text that rule 1 normalises in SQL: ASCII and the Latin-1 letters À–ÿ but for × ÷ ß.
NFKC leaves such text as it is, casefold() lowers it as DuckDB's lower() does, and its only
white space is ASCII's (tests/test_scoring.py checks every character and every pair)."""

_MACROS = [
    # Rule 1 for plain text (PLAIN_TEXT): lower case, runs of the white space str.split()
    # splits on collapsed, trimmed.
    "CREATE MACRO normalise_plain(t) AS CASE "
    "WHEN regexp_matches(t, '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f]|  |^ | $') "
    "THEN trim(regexp_replace(lower(t), '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f ]+', ' ', 'g'), ' ') "
    "ELSE lower(t) END",
    # Rule 1: plain text in SQL; any other text (NULL stays NULL) through the Python function
    # normalise_unicode, termgate.scoring.metrics.normalize_term (the rule's definition),
    # which CASE calls for those values only. Per value, as the row is built: the cost is
    # linear in the number of terms.
    "CREATE MACRO normalise_text(t) AS CASE "
    f"WHEN strlen(t) = length(t) OR regexp_full_match(t, '{PLAIN_TEXT}') THEN normalise_plain(t) "
    "ELSE normalise_unicode(t) END",
    # termgate.hashing: a length-prefixed string, and an optional one
    "CREATE MACRO length_prefixed(t) AS strlen(t) || ':' || t",
    "CREATE MACRO optional_prefixed(t) AS CASE WHEN t IS NULL THEN '-' ELSE length_prefixed(t) END",
    # termgate.scoring.metrics.format_pair: two decimals, more while both sides print the same
    "CREATE MACRO fmt_pair(v, l) AS CASE "
    + " ".join(f"WHEN printf('%.{d}f', v) <> printf('%.{d}f', l) THEN printf('%.{d}f', v) || ' < ' || printf('%.{d}f', l)"
               for d in range(2, 10))
    + " ELSE CAST(v AS VARCHAR) || ' < ' || CAST(l AS VARCHAR) END",
]


@dataclass(slots=True)
class ScoreFacts:
    """Per-query columns the gate and the recommendations read (golden-set order)."""

    query_ids: pa.Array
    n_expected: np.ndarray
    n_generated: np.ndarray
    recall: np.ndarray
    critical: np.ndarray
    passed: np.ndarray
    errored: np.ndarray
    n_drift: np.ndarray
    term_drift_score: np.ndarray
    n_unjudged: np.ndarray
    n_forbidden: np.ndarray
    n_underweight: np.ndarray
    no_line: np.ndarray
    """True where the generated file has no line for the query (note `no expansion generated`)."""
    n_asked: np.ndarray | None = None
    """Terms put to the drift judge (rule 5), of which n_unjudged it could not decide."""

    def unjudged_line(self) -> str | None:
        """"N of M terms unjudged" when the drift judge left any term undecided, else None:
        the drift score counts an unjudged term as clean, so a headline shows this beside it."""
        unjudged = int(self.n_unjudged.sum())
        if not unjudged:
            return None
        asked = int(self.n_asked.sum()) if self.n_asked is not None else unjudged
        return f"{unjudged} of {asked} {'term' if asked == 1 else 'terms'} unjudged"

    def ids(self, mask: np.ndarray, limit: int | None = None) -> list[str]:
        """The query_ids where mask is true, in golden-set order (the first `limit`)."""
        index = np.flatnonzero(mask)
        if limit is not None:
            index = index[:limit]
        return self.query_ids.take(pa.array(index, pa.int64())).to_pylist()


@dataclass(slots=True)
class ScoredQueries:
    """A scored golden set in the scorer's in-memory DuckDB database.

    Table (or view) `query_scores` holds one row per golden query in golden-set order, with every
    column of termgate.models.QUERY_COLUMNS that the scorer computes, plus the per-term
    lists the store's term rows unfold from (generated_*: per generated term, expected_*:
    per expected term). Table `comparison`, when set, holds the baseline comparison's columns.
    """

    con: duckdb.DuckDBPyConnection
    total: int
    golden_hash: str
    generated_hash: str
    domains: list[str]
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    term_drift_score: np.ndarray
    n_tp: np.ndarray
    n_fp: np.ndarray
    n_fn: np.ndarray
    facts: ScoreFacts
    comparison_columns: tuple[str, ...] = ()
    """Columns of table `comparison` (keyed by query_id)."""

    def domain_column(self) -> list[str | None]:
        """Each query's normalised domain, in golden-set order."""
        return self.con.sql("SELECT domain FROM query_scores").to_arrow_table().column(0).to_pylist()

    def set_comparison(self, table: pa.Table) -> None:
        """Attach the per-query comparison columns (keyed by query_id)."""
        self.con.register("_comparison_arrow", table)
        self.con.execute("CREATE OR REPLACE TABLE comparison AS SELECT * FROM _comparison_arrow")
        self.con.unregister("_comparison_arrow")
        self.comparison_columns = tuple(c for c in table.column_names if c != "query_id")

    def select_rows(self, columns: str) -> str:
        """SQL reading `columns` (over query_scores and, when set, the comparison) in golden-set order."""
        if not self.comparison_columns:
            return f"SELECT {columns} FROM query_scores"  # query_scores is in golden-set order
        return (f"SELECT {columns} FROM query_scores LEFT JOIN comparison USING (query_id) "
                "ORDER BY query_scores.position")

    def close(self) -> None:
        self.con.close()


def connect_scorer() -> duckdb.DuckDBPyConnection:
    """A private in-memory database; what exceeds the memory limit spills to a temporary
    folder of its own (DuckDB's default would be `.tmp` in the user's working directory),
    which DuckDB creates when it first spills and which goes with the connection."""
    limit = duckdb_memory_limit(DEFAULT_MEMORY)
    spill = os.path.join(tempfile.gettempdir(), f"termgate-scorer-{os.getpid()}-{secrets.token_hex(4)}")
    con = duckdb.connect(":memory:", config={
        "preserve_insertion_order": True, "memory_limit": limit, "temp_directory": spill})
    weakref.finalize(con, shutil.rmtree, spill, True)
    con.create_function("normalise_unicode", _normalise_unicode, ["VARCHAR"], "VARCHAR", type="arrow")
    for macro in _MACROS:
        con.execute(macro)
    return con


def _normalise_unicode(texts: pa.Array | pa.ChunkedArray) -> pa.Array:
    """normalize_term over a batch of DuckDB's values (Arrow, no NULL among them), each
    distinct text once."""
    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    encoded = texts.dictionary_encode()
    normalised = pa.array([normalize_term(t) for t in encoded.dictionary.to_pylist()], pa.string())
    return normalised.take(encoded.indices)
