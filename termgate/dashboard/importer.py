"""Run uploaded work in a child `python -m termgate evaluate|harness` process.

The dashboard never loads a model or holds the store open: the child does the work with
the CLI's own validation and the page shows its lines as they are. Uploads live in a
private temporary folder (mode 0700) that is removed when the child exits, whatever the
outcome; the run itself stores what its pages need.

Secrets stay home (SPEC §5): the harness child calls one configured endpoint by name
(`--endpoint NAME`), and its environment carries that endpoint's key only: every other
variable that looks like a secret (OPENAI_*, *KEY*, *TOKEN*, *SECRET*, *PASSWORD*, ...) and
every other endpoint's key_env are left out.

Retrieval (docs/retrieval.md): an uploaded corpus and relevance judgments become the
child's --corpus and --qrels. The embedded engine's index of the corpus goes in the
private folder too (TERMGATE_INDEX_DIR): it holds the uploaded documents' words, so it is
removed with them, never left in a shared cache or the repository. A harness child that
measures retrieval with the team's engine ([retrieval.http]) gets that engine's
header_env variables, which it sends to that engine only.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from termgate.config import Endpoint, load_settings
from termgate.environment import setting_names

from . import busy, data

__all__ = ["ImportResult", "run_import", "run_harness", "child_env", "endpoint_key", "server_url"]

_SECRET = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)


@dataclass
class ImportResult:
    run_id: str | None = None
    gate: str | None = None
    output: str = ""
    problems: list[str] = field(default_factory=list)


@contextmanager
def private_folder() -> Iterator[Path]:
    """A fresh folder only this user can read (mkdtemp makes it 0700), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="termgate-import-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _save(upload, folder: Path, role: str, names: dict[str, str] | None = None) -> Path:
    """Keep the upload under its own name, prefixed by its role so two uploads never collide;
    `names` learns the copy's path -> the uploaded file's name, which the page shows instead."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(upload.name).name) or "upload"
    path = folder / f"{role}-{name}"
    path.write_bytes(upload.getvalue())
    if names is not None:
        names[str(path)] = Path(upload.name).name or "upload"
    return path


def _as_uploaded(text: str, names: dict[str, str], report: Path) -> str:
    """The child's lines as the visitor knows the files: each temporary copy (removed when the
    child exits) named by the uploaded file's name, and no line about the page's own report file."""
    lines = [line for line in text.splitlines(keepends=True) if line.strip() != f"wrote {report}"]
    text = "".join(lines)
    for path, name in sorted(names.items(), key=lambda item: -len(item[0])):
        text = text.replace(path, name)
    return text


def endpoint_key(endpoint: Endpoint) -> str | None:
    """The endpoint's key: its key_env from the environment, else from Streamlit secrets."""
    if not endpoint.key_env:
        return None
    if os.environ.get(endpoint.key_env):
        return os.environ[endpoint.key_env]
    try:
        import streamlit as st
        value = st.secrets.get(endpoint.key_env)
    except Exception:  # no secrets file
        value = None
    return str(value) if value else None


def server_url(page_path: str = "") -> str:
    """This dashboard's address: as the visitor's browser reaches it (st.context.url, the
    page's own `page_path` taken off), else as Streamlit's options give it (scheme from
    server.sslCertFile, browser.serverAddress, browser.serverPort, which follows server.port,
    and server.baseUrlPath). The links a child prints then open this server, whatever its port."""
    import streamlit as st

    url = (st.context.url or "").rstrip("/")
    if url:
        return url.removesuffix(f"/{page_path.strip('/')}") if page_path.strip("/") else url
    scheme = "https" if st.get_option("server.sslCertFile") else "http"
    base = (st.get_option("server.baseUrlPath") or "").strip("/")
    return (f"{scheme}://{st.get_option('browser.serverAddress')}:{st.get_option('browser.serverPort')}"
            + (f"/{base}" if base else ""))


