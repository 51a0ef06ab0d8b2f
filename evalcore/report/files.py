"""Write output files whole or not at all."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["PendingFile", "write_atomically"]


class PendingFile:
    """A temporary file beside `path`, renamed into place by commit(), removed by discard().
    For `-` the temporary file is private and commit() copies it to standard output."""

    def __init__(self, path: str | Path):
        self.to_stdout = str(path) == "-"
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
            try:
                with self._tmp.open("rb") as source:
                    shutil.copyfileobj(source, sys.stdout.buffer)
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
