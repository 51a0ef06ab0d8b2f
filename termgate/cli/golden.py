"""Golden-set revisions from the command line: propose from verdicts, approve, list, show
(issue 19 item 2; docs/golden.md)."""

from __future__ import annotations

import getpass
import os
import sys
import tempfile
from pathlib import Path

import click

from ..governance import golden_revisions as gr
from ..governance import signoff as so
from .. import store
from ..config import default_db_path
from ..io import default_golden_name
from ..text import json_escaped, terminal_safe, visible_controls
from .common import EXIT_REFUSED, echo, fail, format_table, run_cli, store_option
from .signoff import read_password, refuse_sso_account, signed_in

__all__ = ["golden_group"]


@click.group("golden")
def golden_group() -> None:
    """Golden-set revisions under sign-off: reviewers' verdicts become the next revision,
    an approver scoped to its domains (not its proposer) approves it.

    Example: termgate golden propose golden.jsonl --from-verdicts RUN --out golden-v2.jsonl
    """


def _diff_path(out: str) -> str:
    return out + ".diff"


def _free(path: str) -> None:
    """--out and its .diff must not exist (never replaced: not the input, not a file kept)."""
    if os.path.lexists(path):
        fail([f"error: {path} exists: `golden propose` never replaces a file; choose another --out"])
    if not Path(path).parent.is_dir():
        fail([f"error: {path}: no such folder"])


