"""termgate: the release gate for the terms a search system adds to queries.

Score LLM query expansions against a golden set, compare with a baseline, gate CI, record
sign-off. The names below are the Python API; each loads its module on first use (PEP 562),
so `import termgate` and the CLI's cold start stay cheap.

    import termgate
    run = termgate.evaluate("golden.jsonl", "generated.jsonl")
    print(run.gate.decision, run.aggregate.macro_f1)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .lazy import lazy_exports

__version__ = "0.2.0"

_EXPORTS = {
    # scoring one run
    "evaluate": "evaluation", "EvaluationRun": "evaluation",
    "load_golden_set": "io", "load_generated": "io", "load_thresholds": "io",
    # the harness: a prompt or a Python expander produces the terms, then they are scored
    "run_prompt": "llm.harness", "run_callable": "llm.harness", "load_prompt": "llm.harness",
    "load_callable": "llm.harness", "to_generated": "llm.harness", "HarnessOutput": "llm.harness",
    # reusable evaluators
    "Evaluator": "evaluators", "EvalResult": "evaluators",
    "ExactMatchEvaluator": "evaluators", "JsonValidityEvaluator": "evaluators",
    "RegexMatchEvaluator": "evaluators", "EmbeddingDistanceEvaluator": "evaluators",
    "LLMJudgeEvaluator": "evaluators",
    # prompt evaluation with a model as judge
    "PromptEvaluator": "llm.prompt_eval", "load_dataset": "llm.prompt_eval",
    # the error family
    "TermgateError": "errors", "InputError": "errors", "UsageError": "errors",
}

__all__ = ["__version__", *_EXPORTS]


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)


if TYPE_CHECKING:  # what type checkers and IDEs see; never run
    from .errors import InputError, TermgateError, UsageError
    from .evaluation import EvaluationRun, evaluate
    from .evaluators import (EmbeddingDistanceEvaluator, EvalResult, Evaluator, ExactMatchEvaluator,
                             JsonValidityEvaluator, LLMJudgeEvaluator, RegexMatchEvaluator)
    from .llm.harness import HarnessOutput, load_callable, load_prompt, run_callable, run_prompt, to_generated
    from .io import load_generated, load_golden_set, load_thresholds
    from .llm.prompt_eval import PromptEvaluator, load_dataset