def _kept_home(settings) -> set[str]:
    """Variables no child gets: every endpoint's key, the store's password, the signing keys."""
    return ({e.key_env for e in settings.endpoints.values() if e.key_env} | set(setting_names("PASSWORD"))
            | {n for key in ("DASHBOARD_KEY", "CI_KEY", "KEY_FILE") for n in setting_names(key)})


def child_env(endpoint: Endpoint | None = None, settings=None, dashboard_url: str | None = None) -> dict[str, str]:
    """The child's environment, naming the store in TERMGATE_DB (never on the command line:
    a URL's password would show in the process list). For the harness (an endpoint given):
    no secret but that endpoint's own key and libpq's PG* settings for the store. For
    evaluate: as the dashboard's, without the endpoints' keys, TERMGATE_PASSWORD and the
    signing keys TERMGATE_DASHBOARD_KEY, TERMGATE_CI_KEY and TERMGATE_KEY_FILE (a run
    imported here is never signed as the CI's or anyone's; its drift judge may use the server's own
    [llm] endpoint; their EVALCORE_ names, neither). `dashboard_url` (server_url())
    becomes the child's TERMGATE_DASHBOARD_URL, the base of the links it prints."""
    settings = settings or load_settings()
    keys = _kept_home(settings)
    if endpoint is None:
        env = {k: v for k, v in os.environ.items() if k not in keys}
    else:
        env = {k: v for k, v in os.environ.items()  # libpq's PG* settings reach the store, nothing else
               if k not in keys and not k.startswith("OPENAI_") and (k.startswith("PG") or not _SECRET.search(k))}
        key = endpoint_key(endpoint)
        if key and endpoint.key_env:
            env[endpoint.key_env] = key
    env["TERMGATE_STORE_TIMEOUT"] = busy.cli_wait()
    env["TERMGATE_DB"] = data.db_path()  # the store by environment: a URL's password never in the process list
    if dashboard_url:
        env["TERMGATE_DASHBOARD_URL"] = dashboard_url
    return env


def _retrieval(corpus, qrels, folder: Path, names: dict[str, str]) -> list[str]:
    """--corpus and --qrels for the uploads given (the child says what is missing)."""
    return [part for flag, role, upload in (("--corpus", "corpus", corpus), ("--qrels", "qrels", qrels))
            if upload is not None for part in (flag, str(_save(upload, folder, role, names)))]


def _alone(corpus, qrels) -> ImportResult | None:
    """A corpus without judgments measures nothing: said before any work."""
    if corpus is not None and qrels is None:
        return ImportResult(problems=["a corpus is searched to measure retrieval against relevance judgments: "
                                      "upload those too"])
    return None


def _index_env(folder: Path) -> dict[str, str]:
    """The embedded engine's index folder: inside the private folder, removed with the uploads."""
    return {"TERMGATE_INDEX_DIR": str(folder / "indexes")}


def _engine_keys(settings) -> dict[str, str]:
    """The team's search engine's credentials ([retrieval.http] header_env) from the environment;
    never a variable that stays home (_kept_home), whatever the table names."""
    http = settings.retrieval.get("http")
    names = http.get("header_env") if isinstance(http, dict) else None
    if not isinstance(names, dict):
        return {}
    home = _kept_home(settings)
    return {name: os.environ[name] for name in names.values()
            if isinstance(name, str) and name not in home and os.environ.get(name)}


def _result(report: Path, code: int, problems: list[str], output: str, what: str,
            names: dict[str, str]) -> ImportResult:
    problems = [_as_uploaded(line, names, report) for line in problems]
    output = _as_uploaded(output, names, report)
    if code == 2 or not report.exists():
        return ImportResult(problems=problems or [f"{what} exited {code}"], output=output)
    parsed = json.loads(report.read_text(encoding="utf-8"))
    return ImportResult(parsed["evaluation_id"], parsed["gate"]["decision"], output)


def _flags(pairs) -> list[str]:
    return [part for flag, value in pairs if value for part in (flag, value)]


