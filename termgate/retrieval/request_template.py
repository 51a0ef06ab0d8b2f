"""The request template and the response path of an engine over HTTP (docs/search-engines.md).

A *template* is a JSON document, the body of every request: a string value that is exactly
`"{{query}}"` or `"{{depth}}"` becomes the query text or the depth; a list element
`{"{{each term}}": SUB}` becomes one copy of SUB per term, with `"{{term}}"` and
`"{{weight}}"` inside. Values go in as JSON values, never spliced into text. A *response
path* (`hits.hits[*]._id`) selects values from the answer: keys joined by dots, `[*]` for
every element of a list, `[N]` for one.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence

from ..errors import TermgateError, UsageError

__all__ = ["EACH", "EngineConfigError", "SearchEngineError", "load_template", "check_template", "render_template",
           "check_path", "select_path"]

EACH = "{{each term}}"
_VARIABLE = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_TOP_VARIABLES = ("query", "depth")
_TERM_VARIABLES = ("term", "weight")
_STEP = re.compile(r"\.?([^.\[\]]+)|\[(\*|\d+)\]")


class EngineConfigError(UsageError, ValueError):
    """The engine's configuration cannot work (a bad template, URL, header or preset): exit 2."""


class SearchEngineError(TermgateError):
    """The engine failed during a search or answered what cannot be read; nothing is ranked."""


def _variable(text: str, where: str, known: tuple[str, ...]) -> str | None:
    """The variable a template string stands for, or None for a plain string."""
    if "{{" not in text and "}}" not in text:
        return None
    match = _VARIABLE.fullmatch(text)
    if not match:
        raise EngineConfigError(f"request template: {where}: a variable stands for a whole value "
                                f'(write "{{{{query}}}}" alone, not inside other text)')
    if match.group(1) not in known:
        raise EngineConfigError(f"request template: {where}: unknown variable {text} "
                                f"(known here: {', '.join('{{' + k + '}}' for k in known)})")
    return match.group(1)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _check(node, where: str, in_each: bool) -> None:
    """Every variable of the template known in its place, EACH only as a list element."""
    known = _TOP_VARIABLES + (_TERM_VARIABLES if in_each else ())
    if isinstance(node, str):
        _variable(node, where, known)
    elif isinstance(node, dict):
        for key, value in node.items():
            if "{{" in key or "}}" in key:
                raise EngineConfigError(f"request template: {_join(where, key)}: variables go in values, not keys"
                                        + (f" ({EACH} is a list element of its own)" if key == EACH else ""))
            _check(value, _join(where, key), in_each)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            if isinstance(item, dict) and EACH in item:
                if len(item) != 1 or in_each:
                    raise EngineConfigError(f"request template: {where}[{i}]: {EACH} is alone in its object "
                                            "and not inside another")
                _check(item[EACH], f"{where}[{i}].{EACH}", True)
            else:
                _check(item, f"{where}[{i}]", in_each)


def render_template(node, values: Mapping[str, object], terms: Sequence[tuple[str, float]]):
    """The template with its variables replaced by `values` and each EACH element expanded
    per term (the template is checked beforehand)."""
    if isinstance(node, str):
        match = _VARIABLE.fullmatch(node)
        return values[match.group(1)] if match else node
    if isinstance(node, dict):
        return {key: render_template(value, values, terms) for key, value in node.items()}
    if isinstance(node, list):
        out = []
        for item in node:
            if isinstance(item, dict) and EACH in item:
                out += [render_template(item[EACH], {**values, "term": term, "weight": weight}, terms)
                        for term, weight in terms]
            else:
                out.append(render_template(item, values, terms))
        return out
    return node


def check_path(path: str) -> list[str | int | None]:
    """`hits.hits[*]._id` -> ["hits", "hits", None, "_id"] (None: every element)."""
    steps, at = [], 0
    for match in _STEP.finditer(path):
        if match.start() != at or (match.group(0).startswith(".") and at == 0):
            break
        name, index = match.groups()
        steps.append(name if name is not None else None if index == "*" else int(index))
        at = match.end()
    if not path or at != len(path):
        raise EngineConfigError(f"response path {path!r}: write keys with dots and lists as [*] or [N], "
                                "as in hits.hits[*]._id")
    return steps


def _shown(step: str | int | None) -> str:
    return "[*]" if step is None else f"[{step}]" if isinstance(step, int) else f".{step}"


def select_path(document, path: str) -> list:
    """The values `path` selects: each `[*]` spreads a list; a path without one must end at
    a list. SearchEngineError names the first step the document lacks."""
    steps = check_path(path)
    values, seen = [document], ""
    for step in steps:
        seen = (seen + _shown(step)).lstrip(".")
        out = []
        for value in values:
            if step is None and isinstance(value, list):
                out += value
            elif isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
                out.append(value[step])
            elif isinstance(step, str) and isinstance(value, dict) and step in value:
                out.append(value[step])
            else:
                raise SearchEngineError(f"the response has no {path}: nothing at {seen}")
        values = out
    if None not in steps:
        if len(values) != 1 or not isinstance(values[0], list):
            raise SearchEngineError(f"the response's {path} is not a list")
        values = values[0]
    return values


def check_template(template) -> None:
    """EngineConfigError naming the key of the first variable that is unknown or misplaced."""
    _check(template, "", False)


def load_template(template) -> object:
    """The template as a JSON document of its own (a JSON string is parsed), checked."""
    try:
        document = json.loads(template) if isinstance(template, str) else json.loads(json.dumps(template))
    except json.JSONDecodeError as exc:
        raise EngineConfigError(f"request template: not JSON ({exc.msg} at line {exc.lineno}, "
                                f"column {exc.colno})") from None
    except (TypeError, ValueError) as exc:  # a value JSON cannot hold (a date from TOML, NaN)
        raise EngineConfigError(f"request template: {exc}") from None
    check_template(document)
    return document
