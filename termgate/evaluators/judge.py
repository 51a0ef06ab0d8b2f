"""The LLM-judge evaluator and the one reading of a judge's score (SPEC §6, `parse_judge_score`:
the last fraction, else the last "Score: N", else the last number outside a stated scale)."""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import string
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..llm.client import DEFAULT_MAX_TOKENS, LLMCallError, completion_answer, run_in_fresh_loop
from ..llm.replies import drop_reasoning

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
Explain briefly, then end your reply with one line "Score: N/10", where N is your score."""

_PLACEHOLDERS = ("input", "prediction", "reference")


# -- reading a judge's score (SPEC §6) -------------------------------------------------------------

# A number is ASCII digits not glued to a Latin letter, a digit or a dot ("gpt4", "v1.2", "9th"
# are not scores; "评分7分" holds a 7), nor hyphenated to a word or joined to another number by
# - / : ("GPT-4", a date 2024-05-01, a time 10:30, a range 7-8). A leading minus counts: "-3"
# is a number out of range, not a 3. A trailing % makes it hundredths.
_NUM = r"-?(?:\d+(?:\.\d+)?|\.\d+)"
_ALONE_BEFORE = r"(?<![A-Za-z0-9_.])(?<![A-Za-z0-9_][-–—/])(?<![0-9]:)"
_ALONE_AFTER = r"(?![A-Za-z0-9_]|\.\d|[-–—/:]\d)"
_NUMBER = re.compile(rf"{_ALONE_BEFORE}({_NUM})(%?){_ALONE_AFTER}")
# "8/10", "8 out of 10", "3 (out of 5)", "4 stars out of 5"
_FRACTION = re.compile(rf"{_ALONE_BEFORE}({_NUM})(?:\s*/\s*|\s+(?:\(\s*|(?:stars?|points?)\s+)?out\s+of\s+)"
                       rf"({_NUM}){_ALONE_AFTER}", re.I)
# Stated scales: their numbers are never the score ("on a scale of 1-10", "(0 to 10)",
# "between 1 and 10", "out of 10" with no score before it, "a 10-point scale").
_SCALE = re.compile(r"(?<![0-9.])[01]\s*(?:-|–|—|to)\s*(?:5|10|100)(?![0-9.])|between\s+[01]\s+and\s+(?:5|10|100)"
                    r"|scale\s+of\s+\d+|out\s+of\s+\d+|(?<![0-9])\d{1,3}(?:\s*-\s*|\s+)point\b", re.I)
# "Score: 7", "**Rating:** 8", "rating of 8", "Grade - 9", "score (1-10) is 7" end right before the number.
_KEYWORD_BEFORE = re.compile(r"\b(?:score|rating|grade)s?[\"']?(?:\s*\([^()]{0,20}\))?"
                             r"(?:[\s*_]*(?:[:=\-–—]|\bis\b|\bof\b))*[\s*_]*$", re.I)


def _shown(reply: str) -> str:
    return repr(reply if len(reply) <= SHOWN_REPLY else reply[:SHOWN_REPLY] + "…")


def parse_judge_score(reply: str) -> float:
    """The judge's score as a fraction in [0, 1], read as a person would (SPEC §6):

    1. the last fraction `N/M` or `N out of M` with M > 0 is N/M ("Rating: 85/100" -> 0.85);
    2. else the last `score`, `rating` or `grade` followed by a number N is N/10
       ("Score: 7", "**Rating:** 8", "rating of 8", "Grade - 9"; case-insensitive);
    3. else a reply that is only a number is that number/10 ("7" -> 0.7);
    4. else the last number that is not part of a stated scale ("1-10", "1 to 10",
       "scale of 1-10", "(1–10)", "out of 10") is that number/10
       ("On a scale of 1-10, I'd give this a 9." -> 0.9).

    Reasoning blocks (`<think>…</think>`) are dropped first, as in a harness reply: their
    drafts are not the score. "3 (out of 5)" and "4 stars out of 5" are fractions too, and
    a JSON answer's `"score": 8` is a keyed score. A number written with `%` is hundredths wherever rules 2-4 find it ("Score: 85%" and
    "85%" -> 0.85), but it is not a fraction for rule 1. Not numbers: digits glued to a
    letter or a dot ("gpt4", "v1.2", "3rd"), or joined to another number by `-`, `/` or `:`
    (dates, times, ranges such as "7-8"). A fraction over 0 ("0/0") is no score, and nor
    are its numbers. Raises `EvaluatorParseError`, quoting the reply, when no number is
    found or the result is outside [0, 1] ("Score: 12", "-2", "12/10").
    """
    reply_text, reply = reply, drop_reasoning(reply)  # a <think> block's drafts are not the score
    fractions = list(_FRACTION.finditer(reply))
    scored = [m for m in fractions if float(m.group(2)) > 0]
    if scored:
        last = scored[-1]
        value, what = float(last.group(1)) / float(last.group(2)), f"the fraction {last.group()!r}"
    else:
        taken = [(m.start(), m.end()) for m in [*fractions, *_SCALE.finditer(reply)]]
        numbers = [m for m in _NUMBER.finditer(reply)
                   if not any(start <= m.start() < end for start, end in taken)]
        if not numbers:
            raise EvaluatorParseError(f"the judge's reply has no score: {_shown(reply_text)}; ask the judge to end "
                                      "its reply with a line such as 'Score: 7/10'", reply_text)
        # Rule 3 needs no branch of its own: a reply that is only a number is its last number.
        keyed = [m for m in numbers if _KEYWORD_BEFORE.search(reply[max(0, m.start() - 80):m.start()])]
        last = (keyed or numbers)[-1]
        value = float(last.group(1)) / (100.0 if last.group(2) else 10.0)
        what = f"the score {last.group()!r}"
    if not 0.0 <= value <= 1.0:
        raise EvaluatorParseError(f"the judge's reply gives {what}, outside the scale (a fraction from 0 to 1, "
                                  f"or a number from 0 to 10): {_shown(reply_text)}", reply_text)
    return value


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
    """Asks a chat model to rate the prediction; score = `parse_judge_score(reply)` in [0, 1], passes at ≥ `threshold`.

    `client` is an `openai.OpenAI` or `openai.AsyncOpenAI` (or Azure) client; its own
    retry and timeout settings apply. `aevaluate` awaits an async client directly and runs
    a sync one on a worker thread; `evaluate` with an async client runs it on a private
    event loop through a copy with its own connections (an async client's connections
    belong to the loop that opened them). `reasoning` is the judge's whole reply. A reply
    with no usable score ("N/A", "Score: 12": see `parse_judge_score`) raises
    `EvaluatorParseError`; a failed call raises `LLMCallError`. Each request sends
    `max_tokens` (default 512; None sends none), and a reply cut off there
    (`finish_reason: length`) raises `EvaluatorParseError`: its score line may be missing, and
    a number in the cut reasoning is no score.

    Example:
        from openai import OpenAI
        judge = LLMJudgeEvaluator(OpenAI(), "gpt-4o-mini", threshold=0.7)
        judge.evaluate("Paris", reference="Paris", input="Capital of France?").score   # e.g. 1.0
    """

    def __init__(self, client: Any, model: str, template: str | None = None, threshold: float = 0.5,
                 temperature: float | None = 0.0, max_tokens: int | None = DEFAULT_MAX_TOKENS):
        self.client = client
        self.model = model
        self.max_tokens = max_tokens
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
        if self.max_tokens is not None:
            request["max_tokens"] = self.max_tokens
        return request

    def _result(self, completion: Any) -> EvalResult:
        answer = completion_answer(completion)
        if answer.fault:  # e.g. an HTML page from a proxy: not the judge's answer
            raise LLMCallError(f"judge model {self.model!r}: {answer.fault}")
        reply = answer.text
        if answer.finish == "length":
            raise EvaluatorParseError(f"the judge's reply was cut off at max_tokens ({self.max_tokens}) before it "
                                      f"finished: {_shown(reply)}; give the judge more max_tokens", reply)
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
