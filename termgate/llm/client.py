"""The one place that talks to an OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama...).

termgate owns the retries (the client's own are off, so call counts are exact): timeouts,
429 and 5xx, connection failures, a 200 whose body is not a JSON chat completion (an HTML
page from a proxy, a truncated body) are retried with exponential backoff and jitter,
honouring Retry-After; a reply the caller cannot parse is retried the same way. After the
last try LLMCallError names the last fault and, when it differs, the first (SPEC §6:
`HTTP 429 after 4 tries; first try: unparseable reply: empty reply`). Keys come only from
the environment (OPENAI_API_KEY) and are never logged or stored: a key inside the base URL
is redacted (termgate.redact) in the usage record and every message, and taken out of the
cache key. There is no default endpoint: every call goes to the base URL the user named
(`endpoint_url`, SPEC §5), never silently to a public one.
"""

from __future__ import annotations

import functools
import os
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from ..environment import setting
from ..errors import TermgateError, UsageError
from ..redact import redact_text, redact_url, strip_credentials, url_secrets
from .stream import Answer, read_answer, snippet

__all__ = ["LLMConfig", "LLMCallError", "NotACompletion", "ReplyCache", "AsyncLLMClient", "completion_text",
           "request_key", "retry_delay", "run_in_fresh_loop", "endpoint_url", "NO_ENDPOINT", "StructuredOutputRefused",
           "DEFAULT_MAX_TOKENS", "DEFAULT_CONCURRENCY", "STRUCTURED_OUTPUT_FORMS"]

T = TypeVar("T")

DEFAULT_MAX_TOKENS = 512
"""The completion tokens asked for when neither `--max-tokens` nor `max_tokens` says: enough
for any expansion list or judge verdict, and a bound on a local server that would otherwise
generate until its context is full."""
DEFAULT_CONCURRENCY = 8
"""Calls in flight at once when neither `--concurrency` nor `concurrency` says."""
STRUCTURED_OUTPUT_FORMS = ("json_schema", "json_object")
"""How `--response-format json` is asked for at an endpoint: OpenAI's `json_schema`, or
`{"type": "json_object", "schema": ...}` (llama.cpp and other local servers)."""


class LLMCallError(TermgateError):
    """Every try failed; the message says what happened last, `reply` holds the last raw
    reply when there was one (an unparseable answer is kept for the record)."""

    def __init__(self, message: str, reply: str | None = None, status: int | None = None, body: str | None = None):
        super().__init__(message)
        self.reply = reply
        self.status = status
        """The HTTP status of a request the endpoint refused outright (4xx other than 429)."""
        self.body = body
        """What the endpoint said with its last HTTP error (its error message, else the body), redacted."""


class StructuredOutputRefused(TermgateError):
    """The endpoint refused `--response-format json` in both forms (`json_schema`, then
    `json_object` with the schema): the run stops with one line quoting the server, exit 2,
    rather than scoring prose the schema was meant to exclude."""


