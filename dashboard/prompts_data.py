"""Cached data access for the Prompts page: calls into evalcore.store.prompts (no SQL here).

Like dashboard.data: caches expire within 5 s so evaluations recorded by the CLI appear,
and every call opens and closes its own DuckDB connection inside evalcore.store.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard.data import TTL, db_path, store_exists
from evalcore.store.prompts import prompt_eval_datasets, prompt_eval_matrix, prompt_eval_scores, prompt_eval_versions

__all__ = ["datasets", "versions", "scores", "matrix"]


@st.cache_data(ttl=TTL, show_spinner=False)
def _datasets(db: str) -> pd.DataFrame:
    return prompt_eval_datasets(db)


def datasets() -> pd.DataFrame:
    """Datasets with stored prompt evaluations, newest first; empty when there is no store yet."""
    if not store_exists():
        return pd.DataFrame(columns=["dataset_hash", "dataset_path", "runs", "versions", "last_run"])
    return _datasets(db_path())


@st.cache_data(ttl=TTL, show_spinner=False)
def _versions(db: str, dataset_hash: str) -> pd.DataFrame:
    return prompt_eval_versions(db, dataset_hash)


def versions(dataset_hash: str) -> pd.DataFrame:
    """One row per prompt version (its newest run), oldest first."""
    return _versions(db_path(), dataset_hash)


@st.cache_data(ttl=TTL, show_spinner=False)
def _scores(db: str, dataset_hash: str) -> pd.DataFrame:
    return prompt_eval_scores(db, dataset_hash)


def scores(dataset_hash: str) -> pd.DataFrame:
    """One row per (version, case): score, passed, error."""
    return _scores(db_path(), dataset_hash)


@st.cache_data(ttl=TTL, show_spinner=False)
def _matrix(db: str, dataset_hash: str) -> pd.DataFrame:
    return prompt_eval_matrix(db, dataset_hash)


def matrix(dataset_hash: str) -> pd.DataFrame:
    """Scores, case_index x prompt version; NaN where a case errored."""
    return _matrix(db_path(), dataset_hash)
