"""Ed25519 keys and record signatures (SPEC §4, issue 33).

A key's *fingerprint* is `ed25519:` and the URL-safe base64 (no padding) of the SHA-256 of
its 32-byte public key; the public key itself travels as standard base64 of those bytes.

A private key is held three ways, never in the clear in the store and never printed:
- *sealed* by an account's password (scrypt, then ChaCha20-Poly1305) in the store's
  `sealed_keys` table, outside the chain (whose records, and the attestations carrying them,
  hold only public keys): whoever reads the store holds the sealed key and must guess the
  password, at the same scrypt cost as guessing it from the account table;
- a *key file* (`termgate keys new --out FILE`, mode 0600), for a service secret or an
  admin who keeps the key off the store;
- a *service secret*: the dashboard's `TERMGATE_DASHBOARD_KEY`, the CI's `TERMGATE_CI_KEY`,
  each the text of a key file (or its path).

A record is signed over `MESSAGE_PREFIX`, the hash of the record it extends and its
canonical text with the signature's `sig` left out (store.records.signing_message): the
signature covers the content, the signer block (key, service, identity) and the head.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .errors import SignoffRefused, UsageError

__all__ = ["KEY_PREFIX", "SEAL_SCRYPT", "SERVICES", "PrivateKey", "Signer", "fingerprint_of", "public_bytes_of",
           "verify_signature", "seal", "unseal", "parse_fingerprint", "load_key_text", "write_key_file",
           "signing_as", "current_signer", "service_signer", "ci_signer", "dashboard_signer"]

KEY_PREFIX = "ed25519:"
SEAL_SCRYPT = {"n": 2 ** 14, "r": 8, "p": 1}
"""The sealing key's scrypt cost: the same as a password hash's (governance.signoff), so a
sealed key read from the store costs an offline guesser exactly what the account table's
password hash already costs (16 MiB and about 64 ms a guess on one core here;
docs/security.md)."""
SERVICES = ("dashboard", "ci")
_KEY_FILE_KIND = "termgate-ed25519-key"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


def fingerprint_of(public: bytes | str) -> str:
    """`ed25519:<base64url(sha256(public key))>` of raw bytes or their standard base64."""
    raw = _unb64(public) if isinstance(public, str) else public
    return KEY_PREFIX + base64.urlsafe_b64encode(hashlib.sha256(raw).digest()).decode().rstrip("=")


def parse_fingerprint(value: str, where: str = "--trust-root") -> str:
    """A fingerprint as the user gave it (spaces trimmed), or UsageError naming `where`."""
    text = (value or "").strip()
    body = text[len(KEY_PREFIX):] if text.startswith(KEY_PREFIX) else ""
    try:
        ok = len(base64.urlsafe_b64decode(body + "=")) == 32 and len(body) == 43
    except ValueError:
        ok = False
    if not ok:
        raise UsageError(f"{where}: {value!r} is not a key fingerprint: give ed25519: and 43 characters, as "
                         "printed by `termgate trust init` or `termgate keys list`")
    return text


def public_bytes_of(text: str) -> bytes:
    raw = _unb64(text)
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key has 32 bytes")
    return raw


def verify_signature(public: str, message: bytes, signature: str) -> bool:
    """Whether `signature` (base64) is the Ed25519 signature of `message` by `public` (base64)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

    try:
        Ed25519PublicKey.from_public_bytes(public_bytes_of(public)).verify(_unb64(signature), message)
        return True
    except (InvalidSignature, ValueError, TypeError):
        return False


@dataclass(frozen=True)
class PrivateKey:
    """An Ed25519 private key. Its repr never shows the key."""

    _key: object = field(repr=False)

    @classmethod
    def generate(cls) -> "PrivateKey":
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_raw(cls, raw: bytes) -> "PrivateKey":
        from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

        return cls(Ed25519PrivateKey.from_private_bytes(raw))

    def _raw(self) -> bytes:
        from cryptography.hazmat.primitives import serialization as s

        return self._key.private_bytes(s.Encoding.Raw, s.PrivateFormat.Raw, s.NoEncryption())

    @property
    def public(self) -> str:
        from cryptography.hazmat.primitives import serialization as s

        return _b64(self._key.public_key().public_bytes(s.Encoding.Raw, s.PublicFormat.Raw))

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.public)

    def sign(self, message: bytes) -> str:
        return _b64(self._key.sign(message))


def _sealing_key(password: str, salt: bytes, params: dict) -> bytes:
    return hashlib.scrypt(password.encode("utf-8", "surrogatepass"), salt=salt, dklen=32,
                          n=int(params["n"]), r=int(params["r"]), p=int(params["p"]), maxmem=2 ** 28)


