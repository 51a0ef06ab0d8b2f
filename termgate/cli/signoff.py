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
from .common import EXIT_REFUSED, echo, expect_head_option, fail, format_table, run_cli, say_trust, store_option, trust_root_option

__all__ = ["users_group", "signoff_command", "audit_group", "signed_in", "as_admin", "print_root", "read_password",
           "refuse_sso_account"]


def read_password(prompt: str, confirm: bool = False, variable: str = "PASSWORD") -> str:
    """TERMGATE_PASSWORD (or TERMGATE_<variable>) when set (no terminal needed), else a hidden prompt."""
    value = setting(variable)
    if value is not None:
        return value
    if not sys.stdin.isatty():
        fail([f"error: no password: set TERMGATE_{variable} or run in a terminal"])
    return click.prompt(prompt, hide_input=True, confirmation_prompt=confirm)


@click.group("users")
def users_group() -> None:
    """Reviewer accounts: viewer, engineer, approver or admin, optionally scoped to domains.

    On a signed store (one with a trust root: `termgate trust`) every change needs an
    admin's key (--admin NAME); on one without, whoever can write the store administers
    accounts. Every change is recorded in the audit chain, and `audit verify` checks the
    account table against it. A broken chain refuses
    every change (exit 4, nothing recorded). Names and aliases are compared
    case-insensitively and may hold only a-z 0-9 . _ @ + -.

    Example: TERMGATE_PASSWORD=... termgate users add alice --role approver --domains medical
    """


def signed_in(db, name: str, password: str):
    """Sign in (waiting out failed tries) and, on a signed store (SPEC §4), sign every record
    the rest of this command appends with the account's own key (sealed by its password,
    or TERMGATE_KEY_FILE). SignoffRefused: exit 4 for the caller to report."""
    from ..governance import trust

    account = so.authenticate(db, name, password, wait=True)
    try:
        click.get_current_context().with_resource(trust.signing_for(db, account.name, password))
    except ChainBroken as exc:
        raise so.SignoffRefused("the audit chain is broken, nothing can be recorded on it: "
                                + str(exc).removeprefix("audit chain broken: ")) from None
    return account


def as_admin(db, admin: str | None, own_password: bool = False) -> None:
    """Account changes on a signed store need an admin's key: sign in as `admin` (password
    from TERMGATE_ADMIN_PASSWORD, else — when the command reads no other password —
    TERMGATE_PASSWORD, else a prompt) and sign with it. Refused (exit 4) on a signed store
    without --admin, or when the admin is not one."""
    from ..governance import trust

    if admin is None:
        try:
            root = trust.root_of(db) if store.exists(db) else None
        except ChainBroken:
            return  # the change itself refuses a broken chain, in its words
        if root is not None:
            fail([f"refused: this store is signed (trust root {root}): an account change needs an admin's key — "
                  "give --admin NAME (password from TERMGATE_ADMIN_PASSWORD or a prompt)"], EXIT_REFUSED)
        return
    run_cli(refuse_sso_account, db, admin)
    use = "ADMIN_PASSWORD" if own_password or setting("ADMIN_PASSWORD") is not None else "PASSWORD"
    password = read_password(f"Password for admin {terminal_safe(admin)}", variable=use)
    try:
        account = signed_in(db, admin, password)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)
    if account.role != "admin":
        fail([f"refused: '{account.name}' is {account.role}, not admin: only an admin changes accounts"], EXIT_REFUSED)
    click.get_current_context().with_resource(so.acting_as(account.name))  # the records name the admin


_ADMIN_HELP = ("Your admin account, whose key signs the change (required on a signed store; password from "
               "TERMGATE_ADMIN_PASSWORD or a prompt).")


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
@click.option("--admin", default=None, help=_ADMIN_HELP)
@store_option
@click.option("--root", is_flag=True,
              help="Make this admin the store's trust root: a new key, sealed by the password, signs the store's "
                   "head; its fingerprint is printed, to pin in termgate.toml and CI (docs/signoff.md).")
def users_add(name, role, domains, aliases, sso, admin, root, db):
    """Create an account; the password comes from TERMGATE_PASSWORD or a prompt (none with --sso).

    Example: TERMGATE_PASSWORD=s3cret-pass termgate users add bob --role approver --domains legal,medical
    --alias bob-gh --alias bob@example.com

    Example: termgate users add carol --role approver --sso --alias carol@example.com
    """
    db = db or default_db_path()
    if root and (role != "admin" or sso):
        raise click.UsageError("--root makes the trust root, sealed by the admin's password: give it with --role admin "
                               "and without --sso")
    password = None if sso else read_password("Password", confirm=True)
    as_admin(db, admin, own_password=True)
    account = run_cli(_account_change, so.add_user, db, name, role, password, domains, aliases, sso)
    echo(f"added {account.name} ({account.role}{'; ' + ', '.join(account.domains) if account.domains else ''}"
         f"{'; aliases ' + ', '.join(account.aliases) if account.aliases else ''}{'; single sign-on' if sso else ''})")
    if root:
        _make_root(db, account, password)
    if sso and not _has_email(account):
        echo(f"note: {account.name} has no email among its name and aliases, so single sign-on cannot find it yet: "
             f"`termgate users alias {account.name} --add EMAIL`", err=True)


