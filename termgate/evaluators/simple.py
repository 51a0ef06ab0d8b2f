"""Deterministic evaluators: exact match, JSON validity, regex."""

from __future__ import annotations

import json
import re

from .base import PASS_RESULT, Evaluator, EvalResult, EvaluatorError, fail_result


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
        return PASS_RESULT if same else fail_result(f"expected {reference!r}, got {prediction!r}")


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
            return fail_result(f"Invalid JSON: {exc}")
        except RecursionError:
            return fail_result("Invalid JSON: nested too deeply")
        return PASS_RESULT


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
            return PASS_RESULT
        return fail_result(f"no match for pattern {self.pattern.pattern!r}")

