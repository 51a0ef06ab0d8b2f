"""Where LLM calls go and with what settings: `LLMConfig` (from `[llm]`, a named endpoint and
the standard environment variables) and `endpoint_url`, the one rule for the endpoint (SPEC
§5: no default remote endpoint, so nothing leaves for a host nobody named)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from ..environment import setting
from ..errors import TermgateError, UsageError
from ..redact import redact_text, redact_url, url_secrets

__all__ = ["DEFAULT_MAX_TOKENS", "DEFAULT_CONCURRENCY", "LLMConfig", "NO_ENDPOINT", "endpoint_url", "split_query"]

DEFAULT_MAX_TOKENS = 512
"""The completion tokens asked for when neither `--max-tokens` nor `max_tokens` says: enough
for any expansion list or judge verdict, and a bound on a local server that would otherwise
generate until its context is full."""
DEFAULT_CONCURRENCY = 8
"""Calls in flight at once when neither `--concurrency` nor `concurrency` says."""




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


def split_query(base_url: str | None) -> tuple[str | None, dict[str, str] | None]:
    """A base URL's query (`?api-key=...`, `?api-version=...`) as the client's default query:
    the client would otherwise paste the request path after it."""
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    if not base_url or "?" not in base_url:
        return base_url, None
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(query="", fragment="")), dict(parse_qsl(parts.query, keep_blank_values=True))
