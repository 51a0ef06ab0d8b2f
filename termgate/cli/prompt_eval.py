"""`termgate prompt-eval generate|run|compare`: thin commands over termgate.llm.prompt_eval.

Exit codes (SPEC §3): 0 ok, 2 usage or input error (one line naming the file and field),
5 incomplete (a case errored, or generation failed after its retries: a rerun asks again
for exactly those), 1 when the pass rate is below `--min-pass-rate`; 2, then 5, then 1.
"""

from __future__ import annotations

import asyncio
import math
import string
from pathlib import Path

import click

from ..config import default_db_path, load_settings
from ..errors import InputError, Problem, UsageError
from ..llm.prompt_models import DatasetGenerationError
from ..scoring.metrics import EPSILON
from ..llm.harness import load_callable
from ..llm.harness import prompt_version as prompt_version_of
from ..io import read_text
from ..llm.client import DEFAULT_MAX_TOKENS, AsyncLLMClient, LLMConfig
from ..llm.prompt_eval import PromptEvalResults, PromptEvaluator, dataset_hash, load_dataset
from ..report.prompt_html import write_prompt_html
from ..store.prompts import find_dataset_hash, prompt_eval_datasets, prompt_eval_scores, prompt_eval_versions
from ..store.connection import shown_db
from .common import EXIT_INCOMPLETE, echo, fail, format_table, run_cli, say_endpoints, store_option

__all__ = ["prompt_eval_group", "load_template"]

EXIT_BELOW_MIN = 1


@click.group("prompt-eval")
def prompt_eval_group() -> None:
    """Evaluate a prompt with a model as judge: generate a dataset, run, compare versions.

    Example: termgate prompt-eval run --dataset cases.json --prompt prompt.txt --model gpt-4o-mini
    """


def _config(model: str | None, base_url: str | None, max_tokens: int | None = None) -> LLMConfig:
    """--model, --base-url and --max-tokens over `[llm]`; exit 2 when no endpoint is named
    (no default one)."""
    llm = dict(load_settings().llm)
    if max_tokens is not None:
        llm["max_tokens"] = max_tokens
    return LLMConfig.from_settings(llm, model, base_url)


def max_tokens_option(command):
    """`--max-tokens N`: the completion tokens each call may use (over `[llm] max_tokens`)."""
    return click.option("--max-tokens", type=click.IntRange(1, 1_000_000), default=None,
                        help=f"Completion tokens per call [default: [llm] max_tokens, else {DEFAULT_MAX_TOKENS}]; a "
                             "reply cut off there is an error. Replies listing one entry per item (scenario ideas) "
                             "may use 100 + 60 per item when that is more.")(command)


def _parse_inputs(values: tuple[str, ...]) -> dict[str, str]:
    spec: dict[str, str] = {}
    for value in values:
        name, sep, description = value.partition("=")
        name, description = name.strip(), description.strip()
        if not sep or not name.isidentifier() or not description:
            raise click.BadParameter(f"{value!r}: expected name=description with a name like customer_message",
                                     param_hint="--inputs")
        spec[name] = description
    return spec


@prompt_eval_group.command("generate")
@click.option("--task", required=True, help="What the prompt under test is for.")
@click.option("--inputs", "inputs", multiple=True, required=True, metavar="NAME=DESCRIPTION",
              help="A prompt input and what it holds; repeat for each input.")
@click.option("--cases", "num_cases", type=click.IntRange(1, 500), default=10, show_default=True,
              help="How many test cases.")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="Dataset JSON to write (reused when it exists).")
@click.option("--model", help="Generator model [default: [llm] model or TERMGATE_LLM_MODEL].")
@click.option("--base-url", help="OpenAI-compatible endpoint [default: OPENAI_BASE_URL, else [llm] base_url; "
              "no default beyond these: exit 2].")
@click.option("--concurrency", type=click.IntRange(1, 512), default=None,
              help="Calls in flight at once [default: [llm] concurrency, else 8].")
