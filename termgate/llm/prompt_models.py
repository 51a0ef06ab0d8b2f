"""Prompt-evaluation data: datasets, judge verdicts, case results and summaries, and the
pure helpers over them (loading, hashing, the score cap). No model calls here."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import statistics
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, Field, StringConstraints, ValidationError, field_validator

from ..errors import TermgateError, InputError, Problem, UsageError
from ..evaluators.judge import parse_judge_score
from ..io import RepeatedKey, loads_strict, read_text
from ..json_lines import line_at, value_lines
from .client import LLMConfig, endpoint_url
from ..report.files import write_atomically

EXTRA_CRITERIA_CAP = 3.0
"""The highest score an output that violates an extra criterion can get (SPEC §6)."""

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


class DatasetGenerationError(TermgateError):
    """The model could not produce a usable dataset after termgate's retries; nothing was written."""


# ---------------------------------------------------------------- models


class ScenarioIdeas(BaseModel):
    """The generator's first answer: one short scenario idea per test case."""

    ideas: list[Text] = Field(min_length=1)
    """Distinct one-sentence scenarios."""


class TestCase(BaseModel):
    """One test case: a scenario, the inputs the prompt runs with, and what a good output does."""

    __test__ = False  # not a pytest test class

    scenario: Text
    """What situation this case tests."""
    prompt_inputs: dict[str, Any]
    """Input name -> value, exactly the names of the dataset's prompt_inputs_spec."""
    solution_criteria: list[Text] = Field(min_length=1, max_length=4)
    """1-4 checkable statements a good output satisfies."""


class Dataset(BaseModel):
    """The dataset file: the task, what each prompt input means, and the cases."""

    task_description: Text
    """What the prompt under test is for."""
    prompt_inputs_spec: dict[Text, Text] = Field(min_length=1)
    """Input name -> description."""
    cases: list[TestCase] = Field(min_length=1)
    """The test cases, in order; results follow this order."""


class JudgeVerdict(BaseModel):
    """The judge's JSON answer for one output."""

    score: float = Field(ge=0, le=10)
    """0 to 10, before the extra-criteria cap: the judge's number or text read by SPEC §6's one
    rule (`parse_judge_score`) and shown ×10: 8 or "8" -> 8, "8/10", "8 out of 10",
    "Score: 8" -> 8, "85/100" -> 8.5; outside the scale (11, "12/10") is unusable."""
    reasoning: str
    """Why this score."""
    strengths: list[str] = []
    """What the output does well."""
    weaknesses: list[str] = []
    """What it misses or gets wrong."""
    violated_extra_criteria: list[str] = []
    """Extra criteria the output violates; any entry caps the score at 3."""

    @field_validator("score", mode="before")
    @classmethod
    def _read_score(cls, value):
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise ValueError(f"score must be a number or a text such as \"8/10\", not {type(value).__name__}")
        return judge_score_out_of_10(value)


def judge_score_out_of_10(value: int | float | str) -> float:
    """The PromptEvaluator's judge score on its 0-10 scale: 10 × `parse_judge_score`, a number n
    read as the reply text str(n) (so n / 10). ValueError (EvaluatorParseError) when unusable."""
    if isinstance(value, str):
        text = value
    elif math.isfinite(value) and abs(value) < 1e6:
        text = str(value) if "e" not in str(value) else f"{value:.12f}"  # 1e-05 holds no digits to read
    else:
        raise ValueError(f"score {value!r} is outside the scale 0 to 10")
    return round(parse_judge_score(text) * 10, 9)  # 0.7 * 10 is 7.000000000000001


