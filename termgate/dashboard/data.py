"""The dashboard's only data access: cached calls into termgate.store and termgate.comparison
(no SQL and no rule here).

Caches expire within 5 s so runs recorded by the CLI appear (SPEC §5); every call opens
and closes its own DuckDB connection inside termgate.store. The store path is read at
call time, so tests and users can point the dashboard anywhere with TERMGATE_DB.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import pandas as pd
import streamlit as st

from termgate import comparison, store
from termgate.config import default_db_path, load_settings
from termgate.scoring.regression import regression_label

TTL = 5


def db_path() -> str:
    """The store: a DuckDB file (as an absolute path) or a PostgreSQL URL (the team store)."""
    from termgate.store.postgres import is_postgres

    value = default_db_path()
    return value if is_postgres(value) else os.path.abspath(value)


def shown_store() -> str:
    """The store as the page may show it (a URL's password blanked)."""
    from termgate.store.postgres import shown

    return shown(db_path())


def store_exists() -> bool:
    return store.exists(db_path())


@st.cache_data(ttl=TTL, show_spinner=False)
def _read(name: str, db: str, *args):
    """Every cached read: termgate.store.<name>(db, *args), cached per name, store and arguments."""
    return getattr(store, name)(db, *args)


def cached(name: str, *args):
    """termgate.store.<name> on the current store, through the 5 s cache."""
    return _read(name, db_path(), *args)


def runs() -> pd.DataFrame:
    """Every run, newest first; empty when there is no store yet."""
    if not store_exists():
        return pd.DataFrame(columns=["run_id", "name", "prompt_version", "gate_decision", "golden_hash",
                                     "golden_name"])
    return cached("runs_overview")


def trend(golden_name: str) -> pd.DataFrame:
    """Every run on one golden set (by name, every revision), oldest first."""
    return cached("metric_trend", golden_name)


@st.cache_resource(ttl=TTL, max_entries=2, show_spinner=False)
def _pair(db: str, run_id: str, baseline_id: str | None) -> comparison.PairedRuns:
    """Both runs read and paired once per 5 s; the page's filters, sorts and pages run over it.
    cache_resource hands out the object itself, not a copy (PairedRuns is immutable); two
    entries bound the memory (a pair holds both runs' scalars and drift terms; the other
    term lists are read per page)."""
    return comparison.pair_runs(db, run_id, baseline_id)


def pair(run_id: str, baseline_id: str | None) -> comparison.PairedRuns:
    """The cached pair; a baseline of None pairs the run with nothing (every query added)."""
    return _pair(db_path(), run_id, baseline_id)


def headline(run_id: str, baseline_id: str) -> dict:
    return pair(run_id, baseline_id).headline()


def compare_page(run_id: str, baseline_id: str, flt: comparison.CompareFilter, offset: int, limit: int):
    return pair(run_id, baseline_id).page(flt, offset, limit)


def points(run_id: str, baseline_id: str):
    return pair(run_id, baseline_id).points()


def pair_query(run_id: str, baseline_id: str | None, query_id: str) -> dict | None:
    """Both sides' stored values of one query (PairedRuns.query) over the cached pair, its
    term lists read in the background (open_query)."""
    terms = _finished("comparison_terms", (run_id, baseline_id), (query_id,))
    return pair(run_id, baseline_id).query(query_id, terms)


def walk(run_id: str, baseline_id: str | None, flt: comparison.CompareFilter, query_id: str) -> comparison.Walk:
    """The query's place among the rows `flt` matches, and its neighbours (PairedRuns.walk)."""
    return pair(run_id, baseline_id).walk(flt, query_id)


# ---------------------------------------------------------------- one query side by side
# What the panel shows of one query (both sides' term rows and term lists, the golden
# entries) is read in the background, each read on its own connection, while the page reads
# the pair: on the team store these are separate server queries, and one after another
# they were most of the panel's first render. Stored runs and golden files never change
# under their ids, so a read is shared by every session for two minutes; the neighbours a
# reviewer walks to next are read ahead the same way.
_READERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="termgate-read")


