"""termgate: the release gate for the terms a search system adds to queries.

Score LLM query expansions against a golden set, compare with a baseline, gate CI, record
sign-off. The names below are the Python API; each loads its module on first use (PEP 562),
so `import termgate` and the CLI's cold start stay cheap.

    import termgate
    run = termgate.evaluate("golden.jsonl", "generated.jsonl")
    print(run.gate.decision, run.aggregate.macro_f1)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

_EXPORTS = {
    # scoring one run
    "evaluate": "termgate.evaluation", "EvaluationRun": "termgate.evaluation",
    "load_golden_set": "termgate.io", "load_generated": "termgate.io", "load_thresholds": "termgate.io",
    # the harness: a prompt or a Python expander produces the terms, then they are scored
    "run_prompt": "termgate.llm.harness", "run_callable": "termgate.llm.harness", "load_prompt": "termgate.llm.harness",
    "load_callable": "termgate.llm.harness", "to_generated": "termgate.llm.harness", "HarnessOutput": "termgate.llm.harness",
    # reusable evaluators
    "Evaluator": "termgate.evaluators", "EvalResult": "termgate.evaluators",
    "ExactMatchEvaluator": "termgate.evaluators", "JsonValidityEvaluator": "termgate.evaluators",
    "RegexMatchEvaluator": "termgate.evaluators", "EmbeddingDistanceEvaluator": "termgate.evaluators",
    "LLMJudgeEvaluator": "termgate.evaluators",
    # prompt evaluation with a model as judge
    "PromptEvaluator": "termgate.llm.prompt_eval", "load_dataset": "termgate.llm.prompt_eval",
    # the error family
    "TermgateError": "termgate.errors", "InputError": "termgate.errors", "UsageError": "termgate.errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'termgate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access skips this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # what type checkers and IDEs see; never run
    from .errors import InputError, TermgateError, UsageError
    from .evaluation import EvaluationRun, evaluate
    from .evaluators import (EmbeddingDistanceEvaluator, EvalResult, Evaluator, ExactMatchEvaluator,
                             JsonValidityEvaluator, LLMJudgeEvaluator, RegexMatchEvaluator)
    from .llm.harness import HarnessOutput, load_callable, load_prompt, run_callable, run_prompt, to_generated
    from .io import load_generated, load_golden_set, load_thresholds
    from .llm.prompt_eval import PromptEvaluator, load_dataset
