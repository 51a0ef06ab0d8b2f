"""The one place that talks to an OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama...).

Every call sends `max_tokens` and is streamed (termgate.llm.stream reads the events, or a
whole JSON body from a server that ignores `stream`); a try that outlives `timeout` is
abandoned and its connection closed, so a streaming server stops generating.

termgate owns the retries (the client's own are off, so call counts are exact): timeouts,
429 and 5xx, connection failures, a 200 whose body is not a JSON chat completion (an HTML
page from a proxy, a truncated body, a broken stream) are retried, up to `max_tries`, with
exponential backoff and jitter (retry_delay), honouring Retry-After. A reply the caller
cannot parse is retried with the caller's `repair` hint; at temperature 0 a request the
endpoint answered is never sent again (the same request gets the same answer), and a reply
cut off at max_tokens is not retried. A `json_schema` response format the endpoint refuses
is sent as `json_object` with the schema for the rest of the client's life (_switched).
After the last try LLMCallError names the last fault and, when it differs, the first (SPEC
§6: `HTTP 429 after 4 tries; first try: unparseable reply: empty reply`). Keys come only from
the environment (OPENAI_API_KEY) and are never logged or stored: a key inside the base URL
is redacted (termgate.redact) in the usage record and every message, and taken out of the
cache key. There is no default endpoint: every call goes to the base URL the user named
(`endpoint_url`, SPEC §5), never silently to a public one.
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import re
import time
from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from ..config import STRUCTURED_OUTPUT_FORMS
from ..redact import strip_credentials
from .endpoint import DEFAULT_CONCURRENCY, DEFAULT_MAX_TOKENS, NO_ENDPOINT, LLMConfig, endpoint_url, split_query
from .faults import LLMCallError, StructuredOutputRefused, cause_of, completion_answer, error_body
from .stream import CUT_SHORT, Answer, read_answer

__all__ = ["LLMConfig", "LLMCallError", "ReplyCache", "AsyncLLMClient", "completion_answer",
           "request_key", "retry_delay", "run_in_fresh_loop", "endpoint_url", "NO_ENDPOINT", "StructuredOutputRefused",
           "DEFAULT_MAX_TOKENS", "DEFAULT_CONCURRENCY", "STRUCTURED_OUTPUT_FORMS"]

T = TypeVar("T")

def retry_delay(config: LLMConfig, attempt: int, retry_after: str | None) -> float:
    """termgate's backoff: the server's Retry-After when it gives one (capped), else
    exponential with jitter."""
    if retry_after:
        try:
            return min(float(retry_after), config.max_backoff)
        except ValueError:
            pass
    base = min(config.backoff * 2 ** attempt, config.max_backoff)
    return base * (0.5 + random.random() / 2)


def run_in_fresh_loop(make: Callable[[], Awaitable[T]]) -> T:
    """Runs a coroutine to completion from sync code, even when a loop is already running here."""
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


# ---------------------------------------------------------------- async client with a response cache


def request_key(base_url: str | None, model: str, messages: list[dict], params: dict, repeat: int = 1) -> str:
    """Cache key: endpoint (its credentials taken out: a new key keeps the cache; every other
    part as written, so two endpoints never share an entry), model,
    messages and parameters, as canonical JSON; `repeat` (harness --repeat) > 1 makes
    another sample of the same request its own entry."""
    import hashlib
    import json

    request = {"base_url": _without_credentials(base_url), "model": model, "messages": messages, "params": params}
    if repeat != 1:
        request["repeat"] = repeat
    canonical = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


@functools.lru_cache(maxsize=64)
def _without_credentials(base_url: str | None) -> str | None:
    return strip_credentials(base_url)


class ReplyCache(Protocol):
    """Where parseable replies outlive a run (the store's LLM cache, termgate.store.StoredReplies)."""

    def load(self, keys: list[str]) -> dict[str, str]:
        """Cached replies for these request keys (absent keys are missing)."""

    def save(self, entries: list[tuple[str, str, str, int, int]]) -> None:
        """Keep (key, model, reply, prompt_tokens, completion_tokens) entries."""


class AsyncLLMClient:
    """Async chat calls with bounded concurrency, termgate's retry policy and a reply cache.

    Only replies the caller could parse are cached, so a rerun retries exactly the items
    that errored; cached replies are flushed to the store about once a second, so a run
    that is interrupted (Ctrl-C, kill) resumes where it stopped.
    """

    def __init__(self, config: LLMConfig, concurrency: int | None = None, cache: ReplyCache | None = None, sleep=None):
        import asyncio

        from openai import AsyncOpenAI

        url = endpoint_url(config.base_url, {}, None)  # no call without a named endpoint, whoever built the config
        self.config = config
        self.cache = cache
        base_url, query = split_query(url)
        self._client = AsyncOpenAI(base_url=base_url, default_query=query, max_retries=0, timeout=config.timeout,
                                   api_key=os.environ.get("OPENAI_API_KEY") or "not-needed")
        self._slots = asyncio.Semaphore(max(1, concurrency or config.calls_in_flight))
        self._sleep = sleep or asyncio.sleep
        self._cache: dict[str, str] = {}
        self._pending: list[tuple[str, str, str, int, int]] = []
        self._flush_lock = asyncio.Lock()
        self._last_flush = time.monotonic()
        self._asked: dict[str, asyncio.Future] = {}  # request key -> its outcome, for this client's life
        self._form = config.structured_output  # how a json_schema response format is sent (_structured)
        self._schema_worked = False  # a json_schema request was answered: no switch after that
        self._refused: StructuredOutputRefused | None = None  # both forms refused: no more structured calls
        self.schema_refusal: str | None = None
        """What the endpoint said when it refused the json_schema form (the client switched to json_object)."""
        self.calls = self.cache_hits = self.prompt_tokens = self.completion_tokens = 0
        self.in_flight = self.max_in_flight = 0
        self.one_at_a_time: str | None = None
        """Why the client dropped to one call at a time for the rest of its life (_call), or None."""
        self._one = asyncio.Lock()

    def params(self, params: dict | None = None) -> dict:
        """The request's parameters as sent (and keyed): `params` (else the config's
        temperature), with the config's `max_tokens` unless they name it."""
        out = dict(params or {"temperature": self.config.temperature})
        out.setdefault("max_tokens", self.config.max_tokens)
        return out

    def key(self, messages: list[dict], params: dict | None, repeat: int = 1) -> str:
        return request_key(self.config.base_url, self.config.model, messages, self.params(params), repeat)

    async def prefetch(self, keys: list[str]) -> None:
        """Load cached replies for these keys in one store query."""
        import asyncio

        if self.cache is not None:
            self._cache.update(await asyncio.to_thread(self.cache.load, keys))

    async def flush(self, force: bool = False) -> None:
        import asyncio

        if self.cache is None or not self._pending:
            return
        if not force and len(self._pending) < 4096 and time.monotonic() - self._last_flush < 1.0:
            return
        async with self._flush_lock:
            batch, self._pending = self._pending, []
            self._last_flush = time.monotonic()
            if batch:
                await asyncio.to_thread(self.cache.save, batch)

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        return retry_delay(self.config, attempt, retry_after)

    async def chat(self, messages: list[dict], parse: Callable[[str], T], params: dict | None = None,
                   repeat: int = 1, key: str | None = None, repair: str | None = None) -> tuple[T, str, bool]:
        """(parse(reply), reply, from_cache). Raises LLMCallError after the last try,
        StructuredOutputRefused when the endpoint refuses a `json_schema` response format
        in both forms. `repeat` > 1 asks again for another sample (its own cache entry);
        `key` is self.key(messages, params, repeat) when the caller has it already.
        `repair`: a one-line hint added to the request that retries an unparseable reply
        (after the last user message's text, _with_hint), so a retry at temperature 0 can
        change the answer.

        An identical request at temperature 0 is never sent twice by one client: an
        unparseable or cut-off reply to it ends its tries (after the repaired request, when
        there is a `repair`), and a call with the key of one already asked in this client's
        life shares that call's outcome (its reply, read by this call's parser, or its error)."""
        import asyncio

        params = self.params(params)
        key = key or self.key(messages, params, repeat)
        cached = self._cache.get(key)
        if cached is not None:
            try:
                self.cache_hits += 1
                return await _parse(parse, cached), cached, True
            except ValueError:
                self.cache_hits -= 1  # a parser changed since: ask again
        asked = self._asked.get(key)
        if asked is not None:
            return await self._shared(asked, parse)
        self._asked[key] = outcome = asyncio.get_running_loop().create_future()
        try:
            parsed, answer = await self._ask(messages, parse, params, repair)
        except Exception as exc:
            outcome.set_exception(exc)
            outcome.exception()  # retrieved: no 'never retrieved' warning when nobody shares it
            raise
        except BaseException:  # cancelled (Ctrl-C, a run stopping): nothing to share
            outcome.cancel()
            del self._asked[key]
            raise
        outcome.set_result(answer.text)
        self._cache[key] = answer.text
        self._pending.append((key, self.config.model, answer.text, *answer.tokens))
        await self.flush()
        return parsed, answer.text, False

    async def _shared(self, asked, parse: Callable[[str], T]) -> tuple[T, str, bool]:
        """The outcome of the same request asked by another call of this client."""
        import asyncio

        try:
            text = await asyncio.shield(asked)
        except LLMCallError as exc:
            raise LLMCallError(str(exc), exc.reply, exc.status, exc.body) from None
        try:
            parsed = await _parse(parse, text)
        except ValueError as exc:
            raise LLMCallError(self.config.redact(f"unparseable reply: {exc} after 1 try"), text) from None
        self.cache_hits += 1
        return parsed, text, True

    async def _ask(self, messages: list[dict], parse: Callable[[str], T], params: dict,
                   repair: str | None) -> tuple[T, Answer]:
        """The tries of one request: termgate's retry policy (module docstring)."""
        fixed = params.get("temperature") == 0  # the same request gets the same answer
        answered: set[bool] = set()  # which requests (plain, repaired) the endpoint answered
        first = last = last_reply = last_body = None
        repaired, tries = False, 0
        while tries < self.config.max_tries and not (fixed and repaired in answered):
            answer, sent = await self._call(self._with_hint(messages, repair) if repaired else messages, params)
            tries += 1
            if answer.status is not None:
                if self._switched(sent, answer):
                    tries -= 1  # the other form: another request, not another try of this one
                    continue
                last_body = answer.body
            elif answer.fault is None:
                answered.add(repaired)
                parsed = await self._read(answer, parse, sent)
                if answer.fault is None:
                    return parsed, answer
                last_reply, repaired = answer.text, repaired or bool(repair)
            first, last = first or answer.fault, answer.fault
            if fixed and answer.finish == "length":
                break  # the same request is cut off at the same place
            if tries < self.config.max_tries and not (fixed and repaired in answered):
                await self._sleep(self._delay(tries - 1, answer.retry_after))
        message = f"{last} after {tries} {'try' if tries == 1 else 'tries'}"
        if first != last:
            message += f"; first try: {first}"
        raise LLMCallError(self.config.redact(message), last_reply, body=self.config.redact(last_body))

    async def _read(self, answer: Answer, parse: Callable[[str], T], sent: dict) -> T | None:
        """The parsed reply, or None with `answer.fault` set: unparseable, or cut off at
        max_tokens (finish_reason "length") unless the parser read it whole (_complete)."""
        if _form_of(sent) == "json_schema":
            self._schema_worked = True
        cut = None
        if answer.finish == "length":
            tokens = answer.tokens[1] or sent.get("max_tokens") or self.config.max_tokens
            cut = f"cut off at {tokens} tokens (the reply reached max_tokens before it finished)"
        try:
            parsed = await _parse(parse, answer.text)
        except ValueError as exc:
            answer.fault = cut or f"unparseable reply: {exc}"
            return None
        if cut and not _complete(parse, answer.text):
            answer.fault = cut
            return None
        return parsed

    @staticmethod
    def _with_hint(messages: list[dict], repair: str | None) -> list[dict]:
        """The messages with `repair` after the last user message's text (a blank line
        between), or as a final user message when the last is not a user's: a second user
        message in a row breaks chat templates that want the roles to alternate."""
        if not repair:
            return messages
        last = messages[-1] if messages else {}
        if last.get("role") == "user" and isinstance(last.get("content"), str):
            return [*messages[:-1], {**last, "content": f"{last['content'].rstrip()}\n\n{repair}"}]
        return [*messages, {"role": "user", "content": repair}]

    def _structured(self, params: dict) -> dict:
        """The parameters as sent: a `json_schema` response format in the form this endpoint
        takes (config.structured_output, or json_object after a refusal: _switched)."""
        wanted = params.get("response_format")
        if self._form == "json_object" and _form_of(params) == "json_schema":
            schema = (wanted.get("json_schema") or {}).get("schema", {})
            return {**params, "response_format": {"type": "json_object", "schema": schema}}
        return params

    def _switched(self, sent: dict, answer: Answer) -> bool:
        """True when the request is to be sent again in the json_object form: its json_schema
        form was refused (a 4xx other than 401, 403, 404, 408, 429, or a 5xx whose body
        names the format), before that form ever worked here, or another call has switched
        already. StructuredOutputRefused when the json_object form is refused too and
        either refusal names the format. Otherwise the error stands: `answer.fault` is set
        (a 4xx other than 429 raises LLMCallError, not retried)."""
        form, refused = _form_of(sent), _refusal(answer)
        said = f"HTTP {answer.status}: {answer.body}"
        if form == "json_schema" and refused and (self._form == "json_object" or not self._schema_worked):
            if self._form != "json_object":
                self._form, self.schema_refusal = "json_object", said
            return True
        if form == "json_object" and refused and (_ABOUT_FORMAT.search(answer.body or "")
                                                   or _ABOUT_FORMAT.search(self.schema_refusal or "")):
            tried = (f"json_schema: {self.schema_refusal}; then json_object with the schema: {said}"
                     if self.schema_refusal else f"json_object with the schema: {said}")
            tried = self.config.redact(tried)
            self._refused = StructuredOutputRefused(
                f"{self.config.shown_url} refused structured output for model {self.config.model!r} ({tried})", tried)
            raise self._refused
        if answer.status != 429 and answer.status < 500:
            raise LLMCallError(self.config.redact(said), status=answer.status, body=self.config.redact(answer.body))
        answer.fault = f"HTTP {answer.status}"
        return False

    async def _call(self, messages: list[dict], params: dict) -> tuple[Answer, dict]:
        """One try, in a slot, within config.timeout of wall time in all: a try that
        outlives it is abandoned and its connection closed, so a server that streams
        notices and stops generating. (answer, the parameters as sent: _structured, chosen
        once the slot is ours, so a switch made meanwhile applies)."""
        import asyncio

        async with self._slots:
            if self._refused is not None and _form_of(params) == "json_schema":
                raise self._refused  # the run is stopping: nothing more is sent in either form
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.calls += 1
            sent = self._structured(params)
            try:
                async with self._one if self.one_at_a_time else contextlib.nullcontext():
                    async with asyncio.timeout(self.config.timeout):
                        answer = await self._try(messages, sent)
            except TimeoutError:
                answer = Answer(f"timed out ({self.config.timeout:g} s)")
            finally:
                self.in_flight -= 1
            if answer.fault == CUT_SHORT and self.in_flight and not self.one_at_a_time:
                # the server cut this answer short while others waited: it serves one request at a
                # time and interrupts (llama-cpp-python): from now on, one call at a time
                self.one_at_a_time = ("the server ended an answer early while other calls waited "
                                      "(it serves one request at a time and interrupts the one running)")
        self.prompt_tokens += answer.tokens[0]
        self.completion_tokens += answer.tokens[1]
        return answer, sent

    async def _try(self, messages: list[dict], params: dict) -> Answer:
        """One streamed call: the answer, or the fault (HTTP errors keep status and body)."""
        import httpx
        import openai

        create = self._client.chat.completions.with_streaming_response.create
        try:
            async with create(model=self.config.model, messages=messages, stream=True,
                              stream_options={"include_usage": True}, **params) as response:
                return await read_answer(response.http_response)
        except openai.APITimeoutError:
            return Answer(f"timed out ({self.config.timeout:g} s)")
        except openai.APIStatusError as exc:
            return Answer(f"HTTP {exc.status_code}", status=exc.status_code, body=error_body(exc),
                          retry_after=exc.response.headers.get("retry-after"))
        except openai.APIConnectionError as exc:
            return Answer(f"connection failed: {cause_of(exc)}")
        except httpx.TimeoutException:  # a read that stalled mid-stream
            return Answer(f"timed out ({self.config.timeout:g} s)")
        except httpx.HTTPError as exc:  # the connection broke mid-stream
            return Answer(f"connection failed: {cause_of(exc)}")
        except openai.APIError as exc:  # anything else the client refuses, named as it says
            return Answer(f"{type(exc).__name__}: {exc}")

    def usage(self) -> dict:
        return {"model": self.config.model, "base_url": self.config.shown_url, "calls": self.calls,
                "cache_hits": self.cache_hits, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}

    async def aclose(self) -> None:
        await self.flush(force=True)
        await self._client.close()


async def _parse(parse: Callable[[str], T], text: str) -> T:
    """A parser marked `blocking` (a team's own `--parser`: it may be slow) runs on a worker
    thread, so it does not hold up the other calls in flight; termgate's own run inline."""
    if getattr(parse, "blocking", False):
        import asyncio
        return await asyncio.to_thread(parse, text)
    return parse(text)


_ABOUT_FORMAT = re.compile(r"response.?format|json.?schema|json.?object|schema|structured|grammar|format", re.I)
"""An error body that is about the response format (a refusal of structured output)."""
_NOT_ABOUT_THE_BODY = {401, 403, 404, 408, 429}
"""4xx statuses that refuse the caller, the model or the moment, never the response format."""


def _form_of(params: dict) -> str | None:
    wanted = params.get("response_format")
    return wanted.get("type") if isinstance(wanted, dict) else None


def _refusal(answer: Answer) -> bool:
    """A 4xx that may be about the request's body, or a 5xx whose body names the format."""
    if 400 <= answer.status < 500:
        return answer.status not in _NOT_ABOUT_THE_BODY
    return answer.status >= 500 and bool(_ABOUT_FORMAT.search(answer.body or ""))


def _complete(parse: Callable, text: str) -> bool:
    """Whether a reply the parser read, cut off at max_tokens, is whole all the same: the
    parser's own `complete(text)` when it has one (a text list: the cut fell after a
    line break), else yes (JSON that parsed is whole)."""
    complete = getattr(parse, "complete", None)
    return True if complete is None else bool(complete(text))
