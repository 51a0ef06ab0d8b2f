"""The `termgate` command line: thin click commands over the library (SPEC §3 exit codes)."""

from __future__ import annotations

import importlib

import click

from .. import __version__

__all__ = ["main"]

# Each command's module loads only when the command runs (or help lists it), so
# `termgate evaluate` does not pay for the sign-off, harness or calibration imports.
COMMANDS = {
    "evaluate": ("evaluate", "evaluate_command"), "runs": ("runs", "runs_command"),
    "show": ("runs", "show_command"), "compare": ("runs", "compare_command"), "gate": ("runs", "gate_command"),
    "demo": ("runs", "demo_command"), "drift": ("drift", "drift_group"), "users": ("signoff", "users_group"),
    "signoff": ("signoff", "signoff_command"), "audit": ("signoff", "audit_group"),
    "harness": ("harness", "harness_command"), "replies": ("replies", "replies_command"),
    "prompt-eval": ("prompt_eval", "prompt_eval_group"), "store": ("store", "store_group"),
    "verdict": ("verdict", "verdict_command"),
    "golden": ("golden", "golden_group"), "policy": ("policy", "policy_group"),
    "trust": ("trust", "trust_group"), "keys": ("trust", "keys_group"), "attest": ("attest", "attest_group"),
    "retrieval": ("retrieval", "retrieval_group"),
    "dashboard": ("dashboard", "dashboard_command"), "doctor": ("doctor", "doctor_command"),
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in COMMANDS:
            return None
        module, attr = COMMANDS[name]
        return getattr(importlib.import_module(f"{__name__}.{module}"), attr)

    def main(self, *args, **kwargs):
        """A reader that leaves (`| head -1`) changes nothing: the command finishes and exits
        with its own code, with no traceback (cli.pipes)."""
        from .pipes import survive_closed_pipes

        survive_closed_pipes()
        return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context):
        """Ctrl-C anywhere (while a command's modules load, too) is one line and exit 130, not
        click's 'Aborted!' and exit 1, which a pipeline would read as a failed gate. Commands
        with more to say catch it first (evaluate, harness, gate --wait)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            raise SystemExit(130) from None
        except Exception as exc:  # a store failing under a command that did not expect it: one line
            from .common import EXIT_INPUT, echo, store_failure

            line = store_failure(exc)
            if line is None:
                raise
            echo(line, err=True)
            raise SystemExit(EXIT_INPUT) from None


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(__version__, prog_name="termgate")
def main() -> None:
    """Score LLM query expansions against a golden set, compare with a baseline, gate CI.

    Exit codes: 0 releasable, 1 not releasable, 2 usage or input error,
    3 awaiting human sign-off, 4 sign-off refused, 5 incomplete (errored items; a rerun
    retries exactly those), 130 interrupted (Ctrl-C; one line, never a half-written file).

    Example: termgate evaluate --golden data/demo/medical/golden.jsonl
    --generated data/demo/medical/v2-candidate.jsonl
    """


