"""`termgate doctor`: what this installation has, and the one step for each missing part."""

from __future__ import annotations

import sys

import click

from ..text import terminal_safe
from .common import echo, run_cli

__all__ = ["doctor_command"]


@click.command("doctor")
def doctor_command():
    """Say what is installed and what is missing: the drift judge's model, tokenizers and
    WordNet, the dashboard, the PostgreSQL client, Chromium for screenshots; which
    drift judge `evaluate` uses by default; and the LLM endpoint named, if any (there is no
    default one).

    Exit 0 when everything `evaluate` and `gate` use by default is here (the embedding drift
    judge included), 1 when something is missing (an endpoint, for a configured llm or hybrid
    drift judge); optional parts never change the exit code.

    Example: termgate doctor
    """
    from .. import doctor
    from ..config import load_settings

    found = doctor.checks()
    echo(doctor.python_line())
    width = max(len(c.part) for c in found)
    for c in found:
        state = "ok" if c.found else ("optional" if c.optional else "MISSING")
        echo(f"{state:8}  {c.part:{width}}  {c.detail}" + ("" if c.found else f"  (for {c.needed_by})"))
    judge, why = doctor.default_judge(found)
    settings = run_cli(load_settings)
    configured = settings.drift.get("judge")
    known = True
    if configured:
        from ..drift.judge import JUDGE_NAMES
        known = configured in JUDGE_NAMES
        state = "" if known else f" — not a drift judge (known: {', '.join(JUDGE_NAMES)}): evaluate refuses it"
        echo(f"drift judge: {terminal_safe(str(configured))}, as configured ([drift] judge or TERMGATE_DRIFT_JUDGE)"
             f"{state}; without that setting: {judge} ({why})")
    else:
        echo(f"drift judge by default: {judge} ({why})")
    endpoint = doctor.llm_endpoint(dict(settings.llm))
    if endpoint and endpoint.startswith("unusable ("):
        echo(f"LLM endpoint: {terminal_safe(endpoint)}")
    elif endpoint:
        echo(f"LLM endpoint: {terminal_safe(endpoint)} (harness --prompt, prompt-eval and the llm drift judge call it "
             "unless given --base-url)")
    else:
        echo("LLM endpoint: none named (there is no default one): harness --prompt and prompt-eval need "
             "--base-url, OPENAI_BASE_URL or [llm] base_url; the llm drift judge OPENAI_BASE_URL or [llm] base_url")
        known = known and configured not in ("llm", "hybrid")
    sys.exit(0 if known and all(c.found or c.optional for c in found) else 1)