class _OnDemand(Future):
    """A store file's read, done where its result is first asked for, on that page's thread:
    its reads are local and short (reading ahead would only keep the page run busy), and
    DuckDB connections opened and closed on a reader thread beside the page's were seen to
    find the file's shared database half closed (`python_arrow_scan does not exist`)."""

    def __init__(self, fn, *args):
        super().__init__()
        self._call, self._lock = (fn, args), threading.Lock()

    def result(self, timeout=None):
        with self._lock:  # two sessions asking at once: one read
            if not self.done():
                fn, args = self._call
                try:
                    self.set_result(fn(*args))
                except Exception as exc:  # raised to whoever asks, as a reader thread's would be
                    self.set_exception(exc)
        return super().result(timeout)


@st.cache_resource(ttl=120, max_entries=64, show_spinner=False)
def _started(db: str, name: str, *args) -> Future:
    """termgate.store.<name>(db, *args): on the team store started on a reader thread (no
    Streamlit call there); on a store file read when first asked for (_OnDemand)."""
    from termgate.store.postgres import is_postgres

    if is_postgres(db):
        return _READERS.submit(getattr(store, name), db, *args)
    return _OnDemand(getattr(store, name), db, *args)


def _finished(name: str, *args):
    """The background read's result; a read that failed is forgotten (the next rerun tries
    again) and its error raised here, on the page's thread."""
    future = _started(db_path(), name, *args)
    try:
        return future.result()
    except BaseException:
        _started.clear()
        raise


def open_query(run_id: str, baseline_id: str | None, query_id: str | None) -> None:
    """Start reading what the side-by-side panel shows of this query (None: nothing)."""
    if query_id is None:
        return
    db, sides = db_path(), [r for r in (run_id, baseline_id) if r is not None]
    _started(db, "comparison_terms", (run_id, baseline_id), (query_id,))
    for side in sides:
        _started(db, "term_rows", side, query_id)
    hashes = runs().set_index("run_id")["golden_hash"]
    for digest in dict.fromkeys(hashes.get(side) for side in sides):
        if isinstance(digest, str):
            _started(db, "golden_entry", digest, query_id)


def query_terms(run_id: str, query_id: str) -> pd.DataFrame:
    """One query's per-term rows in a run (TP/FP/FN, weight, min_weight, drift, unjudged,
    reason); a copy, so the caller may change it."""
    return _finished("term_rows", run_id, query_id).copy()


def golden_line(golden_hash: str | None, query_id: str) -> tuple[int, str] | None:
    """A query's entry in a golden file stored with a run (store.golden_entry: its line and
    the line as given); None when the file was not stored or holds no such query."""
    return None if golden_hash is None else _finished("golden_entry", golden_hash, query_id)


# ---------------------------------------------------------------- the retrieval effect (issue 34)


@st.cache_data(ttl=TTL, show_spinner=False)
def _retrieval(db: str, run_id: str) -> dict | None:
    return store.get_run(db, run_id)["retrieval"]


def retrieval(run_id: str) -> dict | None:
    """The run's retrieval summary (store.get_run's `retrieval`: means, statistics, counts,
    attribution, labels, reference); None for a run that measured none."""
    return _retrieval(db_path(), run_id)


@st.cache_resource(ttl=TTL, max_entries=2, show_spinner=False)
def _retrieval_table(db: str, run_id: str):
    """store.retrieval_table, kept as the Arrow table itself (immutable; a copy per
    rerun would cost more than the filter), two runs at most."""
    return store.retrieval_table(db, run_id)