@dataclass(frozen=True)
class LLMConfig:
    """Endpoint, model and retry policy; from `[llm]` settings and the standard env vars."""

    model: str
    base_url: str | None = None
    timeout: float = 30.0
    max_tries: int = 4
    backoff: float = 0.5
    max_backoff: float = 20.0
    temperature: float = 0.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    """Completion tokens per call (sent as `max_tokens` unless the call's parameters name it)."""
    concurrency: int | None = None
    """Calls in flight at once; None: DEFAULT_CONCURRENCY (see `calls_in_flight`)."""
    structured_output: str = "json_schema"
    """How `--response-format json` is asked for here: "json_schema" (OpenAI's form; a refusal
    switches to the other once) or "json_object" (`{"type": "json_object", "schema": ...}` from the start)."""

    @property
    def calls_in_flight(self) -> int:
        """The concurrency to use: `concurrency`, else DEFAULT_CONCURRENCY."""
        return self.concurrency or DEFAULT_CONCURRENCY

    @property
    def shown_url(self) -> str | None:
        """The base URL as it may be stored or printed: credentials replaced by `***`."""
        return redact_url(self.base_url)

    def redact(self, text: str | None) -> str | None:
        """`text` with this endpoint's credentials (URL and OPENAI_API_KEY) blanked."""
        return redact_text(text, [*url_secrets(self.base_url), os.environ.get("OPENAI_API_KEY")])

    @classmethod
    def from_settings(cls, llm: dict, model: str | None = None, base_url: str | None = None,
                      flag: str | None = "--base-url", what: str | None = None) -> LLMConfig:
        """The config from `[llm]` settings (or a named endpoint's, merged over them: the
        caller passes that dict); `base_url` (the command's `flag`) overrides them, as a
        command's other flags do when it puts them in `llm` (`max_tokens`, `concurrency`,
        `structured_output`, `timeout`, `max_tries`). UsageError when no model or no endpoint
        is named (endpoint_url)."""
        chosen = model or setting("LLM_MODEL") or llm.get("model")
        if not chosen:
            raise TermgateError("no LLM model configured: set [llm] model in termgate.toml or TERMGATE_LLM_MODEL")
        concurrency = llm.get("concurrency")
        return cls(model=chosen, base_url=endpoint_url(base_url, llm, flag, what),
                   timeout=float(llm.get("timeout", 30.0)), max_tries=int(llm.get("max_tries", 4)),
                   backoff=float(llm.get("backoff", 0.5)),
                   max_tokens=int(llm.get("max_tokens", DEFAULT_MAX_TOKENS)),
                   concurrency=None if concurrency is None else int(concurrency),
                   structured_output=str(llm.get("structured_output", "json_schema")))


_HTTP_URL = re.compile(r"https?://[^\s/?#@]", re.IGNORECASE)
"""What an endpoint must look like: http(s), then a host or user info (redacted when shown)."""

NO_ENDPOINT = ("no LLM endpoint named, and termgate has no default one: {ways} (OpenAI itself is "
               "https://api.openai.com/v1; a local server is e.g. http://127.0.0.1:8000/v1)")
"""The one line every LLM route (harness, prompt-eval, the llm drift judge) ends with, exit 2,
when no endpoint is named; {ways} says how to name one there."""


def endpoint_url(given: str | None = None, llm: dict | None = None, flag: str | None = "--base-url",
                 what: str | None = None, section: str = "llm") -> str:
    """The one rule for where LLM calls go (SPEC §5): the URL given (`flag`, such as
    --base-url), else OPENAI_BASE_URL, else `base_url` of the settings' `[section]` (`llm`).
    There is no default remote endpoint: with none of them, UsageError before any call
    (`what`: who needed one, such as "the llm drift judge"), so no prompt, golden query or
    key goes to an endpoint nobody named."""
    sources = ((flag or "the endpoint", given), ("OPENAI_BASE_URL", os.environ.get("OPENAI_BASE_URL")),
               (f"[{section}] base_url", (llm or {}).get("base_url")))
    for source, candidate in sources:
        if isinstance(candidate, str) and candidate.strip():
            url = candidate.strip()
            if not _HTTP_URL.match(url):  # `user:KEY@host/v1` without its scheme: never called, shown or stored
                message = (f"{source}: not an http(s) URL (such as http://127.0.0.1:8000/v1); "
                           "its value is not shown, as it may hold a key")
                raise UsageError(f"{what}: {message}" if what else message)
            return url
    ways = [f"give {flag} URL"] if flag else []
    ways += ["set OPENAI_BASE_URL", f"set base_url under [{section}] in termgate.toml"]
    message = NO_ENDPOINT.format(ways=", ".join(ways[:-1]) + ", or " + ways[-1])
    raise UsageError(f"{what}: {message}" if what else message)


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
        base_url, query = _split_query(url)
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
        self._schema_refusal: str | None = None  # what the endpoint said when it refused json_schema
        self.calls = self.cache_hits = self.prompt_tokens = self.completion_tokens = 0
        self.in_flight = self.max_in_flight = 0

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
        `repair`: a one-line hint appended (as a final user message) to the request that
        retries an unparseable reply, so a retry at temperature 0 can change the answer.

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
            sent = self._structured(params)
            answer = await self._call(self._with_hint(messages, repair) if repaired else messages, sent)
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
        return [*messages, {"role": "user", "content": repair}] if repair else messages

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
                self._form, self._schema_refusal = "json_object", said
            return True
        if form == "json_object" and refused and (_ABOUT_FORMAT.search(answer.body or "")
                                                   or _ABOUT_FORMAT.search(self._schema_refusal or "")):
            tried = (f"json_schema: {self._schema_refusal}; then json_object with the schema: {said}"
                     if self._schema_refusal else f"json_object with the schema: {said}")
            raise StructuredOutputRefused(self.config.redact(
                f"{self.config.shown_url} refused structured output for model {self.config.model!r} ({tried})"))
        if answer.status != 429 and answer.status < 500:
            raise LLMCallError(self.config.redact(said), status=answer.status, body=self.config.redact(answer.body))
        answer.fault = f"HTTP {answer.status}"
        return False

    async def _call(self, messages: list[dict], params: dict) -> Answer:
        """One try, in a slot, within config.timeout of wall time in all: a try that
        outlives it is abandoned and its connection closed, so a server that streams
        notices and stops generating."""
        import asyncio

        async with self._slots:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self.calls += 1
            try:
                async with asyncio.timeout(self.config.timeout):
                    answer = await self._try(messages, params)
            except TimeoutError:
                answer = Answer(f"timed out ({self.config.timeout:g} s)")
            finally:
                self.in_flight -= 1
        self.prompt_tokens += answer.tokens[0]
        self.completion_tokens += answer.tokens[1]
        return answer

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
            return Answer(f"HTTP {exc.status_code}", status=exc.status_code, body=_error_body(exc),
                          retry_after=exc.response.headers.get("retry-after"))
        except openai.APIConnectionError as exc:
            return Answer(f"connection failed: {_cause(exc)}")
        except httpx.TimeoutException:  # a read that stalled mid-stream
            return Answer(f"timed out ({self.config.timeout:g} s)")
        except httpx.HTTPError as exc:  # the connection broke mid-stream
            return Answer(f"connection failed: {_cause(exc)}")
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


