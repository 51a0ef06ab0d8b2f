"""The one place that talks to an OpenAI-compatible endpoint (OpenAI, Azure, vLLM, Ollama...).

evalcore owns the retries (the client's own are off, so call counts are exact): timeouts,
429 and 5xx are retried with exponential backoff and jitter, honouring Retry-After; a
reply the caller cannot parse is retried the same way. Keys come only from the
environment (OPENAI_API_KEY) and are never logged or stored.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, TypeVar

from .errors import EvalcoreError

__all__ = ["LLMConfig", "LLMCallError", "ReplyCache", "AsyncLLMClient", "request_key", "retry_delay",
           "run_in_fresh_loop"]

T = TypeVar("T")


class LLMCallError(EvalcoreError):
    """Every try failed; the message says what happened last, `reply` holds the last raw
    reply when there was one (an unparseable answer is kept for the record)."""

    def __init__(self, message: str, reply: str | None = None):
        super().__init__(message)
        self.reply = reply


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

    @classmethod
    def from_settings(cls, llm: dict, model: str | None = None) -> LLMConfig:
        chosen = model or os.environ.get("EVALCORE_LLM_MODEL") or llm.get("model")
        if not chosen:
            raise EvalcoreError("no LLM model configured: set [llm] model in evalcore.toml or EVALCORE_LLM_MODEL")
        return cls(model=chosen, base_url=os.environ.get("OPENAI_BASE_URL") or llm.get("base_url"),
                   timeout=float(llm.get("timeout", 30.0)), max_tries=int(llm.get("max_tries", 4)),
                   backoff=float(llm.get("backoff", 0.5)))


def retry_delay(config: LLMConfig, attempt: int, retry_after: str | None) -> float:
    """evalcore's backoff: the server's Retry-After when it gives one (capped), else
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


def request_key(base_url: str | None, model: str, messages: list[dict], params: dict) -> str:
    """Cache key: endpoint, model, messages and parameters, as canonical JSON."""
    import hashlib
    import json

    canonical = json.dumps({"base_url": base_url, "model": model, "messages": messages, "params": params},
                           sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


class ReplyCache(Protocol):
    """Where parseable replies outlive a run (the store's LLM cache, evalcore.store.StoredReplies)."""

    def load(self, keys: list[str]) -> dict[str, str]:
        """Cached replies for these request keys (absent keys are missing)."""

    def save(self, entries: list[tuple[str, str, str, int, int]]) -> None:
        """Keep (key, model, reply, prompt_tokens, completion_tokens) entries."""


class AsyncLLMClient:
    """Async chat calls with bounded concurrency, evalcore's retry policy and a reply cache.

    Only replies the caller could parse are cached, so a rerun retries exactly the items
    that errored; cached replies are flushed to the store about once a second, so a run
    that is interrupted (Ctrl-C, kill) resumes where it stopped.
    """

    def __init__(self, config: LLMConfig, concurrency: int = 8, cache: ReplyCache | None = None, sleep=None):
        import asyncio

        from openai import AsyncOpenAI

        self.config = config
        self.cache = cache
        self._client = AsyncOpenAI(base_url=config.base_url, max_retries=0, timeout=config.timeout,
                                   api_key=os.environ.get("OPENAI_API_KEY") or "not-needed")
        self._slots = asyncio.Semaphore(max(1, concurrency))
        self._sleep = sleep or asyncio.sleep
        self._cache: dict[str, str] = {}
        self._pending: list[tuple[str, str, str, int, int]] = []
        self._flush_lock = asyncio.Lock()
        self._last_flush = time.monotonic()
        self.calls = self.cache_hits = self.prompt_tokens = self.completion_tokens = 0
        self.in_flight = self.max_in_flight = 0

    def key(self, messages: list[dict], params: dict) -> str:
        return request_key(self.config.base_url, self.config.model, messages, params)

    async def prefetch(self, keys: list[str]) -> None:
        """Load cached replies for these keys in one store query."""
        import asyncio

        if self.cache is not None:
            self._cache.update(await asyncio.to_thread(self.cache.load, keys))

    async def flush(self, force: bool = False) -> None:
        import asyncio

        if self.cache is None or not self._pending:
            return
        if not force and len(self._pending) < 256 and time.monotonic() - self._last_flush < 1.0:
            return
        async with self._flush_lock:
            batch, self._pending = self._pending, []
            self._last_flush = time.monotonic()
            if batch:
                await asyncio.to_thread(self.cache.save, batch)

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        return retry_delay(self.config, attempt, retry_after)

    async def chat(self, messages: list[dict], parse: Callable[[str], T], params: dict | None = None) -> tuple[T, str, bool]:
        """(parse(reply), reply, from_cache). Raises LLMCallError after the last try."""
        import openai

        params = dict(params or {"temperature": self.config.temperature})
        key = self.key(messages, params)
        cached = self._cache.get(key)
        if cached is not None:
            try:
                self.cache_hits += 1
                return parse(cached), cached, True
            except ValueError:
                self.cache_hits -= 1  # a parser changed since: ask again
        last, last_reply = "no attempt", None
        for attempt in range(self.config.max_tries):
            retry_after = None
            async with self._slots:
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    self.calls += 1
                    reply = await self._client.chat.completions.create(model=self.config.model, messages=messages,
                                                                       **params)
                    text = (reply.choices[0].message.content or "") if reply.choices else ""
                    usage = reply.usage
                    p_tok = (usage.prompt_tokens or 0) if usage else 0
                    c_tok = (usage.completion_tokens or 0) if usage else 0
                    self.prompt_tokens += p_tok
                    self.completion_tokens += c_tok
                    try:
                        parsed = parse(text)
                    except ValueError as exc:
                        last, last_reply = f"unparseable reply ({exc}): {text[:120]!r}", text
                    else:
                        self._cache[key] = text
                        self._pending.append((key, self.config.model, text, p_tok, c_tok))
                        await self.flush()
                        return parsed, text, False
                except openai.APITimeoutError:
                    last = f"timed out after {self.config.timeout:g} s"
                except openai.APIStatusError as exc:
                    if exc.status_code != 429 and exc.status_code < 500:
                        raise LLMCallError(f"HTTP {exc.status_code}: {str(exc)[:200]}") from None
                    last = f"HTTP {exc.status_code}"
                    retry_after = exc.response.headers.get("retry-after")
                except openai.APIConnectionError as exc:
                    last = f"connection failed: {exc}"
                finally:
                    self.in_flight -= 1
            if attempt + 1 < self.config.max_tries:
                await self._sleep(self._delay(attempt, retry_after))
        raise LLMCallError(f"{last} (after {self.config.max_tries} tries)", last_reply)

    def usage(self) -> dict:
        return {"model": self.config.model, "base_url": self.config.base_url, "calls": self.calls,
                "cache_hits": self.cache_hits, "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens}

    async def aclose(self) -> None:
        await self.flush(force=True)
        await self._client.close()
