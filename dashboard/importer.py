"""Run an uploaded evaluation in a child `python -m evalcore evaluate` process.

The dashboard never loads a model or holds the store open: the child does the work and
the page shows its validation lines as they are. Uploads are kept (nothing a user gave us
is lost) under data/uploads/<timestamp>/ beside the store.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import data


@dataclass
class ImportResult:
    run_id: str | None = None
    gate: str | None = None
    output: str = ""
    problems: list[str] = field(default_factory=list)


def _save(upload, folder: Path, role: str) -> Path:
    """Keep the upload under its own name, prefixed by its role so two uploads never collide."""
    name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(upload.name).name) or "upload"
    path = folder / f"{role}-{name}"
    path.write_bytes(upload.getvalue())
    return path


def _folder() -> tuple[Path, Path]:
    db = Path(data.db_path())
    folder = db.parent / "uploads" / f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"
    folder.mkdir(parents=True, exist_ok=False)
    return db, folder


def run_harness(golden, prompt, *, model: str, base_url: str = "", concurrency: int = 8, name: str = "",
                judge: str | None = None, baseline: str | None = None, progress=None) -> ImportResult:
    """`python -m evalcore harness` in a child process; `progress(done, total)` follows it live."""
    db, folder = _folder()
    report = folder / "report.json"
    cmd = [sys.executable, "-m", "evalcore", "harness", "--golden", str(_save(golden, folder, "golden")),
           "--prompt", str(_save(prompt, folder, "prompt")), "--model", model, "--concurrency", str(concurrency),
           "--db", str(db), "--json", str(report)]
    for flag, value in (("--base-url", base_url), ("--name", name), ("--drift-judge", judge), ("--baseline", baseline)):
        if value:
            cmd += [flag, value]
    env = dict(os.environ, EVALCORE_PROGRESS="lines")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    problems = []
    for line in proc.stderr:
        line = line.rstrip("\n")
        if line.startswith("progress ") and progress is not None:
            done, total = line.split()[1].split("/")
            progress(int(done), int(total))
        elif line.strip() and not line.startswith("progress "):
            problems.append(line)
    output = proc.stdout.read()
    proc.wait()
    if proc.returncode == 2 or not report.exists():
        return ImportResult(problems=problems or [f"harness exited {proc.returncode}"], output=output)
    parsed = json.loads(report.read_text(encoding="utf-8"))
    return ImportResult(parsed["evaluation_id"], parsed["gate"]["decision"], output)


def run_import(golden, generated, thresholds=None, *, name: str = "", prompt_version: str = "",
               judge: str | None = None, baseline: str | None = None) -> ImportResult:
    db, folder = _folder()
    report = folder / "report.json"
    cmd = [sys.executable, "-m", "evalcore", "evaluate", "--golden", str(_save(golden, folder, "golden")),
           "--generated", str(_save(generated, folder, "generated")), "--db", str(db), "--json", str(report)]
    if thresholds is not None:
        cmd += ["--thresholds", str(_save(thresholds, folder, "thresholds"))]
    for flag, value in (("--name", name), ("--prompt-version", prompt_version), ("--drift-judge", judge),
                        ("--baseline", baseline)):
        if value:
            cmd += [flag, value]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    if proc.returncode == 2 or not report.exists():
        lines = [line for line in proc.stderr.splitlines() if line.strip()]
        return ImportResult(problems=lines or [f"evaluate exited {proc.returncode}"], output=proc.stdout)
    parsed = json.loads(report.read_text(encoding="utf-8"))
    return ImportResult(parsed["evaluation_id"], parsed["gate"]["decision"], proc.stdout)