class CaseResult(BaseModel):
    """The outcome for one case; `score` and `passed` are None when the case errored."""

    index: int
    """Position of the case in the dataset (0-based)."""
    scenario: str
    prompt_inputs: dict[str, Any]
    solution_criteria: list[str]
    output: str | None = None
    """What the prompt function returned; None when it failed."""
    score: float | None = None
    """The score after the extra-criteria cap."""
    judge_score: float | None = None
    """The score as the judge gave it."""
    passed: bool | None = None
    """score >= pass_threshold; None when unscored."""
    reasoning: str = ""
    strengths: list[str] = []
    weaknesses: list[str] = []
    violated_extra_criteria: list[str] = []
    error: str | None = None
    """Why the case is unscored: the prompt function failed or the judge reply stayed unusable."""

    @property
    def capped(self) -> bool:
        return self.score is not None and self.judge_score is not None and self.score < self.judge_score


class PromptEvalSummary(BaseModel):
    """Aggregates over the cases; averages use scored cases only."""

    total: int
    scored: int
    errored: int
    passed: int
    average: float | None
    """Mean score of the scored cases; None when none was scored."""
    stdev: float | None
    """Sample standard deviation of the scores; None with fewer than two scored cases."""
    pass_rate: float
    """passed / total: an errored case is not a pass."""
    pass_threshold: float


class PromptEvalResults(BaseModel):
    """One evaluation of a prompt on a dataset: per-case results in dataset order and a summary."""

    eval_id: str
    created_at: str
    name: str | None = None
    prompt_version: str | None = None
    model: str | None = None
    """What produced the outputs (for the record)."""
    judge_model: str
    dataset_path: str | None
    dataset_hash: str
    task_description: str
    pass_threshold: float
    extra_criteria: list[str]
    summary: PromptEvalSummary
    results: list[CaseResult]
    usage: dict = {}

    def save_json(self, path: str | Path) -> None:
        write_atomically(path, self.model_dump_json(indent=2) + "\n")

    def store_results(self, db: str | Path, name: str | None = None, prompt_version: str | None = None) -> str:
        """Record the run and its cases in the store (prompt_eval_runs / prompt_eval_results); returns eval_id."""
        from ..store.prompts import save_prompt_eval

        self.name = name if name is not None else self.name
        self.prompt_version = prompt_version if prompt_version is not None else self.prompt_version
        save_prompt_eval(db, _run_row(self), [_result_row(self.eval_id, r) for r in self.results])
        return self.eval_id


# ---------------------------------------------------------------- pure helpers


def cap_score(score: float, violated_extra_criteria: Sequence[str]) -> float:
    """SPEC §6: any violated extra criterion caps the score at 3."""
    return min(score, EXTRA_CRITERIA_CAP) if violated_extra_criteria else score


def summarize(results: Sequence[CaseResult], pass_threshold: float) -> PromptEvalSummary:
    scores = [r.score for r in results if r.score is not None]
    passed = sum(1 for r in results if r.passed)
    return PromptEvalSummary(
        total=len(results), scored=len(scores), errored=len(results) - len(scores), passed=passed,
        average=statistics.fmean(scores) if scores else None,
        stdev=statistics.stdev(scores) if len(scores) > 1 else None,
        pass_rate=passed / len(results) if results else 0.0, pass_threshold=pass_threshold)


def _canonical(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def dataset_hash(dataset: Dataset) -> str:
    """SHA-256 of the dataset's canonical JSON: runs on equal datasets compare."""
    return hashlib.sha256(_canonical(dataset.model_dump(mode="json")).encode()).hexdigest()


def _field(loc: tuple) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else (f".{p}" if i else str(p)) for i, p in enumerate(loc)) or "json"


def _input_problems(data: Any) -> list[tuple[tuple, str, str]]:
    """(loc, field, message) for every case input missing from, or not in, prompt_inputs_spec.
    Read from the raw data, so they are found beside the schema's problems, not only once the
    schema holds."""
    spec, cases = (data.get("prompt_inputs_spec"), data.get("cases")) if isinstance(data, dict) else (None, None)
    if not isinstance(spec, dict) or not spec or not isinstance(cases, list):
        return []  # the schema's problems say what is wrong there
    names, problems = {name.strip() for name in spec}, []
    for i, case in enumerate(cases):
        given = case.get("prompt_inputs") if isinstance(case, dict) else None
        if not isinstance(given, dict):
            continue
        where = ("cases", i, "prompt_inputs")
        problems += [(where, f"cases[{i}].prompt_inputs.{name}", "missing: every input of prompt_inputs_spec "
                      "needs a value") for name in sorted(names - set(given))]
        problems += [((*where, name), f"cases[{i}].prompt_inputs.{name}", "not in prompt_inputs_spec")
                     for name in sorted(set(given) - names)]
    return problems


