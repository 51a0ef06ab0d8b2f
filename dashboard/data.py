"""The dashboard's only data access: cached calls into evalcore.store (no SQL here).

Caches expire within 5 s so runs recorded by the CLI appear (SPEC §5); every call opens
and closes its own DuckDB connection inside evalcore.store. The store path is read at
call time, so tests and users can point the dashboard anywhere with EVALCORE_DB.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import streamlit as st

from evalcore import store
from evalcore.config import default_db_path, load_settings

TTL = 5


def db_path() -> str:
    return os.path.abspath(default_db_path())


def store_exists() -> bool:
    return Path(db_path()).exists()


@st.cache_data(ttl=TTL, show_spinner=False)
def _read(name: str, db: str, *args):
    """Every cached read: evalcore.store.<name>(db, *args), cached per name, store and arguments."""
    return getattr(store, name)(db, *args)


def cached(name: str, *args):
    """evalcore.store.<name> on the current store, through the 5 s cache."""
    return _read(name, db_path(), *args)


def runs() -> pd.DataFrame:
    """Every run, newest first; empty when there is no store yet."""
    if not store_exists():
        return pd.DataFrame(columns=["run_id", "name", "prompt_version", "gate_decision", "golden_hash"])
    return cached("runs_overview")


def trend(golden_hash: str) -> pd.DataFrame:
    return cached("metric_trend", golden_hash)


def headline(run_id: str, baseline_id: str) -> dict:
    return cached("compare_headline", run_id, baseline_id)


def compare_page(run_id: str, baseline_id: str, flt: store.CompareFilter, offset: int, limit: int):
    return cached("compare_page", run_id, baseline_id, flt, offset, limit)


def points(run_id: str, baseline_id: str):
    return cached("compare_points", run_id, baseline_id)


def domains(run_id: str) -> list[str]:
    return cached("compare_domains", run_id)


def history(query_id: str) -> pd.DataFrame:
    return cached("query_history", query_id)


def query_ids(text: str = "") -> pd.DataFrame:
    if not store_exists():
        return pd.DataFrame(columns=["query_id", "query", "runs"])
    return cached("find_query_ids", text)


def flagged(run_ids: list[str]) -> pd.DataFrame:
    return cached("flagged_items", list(run_ids))


def dashboard_url() -> str:
    return load_settings().dashboard_url


def clear() -> None:
    st.cache_data.clear()


# ---------------------------------------------------------------- sign-off (never cached: decisions must be current)


def signoff_runs():
    """Runs awaiting a decision: gate review, and every run of a high-risk domain."""
    runs_df = runs()
    if runs_df.empty:
        return runs_df
    high_risk = runs_df["high_risk_domains"].map(lambda d: len(d) > 0)
    return runs_df[(runs_df["gate_decision"] == "review") | high_risk]


def run_row(run_id: str) -> dict:
    return store.get_run(db_path(), run_id)


def release_state(run_id: str):
    from evalcore.signoff import release_state as state
    return state(db_path(), run_id)


def flagged_for_signoff(run_id: str):
    from evalcore.signoff import flagged_items
    return flagged_items(db_path(), run_id)


def chain_report():
    from evalcore.signoff import verify_chain
    return verify_chain(db_path())


def decisions_on_content(content_hash: str) -> list[dict]:
    """Every decision on this content, whichever run of it was signed."""
    return store.decisions_for(db_path(), content_hash)


@st.cache_data(ttl=TTL, show_spinner=False)
def _release_states(db: str, run_ids: tuple[str, ...]) -> dict[str, str]:
    from evalcore.signoff import release_state as state
    return {rid: state(db, rid).status for rid in run_ids}


def release_states(run_ids) -> dict[str, str]:
    """run_id -> releasable / not releasable / awaiting sign-off (cached 5 s)."""
    return _release_states(db_path(), tuple(run_ids))


@st.cache_data(ttl=TTL, show_spinner=False)
def _pair_statistics(db: str, run_id: str, baseline_id: str) -> dict:
    import numpy as np

    from evalcore.stats import describe_delta, holm, mde
    deltas = store.paired_metrics(db, run_id, baseline_id)
    out = {m: describe_delta(deltas[f"d_{m}"].to_numpy(dtype=float)).as_dict() for m in ("f1", "precision", "recall")}
    domains = {d: describe_delta(g["d_f1"].to_numpy(dtype=float)).as_dict()
               for d, g in deltas.dropna(subset=["domain"]).groupby("domain")}
    adjusted = holm({d: v["p_value"] if v["p_value"] is not None else float("nan") for d, v in domains.items()})
    out["by_domain"] = {d: dict(v, p_value_holm=adjusted[d]) for d, v in domains.items()}
    value = mde(deltas["d_f1"].to_numpy(dtype=float)) if len(deltas) else float("nan")
    out["mde_f1"] = None if np.isnan(value) else value
    return out


def pair_statistics(run_id: str, baseline_id: str) -> dict:
    """Paired bootstrap intervals and sign-flip p-values for any pair of runs (cached)."""
    return _pair_statistics(db_path(), run_id, baseline_id)