def _golden_name(upload, given: str) -> str:
    """The golden set's name (SPEC §1.1): as given on the page, else the uploaded file's
    own name (the path the user gave), not the temporary copy's, so two uploads of one
    file are runs on one golden set."""
    return given.strip() or Path(upload.name).name.strip() or "upload"


def run_harness(golden, prompt, *, endpoint: str, author: str, concurrency: int | None = None, name: str = "",
                golden_name: str = "", judge: str | None = None, baseline: str | None = None,
                response_format: str = "text", repeat: int = 1, corpus=None, qrels=None,
                progress=None, dashboard_url: str | None = None) -> ImportResult:
    """`python -m termgate harness --endpoint NAME` in a child; `progress(done, total)` follows it
    (over every repeat's calls); `dashboard_url` is the base of the link it prints (see child_env);
    `concurrency` None: the endpoint's own setting (else harness's default);
    `corpus` and `qrels` measure the retrieval effect (module docstring)."""
    if refused := _alone(corpus, qrels):
        return refused
    settings = load_settings()
    chosen = settings.endpoints.get(endpoint)
    if chosen is None:
        return ImportResult(problems=[f"unknown endpoint '{endpoint}': it is not configured on this server"])
    with private_folder() as folder:
        report, names = folder / "report.json", {}
        cmd = [sys.executable, "-m", "termgate", "harness", "--endpoint", endpoint,
               "--golden", str(_save(golden, folder, "golden", names)),
               "--prompt", str(_save(prompt, folder, "prompt", names)),
               "--json", str(report), "--author", author,
               "--response-format", response_format, "--repeat", str(int(repeat)),
               "--golden-name", _golden_name(golden, golden_name)]
        cmd += _flags((("--name", name), ("--drift-judge", judge), ("--baseline", baseline),
                       ("--concurrency", None if concurrency is None else str(int(concurrency)))))
        cmd += _retrieval(corpus, qrels, folder, names)
        env = (child_env(chosen, settings, dashboard_url) | {"TERMGATE_PROGRESS": "lines"} | _index_env(folder)
               | (_engine_keys(settings) if qrels is not None else {}))
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        output: list[str] = []
        reader = threading.Thread(target=lambda: output.append(proc.stdout.read()), daemon=True)
        reader.start()  # stdout drains beside stderr: neither pipe can fill and stall the child
        problems = []
        for line in proc.stderr:
            line = line.rstrip("\n")
            if line.startswith("progress "):
                if progress is not None:
                    done, total = line.split()[1].split("/")
                    progress(int(done), int(total))
            elif line.strip():
                problems.append(line)
        proc.wait()
        reader.join()
        return _result(report, proc.returncode, problems, "".join(output), "harness", names)


def run_import(golden, generated, thresholds=None, *, author: str, name: str = "", prompt_version: str = "",
               golden_name: str = "", judge: str | None = None, baseline: str | None = None,
               corpus=None, qrels=None, dashboard_url: str | None = None) -> ImportResult:
    """`python -m termgate evaluate` on the uploads, in a child process; `dashboard_url` is the
    base of the link it prints (see child_env); `corpus` and `qrels` measure the retrieval
    effect (module docstring)."""
    if refused := _alone(corpus, qrels):
        return refused
    with private_folder() as folder:
        report, names = folder / "report.json", {}
        cmd = [sys.executable, "-m", "termgate", "evaluate", "--golden", str(_save(golden, folder, "golden", names)),
               "--generated", str(_save(generated, folder, "generated", names)),
               "--json", str(report), "--author", author, "--golden-name", _golden_name(golden, golden_name)]
        if thresholds is not None:
            cmd += ["--thresholds", str(_save(thresholds, folder, "thresholds", names))]
        cmd += _flags((("--name", name), ("--prompt-version", prompt_version), ("--drift-judge", judge),
                       ("--baseline", baseline)))
        cmd += _retrieval(corpus, qrels, folder, names)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600,
                              env=child_env(dashboard_url=dashboard_url) | _index_env(folder))
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        return _result(report, proc.returncode, lines, proc.stdout, "evaluate", names)