def retrieval_query(run_id: str, query_id: str) -> dict[str, dict]:
    """One query's retrieval rows in a run by variant (ROWS_SCHEMA's values as Python: a
    grade or title that is missing is None); empty when the query was not measured."""
    import pyarrow.compute as pc

    table = _retrieval_table(db_path(), run_id)
    return {r["variant"]: r for r in table.filter(pc.equal(table["query_id"], query_id)).to_pylist()}


def domains(run_id: str, baseline_id: str | None) -> list[str]:
    """The domain filter's choices: the domains of the pair's queries (either side)."""
    return pair(run_id, baseline_id).domains


def history(query_id: str) -> pd.DataFrame:
    """One query across every run; its regression status as regression_label reads it."""
    df = cached("query_history", query_id)
    return df.assign(regression_status=[regression_label(*v) for v in zip(
        df["regression_status"], df["f1"], df["baseline_f1"])])


def errored(run_id: str) -> pd.DataFrame:
    """A run's errored items with their whole reason (query_id, query, error)."""
    return cached("errored_queries", run_id)


def replies(query_id: str) -> pd.DataFrame:
    """The query's model replies in harness runs, newest first (prompt, raw reply, terms, error)."""
    return cached("query_replies", query_id)


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
    _pair.clear()
    _started.clear()
    _retrieval_table.clear()


# ---------------------------------------------------------------- verdicts (cleared when one is recorded)


def verdicts(run_id: str) -> list:
    """The standing verdicts on this run's terms (termgate.governance.verdicts.list_verdicts)."""
    from ..governance.verdicts import list_verdicts

    return list_verdicts(db_path(), [run_id])


@st.cache_data(ttl=600, show_spinner=False)
def _sample(db: str, run_id: str, n: int, seed: int) -> list:
    from ..governance.verdicts import unflagged_sample

    return unflagged_sample(db, run_id, n, seed)


def unflagged_sample(run_id: str, n: int, seed: int = 0) -> list[tuple[str, str]]:
    """A reproducible random sample of the run's false positives the judge did not flag
    (a stored run never changes, so it is kept ten minutes)."""
    return _sample(db_path(), run_id, n, seed)


# ---------------------------------------------------------------- sign-off (never cached: decisions must be current)


def signoff_runs():
    """Runs awaiting a decision: gate review, and every run of a high-risk domain."""
    runs_df = runs()
    if runs_df.empty:
        return runs_df
    high_risk = runs_df["high_risk_domains"].map(lambda d: len(d) > 0)
    return runs_df[(runs_df["gate_decision"] == "review") | high_risk]


def golden_entry(run_id: str, query_id: str) -> tuple[int, str] | None:
    """The query's golden entry as given, with its line, from the run's stored golden file."""
    return store.golden_entry(db_path(), store.get_run(db_path(), run_id)["golden_hash"], query_id)


def run_row(run_id: str) -> dict:
    return store.get_run(db_path(), run_id)


def release_state(run_id: str, chain):
    """The run's release state on a chain already checked this rerun (`chain_report()`).
    The run's own rows are not re-digested on every rerun (each acknowledgement click is
    one): decide_as checks them before any decision is recorded, and `gate` before any
    release."""
    from ..governance.signoff import release_state as state
    return state(db_path(), run_id, chain=chain)


def flagged_for_signoff(run_id: str):
    from ..governance.signoff import flagged_items
    return flagged_items(db_path(), run_id)


def chain_report():
    """The chain's records and the account table (each run's rows are checked where its
    release state is shown: release_state verifies that run)."""
    from ..governance.signoff import verify_chain
    return verify_chain(db_path(), runs=None)


def decisions_on_content(content_hash: str) -> list[dict]:
    """Every decision on this content, whichever run of it was signed."""
    return store.decisions_for(db_path(), content_hash)


@st.cache_data(ttl=TTL, show_spinner=False)
def _release_states(db: str, run_ids: tuple[str, ...]) -> dict[str, str]:
    """One chain check (records and accounts) for the whole list, not one per run: a list
    of large runs would otherwise recompute every run's row digest on each page view."""
    from ..governance.signoff import release_states, verify_chain

    states = release_states(db, run_ids, chain=verify_chain(db, runs=None))
    return {rid: states[rid].status for rid in run_ids}


