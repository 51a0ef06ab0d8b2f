"""A recording HTTP stub on 127.0.0.1 for the security tests: every request (method, path,
Authorization header) is kept; GETs answer a 1x1 PNG (a tracking pixel that must never be
asked for), POSTs to /v1/chat/completions answer a chat completion with `reply`."""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


class RecordingStub:
    def __init__(self, reply: str = '["trainers", "running shoes"]'):
        self.requests: list[dict] = []
        self.reply = reply
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _record(self) -> bytes:
                body = self.rfile.read(int(self.headers.get("content-length", 0) or 0))
                with stub.lock:
                    stub.requests.append({"method": self.command, "path": self.path,
                                          "authorization": self.headers.get("authorization"), "body": body})
                return body

            def _send(self, code: int, content_type: str, data: bytes) -> None:
                self.send_response(code)
                self.send_header("content-type", content_type)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                self._record()
                self._send(200, "image/png", PIXEL)

            def do_POST(self):
                body = json.loads(self._record() or b"{}")
                payload = {"id": "x", "object": "chat.completion", "created": 0, "model": body.get("model", "m"),
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": stub.reply}}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
                self._send(200, "application/json", json.dumps(payload).encode())

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def seen(self) -> list[tuple[str, str, str | None]]:
        with self.lock:
            return [(r["method"], r["path"], r["authorization"]) for r in self.requests]


# ---------------------------------------------------------------- a real dashboard server

import contextlib  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def dashboard(env: dict):
    """`termgate dashboard` on a free port with this environment; yields its URL."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "termgate", "dashboard", "--port", str(port), "--address",
                             "127.0.0.1"], cwd=ROOT, env={**os.environ, **env},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if urllib.request.urlopen(f"{url}/_stcore/health", timeout=2).read() == b"ok":
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not become healthy within 60 s") from None
                time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def settle(page, timeout: float = 30.0) -> None:
    """Wait until the script has finished its run (no running indicator for a moment)."""
    deadline = time.monotonic() + timeout
    quiet_since = None
    while time.monotonic() < deadline:
        running = page.locator('[data-testid="stStatusWidget"]').count() > 0
        if running:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = time.monotonic()
        elif time.monotonic() - quiet_since > 1.0:
            return
        time.sleep(0.2)
