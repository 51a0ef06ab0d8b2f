"""What an approver reads of a proposed golden revision (issue 32 item 3; docs/golden.md): the
whole change from the golden set's latest approved revision, as the chain stores its text, to
the proposed one. A proposal made over a file that is not that revision names the file, and
its changes are in the diff too, so a base edited by hand (forbidden terms or critical flags
removed, never approved) cannot hide behind a short list of verdict changes."""

from __future__ import annotations

import difflib

__all__ = ["review_diff"]


def _lines(text: str) -> list[str]:
    """Lines as the loader numbers them (ending at \\n only: a NEL inside a string is no break)."""
    parts = text.removeprefix("\ufeff").replace("\r\n", "\n").split("\n")
    return parts[:-1] if parts[-1] == "" else parts


def review_diff(name: str, base: str | None, base_text: str | None, new_text: str, new_label: str, *,
                proposed_over: str | None = None, summary: str = "", note: str = "") -> str:
    """The diff an approver reads: a head saying what the base is (the approved revision
    `base`, or none: the first revision, shown as a whole new file), the file the proposal
    was made over when it is not that base, `summary` (the verdicts' changes per query),
    then the changed lines from the base's text to the new text, with no context."""
    if base is None:
        head = [f"first revision of {name!r}: no approved revision yet, so the whole file is new"]
        old_label = "/dev/null"
    else:
        head = [f"base: approved revision {base[:12]} of {name!r}"]
        old_label = f"{name}@{base[:12]} (approved)"
    if note:
        head.append(note)
    if proposed_over is not None:
        head.append(f"proposed over {proposed_over[:12]}, which is not approved: its changes from the approved "
                     "revision are in the diff below too")
    if summary:
        head += ["", summary.rstrip("\n")]
    old = _lines(base_text or "")
    new = _lines(new_text)
    body = list(difflib.unified_diff(old, new, old_label, new_label, n=0, lineterm=""))
    if not body:
        body = ["(no lines differ from the approved revision)"]
    return "\n".join(head + [""] + body) + "\n"
