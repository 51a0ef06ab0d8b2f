"""One chat completion read off the wire: a server-sent event stream (what termgate asks
for, so a server notices when a timed-out caller leaves) or a whole JSON body (a server
that ignores `stream`). Either way the result is an `Answer`: the text, the token counts,
the finish reason, or the fault that makes the try a failure (retried by the client)."""

from __future__ import annotations

import json
from dataclasses import dataclass

__all__ = ["Answer", "read_answer", "completion_of", "snippet"]


@dataclass
class Answer:
    """What one try got: a reply (`fault` None) or a fault; an HTTP error keeps its status and body."""

    fault: str | None = None
    text: str = ""
    tokens: tuple[int, int] = (0, 0)
    """(prompt, completion) tokens, as the server counted them (0 when it did not say)."""
    finish: str | None = None
    """The first choice's finish_reason ("stop", "length", ...), None when not given."""
    status: int | None = None
    """The HTTP status of an error answer."""
    body: str | None = None
    """What the server said with an HTTP error (its error message, else the body)."""
    retry_after: str | None = None


def snippet(text: str, size: int = 60) -> str:
    return repr(" ".join(text.split())[:size])


async def read_answer(response) -> Answer:
    """The answer in an httpx response with a 2xx status, read to its end (or as far as the caller waits)."""
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "text/event-stream":
        return await _read_events(response)
    raw = (await response.aread()).decode("utf-8", errors="replace")
    try:
        body = json.loads(raw)
    except json.JSONDecodeError as exc:
        if kind == "application/json" or kind.endswith("+json"):  # a JSON content type over a body that is not JSON
            what = f"{snippet(exc.doc)}: {exc.msg} (char {exc.pos})" if exc.doc.strip() else "empty"
        else:  # an HTML page from a proxy, plain text
            what = snippet(raw) if raw.strip() else "empty"
        return Answer(f"non-JSON response body ({what})")
    return completion_of(body)


def completion_of(body: object) -> Answer:
    """A whole chat completion (parsed JSON) as an Answer; a fault naming what else it is."""
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list):
        return Answer("response body is not a chat completion (no choices)")
    text, finish = "", None
    if choices:
        first = choices[0] if isinstance(choices[0], dict) else {}
        message = first.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(message, dict) or not isinstance(content, (str, type(None))):
            return Answer("response body is not a chat completion (no message text)")
        text, finish = content or "", first.get("finish_reason")
    return Answer(text=text, tokens=_tokens(body.get("usage")), finish=finish if isinstance(finish, str) else None)


async def _read_events(response) -> Answer:
    """The first choice's deltas joined, its finish reason, and the usage a last event may carry."""
    parts: list[str] = []
    finish, tokens, data = None, (0, 0), []
    async for line in response.aiter_lines():
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
            continue
        if line or not data:  # an event's other fields, a comment, or a blank line before any data
            continue
        event, data = "\n".join(data), []
        if event.strip() == "[DONE]":
            break
        fault, piece, done, counted = _event(event)
        if fault:
            return Answer(fault, "".join(parts))
        parts.append(piece)
        finish, tokens = done or finish, counted if any(counted) else tokens
    return Answer(text="".join(parts), tokens=tokens, finish=finish)


def _event(event: str) -> tuple[str | None, str, str | None, tuple[int, int]]:
    """(fault, text, finish_reason, tokens) of one stream event."""
    try:
        chunk = json.loads(event)
    except json.JSONDecodeError as exc:
        return f"non-JSON stream event ({snippet(event)}: {exc.msg})", "", None, (0, 0)
    if not isinstance(chunk, dict):
        return f"stream event is not a chat completion chunk ({snippet(event)})", "", None, (0, 0)
    if chunk.get("error") is not None:  # a server that fails mid-stream says so in an event
        error = chunk["error"]
        said = error.get("message") if isinstance(error, dict) else error
        return f"stream error: {snippet(str(said), 200)}", "", None, (0, 0)
    choices = chunk.get("choices")
    if not isinstance(choices, list):
        return "stream event is not a chat completion chunk (no choices)", "", None, (0, 0)
    piece, finish = "", None
    for choice in choices:
        if isinstance(choice, dict) and choice.get("index", 0) == 0:
            delta = choice.get("delta") or choice.get("message") or {}
            content = delta.get("content") if isinstance(delta, dict) else None
            piece = content if isinstance(content, str) else ""
            finish = choice.get("finish_reason") if isinstance(choice.get("finish_reason"), str) else None
    return None, piece, finish, _tokens(chunk.get("usage"))


def _tokens(usage: object) -> tuple[int, int]:
    usage = usage if isinstance(usage, dict) else {}
    return tuple(value if type(value) is int else 0
                 for value in (usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)))
