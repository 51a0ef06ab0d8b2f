"""Shared pieces of the evaluators: results, errors, rows, the Evaluator base class."""

from __future__ import annotations

import asyncio
import numbers
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict

from ..errors import TermgateError


T = TypeVar("T")
Row = tuple[str, str, str]  # (prediction, reference, input)

DEFAULT_CONCURRENCY = 8
SHOWN_REPLY = 200  # characters of a bad judge reply quoted in the error


class EvaluatorError(TermgateError, ValueError):
    """An evaluator built with invalid settings, or given a malformed row or embedding."""


class EvaluatorParseError(TermgateError, ValueError):
    """The LLM judge's reply holds no usable score (none, or outside [0, 1] once read as
    `parse_judge_score` reads it); `reply` is the full text."""

    def __init__(self, message: str, reply: str):
        super().__init__(message)
        self.reply = reply


class EvalResult(BaseModel):
    """The verdict on one prediction."""

    model_config = ConfigDict(frozen=True)

    score: float
    """1.0 / 0.0 for the deterministic evaluators, cosine similarity, or the judge's score as a fraction in [0, 1]."""
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


def as_rows(rows: Iterable[dict | tuple]) -> list[Row]:
    """Every row checked before any is scored, so a bad row costs no judge calls."""
    return [_row(i, row) for i, row in enumerate(rows)]


def check_threshold(value: Any, low: float, high: float, meaning: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not low <= value <= high:
        raise EvaluatorError(f"threshold = {value!r}: expected {meaning} in [{low:g}, {high:g}]")
    return float(value)


def check_concurrency(concurrency: int) -> int:
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or concurrency < 1:
        raise EvaluatorError(f"concurrency = {concurrency!r}: expected a whole number of at least 1")
    return concurrency


async def gather_limited(items: list[Row], concurrency: int, score: Callable[[Row], Awaitable[T]]) -> list[T]:
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
        items, workers = as_rows(rows), check_concurrency(concurrency)
        if workers == 1 or len(items) <= 1:
            return [self.evaluate(*item) for item in items]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(lambda item: self.evaluate(*item), items))

    async def aevaluate_dataset(self, rows: Iterable[dict | tuple],
                                concurrency: int = DEFAULT_CONCURRENCY) -> list[EvalResult]:
        """Async twin of `evaluate_dataset`: at most `concurrency` rows in flight."""
        items, limit = as_rows(rows), check_concurrency(concurrency)
        return await gather_limited(items, limit, lambda item: self.aevaluate(*item))


# -- deterministic evaluators -----------------------------------------------------------------

PASS_RESULT = EvalResult(score=1.0, passed=True)


def fail_result(reason: str) -> EvalResult:
    return EvalResult(score=0.0, passed=False, reasoning=reason)