def release_states(run_ids) -> dict[str, str]:
    """run_id -> releasable / not releasable / awaiting sign-off (cached 5 s)."""
    return _release_states(db_path(), tuple(run_ids))


@st.cache_data(ttl=TTL, show_spinner=False)
def _pair_statistics(db: str, run_id: str, baseline_id: str) -> dict:
    return _pair(db, run_id, baseline_id).statistics()


def pair_statistics(run_id: str, baseline_id: str) -> dict:
    """Paired bootstrap intervals and sign-flip p-values over the cached pair (cached)."""
    return _pair_statistics(db_path(), run_id, baseline_id)


# ---------------------------------------------------------------- golden sets and judge agreement (issue 19)
# Revisions, approvals and verdicts are audit records, read through termgate.governance.golden_revisions
# and termgate.governance.agreement (the rules live there), cached 5 s like every read here, so an
# approval or a verdict recorded from the CLI appears.


@st.cache_data(ttl=TTL, show_spinner=False)
def _golden_revisions(db: str) -> list:
    from ..governance.golden_revisions import list_revisions

    return list_revisions(db)


def golden_revisions() -> list:
    """Every proposed golden-set revision (golden_revisions.Revision, with its approvals),
    oldest proposal first; [] when there is no store yet."""
    return _golden_revisions(db_path()) if store_exists() else []


def policy():
    """The store's release policy in force, as tightened by this server's settings
    (termgate.governance.policy): what the Sign-off page counts approvals under."""
    from ..governance.policy import policy_of_store

    return policy_of_store(db_path())


def approvals_needed(domains) -> int:
    """Distinct approvers a revision with these domains needs (the store's policy)."""
    from ..governance.golden_revisions import approvals_needed as needed

    return needed(list(domains), policy())


@st.cache_data(ttl=TTL, show_spinner=False)
def _agreement(db: str):
    from ..governance.agreement import agreement_report

    return agreement_report(db, rejudge_terms=False)


def agreement():
    """Judge agreement from the standing verdicts (agreement.AgreementReport): the figures of
    each run's recorded judge and between reviewers; never re-judged, so no model loads."""
    from ..governance.agreement import AgreementReport

    return _agreement(db_path()) if store_exists() else AgreementReport()


@st.cache_data(ttl=TTL, show_spinner=False)
def _chain_problem(db: str) -> str | None:
    from ..governance.signoff import verify_chain

    chain = verify_chain(db, runs=None)
    return None if chain.ok else chain.message


def chain_problem() -> str | None:
    """Why the audit chain cannot be trusted (its first bad record), None when it is intact."""
    return _chain_problem(db_path()) if store_exists() else None


# ---------------------------------------------------------------- the dashboard's service key (issue 33)


def _keys_of(chain) -> tuple[str | None, str | None]:
    from ..governance.signatures import authority_of, holder_of_service

    if not chain.ok:  # nothing is recorded on a broken chain anyway, and the page says why
        return None, None
    authority = authority_of(chain.log)
    key = authority.key_of(holder_of_service("dashboard"))
    return authority.root, key["fingerprint"] if key else None


@st.cache_data(ttl=TTL, show_spinner=False)
def _signing_keys(db: str) -> tuple[str | None, str | None]:
    from ..governance.signoff import verify_chain

    return _keys_of(verify_chain(db, runs=None))


def signing_keys(chain=None) -> tuple[str | None, str | None]:
    """(the store's trust root, the fingerprint of the key its chain registers for the
    dashboard), each None when there is none: read from `chain` when the page verified it
    already, else cached 5 s. Public fingerprints only: the key itself is service_key's."""
    if chain is not None:
        return _keys_of(chain)
    return _signing_keys(db_path()) if store_exists() else (None, None)
