"""A reader that stops reading (`termgate evaluate | head -1`) does not change what a command
does or the exit code it gives (SPEC §3).

Python raises BrokenPipeError on the next write to a pipe whose reader has gone, and
click turns that into exit 1, so the exit code depended on whether the command had written
everything before the reader left: 1 or the gate's own code, at random, and 1 reads as
"not releasable". Here a standard stream that is a pipe or a socket is rewritten so that,
once its reader is gone, what is written to it is dropped quietly: the command finishes
its work (the run is stored, the reports written) and exits with its own code. This is
what CI needs of a gate; the common convention of a CLI (exit at once, quietly) would lose
the gate's code.
"""

from __future__ import annotations

import io
import os
import stat
import sys

__all__ = ["survive_closed_pipes"]


class _PipeWriter(io.RawIOBase):
    """File descriptor `fd`, which after a broken pipe points at /dev/null."""

    def __init__(self, fd: int):
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def write(self, data) -> int:
        try:
            return os.write(self._fd, data)
        except BrokenPipeError:
            sink = os.open(os.devnull, os.O_WRONLY)
            os.dup2(sink, self._fd)  # later writes, a child's too, go nowhere
            os.close(sink)
            return len(data)


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _rewrap(stream):
    """A text stream like `stream` (encoding, errors, newline, line buffering) over a
    _PipeWriter on its file descriptor."""
    stream.flush()
    fd = stream.fileno()
    buffered = io.BufferedWriter(_PipeWriter(fd))
    return io.TextIOWrapper(buffered, encoding=stream.encoding, errors=stream.errors,
                            line_buffering=stream.line_buffering, write_through=False)


def survive_closed_pipes() -> None:
    """Rewrite sys.stdout and sys.stderr as above when each is this process's own stream
    on a pipe or socket (a test runner's captured streams are left alone)."""
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        original = getattr(sys, f"__{name}__")
        if stream is None or stream is not original:
            continue
        try:
            fd = stream.fileno()
        except (OSError, ValueError, io.UnsupportedOperation):
            continue
        if _is_pipe(fd):
            setattr(sys, name, _rewrap(stream))
