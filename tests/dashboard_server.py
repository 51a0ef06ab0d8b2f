"""The real parts a browser test of the dashboard needs, started on 127.0.0.1: a Streamlit
server on a store, optionally signing in through a real OpenID Connect provider
(PyPI `oidc-provider-mock`, in a thread), and how Debian's Chromium is launched.

Used by tests/test_browser.py, tests/test_sso.py and scripts/walkthrough.py.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
"""Chromium's arguments: headless, as root, no network of its own."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_provider():
    """oidc-provider-mock on 127.0.0.1 in a thread (any client id and secret; users set by its
    API, `provider_user`): (its URL, a function that stops it)."""
    import logging

    import oidc_provider_mock
    import werkzeug.serving

    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per request
    server = werkzeug.serving.make_server("127.0.0.1", 0, oidc_provider_mock.app(), threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        thread.join(10)
    return f"http://127.0.0.1:{server.server_port}", stop


def provider_user(provider: str, sub: str, claims: dict) -> None:
    """The claims the provider puts in this subject's ID token (its PUT /users/SUB API)."""
    request = urllib.request.Request(f"{provider}/users/{quote(sub, safe='')}", method="PUT",
                                     data=json.dumps(claims).encode(), headers={"Content-Type": "application/json"})
    assert urllib.request.urlopen(request, timeout=10).status == 204


class Dashboard:
    """`termgate dashboard` on `db` and a free port, its log in `folder`; with `provider`,
    secrets whose [auth] signs in there; `secrets`: more of the secrets file (TOML text, e.g.
    `[termgate] signing_key`). `start()` waits for /_stcore/health (60 s at most)."""

    def __init__(self, db: str | Path, folder: str | Path, provider: str | None = None, port: int | None = None,
                 env: dict | None = None, termgate: tuple[str, ...] = (sys.executable, "-m", "termgate"),
                 secrets: str = ""):
        self.db, self.folder, self.provider, self.termgate = str(db), Path(folder), provider, termgate
        self.secrets = secrets
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ if env is None else env, TERMGATE_DB=self.db)
        self.proc: subprocess.Popen | None = None
        self.log_path = self.folder / "streamlit.log"

    def start(self) -> Dashboard:
        # the command a user runs: `termgate dashboard` starts the packaged app under Streamlit
        command = [*self.termgate, "dashboard", "--port", str(self.port), "--address", "127.0.0.1",
                   "--"]
        if self.provider or self.secrets:
            secrets_file = self.folder / "secrets.toml"
            secrets_file.write_text((f"""[auth]
redirect_uri = "{self.url}/oauth2callback"
cookie_secret = "{secrets.token_hex(32)}"
client_id = "termgate-dashboard"
client_secret = "{secrets.token_hex(16)}"
server_metadata_url = "{self.provider}/.well-known/openid-configuration"
""" if self.provider else "") + self.secrets, encoding="utf-8")
            command += ["--secrets.files", str(secrets_file)]
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(command, cwd=self.folder, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2).read() == b"ok":
                    return self
            except OSError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"streamlit did not become healthy within 60 s; its log: {self.log_path}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
