"""Single-answer evaluators: exact match, JSON validity, regex, embedding distance, LLM judge.

Every evaluator has `evaluate(prediction, reference="", input="") -> EvalResult`, an async
twin `aevaluate`, and `evaluate_dataset` / `aevaluate_dataset` that score many rows and
return the results in input order. A row is a dict with `prediction` and optional
`reference` and `input` (other keys are ignored), or a tuple (or list) `(prediction[, reference[, input]])`.

LLM judge scores follow SPEC §6: the first number within [0, 10] in the reply, divided by
10; passing is score ≥ threshold; a reply without one raises `EvaluatorParseError`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import numbers
import re
import string
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from .errors import EvalcoreError
from .llm import LLMCallError

__all__ = ["EvalResult", "Evaluator", "ExactMatchEvaluator", "JsonValidityEvaluator", "RegexMatchEvaluator",
           "EmbeddingDistanceEvaluator", "LLMJudgeEvaluator", "EvaluatorError", "EvaluatorParseError",
           "DEFAULT_JUDGE_TEMPLATE", "parse_judge_score"]

T = TypeVar("T")
Row = tuple[str, str, str]  # (prediction, reference, input)

DEFAULT_CONCURRENCY = 8
_SHOWN_REPLY = 200  # characters of a bad judge reply quoted in the error


class EvaluatorError(EvalcoreError, ValueError):
    """An evaluator built with invalid settings, or given a malformed row or embedding."""


class EvaluatorParseError(EvalcoreError, ValueError):
    """The LLM judge's reply holds no number within [0, 10]; `reply` is the full text."""

    def __init__(self, message: str, reply: str):
        super().__init__(message)
        self.reply = reply


class EvalResult(BaseModel):
    """The verdict on one prediction."""

    model_config = ConfigDict(frozen=True)

    score: float
    """1.0 / 0.0 for the deterministic evaluators, cosine similarity, or judge score / 10."""
    passed: bool
    """Whether the prediction passes this evaluator."""
    reasoning: str | None = None
    """Why: the failure, the similarity and threshold, or the judge's reply; None on a plain pass."""


# -- rows and concurrency -------------------------------------------------------------------


def _text(value: Any, field: str, index: int, required: bool = False) -> str:
    if value is None and not required:
        return ""
    if not isinstance(value, str):
        raise EvaluatorError(f"row {index}: {field} must be a string, got {type(value).__name__}")
    return value


def _row(index: int, row: dict | tuple) -> Row:
    if isinstance(row, dict):
        if "prediction" not in row:
            raise EvaluatorError(f"row {index}: missing 'prediction' (keys: {sorted(map(str, row))})")
        values = (row["prediction"], row.get("reference"), row.get("input"))
    elif isinstance(row, (tuple, list)) and 1 <= len(row) <= 3:
        values = (*row, None, None)[:3]
    else:
        raise EvaluatorError(f"row {index}: expected a dict with 'prediction' or a tuple "
                             f"(prediction[, reference[, input]]), got {row!r:.80}")
    return (_text(values[0], "prediction", index, required=True), _text(values[1], "reference", index),
            _text(values[2], "input", index))


def _rows(rows: Iterable[dict | tuple]) -> list[Row]:
    """Every row checked before any is scored, so a bad row costs no judge calls."""
    return [_row(i, row) for i, row in enumerate(rows)]


