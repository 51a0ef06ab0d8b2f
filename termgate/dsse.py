"""DSSE envelopes (the Dead Simple Signing Envelope, v1.0.0: github.com/secure-systems-lab/dsse),
the outer layer of an in-toto attestation (governance.attest).

A signature signs PAE(payloadType, payload), never the JSON of the envelope, so no JSON
canonicalisation is involved; keys are termgate's Ed25519 keys (termgate.signing), named by
their fingerprint as the signature's `keyid`. The keyid is only a hint: a verifier looks the
key up in what it already trusts (here, the keyring the attested chain registers).
"""

from __future__ import annotations

import base64
import binascii
import json

from .signing import PrivateKey, verify_signature

__all__ = ["PAYLOAD_TYPE", "pae", "seal_envelope", "decode_b64", "Envelope", "read_envelope"]

PAYLOAD_TYPE = "application/vnd.in-toto+json"


def pae(payload_type: str, body: bytes) -> bytes:
    """The Pre-Authentication Encoding of the DSSE protocol:
    "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal bytes."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %b %d %b" % (len(kind), kind, len(body), body)


def seal_envelope(body: bytes, keys: list[PrivateKey], payload_type: str = PAYLOAD_TYPE) -> dict:
    """The envelope of `body`, signed by each of `keys` (none: an unsigned envelope)."""
    message = pae(payload_type, body)
    return {"payloadType": payload_type, "payload": base64.b64encode(body).decode(),
            "signatures": [{"keyid": key.fingerprint, "sig": key.sign(message)} for key in keys]}


def decode_b64(text: str) -> bytes:
    """Standard or URL-safe base64, padded or not (the protocol: verifiers accept either);
    ValueError otherwise."""
    if not isinstance(text, str):
        raise ValueError("not a string")
    cleaned = text.strip().replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(cleaned + "=" * (-len(cleaned) % 4), validate=True)
    except binascii.Error as exc:
        raise ValueError(str(exc)) from None


class Envelope:
    """A read envelope: its payload type, body bytes and signatures [(keyid, sig base64)]."""

    def __init__(self, payload_type: str, body: bytes, signatures: list[tuple[str | None, str]]):
        self.payload_type, self.body, self.signatures = payload_type, body, signatures

    def verifies(self, public: str, sig: str) -> bool:
        """Whether `sig` is `public`'s Ed25519 signature of this envelope's PAE."""
        try:
            raw = decode_b64(sig)
        except ValueError:
            return False
        return verify_signature(public, pae(self.payload_type, self.body), base64.b64encode(raw).decode())


def read_envelope(text: str) -> Envelope:
    """Parse an envelope's JSON text; ValueError(field, message) naming what is wrong."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError("envelope", f"not JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("envelope", "not a JSON object (a DSSE envelope: payloadType, payload, signatures)")
    kind = data.get("payloadType")
    if not isinstance(kind, str):
        raise ValueError("payloadType", "missing or not a string")
    try:
        body = decode_b64(data.get("payload"))
    except ValueError as exc:
        raise ValueError("payload", f"not base64 ({exc})") from None
    signatures = data.get("signatures")
    if not isinstance(signatures, list):
        raise ValueError("signatures", "missing or not a list")
    out = []
    for i, entry in enumerate(signatures):
        if not isinstance(entry, dict) or not isinstance(entry.get("sig"), str) or \
                not isinstance(entry.get("keyid", ""), (str, type(None))):
            raise ValueError(f"signatures[{i}]", "not {\"keyid\": string, \"sig\": base64 string}")
        out.append((entry.get("keyid"), entry["sig"]))
    return Envelope(kind, body, out)