@max_tokens_option
@store_option
@click.option("--no-store", is_flag=True, help="Keep the LLM reply cache in memory only.")
def generate_command(task, inputs, num_cases, out, model, base_url, concurrency, max_tokens, db, no_store):
    """Generate a test dataset: diverse scenario ideas, then one case per idea.

    An existing --out file is reused as it is (no model calls); delete it to regenerate.

    Example: termgate prompt-eval generate --task "Answer customer emails for a bike shop"
    --inputs email="the customer's email" --cases 12 --out cases.json --model gpt-4o-mini
    """
    spec = _parse_inputs(inputs)
    if Path(out).exists():
        dataset = run_cli(load_dataset, out)
        echo(f"{out} exists: reused as it is ({len(dataset.cases)} cases, no model calls); "
                   "delete it to generate a new one")
        return
    if db is not None and no_store:
        raise click.UsageError("--db and --no-store exclude each other")
    evaluator = PromptEvaluator(run_cli(_config, model, base_url, max_tokens), concurrency=concurrency,
                                cache_db=None if no_store else (db or default_db_path()))
    say_endpoints(("model", evaluator.config))
    dataset = run_cli(_generate, evaluator, task, spec, num_cases, out)
    usage = evaluator.usage["generator"]
    echo(f"wrote {len(dataset.cases)} cases to {out} ({usage['calls']} calls, {usage['cache_hits']} from cache)")


def _generate(evaluator: PromptEvaluator, task: str, spec: dict[str, str], num_cases: int, out: str):
    """The dataset; a reply still unusable after its retries is exit 5 (SPEC §3: incomplete,
    not bad input), with nothing written."""
    try:
        return evaluator.generate_dataset(task, spec, num_cases, out)
    except DatasetGenerationError as exc:
        fail([f"error: {exc}", f"incomplete: {out} was not written"], EXIT_INCOMPLETE)


def load_template(path: str | Path, input_names: set[str]) -> str:
    """A prompt file whose {placeholders} are all dataset inputs; InputError names the line otherwise."""
    shown = str(path)
    text = read_text(Path(path), "prompt")
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as exc:
        raise InputError([Problem(shown, 1, "prompt", f"{exc} (write {{{{ and }}}} for literal braces)")]) from None
    for field in fields:
        if field not in input_names:
            line = text[: max(text.find("{" + field), 0)].count("\n") + 1
            raise InputError([Problem(shown, line, "prompt", f"placeholder {{{field}}} is not a dataset input "
                                      f"(inputs: {', '.join(sorted(input_names))}; write {{{{ and }}}} for "
                                      "literal braces)")])
    return text


def _nonempty(text: str) -> str:
    if not text.strip():
        raise ValueError("empty reply")
    return text


_nonempty.complete = lambda text: False
"""An output cut off at max_tokens is never whole: the case errors ("cut off at N tokens")
rather than the judge grading half an answer (llm.client's cut-off rule)."""


def sut_params(sut: LLMConfig) -> dict:
    """What the filled template is sent with, and what its default --prompt-version hashes
    beside the template and the model."""
    return {"temperature": sut.temperature, "max_tokens": sut.max_tokens}


async def _run_template(evaluator: PromptEvaluator, template: str, sut: LLMConfig, dataset_file: str,
                        **kwargs) -> PromptEvalResults:
    """The template filled with each case's inputs, sent to the model under test (cached, retried)."""
    client = AsyncLLMClient(sut, evaluator.concurrency, evaluator.reply_cache())
    params = sut_params(sut)
    dataset = load_dataset(dataset_file)
    await client.prefetch([client.key([{"role": "user", "content": template.format(**c.prompt_inputs)}], params)
                           for c in dataset.cases])

    async def run_prompt(inputs: dict) -> str:
        messages = [{"role": "user", "content": template.format(**inputs)}]
        return (await client.chat(messages, _nonempty, params))[0]

    try:
        results = await evaluator.arun_evaluation(run_prompt, dataset_file, **kwargs)
    finally:
        await client.aclose()
    results.usage = evaluator.with_cache_use({**results.usage, "model": client.usage()})
    return results


