"""The TermgateError family. Messages tell the user what to do; the CLI prints them."""

from __future__ import annotations

from dataclasses import dataclass

MAX_PROBLEMS = 20


@dataclass(frozen=True)
class Problem:
    """One input problem: where it is and what is wrong."""

    file: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.field}: {self.message}"


class TermgateError(Exception):
    """Base class of every error termgate raises on purpose."""


class InputError(TermgateError, ValueError):
    """One or more problems in files a user gave us (exit code 2)."""

    def __init__(self, problems: list[Problem]):
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems[:MAX_PROBLEMS]))

    def lines(self) -> list[str]:
        shown = [str(p) for p in self.problems[:MAX_PROBLEMS]]
        if len(self.problems) > MAX_PROBLEMS:
            more = len(self.problems) - MAX_PROBLEMS
            shown.append(f"... and {more}{'+' if len(self.problems) >= 10_000 else ''} more problems")
        return shown


class UsageError(TermgateError):
    """A command used wrongly: unknown run id, conflicting options (exit code 2)."""


class UnknownRunError(UsageError):
    """A run id that is not in the store."""


class StoreBusyError(TermgateError):
    """Another process held the DuckDB store for longer than the retry window."""


class SignoffRefused(TermgateError):
    """A sign-off that is not permitted (exit 4); nothing is recorded."""


class ChainMoved(SignoffRefused):
    """A record that names the head it `extends` met another head: records were appended
    since its writer verified the chain. Nothing was recorded; verify again and retry."""


class ChainBroken(TermgateError):
    """The audit chain failed verification (or no longer holds --expect-head), so nothing was
    appended to it: no run, no account change (SPEC §4). `evaluate` and `harness` exit 1,
    `users` 4."""
