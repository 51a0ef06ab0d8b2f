"""Where outputs may go (SPEC §5): regular files or `-` (standard output), never an input,
the store, a device, a FIFO or one file twice. Checked before any work, so a refused
command destroys nothing."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from ..errors import UsageError

__all__ = ["STDOUT", "check_outputs"]

STDOUT = "-"

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _keys(path: str) -> set[object]:
    """What names this file: its resolved path (links followed, `..` applied, whether or not
    it exists yet) and, when it exists, its (device, inode)."""
    resolved = os.path.realpath(Path(path).absolute())
    keys: set[object] = {resolved}
    try:
        st = os.stat(resolved)
    except OSError:
        return keys
    keys.add((st.st_dev, st.st_ino))
    return keys


def _label(flag: str) -> str:
    """`--json`; `$GITHUB_STEP_SUMMARY` for an output named by the environment, and a file
    named by the settings ('the config file', '[drift] coefficients') as it is."""
    if flag.startswith("trec_"):  # the three run files of --trec-runs DIR
        return "--trec-runs"
    return flag if flag.startswith("$") or " " in flag else f"--{flag}"


def check_outputs(outputs: Mapping[str, str | None], inputs: Mapping[str, str | None],
                  store: str | None = None) -> None:
    """UsageError unless every output (flag -> path) is a regular file or `-`, none is an
    input (flag -> path) or the store (the same file by device and inode or by resolved
    path: hard and symbolic links and `..` included, a store not created yet too), no two
    outputs name one file and `-` is given once. A flag starting with `$` names an
    environment variable (`$GITHUB_STEP_SUMMARY`) and is shown as it is."""
    given = {flag: path for flag, path in outputs.items() if path}
    to_stdout = [flag for flag, path in given.items() if path == STDOUT]
    if len(to_stdout) > 1:
        raise UsageError(f"{' and '.join(_label(f) for f in to_stdout)} both write to standard output (-): "
                         "give all but one of them a file")
    taken: dict[object, str] = {}
    chained = {f: p for f, p in inputs.items() if p}
    for flag, path in [*chained.items(), *([("db", store), ("db", f"{store}.wal")] if store else [])]:
        for key in _keys(path):  # the store's write-ahead log is the store too
            taken[key] = f"{_label(flag)} {path}"
    for flag, path in given.items():
        if path == STDOUT:
            continue
        try:
            st = os.stat(os.path.realpath(Path(path).absolute()))
        except FileNotFoundError:
            st = None
        except OSError as exc:
            raise UsageError(f"cannot write {_label(flag)} {path}: {exc.strerror}") from None
        if st is not None and not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{_label(flag)} {path}: is {_kind(st.st_mode)}, not a regular file; reports are written "
                             "only to regular files or - (standard output), and nothing there was replaced")
        keys = _keys(path)
        clash = next((taken[key] for key in keys if key in taken), None)
        if clash is not None:
            raise UsageError(f"{_label(flag)} {path}: is the same file as {clash}; "
                             "write the report somewhere else (nothing was written)")
        for key in keys:
            taken[key] = f"{_label(flag)} {path}"