def _staged(path: str, data: bytes) -> str:
    """`data` in a temporary file beside `path`, flushed to disk."""
    fd, tmp = tempfile.mkstemp(dir=str(Path(path).parent), prefix=f".{Path(path).name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        os.unlink(tmp)
        raise
    return tmp


def _place(tmp: str, path: str) -> None:
    """Move a staged file into place without ever replacing one (a hard link fails on an
    existing name; a file system without links gets a rename after a last check)."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        fail([f"error: {path} appeared meanwhile: nothing written"])
    except OSError:
        if os.path.lexists(path):
            fail([f"error: {path} appeared meanwhile: nothing written"])
        os.rename(tmp, path)
        return
    os.unlink(tmp)


def _write_and_record(out: str, proposal, db: str, name: str, given, account):
    """The new revision staged and read as evaluate will read it, its diff from the approved
    base staged beside it, both placed, then the proposal recorded; anything failing removes
    what this command placed, so nothing is left half-written. Returns (record, prepared)."""
    staged, placed = [], []
    try:
        staged.append((_staged(out, proposal.new_bytes), out))
        loaded = run_cli(gr.load_revision, staged[0][0])  # the revision as evaluate will read it
        new = gr.RevisionFile(out, loaded.text, loaded.revision, loaded.domains)
        prepared = run_cli(gr.prepare, db, name, given, new, proposal)
        staged.append((_staged(_diff_path(out), prepared.diff.encode("utf-8")), _diff_path(out)))
        for tmp, path in staged:
            _place(tmp, path)
            placed.append(path)
        return run_cli(_record, db, name, given, new, proposal, account, prepared), prepared
    except BaseException:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
        for path in placed:
            os.unlink(path)
        raise


def _record(db, name, over, new, proposal, account, prepared) -> dict:
    try:
        return gr.record_proposal(db, name, over, new, proposal, account, prepared)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


def _refuse_broken_chain(db) -> None:
    """Nothing is appended to a broken chain (exit 4, as `golden approve` and `signoff` refuse)."""
    report = run_cli(so.verify_chain, db, None, None)
    if not report.ok:
        fail([f"refused: the audit chain is broken, nothing can be recorded on it: {terminal_safe(report.message)}"],
             EXIT_REFUSED)


def _sign_in(db, name: str):
    """The proposer's account, signed in as `signoff` signs in (exit 4 when refused)."""
    run_cli(refuse_sso_account, db, name)  # single sign-on accounts: refused before a password is asked
    password = read_password(f"Password for {terminal_safe(name)}")
    delay = run_cli(so.signin_delay, db, name)
    if delay > 0:
        echo(f"waiting {delay:.0f} s after failed sign-ins for {terminal_safe(name)}", err=True)
    return run_cli(_authenticate, db, name, password)


def _authenticate(db, name, password):
    try:
        return signed_in(db, name, password)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


@golden_group.command("propose")
@click.argument("golden", type=click.Path(dir_okay=False))
@click.argument("runs", nargs=-1, metavar="[RUN]...")
@click.option("--from-verdicts", is_flag=True,
              help="Apply the reviewers' term verdicts (on the RUNs given, else on every run of the golden set).")
@click.option("--min-weight", type=click.FloatRange(0, 1), default=gr.DEFAULT_MIN_WEIGHT, show_default=True,
              help="min_weight of each expected term a synonym verdict adds.")
@click.option("--out", type=click.Path(dir_okay=False), help="Where the next revision goes (never an existing "
              "file); its diff goes beside it as OUT.diff.")
@click.option("--golden-name", help="The golden set's name [default: the GOLDEN path from the git repository's "
              "root, else from the working folder, as evaluate names it].")
@click.option("--proposer", help="Your account name [default: the OS user]. It signs in as for `signoff` (the "
              "password from TERMGATE_PASSWORD or a prompt), is recorded as the proposer, and may not approve "
              "the revision.")
@store_option
def propose_command(golden, runs, from_verdicts, min_weight, out, golden_name, proposer, db):
    """Write the next revision of a golden set from verdicts, print its diff from the set's
    latest approved revision, and record the proposal in the audit chain. Without
    --from-verdicts, the file itself is proposed as it is (nothing is written).

    A synonym verdict adds the term as expected; a --forbid verdict adds it to
    forbidden_terms and removes it from the expected terms; a synonym verdict on a forbidden
    term removes it from forbidden_terms. Untouched lines stay byte for byte.

    The diff is always from the latest approved revision the store holds (the whole file
    when none is approved yet): a GOLDEN that is not that revision is named as not approved,
    and its own changes are in the diff too.

    Exit codes: 0 recorded (or nothing to propose), 2 bad input or an --out that exists, 4
    refused (wrong password, a viewer or disabled account, one that signs in only through
    the identity provider, a broken audit chain) — nothing written or recorded.

    Example: TERMGATE_PASSWORD=... termgate golden propose golden.jsonl --from-verdicts 20261201-101500-1a2b3c
    --out golden-v2.jsonl --golden-name medical --proposer carol
    """
    db = db or default_db_path()
    name = default_golden_name(golden) if golden_name is None else golden_name
    proposer = proposer if proposer is not None else getpass.getuser()
    if runs and not from_verdicts:
        raise click.UsageError("RUN ids go with --from-verdicts")
    if from_verdicts and not out:
        raise click.UsageError("--from-verdicts needs --out NEW.jsonl (the next revision is written there)")
    if not from_verdicts and out:
        raise click.UsageError("--out goes with --from-verdicts (without it the file itself is proposed)")
    if out:
        _free(out)
        _free(_diff_path(out))
    given = run_cli(gr.load_revision, golden)
    _refuse_broken_chain(db)
    if not from_verdicts:
        account = _sign_in(db, proposer)
        prepared = run_cli(gr.prepare, db, name, None, given, None)
        record = run_cli(_record, db, name, None, given, None, account, prepared)
        echo(visible_controls(prepared.diff.split("\n\n", 1)[0]))  # the base; the whole diff: golden show
        _said(record, name)
        echo(f"its diff: termgate golden show {terminal_safe(name)} {record['content_hash'][:12]}")
        return
    verdicts = run_cli(gr.verdicts_for, db, runs, name)
    proposal = run_cli(gr.propose, Path(golden).read_bytes(), verdicts, min_weight,
                       old_label=str(golden), new_label=str(out))
    for line in proposal.skipped:
        echo(f"note: {line}", err=True)
    if not verdicts:
        where = "those runs" if runs else f"runs of golden set {name!r} (give --golden-name as evaluate had it, or RUNs)"
        echo(terminal_safe(f"nothing to propose: no verdicts on {where}; nothing written"))
        return
    if not proposal.changes:
        echo(f"nothing to propose: {len(verdicts)} verdicts add nothing to {terminal_safe(name)}; nothing written")
        return
    account = _sign_in(db, proposer)
    record, prepared = _write_and_record(out, proposal, db, name, given, account)
    echo(visible_controls(prepared.diff.rstrip("\n")))  # a control or BiDi mark in a term shown as \uXXXX, not dropped
    echo(f"wrote {terminal_safe(out)} and {terminal_safe(_diff_path(out))}")
    _said(record, name)


def _said(record: dict, name: str) -> None:
    revision = record["content_hash"]
    echo(f"proposed revision {revision[:12]} of {terminal_safe(name)} by {record['actor']} "
         f"(audit record {record['seq']}); an approver who did not propose it approves it with:")
    echo(f"  termgate golden approve {terminal_safe(name)} {revision[:12]} --reviewer NAME --comment TEXT")


@golden_group.command("approve")
@click.argument("name")
@click.argument("revision")
@click.option("--reviewer", required=True, help="Your account name (an approver or admin covering the set's domains).")
@click.option("--comment", required=True, help="Why (required).")
@store_option
def approve_command(name, revision, reviewer, comment, db):
    """Approve a proposed revision (its golden hash, or at least its first 8 hex digits).

    Exit codes: 0 recorded, 2 unknown golden set or revision, 4 refused (wrong password,
    role, domain scope, a revision naming no domain, the proposer, a broken chain, an
    account that signs in only through the identity provider) — nothing recorded. The
    password comes from TERMGATE_PASSWORD or a prompt.

    Example: TERMGATE_PASSWORD=... termgate golden approve medical 3f5a9c01 --reviewer alice --comment "checked"
    """
    db = db or default_db_path()
    found = run_cli(gr.find_revision, db, name, revision)
    run_cli(refuse_sso_account, db, reviewer)  # single sign-on accounts: refused before a password is asked
    password = read_password(f"Password for {terminal_safe(reviewer)}")
    delay = run_cli(so.signin_delay, db, reviewer)
    if delay > 0:
        echo(f"waiting {delay:.0f} s after failed sign-ins for {terminal_safe(reviewer)}", err=True)
    record = run_cli(_approve, db, name, found.revision, reviewer, password, comment)
    state = run_cli(gr.revision_state, db, name, found.revision)
    echo(f"recorded approval by {record['actor']} of revision {found.revision[:12]} of {terminal_safe(name)} "
         f"(audit record {record['seq']})")
    echo(f"revision {found.revision[:12]}: {'approved by ' + ', '.join(state['approved_by']) if state['approved'] else 'awaiting approvals'}")


def _approve(db, name, revision, reviewer, password, comment) -> dict:
    try:
        account = signed_in(db, reviewer, password)
        return gr.approve(db, name, revision, account, comment)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


def _approvers(rev: gr.Revision) -> str:
    return ", ".join(a.approver for a in rev.approvals) or "-"


@golden_group.command("list")
@click.argument("name", required=False)
@store_option
def list_command(name, db):
    """List proposed revisions (of one golden set, or all): who proposed and who approved,
    the approved base each was diffed from, and the unapproved file it was made over, if any.

    Example: termgate golden list medical
    """
    revisions = run_cli(gr.list_revisions, db or default_db_path(), name)
    echo(format_table(["golden set", "revision", "base (approved)", "over (unapproved)", "proposer", "proposed",
                       "changes", "approved", "approvers"],
                      [(r.name, r.revision[:12], (r.base_revision or "-")[:12], (r.proposed_over or "-")[:12],
                        r.proposer, r.proposed_at, len(r.changes), r.approved, _approvers(r)) for r in revisions]))


@golden_group.command("show")
@click.argument("name")
@click.argument("revision")
@click.option("--content", is_flag=True, help="Print the revision's stored file instead: byte for byte when redirected "
              "(golden show NAME REV --content > file.jsonl), on a terminal with control characters and BiDi marks "
              "written as JSON \\u escapes (the same values).")
@store_option
def show_command(name, revision, content, db):
    """Show one revision: proposer, approved base, approvals and the diff from that base
    (or the file, --content).

    Example: termgate golden show medical 3f5a9c01
    """
    db = db or default_db_path()
    rev = run_cli(gr.find_revision, db, name, revision)
    if content:
        text = run_cli(store.golden_content, db, rev.revision)
        if text is None:
            fail([f"error: revision {rev.revision[:12]}'s file is not in the store"])
        if sys.stdout is None:  # started with no standard output (`>&-`): nothing to print to
            return
        if sys.stdout.isatty():  # the same JSON values, with nothing a terminal would act on
            click.echo(json_escaped(text), nl=False)
        else:  # redirected: the stored file exactly, byte for byte (its revision hash holds)
            sys.stdout.flush()
            sys.stdout.buffer.write(text.encode("utf-8"))
            sys.stdout.buffer.flush()
        return
    echo(f"golden set: {terminal_safe(rev.name)}")
    echo(f"revision:   {rev.revision}")
    base = f"{rev.base_revision} (approved)" if rev.base_revision else "- (first revision: the whole file is new)"
    echo(f"base:       {base}")
    if rev.proposed_over:
        echo(f"over:       {rev.proposed_over} (not approved; its changes from the base are in the diff)")
    echo(f"domains:    {', '.join(rev.domains) or '-'}")
    echo(f"proposed:   {rev.proposed_at} by {', '.join(rev.proposers)} (audit record {rev.seq})")
    echo(f"status:     {'approved' if rev.approved else 'awaiting approval'}")
    for a in rev.approvals:
        echo(f"approval:   {a.approver} at {a.approved_at} (audit record {a.seq}): {terminal_safe(a.comment)}")
    if rev.diff:
        echo("")
        echo(visible_controls(rev.diff.rstrip("\n")))
