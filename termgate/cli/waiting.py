"""`gate RUN --wait`: the options, and what a pipeline's log shows while it waits for a
reviewer (the polling itself is termgate.governance.release.wait_for_release)."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import click

from ..errors import UsageError
from ..governance.release import (AWAITING, DEFAULT_INTERVAL, DEFAULT_TIMEOUT, WaitResult, parse_wait_seconds,
                                  wait_for_release)
from ..governance.signoff import ReleaseState
from ..text import terminal_safe as safe
from .common import echo, run_cli

__all__ = ["wait_options", "WaitPlan", "wait_plan", "wait_for_decision", "final_line"]

EXIT_INTERRUPTED = 130


def wait_options(fn):
    """--wait, --timeout SECONDS, --interval SECONDS (numbers checked by wait_plan, so a
    bad value is one line and exit 2, not click's usage block)."""
    fn = click.option("--interval", metavar="SECONDS", default=None,
                      help=f"With --wait: seconds between two reads of the store [default: {DEFAULT_INTERVAL:g}].")(fn)
    fn = click.option("--timeout", metavar="SECONDS", default=None,
                      help=f"With --wait: give up after this many seconds, exit 3 [default: {DEFAULT_TIMEOUT:g}].")(fn)
    return click.option("--wait", is_flag=True,
                        help="Wait until the run is releasable (exit 0) or a decision makes it not releasable "
                             "(exit 1), printing who decided; a run no sign-off can release (failed gate, errored "
                             "items, broken audit chain) returns at once with its code.")(fn)


@dataclass(frozen=True)
class WaitPlan:
    timeout: float
    interval: float


def _plan(wait: bool, timeout: str | None, interval: str | None) -> WaitPlan | None:
    if not wait:
        if timeout is not None or interval is not None:
            raise UsageError("--timeout and --interval go with --wait (e.g. gate RUN --wait --timeout 600)")
        return None
    plan = WaitPlan(parse_wait_seconds("--timeout", timeout, DEFAULT_TIMEOUT),
                    parse_wait_seconds("--interval", interval, DEFAULT_INTERVAL))
    if plan.interval > plan.timeout:
        raise UsageError(f"--interval {plan.interval:g} is longer than --timeout {plan.timeout:g}: "
                         "give an interval no longer than the timeout")
    return plan


def wait_plan(wait: bool, timeout: str | None, interval: str | None) -> WaitPlan | None:
    """The checked --wait options (None without --wait); exit 2 with one line when wrong."""
    return run_cli(_plan, wait, timeout, interval)


def _seconds(value: float) -> str:
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


class _Log:
    """What the log shows while waiting: every decision once, as it is read, and the
    awaiting line again only when it changes (a second of two approvals still missing)."""

    def __init__(self, run_id: str, plan: WaitPlan, err: bool):
        self.run_id, self.plan, self.err = run_id, plan, err
        self.seen: set = set()
        self.reasons: list[str] | None = None

    def poll(self, state: ReleaseState) -> None:
        for d in state.decisions:
            key = (d.get("seq"), d["actor"], d["created_at"])
            if key not in self.seen:
                self.seen.add(key)
                echo(decision_line(d), err=self.err)
        if state.exit_code != AWAITING or state.reasons == self.reasons:
            return
        reasons = safe("; ".join(state.reasons))
        if self.reasons is None:
            echo(f"waiting for sign-off of run {self.run_id}: {reasons} (up to {self.plan.timeout:g} s, "
                 f"reading the store every {self.plan.interval:g} s; Ctrl-C stops)", err=self.err)
        else:
            echo(f"still awaiting sign-off: {reasons}", err=self.err)
        self.reasons = list(state.reasons)

    def error(self, message: str) -> None:
        echo(f"warning: reading the store failed, trying again in {self.plan.interval:g} s: {safe(message)}",
             err=True)


def decision_line(d: dict) -> str:
    """`decision: alice approved at …Z: comment` — who decided, what, when, why."""
    did = {"approve": "approved", "reject": "rejected"}.get(d["decision"], d["decision"])
    return f"decision: {safe(d['actor'])} {safe(did)} at {safe(d['created_at'])}: {safe(d['comment'] or '')}"


def wait_for_decision(db, run_id: str, settings, plan: WaitPlan, expect_head: str | None, err: bool,
                      trust_root: str | None = None) -> WaitResult:
    """Poll until the run is decided or the timeout; Ctrl-C is exit 130 with one line (the
    caller's `finally` removes any pending output file)."""
    log = _Log(run_id, plan, err)
    try:
        result = run_cli(wait_for_release, db, run_id, settings, timeout=plan.timeout, interval=plan.interval,
                         expect_head=expect_head, trust_root=trust_root, on_poll=log.poll, on_error=log.error)
    except KeyboardInterrupt:
        echo(f"interrupted: run {run_id} is still awaiting sign-off; nothing was written", err=True)
        sys.exit(EXIT_INTERRUPTED)
    if result.polls == 1 and result.state.exit_code != AWAITING:
        echo(f"nothing to wait for: the run is {result.state.status}", err=err)
    return result


def final_line(result: WaitResult, plan: WaitPlan) -> str:
    """The last line of `gate --wait`: the state, its reasons, and how long it waited."""
    state = result.state
    reasons = safe("; ".join(state.reasons))
    if result.timed_out:
        line = f"still awaiting sign-off after {_seconds(result.waited)} (--timeout {plan.timeout:g}): {reasons}"
        if result.last_error:
            line += f"; the last read of the store failed: {safe(result.last_error)}"
        return line
    line = f"{state.status}: {reasons}"
    if result.polls > 1:
        line += f" (after waiting {_seconds(result.waited)})"
    return line
