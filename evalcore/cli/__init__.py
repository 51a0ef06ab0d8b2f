"""The `evalcore` command line: thin click commands over the library (SPEC §3 exit codes)."""

from __future__ import annotations

import click

from .. import __version__
from .drift import drift_group
from .evaluate import evaluate_command
from .harness import harness_command
from .prompt_eval import prompt_eval_group
from .signoff import audit_group, signoff_command, users_group
from .runs import compare_command, demo_command, gate_command, runs_command, show_command

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="evalcore")
def main() -> None:
    """Score LLM query expansions against a golden set, compare with a baseline, gate CI.

    Exit codes: 0 releasable, 1 not releasable, 2 usage or input error,
    3 awaiting human sign-off, 4 sign-off refused.

    Example: evalcore evaluate --golden data/demo/medical/golden.jsonl
    --generated data/demo/medical/v2-candidate.jsonl
    """



for _command in (evaluate_command, runs_command, show_command, compare_command, gate_command,
                 demo_command, drift_group, users_group, signoff_command, audit_group,
                 harness_command, prompt_eval_group):
    main.add_command(_command)
