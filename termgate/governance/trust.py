"""The trust root and the keys the chain registers (SPEC §4, issue 33).

`init_trust` makes a store signed: one `trust_root` record by an enabled admin, signed by a
new key it registers, extending the store's current head (so it signs every record before
it: a store written before issue 33 is adopted by it). Its key's fingerprint is what the team
pins (`[trust] root`, `--trust-root`). From then on every record that carries authority is
signed (governance.signatures) by:
- its actor's personal key: sealed by the account's password and kept in the store's
  `sealed_keys` table (never in the chain, whose records hold only public keys), or kept
  in a key file (TERMGATE_KEY_FILE);
- or a service key the chain registered (`service:dashboard`, `service:ci`), for the
  identity that service authenticated.

An admin registers, rotates (registers another for the same holder) and revokes keys with
chained records, each signed by that admin's own key.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

from .. import store
from ..clock import utc_now
from ..environment import setting
from ..errors import SignoffRefused, UsageError
from ..identity import fold_name
from ..signing import (SERVICES, PrivateKey, Signer, fingerprint_of, load_key_text, public_bytes_of, seal,
                       signing_as, unseal, write_key_file)
from .signatures import TRUST_KIND, Authority, authority_of

__all__ = ["authority", "root_of", "personal_signer", "signing_for", "init_trust", "register_key", "revoke_key",
           "new_account_key", "keep_sealed", "holder_name"]


def authority(db) -> tuple[object, Authority]:
    """(the chain verified intact, its replay); ChainBroken when it is not."""
    from .chain_guard import require_intact

    report = require_intact(db)
    return report, authority_of(report.log)


def root_of(db) -> str | None:
    """The store's trust root fingerprint, None when it has none (not signed yet)."""
    return authority(db)[1].root


def holder_name(holder: str) -> str:
    """An account name, or `service:dashboard` / `service:ci` for --service."""
    if holder.startswith("service:"):
        if holder[len("service:"):] not in SERVICES:
            raise UsageError(f"unknown service {holder!r} (services: {', '.join(SERVICES)})")
        return holder
    return fold_name(holder)


def personal_signer(db, name: str, password: str | None, key_file: str | None = None,
                    auth: Authority | None = None) -> Signer:
    """The signer of account `name`: its key file (`key_file`, else TERMGATE_KEY_FILE), or its
    sealed key opened by its password. SignoffRefused when the chain registers no key for it
    or the key given is not the registered one."""
    auth = auth or authority(db)[1]
    name = fold_name(name)
    entry = auth.key_of(name)
    if entry is None:
        raise SignoffRefused(f"account {name!r} has no signing key in the audit chain, and this store is signed "
                             f"(trust root {auth.root}): an admin gives it one (`termgate users passwd {name} --admin "
                             f"ADMIN` seals a new key with a new password, or `termgate keys register {name} "
                             "--key-file FILE --admin ADMIN`)")
    key_text = key_file or setting("KEY_FILE")
    sealed = None if key_text else store.sealed_keys(db).get(entry["fingerprint"])
    if key_text:
        key = load_key_text(key_text, "--key-file" if key_file else "TERMGATE_KEY_FILE")
    elif sealed:
        key = unseal(json.loads(sealed), entry["public"], password or "")
    else:
        raise SignoffRefused(f"account {name!r} keeps its signing key in a key file: set TERMGATE_KEY_FILE")
    if key.fingerprint != entry["fingerprint"]:
        raise SignoffRefused(f"that key ({key.fingerprint}) is not account {name!r}'s registered key "
                             f"({entry['fingerprint']})")
    return Signer(key, holder=name)


@contextlib.contextmanager
def signing_for(db, name: str, password: str | None, key_file: str | None = None):
    """Inside, records sign with account `name`'s key when the store is signed (nothing
    changes on a store with no trust root)."""
    auth = authority(db)[1]
    if auth.root is None:
        yield None
        return
    with signing_as(personal_signer(db, name, password, key_file, auth)) as signer:
        yield signer


def keep_sealed(db, holder: str, key: PrivateKey, password: str) -> None:
    """Keep `key` sealed by `password` in the store, outside the chain (store.put_sealed_key)."""
    store.put_sealed_key(db, key.fingerprint, holder, json.dumps(seal(key, password), sort_keys=True))


def new_account_key(db, name: str, password: str) -> dict:
    """A new key for account `name`, sealed by its password and kept in the store; what its
    account record states (the public key only)."""
    key = PrivateKey.generate()
    keep_sealed(db, name, key, password)
    return {"public": key.public}


def _append(db, signer: Signer, kind: str, payload: dict, comment: str, extends: str | None = None) -> dict:
    record = {"created_at": utc_now(), "kind": kind, "actor": signer.holder, "run_id": None, "content_hash": None,
              "decision": None, "comment": comment, "payload": dict(payload, **({"extends": extends} if extends else {})),
              "signer": signer}
    return store.append_audit(db, record)


def init_trust(db, admin, password: str, key_file: Path | None = None) -> str:
    """Make the store signed (see the module): `admin` an authenticated admin Account; the
    key is sealed by `password`, or written to `key_file` (mode 0600, never overwritten).
    Returns the root's fingerprint. SignoffRefused when the store has a trust root already."""
    report, auth = authority(db)
    if auth.root is not None:
        raise SignoffRefused(f"the store has a trust root already: {auth.root} (record {auth.root_seq})")
    if admin.role != "admin":
        raise SignoffRefused(f"'{admin.name}' is {admin.role}, not admin: only an admin makes the trust root")
    key = PrivateKey.generate()
    info: dict = {"public": key.public}
    if key_file is not None:
        write_key_file(key_file, key)
    else:
        keep_sealed(db, admin.name, key, password)
    _append(db, Signer(key, holder=admin.name), TRUST_KIND, {"key": info},
            f"trust root {key.fingerprint}: signs the {report.records} records before it", extends=report.head)
    return key.fingerprint


def register_key(db, signer: Signer, holder: str, public: str) -> str:
    """Register `public` as `holder`'s key (replacing the one in force), signed by an admin."""
    holder = holder_name(holder)
    try:
        public_bytes_of(public)
    except ValueError:
        raise UsageError("not an Ed25519 public key (32 bytes in base64)") from None
    _, auth = authority(db)
    if auth.root is None:
        raise SignoffRefused("the store has no trust root: `termgate trust init --admin NAME` first")
    if not holder.startswith("service:") and store.get_user(db, holder) is None:
        raise UsageError(f"unknown account '{holder}' (see `termgate users list`)")
    fp = fingerprint_of(public)
    if fp in auth.keys:
        raise UsageError(f"key {fp} is registered already (to {auth.keys[fp]['holder']}); a key is registered once")
    payload = {"holder": holder, "public": public, "fingerprint": fp}
    _append(db, signer, "key_register", payload, f"key {fp} for {holder}")
    return fp


def revoke_key(db, signer: Signer, fingerprint: str) -> str:
    """Revoke a registered key: records it signs from now on carry no authority."""
    _, auth = authority(db)
    info = auth.keys.get(fingerprint)
    if info is None:
        raise UsageError(f"no key {fingerprint} is registered (see `termgate keys list`)")
    if info["until"] is not None:
        raise UsageError(f"key {fingerprint} was revoked or replaced at record {info['until']} already")
    _append(db, signer, "key_revoke", {"fingerprint": fingerprint}, f"revoked key {fingerprint} of {info['holder']}")
    return info["holder"]
