"""Write output files whole or not at all."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

__all__ = ["PendingFile", "write_atomically"]


class PendingFile:
    """A temporary file beside `path`, renamed into place by commit(), removed by discard()."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".partial", dir=self.path.parent)
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