@users_group.command("alias")
@click.argument("name")
@click.option("--add", "added", multiple=True, help="An alias to add (repeatable).")
@click.option("--remove", "removed", multiple=True, help="An alias to remove (repeatable).")
@click.option("--admin", default=None, help=_ADMIN_HELP)
@store_option
def users_alias(name, added, removed, admin, db):
    """Add or remove an account's aliases (Git login, email): a run authored under any of
    them cannot be approved by this account (four-eyes).

    Example: termgate users alias carol --add carol-s --add carol@example.com
    """
    if not added and not removed:
        raise click.UsageError("give --add or --remove")
    db = db or default_db_path()
    as_admin(db, admin)
    account = run_cli(_account_change, so.set_aliases, db, name, added, removed)
    echo(f"{account.name}: aliases {', '.join(account.aliases) or '(none)'}")


@users_group.command("passwd")
@click.argument("name")
@click.option("--admin", default=None, help=_ADMIN_HELP)
@store_option
def users_passwd(name, admin, db):
    """Set an account's password (from TERMGATE_PASSWORD or a prompt); recorded in the chain.

    Example: termgate users passwd carol
    """
    db = db or default_db_path()
    password = read_password("New password", confirm=True)
    as_admin(db, admin, own_password=True)
    run_cli(_account_change, so.set_password, db, name, password)
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
@click.option("--admin", default=None, help=_ADMIN_HELP)
@store_option
def users_disable(name, admin, db):
    """Disable an account: it can no longer sign off.

    Example: termgate users disable bob
    """
    db = db or default_db_path()
    as_admin(db, admin)
    run_cli(_account_change, so.disable_user, db, name)
    echo(f"disabled {terminal_safe(name)}")


@users_group.command("set-role")
@click.argument("name")
@click.option("--role", type=click.Choice(so.ROLES), required=True)
@click.option("--domains", default=None, help="Comma-separated domain scope (empty string: all domains).")
@click.option("--admin", default=None, help=_ADMIN_HELP)
@store_option
def users_set_role(name, role, domains, admin, db):
    """Change an account's role (and optionally its domain scope).

    Example: termgate users set-role bob --role admin --domains ""
    """
    db = db or default_db_path()
    as_admin(db, admin)
    run_cli(_account_change, so.set_role, db, name, role, domains)
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
    for line in state.chain.failing if state.chain.ok else ():
        echo(terminal_safe(line), err=True)
    sys.exit(state.exit_code)


def _make_root(db, account, password) -> None:
    from ..governance import trust

    try:
        fingerprint = trust.init_trust(db, account, password)
    except (so.SignoffRefused, ChainBroken) as exc:
        fail([f"refused: {exc}; {account.name} was added, the store has no new trust root"], EXIT_REFUSED)
    print_root(fingerprint)


def print_root(fingerprint: str) -> None:
    echo(f"trust root: {fingerprint}")
    echo("pin it: commit these two lines to termgate.toml, and give CI the same (`termgate gate --trust-root ...`, "
         "the Action's trust-root input); a store whose trust root is another is then refused:")
    echo("  [trust]")
    echo(f'  root = "{fingerprint}"')


def refuse_sso_account(db, reviewer) -> None:
    try:
        so.refuse_sso(db, reviewer)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


def _decide(db, run_id, reviewer, password, decision, comment, ack_all) -> dict:
    try:
        account = signed_in(db, reviewer, password)
        return so.decide_as(db, run_id, account, decision, comment, ack_all=ack_all)
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
@trust_root_option
def audit_verify(expect_head, db, trust_root):
    """Exit 0 when the chain is intact, 1 naming the first edited, removed or reordered
    record, or the first account or stored run that differs from what the chain recorded.

    Prints the head as `audit head: COUNT:HASH`; keep it (a CI log) and pass it back with
    --expect-head to catch a store rewritten or truncated whole. On a signed store it says
    which records are signed from the trust root on, how many came before it (unsigned),
    and names every record whose signature fails (it carries no authority).

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
    report = run_cli(so.verify_chain, db, expect_head, "all", trust_root)
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
