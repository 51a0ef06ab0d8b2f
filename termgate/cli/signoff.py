"""Sign-off from a terminal or CI: accounts, decisions, the audit chain (SPEC §4, §6)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..governance import signoff as so
from .. import store
from ..config import default_db_path
from ..environment import setting
from ..errors import ChainBroken
from ..store import check_store_path
from ..text import counted
from ..store.postgres import is_postgres, schema_version_pg, shown
from ..report.record import render_record_html
from ..text import terminal_safe
from .common import EXIT_REFUSED, echo, expect_head_option, fail, format_table, run_cli, say_trust, store_option

__all__ = ["users_group", "signoff_command", "audit_group"]


def read_password(prompt: str, confirm: bool = False) -> str:
    """TERMGATE_PASSWORD when set (no terminal needed), else a hidden prompt."""
    value = setting("PASSWORD")
    if value is not None:
        return value
    if not sys.stdin.isatty():
        fail(["error: no password: set TERMGATE_PASSWORD or run in a terminal"])
    return click.prompt(prompt, hide_input=True, confirmation_prompt=confirm)


@click.group("users")
def users_group() -> None:
    """Reviewer accounts: viewer, engineer, approver or admin, optionally scoped to domains.

    Whoever can write the store administers accounts; every change is recorded in the audit
    chain, and `audit verify` checks the account table against it. A broken chain refuses
    every change (exit 4, nothing recorded). Names and aliases are compared
    case-insensitively and may hold only a-z 0-9 . _ @ + -.

    Example: TERMGATE_PASSWORD=... termgate users add alice --role approver --domains medical
    """


def _account_change(fn, *args):
    """fn(db, ...) changing an account; a broken audit chain refuses it (exit 4, SPEC §4):
    nothing is recorded on it."""
    try:
        return fn(*args)
    except ChainBroken as exc:
        fail([f"refused: {exc}; nothing is recorded on a broken chain: the account was not changed"], EXIT_REFUSED)


def _has_email(account) -> bool:
    return any("@" in n for n in (account.name, *account.aliases))


@users_group.command("add")
@click.argument("name")
@click.option("--role", type=click.Choice(so.ROLES), required=True, help="What the account may do.")
@click.option("--domains", default="", help="Comma-separated domains an approver may approve (default: all).")
@click.option("--alias", "aliases", multiple=True,
              help="Another name of this person (a Git login, an email); repeatable. Four-eyes checks a run's "
                   "--author against the name and every alias.")
@click.option("--sso", is_flag=True,
              help="Sign in only through the identity provider (the dashboard's single sign-on), under an email "
                   "that is the name or an alias; no password, and `termgate signoff` refuses the account.")
@store_option
def users_add(name, role, domains, aliases, sso, db):
    """Create an account; the password comes from TERMGATE_PASSWORD or a prompt (none with --sso).

    Example: TERMGATE_PASSWORD=s3cret-pass termgate users add bob --role approver --domains legal,medical
    --alias bob-gh --alias bob@example.com

    Example: termgate users add carol --role approver --sso --alias carol@example.com
    """
    password = None if sso else read_password("Password", confirm=True)
    account = run_cli(_account_change, so.add_user, db or default_db_path(), name, role, password, domains, aliases,
                      sso)
    echo(f"added {account.name} ({account.role}{'; ' + ', '.join(account.domains) if account.domains else ''}"
         f"{'; aliases ' + ', '.join(account.aliases) if account.aliases else ''}{'; single sign-on' if sso else ''})")
    if sso and not _has_email(account):
        echo(f"note: {account.name} has no email among its name and aliases, so single sign-on cannot find it yet: "
             f"`termgate users alias {account.name} --add EMAIL`", err=True)


@users_group.command("alias")
@click.argument("name")
@click.option("--add", "added", multiple=True, help="An alias to add (repeatable).")
@click.option("--remove", "removed", multiple=True, help="An alias to remove (repeatable).")
@store_option
def users_alias(name, added, removed, db):
    """Add or remove an account's aliases (Git login, email): a run authored under any of
    them cannot be approved by this account (four-eyes).

    Example: termgate users alias carol --add carol-s --add carol@example.com
    """
    if not added and not removed:
        raise click.UsageError("give --add or --remove")
    account = run_cli(_account_change, so.set_aliases, db or default_db_path(), name, added, removed)
    echo(f"{account.name}: aliases {', '.join(account.aliases) or '(none)'}")


@users_group.command("passwd")
@click.argument("name")
@store_option
def users_passwd(name, db):
    """Set an account's password (from TERMGATE_PASSWORD or a prompt); recorded in the chain.

    Example: termgate users passwd carol
    """
    password = read_password("New password", confirm=True)
    run_cli(_account_change, so.set_password, db or default_db_path(), name, password)
    echo(f"password changed for {terminal_safe(name)}")


@users_group.command("list")
@store_option
def users_list(db):
    """List accounts; `sign-in` is `sso` for an account that signs in only through the identity
    provider, `password` for a local one (an `oidc+ISSUER+SUBJECT` alias is a bound identity).

    Example: termgate users list
    """
    rows = run_cli(store.list_users, db or default_db_path())
    echo(format_table(["name", "role", "domains", "aliases", "sign-in", "disabled", "created"],
                      [(r["name"], r["role"], list(r["domains"] or []) or "all", list(r["aliases"] or []) or "-",
                        "sso" if r["sso"] else "password", r["disabled"], r["created_at"]) for r in rows],
                      max_width=120))  # a bound identity's alias is long: keep it whole


@users_group.command("disable")
@click.argument("name")
@store_option
def users_disable(name, db):
    """Disable an account: it can no longer sign off.

    Example: termgate users disable bob
    """
    run_cli(_account_change, so.disable_user, db or default_db_path(), name)
    echo(f"disabled {terminal_safe(name)}")


@users_group.command("set-role")
@click.argument("name")
@click.option("--role", type=click.Choice(so.ROLES), required=True)
@click.option("--domains", default=None, help="Comma-separated domain scope (empty string: all domains).")
@store_option
def users_set_role(name, role, domains, db):
    """Change an account's role (and optionally its domain scope).

    Example: termgate users set-role bob --role admin --domains ""
    """
    run_cli(_account_change, so.set_role, db or default_db_path(), name, role, domains)
    echo(f"{terminal_safe(name)} is now {role}")


@click.command("signoff")
@click.argument("run_id", metavar="RUN")
@click.option("--approve", "decision", flag_value="approve", help="Approve the release of this run's content.")
@click.option("--reject", "decision", flag_value="reject", help="Reject it.")
@click.option("--reviewer", required=True, help="Your account name.")
@click.option("--comment", required=True, help="Why (required).")
@click.option("--ack-all", is_flag=True, help="Acknowledge every flagged item listed (required to approve one).")
@store_option
def signoff_command(run_id, decision, reviewer, comment, ack_all, db):
    """Approve or reject a run; the decision binds to the run's content hash.

    Exit codes: 0 now releasable, 1 not releasable (or a broken audit chain), 3 still
    awaiting approvals, 4 refused (wrong password, role, scope, author, failed run, broken
    chain, an account that signs in only through the identity provider) — nothing
    recorded, 5 incomplete (errored items). After failed sign-ins the next try waits (1 s,
    doubling up to 30 s; reset on success).

    Example: TERMGATE_PASSWORD=... termgate signoff RUN --approve --reviewer alice --comment "checked" --ack-all
    """
    if decision is None:
        raise click.UsageError("choose --approve or --reject")
    db = db or default_db_path()
    items = run_cli(so.flagged_items, db, run_id)
    if items:
        echo(f"{counted(len(items), 'flagged item')}:")
        for item in items:
            echo(f"  [{item.kind}] {terminal_safe(item.query_id)} {terminal_safe(repr(item.query))}: "
                 f"{terminal_safe(item.detail)}")
    run_cli(refuse_sso_account, db, reviewer)  # single sign-on accounts: refused before a password is asked
    password = read_password(f"Password for {terminal_safe(reviewer)}")
    delay = run_cli(so.signin_delay, db, reviewer)
    if delay > 0:
        echo(f"waiting {delay:.0f} s after failed sign-ins for {terminal_safe(reviewer)}", err=True)
    record = run_cli(_decide, db, run_id, reviewer, password, decision, comment, ack_all)
    echo(f"recorded {decision} by {record['actor']} (audit record {record['seq']}, "
         f"content {record['content_hash'][:12]})")
    state = run_cli(so.release_state, db, run_id)
    if state.chain.ok:
        echo(f"audit head: {state.chain.head}")
    echo(f"{state.status}: {terminal_safe('; '.join(state.reasons))}")
    sys.exit(state.exit_code)


def refuse_sso_account(db, reviewer) -> None:
    try:
        so.refuse_sso(db, reviewer)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


def _decide(db, run_id, reviewer, password, decision, comment, ack_all) -> dict:
    try:
        return so.decide(db, run_id, reviewer, password, decision, comment, ack_all=ack_all, wait=True)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


@click.group("audit")
def audit_group() -> None:
    """The hash-chained audit log of sign-offs and account changes.

    Example: termgate audit verify
    """


@audit_group.command("verify")
@expect_head_option
@click.option("--db", "db", default=None, metavar="PATH|URL",
              help="The store: a DuckDB file or a PostgreSQL URL (the team store) [default: $TERMGATE_DB, else "
                   "data/termgate.duckdb].")
def audit_verify(expect_head, db):
    """Exit 0 when the chain is intact, 1 naming the first edited, removed or reordered
    record, or the first account or stored run that differs from what the chain recorded.

    Prints the head as `audit head: COUNT:HASH`; keep it (a CI log) and pass it back with
    --expect-head to catch a store rewritten or truncated whole.

    Example: termgate audit verify --db data/termgate.duckdb --expect-head 12:432576cd87c89bf0
    """
    db = db or default_db_path()
    if expect_head is not None:
        run_cli(so.parse_head, expect_head)
    if not is_postgres(db):
        run_cli(check_store_path, db)
        if not Path(db).exists():  # a mistyped --db must never read as an intact, empty chain
            fail([f"error: no store at {db}: nothing to verify (check --db or $TERMGATE_DB)"])
    elif run_cli(schema_version_pg, db)[0] is None:
        fail([f"error: --db {shown(db)}: not a termgate store: nothing to verify"])
    report = run_cli(so.verify_chain, db, expect_head)
    echo(terminal_safe(report.message))
    say_trust(report)  # the trust root, the pin, each record whose signature fails (SPEC §4)
    if report.ok:
        echo(f"audit head: {report.head}")  # the last line, as scripts read it
    sys.exit(0 if report.ok else 1)


@audit_group.command("list")
@click.option("--run", "run_id", help="Only records about this run.")
@store_option
def audit_list(run_id, db):
    """List audit records in chain order.

    Example: termgate audit list --run RUN
    """
    db = db or default_db_path()
    rows = run_cli(store.audit_records, db)
    if run_id is not None:  # decisions on identical content count for this run too
        content = run_cli(store.get_run, db, run_id)["content_hash"]
        rows = [r for r in rows if r["run_id"] == run_id or r["content_hash"] == content]
    echo(format_table(["seq", "time", "kind", "actor", "run", "decision", "comment"],
                            [(r["seq"], r["created_at"], r["kind"], r["actor"], r["run_id"], r["decision"],
                              r["comment"]) for r in rows], max_width=60))


@audit_group.command("export")
@click.argument("seq", type=int)
@click.option("--format", "fmt", type=click.Choice(["json", "html"]), default="json", show_default=True)
@store_option
def audit_export(seq, fmt, db):
    """Print one decision as JSON or as a printable HTML record carrying its hashes.

    Example: termgate audit export 3 --format html > decision-3.html
    """
    records = {r["seq"]: r for r in run_cli(store.audit_records, db or default_db_path())}
    if seq not in records:
        fail([f"error: no audit record {seq}"])
    record = records[seq]
    # ASCII JSON: every character of the record survives, and none is a terminal control
    click.echo(json.dumps(record, indent=2, ensure_ascii=True) if fmt == "json" else render_record_html(record))
