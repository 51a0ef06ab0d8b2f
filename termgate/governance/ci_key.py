"""The CI's key checked before a run is stored (SPEC §4, issue 33).

`evaluate` and `harness` sign the run's header with TERMGATE_CI_KEY (termgate.signing.ci_signer).
A key that would not attest the run is found before anything is scored or stored, so a
pipeline fails with one line (exit 2) instead of storing a run that can never be released:
the variable holds no key file, or the store is signed and that key is not the CI key its
chain registers now (never registered, revoked, or replaced by a rotation).
"""

from __future__ import annotations

from ..errors import UsageError
from ..signing import ci_signer
from .signatures import authority_of, holder_of_service

__all__ = ["check_ci_key"]

_REGISTER = "`termgate keys register --service ci --key-file ci.key --admin NAME` (docs/ci.md)"


def check_ci_key(chain) -> str | None:
    """Check TERMGATE_CI_KEY against `chain` (a ChainReport verified intact): UsageError
    naming the variable when it would not attest the run; a warning line when it is set on
    a store with no trust root (its signature attests nothing there yet); else None."""
    signer = ci_signer()  # UsageError when the variable holds no key file (its text is never shown)
    if signer is None:
        return None
    authority = authority_of(chain.log)
    if authority.root is None:
        return ("warning: TERMGATE_CI_KEY is set but this store has no trust root, so the run's signature attests "
                "nothing yet (an admin runs `termgate trust init --admin NAME`; docs/signoff.md)")
    registered = authority.key_of(holder_of_service("ci"))
    given = signer.key.fingerprint
    if registered is None:
        raise UsageError(f"TERMGATE_CI_KEY: key {given} is not registered on this store, which registers no CI key: "
                         f"an admin registers it with {_REGISTER}; nothing was stored")
    if registered["fingerprint"] != given:
        raise UsageError(f"TERMGATE_CI_KEY: key {given} is not the store's CI key ({registered['fingerprint']}, "
                         f"record {registered['since']}): the run would be unattested; use that key, or have an admin "
                         f"register this one with {_REGISTER}; nothing was stored")
    return None
