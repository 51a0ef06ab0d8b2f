"""A team's own search engine over HTTP (docs/search-engines.md): the same expanded query
as the embedded engine, sent as a JSON request, with the ranked ids read from the answer.

- The request body is a template with the query, the depth and the weighted terms as
  variables; a response path selects the ids, an optional score path the scores
  (request_template). Without scores the rank gives them (n, n-1, ... 1); scores are made
  strictly decreasing (outcome.strictly_decreasing).
- Presets `elasticsearch` and `opensearch`: POST `{url}/_search`, a bool query whose
  should clauses are the query over the fields and each term as a phrase boosted by its weight.
- Credentials come only from the environment (`header_env`: header name -> variable) and
  appear nowhere: not in describe(), repr, errors or stored data. The URL is shown redacted.
- Requests go to the configured URL only: no redirect is followed, no proxy is taken from
  the environment. 429 and 503 are retried `retries` times (Retry-After, at most 10 s, or
  backoff x 2^attempt); every other failure ends the search with one SearchEngineError.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx

from ..redact import is_secret_parameter, redact_text, redact_url, url_secrets
from .outcome import Ranking, strictly_decreasing
from .request_template import (EACH, EngineConfigError, SearchEngineError, check_path, load_template, render_template,
                               select_path)

__all__ = ["HttpEngine", "PRESETS", "TABLE_KEYS", "EngineConfigError", "SearchEngineError", "preset_template"]

PRESETS = ("elasticsearch", "opensearch")
TABLE_KEYS = ("url", "preset", "template", "response_path", "score_path", "fields", "headers", "header_env",
              "timeout", "workers", "retries", "backoff")
"""The keys of a `[retrieval.http]` table: HttpEngine's arguments."""
_HEADER_NAME = re.compile(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|password|cookie|session|credential", re.IGNORECASE)
_RETRIED = (429, 503)
_MAX_WAIT = 10.0  # seconds of Retry-After honoured at most
_SNIPPET = 200  # characters of an error body shown


def preset_template(fields: Sequence[str]) -> dict:
    """The Elasticsearch/OpenSearch request: the query over `fields` (summed, like Tantivy's
    query parser over several default fields), OR each term as a phrase in each field
    boosted by its weight; `size` is the depth, no `_source`."""
    should: list = [{"multi_match": {"query": "{{query}}", "fields": list(fields), "type": "most_fields"}}]
    should += [{EACH: {"match_phrase": {f: {"query": "{{term}}", "boost": "{{weight}}"}}}} for f in fields]
    return {"size": "{{depth}}", "_source": False, "query": {"bool": {"should": should}}}


def _check_url(url: str) -> None:
    """An http(s) URL that holds no credential (they come from header_env)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a malformed port
    except (ValueError, TypeError):
        raise EngineConfigError(f"url {redact_url(str(url))}: not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EngineConfigError(f"url {redact_url(url)}: must be an http:// or https:// URL with a host")
    if "@" in parts.netloc or any(is_secret_parameter(name) for name, _ in parse_qsl(parts.query, True)):
        raise EngineConfigError(f"url {redact_url(url)}: holds a credential; give it in header_env "
                                '(Authorization = "SEARCH_AUTH", the environment variable that holds it)')


def _search_url(url: str) -> str:
    """`https://es:9200/products` -> `https://es:9200/products/_search` (the query kept)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url  # _check_url names the problem
    path = parts.path.rstrip("/")
    return urlunsplit(parts._replace(path=path if path.endswith("/_search") else f"{path}/_search"))


def _secret_forms(value: str) -> list[str]:
    """A header's value and the parts an error body might echo: the token after its
    scheme, and a Basic credential decoded."""
    forms = [value]
    scheme, _, token = value.partition(" ")
    if token.strip():
        forms.append(token.strip())
        if scheme.casefold() == "basic":
            try:
                decoded = base64.b64decode(token.strip(), validate=True).decode()
            except (ValueError, UnicodeDecodeError):
                decoded = ""
            forms += [decoded, decoded.partition(":")[2]]
    return [form for form in forms if form]


def _headers(headers: Mapping[str, str] | None, header_env: Mapping[str, str] | None,
             environ: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """The headers to send and the secret forms to blank; a literal credential or an unset
    variable is an EngineConfigError that never repeats a value."""
    out: dict[str, str] = {}
    secrets: list[str] = []
    for name, value in [*(headers or {}).items(), *(header_env or {}).items()]:
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):
            raise EngineConfigError(f"header {name!r}: not a header name")
    for name, value in (headers or {}).items():
        if _CREDENTIAL_HEADER.search(name):
            raise EngineConfigError(f'header {name}: a credential goes in header_env, as {name} = "SEARCH_AUTH" '
                                    "(the environment variable that holds it), never in the configuration")
        if not isinstance(value, str) or "\r" in value or "\n" in value:
            raise EngineConfigError(f"header {name}: must be one line of text")
        out[name] = value
    for name, variable in (header_env or {}).items():
        if not isinstance(variable, str) or not _ENV_NAME.fullmatch(variable):
            raise EngineConfigError(f"header_env.{name}: must name an environment variable, such as SEARCH_AUTH")
        value = (environ.get(variable) or "").strip()
        if not value:
            raise EngineConfigError(f"header {name}: the environment variable {variable} is not set "
                                    "(it holds the header's value)")
        if "\r" in value or "\n" in value:
            raise EngineConfigError(f"header {name}: the environment variable {variable} holds more than one line")
        out[name] = value
        secrets += _secret_forms(value)
    return out, secrets


class HttpEngine:
    """A search engine behind an HTTP JSON API, with TantivyEngine's interface: search()
    ranks a batch of requests, describe() says what ranked them (JSON-ready, no secret)."""

    def __init__(self, url: str, *, preset: str | None = None, template=None, response_path: str | None = None,
                 score_path: str | None = None, fields: Sequence[str] | None = None,
                 headers: Mapping[str, str] | None = None, header_env: Mapping[str, str] | None = None,
                 timeout: float = 30.0, workers: int = 4, retries: int = 2, backoff: float = 0.5,
                 environ: Mapping[str, str] | None = None):
        """`preset` ("elasticsearch", "opensearch": `url` names the index) or `template` with
        `response_path` (`url` is the endpoint); `fields` go with a preset (default title,
        text); `headers` are sent as written, `header_env` maps a header to the environment
        variable holding its value (credentials). EngineConfigError when any cannot work."""
        if preset is not None:
            if preset not in PRESETS:
                raise EngineConfigError(f"unknown preset {preset!r} (known: {', '.join(PRESETS)}; "
                                        "or give a request template and a response path)")
            if template is not None or response_path is not None or score_path is not None:
                raise EngineConfigError("a preset sets the request template and the response paths: "
                                        "give a preset or a template, not both")
            fields = tuple(fields) if fields is not None else ("title", "text")
            if not fields or not all(isinstance(f, str) and f.strip() for f in fields):
                raise EngineConfigError("fields: a list of the index's field names, such as title and text")
            template = preset_template(fields)
            response_path, score_path = "hits.hits[*]._id", "hits.hits[*]._score"
            url = _search_url(str(url))
        elif template is None or response_path is None:
            raise EngineConfigError("an HTTP engine needs a preset (elasticsearch, opensearch) "
                                    "or a request template and a response path")
        elif fields is not None:
            raise EngineConfigError("fields go with a preset: a request template names its own fields")
        _check_url(url)
        for name, value in (("timeout", timeout), ("backoff", backoff)):
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0 or (
                    name == "timeout" and value == 0):
                raise EngineConfigError(f"{name}: seconds, a number {'above' if name == 'timeout' else 'from'} 0")
        for name, value, least in (("workers", workers, 1), ("retries", retries, 0)):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise EngineConfigError(f"{name}: a whole number from {least}")
        self.preset, self.url, self.fields = preset, url, tuple(fields) if fields else None
        self.template = load_template(template)
        self.response_path, self.score_path = response_path, score_path
        for path in (response_path, score_path):
            if path is not None:
                check_path(path)
        self.timeout, self.workers, self.retries, self.backoff = float(timeout), workers, retries, float(backoff)
        self._headers, self._secrets = _headers(headers, header_env, os.environ if environ is None else environ)

    @classmethod
    def from_table(cls, table: Mapping, where: str = "retrieval.http",
                   environ: Mapping[str, str] | None = None) -> HttpEngine:
        """The engine a configuration table describes (its keys are __init__'s arguments);
        EngineConfigError names `where.KEY` for a key that is unknown or missing."""
        if not isinstance(table, Mapping):
            raise EngineConfigError(f"{where}: must be a table of {', '.join(TABLE_KEYS)}")
        unknown = sorted(set(table) - set(TABLE_KEYS))
        if unknown:
            raise EngineConfigError(f"{where}.{unknown[0]}: unknown key (known: {', '.join(TABLE_KEYS)})")
        if "url" not in table:
            raise EngineConfigError(f"{where}.url: required (the engine's index or endpoint)")
        try:
            return cls(**table, environ=environ)
        except EngineConfigError as exc:
            raise EngineConfigError(f"{where}: {exc}") from None

    def __repr__(self) -> str:
        return f"HttpEngine({redact_url(self.url)!r}, preset={self.preset!r}, headers={sorted(self._headers)!r})"

    def describe(self) -> dict:
        """What ranked the documents, for the report and the content hash: no header value."""
        canonical = json.dumps(self.template, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return {"engine": "http", "preset": self.preset, "url": redact_url(self.url),
                "template_sha256": hashlib.sha256(canonical.encode()).hexdigest(),
                "response_path": self.response_path, "score_path": self.score_path,
                "fields": list(self.fields) if self.fields else None}

    def search(self, requests: Sequence[tuple[str, Sequence[tuple[str, float]]]], depth: int) -> list[Ranking]:
        """One Ranking per (query, [(term, weight)]) request, in order, at most `depth` ids
        each; `workers` requests in flight. The first failure ends the search."""
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"depth must be a whole number from 1, not {depth!r}")
        bodies = [self.body(query, terms, depth) for query, terms in requests]
        if not bodies:
            return []
        with self._client() as client, ThreadPoolExecutor(self.workers, thread_name_prefix="termgate-http") as pool:
            futures = [pool.submit(self._search_one, client, body, depth) for body in bodies]
            try:
                return [future.result() for future in futures]
            finally:
                for future in futures:
                    future.cancel()

    def body(self, query: str, terms: Sequence[tuple[str, float]], depth: int) -> bytes:
        """The request body for one query: the template rendered, terms of weight 0 (or blank)
        left out, as the embedded engine leaves them out."""
        kept = [(str(term), float(weight)) for term, weight in terms if weight > 0 and str(term).strip()]
        rendered = render_template(self.template, {"query": str(query), "depth": depth}, kept)
        return json.dumps(rendered, ensure_ascii=False, allow_nan=False).encode()

    def _client(self) -> httpx.Client:
        # trust_env=False: no proxy or .netrc from the environment; requests go to the URL only
        return httpx.Client(headers={"Accept": "application/json", "Content-Type": "application/json",
                                     **self._headers},
                            timeout=self.timeout, follow_redirects=False, trust_env=False,
                            limits=httpx.Limits(max_connections=self.workers, max_keepalive_connections=self.workers))

    def _search_one(self, client: httpx.Client, body: bytes, depth: int) -> Ranking:
        return self._ranking(self._post(client, body), depth)

    def _post(self, client: httpx.Client, body: bytes):
        shown = redact_url(self.url)
        for attempt in range(self.retries + 1):
            try:
                response = client.post(self.url, content=body)
            except httpx.TimeoutException:
                raise SearchEngineError(f"{shown} did not answer within {self.timeout:g} s") from None
            except httpx.HTTPError as exc:
                reason = self._redact(str(exc)) or type(exc).__name__
                raise SearchEngineError(f"cannot reach {shown}: {reason}") from None
            if response.status_code not in _RETRIED or attempt == self.retries:
                break
            time.sleep(self._wait(response, attempt))
        status = response.status_code
        if not 200 <= status < 300:
            tries = f" after {attempt + 1} tries" if attempt else ""
            hint = (" (check the credentials in header_env)" if status in (401, 403) else
                    " (termgate follows no redirect: configure the final URL)" if 300 <= status < 400 else "")
            raise SearchEngineError(f"{shown} answered HTTP {status}{tries}{hint}: {self._snippet(response.text)}")
        try:
            return response.json()
        except ValueError:
            raise SearchEngineError(f"{shown} answered something that is not JSON: "
                                    f"{self._snippet(response.text)}") from None

    def _wait(self, response: httpx.Response, attempt: int) -> float:
        try:
            seconds = float(response.headers.get("retry-after", ""))
        except ValueError:
            seconds = math.nan
        if not math.isfinite(seconds):
            seconds = self.backoff * 2 ** attempt
        return min(max(seconds, 0.0), _MAX_WAIT)

    def _redact(self, text: str) -> str:
        return redact_text(text, [*self._secrets, *url_secrets(self.url)]) or ""

    def _snippet(self, text: str) -> str:
        """The start of an error body, secrets blanked before it is cut (a cut secret would show)."""
        shown = " ".join(self._redact(text).split())
        return (shown[:_SNIPPET] + "...") if len(shown) > _SNIPPET else shown or "(empty body)"

    def _ranking(self, document, depth: int) -> Ranking:
        ids = select_path(document, self.response_path)
        scores = select_path(document, self.score_path) if self.score_path else None
        if scores is not None and len(scores) != len(ids):
            raise SearchEngineError(f"the response has {len(ids)} ids ({self.response_path}) "
                                    f"but {len(scores)} scores ({self.score_path})")
        if scores is not None and any(score is None for score in scores):
            scores = None  # an engine that sorted by something else gives no scores: the rank does
        if scores is not None and not all(isinstance(s, (int, float)) and not isinstance(s, bool)
                                          and math.isfinite(s) for s in scores):
            raise SearchEngineError(f"the response's {self.score_path} holds something other than numbers")
        kept: dict[str, float] = {}
        for rank, doc_id in enumerate(ids):
            if isinstance(doc_id, int) and not isinstance(doc_id, bool):
                doc_id = str(doc_id)
            if not isinstance(doc_id, str) or not doc_id:
                raise SearchEngineError(f"the response's {self.response_path} holds {type(doc_id).__name__} "
                                        f"{json.dumps(doc_id)[:40]}, not a document id (a non-empty string)")
            kept.setdefault(doc_id, float(scores[rank]) if scores is not None else float(len(ids) - rank))
        top = list(kept.items())[:depth]
        return Ranking([doc_id for doc_id, _ in top], strictly_decreasing([score for _, score in top]))