def seal(key: PrivateKey, password: str) -> dict:
    """The key sealed by `password`: {"kdf", "n", "r", "p", "salt", "nonce", "sealed"}; the
    public key is the AEAD's associated data, so a sealed key cannot be moved to another."""
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    salt, nonce = os.urandom(16), os.urandom(12)
    box = ChaCha20Poly1305(_sealing_key(password, salt, SEAL_SCRYPT))
    return {"kdf": "scrypt", **SEAL_SCRYPT, "aead": "chacha20poly1305", "salt": _b64(salt), "nonce": _b64(nonce),
            "sealed": _b64(box.encrypt(nonce, key._raw(), key.public.encode()))}


def unseal(sealed: dict, public: str, password: str) -> PrivateKey:
    """The key `seal` sealed; SignoffRefused when the password does not open it."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

    try:
        box = ChaCha20Poly1305(_sealing_key(password, _unb64(sealed["salt"]), sealed))
        key = PrivateKey.from_raw(box.decrypt(_unb64(sealed["nonce"]), _unb64(sealed["sealed"]), public.encode()))
    except (InvalidTag, KeyError, ValueError, TypeError):
        raise SignoffRefused("the password does not open this account's signing key") from None
    if key.public != public:
        raise SignoffRefused("the sealed key is not the registered one")
    return key


def load_key_text(text: str, where: str) -> PrivateKey:
    """A key from a key file's text (or, when `text` is a path to one, that file). UsageError
    naming `where` (a file or a variable), never showing the text."""
    text = (text or "").strip()
    if text and not text.startswith("{"):
        path = Path(text).expanduser()
        try:
            if path.is_file():
                where, text = str(path), path.read_text(encoding="utf-8").strip()
        except OSError:
            pass
    try:
        data = json.loads(text)
        if data.get("kind") != _KEY_FILE_KIND:
            raise ValueError
        key = PrivateKey.from_raw(_unb64(data["private"]))
    except (ValueError, TypeError, KeyError, AttributeError):
        raise UsageError(f"{where}: not a termgate key file (write one with `termgate keys new --out FILE`)") from None
    if data.get("public") not in (None, key.public):
        raise UsageError(f"{where}: its public key does not match its private key")
    return key


def write_key_file(path: Path, key: PrivateKey) -> None:
    """A new key file, mode 0600, created exclusively: an existing file is never overwritten."""
    text = json.dumps({"kind": _KEY_FILE_KIND, "public": key.public, "fingerprint": key.fingerprint,
                       "private": _b64(key._raw())}, indent=1) + "\n"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise UsageError(f"{path}: exists; a key file is never overwritten (choose another path)") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot create it ({exc.strerror})") from None
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


@dataclass(frozen=True)
class Signer:
    """Who signs the records appended while it is current: a personal key (`service` None;
    it signs only records whose actor is `holder`) or a service key, which names the
    identity it authenticated (`identity`: {"account": NAME} and, through single sign-on,
    {"iss", "sub"}; the CI's {"actor": ...})."""

    key: PrivateKey = field(repr=False)
    holder: str | None = None
    service: str | None = None
    identity: dict = field(default_factory=dict)

    def block(self, record: dict) -> dict:
        """The signer block placed in the record's payload before it is signed."""
        out: dict = {"key": self.key.fingerprint}
        if self.service:
            out["service"] = self.service
            who = "actor" if self.service == "ci" else "account"
            out["for"] = dict(self.identity) or {who: record.get("actor")}
        return out


_current: contextvars.ContextVar[Signer | None] = contextvars.ContextVar("termgate_signer", default=None)


@contextlib.contextmanager
def signing_as(signer: Signer | None):
    """Records appended inside sign with `signer` (None: unsigned)."""
    token = _current.set(signer)
    try:
        yield signer
    finally:
        _current.reset(token)


def current_signer(record: dict) -> Signer | None:
    """The signer of a record about to be linked: the current one (signing_as), else for a
    run header the CI's key when TERMGATE_CI_KEY is set."""
    signer = _current.get()
    if signer is not None:
        return signer
    if record.get("kind") == "run":
        return ci_signer()
    return None


def service_signer(service: str, text: str | None, where: str, identity: dict | None = None) -> Signer | None:
    if not text:
        return None
    return Signer(load_key_text(text, where), service=service, identity=dict(identity or {}))


def ci_signer() -> Signer | None:
    """The CI's service signer from TERMGATE_CI_KEY (a CI secret), naming the pipeline's actor
    (GITHUB_ACTOR, else TERMGATE_CI_ACTOR, else the run's author)."""
    from .environment import setting

    actor = os.environ.get("GITHUB_ACTOR") or setting("CI_ACTOR")
    return service_signer("ci", setting("CI_KEY"), "TERMGATE_CI_KEY", {"actor": actor} if actor else None)


def dashboard_signer(identity: dict, text: str | None = None) -> Signer | None:
    """The dashboard's service signer (TERMGATE_DASHBOARD_KEY, or `text` from the server's
    secrets), naming the identity the dashboard authenticated."""
    from .environment import setting

    return service_signer("dashboard", text if text is not None else setting("DASHBOARD_KEY"),
                          "TERMGATE_DASHBOARD_KEY", identity)
