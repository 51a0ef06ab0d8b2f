"""What a store's migration record (`schema_migrations`) tells, when it no longer tells the truth."""

from __future__ import annotations

from ..errors import UsageError

__all__ = ["damaged_record"]


def damaged_record(shown: str, current: int, version: int, exc: Exception) -> UsageError:
    """A store whose schema_migrations lost rows (deleted by hand, or a partial restore): the
    migration it then repeats meets its own tables. One line saying so and what to do."""
    text = " ".join(str(exc).split())
    return UsageError(f"--db {shown}: the store's migration record is damaged: schema_migrations says version "
                      f"{current}, yet migration {version} finds its work done ({text}); nothing was changed. "
                      "Restore the store from a backup, or have its owner put back the missing schema_migrations "
                      "rows (docs/deploy.md, \"A damaged migration record\")")
