"""`termgate attest`: a portable approval (docs/attestation.md). `create` writes a run's in-toto
attestation from the store; `verify` decides from the file alone, never opening a store."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..config import default_db_path
from ..errors import ChainBroken
from ..text import terminal_safe
from .common import EXIT_NOT_RELEASABLE, EXIT_OK, echo, fail, run_cli, store_option

__all__ = ["attest_group"]


@click.group("attest")
def attest_group() -> None:
    """A run's approval as a signed in-toto attestation that a deployment step checks without
    the store: the run's content hash, its prompt version, the policy, the decisions and their
    signers, and the audit chain's signed records they are decided from.

    Example: termgate attest create RUN --out release.intoto.json && termgate attest verify
    release.intoto.json --trust-root "$TERMGATE_TRUST_ROOT" --require medical
    """


@attest_group.command("create")
@click.argument("run_id")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The attestation file to write (never overwritten; written whole or not at all).")
@click.option("--trust-root", default=None, metavar="ed25519:…",
              help="The store must have this trust root [default: $TERMGATE_TRUST_ROOT, else [trust] root].")
@store_option
def create_command(run_id, out, trust_root, db):
    """Write RUN's attestation: a DSSE envelope, signed with TERMGATE_CI_KEY (else
    TERMGATE_KEY_FILE) when set. Exit 0 written, 1 when the audit chain is broken or the store
    has no trust root (nothing written), 2 when the file exists or the run is unknown.

    Example: TERMGATE_CI_KEY=ci.key termgate attest create 20261203-101500-ab12cd --out release.intoto.json
    """
    from ..governance import attest
    from ..store.postgres import is_postgres

    db = db or default_db_path()
    if not is_postgres(db) and not Path(db).exists():
        fail([f"error: no store at {db} (check --db or $TERMGATE_DB)"])
    if out.exists():
        fail([f"error: {out}: exists; an attestation is never overwritten (choose another --out)"])
    made = run_cli(_create, db, run_id, trust_root)
    if isinstance(made, ChainBroken):
        fail([f"error: {made}"], EXIT_NOT_RELEASABLE)
    envelope, summary, notes = made
    if summary["chain"]["trust_root"] is None:
        fail([f"error: {db}: the store has no trust root, so nothing in it is attested and an attestation of it "
              "would never verify (an admin runs `termgate trust init --admin NAME`; docs/signoff.md)"],
             EXIT_NOT_RELEASABLE)
    run_cli(attest.write_attestation, out, envelope)
    for line in notes:
        echo(terminal_safe(line), err=True)
    release = summary["release"]
    echo(f"attestation: {out} — run {run_id}, {summary['chain']['records']} records to head "
         f"{summary['chain']['head'][:24]}…, trust root {summary['chain']['trust_root']}")
    echo(terminal_safe(f"release as attested: {release['status']} — {'; '.join(release['reasons'][:1])}"))


def _create(db, run_id: str, trust_root: str | None):
    """create_attestation's result, or the ChainBroken it raised (exit 1, not run_cli's 2)."""
    from ..governance import attest

    try:
        return attest.create_attestation(db, run_id, trust_root)
    except ChainBroken as exc:
        return exc


@attest_group.command("verify")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--trust-root", envvar="TERMGATE_TRUST_ROOT", metavar="ed25519:…",
              help="The trust root the attested chain must have (required) [default: $TERMGATE_TRUST_ROOT].")
@click.option("--require", "require", multiple=True, metavar="DOMAIN",
              help="Also require DOMAIN's approvals as the policy counts them (repeatable).")
def verify_command(file, trust_root, require):
    """Decide from FILE alone (no store is opened) whether its run may go live: exit 0 when it
    is releasable and each --require domain has its approvals; 1 when not, one line per reason
    (unattested run, missing approvals, a failing signature, another trust root, a broken
    chain); 2 when FILE is not an attestation termgate reads.

    Example: termgate attest verify release.intoto.json --trust-root "$TERMGATE_TRUST_ROOT" --require medical
    """
    from ..governance import attest
    from ..identity import canonical_domain

    if not trust_root:
        fail(["error: --trust-root is required (or TERMGATE_TRUST_ROOT): the fingerprint your team pinned, as "
              "printed by `termgate trust init`"])
    domains = [run_cli(canonical_domain, d, "--require") for d in require]
    result = run_cli(attest.verify_attestation, file, trust_root, domains)
    for line in result.lines + result.notes:
        echo(terminal_safe(line))
    for line in result.reasons:
        echo(terminal_safe(f"not releasable: {line}"), err=True)
    if result.ok:
        echo(f"verified: {file} may go live")
    sys.exit(EXIT_OK if result.ok else EXIT_NOT_RELEASABLE)