def _check_threshold(value: Any, low: float, high: float, meaning: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not low <= value <= high:
        raise EvaluatorError(f"threshold = {value!r}: expected {meaning} in [{low:g}, {high:g}]")
    return float(value)


def _check_concurrency(concurrency: int) -> int:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise EvaluatorError(f"concurrency = {concurrency!r}: expected a whole number of at least 1")
    return concurrency


async def _gather(items: list[Row], concurrency: int, score: Callable[[Row], Awaitable[T]]) -> list[T]:
    """Scores in input order, at most `concurrency` at a time; the first error cancels the rest
    and is raised as itself (not wrapped in an ExceptionGroup, as a TaskGroup would)."""
    gate = asyncio.Semaphore(concurrency)

    async def one(item: Row) -> T:
        async with gate:
            return await score(item)

    tasks = [asyncio.ensure_future(one(item)) for item in items]
    try:
        return list(await asyncio.gather(*tasks))
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


def _run_in_fresh_loop(make: Callable[[], Awaitable[T]]) -> T:
    """Runs a coroutine to completion from sync code, even when a loop is already running here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


class Evaluator(ABC):
    """Base class: subclasses implement `evaluate`; the async and batch forms come with it.

    Example:
        class NonEmpty(Evaluator):
            def evaluate(self, prediction, reference="", input=""):
                ok = bool(prediction.strip())
                return EvalResult(score=float(ok), passed=ok, reasoning=None if ok else "empty")
    """

    @abstractmethod
    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        """Scores one prediction."""

    async def aevaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        """Async twin of `evaluate` (here run inline: the base case is cheap CPU work)."""
        return self.evaluate(prediction, reference, input)

    def evaluate_dataset(self, rows: Iterable[dict | tuple],
                         concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        """Scores every row on up to `concurrency` threads; results in input order."""
        items, workers = _rows(rows), _check_concurrency(concurrency)
        if workers == 1 or len(items) <= 1:
            return [self.evaluate(*item) for item in items]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda item: self.evaluate(*item), items))

    async def aevaluate_dataset(self, rows: Iterable[dict | tuple],
                                concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        """Async twin of `evaluate_dataset`: at most `concurrency` rows in flight."""
        items, limit = _rows(rows), _check_concurrency(concurrency)
        return await _gather(items, limit, lambda item: self.aevaluate(*item))


# -- deterministic evaluators -----------------------------------------------------------------

_PASS = EvalResult(score=1.0, passed=True)


def _fail(reason: str) -> EvalResult:
    return EvalResult(score=0.0, passed=False, reasoning=reason)


class ExactMatchEvaluator(Evaluator):
    """Passes when the prediction equals the reference, character for character (no trimming).

    Example:
        ExactMatchEvaluator().evaluate("paris", "Paris").reasoning   # "expected 'Paris', got 'paris'"
        ExactMatchEvaluator.case_insensitive().evaluate("paris", "Paris").passed   # True
    """

    def __init__(self, case_sensitive: bool = True):
        self.case_sensitive = case_sensitive

    @classmethod
    def case_insensitive(cls) -> ExactMatchEvaluator:
        """An exact match that ignores case (Unicode case folding: 'Straße' matches 'STRASSE')."""
        return cls(case_sensitive=False)

    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        same = (prediction == reference if self.case_sensitive
                else prediction.casefold() == reference.casefold())
        return _PASS if same else _fail(f"expected {reference!r}, got {prediction!r}")


def _reject_constant(name: str) -> None:
    raise ValueError(f"{name} is not allowed")


class JsonValidityEvaluator(Evaluator):
    """Passes when the prediction is strict JSON (NaN, Infinity and -Infinity are invalid).

    Example:
        JsonValidityEvaluator().evaluate('{"a": 1}').passed        # True
        JsonValidityEvaluator().evaluate('{"a": NaN}').reasoning   # "Invalid JSON: NaN is not allowed"
    """

    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        try:
            json.loads(prediction, parse_constant=_reject_constant)
        except ValueError as exc:  # JSONDecodeError is a ValueError
            return _fail(f"Invalid JSON: {exc}")
        except RecursionError:
            return _fail("Invalid JSON: nested too deeply")
        return _PASS


class RegexMatchEvaluator(Evaluator):
    """Passes when `pattern` matches anywhere in the prediction (`re.search`).

    An invalid pattern raises `EvaluatorError` (a ValueError) here, not at the first row.

    Example:
        RegexMatchEvaluator(r"\\b\\d{4}-\\d{2}-\\d{2}\\b").evaluate("due 2024-05-01").passed   # True
    """

    def __init__(self, pattern: str | re.Pattern[str], flags: int = 0):
        try:
            self.pattern = re.compile(pattern, flags)
        except (re.error, TypeError, ValueError) as exc:
            raise EvaluatorError(f"invalid regular expression {pattern!r}: {exc}") from None

    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        if self.pattern.search(prediction):
            return _PASS
        return _fail(f"no match for pattern {self.pattern.pattern!r}")


# -- embedding distance ---------------------------------------------------------------------------


class EmbeddingDistanceEvaluator(Evaluator):
    """Scores the cosine similarity of prediction and reference; passes at ≥ `threshold`.

    `embedder` is an `evalcore.embeddings.Embedder` (anything with `embed(texts) -> array`)
    or a plain callable `f(list[str]) -> array-like`, one row per text. Rows are normalised
    here whatever the embedder promises; a zero vector has similarity 0 with everything.
    `evaluate_dataset` embeds all rows in one call, so `concurrency` does not apply.

    Example:
        from evalcore.embeddings import SentenceTransformerEmbedder
        ev = EmbeddingDistanceEvaluator(SentenceTransformerEmbedder(), threshold=0.5)
        ev.evaluate("heart attack", "myocardial infarction").reasoning
        # "Cosine similarity: 0.5936, threshold: 0.5000" (all-MiniLM-L6-v2)
    """

    def __init__(self, embedder: Any, threshold: float):
        embed = getattr(embedder, "embed", None)
        if not callable(embed):
            embed = embedder if callable(embedder) else None
        if embed is None:
            raise EvaluatorError(f"embedder {embedder!r:.80}: expected an object with embed(texts) or a callable")
        self.embedder = embedder
        self.threshold = _check_threshold(threshold, -1.0, 1.0, "a cosine similarity")
        self._embed: Callable[[list[str]], Any] = embed

    def _unit_rows(self, texts: list[str]) -> np.ndarray:
        rows = np.asarray(self._embed(texts), dtype=np.float64)
        if rows.ndim != 2 or rows.shape[0] != len(texts) or not np.isfinite(rows).all():
            raise EvaluatorError(f"the embedder returned an array of shape {rows.shape} for {len(texts)} texts: "
                                 "expected one finite row per text")
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return rows / np.where(norms == 0, 1.0, norms)

    def _result(self, similarity: float) -> EvalResult:
        similarity = float(np.clip(similarity, -1.0, 1.0))  # rounding can step just past ±1
        return EvalResult(score=similarity, passed=similarity >= self.threshold,
                          reasoning=f"Cosine similarity: {similarity:.4f}, threshold: {self.threshold:.4f}")

    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        first, second = self._unit_rows([prediction, reference])
        return self._result(first @ second)

    async def aevaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        """Runs the embedder on a worker thread, so the event loop stays responsive."""
        return await asyncio.to_thread(self.evaluate, prediction, reference, input)

    def evaluate_dataset(self, rows: Iterable[dict | tuple],
                         concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        items = _rows(rows)
        _check_concurrency(concurrency)
        if not items:
            return []
        texts = list(dict.fromkeys(t for prediction, reference, _ in items for t in (prediction, reference)))
        vectors = dict(zip(texts, self._unit_rows(texts)))
        return [self._result(vectors[p] @ vectors[r]) for p, r, _ in items]

    async def aevaluate_dataset(self, rows: Iterable[dict | tuple],
                                concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        return await asyncio.to_thread(self.evaluate_dataset, list(rows), concurrency)


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
    shown = reply if len(reply) <= _SHOWN_REPLY else reply[:_SHOWN_REPLY] + "…"
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


def _reply_text(completion: Any) -> str:
    choices = getattr(completion, "choices", None) or []
    return (choices[0].message.content or "") if choices else ""


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
        self.threshold = _check_threshold(threshold, 0.0, 1.0, "a score")
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

    def _result(self, reply: str) -> EvalResult:
        score = parse_judge_score(reply)
        return EvalResult(score=score, passed=score >= self.threshold, reasoning=reply)

    def _call_failed(self, exc: Exception) -> LLMCallError:
        return LLMCallError(f"judge model {self.model!r} could not be reached or refused the request: {exc}")

    async def _ajudge(self, client: Any, row: Row) -> EvalResult:
        import openai

        try:
            completion = await client.chat.completions.create(**self._request(*row))
        except openai.APIError as exc:
            raise self._call_failed(exc) from exc
        return self._result(_reply_text(completion))

    def _on_private_loop(self, run: Callable[[Any], Awaitable[T]]) -> T:
        import openai

        async def main() -> T:
            if not isinstance(self.client, openai.AsyncOpenAI):  # a look-alike: use it as it is
                return await run(self.client)
            async with self.client.copy(http_client=openai.DefaultAsyncHttpxClient()) as client:
                return await run(client)

        return _run_in_fresh_loop(main)

    def evaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        import openai

        row = (prediction, reference, input)
        if self._async:
            return self._on_private_loop(lambda client: self._ajudge(client, row))
        try:
            completion = self.client.chat.completions.create(**self._request(*row))
        except openai.APIError as exc:
            raise self._call_failed(exc) from exc
        return self._result(_reply_text(completion))

    async def aevaluate(self, prediction: str, reference: str = "", input: str = "") -> EvalResult:
        if self._async:
            return await self._ajudge(self.client, (prediction, reference, input))
        return await asyncio.to_thread(self.evaluate, prediction, reference, input)

    def evaluate_dataset(self, rows: Iterable[dict | tuple],
                         concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        if not self._async:
            return super().evaluate_dataset(rows, concurrency)
        items, limit = _rows(rows), _check_concurrency(concurrency)
        return self._on_private_loop(lambda client: _gather(items, limit, lambda row: self._ajudge(client, row)))
