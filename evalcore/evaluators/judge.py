"""The LLM-judge evaluator (SPEC §6: first number within [0, 10], divided by 10)."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import string
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..llm import LLMCallError, NotACompletion, completion_text, run_in_fresh_loop

from .base import (SHOWN_REPLY, DEFAULT_CONCURRENCY, EvalResult, Evaluator, EvaluatorError,
                   EvaluatorParseError, Row, T, check_concurrency, check_threshold, gather_limited, as_rows)


# -- LLM judge ------------------------------------------------------------------------------------

DEFAULT_JUDGE_TEMPLATE = """You are grading an answer.

Question or task:
{input}

Reference answer:
{reference}

Answer to grade:
{prediction}

Rate how well the answer to grade responds to the question or task, judged against the \
reference answer, on a scale from 0 (wrong or useless) to 10 (fully correct and complete). \
Start your reply with the number, then explain briefly."""

_PLACEHOLDERS = ("input", "prediction", "reference")
# A number not glued to a Latin word or another number ("gpt4", "v1.2" are not scores, but
# "评分7" is); a leading minus counts, so "-3" is a number outside [0, 10], not a 3.
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.])-?(?:\d+(?:\.\d+)?|\.\d+)")


def parse_judge_score(reply: str) -> float:
    """The first number within [0, 10] in `reply`, divided by 10 ("Score: 8/10" -> 0.8).

    Numbers outside the range are skipped ("42 then 6" -> 0.6). Raises
    `EvaluatorParseError`, quoting the reply, when there is none.
    """
    for match in _NUMBER.finditer(reply):
        value = float(match.group())
        if 0.0 <= value <= 10.0:
            return value / 10.0
    shown = reply if len(reply) <= SHOWN_REPLY else reply[:SHOWN_REPLY] + "…"
    raise EvaluatorParseError(f"the judge's reply has no score between 0 and 10: {shown!r}; "
                              "ask the judge to start its reply with a number from 0 to 10", reply)


def _check_template(template: str) -> str:
    try:
        fields = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise EvaluatorError(f"judge template is not a valid format string ({exc}); write {{{{ and }}}} "
                             "for literal braces") from None
    missing = [f"{{{name}}}" for name in _PLACEHOLDERS if name not in fields]
    unknown = [f"{{{name}}}" for name in sorted(fields - set(_PLACEHOLDERS))]
    if missing or unknown:
        problem = "; ".join(([f"missing {', '.join(missing)}"] if missing else [])
                            + ([f"unknown {', '.join(unknown)}"] if unknown else []))
        raise EvaluatorError(f"judge template: {problem}: use exactly {{input}}, {{prediction}} and "
                             "{reference} (write {{ and }} for literal braces)")
    return template


def _is_async_client(client: Any) -> bool:
    import openai

    if isinstance(client, openai.AsyncOpenAI):
        return True
    create = getattr(getattr(getattr(client, "chat", None), "completions", None), "create", None)
    return create is not None and inspect.iscoroutinefunction(inspect.unwrap(create))


class LLMJudgeEvaluator(Evaluator):
    """Asks a chat model to rate the prediction 0–10; score = that number / 10, passes at ≥ `threshold`.

    `client` is an `openai.OpenAI` or `openai.AsyncOpenAI` (or Azure) client; its own
    retry and timeout settings apply. `aevaluate` awaits an async client directly and runs
    a sync one on a worker thread; `evaluate` with an async client runs it on a private
    event loop through a copy with its own connections (an async client's connections
    belong to the loop that opened them). `reasoning` is the judge's whole reply. A reply
    without a number in [0, 10] raises `EvaluatorParseError`; a failed call raises
    `LLMCallError`.

    Example:
        from openai import OpenAI
        judge = LLMJudgeEvaluator(OpenAI(), "gpt-4o-mini", threshold=0.7)
        judge.evaluate("Paris", reference="Paris", input="Capital of France?").score   # e.g. 1.0
    """

    def __init__(self, client: Any, model: str, template: str | None = None, threshold: float = 0.5,
                 temperature: float | None = 0.0):
        self.client = client
        self.model = model
        self.template = DEFAULT_JUDGE_TEMPLATE if template is None else _check_template(template)
        self.threshold = check_threshold(threshold, 0.0, 1.0, "a score")
        self.temperature = temperature
        self._async = _is_async_client(client)

    def prompt(self, prediction: str, reference: str = "", input: str = "") -> str:
        """The message sent to the judge for one row."""
        return self.template.format(input=input, prediction=prediction, reference=reference)

    def _request(self, prediction: str, reference: str, input: str) -> dict:
        request: dict = {"model": self.model,
                         "messages": [{"role": "user", "content": self.prompt(prediction, reference, input)}]}
        if self.temperature is not None:
            request["temperature"] = self.temperature
        return request

    def _result(self, completion: Any) -> EvalResult:
        try:
            reply = completion_text(completion)[0]
        except NotACompletion as exc:  # e.g. an HTML page from a proxy: not the judge's answer
            raise LLMCallError(f"judge model {self.model!r}: {exc}") from None
        score = parse_judge_score(reply)
        return EvalResult(score=score, passed=score >= self.threshold, reasoning=reply)

    def _call_failed(self, exc: Exception) -> LLMCallError:
        if isinstance(exc, json.JSONDecodeError):  # the client parses a JSON content type itself
            return LLMCallError(f"judge model {self.model!r}: non-JSON response body "
                                f"({exc.msg}, char {exc.pos})")
        return LLMCallError(f"judge model {self.model!r} could not be reached or refused the request: {exc}")

    async def _ajudge(self, client: Any, row: Row) -> EvalResult:
        import openai

        try:
            completion = await client.chat.completions.create(**self._request(*row))
        except (openai.APIError, json.JSONDecodeError) as exc:
            raise self._call_failed(exc) from exc
        return self._result(completion)

    def _on_private_loop(self, run: Callable[[Any], Awaitable[T]]) -> T:
        import openai

        async def main() -> T:
            if not isinstance(self.client, openai.AsyncOpenAI):  # a look-alike: use it as it is
                return await run(self.client)
            async with self.client.copy(http_client=openai.DefaultAsyncHttpxClient()) as client:
                return await run(client)

        return run_in_fresh_loop(main)

    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        import openai

        row = (prediction, reference, input)
        if self._async:
            return self._on_private_loop(lambda client: self._ajudge(client, row))
        try:
            completion = self.client.chat.completions.create(**self._request(*row))
        except (openai.APIError, json.JSONDecodeError) as exc:
            raise self._call_failed(exc) from exc
        return self._result(completion)

    async def aevaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        if self._async:
            return await self._ajudge(self.client, (prediction, reference, input))
        return await asyncio.to_thread(self.evaluate, prediction, reference, input)

    def evaluate_dataset(self, rows: Iterable[dict | tuple],
                         concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        if not self._async:
            return super().evaluate_dataset(rows, concurrency)
        items, limit = as_rows(rows), check_concurrency(concurrency)
        return self._on_private_loop(lambda client: gather_limited(items, limit, lambda row: self._ajudge(client, row)))
