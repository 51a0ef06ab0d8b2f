#!/usr/bin/env python3
"""The action's Evaluate step: run `termgate evaluate` or `termgate harness` with the
action's inputs, write every report into one folder and tell the later steps what happened.

Inputs arrive only as environment variables (`INPUT_GOLDEN`, `INPUT_EXTRA_ARGS`, …; see
action.yml), never spliced into a script, so a golden path or a run name cannot run a
command. The store named by the `db` input reaches termgate as `TERMGATE_DB`, so a URL's
password is never on a command line or in the log; so do `trust-root` (TERMGATE_TRUST_ROOT)
and the CI's signing key `ci-key` (TERMGATE_CI_KEY, a secret: never printed). Each is set
only when its input is given, so a job's own variables of those names stay in force.

Outputs (`$GITHUB_OUTPUT`): run_id, gate, exit_code, reports_dir, artifact_name,
comment_file, summary_file. This step itself always succeeds once it has run termgate;
the action's last step exits with `exit_code`, so the upload and the comment happen first.

`retries` re-runs an incomplete run (exit 5: errored items, such as an endpoint that is
down) after `retry-delay` seconds; a harness rerun asks again only for the errored items
(the replies already received are cached in the store). The job summary is appended to
`$GITHUB_STEP_SUMMARY` once, from the last attempt.

Standard library only: it runs on the runner's Python, before or without termgate's.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
import uuid
from pathlib import Path

COMMANDS = ("evaluate", "harness")
# input -> termgate flag; which command takes it (None: both)
FLAGS = (("generated", "--generated", "evaluate"), ("prompt", "--prompt", "harness"),
         ("model", "--model", "harness"), ("base-url", "--base-url", "harness"),
         ("callable", "--callable", "harness"), ("baseline", "--baseline", None),
         ("thresholds", "--thresholds", None), ("corpus", "--corpus", None), ("qrels", "--qrels", None),
         ("drift-judge", "--drift-judge", None), ("domain", "--domain", None),
         ("name", "--name", None), ("prompt-version", "--prompt-version", None))
REPORTS = {"--json": "report.json", "--html": "report.html", "--junit": "junit.xml", "--summary": "summary.md",
           "--pr-comment": "comment.md"}
SECRET_FLAGS = {"--base-url"}  # may hold credentials (https://user:KEY@host): never echoed
_KEYWORD_PASSWORD = re.compile(r"(?:^|[\s=])password\s*=", re.IGNORECASE)  # `--db 'host=h password=PW'`: never echoed
MAX_RETRIES = 10


def workflow_data(text: str) -> str:
    """Text as a workflow command's message: `%`, CR and LF encoded, so nothing in it can
    end the command or start another."""
    return str(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


class InputProblem(Exception):
    """An input the action cannot use: one ::error line, exit code 2 (as termgate's own)."""


def value(name: str) -> str:
    return os.environ.get("INPUT_" + name.upper().replace("-", "_"), "").strip()


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "run"


def event() -> dict:
    path = os.environ.get("GITHUB_EVENT_PATH")
    try:
        return json.loads(Path(path).read_text(encoding="utf-8")) if path else {}
    except (OSError, ValueError):
        return {}


def author() -> str:
    """The `author` input, else the pull request's author (so four-eyes holds: they cannot
    approve their own change), else the actor who started the workflow. A login termgate's
    names do not allow is spelled with what they do: `dependabot[bot]` is `dependabot+bot`."""
    if value("author"):
        return value("author")
    pr = event().get("pull_request") or {}
    login = (pr.get("user") or {}).get("login") or os.environ.get("GITHUB_ACTOR", "")
    return re.sub(r"[^A-Za-z0-9._@+-]", "-", re.sub(r"\[bot\]$", "+bot", login))


def command_line(reports: Path) -> list[str]:
    command = value("command") or "evaluate"
    if command not in COMMANDS:
        raise InputProblem(f"command: {command!r} is not evaluate or harness")
    if not value("golden"):
        raise InputProblem("golden: give the golden set (a JSONL file in the repository)")
    argv = [os.environ.get("TERMGATE_BIN") or "termgate", command, "--golden", value("golden")]
    for name, flag, only in FLAGS:
        given = value(name)
        if given and only not in (None, command):
            raise InputProblem(f"{name}: goes with command {only}, not {command}")
        if given:
            argv += [flag, given]
    if author():
        argv += ["--author", author()]
    for flag, filename in REPORTS.items():
        argv += [flag, str(reports / filename)]
    try:
        return argv + shlex.split(value("extra-args"))
    except ValueError as exc:
        raise InputProblem(f"extra-args: {exc} (quote as a shell would)") from None


def count(name: str, default: str, kind, limit: float) -> float:
    raw = value(name) or default
    try:
        number = kind(raw)
    except ValueError:
        number = -1
    if not 0 <= number <= limit:
        raise InputProblem(f"{name}: {raw!r} is not a number from 0 to {limit:g}")
    return number


def _redact_text():
    """termgate's one rule for secrets in URLs (termgate/redact.py: standard library only),
    read from the action's own folder, so the log hides what termgate itself hides: the user
    info of every URL and every query value not known to be harmless (`--db
    postgresql://ci:PW@h/db`, `--base-url=https://u:KEY@h/v1?pw=…` in extra-args)."""
    import importlib.util

    path = Path(__file__).resolve().parents[3] / "termgate" / "redact.py"
    try:
        spec = importlib.util.spec_from_file_location("termgate_action_redact", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.redact_text
    except (OSError, ImportError, AttributeError, SyntaxError):  # not where it belongs: hide every URL whole
        return lambda text: re.sub(r"://\S+", "://***", text)


def shown(argv: list[str]) -> str:
    """The command line as the log shows it: the value of a flag that may hold credentials
    as `***`, and every URL in any other argument redacted."""
    redact = _redact_text()
    return shlex.join("***" if i and argv[i - 1] in SECRET_FLAGS or _KEYWORD_PASSWORD.search(a) else redact(a)
                      for i, a in enumerate(argv))


def run_termgate(argv: list[str], retries: int, delay: float) -> int:
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_STEP_SUMMARY"}  # appended once, below
    for name, variable in (("db", "TERMGATE_DB"), ("trust-root", "TERMGATE_TRUST_ROOT"), ("ci-key", "TERMGATE_CI_KEY")):
        if value(name):
            env[variable] = value(name)
    env.pop("INPUT_CI_KEY", None)  # the key travels once, under its own name
    for attempt in range(retries + 1):
        print(f"termgate action: {shown(argv)}", flush=True)
        try:
            code = subprocess.call(argv, env=env)
        except OSError as exc:
            print(f"::error title=termgate action::{workflow_data(f'cannot run {argv[0]}: {exc.strerror or exc}')}",
                  flush=True)
            return 2
        if code != 5 or attempt == retries:
            return code
        print(f"::warning title=termgate incomplete::exit 5 (errored items, e.g. an endpoint down): retrying in "
              f"{delay:g} s (retry {attempt + 1} of {retries})", flush=True)
        time.sleep(delay)
    return code


def set_outputs(values: dict[str, str]) -> None:
    path = os.environ.get("GITHUB_OUTPUT")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as out:
        for key, text in values.items():
            if "\n" in text or "\r" in text:
                delimiter = f"ghadelimiter_{uuid.uuid4()}"
                out.write(f"{key}<<{delimiter}\n{text}\n{delimiter}\n")
            else:
                out.write(f"{key}={text}\n")


def append_step_summary(summary: Path) -> None:
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target or not summary.is_file():
        return
    try:
        with open(target, "a", encoding="utf-8") as out:
            if out.tell():
                out.write("\n")
            out.write(summary.read_text(encoding="utf-8"))
    except OSError as exc:
        print(f"::warning title=termgate action::cannot append the job summary: {workflow_data(exc.strerror or exc)}",
              flush=True)


def report_facts(report: Path) -> tuple[str, str]:
    """(run id, gate decision) from the JSON report; empty when termgate wrote none."""
    try:
        data = json.loads(report.read_text(encoding="utf-8"))
        return str(data.get("evaluation_id") or ""), str((data.get("gate") or {}).get("decision") or "")
    except (OSError, ValueError, AttributeError):
        return "", ""


def main() -> int:
    label = slug(value("name") or Path(value("golden") or "termgate").stem)
    reports = Path(value("reports-dir") or f"termgate-reports/{label}")
    outputs = {"run_id": "", "gate": "", "exit_code": "2", "reports_dir": str(reports),
               "artifact_name": value("artifact-name") or f"termgate-{label}", "comment_file": "", "summary_file": ""}
    try:
        argv = command_line(reports)
        retries = int(count("retries", "0", int, MAX_RETRIES))
        delay = count("retry-delay", "30", float, 3600)
    except InputProblem as exc:
        print(f"::error title=termgate action::{workflow_data(exc)}", flush=True)
        set_outputs(outputs)
        return 0
    reports.mkdir(parents=True, exist_ok=True)
    for filename in REPORTS.values():  # never read a report an earlier run left behind
        (reports / filename).unlink(missing_ok=True)
    code = run_termgate(argv, retries, delay)
    run_id, gate = report_facts(reports / REPORTS["--json"])
    comment, summary = reports / REPORTS["--pr-comment"], reports / REPORTS["--summary"]
    append_step_summary(summary)
    outputs.update(run_id=run_id, gate=gate, exit_code=str(code),
                   comment_file=str(comment) if comment.is_file() else "",
                   summary_file=str(summary) if summary.is_file() else "")
    set_outputs(outputs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
