"""The trust root and signing keys (SPEC §4, issue 33): `termgate trust`, `termgate keys`."""

from __future__ import annotations

from pathlib import Path

import click

from ..config import default_db_path
from ..errors import ChainBroken
from ..governance import signoff as so
from ..text import terminal_safe
from .common import EXIT_REFUSED, echo, fail, format_table, run_cli, say_trust, store_option, trust_root_option
from .signoff import as_admin, print_root, read_password, refuse_sso_account

__all__ = ["trust_group", "keys_group"]


def _refused(fn, *args):
    try:
        return fn(*args)
    except (so.SignoffRefused, ChainBroken) as exc:
        fail([f"refused: {exc}"], EXIT_REFUSED)


@click.group("trust")
def trust_group() -> None:
    """The store's trust root: the admin key that signs the store's head once, after which
    every record that carries authority (decisions, verdicts, golden approvals, account,
    key and policy changes, run headers) must be signed by a key the chain registered.

    Example: TERMGATE_PASSWORD=... termgate trust init --admin ada
    """


@trust_group.command("init")
@click.option("--admin", required=True, help="An admin account (password from TERMGATE_PASSWORD or a prompt).")
@click.option("--key-file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write the root key to this new file (mode 0600) instead of sealing it by the admin's password.")
@store_option
def trust_init(admin, key_file, db):
    """Make the store signed: a new key for ADMIN signs the store's current head (adopting
    every record before it, which `audit verify` then lists as unsigned). Prints the
    fingerprint to pin.

    Exit codes: 0 done, 2 bad option, 4 refused (not an admin, wrong password, a broken
    chain, a store that has a trust root already) — nothing recorded.
    """
    from ..governance import trust

    db = db or default_db_path()
    run_cli(refuse_sso_account, db, admin)
    password = read_password(f"Password for {terminal_safe(admin)}")
    account = run_cli(_refused, so.authenticate, db, admin, password, True)
    fingerprint = run_cli(_refused, trust.init_trust, db, account, password, key_file)
    print_root(fingerprint)


@trust_group.command("show")
@trust_root_option
@store_option
def trust_show(trust_root, db):
    """The store's trust root, whether it is pinned here, and records whose signatures fail."""
    db = db or default_db_path()
    report = run_cli(so.verify_chain, db, None, None, trust_root)
    if not report.ok:
        fail([f"audit chain broken: {terminal_safe(report.message)}"], 1)
    echo(f"trust root: {report.root or 'none'}" + (" (pinned)" if report.pinned else ""))
    say_trust(report)


@click.group("keys")
def keys_group() -> None:
    """Signing keys: a new key file; keys the chain registers (accounts' and the dashboard's
    and CI's service keys); register, rotate (register another for the same holder) and
    revoke, each signed by an admin's key. A private key is never printed.

    Example: termgate keys new --out ci.key && termgate keys register --service ci --key-file ci.key --admin ada
    """


@keys_group.command("new")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The new key file (mode 0600; an existing file is never overwritten).")
def keys_new(out):
    """Write a new Ed25519 key to a file and print its fingerprint and public key. The file
    is a secret: give it to the service as TERMGATE_CI_KEY or TERMGATE_DASHBOARD_KEY (the
    file's text, or its path), or keep it as your own (TERMGATE_KEY_FILE)."""
    from ..signing import PrivateKey, write_key_file

    key = PrivateKey.generate()
    run_cli(write_key_file, out, key)
    echo(f"wrote {terminal_safe(str(out))} (mode 0600)")
    echo(f"fingerprint: {key.fingerprint}")
    echo(f"public key: {key.public}")


@keys_group.command("list")
@store_option
def keys_list(db):
    """The keys the chain registers: holder, fingerprint, the record that registered it and
    the one that replaced or revoked it, and where the private key lives."""
    from ..governance import trust

    db = db or default_db_path()
    _, auth = run_cli(_refused, trust.authority, db)
    if auth.root is None:
        echo("no keys: the store has no trust root (`termgate trust init --admin NAME`)")
        return
    from .. import store

    sealed = run_cli(store.sealed_keys, db)
    rows = [(info["holder"], fp, info["since"], "in force" if info["until"] is None else f"ended at {info['until']}",
             "sealed by password, in the store" if fp in sealed else "key file or secret")
            for fp, info in auth.keys.items()]
    echo(f"trust root: {auth.root}")
    echo(format_table(["holder", "fingerprint", "registered", "state", "private key"], rows, max_width=120))


def _public_of(key_file: Path | None, public: str | None) -> str:
    from ..signing import load_key_text

    if (key_file is None) == (public is None):
        raise click.UsageError("give --key-file FILE or --public-key BASE64")
    if public is not None:
        return public.strip()
    return load_key_text(str(key_file), str(key_file)).public


@keys_group.command("register")
@click.argument("account", required=False)
@click.option("--service", type=click.Choice(["dashboard", "ci"]), default=None,
              help="Register the dashboard's or the CI's service key instead of an account's.")
@click.option("--key-file", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="A key file (`keys new`); only its public key is read and recorded.")
@click.option("--public-key", default=None, help="The public key (base64), as `keys new` prints it.")
@click.option("--admin", required=True, help="Your admin account, whose key signs the registration.")
@store_option
def keys_register(account, service, key_file, public_key, admin, db):
    """Register ACCOUNT's key, or a service's (--service); it replaces the one in force
    (rotation): records signed by the old key before this stay valid, after it carry no
    authority.

    Example: termgate keys register --service dashboard --key-file dashboard.key --admin ada
    """
    from ..governance import trust

    if (account is None) == (service is None):
        raise click.UsageError("give ACCOUNT or --service dashboard|ci")
    db = db or default_db_path()
    public = run_cli(_public_of, key_file, public_key)
    as_admin(db, admin)
    signer = _current()
    fingerprint = run_cli(_refused, trust.register_key, db, signer, account or f"service:{service}", public)
    echo(f"registered {fingerprint} for {terminal_safe(account or 'service:' + service)}")


@keys_group.command("revoke")
@click.argument("fingerprint")
@click.option("--admin", required=True, help="Your admin account, whose key signs the revocation.")
@store_option
def keys_revoke(fingerprint, admin, db):
    """Revoke a key: records it signs from now on carry no authority."""
    from ..governance import trust

    db = db or default_db_path()
    as_admin(db, admin)
    holder = run_cli(_refused, trust.revoke_key, db, _current(), fingerprint.strip())
    echo(f"revoked {terminal_safe(fingerprint.strip())} of {terminal_safe(holder)}")


def _current():
    from ..signing import current_signer

    signer = current_signer({})
    if signer is None:
        fail(["refused: the store has no trust root: `termgate trust init --admin NAME` first"], EXIT_REFUSED)
    return signer

