"""Small builders for hand-made input files, shared by test_io.py and test_cli.py.

Not a conftest: plain functions, imported explicitly where used.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from pathlib import Path

# One problem line of SPEC §5: `FILE:LINE: FIELD: message`.
PROBLEM_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<field>[A-Za-z_][\w.\[\] ]*): (?P<message>.+)$")


def golden_row(query_id: str = "q1", query: str = "heart attack", expected: Iterable = ("mi",),
               **extra) -> dict:
    """A valid golden item; `expected` entries are terms or full expansion objects."""
    row = {
        "query_id": query_id,
        "query": query,
        "expected_expansions": [e if isinstance(e, dict) else {"term": e} for e in expected],
    }
    row.update(extra)
    return row


def write_lines(path: Path, lines: Iterable[str | dict | list]) -> Path:
    """Write one JSONL line per entry: dicts/lists are dumped, strings written as they are."""
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    path.write_text(text, encoding="utf-8")
    return path


def dumps(obj: object) -> str:
    return json.dumps(obj)