def _print_results(results: PromptEvalResults) -> None:
    rows = [(r.index + 1, r.scenario, "-" if r.score is None else f"{r.score:g}",
             "ERROR" if r.error else ("pass" if r.passed else "fail"),
             r.error or (f"capped from {r.judge_score:g}" if r.capped else "")) for r in results.results]
    echo(format_table(["case", "scenario", "score", "result", "note"], rows, max_width=60))
    s = results.summary
    average = "-" if s.average is None else f"{s.average:.2f}"
    spread = "" if s.stdev is None else f" (sd {s.stdev:.2f})"
    echo(f"prompt-eval: {s.total} cases, {s.scored} scored, {s.errored} errored, average {average}{spread}, "
               f"pass rate {s.pass_rate:.0%} at >= {s.pass_threshold:g}")


@prompt_eval_group.command("run")
@click.option("--dataset", required=True, type=click.Path(), help="Dataset JSON (from `prompt-eval generate`).")
@click.option("--prompt", "prompt_file", type=click.Path(), help="Prompt template with {input_name} placeholders.")
@click.option("--callable", "callable_spec", help="A Python function module:function(prompt_inputs: dict) -> str.")
@click.option("--model", help="Model the prompt is sent to [default: [llm] model or TERMGATE_LLM_MODEL].")
@click.option("--judge-model", help="Judge model [default: --model, else [llm] model].")
@click.option("--base-url", help="OpenAI-compatible endpoint [default: OPENAI_BASE_URL, else [llm] base_url; "
              "no default beyond these: exit 2].")
@click.option("--extra-criteria", multiple=True, help="A mandatory criterion; a violation caps the score at 3. Repeatable.")
@click.option("--pass-threshold", type=click.FloatRange(1, 10), default=7, show_default=True,
              help="A case passes at this score or above.")
@click.option("--min-pass-rate", type=click.FloatRange(0, 1), default=None,
              help="Exit 1 when the pass rate (0-1) is below this.")
@click.option("--concurrency", type=click.IntRange(1, 512), default=None,
              help="Calls in flight at once [default: [llm] concurrency, else 8].")
