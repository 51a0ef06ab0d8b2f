"""Where a Tantivy index lives on disk, and how it gets there atomically (issue 34).

An index lives in `<index_root>/<key>`, the key a SHA-256 over what decides its content
(the corpus hash, the tantivy version, the analyser and our layout version). A folder is
*complete* when it holds the marker `termgate-index.json` naming its key: only a complete
folder is ever opened.

A build writes into a temporary sibling (`.build-<key prefix>-<random>`), writes the marker
last, then `os.rename`s the folder into place. An interrupted build leaves at most a
temporary folder, which is never opened. Two processes building the same key at once both
succeed: the first rename wins and the other discards its copy and opens the winner's. A
folder at the key's name without the marker (made by hand, or by something else) is moved
aside and rebuilt. Temporary folders nothing has written to for `STALE_AFTER` seconds are
removed by the next build under the same root; younger ones may belong to a build in
progress and are left alone.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

__all__ = ["MARKER", "STALE_AFTER", "is_complete", "publish", "remove_stale"]

MARKER = "termgate-index.json"
STALE_AFTER = 15 * 60
"""Seconds since anything was written in a temporary folder before it counts as abandoned
(a build writes segment files all along, and builds of 100k documents take seconds)."""
_BUILD, _STALE = ".build-", ".stale-"


def is_complete(folder: Path, key: str) -> bool:
    """Whether `folder` holds a finished index for `key`."""
    try:
        marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(marker, dict) and marker.get("key") == key


def publish(root: Path, key: str, build: Callable[[Path], dict]) -> bool:
    """Make `root/key` a complete index folder, building it if needed. `build(folder)`
    writes an index into an empty folder and returns what the marker records beside the
    key. True when this call's build is the one in place (False: it was there already,
    or another process's rename won)."""
    final = root / key
    if is_complete(final, key):
        return False
    root.mkdir(parents=True, exist_ok=True)
    remove_stale(root)
    if final.exists() and not _move_aside(root, final, key):
        return False
    work = Path(tempfile.mkdtemp(prefix=f"{_BUILD}{key[:16]}-", dir=root))
    try:
        facts = build(work)
        _write_marker(work, {"key": key, **facts})
        try:
            os.rename(work, final)
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST) or not is_complete(final, key):
                raise
            shutil.rmtree(work, ignore_errors=True)  # another build won the race
            return False
        _sync_folder(root)
        return True
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def remove_stale(root: Path, now: float | None = None) -> list[Path]:
    """Remove temporary folders under `root` nothing has written to for STALE_AFTER
    seconds, and folders moved aside; returns those removed."""
    now = time.time() if now is None else now
    removed = []
    for entry in root.iterdir() if root.is_dir() else ():
        if entry.name.startswith(_STALE) or (entry.name.startswith(_BUILD)
                                               and now - _last_write(entry) > STALE_AFTER):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
    return removed


def _last_write(folder: Path) -> float:
    try:
        times = [folder.stat().st_mtime]
        times += [e.stat().st_mtime for e in folder.iterdir()]
    except OSError:  # removed meanwhile, or a file went: count it as written now
        return time.time()
    return max(times)


def _move_aside(root: Path, final: Path, key: str) -> bool:
    """Move an incomplete folder at the key's name out of the way (nothing opens an
    incomplete folder, so nothing reads it). False when the folder turned out complete:
    another build published it meanwhile, and it stays."""
    if is_complete(final, key):
        return False
    aside = Path(tempfile.mkdtemp(prefix=_STALE, dir=root)) / final.name
    try:
        os.rename(final, aside)
    except FileNotFoundError:  # another process moved it first
        pass
    if is_complete(aside, key):  # published between the check and the move: put it back
        try:
            os.rename(aside, final)
            return False
        except OSError:
            pass  # a third build published again meanwhile; this copy goes
    shutil.rmtree(aside.parent, ignore_errors=True)
    return True


def _write_marker(folder: Path, facts: dict) -> None:
    with open(folder / MARKER, "w", encoding="utf-8") as out:
        json.dump(facts, out, sort_keys=True)
        out.flush()
        os.fsync(out.fileno())
    _sync_folder(folder)


def _sync_folder(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
