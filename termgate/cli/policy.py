"""The release policy in the store (issue 32 item 4): show it, set it, approve a loosening."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import default_db_path
from ..governance import policy as pol
from ..governance import signoff as so
from ..text import terminal_safe
from .common import EXIT_REFUSED, echo, fail, run_cli, store_option
from .signoff import read_password, refuse_sso_account, signed_in

__all__ = ["policy_group"]


@click.group("policy")
def policy_group() -> None:
    """The release policy every `evaluate`, `gate` and the dashboard use: high-risk domains,
    approvals per domain, the drift judge's kappa floor and threshold floors for high-risk
    domains. It lives in the store's audit chain, set by admins; a local termgate.toml or
    environment variable may only tighten it for one run.

    Example: termgate policy show --toml > policy.toml && termgate policy set policy.toml --admin alice
    """


@policy_group.command("show")
@click.option("--toml", "as_toml", is_flag=True, help="Print the policy in force as a file `policy set` reads.")
@store_option
def show_command(as_toml, db):
    """Show the policy in force, who set it, pending proposals and records that do not count."""
    from .. import store

    db = db or default_db_path()
    records = run_cli(store.audit_records, db)
    state = run_cli(pol.policy_state, records)
    if as_toml:
        click.echo(pol.to_toml(state.policy), nl=False)
        return
    p = state.policy
    last = state.history[-1] if state.history else None
    echo(f"policy in force: {p.label()}" + (f", set by {last['actor']}" + (
        f", approved by {last['approved_by']}" if last["approved_by"] else "") + f" at {last['created_at']}"
        if last else ""))
    echo(f"  high-risk domains: {terminal_safe(', '.join(p.high_risk_domains) or 'none')}")
    approvals = ", ".join(f"{d} {p.approvals_for(d)}" for d in p.high_risk_domains)
    echo(f"  approvals required: {terminal_safe(approvals or '-')} (1 for any other)")
    echo(f"  drift_kappa_min: {'off' if p.drift_kappa_min is None else f'{p.drift_kappa_min:g}'}")
    floors = ", ".join(f"{k} {v:g}" for k, v in sorted(p.threshold_floors.items()))
    echo(f"  threshold floors (high-risk runs): {floors or 'none'}")
    for pending in state.pending:
        echo(f"pending: record {pending['seq']} by {pending['actor']} loosens the policy "
             f"({terminal_safe('; '.join(pending['loosens']))}); a second admin approves it with "
             f"`termgate policy approve {pending['seq']} --admin NAME`")
    for line in state.ignored:
        echo(f"not counted: {terminal_safe(line)}")


def _refused(fn, *args):
    """fn(*args); a refusal is one line and exit 4, nothing recorded."""
    try:
        return fn(*args)
    except so.SignoffRefused as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


def _admin(db, name: str):
    run_cli(refuse_sso_account, db, name)
    password = read_password(f"Password for {terminal_safe(name)}")
    return run_cli(_refused, signed_in, db, name, password)


@policy_group.command("set")
@click.argument("policy_file", metavar="POLICY.toml", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--admin", required=True, help="Your admin account (password from TERMGATE_PASSWORD or a prompt).")
@click.option("--comment", default=None, help="Why.")
@store_option
def set_command(policy_file, admin, comment, db):
    """Make POLICY.toml the policy (the whole policy: keys high_risk_domains,
    approvals_required, drift_kappa_min, threshold_floors). In force at once when it
    loosens nothing; otherwise recorded as a proposal a second admin approves.

    Exit codes: 0 recorded, 2 bad file, 4 refused (not an admin, wrong password, a broken
    chain) — nothing recorded.

    Example: TERMGATE_PASSWORD=... termgate policy set policy.toml --admin alice --comment "medical needs two"
    """
    db = db or default_db_path()
    new = run_cli(pol.load_policy_file, policy_file)
    account = _admin(db, admin)
    record, loosens = run_cli(_refused, pol.set_policy, db, account, new, comment)
    if loosens:
        echo(f"proposed (audit record {record['seq']}): it loosens the policy ({terminal_safe('; '.join(loosens))}); "
             f"another admin approves it with `termgate policy approve {record['seq']} --admin NAME`")
    else:
        echo(f"policy in force: policy record {record['seq']} set by {record['actor']}")
    echo(f"audit head: {record['seq']}:{record['record_hash']}")


@policy_group.command("approve")
@click.argument("proposal", type=int)
@click.option("--admin", required=True, help="Your admin account: not the one who proposed it.")
@click.option("--comment", default=None, help="Why.")
@store_option
def approve_command(proposal, admin, comment, db):
    """Approve a pending proposal that loosens the policy (its audit record number, as
    `policy show` lists it); a second admin, not its proposer.

    Example: TERMGATE_PASSWORD=... termgate policy approve 42 --admin bob
    """
    db = db or default_db_path()
    account = _admin(db, admin)
    record = run_cli(_refused, pol.approve_policy, db, account, proposal, comment)
    echo(f"policy in force: policy record {record['seq']}, proposed in record {proposal}, approved by "
         f"{record['actor']}")
    echo(f"audit head: {record['seq']}:{record['record_hash']}")
