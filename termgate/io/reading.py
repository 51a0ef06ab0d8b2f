"""Reading input files: text decoding, JSONL lines, line-numbered problems."""

from __future__ import annotations

import json
import math
import re
from json.decoder import scanstring
from pathlib import Path

import orjson
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




class RepeatedKey(Exception):
    """A key repeated within one JSON object (SPEC §5: an input error, never last-one-wins).

    Not a ValueError, so a reader's `except ValueError` for malformed JSON lets it through.
    `field` is the key's path (`expected_expansions[1].term`); `offset` is where its repeat
    starts in the text (-1 when unknown)."""

    def __init__(self, key: str, field: str, offset: int):
        super().__init__(f"{field}: repeated key {key!r}")
        self.key, self.field, self.offset = key, field, offset

    def line_in(self, text: str) -> int:
        """The line of the repeat in `text` (the whole text the offset is in)."""
        return text.count("\n", 0, self.offset) + 1 if self.offset >= 0 else 1

    def add_to(self, sink: ProblemCollector, line: int) -> None:
        sink.add(line, self.field, f"repeated key {self.key!r}")


class _Repeat(Exception):
    pass


def _unique_pairs(pairs: list[tuple[str, object]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Repeat
    return out


_NOT_JSON = re.compile(r'"(?:\\.|[^"\\])*"|(-?Infinity|NaN)|(-?\d[\d.eE+-]*)')
"""A string (skipped), NaN or Infinity, or a number (too large for a float: 1e400)."""


class _NotFinite(Exception):
    pass


def _no_constant(name: str) -> float:
    raise _NotFinite


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotFinite
    return value


def _not_finite_error(text: str) -> json.JSONDecodeError:
    """json's own error, at the first NaN, Infinity or out-of-range number outside a string."""
    for match in _NOT_JSON.finditer(text):
        constant, number = match.groups()
        if constant or (number and math.isinf(float(number))):
            return json.JSONDecodeError(f"{constant or number} is not a JSON number", text, match.start())
    return json.JSONDecodeError("a number out of range", text, 0)


def loads_strict(text: str | bytes, **options) -> object:
    """json.loads with a key repeated within any object, at any depth, an error, and NaN,
    Infinity or a number too large for a float malformed (JSON has none; SPEC §5): the one
    strict loader every input reader uses (directly, or through loads_line, whose orjson
    refuses them too). Raises RepeatedKey naming the first repeat in the text, or json's
    ValueError (a JSONDecodeError with its line) when malformed."""
    options = {"parse_constant": _no_constant, "parse_float": _finite, **options}
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs, **options)
    except _Repeat:
        raise find_repeated_key(text if isinstance(text, str) else text.decode("utf-8")) from None
    except _NotFinite:
        raise _not_finite_error(text if isinstance(text, str) else text.decode("utf-8")) from None


def loads_line(raw: str | bytes) -> object:
    """One JSONL line as strict JSON (orjson: no NaN, no trailing commas), a repeated key
    raising RepeatedKey as in loads_strict. orjson keeps the last of two equal keys, so the
    line is checked by unique_keys and, only when that cannot vouch, by loads_strict."""
    obj = orjson.loads(raw)
    if not unique_keys(raw, obj):
        loads_strict(raw)  # raises RepeatedKey when there is one (else a false alarm: an escaped colon)
    return obj


def unique_keys(raw: str | bytes, obj: object) -> bool:
    """True when the text `raw`, parsed as `obj`, repeats no key (False: it may).

    Every key in the text carries one colon, and so does every colon inside a string; a
    repeated key is dropped from `obj`, so re-serialised it has fewer colons than the text.
    A colon written as an escape (\\u003a) would hide one: such text is never vouched for."""
    if isinstance(raw, bytes):
        return raw.count(b":") == orjson.dumps(obj).count(b":") and b"\\u003" not in raw
    return raw.count(":") == orjson.dumps(obj).count(b":") and "\\u003" not in raw


_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:Infinity|\d[\d.eE+-]*)|true|false|null|NaN")


def find_repeated_key(text: str) -> RepeatedKey:
    """The first key repeated within one object of `text`, by document order (called once
    json has found there is one; the hook it calls does not know where)."""
    try:
        _walk(text, 0, "")
    except RepeatedKey as found:
        return found
    except (IndexError, ValueError, RecursionError):
        pass
    return RepeatedKey("?", "json", -1)


def _walk(text: str, pos: int, path: str) -> int:
    """Skip one JSON value starting at or after `pos`, returning where it ends; raises
    RepeatedKey at the first repeat inside it."""
    pos = _SPACE.match(text, pos).end()
    opener = text[pos]
    if opener == '"':
        return scanstring(text, pos + 1)[1]
    if opener not in "{[":
        return _SCALAR.match(text, pos).end()
    closer, index, seen = ("}" if opener == "{" else "]"), 0, set()
    pos = _SPACE.match(text, pos + 1).end()
    if text[pos] == closer:
        return pos + 1
    while True:
        if opener == "{":
            pos = _SPACE.match(text, pos).end()
            start = pos
            key, pos = scanstring(text, pos + 1)
            where = f"{path}.{key}" if path else key
            if key in seen:
                raise RepeatedKey(key, where, start)
            seen.add(key)
            pos = _SPACE.match(text, pos).end() + 1  # the colon
        else:
            where = f"{path}[{index}]"
            index += 1
        pos = _SPACE.match(text, _walk(text, pos, where)).end()
        if text[pos] == closer:
            return pos + 1
        pos += 1  # the comma
