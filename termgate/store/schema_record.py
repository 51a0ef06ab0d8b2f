"""What a store's migration record (`schema_migrations`) tells, when it no longer tells the truth."""

from __future__ import annotations

from ..errors import UsageError

__all__ = ["damaged_record", "newer_schema"]


def damaged_record(shown: str, current: int, version: int, exc: Exception) -> UsageError:
    """A store whose schema_migrations lost rows (deleted by hand, or a partial restore): the
    migration it then repeats meets its own tables. One line saying so and what to do."""
    text = " ".join(str(exc).split())
    return UsageError(f"--db {shown}: the store's migration record is damaged: schema_migrations says version "
                      f"{current}, yet migration {version} finds its work done ({text}); nothing was changed. "
                      "Restore the store from a backup, or have its owner put back the missing schema_migrations "
                      "rows (docs/deploy.md, \"A damaged migration record\")")


def newer_schema(shown: str, current: int, known: int, recorded: str | None) -> UsageError:
    """A store whose schema is newer than this termgate knows: install the version that
    recorded it (`recorded`: the latest termgate version in schema_migrations), or, when
    that is this version or no version was recorded (a row written by hand), a newer one."""
    from .. import __version__
    from ..text import terminal_safe

    by = (f"termgate {terminal_safe(recorded)} or later" if recorded and recorded != __version__
          else "a newer termgate")
    return UsageError(f"--db {shown}: the store's schema is version {current}, newer than this termgate "
                      f"{__version__} knows (version {known}); install {by}")
