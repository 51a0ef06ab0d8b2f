"""A busy store in the dashboard: short waits, a notice, and a rerun until the store is free.

DuckDB lets one process write at a time (SPEC §5). The CLI waits up to
TERMGATE_STORE_TIMEOUT seconds (30) for the lock; a page that waited as long would look
frozen, so the dashboard's own reads wait TERMGATE_DASHBOARD_STORE_TIMEOUT seconds (2),
then say "store busy" and rerun by themselves every RETRY_AFTER seconds until the store is
free. Writes the user asked for (a sign-off) and the child processes keep the CLI's wait.
"""

from __future__ import annotations

import os
import time

import streamlit as st

from termgate.environment import setting
from termgate.errors import StoreBusyError

from .ui import literal

__all__ = ["short_waits", "cli_wait", "patiently", "notice", "RETRY_AFTER"]

RETRY_AFTER = 2.0
_cli_wait = setting("STORE_TIMEOUT", "30")


def short_waits() -> None:
    """Make this process's store waits short (termgate.store reads the variable at each call);
    remember the CLI's wait for writes and children."""
    global _cli_wait
    wait = setting("DASHBOARD_STORE_TIMEOUT", "2")
    current = setting("STORE_TIMEOUT")
    if current is not None and current != wait:
        _cli_wait = current
    os.environ["TERMGATE_STORE_TIMEOUT"] = wait


def cli_wait() -> str:
    """Seconds a child `termgate` process waits for the store (the CLI's setting, default 30)."""
    return _cli_wait


def patiently(fn, *args, **kwargs):
    """fn(*args, **kwargs), retried while the store is busy for as long as the CLI would wait,
    so a decision is not lost to a short lock; then StoreBusyError as usual."""
    deadline = time.monotonic() + float(_cli_wait)
    while True:
        try:
            return fn(*args, **kwargs)
        except StoreBusyError:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.25)


def notice(slot, exc: StoreBusyError) -> None:
    """Say so (as text), wait a moment and rerun the page: it recovers without a reload."""
    with slot.container():
        st.warning("Store busy: another process (an evaluation being recorded?) holds the store. "
                   f"This page retries by itself every {RETRY_AFTER:g} s.", icon=":material/hourglass_top:")
        st.caption(literal(str(exc)))
    time.sleep(RETRY_AFTER)
    st.rerun()
