"""`termgate verdict`: a reviewer's verdict on one generated term, recorded in the audit chain
(issue 19 item 1); `--list` shows the standing verdicts, `--sample` unflagged false
positives to give verdicts on."""

from __future__ import annotations

import click

from ..governance import signoff as so
from .. import store
from ..governance import verdicts as vd
from ..config import default_db_path
from ..text import terminal_safe
from .common import EXIT_REFUSED, echo, fail, format_table, run_cli, store_option
from .signoff import read_password, refuse_sso_account, signed_in

__all__ = ["verdict_command"]


@click.command("verdict")
@click.argument("target", nargs=-1, metavar="RUN QUERY TERM")
@click.option("--synonym", is_flag=True, help="A correct synonym missing from the golden set.")
@click.option("--related", is_flag=True, help="Not drift, but not a synonym either.")
@click.option("--drift", is_flag=True, help="Confirmed drift.")
@click.option("--forbid", is_flag=True, help="Forbidden from now on (with any label).")
@click.option("--reviewer", help="Your account name (engineer, approver or admin).")
@click.option("--comment", help="Why (required to record a verdict).")
@click.option("--list", "listing", is_flag=True,
              help="List the standing verdicts (the latest per reviewer and term) of the runs given, or of every run.")
@click.option("--domain", help="With --list: only verdicts on queries of this domain.")
@click.option("--sample", type=click.IntRange(min=0), metavar="N",
              help="Print a reproducible random sample of N false positives of RUN the drift judge did not flag.")
@click.option("--seed", type=int, default=0, show_default=True, help="With --sample: the sample's seed.")
@store_option
def verdict_command(target, synonym, related, drift, forbid, reviewer, comment, listing, domain, sample, seed, db):
    """Record a verdict on a term RUN generated for QUERY: --synonym, --related or --drift
    (exactly one), and --forbid with any of them. Authenticated like `signoff`: the
    password from TERMGATE_PASSWORD or a prompt; accounts that sign in only through the
    identity provider are refused (exit 4), as are viewers. Each verdict is one record in
    the audit chain; a reviewer's later verdict on the same term replaces theirs in the
    listing and the agreement figures, and the earlier one stays in the log.

    Exit codes: 0 recorded, 2 bad input (unknown run, query or a term the run did not
    generate for it), 4 refused (wrong password, role, single sign-on account, broken
    audit chain) — nothing recorded.

    Example: TERMGATE_PASSWORD=... termgate verdict RUN med-001 "cardiac arrest" --drift --forbid
    --reviewer alice --comment "not a heart attack"

    Example: termgate verdict --list RUN

    Example: termgate verdict RUN --sample 20 --seed 1
    """
    db = db or default_db_path()
    if listing:
        return _list(db, list(target) or None, domain)
    if sample is not None:
        if len(target) != 1:
            raise click.UsageError("--sample takes one RUN")
        return _sample(db, target[0], sample, seed)
    if len(target) != 3:
        raise click.UsageError("give RUN QUERY TERM (or --list, or RUN --sample N)")
    labels = [name for name, given in (("synonym", synonym), ("related", related), ("drift", drift)) if given]
    if len(labels) != 1:
        raise click.UsageError("choose exactly one label: --synonym, --related or --drift (--forbid goes with any)")
    label = labels[0]
    if not reviewer:
        raise click.UsageError("--reviewer NAME is required to record a verdict")
    if comment is None or not comment.strip():
        raise click.UsageError("--comment TEXT is required to record a verdict")
    run_id, query_id, term = target
    checked = run_cli(vd.check_target, db, run_id, query_id, term)  # a typo is caught before the password
    run_cli(refuse_sso_account, db, reviewer)  # single sign-on accounts: refused before a password is asked
    password = read_password(f"Password for {terminal_safe(reviewer)}")
    delay = run_cli(so.signin_delay, db, reviewer)
    if delay > 0:
        echo(f"waiting {delay:.0f} s after failed sign-ins for {terminal_safe(reviewer)}", err=True)
    record = run_cli(_record, db, reviewer, password, run_id, query_id, checked.term, label, forbid, comment)
    extra = " (forbid)" if forbid else ""
    echo(f"recorded verdict {label}{extra} on {terminal_safe(repr(checked.term))} ({terminal_safe(query_id)}; the judge "
         f"said {checked.judge_verdict}) by {record['actor']} (audit record {record['seq']}, "
         f"content {record['content_hash'][:12]})")
    echo(f"audit head: {record['seq']}:{record['record_hash']}")


def _record(db, reviewer, password, run_id, query_id, term, label, forbid, comment) -> dict:
    try:
        account = signed_in(db, reviewer, password)
        return vd.record_verdict(db, account, run_id, query_id, term, label, forbid, comment)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


def _list(db, run_ids, domain) -> None:
    if run_ids:
        for rid in run_ids:
            run_cli(store.get_run, db, rid)  # an unknown RUN is exit 2
    rows = run_cli(vd.list_verdicts, db, run_ids, None, domain)
    echo(format_table(["seq", "time", "reviewer", "run", "query", "term", "label", "forbid", "judge", "comment"],
                      [(v.seq, v.created_at, v.reviewer, v.run_id, v.query_id, v.term, v.label, v.forbid,
                        v.judge_verdict, v.comment) for v in rows], max_width=40))
    echo(f"{len(rows)} standing verdict{'s' if len(rows) != 1 else ''}")


def _sample(db, run_id, n, seed) -> None:
    rows = run_cli(vd.unflagged_sample, db, run_id, n, seed)
    echo(format_table(["query", "term"], rows, max_width=60))
    echo(f"{len(rows)} unflagged false positive{'s' if len(rows) != 1 else ''} of run {terminal_safe(run_id)} "
         f"(seed {seed}); record a verdict on each with `termgate verdict {terminal_safe(run_id)} QUERY TERM ...`")
