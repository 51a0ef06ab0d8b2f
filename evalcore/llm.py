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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from .errors import EvalcoreError

__all__ = ["LLMConfig", "LLMCallError", "LLMClient"]

T = TypeVar("T")


class LLMCallError(EvalcoreError):
    """Every try failed; the message says what happened last."""


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


@dataclass
class LLMClient:
    """A synchronous chat client with evalcore's retry policy; counts calls and tokens."""

    config: LLMConfig
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False)

    def __post_init__(self):
        from openai import OpenAI

        self._client = OpenAI(base_url=self.config.base_url, max_retries=0, timeout=self.config.timeout,
                              api_key=os.environ.get("OPENAI_API_KEY") or "not-needed")

    def _delay(self, attempt: int, retry_after: str | None) -> float:
        if retry_after:
            try:
                return min(float(retry_after), self.config.max_backoff)
            except ValueError:
                pass
        base = min(self.config.backoff * 2 ** attempt, self.config.max_backoff)
        return base * (0.5 + random.random() / 2)

    def chat(self, messages: list[dict], parse: Callable[[str], T], json_mode: bool = False) -> tuple[T, str]:
        """Send `messages`, return (parse(reply), reply). Raises LLMCallError after the last try."""
        import openai

        last = "no attempt"
        for attempt in range(self.config.max_tries):
            retry_after = None
            try:
                self.calls += 1
                kwargs = {"response_format": {"type": "json_object"}} if json_mode else {}
                reply = self._client.chat.completions.create(
                    model=self.config.model, messages=messages, temperature=self.config.temperature, **kwargs)
                if reply.usage is not None:
                    self.prompt_tokens += reply.usage.prompt_tokens or 0
                    self.completion_tokens += reply.usage.completion_tokens or 0
                text = (reply.choices[0].message.content or "") if reply.choices else ""
                try:
                    return parse(text), text
                except ValueError as exc:
                    last = f"unparseable reply ({exc}): {text[:120]!r}"
            except openai.APITimeoutError:
                last = f"timed out after {self.config.timeout:g} s"
            except openai.APIStatusError as exc:
                if exc.status_code != 429 and exc.status_code < 500:
                    raise LLMCallError(f"HTTP {exc.status_code} from {self.config.base_url or 'OpenAI'}: "
                                       f"{str(exc)[:200]}") from None
                last = f"HTTP {exc.status_code}"
                retry_after = exc.response.headers.get("retry-after")
            except openai.APIConnectionError as exc:
                last = f"connection failed: {exc}"
            if attempt + 1 < self.config.max_tries:
                self.sleep(self._delay(attempt, retry_after))
        raise LLMCallError(f"{last} (after {self.config.max_tries} tries)")
