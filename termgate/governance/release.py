"""Waiting for a run to become releasable (`termgate gate RUN --wait`, issue 16 item 6).

A pipeline job that deploys a `review` run can wait for a named reviewer's decision
instead of failing and being re-run. Each poll is a whole `signoff.release_state` — the
audit chain verified, the decisions on the run's content counted — through the store API,
which connects per operation: nothing is held open between polls, so the dashboard (or
`termgate signoff`) can write the decision to a DuckDB file while we wait.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import TermgateError, InputError, UnknownRunError, UsageError
from .signoff import ReleaseState, release_state

__all__ = ["WaitResult", "wait_for_release", "pinned_release_state", "parse_wait_seconds", "AWAITING",
           "DEFAULT_TIMEOUT", "DEFAULT_INTERVAL"]

AWAITING = 3
"""The exit code of a run that awaits sign-off (SPEC §3): the only one worth waiting on."""
DEFAULT_TIMEOUT = 3600.0
DEFAULT_INTERVAL = 10.0


@dataclass
class WaitResult:
    """How a wait ended: the last state read, how long it took, whether time ran out."""

    state: ReleaseState
    """The release state of the last successful poll."""
    waited: float
    """Seconds from the first poll to the last."""
    timed_out: bool
    """True when the run still awaited sign-off at the timeout."""
    polls: int = 1
    """How many times the store was read."""
    last_error: str | None = field(default=None)
    """The message of the last poll that failed (a busy or unreachable store), when the
    wait ended after it; earlier failures were retried at the next poll."""


def parse_wait_seconds(flag: str, value: str | None, default: float) -> float:
    """A positive, finite number of seconds from `--timeout`/`--interval`, or UsageError."""
    if value is None:
        return default
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds <= 0:
        raise UsageError(f"{flag} {value!r}: give a positive number of seconds (e.g. {flag} {default:g})")
    return seconds


def _transient(exc: TermgateError) -> bool:
    """A failure worth retrying at the next poll (the store busy or briefly unreachable);
    not a run that is gone or bad input."""
    return not isinstance(exc, (UnknownRunError, InputError)) and (
        not isinstance(exc, UsageError) or "cannot connect" in str(exc))


def pinned_release_state(db, run_id: str, settings, expect_head: str | None = None,
                         trust_root: str | None = None) -> ReleaseState:
    """release_state with the store held to `trust_root` (`gate --trust-root`; without it,
    TERMGATE_TRUST_ROOT or `[trust] root`, as verify_chain reads them): a store whose trust
    root is another key's is a broken chain, exit 1 naming the pin (SPEC §4)."""
    if trust_root is None:
        return release_state(db, run_id, settings, expect_head)
    from .audit_chain import verify_chain

    return release_state(db, run_id, settings, expect_head,
                         verify_chain(db, expect_head, runs=[run_id], trust_root=trust_root))


def wait_for_release(db, run_id: str, settings, *, timeout: float, interval: float,
                     expect_head: str | None = None, trust_root: str | None = None,
                     on_poll: Callable[[ReleaseState], None] | None = None,
                     on_error: Callable[[str], None] | None = None,
                     clock: Callable[[], float] = time.monotonic,
                     sleep: Callable[[float], None] = time.sleep) -> WaitResult:
    """Poll `release_state` every `interval` seconds until the run is no longer awaiting
    sign-off (releasable, rejected, a broken chain, or a run no decision can release:
    those return after the first poll) or `timeout` seconds have passed.

    `on_poll` sees every state read, `on_error` every failed poll after the first (a failure
    on the first poll raises: the run, the store or `expect_head` is wrong). KeyboardInterrupt
    passes through to the caller."""
    start = clock()
    state = pinned_release_state(db, run_id, settings, expect_head, trust_root)
    polls, last_error = 1, None
    if on_poll:
        on_poll(state)
    while state.exit_code == AWAITING:
        waited = clock() - start
        if waited >= timeout:
            return WaitResult(state, waited, True, polls, last_error)
        sleep(min(interval, timeout - waited))
        polls += 1
        try:
            state = pinned_release_state(db, run_id, settings, expect_head, trust_root)
            last_error = None
        except TermgateError as exc:
            if not _transient(exc):
                raise
            last_error = str(exc)
            if on_error:
                on_error(last_error)
            continue
        if on_poll:
            on_poll(state)
    return WaitResult(state, clock() - start, False, polls, last_error)
