"""Reading input files: text decoding, JSONL lines, line-numbered problems."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import ValidationError

from ..errors import InputError, Problem

BOM = "\ufeff"
MAX_SCANNED = 10_000


class ProblemCollector:
    """Gathers problems; stops parsing once there are more than enough to show."""

    def __init__(self, path: str):
        self.path = path
        self.problems: list[Problem] = []

    def add(self, line: int, field: str, message: str) -> None:
        self.problems.append(Problem(self.path, line, field, message))

    @property
    def full(self) -> bool:
        """Past this many problems, stop parsing: the count shown is then a lower bound."""
        return len(self.problems) >= MAX_SCANNED

    def raise_if_any(self) -> None:
        if self.problems:
            raise InputError(self.problems)


def read_text(path: Path, label: str) -> str:
    """UTF-8 text with a leading BOM removed; undecodable bytes are an input error."""
    shown = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError([Problem(shown, 0, label, "file not found")]) from None
    except IsADirectoryError:
        raise InputError([Problem(shown, 0, label, "is a directory, expected a file")]) from None
    except OSError as exc:
        raise InputError([Problem(shown, 0, label, f"cannot read: {exc.strerror}")]) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError([Problem(shown, line, "encoding",
                                  f"not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
                                  "save the file as UTF-8")]) from None
    return text[1:] if text.startswith(BOM) else text


def jsonl_lines(text: str) -> list[str]:
    """JSONL lines: split on \\n only (U+2028, U+0085... are valid inside JSON strings)."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def toml_error_line(exc: Exception) -> int:
    """tomllib on Python 3.11 puts the line only in its message: '... (at line 2, column 5)'."""
    found = re.search(r"at line (\d+)", str(exc))
    return int(found.group(1)) if found else 1


def _field_path(loc: tuple) -> str:
    """('expected_expansions', 1, 'min_weight') -> 'expected_expansions[1].min_weight'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "json"


def pydantic_problems(exc: ValidationError, sink: ProblemCollector, line: int) -> None:
    for err in exc.errors(include_url=False):
        kind = err["type"]
        if kind == "json_invalid":
            sink.add(line, "json", f"malformed JSON ({err['ctx'].get('error', err['msg'])})")
        elif kind == "missing":
            sink.add(line, _field_path(err["loc"]), "required field is missing")
        elif kind == "model_type" or (kind.endswith("_type") and not err["loc"]):
            sink.add(line, _field_path(err["loc"]), "expected a JSON object")
        else:
            got = json.dumps(err.get("input"), ensure_ascii=False, default=str)
            if len(got) > 60:
                got = got[:57] + "..."
            sink.add(line, _field_path(err["loc"]), f"{err['msg'].lower()} (got {got})")


def line_of(text: str, needle: str) -> int:
    index = text.find(needle)
    return text.count("\n", 0, index) + 1 if index >= 0 else 1