@max_tokens_option
@click.option("--html", "html_out", type=click.Path(dir_okay=False), help="Write the HTML report here.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False), help="Write the results as JSON here.")
@click.option("--name", help="A name for the run.")
@click.option("--prompt-version", help="Version label [default: hash of prompt and model, or the callable].")
@store_option
@click.option("--no-store", is_flag=True, help="Do not record the results (the LLM cache is then in memory only).")
def run_command(dataset, prompt_file, callable_spec, model, judge_model, base_url, extra_criteria, pass_threshold,
                min_pass_rate, concurrency, max_tokens, html_out, json_out, name, prompt_version, db, no_store):
    """Run a prompt on every case of a dataset and have the judge score each output 1-10.

    Example: termgate prompt-eval run --dataset cases.json --prompt prompt.txt --model gpt-4o-mini
    --extra-criteria "never promises a refund" --html report.html --min-pass-rate 0.8
    """
    if (prompt_file is None) == (callable_spec is None):
        raise click.UsageError("give exactly one of --prompt or --callable")
    if db is not None and no_store:
        raise click.UsageError("--db and --no-store exclude each other")
    db = None if no_store else (db or default_db_path())
    from ..llm.harness import callable_source
    from .evaluate import check_paths
    check_paths({"html": html_out, "json": json_out},
                {"dataset": dataset, "prompt": prompt_file,
                 "callable": callable_source(callable_spec) if callable_spec else None}, db)
    loaded = run_cli(load_dataset, dataset)
    judge = run_cli(_config, judge_model or model, base_url, max_tokens)
    evaluator = PromptEvaluator(run_cli(_config, model, base_url, max_tokens) if prompt_file else judge, judge,
                                concurrency=concurrency, cache_db=db)
    kwargs = {"extra_criteria": list(extra_criteria), "pass_threshold": pass_threshold, "name": name}
    if prompt_file:
        template = run_cli(load_template, prompt_file, set(loaded.prompt_inputs_spec))
        sut = evaluator.config
        say_endpoints(("model", sut), ("judge model", evaluator.judge_config))
        kwargs["prompt_version"] = prompt_version or prompt_version_of(template, sut.model, sut_params(sut))
        results = run_cli(asyncio.run, _run_template(evaluator, template, sut, dataset, model=sut.model, **kwargs))
    else:
        fn = run_cli(load_callable, callable_spec)
        say_endpoints(("judge model", evaluator.judge_config))
        kwargs["prompt_version"] = prompt_version or callable_spec
        results = run_cli(evaluator.run_evaluation, fn, dataset, model=f"callable:{callable_spec}", **kwargs)
    _print_results(results)
    _write_outputs(results, db, html_out, json_out)
    s = results.summary
    below = ([f"pass rate {s.pass_rate:.0%} is below --min-pass-rate {min_pass_rate:.0%}"]
             if min_pass_rate is not None and s.pass_rate < min_pass_rate - EPSILON else [])
    if s.errored:  # SPEC §3: incomplete (5) comes before a low pass rate (1)
        fail([*below, f"incomplete: {s.errored} of {s.total} case{'s' if s.total != 1 else ''} errored and "
                      "were not scored (see the note column); a rerun asks again for exactly those"], EXIT_INCOMPLETE)
    if below:
        fail(below, EXIT_BELOW_MIN)


def _write_outputs(results: PromptEvalResults, db: str | None, html_out: str | None, json_out: str | None) -> None:
    if db is not None:
        run_cli(results.store_results, db)
        url = load_settings().dashboard_url.rstrip("/")
        echo(f"stored as {results.eval_id} in {shown_db(db)}; compare versions: {url}/prompts?dataset="
                   f"{results.dataset_hash[:12]}")
    if html_out:
        write_prompt_html(results, html_out)
        echo(f"wrote {html_out}")
    if json_out:
        results.save_json(json_out)
        echo(f"wrote {json_out}")


def _resolve_hash(value: str, db: str) -> str:
    if Path(value).exists():
        return dataset_hash(load_dataset(value))
    found = find_dataset_hash(db, value) if len(value.strip()) >= 6 else None
    if found is None:
        stored = prompt_eval_datasets(db)
        known = ", ".join(f"{r.dataset_hash[:12]} ({r.dataset_path})" for r in stored.head(5).itertuples()) or "none"
        raise UsageError(f"--dataset {value}: no such file, and no unique stored dataset hash starts with it "
                         f"(stored: {known})")
    return found


def _cell(value: float | None, fmt: str = ".1f") -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else format(value, fmt)


@prompt_eval_group.command("compare")
@click.option("--dataset", required=True, help="Dataset JSON file, or a stored dataset hash (or unique prefix of 6+).")
@store_option
def compare_command(dataset, db):
    """Per-case scores of every stored prompt version on one dataset, with averages and spread.

    Each version's newest run is shown; '-' marks an errored (unscored) case.

    Example: termgate prompt-eval compare --dataset cases.json --db data/termgate.duckdb
    """
    db = db or default_db_path()
    digest = run_cli(_resolve_hash, dataset, db)
    versions = run_cli(prompt_eval_versions, db, digest)
    if versions.empty:
        fail([f"--dataset {dataset}: no stored prompt evaluations on this dataset (hash {digest[:12]}) in "
              f"{shown_db(db)}; run `termgate prompt-eval run` first"])
    scores = run_cli(prompt_eval_scores, db, digest)
    labels = list(versions["version"])
    by_case = scores.pivot(index="case_index", columns="version", values="score").reindex(columns=labels)
    scenarios = scores.drop_duplicates("case_index").set_index("case_index")["scenario"]
    rows = [[int(i) + 1, scenarios[i], *(_cell(v) for v in by_case.loc[i])] for i in by_case.index]
    rows.append(["", "average", *(_cell(v, ".2f") for v in versions["average_score"])])
    rows.append(["", "std dev", *(_cell(v, ".2f") for v in versions["stdev_score"])])
    rows.append(["", "pass rate", *(f"{v:.0%}" for v in versions["pass_rate"])])
    rows.append(["", "errored", *(str(int(v)) for v in versions["errored_cases"])])
    echo(f"dataset {digest[:12]}: {len(by_case)} cases, {len(labels)} prompt version{'' if len(labels) == 1 else 's'} (oldest first)")
    echo(format_table(["case", "scenario", *labels], rows, max_width=40))
    echo("")
    echo(format_table(["version", "evaluation", "created", "model", "judge"],
                            [(r.version, r.eval_id, r.created_at, r.model, r.judge_model)
                             for r in versions.itertuples()], max_width=60))
