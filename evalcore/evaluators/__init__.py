"""Single-answer evaluators: exact match, JSON validity, regex, embedding distance, LLM judge.

Every evaluator has `evaluate(prediction, reference="", input="") -> EvalResult`, an async
twin `aevaluate`, and `evaluate_dataset` / `aevaluate_dataset` that score many rows and
return the results in input order. A row is a dict with `prediction` and optional
`reference` and `input` (other keys are ignored), or a tuple (or list) `(prediction[, reference[, input]])`.

LLM judge scores follow SPEC §6: the first number within [0, 10] in the reply, divided by
10; passing is score ≥ threshold; a reply without one raises `EvaluatorParseError`.
"""

from .base import EvalResult, Evaluator, EvaluatorError, EvaluatorParseError
from .embedding import EmbeddingDistanceEvaluator
from .judge import DEFAULT_JUDGE_TEMPLATE, LLMJudgeEvaluator, parse_judge_score
from .simple import ExactMatchEvaluator, JsonValidityEvaluator, RegexMatchEvaluator

__all__ = ["EvalResult", "Evaluator", "ExactMatchEvaluator", "JsonValidityEvaluator", "RegexMatchEvaluator",
           "EmbeddingDistanceEvaluator", "LLMJudgeEvaluator", "EvaluatorError", "EvaluatorParseError",
           "DEFAULT_JUDGE_TEMPLATE", "parse_judge_score"]
