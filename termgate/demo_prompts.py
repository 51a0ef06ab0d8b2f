"""The demo's prompt evaluations: recorded outputs and judge verdicts of three versions of a
query-expansion prompt on one dataset (data/demo/prompts/), stored like `prompt-eval run`'s
results so the Prompts page has versions to compare. No model is called: the outputs and
verdicts are hand-written sample data, and the stored rows say so (name `demo`, the model
and judge labels, and a note in `usage`).

Idempotent like the demo's runs: an evaluation's id is derived from the dataset and the
recording, so seeding again stores nothing new, and an edited recording is stored as a new
evaluation beside the old one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from .errors import InputError, Problem
from .json_lines import line_at, value_lines
from .llm.prompt_models import Dataset, JudgeVerdict, PromptEvalResults, dataset_hash, load_dataset, summarize

__all__ = ["DEMO_PROMPT_NAME", "DEMO_NOTE", "DemoPromptEval", "PromptRecording", "is_demo", "recorded_results",
           "seed_demo_prompts"]

DEMO_PROMPT_NAME = "demo"
DEMO_NOTE = "demo data: hand-written sample outputs and judge verdicts (data/demo/prompts); no model was called"
PROMPT_VERSIONS = ("v1", "v2", "v3")


class RecordedCase(BaseModel):
    """One case of a recording, in the dataset's order."""

    output: str
    """What the prompt version answered for this case."""
    verdict: JudgeVerdict
    """The judge's verdict on that answer, read as a judge's reply is (score 0-10)."""


class PromptRecording(BaseModel):
    """One prompt version's recorded evaluation on the demo dataset (data/demo/prompts/VERSION.json)."""

    prompt_version: str = Field(min_length=1)
    """The version label shown on the Prompts page."""
    recorded_at: str = Field(pattern=r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")
    """When it was recorded, UTC ISO 8601 ending Z: the stored created_at (versions sort by it)."""
    model: str = Field(pattern=r"^demo: ")
    """Label of what produced the outputs; starts `demo: ` (it is sample data, see is_demo)."""
    judge_model: str = Field(pattern=r"^demo: ")
    """Label of what judged them; starts `demo: `."""
    pass_threshold: float = Field(default=7, ge=1, le=10)
    """A case passes when its score is at least this."""
    prompt: str
    """The prompt template of this version, for the reader of the file (not stored)."""
    cases: list[RecordedCase]
    """One per dataset case, in the dataset's order."""


def is_demo(name, model) -> bool:
    """Whether a stored prompt evaluation is the demo's sample data (its name and model label)."""
    return name == DEMO_PROMPT_NAME and isinstance(model, str) and model.startswith("demo: ")


@dataclass(frozen=True, slots=True)
class DemoPromptEval:
    """One demo prompt evaluation: whether it was stored now or already present."""

    prompt_version: str
    eval_id: str
    average: float | None
    pass_rate: float
    dataset_hash: str
    created: bool


def load_recording(path: Path, dataset: Dataset) -> PromptRecording:
    """A recording file, validated; InputError naming the file, line and field otherwise."""
    text = path.read_text(encoding="utf-8")
    try:
        recording = PromptRecording.model_validate_json(text)
    except ValidationError as exc:
        err = exc.errors(include_url=False)[0]
        lines = value_lines(text) if err["type"] != "json_invalid" else {}
        field = ".".join(str(p) for p in err["loc"]) or "json"
        raise InputError([Problem(str(path), line_at(lines, err["loc"]) if lines else 1, field,
                                  err["msg"].lower())]) from None
    if len(recording.cases) != len(dataset.cases):
        raise InputError([Problem(str(path), line_at(value_lines(text), ("cases",)), "cases",
                                  f"{len(recording.cases)} recorded cases for a dataset of {len(dataset.cases)}")])
    return recording


def recorded_results(dataset_path: Path, dataset: Dataset, recording: PromptRecording) -> PromptEvalResults:
    """The recording as `run_evaluation` would have returned it: each case scored by the same
    rule (prompt_eval's case result, no extra criteria), summarised, with an id derived from
    the dataset and the recording."""
    from .llm.prompt_eval import case_result  # the one place a verdict becomes a case result

    threshold = float(recording.pass_threshold)
    results = [case_result(i, case, rec.output, None, rec.verdict, threshold)
               for i, (case, rec) in enumerate(zip(dataset.cases, recording.cases))]
    digest = dataset_hash(dataset)
    content = digest + json.dumps(recording.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    stamp = recording.recorded_at[:19].replace("-", "").replace(":", "").replace("T", "-")
    return PromptEvalResults(
        eval_id=f"pe-{stamp}-{hashlib.sha256(content.encode()).hexdigest()[:6]}", created_at=recording.recorded_at,
        name=DEMO_PROMPT_NAME, prompt_version=recording.prompt_version, model=recording.model,
        judge_model=recording.judge_model, dataset_path=str(dataset_path), dataset_hash=digest,
        task_description=dataset.task_description, pass_threshold=threshold, extra_criteria=[],
        summary=summarize(results, threshold), results=results, usage={"note": DEMO_NOTE})


def seed_demo_prompts(db_path: str | Path, folder: Path) -> list[DemoPromptEval]:
    """Store the recorded evaluations under `folder` (dataset.json and VERSION.json) that the
    store does not hold yet; [] when the folder has no dataset. Every file is read and
    checked before anything is stored (InputError: nothing stored)."""
    from .store import exists, list_prompt_evals

    dataset_path = folder / "dataset.json"
    if not dataset_path.exists():
        return []
    dataset = load_dataset(dataset_path)
    recorded = [recorded_results(dataset_path, dataset, load_recording(folder / f"{version}.json", dataset))
                for version in PROMPT_VERSIONS if (folder / f"{version}.json").exists()]
    digest = dataset_hash(dataset)
    stored = set(list_prompt_evals(db_path, digest)["eval_id"]) if exists(db_path) else set()
    out = []
    for results in recorded:
        created = results.eval_id not in stored
        if created:
            results.store_results(db_path)  # through store.save_prompt_eval, on either backend
        out.append(DemoPromptEval(results.prompt_version, results.eval_id, results.summary.average,
                                  results.summary.pass_rate, digest, created))
    return out
