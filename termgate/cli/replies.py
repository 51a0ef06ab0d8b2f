"""`termgate replies RUN`: what the harness sent and got back, item by item (issue 14)."""

from __future__ import annotations

import json
import math

import click

from ..config import default_db_path
from ..store import get_run, harness_outputs
from ..text import json_escaped, terminal_lines, terminal_safe as safe
from .common import echo, fail, run_cli, store_option

__all__ = ["replies_command"]

_INDENT = "    "  # the text of a prompt or reply: never in the columns of our own labels


def _value(value: object) -> object:
    """A stored value as plain Python: NULL (None or NaN in a data frame) is None."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _items(db: str, run_id: str) -> tuple[dict, list[dict]]:
    """The run and its harness items in golden-set order; exit 2 for an unknown run and
    for a run that has none (the harness did not make it)."""
    run = run_cli(get_run, db, run_id)
    df = run_cli(harness_outputs, db, run_id)
    if df.empty:
        fail([f"run {run_id} was not made by the harness (it scored {run['generated_path'] or 'a generated file'}): "
              f"no prompts or replies are stored; see `termgate show {run_id}`"])
    return run, [{"query_id": r.query_id, "query": _value(r.query), "prompt": _value(r.prompt),
                  "reply": _value(r.reply), "terms": None if _value(r.terms) is None else [str(t) for t in r.terms],
                  "error": _value(r.error)} for r in df.itertuples()]


def _select(items: list[dict], run_id: str, query_id: str | None, errored: bool) -> list[dict]:
    """--query (exit 2 when the run has no such query) and --errored."""
    if query_id is not None:
        items = [i for i in items if i["query_id"] == query_id]
        if not items:
            fail([f"run {run_id} has no query {query_id!r} (see `termgate show {run_id}`)"])
    return [i for i in items if i["error"] is not None] if errored else items


def _block(label: str, text: str | None, absent: str) -> None:
    """A label, then the text's own lines, indented; `absent` when there is no text."""
    if text is None or not text.strip():
        echo(f"  {label}: {absent if text is None else '(empty)' if text == '' else '(blank)'}")
        return
    lines = terminal_lines(text)
    while lines and not lines[-1].strip():
        lines.pop()  # a reply's final newline adds nothing to read
    echo(f"  {label}:")
    for line in lines:
        echo(f"{_INDENT}{line}".rstrip())


def _print_item(item: dict) -> None:
    errored = item["error"] is not None
    echo(f"query {safe(item['query_id'])}  {safe(item['query'] or '')}" + ("  (errored)" if errored else ""))
    _block("prompt", item["prompt"], "none (a Python expander, --callable)")
    _block("reply", item["reply"], "none (no reply received)")
    if errored:
        echo("  terms: none (errored item)")
        echo(f"  error: {safe(item['error'])}")
    else:
        echo(f"  terms: {safe(json_escaped(json.dumps(item['terms'] or [], ensure_ascii=False)))}")


@click.command("replies")
@click.argument("run_id", metavar="RUN")
@click.option("--query", "query_id", metavar="ID", default=None, help="Only this query (exit 2 when the run has none).")
@click.option("--errored", is_flag=True, help="Only errored items (retries exhausted, unparseable replies).")
@click.option("--json", "as_json", is_flag=True,
              help="Print a JSON array of {query_id, query, prompt, reply, terms, error} instead.")
@store_option
def replies_command(run_id, query_id, errored, as_json, db):
    """Show what a harness run sent and got back: for each item, in golden-set order, the
    prompt, the model's raw reply (its own lines, indented), the parsed terms and, for an
    errored item, why (the last try and, when it differs, the first).

    Exit codes: 0 shown (also when no item matches --errored), 2 unknown run, unknown
    --query, or a run that `evaluate` made (it stores no replies).

    Example: termgate replies 20261129-223000-1a2b3c --errored
    """
    db = db or default_db_path()
    run, every = _items(db, run_id)
    items = _select(every, run_id, query_id, errored)
    if as_json:
        echo(json_escaped(json.dumps(items, ensure_ascii=False, indent=2)))
        return
    count = sum(i["error"] is not None for i in every)
    echo(f"run {run_id}  {safe(run['generated_path'] or '')}  {len(every)} items, {count} errored")
    if not items:
        echo("no errored items" + (f" for query {safe(query_id)}" if query_id is not None else ""))
    for item in items:
        echo("")
        _print_item(item)
