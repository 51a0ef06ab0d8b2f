"""Write output files whole or not at all."""

from __future__ import annotations

import os
import re
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["PendingFile", "write_atomically"]

# terminal controls and BiDi overrides in UTF-8 (a report on standard output may reach a
# terminal); inside JSON strings or markup text they become escapes of the same character
_TERMINAL = re.compile(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]"
                       rb"|\xe2\x81[\xa6-\xa9]")
_ESCAPES = {"json": lambda c: f"\\u{c:04x}".encode(), "markup": lambda c: f"&#x{c:x};".encode()}


class PendingFile:
    """A temporary file beside `path`, renamed into place by commit(), removed by discard().
    For `-` the temporary file is private and commit() copies it to standard output."""

    def __init__(self, path: str | Path, stdout_escape: str = "markup"):
        """`stdout_escape`: how a terminal control in the data is written on standard
        output, "json" (\\u009b) or "markup" (&#x9b;, HTML and XML)."""
        self.to_stdout = str(path) == "-"
        self._escape = _ESCAPES[stdout_escape]
        # through a symbolic link, the file it names is written, never the link replaced
        self.path = Path(path) if self.to_stdout else Path(os.path.realpath(Path(path).absolute()))
        if not self.to_stdout:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        folder = tempfile.gettempdir() if self.to_stdout else self.path.parent
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".partial", dir=folder)
        self._tmp = Path(tmp)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; reports are ordinary files
        self._handle = os.fdopen(fd, "wb")

    def write(self, data: bytes | str | Iterable[bytes]) -> None:
        if isinstance(data, str):
            data = data.encode("utf-8")
        if isinstance(data, bytes):
            self._handle.write(data)
        else:
            for chunk in data:
                self._handle.write(chunk)

    def close(self) -> None:
        """Flush and close the temporary file (where a full disk shows)."""
        self._handle.close()

    def commit(self) -> None:
        self._handle.close()
        if self.to_stdout:
            if sys.stdout is None:  # started with no standard output (`>&-`): dropped, as by a gone reader
                self._tmp.unlink(missing_ok=True)
                return
            try:
                escape = self._escape
                with self._tmp.open("rb") as source:
                    for line in source:  # a UTF-8 character never spans a newline byte
                        sys.stdout.buffer.write(_TERMINAL.sub(
                            lambda m: escape(ord(m.group().decode("utf-8"))), line))
                sys.stdout.buffer.flush()
            finally:
                self._tmp.unlink(missing_ok=True)
            return
        os.replace(self._tmp, self.path)

    def discard(self) -> None:
        self._handle.close()
        self._tmp.unlink(missing_ok=True)


def write_atomically(path: str | Path, data: bytes | str | Iterable[bytes]) -> None:
    """Write everything to a temporary file, then rename it into place."""
    pending = PendingFile(path)
    try:
        pending.write(data)
    except BaseException:
        pending.discard()
        raise
    pending.commit()
