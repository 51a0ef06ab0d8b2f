"""Run the system under test over every golden query: a prompt file against an
OpenAI-compatible endpoint, or a Python callable (SPEC §6 harness contract).

Replies become terms as a person would read them (termgate.llm.replies, SPEC §6): JSON
anywhere in the reply first, else a list of lines or of comma-separated items with
markup, lead-ins and notes set aside; a refusal, prose, empty text or invalid JSON makes
an errored item; `[]` is a valid empty expansion. `--parser module:function` replaces
that reading with the team's own, and `--response-format json` asks for JSON by schema.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import InputError, Problem, UsageError
from ..io import GeneratedSet, GoldenSet, PreparedItem
from .client import AsyncLLMClient, LLMCallError, StructuredOutputRefused
from ..scoring.metrics import normalize_term
from .replies import read_json_reply, read_reply

__all__ = ["HarnessOutput", "parse_reply", "parse_json_reply", "reply_reader", "terms_from_entries", "load_prompt",
           "prompt_version", "run_prompt", "StructuredOutputRefused", "run_callable", "load_callable", "callable_source",
           "to_generated", "list_complete", "TEXT_REPAIR", "JSON_REPAIR", "PARSER_REPAIR"]

TEXT_REPAIR = "Answer with the search terms only, one per line."
"""The hint a retry of an unparseable reply adds (termgate's reading of text replies)."""
JSON_REPAIR = 'Answer with the JSON object only, such as {"terms": ["first term", "second term"]}.'
"""The hint a retry of an unparseable reply adds under `--response-format json`."""
PARSER_REPAIR = "Answer in exactly the format asked for above, with nothing else."
"""The hint a retry of a reply the team's `--parser` refused adds (its format is the prompt's)."""


@dataclass
class HarnessOutput:
    """What the system under test produced for one golden query."""

    query_id: str
    prompt: str | None
    reply: str | None
    terms: dict[str, float] = field(default_factory=dict)
    error: str | None = None


def terms_from_entries(entries: list) -> dict[str, float]:
    """Normalised term -> highest weight; strings weigh 1.0; raises ValueError on bad entries."""
    out: dict[str, float] = {}
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            term, weight = entry, 1.0
        elif isinstance(entry, dict) and isinstance(entry.get("term"), str):
            term, weight = entry["term"], entry.get("weight", 1.0)
            if type(weight) not in (int, float) or not 0 <= weight <= 1:
                raise ValueError(f"terms[{i}].weight must be a number in [0, 1]")
        else:
            raise ValueError(f"terms[{i}] is neither a string nor an object with a term")
        norm = normalize_term(term)
        if norm and weight > out.get(norm, -1.0):
            out[norm] = float(weight)
    return out


def list_complete(text: str) -> bool:
    """Whether a reply cut off at max_tokens is whole all the same (docs/harness.md "Cut
    off"): JSON in it that parsed, or a text list whose last item ends with a line break
    (the cut fell between lines, so no item was cut mid-way)."""
    try:
        read_json_reply(text)
    except ValueError:
        return text.rstrip(" \t").endswith("\n")
    return True


def parse_reply(text: str, query: str | None = None) -> dict[str, float]:
    """A reply as normalised terms (SPEC §6 reading); ValueError naming why when unusable.
    `query` is the query the reply expands (run_prompt gives it)."""
    return terms_from_entries(read_reply(text, query))


parse_reply.complete = list_complete
parse_reply.repair = TEXT_REPAIR
parse_reply.takes_query = True


def for_query(parse: Callable[..., dict[str, float]], query: str) -> Callable[[str], dict[str, float]]:
    """`parse` reading the reply to `query`, when it takes the query (`takes_query`: the
    text reader's step 5 reads a label that is the query as the topic); else `parse` as it is."""
    if not getattr(parse, "takes_query", False):
        return parse

    def bound(text: str) -> dict[str, float]:
        return parse(text, query)

    for name in ("complete", "repair", "blocking"):
        if hasattr(parse, name):
            setattr(bound, name, getattr(parse, name))
    return bound


def parse_json_reply(text: str) -> dict[str, float]:
    """A reply to `--response-format json`: JSON only; prose is the endpoint ignoring the schema."""
    return terms_from_entries(read_json_reply(text))


parse_json_reply.repair = JSON_REPAIR  # JSON that parsed is whole: no `complete` needed


def reply_reader(fn: Callable[[str], list]) -> Callable[[str], dict[str, float]]:
    """A team's own `--parser` as the harness's reader: whatever it raises, or a result
    that is not a list of terms, makes the reply unparseable (retried, then errored)."""
    def parse(text: str) -> dict[str, float]:
        try:
            result = fn(text)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the parser's failure (sys.exit too) is this reply's
            raise ValueError(f"--parser raised {type(exc).__name__}: {exc}") from None
        if not isinstance(result, (list, tuple)):
            raise ValueError(f"--parser returned {type(result).__name__}, expected a list of terms")
        return terms_from_entries(list(result))
    parse.blocking = True  # the client runs it on a worker thread: a slow parser does not serialise the calls
    parse.complete = list_complete
    parse.repair = PARSER_REPAIR
    return parse


def load_prompt(path: str | Path) -> str:
    """A prompt file with {query}, {domain}, {intent}; other placeholders are an input error."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError([Problem(str(path), 0, "prompt", f"cannot read: {exc}")]) from None
    try:
        text.format(query="q", domain="d", intent="i")
    except (KeyError, IndexError, ValueError) as exc:
        line = 1
        raise InputError([Problem(str(path), line, "prompt", f"placeholder {exc} is not one of {{query}}, {{domain}}, "
                                  "{intent} (write {{ and }} for literal braces)")]) from None
    return text


def prompt_version(prompt: str, model: str, params: dict) -> str:
    """Hash of the prompt text, model and parameters: the version shown in the dashboard."""
    canonical = json.dumps({"prompt": prompt, "model": model, "params": params}, sort_keys=True)
    return "p-" + hashlib.sha256(canonical.encode()).hexdigest()[:12]


def _fill(prompt: str, item: PreparedItem, domain_context: str | None) -> str:
    return prompt.format(query=item.query, domain=item.domain or domain_context or "", intent=item.intent or "")


class Progress:
    """Counts finished items and reports through a callback (terminal bar, dashboard bar)."""

    def __init__(self, total: int, report: Callable[[int, int], None] | None):
        self.total, self.done, self.report = total, 0, report

    def tick(self) -> None:
        self.done += 1
        if self.report:
            self.report(self.done, self.total)


async def run_prompt(golden: GoldenSet, prompt: str, client: AsyncLLMClient, domain_context: str | None = None,
                     params: dict | None = None, progress: Callable[[int, int], None] | None = None,
                     parse: Callable[[str], dict[str, float]] = parse_reply, repeats: int = 1,
                     repair: str | None = None) -> list[list[HarnessOutput]]:
    """One chat call per golden query and repeat (cached, retried): one list of outputs per
    repeat, each in golden order. Repeat k > 1 is another sample of the same request (its
    own cache entry), so `--repeat` measures the endpoint's variation; golden items whose
    filled prompts are identical share one call. `repair` (default: the parser's own hint)
    is added to the retry of an unparseable reply. StructuredOutputRefused when the
    endpoint refuses `--response-format json` in both forms: nothing is scored."""
    params = client.params(params)
    repair = repair or getattr(parse, "repair", None)
    filled = [_fill(prompt, item, domain_context) for item in golden.items]
    messages = [[{"role": "user", "content": text}] for text in filled]
    keys = [[client.key(m, params, k) for m in messages] for k in range(1, repeats + 1)]
    await client.prefetch([key for row in keys for key in row])
    bar = Progress(len(filled) * repeats, progress)

    async def one(item: PreparedItem, text: str, msgs: list[dict], repeat: int, key: str) -> HarnessOutput:
        try:
            terms, reply, _ = await client.chat(msgs, for_query(parse, item.query), params, repeat, key, repair)
            out = HarnessOutput(item.query_id, text, reply, terms)
        except LLMCallError as exc:
            out = HarnessOutput(item.query_id, text, exc.reply, {}, str(exc))
        bar.tick()
        return out

    try:
        flat = await asyncio.gather(*(one(i, t, m, k, key) for k in range(1, repeats + 1)
                                      for i, t, m, key in zip(golden.items, filled, messages, keys[k - 1])))
    except StructuredOutputRefused as exc:
        raise StructuredOutputRefused(
            f"{client.config.shown_url or 'the endpoint'} refused --response-format json for model "
            f"{client.config.model!r} ({exc.said}); leave out --response-format, set structured_output = "
            '"json_object" under [llm] if it takes that form, or use a model that supports structured output'
        ) from None
    finally:
        await client.flush(force=True)
    n = len(filled)
    return [list(flat[k * n:(k + 1) * n]) for k in range(repeats)]


def _importable_from_cwd() -> None:
    """Expander modules are found in the current directory, as `python -m` would find them."""
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))


def callable_source(spec: str) -> str | None:
    """The file a `module:function` expander would be loaded from, found without running
    it (an input the reports must never overwrite); None when it cannot be told."""
    module_name = spec.partition(":")[0]
    if not module_name or "." in module_name:
        return None
    _importable_from_cwd()
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    return found.origin if found is not None and found.has_location else None


def load_callable(spec: str, flag: str = "--callable") -> Callable:
    """`module:function`, importable from the current directory (an expander, or a
    `--parser`)."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise UsageError(f"{flag} {spec!r}: expected module:function")
    _importable_from_cwd()
    try:
        fn = getattr(importlib.import_module(module_name), attr)
    except Exception as exc:  # noqa: BLE001 - an import that fails in any way is the user's to fix
        raise UsageError(f"{flag} {spec!r}: {type(exc).__name__}: {exc}") from None
    if not callable(fn):
        raise UsageError(f"{flag} {spec!r} is not callable")
    return fn


async def run_callable(golden: GoldenSet, fn: Callable, concurrency: int = 8,
                       progress: Callable[[int, int], None] | None = None) -> list[HarnessOutput]:
    """f(query, context) -> list of terms, sync (in threads) or async; exceptions become errored items."""
    slots = asyncio.Semaphore(max(1, concurrency))
    bar = Progress(len(golden.items), progress)
    is_async = inspect.iscoroutinefunction(fn)

    async def one(item: PreparedItem) -> HarnessOutput:
        context = {"domain": item.domain, "intent": item.intent}
        async with slots:
            try:
                result = await fn(item.query, context) if is_async else await asyncio.to_thread(fn, item.query, context)
                if inspect.isawaitable(result):  # e.g. an object whose __call__ is async
                    result = await result
                if not isinstance(result, (list, tuple)):
                    raise ValueError(f"returned {type(result).__name__}, expected a list of terms")
                out = HarnessOutput(item.query_id, None, json.dumps(list(result), default=str), terms_from_entries(list(result)))
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - the expander's failure (sys.exit too) is this item's
                out = HarnessOutput(item.query_id, None, None, {}, f"{type(exc).__name__}: {exc}")
        bar.tick()
        return out

    return list(await asyncio.gather(*(one(item) for item in golden.items)))


def to_generated(outputs: list[HarnessOutput], source: str) -> tuple[GeneratedSet, dict[str, str]]:
    """The outputs as generated expansions plus the errored items (scored empty, gate fails).

    The terms are the parsed (normalised) ones; the scorer normalises them again, which
    leaves them as they are."""
    expansions = {o.query_id: list(o.terms.items()) for o in outputs if o.error is None}
    errors = {o.query_id: o.error for o in outputs if o.error is not None}
    return GeneratedSet(source, expansions), errors
