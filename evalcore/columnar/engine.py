"""The columnar engine's database and results: a private in-memory DuckDB, its SQL macros,
and what scoring leaves behind (ScoreFacts for the gate, ColumnarScores for the outputs)."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import tempfile
import weakref
from dataclasses import dataclass, field

import duckdb
import numpy as np
import pyarrow as pa

from ..errors import EvalcoreError, UsageError

_MACROS = [
    # rule 1 for ASCII text: NFKC leaves it alone and casefold() is lower(); split() splits
    # on these characters. Non-ASCII text is normalised in Python (see _normalise).
    "CREATE MACRO norm_ascii(t) AS trim(regexp_replace(lower(t), '[\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f ]+', ' ', 'g'), ' ')",
    "CREATE MACRO lp(t) AS strlen(t) || ':' || t",
    "CREATE MACRO opt(t) AS CASE WHEN t IS NULL THEN '-' ELSE lp(t) END",
    # evalcore.metrics.format_pair: two decimals, more while both sides print the same.
    "CREATE MACRO fmt_pair(v, l) AS CASE "
    + " ".join(f"WHEN printf('%.{d}f', v) <> printf('%.{d}f', l) THEN printf('%.{d}f', v) || ' < ' || printf('%.{d}f', l)"
               for d in range(2, 10))
    + " ELSE CAST(v AS VARCHAR) || ' < ' || CAST(l AS VARCHAR) END",
]


class Fallback(Exception):
    """The engine cannot vouch for this input; use the Python loaders and scorer."""


class EngineError(EvalcoreError):
    """The engine failed after the drift judge ran: falling back would judge twice."""


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

    def ids(self, mask: np.ndarray, limit: int | None = None) -> list[str]:
        index = np.flatnonzero(mask)
        if limit is not None:
            index = index[:limit]
        return self.query_ids.take(pa.array(index, pa.int64())).to_pylist()


@dataclass(slots=True)
class ColumnarScores:
    """A scored golden set held in an in-memory DuckDB database (q: a row per query, in golden order)."""

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
    side_columns: list[str] = field(default_factory=list)
    """Columns of table `side` (query_id -> regression status, baseline F1, noise) to report."""

    def rows(self) -> list[tuple[str, float, bool]]:
        """(query_id, f1, passed) in golden-set order, for the baseline comparison."""
        return self.con.execute("SELECT query_id, f1, passed FROM q ORDER BY pos").fetchall()

    def set_side(self, table: pa.Table) -> None:
        """Attach per-query regression and noise columns (keyed by query_id)."""
        self.con.register("_side_arrow", table)
        self.con.execute("CREATE OR REPLACE TABLE side AS SELECT * FROM _side_arrow")
        self.con.unregister("_side_arrow")
        self.side_columns = [c for c in table.column_names if c != "query_id"]

    def close(self) -> None:
        self.con.close()


def _bad(con: duckdb.DuckDBPyConnection, what: str, sql: str, params: list | None = None) -> None:
    count = con.execute(sql, params or []).fetchall()[0][0]
    if count:
        raise Fallback(f"{count} {what}")


def _memory_limit() -> str:
    value = os.environ.get("EVALCORE_ENGINE_MEMORY", "2GB")
    if not re.fullmatch(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", value.strip(), re.IGNORECASE):
        raise UsageError(f"EVALCORE_ENGINE_MEMORY={value!r}: expected a size such as 2GB")
    return value.strip()


def _connect() -> duckdb.DuckDBPyConnection:
    """A private in-memory database; what exceeds the memory limit spills to a temporary
    folder of its own (DuckDB's default would be `.tmp` in the user's working directory),
    which DuckDB creates when it first spills and which goes with the connection."""
    limit = _memory_limit()
    spill = os.path.join(tempfile.gettempdir(), f"evalcore-engine-{os.getpid()}-{secrets.token_hex(4)}")
    con = duckdb.connect(":memory:", config={
        "preserve_insertion_order": True, "memory_limit": limit, "temp_directory": spill})
    weakref.finalize(con, shutil.rmtree, spill, True)
    for macro in _MACROS:
        con.execute(macro)
    return con