def load_dataset(path: str | Path) -> Dataset:
    """Read and validate a dataset file. InputError lists every problem (up to 20 shown), in
    file order, each as FILE:LINE: FIELD: message, LINE being where the value starts (or the
    object a missing field belongs in)."""
    shown = str(path)
    text = read_text(Path(path), "dataset")
    try:
        data = loads_strict(text)
    except RepeatedKey as exc:
        raise InputError([Problem(shown, exc.line_in(text), exc.field, f"repeated key {exc.key!r}")]) from None
    except json.JSONDecodeError as exc:
        raise InputError([Problem(shown, exc.lineno, "json", f"malformed JSON ({exc.msg})")]) from None
    try:
        dataset, errors = Dataset.model_validate(data), []
    except ValidationError as exc:
        dataset, errors = None, exc.errors(include_url=False)
    found = [(e["loc"], _field(e["loc"]), e["msg"].lower()) for e in errors] + _input_problems(data)
    if found:
        lines = value_lines(text)
        raise InputError(sorted((Problem(shown, line_at(lines, loc), field, message) for loc, field, message in found),
                                key=lambda problem: problem.line))
    return dataset


def _strip_fence(text: str) -> str:
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").split("\n", 1)[-1] if "\n" in body else body.strip("`")
    return body.strip()


def reply_problem(exc: ValidationError) -> str:
    """What is wrong with a model's JSON reply, naming the field: "field 'drift' missing in
    verdicts[0] (it has 'term', 'is_drift')", "field 'score': input should be a valid
    number", then how many more problems there are. pydantic's own "Field required"
    names none."""
    errors = exc.errors(include_url=False)
    first, loc = errors[0], errors[0]["loc"]
    if first["type"] == "missing" and loc:
        text = f"field {str(loc[-1])!r} missing" + (f" in {_field(loc[:-1])}" if loc[:-1] else "")
        given = first.get("input")
        if isinstance(given, dict):
            keys = [repr(str(k)[:40]) for k in list(given)[:6]]
            text += f" (it has {', '.join(keys)}{', ...' if len(given) > 6 else ''})" if keys else " (it is empty)"
    else:
        message = str(first["ctx"]["error"]) if first["type"] == "value_error" else first["msg"]  # no "Value error, "
        message = message[:1].lower() + message[1:]
        text = f"field {_field(loc)!r}: {message}" if loc else message
    more = len(errors) - 1
    return text + (f" (and {more} more problem{'s' if more > 1 else ''})" if more else "")


def reply_parser(model: type[BaseModel], check: Callable[[Any], Any] | None = None) -> Callable[[str], Any]:
    """reply -> validated model; ValueError (so the client retries) on anything unusable,
    naming the field (reply_problem)."""
    def parse(text: str):
        try:
            value = model.model_validate_json(_strip_fence(text))
        except ValidationError as exc:
            raise ValueError(reply_problem(exc)) from None
        return check(value) if check else value
    return parse


def check_request(task_description: str, prompt_inputs_spec: dict[str, str], num_cases: int) -> None:
    if not isinstance(task_description, str) or not task_description.strip():
        raise UsageError("task_description must be a non-empty text")
    if not isinstance(prompt_inputs_spec, dict) or not prompt_inputs_spec:
        raise UsageError("prompt_inputs_spec must map each prompt input name to its description")
    for name, description in prompt_inputs_spec.items():
        if not isinstance(name, str) or not name.strip() or not isinstance(description, str) or not description.strip():
            raise UsageError(f"prompt_inputs_spec[{name!r}]: name and description must be non-empty text")
    if isinstance(num_cases, bool) or not isinstance(num_cases, int) or num_cases < 1:
        raise UsageError(f"num_cases must be a whole number of at least 1, got {num_cases!r}")


def as_config(config: LLMConfig | str, base_url: str | None, like: LLMConfig | None = None) -> LLMConfig:
    """An LLMConfig from a config or a model name; a `base_url` given explicitly overrides the
    config's own. A bare model name takes the rest (endpoint, retries) from `like` when given.
    UsageError when no endpoint is named at all (llm.client.endpoint_url: no default one)."""
    if isinstance(config, str):
        config = LLMConfig(model=config) if like is None else dataclasses.replace(like, model=config)
    elif not isinstance(config, LLMConfig):
        raise UsageError(f"expected an LLMConfig or a model name, got {type(config).__name__}")
    return dataclasses.replace(config, base_url=endpoint_url(base_url or config.base_url, {}, None))


def as_criteria(extra: str | Sequence[str] | None) -> list[str]:
    items = [extra] if isinstance(extra, str) else list(extra or [])
    return [c.strip() for c in items if c and c.strip()]


TOKENS_PER_ITEM, TOKENS_OVERHEAD = 60, 100
"""A reply that lists one entry per item (the scenario ideas, the drift judge's verdicts) may
use TOKENS_OVERHEAD + TOKENS_PER_ITEM per item when that is more than max_tokens: a long
list is not cut off by a limit meant for one answer, and a runaway still stops."""


def tokens_for_items(max_tokens: int, items: int) -> int:
    """The max_tokens of a reply listing `items` entries: max(max_tokens, 100 + 60 per item)."""
    return max(int(max_tokens), TOKENS_OVERHEAD + TOKENS_PER_ITEM * int(items))


def json_params(config: LLMConfig, items: int | None = None) -> dict:
    """A JSON-mode request's parameters; `items`: the reply lists that many (tokens_for_items),
    else the client sends the config's max_tokens."""
    params = {"temperature": config.temperature, "response_format": {"type": "json_object"}}
    if items is not None:
        params["max_tokens"] = tokens_for_items(config.max_tokens, items)
    return params


def system_messages(system: str, payload: dict) -> list[dict]:
    return [{"role": "system", "content": system},
            {"role": "user", "content": json.dumps(payload, ensure_ascii=False, indent=1, default=str)}]


# ---------------------------------------------------------------- store rows


def _run_row(r: PromptEvalResults) -> dict:
    s = r.summary
    return {"eval_id": r.eval_id, "created_at": r.created_at, "name": r.name, "dataset_path": r.dataset_path,
            "dataset_hash": r.dataset_hash, "prompt_version": r.prompt_version, "model": r.model,
            "judge_model": r.judge_model, "pass_threshold": r.pass_threshold,
            "extra_criteria": json.dumps(r.extra_criteria, ensure_ascii=False), "total_cases": s.total,
            "scored_cases": s.scored, "average_score": s.average, "stdev_score": s.stdev, "pass_rate": s.pass_rate,
            "usage": json.dumps(r.usage, sort_keys=True)}


def _result_row(eval_id: str, c: CaseResult) -> dict:
    dump = lambda v: json.dumps(v, ensure_ascii=False, default=str)  # noqa: E731
    return {"eval_id": eval_id, "case_index": c.index, "scenario": c.scenario, "prompt_inputs": dump(c.prompt_inputs),
            "solution_criteria": dump(c.solution_criteria), "output": c.output, "score": c.score, "passed": c.passed,
            "reasoning": c.reasoning, "strengths": dump(c.strengths), "weaknesses": dump(c.weaknesses),
            "violated_extra_criteria": dump(c.violated_extra_criteria), "error": c.error}
