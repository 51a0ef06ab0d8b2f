"""How an LLM call fails: the errors a caller sees, and the reading of what an endpoint sent
back when it was not a usable chat completion."""

from __future__ import annotations

from ..errors import TermgateError
from .stream import Answer, completion_of, snippet

__all__ = ["LLMCallError", "StructuredOutputRefused", "completion_answer", "error_body", "cause_of"]


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

    def __init__(self, message: str, said: str | None = None):
        super().__init__(message)
        self.said = said or message
        """What the endpoint said to each form, redacted (`json_schema: HTTP 500: '...'; then ...`)."""


def error_body(exc) -> str:
    """What the endpoint said with its HTTP error: the JSON error message, else the body."""
    body = exc.body if isinstance(exc.body, dict) else {}
    error = body.get("error", body)  # the client hands over the body's "error" object, or the whole body
    message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
    if isinstance(message, str) and message.strip():
        return snippet(message, 200)
    try:
        text = exc.response.text
    except Exception:  # noqa: BLE001 - a body that cannot be read says nothing more
        text = ""
    return snippet(text, 200) if text.strip() else "(empty body)"


def completion_answer(reply: object) -> Answer:
    """A whole chat completion from the openai client read by the one reader of whole
    completions (stream.completion_of), so a streamed and a plain call agree on what a reply is.

    The client hands back the body as text when its content type is not JSON, and builds a
    completion from any JSON without checking it: both end up here, as a fault naming what the
    body was."""
    if isinstance(reply, str):
        return Answer(f"non-JSON response body ({snippet(reply) if reply.strip() else 'empty'})")
    dump = getattr(reply, "model_dump", None)
    return completion_of(dump(warnings=False) if callable(dump) else reply)


def cause_of(exc: BaseException) -> str:
    """The innermost cause's message (`Connection refused`), not the client's 'Connection error.'"""
    inner = exc
    while inner.__cause__ is not None and inner.__cause__ is not inner:
        inner = inner.__cause__
    text = str(inner) or type(inner).__name__
    return text if inner is exc else f"{text} ({type(inner).__name__})"
