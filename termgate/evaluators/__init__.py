"""Single-answer evaluators: exact match, JSON validity, regex, embedding distance, LLM judge.

Every evaluator has `evaluate(prediction, reference="", input="") -> EvalResult`, an async
twin `aevaluate`, and `evaluate_dataset` / `aevaluate_dataset` that score many rows and
return the results in input order. A row is a dict with `prediction` and optional
`reference` and `input` (other keys are ignored), or a tuple (or list) `(prediction[, reference[, input]])`.

LLM judge scores follow SPEC §6 (`parse_judge_score`, the one reading): a fraction in [0, 1]
from the last `N/M` or `N out of M` in the reply, else the last `Score: N` (or rating, grade)
/ 10, else the last number not part of a stated scale ("1-10") / 10; `N%` is N/100. Passing
is score ≥ threshold; a reply with no usable score, or one outside [0, 1], raises
`EvaluatorParseError`.
"""

from .base import EvalResult, Evaluator, EvaluatorError, EvaluatorParseError
from .embedding import EmbeddingDistanceEvaluator
from .judge import DEFAULT_JUDGE_TEMPLATE, LLMJudgeEvaluator, parse_judge_score
from .simple import ExactMatchEvaluator, JsonValidityEvaluator, RegexMatchEvaluator

__all__ = ["EvalResult", "Evaluator", "ExactMatchEvaluator", "JsonValidityEvaluator", "RegexMatchEvaluator",
           "EmbeddingDistanceEvaluator", "LLMJudgeEvaluator", "EvaluatorError", "EvaluatorParseError",
           "DEFAULT_JUDGE_TEMPLATE", "parse_judge_score"]
