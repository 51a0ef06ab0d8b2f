"""`termgate harness`: run the expansion prompt (or a Python expander) over the golden set,
then evaluate exactly as `evaluate` does."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import sys
from pathlib import Path

import click

from .. import store
from ..config import default_db_path
from ..drift.judge import JUDGE_NAMES
from ..environment import setting
from ..gc_pause import without_gc_pauses
from ..drift.resolve import resolve_judge
from ..evaluation import evaluate, new_run_id, utc_now
from ..text import terminal_safe
from ..llm.harness import (callable_source, load_callable, load_prompt, parse_json_reply, parse_reply, reply_reader,
                           run_callable, run_prompt, to_generated)
from ..llm.harness import prompt_version as prompt_version_of
from ..llm.replies import RESPONSE_SCHEMA
from ..report import STDOUT
from ..io import load_golden_set, load_thresholds
from ..llm.client import DEFAULT_CONCURRENCY, AsyncLLMClient, LLMConfig
from .ci import ci_options, ci_paths
from .common import (EXIT_NOT_RELEASABLE, echo, fail, judge_endpoint, report_options, retrieval_options,
                     retrieval_setup, run_cli, say_endpoints, trec_run_paths,
                     store_option)
from .evaluate import (chain_refusal, check_paths, finish, note_default_judge, refuse_broken_chain, resolve_baseline,
                       warn_ignored_environment, write_outputs)

__all__ = ["harness_command"]


def _bar(label: str):
    """A terminal progress line on stderr (quiet when stderr is not a terminal), or
    `progress DONE/TOTAL` lines when TERMGATE_PROGRESS=lines (the dashboard reads those)."""
    tty = sys.stderr is not None and sys.stderr.isatty()  # None: started with no standard error (`2>&-`)
    if setting("PROGRESS") == "lines":
        def lines(done: int, total: int) -> None:
            if sys.stderr is not None and (done == total or done % max(1, total // 100) == 0):
                sys.stderr.write(f"progress {done}/{total}\n")
                sys.stderr.flush()
        return lines

    def report(done: int, total: int) -> None:
        if tty and (done == total or done % max(1, total // 100) == 0):
            width = 30
            filled = int(width * done / max(total, 1))
            sys.stderr.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
            if done == total:
                sys.stderr.write("\n")
            sys.stderr.flush()
    return report


def _use_endpoint(settings, name: str, model: str | None):
    """(settings, base_url, model) for a configured endpoint. The client reads OPENAI_API_KEY,
    so this process's OPENAI_API_KEY becomes that endpoint's own key (or none), and every
    LLM call of the run (an llm drift judge too) goes to that endpoint's URL: its key
    reaches its own host only, and no other key reaches it."""
    endpoint = settings.endpoints.get(name)
    if endpoint is None:
        known = ", ".join(sorted(settings.endpoints)) or "none"
        fail([f"error: unknown endpoint '{name}' (configured: {known}); add [llm.endpoints.{name}] with "
              f"base_url, model and key_env to {settings.source or 'termgate.toml'}"])
    key = os.environ.get(endpoint.key_env) if endpoint.key_env else None
    if endpoint.key_env and not key:
        fail([f"error: endpoint '{name}' takes its key from ${endpoint.key_env}, which is not set"])
    if key:
        os.environ["OPENAI_API_KEY"] = key
    else:
        os.environ.pop("OPENAI_API_KEY", None)
    os.environ.pop("OPENAI_BASE_URL", None)
    settings = dataclasses.replace(settings, llm={**settings.llm, **endpoint.generation, "base_url": endpoint.base_url})
    return settings, endpoint.base_url, model or endpoint.model


@click.command("harness")
@click.option("--golden", required=True, type=click.Path(), help="Golden set (JSONL).")
@click.option("--prompt", "prompt_file", type=click.Path(), help="Prompt file with {query}, {domain}, {intent}.")
@click.option("--model", help="Model name at the endpoint [default: [llm] model or TERMGATE_LLM_MODEL].")
@click.option("--base-url", help="OpenAI-compatible endpoint [default: OPENAI_BASE_URL, else [llm] base_url; "
              "no default beyond these: exit 2].")
@click.option("--endpoint", "endpoint_name", metavar="NAME",
              help="A configured [llm.endpoints.NAME]: its base URL, model and the key from its key_env "
                   "(only that key is sent, only to that URL). The dashboard runs the harness this way.")
@click.option("--callable", "callable_spec", help="A Python expander module:function(query, context) -> list.")
@click.option("--parser", "parser_spec", metavar="MODULE:FUNCTION",
              help="Read replies with your own parser, f(reply: str) -> list of terms (strings or "
                   "{term, weight}), as production indexes them [default: termgate's reading, SPEC §6].")
@click.option("--response-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="json: ask the endpoint for JSON by schema ({\"terms\": [...]}); a reply that is not JSON "
                   "is unparseable, and an endpoint that refuses the schema stops the run (exit 2).")
@click.option("--repeat", type=click.IntRange(1, 50), default=1, show_default=True,
              help="Sample each query N times, stored as N runs of the same prompt version (the noise floor "
                   "of the statistics); reports and the exit code are repeat 1's.")
@click.option("--concurrency", type=click.IntRange(1, 512), default=None,
              help=f"Calls (or expander calls) in flight at once [default: [llm] concurrency (the endpoint's "
                   f"under --endpoint), else {DEFAULT_CONCURRENCY}; a server that answers one request at a time "
                   "wants 1].")
@click.option("--max-tokens", type=click.IntRange(1, 1_000_000), default=None,
              help="Completion tokens per call; a reply cut off there is an errored item unless its JSON or "
                   "list is whole [default: [llm] max_tokens (the endpoint's under --endpoint), else 512]. "
                   "Part of the prompt version and the cache key.")
@click.option("--temperature", type=float, default=0.0, show_default=True,
              help="Sampling temperature sent with every call (part of the prompt version and the cache key).")
@click.option("--timeout", type=float, default=None, help="Seconds per call [default: [llm] timeout or 30].")
@click.option("--max-tries", type=click.IntRange(1, 20), default=None, help="Tries per call [default: 4].")
@click.option("--thresholds", type=click.Path(), help="Thresholds (JSON or TOML).")
@click.option("--domain", "domain_context", help="Free-text domain context; fills {domain} and context.domain.")
@click.option("--baseline", help="Baseline: a JSON report file when the path exists, else a stored run id.")
@click.option("--drift-judge", type=click.Choice(JUDGE_NAMES), help="Drift judge [default: embedding when installed].")
@click.option("--golden-name", help="The golden set's name [default: the --golden path from the git repository's "
              "root, else from the working folder]; runs "
              "with one name are runs on one golden set, its content hash the revision (SPEC §1.1).")
@click.option("--name", help="A name for the run.")
@click.option("--prompt-version", help="Version label [default: hash of prompt, model and parameters].")
@click.option("--author", help="Who created the run [default: the OS user].")
@retrieval_options
@report_options
@ci_options
@store_option
@click.option("--no-store", is_flag=True, help="Do not record the run (the LLM cache is then in memory only).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the gate line (and errors).")
@without_gc_pauses  # a short-lived command building millions of objects; cycles are rare
def harness_command(golden, prompt_file, model, base_url, endpoint_name, callable_spec, parser_spec, response_format,
                    repeat, concurrency, max_tokens, temperature, timeout,
                    max_tries, thresholds, domain_context, baseline, drift_judge, golden_name, name, prompt_version,
                    author, corpus, qrels, search_engine, trec_runs,
                    json_out, html_out, junit_out, summary_out, comment_out, codequality_out, db, no_store, quiet):
    """Run the system under test on every golden query, then score it like `evaluate`.

    Replies are read as a person would (SPEC §6): JSON anywhere in the reply (fenced or
    not; a list of terms or an object with terms/synonyms/expansions), else a list of
    lines or comma-separated items with bullets, numbering, Markdown, quotes, lead-ins and
    trailing notes set aside. A refusal, prose with no terms, empty text or invalid JSON
    (or a failing call after retries) is an errored item and the gate fails; see every
    reply with `termgate replies RUN`. Replies are cached in the store: a rerun makes zero
    calls, and an interrupted run resumes where it stopped.

    --parser and --response-format go with --prompt; --repeat works with both (with
    --callable it calls the expander N times). A parser's failure is an unparseable reply,
    retried like one.

    --summary, --pr-comment, --codequality, $GITHUB_STEP_SUMMARY and the annotations under
    GITHUB_ACTIONS=true work as with `evaluate` (docs/ci.md).

    Exit codes: as `evaluate` — 0 releasable, 1 not releasable (or a broken audit chain:
    no call is made and nothing stored),
    2 bad input or usage, 3 awaiting human sign-off, 5 incomplete (errored items; a rerun
    retries exactly those); 130 interrupted (Ctrl-C: a rerun resumes from the cache).

    \b
    Example:
      OPENAI_BASE_URL=http://localhost:8000/v1 termgate harness \\
        --golden data/demo/medical/golden.jsonl --prompt prompts/expand.txt \\
        --model llama3 --concurrency 16 --json out/report.json
    """
    if (prompt_file is None) == (callable_spec is None):
        raise click.UsageError("give exactly one of --prompt or --callable")
    if db is not None and no_store:
        raise click.UsageError("--db and --no-store exclude each other")
    if endpoint_name is not None and (base_url or callable_spec):
        raise click.UsageError("--endpoint names the URL itself: leave out --base-url and --callable")
    if callable_spec and (parser_spec or response_format != "text"):
        given = "--parser" if parser_spec else "--response-format"
        raise click.UsageError(f"{given} reads model replies: it goes with --prompt, not --callable")
    if parser_spec and response_format != "text":
        raise click.UsageError("--parser reads the replies itself: leave out --response-format")
    db = db or default_db_path()
    cache_db = None if no_store else db
    report_paths = {"json": json_out, "html": html_out, "junit": junit_out, **trec_run_paths(trec_runs),
                    **ci_paths(summary_out, comment_out, codequality_out)}
    settings = check_paths(report_paths,
                           {"golden": golden, "prompt": prompt_file, "thresholds": thresholds,
                            "callable": callable_source(callable_spec) if callable_spec else None,
                            "parser": callable_source(parser_spec) if parser_spec else None,
                            "baseline": baseline if baseline and Path(baseline).exists() else None,
                            "corpus": corpus, "qrels": qrels}, cache_db)
    if endpoint_name is not None:
        settings, base_url, model = _use_endpoint(settings, endpoint_name, model)
    warn_ignored_environment()
    thresholds_model = run_cli(load_thresholds, thresholds)
    retrieval = retrieval_setup(corpus, qrels, search_engine, trec_runs, settings)  # before any call
    golden_set = run_cli(load_golden_set, golden, domain_context)
    base = run_cli(resolve_baseline, baseline, db)
    vectors = store.StoredVectors(cache_db) if cache_db else None  # its `use`: whose cache entries the run used
    judge = run_cli(resolve_judge, drift_judge, settings, vectors, domain_context)
    note_default_judge(drift_judge, settings, judge)
    usage: dict = {}

    def refuse_on_broken_chain() -> None:  # SPEC §4: after the inputs are read, before any call or cache write
        broken = run_cli(chain_refusal, cache_db) if cache_db is not None else None
        if broken:
            fail([broken], EXIT_NOT_RELEASABLE)

    if prompt_file:
        parse = (reply_reader(run_cli(load_callable, parser_spec, "--parser")) if parser_spec
                 else parse_json_reply if response_format == "json" else parse_reply)
        prompt = run_cli(load_prompt, prompt_file)
        llm = dict(settings.llm)
        if timeout is not None:
            llm["timeout"] = timeout
        if max_tries is not None:
            llm["max_tries"] = max_tries
        if max_tokens is not None:
            llm["max_tokens"] = max_tokens
        if concurrency is not None:
            llm["concurrency"] = concurrency
        config = run_cli(LLMConfig.from_settings, llm, model, base_url)
        refuse_on_broken_chain()
        params = {"temperature": temperature, "max_tokens": config.max_tokens}
        if response_format == "json":
            params["response_format"] = RESPONSE_SCHEMA
        # the parser decides what is scored: runs read by different parsers are different versions
        version = prompt_version or prompt_version_of(prompt, config.model,
                                                      {**params, "parser": parser_spec} if parser_spec else params)
        if not quiet:
            say_endpoints(("model", config), *judge_endpoint(judge))
        if repeat > 1 and temperature == 0:
            echo(f"warning: --repeat {repeat} at temperature 0: the repeats measure only the endpoint's own "
                 "nondeterminism; give --temperature to sample as production does", err=True)

        async def go():
            replies = store.StoredReplies(cache_db, vectors.use) if cache_db else None
            client = AsyncLLMClient(config, cache=replies)
            try:
                samples = await run_prompt(golden_set, prompt, client, domain_context, params, _bar("harness"),
                                           parse, repeat)
            finally:
                await client.aclose()
            if client.schema_refusal and not quiet:
                echo(f"note: {config.shown_url} refused the json_schema response format "
                     f"({terminal_safe(config.redact(client.schema_refusal))}); asked with "
                     '{"type": "json_object", "schema": ...} for the rest of the run (structured_output = '
                     '"json_object" under [llm] starts with that form)', err=True)
            return samples, client.usage()
        if cache_db is not None:
            run_cli(store.ensure_store, cache_db)  # create and migrate before the first cache write
        samples, usage = _interruptible(lambda: run_cli(asyncio.run, go()), cache_db)
        source = f"harness:{prompt_file}@{config.model}"
    else:
        fn = run_cli(load_callable, callable_spec)
        refuse_on_broken_chain()
        if not quiet:
            say_endpoints(*judge_endpoint(judge))
        version = prompt_version or callable_spec

        async def each():
            return [await run_callable(golden_set, fn, concurrency or DEFAULT_CONCURRENCY, _bar("harness"))
                    for _ in range(repeat)]
        samples = _interruptible(lambda: asyncio.run(each()), None)
        source = f"harness:{callable_spec}"
    err = STDOUT in report_paths.values()  # a report on standard output: our lines go to stderr
    repeats_from = (lambda name, v: store.repeat_runs(cache_db, name, v)) if cache_db else None

    def evaluated(outputs):
        generated, errors = to_generated(outputs, source)
        return run_cli(evaluate, golden, generated.table(errors), thresholds=thresholds_model, drift_judge=judge,
                       baseline=base, settings=settings, name=name, prompt_version=version,
                       domain_context=domain_context, author=author, cache_db=cache_db, source=source,
                       repeats_from=repeats_from, golden_name=golden_name,
                       cache_use=vectors.use if vectors else None, retrieval=retrieval), len(errors)

    def stored_with(run_id, outputs, run_usage):
        replies = store.harness_output_rows(run_id, [
            {"query_id": o.query_id, "prompt": o.prompt, "reply": o.reply, "terms": list(o.terms), "error": o.error}
            for o in outputs])
        return {"extra_rows": {"harness_outputs": replies}, "usage": run_usage or None}

    first_id = new_run_id(utc_now())
    f1s, others = [], []
    for k, outputs in enumerate(samples[1:], start=2):  # stored first: repeat 1's noise floor sees them
        run, _ = evaluated(outputs)
        f1s.append(run.queries.f1.copy())
        if cache_db is not None:
            sample = {**usage, "repeat": k, "repeats": repeat, "repeat_of": first_id}
            run_cli(refuse_broken_chain, write_outputs, run, cache_db, {},
                    stored_with(run.evaluation_id, outputs, sample))
        others.append(run.evaluation_id)
        run.close()
    run, errored = evaluated(samples[0])
    run.evaluation_id = first_id
    if repeat > 1:
        usage = {**usage, "repeat": 1, "repeats": repeat, "repeat_runs": others}
    if not quiet:
        echo(f"harness: {len(samples[0])} queries, {errored} errored"
             + (f", {usage['calls']} calls, {usage['cache_hits']} from cache, "
                f"{usage['prompt_tokens'] + usage['completion_tokens']} tokens" if "calls" in usage else ""), err=err)
        if repeat > 1:
            _print_variation(run, f1s, others, cache_db, err)
    finish(run, cache_db, settings, report_paths, quiet, stored_with(run.evaluation_id, samples[0], usage),
           baseline=(baseline, db))


def _interruptible(work, cache_db):
    """Ctrl-C during the calls: exit 130 with one line saying a rerun resumes (the replies
    answered so far are in the store's cache), never click's bare 'Aborted!' and exit 1,
    which a pipeline would take for a failed gate. Whatever the user's code (an expander, a
    parser) prints goes to standard error, so a report on standard output stays whole."""
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return work()
    except KeyboardInterrupt:
        echo("interrupted: nothing was scored or stored"
             + ("; the replies received so far are cached, so a rerun resumes where this stopped" if cache_db else ""),
             err=True)
        sys.exit(130)


def _print_variation(run, f1s, others, cache_db, err: bool = False) -> None:
    """The queries whose F1 differs across the repeats: how noisy the endpoint is here."""
    import numpy as np

    table = np.vstack([run.queries.f1, *f1s])
    spread = table.max(axis=0) - table.min(axis=0)
    varying = np.flatnonzero(spread > 1e-9)
    ids = run.queries.facts.query_ids.to_pylist()
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    echo(f"repeats: {len(f1s) + 1} samples per query; F1 varies on {len(varying)} of {len(ids)} queries"
         + (f" (other runs: {shown})" if cache_db else " (not stored: --no-store)"), err=err)
    for i in varying[:20]:
        echo(f"  {terminal_safe(ids[i])}: F1 {table[:, i].min():.3f}–{table[:, i].max():.3f} "
             f"({', '.join(f'{v:.3f}' for v in table[:, i])})", err=err)
    if len(varying) > 20:
        echo(f"  … and {len(varying) - 20} more", err=err)
