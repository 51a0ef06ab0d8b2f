"""Cached data access for the Prompts page: calls into termgate.store.prompts (no SQL here).

Like dashboard.data: caches expire within 5 s so evaluations recorded by the CLI appear,
and every call opens and closes its own DuckDB connection inside termgate.store.
"""

from __future__ import annotations

import pandas as pd

from termgate.dashboard.data import cached, store_exists

__all__ = ["datasets", "versions", "scores", "matrix"]


def datasets() -> pd.DataFrame:
    """Datasets with stored prompt evaluations, newest first; empty when there is no store yet."""
    if not store_exists():
        return pd.DataFrame(columns=["dataset_hash", "dataset_path", "runs", "versions", "last_run"])
    return cached("prompt_eval_datasets")


def versions(dataset_hash: str) -> pd.DataFrame:
    """One row per prompt version (its newest run), oldest first."""
    return cached("prompt_eval_versions", dataset_hash)


def scores(dataset_hash: str) -> pd.DataFrame:
    """One row per (version, case): score, passed, error."""
    return cached("prompt_eval_scores", dataset_hash)


def matrix(dataset_hash: str) -> pd.DataFrame:
    """Scores, case_index x prompt version; NaN where a case errored."""
    return cached("prompt_eval_matrix", dataset_hash)