class NotACompletion(TermgateError):
    """A 200 whose body is not a chat completion (an HTML page, a truncated body, JSON of
    another shape): a fault, retried like a 5xx; the message names what the body was."""


_snippet = snippet


def _error_body(exc) -> str:
    """What the endpoint said with its HTTP error: the JSON error message, else the body."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)  # the client hands over the body's "error" object, or the whole body
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    if isinstance(message, str) and message.strip():
        return _snippet(message, 200)
    try:
        text = exc.response.text
    except Exception:  # noqa: BLE001 - a body that cannot be read says nothing more
        text = ""
    return _snippet(text, 200) if text.strip() else "(empty body)"


def completion_text(reply: object) -> tuple[str, tuple[int, int]]:
    """The first choice's text and (prompt, completion) tokens of a chat completion.

    The openai client hands back the body as text when its content type is not JSON, and
    builds a completion from any JSON without checking it: both end up here."""
    if isinstance(reply, str):
        return _raise(f"non-JSON response body ({_snippet(reply) if reply.strip() else 'empty'})")
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, (list, tuple)):
        return _raise("response body is not a chat completion (no choices)")
    text = ""
    if choices:
        message = getattr(choices[0], "message", None)
        content = getattr(message, "content", None) if message is not None else None
        if message is None or not isinstance(content, (str, type(None))):
            return _raise("response body is not a chat completion (no message text)")
        text = content or ""
    usage = getattr(reply, "usage", None)
    tokens = tuple(value if type(value) is int else 0
                   for value in (getattr(usage, "prompt_tokens", 0), getattr(usage, "completion_tokens", 0)))
    return text, tokens


def _raise(message: str):
    raise NotACompletion(message)


def _cause(exc: BaseException) -> str:
    """The innermost cause's message (`Connection refused`), not the client's 'Connection error.'"""
    inner = exc
    while inner.__cause__ is not None and inner.__cause__ is not inner:
        inner = inner.__cause__
    text = str(inner) or type(inner).__name__
    return text if inner is exc else f"{text} ({type(inner).__name__})"


def _split_query(base_url: str | None) -> tuple[str | None, dict[str, str] | None]:
    """A base URL's query (`?api-key=...`, `?api-version=...`) as the client's default query:
    the client would otherwise paste the request path after it."""
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    if not base_url or "?" not in base_url:
        return base_url, None
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(query="", fragment="")), dict(parse_qsl(parts.query, keep_blank_values=True))
