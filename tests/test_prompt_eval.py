"""Prompt evaluation against a real loopback OpenAI-compatible server: dataset generation,
concurrent runs in dataset order, the judge and its extra-criteria cap (SPEC §6), errored
cases, the HTML report, the store and version matrix, the CLI group and the dashboard page."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from termgate.llm import prompt_eval as pe
from termgate.cli.prompt_eval import prompt_eval_group
from termgate.dashboard import APP as DASHBOARD_APP
from termgate.errors import InputError
from termgate.llm.client import LLMConfig
from termgate.report.prompt_html import badge_class, write_prompt_html
from termgate.store.prompts import (list_prompt_evals, prompt_eval_matrix, prompt_eval_results, prompt_eval_versions,
                                    save_prompt_eval)

from llm_server import LoopbackLLM

PAGE = str(DASHBOARD_APP.parent / "views" / "prompts.py")


class FakeModel:
    """Plays generator, model under test and judge, told apart by the system prompt.

    The judge scores an output by markers in it: `score=N` gives N, `violate` lists the first
    extra criterion as violated, `garbage` answers prose instead of JSON.
    """

    def __init__(self):
        self.ideas = None  # override the idea list

    def __call__(self, body):
        messages = body["messages"]
        if messages[0]["role"] == "user":  # the prompt under test, filled from a template
            return ("text", "ANSWER " + messages[0]["content"])
        system, payload = messages[0]["content"], json.loads(messages[1]["content"])
        if system == pe.IDEAS_SYSTEM:
            return ("json", {"ideas": self.ideas or [f"idea {i}" for i in range(payload["number_of_ideas"])]})
        if system == pe.CASE_SYSTEM:
            idea = payload["scenario_idea"]
            return ("json", {"scenario": idea, "prompt_inputs": {n: f"{n} for {idea}" for n in payload["prompt_inputs"]},
                             "solution_criteria": ["is polite", "answers the question"]})
        assert system == pe.JUDGE_SYSTEM
        return self.judge(payload)

    @staticmethod
    def judge(payload):
        output = payload["output"]
        if "garbage" in output:
            return ("text", "A fine answer, I'd say 9/10.")
        found = re.search(r"score=(\d+(?:\.\d+)?)", output)
        violated = payload["extra_criteria"][:1] if "violate" in output else []
        return ("json", {"score": float(found.group(1)) if found else 5, "reasoning": f"judged <{output[:20]}>",
                         "strengths": ["clear"], "weaknesses": ["short"], "violated_extra_criteria": violated})


@pytest.fixture
def llm():
    server = LoopbackLLM()
    server.default = ("callable", FakeModel())
    yield server
    server.close()


def config(llm, **kw) -> LLMConfig:
    return LLMConfig(model="test-model", base_url=llm.url, backoff=0.001, max_backoff=0.01, timeout=10,
                     **{"max_tries": 3, **kw})


def write_dataset(path: Path, texts: list[str], criteria=("echoes the text",)) -> Path:
    data = {"task_description": "Echo the text back", "prompt_inputs_spec": {"text": "what to echo"},
            "cases": [{"scenario": f"scenario {i}", "prompt_inputs": {"text": t}, "solution_criteria": list(criteria)}
                      for i, t in enumerate(texts)]}
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def echo(inputs: dict) -> str:
    return inputs["text"]


def judge_payloads(llm) -> list[dict]:
    return [json.loads(r["body"]["messages"][1]["content"]) for r in llm.requests
            if r["body"]["messages"][0]["content"] == pe.JUDGE_SYSTEM]


# ---------------------------------------------------------------- dataset generation


def test_generate_asks_ideas_then_one_case_per_idea_and_reuses_the_file(llm, tmp_path):
    out = tmp_path / "cases.json"
    evaluator = pe.PromptEvaluator(config(llm))
    dataset = evaluator.generate_dataset("Answer bike shop emails", {"email": "the customer's email"}, 3, out)
    assert llm.chat_calls == 4  # 1 ideas + 3 cases
    systems = [r["body"]["messages"][0]["content"] for r in llm.requests]
    assert systems[0] == pe.IDEAS_SYSTEM and systems[1:] == [pe.CASE_SYSTEM] * 3
    asked = sorted(json.loads(r["body"]["messages"][1]["content"])["scenario_idea"] for r in llm.requests[1:])
    assert asked == ["idea 0", "idea 1", "idea 2"]
    assert [c.scenario for c in dataset.cases] == ["idea 0", "idea 1", "idea 2"]  # idea order, not answer order
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert set(saved) == {"task_description", "prompt_inputs_spec", "cases"}
    assert saved["cases"][1]["prompt_inputs"] == {"email": "email for idea 1"}
    again = evaluator.generate_dataset("a different task", {"x": "y"}, 9, out)
    assert llm.chat_calls == 4 and again == dataset  # reused: zero calls


GOOD_CASE = {"scenario": "s", "prompt_inputs": {"email": "hi"}, "solution_criteria": ["c"]}
BAD_CASES = [("text", "sure! here is a case"),                                          # not JSON
             ("json", {**GOOD_CASE, "prompt_inputs": {"mail": "hi"}}),                  # wrong input name
             ("json", {**GOOD_CASE, "solution_criteria": ["a", "b", "c", "d", "e"]})]   # more than 4 criteria


@pytest.mark.parametrize("bad", BAD_CASES)
def test_an_invalid_case_is_asked_again_with_the_repair_hint(llm, tmp_path, bad):
    """Issue 35 item 5: at temperature 0 the same request gets the same reply, so the retry
    appends the repair hint; a second unusable reply ends the tries."""
    llm.actions = [("json", {"ideas": ["only idea"]}), bad, ("json", GOOD_CASE)]
    dataset = pe.PromptEvaluator(config(llm, max_tries=4)).generate_dataset(
        "t", {"email": "e"}, 1, tmp_path / "d.json")
    assert llm.chat_calls == 3 and dataset.cases == [pe.TestCase(**GOOD_CASE)]
    first, retry = llm.requests[1]["body"]["messages"], llm.requests[2]["body"]["messages"]
    assert retry[:-1] == first and retry[-1] == {"role": "user", "content": pe.CASE_REPAIR.format(
        inputs='"email": "<value>"')}
    assert '"prompt_inputs": {"email": "<value>"}' in retry[-1]["content"]


def test_an_invalid_case_stays_unusable_after_the_repaired_request(llm, tmp_path):
    llm.actions = [("json", {"ideas": ["only idea"]}), *BAD_CASES[:2]]
    with pytest.raises(pe.DatasetGenerationError, match="prompt_inputs has .'mail'.*after 2 tries"):
        pe.PromptEvaluator(config(llm, max_tries=4)).generate_dataset("t", {"email": "e"}, 1, tmp_path / "d.json")
    assert llm.chat_calls == 3  # never the same request twice at temperature 0


def test_above_temperature_0_an_invalid_case_is_retried_until_valid(llm, tmp_path):
    llm.actions = [("json", {"ideas": ["only idea"]}), *BAD_CASES, ("json", GOOD_CASE)]
    dataset = pe.PromptEvaluator(config(llm, max_tries=4, temperature=0.7)).generate_dataset(
        "t", {"email": "e"}, 1, tmp_path / "d.json")
    assert llm.chat_calls == 5 and dataset.cases == [pe.TestCase(**GOOD_CASE)]
    assert all(r["body"]["messages"][-1]["content"] == pe.CASE_REPAIR.format(inputs='"email": "<value>"')
               for r in llm.requests[2:])


def test_generation_failing_after_last_try_writes_nothing(llm, tmp_path):
    llm.actions = [("json", {"ideas": ["a", "b"]})]
    llm.default = ("json", {"scenario": "s", "prompt_inputs": {}, "solution_criteria": []})
    out = tmp_path / "d.json"
    with pytest.raises(pe.DatasetGenerationError, match="2 of 2 cases failed"):
        pe.PromptEvaluator(config(llm, max_tries=2)).generate_dataset("t", {"email": "e"}, 2, out)
    assert llm.chat_calls == 1 + 2 * 2 and not out.exists()


def test_too_few_distinct_ideas_are_retried(llm, tmp_path):
    model = FakeModel()
    model.ideas = ["same", "same"]
    llm.default = ("callable", model)
    with pytest.raises(pe.DatasetGenerationError, match="expected 2 distinct ideas, got 1"):
        pe.PromptEvaluator(config(llm, max_tries=2)).generate_dataset("t", {"e": "e"}, 2, tmp_path / "d.json")
    assert llm.chat_calls == 2


def test_too_few_ideas_are_asked_again_with_the_repair_hint_and_enough_tokens(llm, tmp_path):
    """Issue 35 items 3 and 5: the ideas reply lists one idea per case, so it may use 100 + 60
    tokens per idea when that is more than max_tokens; its retry carries the repair hint."""
    model = FakeModel()
    llm.actions = [("json", {"ideas": ["same"] * 12})]
    llm.default = ("callable", model)
    pe.PromptEvaluator(config(llm)).generate_dataset("t", {"e": "e"}, 12, tmp_path / "d.json")
    ideas = [r["body"] for r in llm.requests if r["body"]["messages"][0]["content"] == pe.IDEAS_SYSTEM]
    assert len(ideas) == 2 and ideas[1]["messages"][-1]["content"] == pe.IDEAS_REPAIR.format(n=12)
    assert "with 12 distinct ideas" in ideas[1]["messages"][-1]["content"]
    assert {b["max_tokens"] for b in ideas} == {100 + 60 * 12}  # more than the default 512
    cases = [r["body"] for r in llm.requests if r["body"]["messages"][0]["content"] == pe.CASE_SYSTEM]
    assert len(cases) == 12 and {b["max_tokens"] for b in cases} == {512}


def test_an_unusable_judge_reply_is_asked_again_with_the_repair_hint(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", ["x"])
    llm.actions = [("json", {"verdict": 8, "reasoning": "r"}), ("json", {"score": 8, "reasoning": "r"})]
    (case,) = pe.PromptEvaluator(config(llm)).run_evaluation(echo, dataset).results
    assert case.score == 8 and case.error is None
    first, retry = (r["body"]["messages"] for r in llm.requests)
    assert retry == [*first, {"role": "user", "content": pe.JUDGE_REPAIR}]
    assert all(r["body"]["max_tokens"] == 512 for r in llm.requests)


@pytest.mark.parametrize("data, field", [
    ({"task_description": "t", "prompt_inputs_spec": {"a": "b"}, "cases": []}, "cases"),
    ({"task_description": "t", "prompt_inputs_spec": {"a": "b"},
      "cases": [{"scenario": "s", "prompt_inputs": {"a": 1}, "solution_criteria": list("abcde")}]},
     "cases[0].solution_criteria"),
    ({"task_description": "t", "prompt_inputs_spec": {"a": "b"},
      "cases": [{"scenario": "s", "prompt_inputs": {}, "solution_criteria": ["c"]}]}, "cases[0].prompt_inputs.a"),
])
def test_bad_dataset_names_file_and_field(tmp_path, data, field):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InputError) as info:
        pe.load_dataset(path)
    assert info.value.lines()[0].startswith(f"{path}:1: {field}: ")  # one line of JSON


# Three kinds of problem in one file, on the lines they are on: the schema's (too many
# criteria, a blank scenario, a missing field) and the inputs' (missing, not in the spec).
BAD_DATASET = """{
  "task_description": "Echo the text back",
  "prompt_inputs_spec": {"text": "what to echo"},
  "cases": [
    {"scenario": "too many criteria",
     "prompt_inputs": {"text": "a"},
     "solution_criteria": ["1", "2", "3", "4", "5"]},
    {"scenario": "no text",
     "prompt_inputs": {},
     "solution_criteria": ["c"]},
    {"scenario": "  ",
     "prompt_inputs": {"text": "c",
                       "tone": "an input nobody declared"},
     "solution_criteria": ["c"]},
    {"prompt_inputs": {"text": "d"}, "solution_criteria": ["c"]}
  ]
}
"""


def test_dataset_validation_lists_every_problem_with_its_line(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(BAD_DATASET, encoding="utf-8")
    with pytest.raises(InputError) as info:
        pe.load_dataset(path)
    assert info.value.lines() == [
        f"{path}:7: cases[0].solution_criteria: list should have at most 4 items after validation, not 5",
        f"{path}:9: cases[1].prompt_inputs.text: missing: every input of prompt_inputs_spec needs a value",
        f"{path}:11: cases[2].scenario: string should have at least 1 character",
        f"{path}:13: cases[2].prompt_inputs.tone: not in prompt_inputs_spec",
        f"{path}:15: cases[3].scenario: field required",
    ]


def test_dataset_validation_shows_20_problems_then_counts_the_rest(tmp_path):
    path = write_dataset(tmp_path / "d.json", [f"t{i}" for i in range(25)])
    data = json.loads(path.read_text())
    for case in data["cases"]:
        case["prompt_inputs"] = {"txt": "typo"}  # two problems per case: text missing, txt unknown
    path.write_text(json.dumps(data, indent=1), encoding="utf-8")
    with pytest.raises(InputError) as info:
        pe.load_dataset(path)
    lines = info.value.lines()
    assert len(lines) == 21 and lines[-1] == "... and 30 more problems"
    assert lines[:2] == [f"{path}:9: cases[0].prompt_inputs.text: missing: every input of prompt_inputs_spec "
                         "needs a value", f"{path}:10: cases[0].prompt_inputs.txt: not in prompt_inputs_spec"]


# ---------------------------------------------------------------- running and judging


def test_results_follow_dataset_order_while_cases_run_concurrently(llm, tmp_path):
    texts = [f"score={s}" for s in (9, 8, 7, 6, 5, 4)]
    dataset = write_dataset(tmp_path / "d.json", texts)
    state = {"now": 0, "max": 0}

    async def slow_echo(inputs):
        state["now"] += 1
        state["max"] = max(state["max"], state["now"])
        index = 9 - int(inputs["text"].split("=")[1])
        await asyncio.sleep(0.03 * (6 - index))  # later cases finish first
        state["now"] -= 1
        return inputs["text"]

    results = pe.PromptEvaluator(config(llm), concurrency=3).run_evaluation(
        slow_echo, dataset, extra_criteria="stays under 20 words")
    assert [r.index for r in results.results] == list(range(6))
    assert [r.output for r in results.results] == texts
    assert [r.score for r in results.results] == [9, 8, 7, 6, 5, 4]
    assert [r.passed for r in results.results] == [True, True, True, False, False, False]  # threshold 7
    assert state["max"] == 3  # concurrent, and bounded
    s = results.summary
    assert (s.total, s.scored, s.errored, s.passed, s.average, s.pass_rate) == (6, 6, 0, 3, 6.5, 0.5)
    assert s.stdev == pytest.approx(1.870828693)  # sample sd of 4..9
    payload = judge_payloads(llm)[0]  # what the judge sees
    assert set(payload) == {"task_description", "scenario", "prompt_inputs", "solution_criteria", "extra_criteria",
                            "output"}
    assert payload["extra_criteria"] == ["stays under 20 words"]


def test_sync_run_function_runs_in_threads_up_to_the_concurrency(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", [f"score=8 #{i}" for i in range(8)])
    lock, state = threading.Lock(), {"now": 0, "max": 0}

    def blocking(inputs):
        with lock:
            state["now"] += 1
            state["max"] = max(state["max"], state["now"])
        time.sleep(0.1)
        with lock:
            state["now"] -= 1
        return inputs["text"]

    results = pe.PromptEvaluator(config(llm), concurrency=8).run_evaluation(blocking, dataset)
    assert state["max"] == 8 and results.summary.passed == 8


@pytest.mark.parametrize("score, violated, expected", [(9, ["x"], 3), (2, ["x"], 2), (9, [], 9), (3.5, ["x"], 3)])
def test_cap_score(score, violated, expected):
    assert pe.cap_score(score, violated) == expected


def test_judge_cap_rule_violation_scores_three(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", ["score=9 violate", "score=9", "score=2 violate"])
    results = pe.PromptEvaluator(config(llm)).run_evaluation(echo, dataset, extra_criteria=["never mention price"])
    capped, clean, low = results.results
    assert (capped.score, capped.judge_score, capped.passed, capped.capped) == (3, 9, False, True)
    assert capped.violated_extra_criteria == ["never mention price"]
    assert (clean.score, clean.passed, clean.capped) == (9, True, False)
    assert (low.score, low.capped) == (2, False)


@pytest.mark.parametrize("score, shown", [
    (8, 8), (8.5, 8.5), (0, 0), (10, 10),          # a number n is read as the reply "n": n / 10, shown x10
    ("8", 8), ("8/10", 8), ("8 out of 10", 8), ("Score: 8", 8), ("**Rating:** 7", 7),
    ("85/100", 8.5), ("4/5", 8), ("Score: 7.5/10", 7.5), ("On a scale of 1-10, a 9.", 9), ("70%", 7),
])
def test_judge_score_is_read_by_the_one_judge_score_rule(llm, tmp_path, score, shown):
    dataset = write_dataset(tmp_path / "d.json", ["x"])
    llm.default = ("json", {"score": score, "reasoning": "r"})
    (case,) = pe.PromptEvaluator(config(llm)).run_evaluation(echo, dataset).results
    assert case.score == shown and case.judge_score == shown and case.error is None
    assert llm.chat_calls == 1


def test_a_text_score_is_capped_like_a_number(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", ["x"])
    llm.default = ("json", {"score": "9 out of 10", "reasoning": "r", "violated_extra_criteria": ["be brief"]})
    (case,) = pe.PromptEvaluator(config(llm)).run_evaluation(echo, dataset, extra_criteria=["be brief"]).results
    assert (case.judge_score, case.score, case.capped, case.passed) == (9, 3, True, False)


@pytest.mark.parametrize("reply", [
    ("text", "A fine answer, 9/10."),
    ("json", {"score": 11, "reasoning": "r"}),
    ("json", {"score": "12/10", "reasoning": "r"}),
    ("json", {"score": "Score: 12", "reasoning": "r"}),
    ("json", {"score": "N/A", "reasoning": "r"}),
    ("json", {"score": -1, "reasoning": "r"}),
    ("json", {"score": True, "reasoning": "r"}),
    ("json", {"score": None, "reasoning": "r"}),
    ("json", {"score": 8}),  # no reasoning
])
def test_unusable_judge_reply_makes_an_errored_unscored_case(llm, tmp_path, reply):
    dataset = write_dataset(tmp_path / "d.json", ["score=8", "score=8 bad judge"])

    def model(body):
        payload = json.loads(body["messages"][1]["content"])
        return reply if "bad judge" in payload["output"] else FakeModel.judge(payload)
    llm.default = ("callable", model)
    results = pe.PromptEvaluator(config(llm, max_tries=2)).run_evaluation(echo, dataset)
    ok, bad = results.results
    assert ok.score == 8 and ok.passed is True
    assert bad.score is None and bad.passed is None and bad.output == "score=8 bad judge"
    assert bad.error.startswith("judge failed: unparseable reply") and "after 2 tries" in bad.error
    assert llm.chat_calls == 1 + 2
    s = results.summary
    assert (s.scored, s.errored, s.passed, s.average, s.pass_rate) == (1, 1, 1, 8, 0.5)  # errored is not a pass


@pytest.mark.parametrize("reply, problem", [
    ({"score": 8}, "field 'reasoning' missing (it has 'score')"),
    ({"verdict": 8, "reasoning": "r"}, "field 'score' missing (it has 'verdict', 'reasoning')"),
    ({"score": "N/A", "reasoning": "r"}, "field 'score': the judge's reply has no score: 'N/A'"),
])
def test_an_unusable_judge_reply_names_the_field(llm, tmp_path, reply, problem):
    dataset = write_dataset(tmp_path / "d.json", ["x"])
    llm.default = ("json", reply)
    (case,) = pe.PromptEvaluator(config(llm, max_tries=1)).run_evaluation(echo, dataset).results
    assert case.error.startswith(f"judge failed: unparseable reply: {problem}"), case.error


def test_fenced_judge_json_is_accepted(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", ["x"])
    llm.default = ("text", '```json\n{"score": 8.5, "reasoning": "fine", "strengths": ["a"]}\n```')
    (case,) = pe.PromptEvaluator(config(llm)).run_evaluation(echo, dataset, pass_threshold=8.5).results
    assert (case.score, case.passed, case.strengths, case.weaknesses) == (8.5, True, ["a"], [])
    assert llm.chat_calls == 1


def test_run_function_failures_are_errored_cases_and_never_judged(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", ["score=7", "boom", "number"])

    def flaky(inputs):
        if inputs["text"] == "boom":
            raise RuntimeError("model offline")
        return 42 if inputs["text"] == "number" else inputs["text"]
    results = pe.PromptEvaluator(config(llm)).run_evaluation(flaky, dataset)
    assert [r.error for r in results.results] == [
        None, "run function failed: RuntimeError: model offline", "run function returned int, expected a string"]
    assert [r.score for r in results.results] == [7, None, None]
    assert llm.chat_calls == 1  # only the case with an output was judged


def test_rerun_with_cache_asks_only_for_errored_cases(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", ["score=8 a", "score=8 b", "score=8 garbage"])
    db = tmp_path / "cache.duckdb"
    first = pe.PromptEvaluator(config(llm, max_tries=1), cache_db=db).run_evaluation(echo, dataset)
    assert first.summary.errored == 1 and llm.chat_calls == 3
    fixed = pe.PromptEvaluator(config(llm, max_tries=1), cache_db=db).run_evaluation(
        lambda i: i["text"].replace("garbage", "fixed"), dataset)
    assert fixed.summary.errored == 0 and llm.chat_calls == 4  # two answers came from the cache
    assert fixed.usage["judge"]["cache_hits"] == 2


def test_an_explicit_base_url_overrides_the_configs_own_for_model_and_judge(llm, tmp_path):
    elsewhere = LoopbackLLM()  # stands for the default endpoint the user's data must not reach
    try:
        dataset = write_dataset(tmp_path / "d.json", ["score=8"])
        evaluator = pe.PromptEvaluator(config(elsewhere), LLMConfig(model="judge", base_url=elsewhere.url),
                                       base_url=llm.url)
        assert evaluator.config.base_url == llm.url and evaluator.judge_config.base_url == llm.url
        (case,) = evaluator.run_evaluation(echo, dataset).results
        assert case.score == 8 and elsewhere.chat_calls == 0
        assert [r["body"]["model"] for r in llm.requests] == ["judge"]
        evaluator.generate_dataset("t", {"text": "what to echo"}, 1, tmp_path / "new.json")
        assert elsewhere.chat_calls == 0 and llm.chat_calls == 3
    finally:
        elsewhere.close()


def test_a_judge_named_by_model_uses_the_configs_endpoint_and_retries(llm):
    evaluator = pe.PromptEvaluator(config(llm, max_tries=2), "judge")
    assert evaluator.judge_config == LLMConfig(**{**vars(config(llm, max_tries=2)), "model": "judge"})
    assert pe.PromptEvaluator("m", "judge", base_url=llm.url).judge_config.base_url == llm.url


def test_bad_pass_threshold_is_refused(llm, tmp_path):
    dataset = write_dataset(tmp_path / "d.json", ["x"])
    with pytest.raises(pe.UsageError, match="pass_threshold"):
        pe.PromptEvaluator(config(llm)).run_evaluation(echo, dataset, pass_threshold=11)
    assert llm.chat_calls == 0


# ---------------------------------------------------------------- HTML report


@pytest.mark.parametrize("score, css", [(None, "score-none"), (9, "score-high"), (7, "score-high"),
                                        (6.9, "score-mid"), (3, "score-low"), (1, "score-low")])
def test_badge_class(score, css):
    assert badge_class(score, 7) == css


def test_html_report_escapes_everything_and_colours_badges(llm, tmp_path):
    xss = "<script>alert(1)</script>"
    dataset = write_dataset(tmp_path / "d.json", [f"score=9 {xss}", "score=5", "score=9 violate", "boom"],
                            criteria=[f"mentions {xss}"])

    def run(inputs):
        if inputs["text"] == "boom":
            raise ValueError(xss)
        return inputs["text"]
    results = pe.PromptEvaluator(config(llm)).run_evaluation(run, dataset, extra_criteria=[f"no {xss}"],
                                                            name=f"v1 {xss}")
    out = tmp_path / "r.html"
    write_prompt_html(results, out)
    html = out.read_text(encoding="utf-8")
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "src=" not in html and "<link" not in html  # self-contained
    cards = dict(re.findall(r'<span class="muted">([^<]+)</span><b>([^<]+)</b>', html))
    assert cards["total cases"] == "4" and cards["errored"] == "1"
    assert cards["average score"] == "5.67" and cards["pass rate (≥ 7)"] == "25%"  # (9 + 5 + 3) / 3; 1 of 4
    sections = re.findall(r'<section class="case[^"]*" id="case-(\d)">.*?<span class="badge ([\w-]+)">(.*?)</span>'
                          r'(.*?)</section>', html, re.S)
    assert [(i, css, label) for i, css, label, _ in sections] == [
        ("0", "score-high", "9 / 10"), ("1", "score-mid", "5 / 10"), ("2", "score-low", "3 / 10"),
        ("3", "score-none", "unscored")]
    assert "judge gave 9; capped at 3" in sections[2][3]
    assert "Errored (not scored): run function failed: ValueError: &lt;script&gt;" in sections[3][3]
    for part in ("judged &lt;score=9 &lt;script&gt;", "<li>clear</li>", "<li>short</li>", "Solution criteria"):
        assert part in sections[0][3]


# ---------------------------------------------------------------- store and comparison


def evaluate_version(llm, dataset, texts_by_case: dict[int, str], db, version: str, **kw):
    results = pe.PromptEvaluator(config(llm)).run_evaluation(
        lambda inputs: texts_by_case.get(int(inputs["text"]), "no marker: judged 5"), dataset, **kw)
    results.store_results(db, name="demo", prompt_version=version)
    return results


def index_dataset(tmp_path, n=3) -> Path:
    return write_dataset(tmp_path / "d.json", [str(i) for i in range(n)])


def test_store_and_matrix_compare_versions_on_the_same_dataset(llm, tmp_path):
    db, dataset = tmp_path / "s.duckdb", index_dataset(tmp_path)
    first = evaluate_version(llm, dataset, {0: "score=4", 1: "score=6", 2: "score=8"}, db, "v1")
    evaluate_version(llm, dataset, {0: "score=9", 1: "score=9", 2: "score=3"}, db, "v2")
    evaluate_version(llm, dataset, {0: "score=7", 1: "score=7", 2: "score=7"}, db, "v1")  # v1 again: newest wins
    other = write_dataset(tmp_path / "other.json", ["0"])
    evaluate_version(llm, other, {0: "score=1"}, db, "v3")
    assert len(list_prompt_evals(db)) == 4 and len(list_prompt_evals(db, first.dataset_hash)) == 3
    matrix = prompt_eval_matrix(db, first.dataset_hash)
    assert list(matrix.columns) == ["v2", "v1"]  # oldest surviving run first
    assert matrix["v1"].tolist() == [7, 7, 7] and matrix["v2"].tolist() == [9, 9, 3]
    versions = prompt_eval_versions(db, first.dataset_hash).set_index("version")
    assert versions.loc["v2", "average_score"] == 7 and versions.loc["v2", "stdev_score"] == pytest.approx(3.4641016)
    assert versions.loc["v2", "pass_rate"] == pytest.approx(2 / 3)
    cases = prompt_eval_results(db, first.eval_id)
    assert cases["score"].tolist() == [4, 6, 8] and json.loads(cases["strengths"][0]) == ["clear"]


def test_hostile_text_round_trips_through_the_store(tmp_path):
    db = tmp_path / "s.duckdb"
    evil = "x'); DROP TABLE prompt_eval_runs; --"
    save_prompt_eval(db, {"eval_id": "e1", "created_at": "2026-01-01T00:00:00Z", "dataset_hash": "h", "name": evil},
                     [{"eval_id": "e1", "case_index": 0, "scenario": evil, "score": 5.0}])
    assert list_prompt_evals(db)["name"].tolist() == [evil]
    assert prompt_eval_results(db, "e1")["scenario"].tolist() == [evil]
    with pytest.raises(ValueError, match="unknown columns"):
        save_prompt_eval(db, {"eval_id": "e2", "created_at": "t", "dataset_hash": "h", "bogus": 1}, [])


# ---------------------------------------------------------------- CLI


@pytest.fixture
def cli_env(tmp_path, monkeypatch):
    """A config whose retries do not sleep long; the working folder is tmp_path."""
    monkeypatch.chdir(tmp_path)
    cfg = tmp_path / "termgate.toml"
    cfg.write_text('dashboard_url = "http://dash:8501"\n[llm]\nbackoff = 0.001\nmax_tries = 2\n', encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(cfg))
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return tmp_path


def cli(*args):
    return CliRunner().invoke(prompt_eval_group, [str(a) for a in args])


def test_cli_generate_then_reuse(llm, cli_env):
    args = ["generate", "--task", "Answer emails", "--inputs", "email=the customer's email", "--inputs",
            "tone=the tone to use", "--cases", 2, "--out", "cases.json", "--model", "gen", "--base-url", llm.url,
            "--db", "s.duckdb"]
    first = cli(*args)
    assert first.exit_code == 0, first.output
    assert "wrote 2 cases to cases.json (3 calls, 0 from cache)" in first.output
    assert json.loads(Path("cases.json").read_text())["prompt_inputs_spec"] == {"email": "the customer's email",
                                                                                "tone": "the tone to use"}
    second = cli(*args)
    assert second.exit_code == 0 and "reused as it is (2 cases, no model calls)" in second.output
    assert llm.chat_calls == 3


def test_cli_max_tokens_reaches_every_call_and_the_prompt_version(llm, cli_env):
    generate = cli("generate", "--task", "t", "--inputs", "text=a text", "--cases", 2, "--out", "cases.json",
                   "--model", "gen", "--base-url", llm.url, "--no-store", "--max-tokens", 300)
    assert generate.exit_code == 0, generate.output
    assert [r["body"]["max_tokens"] for r in llm.requests] == [300, 300, 300]  # ideas: max(300, 100 + 60 × 2)
    Path("p.txt").write_text("score=8 {text}", encoding="utf-8")
    versions = []
    for flag in ([], ["--max-tokens", 200], ["--max-tokens", 200]):
        llm.requests.clear()
        run = cli("run", "--dataset", "cases.json", "--prompt", "p.txt", "--model", "m", "--base-url", llm.url,
                  "--no-store", "--json", "r.json", *flag)
        assert run.exit_code == 0, run.output
        assert {r["body"]["max_tokens"] for r in llm.requests} == {int(flag[1]) if flag else 512}  # model and judge
        versions.append(json.loads(Path("r.json").read_text())["prompt_version"])
    assert versions[0] != versions[1] == versions[2]  # max_tokens is part of the default prompt version


def test_cli_an_output_cut_off_at_max_tokens_is_an_errored_case(llm, cli_env):
    write_dataset(Path("cases.json"), ["a", "b"])
    Path("p.txt").write_text("{text}", encoding="utf-8")
    model = FakeModel()
    llm.default = ("callable", lambda body: ("text", "score=8 and then on and on\n", {"finish_reason": "length",
                                                                                     "completion_tokens": 50})
                   if body["messages"][0]["content"] == "b" else model(body))
    result = cli("run", "--dataset", "cases.json", "--prompt", "p.txt", "--model", "m", "--base-url", llm.url,
                 "--no-store", "--max-tokens", 50)
    assert result.exit_code == 5, result.output
    assert "cut off at 50 tokens" in result.stdout and "2 cases, 1 scored, 1 errored" in result.stdout
    assert sum(1 for r in llm.requests if r["body"]["messages"][0]["content"] == "b") == 1  # the same cut


def test_cli_says_the_endpoint_before_calling_it_with_credentials_redacted(llm, cli_env):
    keyed = llm.url + "?api-key=SECRET-KEY-123"
    generate = cli("generate", "--task", "t", "--inputs", "text=what to echo", "--cases", 1, "--out", "cases.json",
                   "--model", "gen", "--base-url", keyed, "--no-store")
    assert generate.exit_code == 0, generate.output
    assert generate.stderr.splitlines()[0] == f"endpoint: {llm.url}?api-key=*** (model gen)"
    assert "SECRET-KEY-123" not in generate.output + generate.stderr
    Path("p.txt").write_text("{text}", encoding="utf-8")
    Path("endpoint_prompt.py").write_text("def run(inputs):\n    return inputs['text']\n", encoding="utf-8")
    for args, line in [(["--prompt", "p.txt", "--model", "sut", "--judge-model", "judge"],
                        "(model sut, judge model judge)"),
                       (["--prompt", "p.txt", "--model", "same"], "(model same)"),
                       (["--callable", "endpoint_prompt:run", "--judge-model", "judge"], "(judge model judge)")]:
        run = cli("run", "--dataset", "cases.json", "--base-url", llm.url, "--no-store", *args)
        assert run.exit_code == 0, run.output
        assert run.stderr.splitlines()[0] == f"endpoint: {llm.url} {line}"


def test_endpoint_lines_name_each_endpoint_once():
    from termgate.cli.common import endpoint_lines
    a = LLMConfig(model="m", base_url="http://127.0.0.1:8000/v1")
    b = LLMConfig(model="j", base_url="https://u:pw@host/v1?pw=hunter22")
    assert endpoint_lines([("model", a), ("judge model", a)]) == ["endpoint: http://127.0.0.1:8000/v1 (model m)"]
    assert endpoint_lines([("model", a), ("judge model", b)]) == [
        "endpoint: http://127.0.0.1:8000/v1 (model m)", "endpoint: https://***@host/v1?pw=*** (judge model j)"]


@pytest.mark.parametrize("bad", ["no-equals", "1bad=name", "name="])
def test_cli_generate_rejects_bad_inputs(llm, cli_env, bad):
    result = cli("generate", "--task", "t", "--inputs", bad, "--out", "c.json", "--model", "m", "--base-url", llm.url)
    assert result.exit_code == 2 and "--inputs" in result.output and llm.chat_calls == 0


@pytest.mark.slow
def test_cli_run_prompt_store_report_and_compare(llm, cli_env):
    write_dataset(Path("cases.json"), ["score=9 one", "score=8 two", "score=4 three"])
    Path("v1.txt").write_text("Echo this: {text} {{literal}}", encoding="utf-8")
    run = cli("run", "--dataset", "cases.json", "--prompt", "v1.txt", "--model", "sut", "--judge-model", "judge",
              "--base-url", llm.url, "--db", "s.duckdb", "--html", "r.html", "--json", "r.json",
              "--extra-criteria", "be brief", "--prompt-version", "v1")
    assert run.exit_code == 0, run.output
    sut = [r["body"] for r in llm.requests if r["body"]["messages"][0]["role"] == "user"]
    assert sorted(b["messages"][0]["content"] for b in sut)[0] == "Echo this: score=4 three {literal}"
    assert {b["model"] for b in sut} == {"sut"} and len(judge_payloads(llm)) == 3
    assert "3 cases, 3 scored, 0 errored, average 7.00 (sd 2.65), pass rate 67% at >= 7" in run.output
    assert "http://dash:8501/prompts?dataset=" in run.output
    saved = json.loads(Path("r.json").read_text())
    assert saved["judge_model"] == "judge" and saved["model"] == "sut" and saved["extra_criteria"] == ["be brief"]
    assert "score-high" in Path("r.html").read_text()
    Path("v2.txt").write_text("score=2 then {text}", encoding="utf-8")  # the judge reads the first score=
    second = cli("run", "--dataset", "cases.json", "--prompt", "v2.txt", "--model", "sut", "--base-url", llm.url,
                 "--db", "s.duckdb", "--min-pass-rate", "0.5")
    assert second.exit_code == 1 and "pass rate 0% is below --min-pass-rate 50%" in second.stderr
    compare = cli("compare", "--dataset", "cases.json", "--db", "s.duckdb")
    assert compare.exit_code == 0, compare.output
    header = next(line for line in compare.output.splitlines() if line.startswith("case"))
    assert header.split()[2] == "v1" and header.split()[3].startswith("p-")  # default label: prompt+model hash
    assert re.search(r"^3\s+scenario 2\s+4\.0\s+2\.0$", compare.output, re.M)
    assert re.search(r"average\s+7\.00\s+2\.00", compare.output)
    assert re.search(r"std dev\s+2\.65\s+0\.00", compare.output)
    assert re.search(r"pass rate\s+67%\s+0%", compare.output)
    by_hash = cli("compare", "--dataset", saved["dataset_hash"][:8], "--db", "s.duckdb")
    assert by_hash.exit_code == 0 and by_hash.output == compare.output


def test_cli_run_with_a_python_callable_and_errored_case(llm, cli_env):
    write_dataset(Path("cases.json"), ["score=8", "boom"])
    Path("my_prompt.py").write_text(
        "async def run(inputs):\n"
        "    if inputs['text'] == 'boom':\n"
        "        raise RuntimeError('offline')\n"
        "    return inputs['text']\n", encoding="utf-8")
    result = cli("run", "--dataset", "cases.json", "--callable", "my_prompt:run", "--model", "judge",
                 "--base-url", llm.url, "--no-store", "--json", "r.json")
    assert result.exit_code == 5, result.output  # SPEC §3: incomplete, yet its outputs are written
    assert "1 errored" in result.output and "RuntimeError: offline" in result.output
    assert "incomplete: 1 of 2 cases errored and were not scored" in result.stderr
    saved = json.loads(Path("r.json").read_text())
    assert saved["prompt_version"] == "my_prompt:run" and saved["results"][1]["score"] is None
    assert not Path("s.duckdb").exists() and llm.chat_calls == 1


def test_cli_run_with_no_case_scored_exits_5_not_0(llm, cli_env):
    """Issue 35: 0 of 3 cases scored (the judge's replies lack `score`) exited 0."""
    write_dataset(Path("cases.json"), ["a", "b", "c"])
    Path("p.txt").write_text("{text}", encoding="utf-8")
    llm.default = ("callable", lambda body: ("text", "an answer") if body["messages"][0]["role"] == "user"
                   else ("json", {"verdict": 8, "reasoning": "fine"}))
    result = cli("run", "--dataset", "cases.json", "--prompt", "p.txt", "--model", "m", "--base-url", llm.url,
                 "--db", "s.duckdb")
    assert result.exit_code == 5, result.output
    assert "3 cases, 0 scored, 3 errored" in result.stdout and "field 'score' missing" in result.stdout
    assert "incomplete: 3 of 3 cases errored" in result.stderr
    assert "stored as pe-" in result.stdout  # recorded, as an incomplete harness run is


def test_cli_run_errored_comes_before_a_low_pass_rate(llm, cli_env):
    write_dataset(Path("cases.json"), ["score=2", "score=8 garbage"])
    result = cli("run", "--dataset", "cases.json", "--callable", "json:dumps", "--model", "judge",
                 "--base-url", llm.url, "--no-store", "--min-pass-rate", "0.9")
    assert result.exit_code == 5, result.output  # SPEC §3: 5 before 1, and both are said
    assert "pass rate 0% is below --min-pass-rate 90%" in result.stderr and "incomplete: 1 of 2" in result.stderr


def test_cli_generate_failing_after_its_retries_exits_5_and_writes_nothing(llm, cli_env):
    llm.actions = [("json", {"ideas": ["a", "b"]})]
    llm.default = ("json", {"scenario": "s", "prompt_inputs": {}, "solution_criteria": []})
    result = cli("generate", "--task", "t", "--inputs", "email=e", "--cases", 2, "--out", "d.json",
                 "--base-url", llm.url, "--model", "m", "--no-store")
    assert result.exit_code == 5, result.output
    assert "2 of 2 cases failed" in result.stderr and "incomplete: d.json was not written" in result.stderr
    assert not Path("d.json").exists()


@pytest.mark.parametrize("setup, args, message", [
    (lambda: Path("p.txt").write_text("line one\nhello {name}", encoding="utf-8"),
     ["--prompt", "p.txt"], "p.txt:2: prompt: placeholder {name} is not a dataset input (inputs: text"),
    (lambda: Path("cases.json").write_text('{"task_description": "t",\n "cases": [', encoding="utf-8"),
     ["--prompt", "p.txt"], "cases.json:2: json: malformed JSON"),
    (lambda: Path("cases.json").write_text(json.dumps({"task_description": "t", "prompt_inputs_spec": {"text": "x"},
                                                       "cases": [{"scenario": "s", "prompt_inputs": {"text": "x"}}]})),
     ["--prompt", "p.txt"], "cases.json:1: cases[0].solution_criteria: field required"),
    (lambda: None, [], "give exactly one of --prompt or --callable"),
    (lambda: None, ["--callable", "nowhere:fn"], "--callable 'nowhere:fn'"),
])
def test_cli_run_bad_input_exits_2_with_one_clear_line(llm, cli_env, setup, args, message):
    write_dataset(Path("cases.json"), ["x"])
    Path("p.txt").write_text("{text}", encoding="utf-8")
    setup()
    result = cli("run", "--dataset", "cases.json", "--model", "m", "--base-url", llm.url, "--no-store", *args)
    assert result.exit_code == 2 and message in result.output, result.output
    assert "Traceback" not in result.output and llm.chat_calls == 0


def test_cli_compare_unknown_dataset_exits_2(llm, cli_env, tmp_path):
    db, dataset = tmp_path / "s.duckdb", index_dataset(tmp_path)
    evaluate_version(llm, dataset, {0: "score=5"}, db, "v1")
    result = cli("compare", "--dataset", "abcdef00", "--db", db)
    assert result.exit_code == 2 and "no unique stored dataset hash starts with it" in result.output
    assert "d.json)" in result.output  # lists what is stored


@pytest.mark.parametrize("command", ["generate", "run", "compare"])
def test_every_command_has_help_with_an_example(command):
    result = CliRunner().invoke(prompt_eval_group, [command, "--help"])
    assert result.exit_code == 0 and "Example:" in result.output


# ---------------------------------------------------------------- dashboard page


def page(monkeypatch, db: Path, **params) -> AppTest:
    monkeypatch.setenv("TERMGATE_DB", str(db))
    at = AppTest.from_file(PAGE, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_dashboard_page_compares_versions(llm, tmp_path, monkeypatch):
    db, dataset = tmp_path / "s.duckdb", index_dataset(tmp_path)
    first = evaluate_version(llm, dataset, {0: "score=4", 1: "score=6", 2: "score=8"}, db, "v1")
    evaluate_version(llm, dataset, {0: "score=9", 1: "score=9"}, db, "v2")  # case 2 is judged 5
    at = page(monkeypatch, db)
    assert not at.exception, at.exception
    assert at.selectbox(key="prompts_dataset").value == first.dataset_hash
    versions = at.dataframe[0].value
    assert versions["version"].tolist() == ["v1", "v2"]
    assert versions["average"].tolist() == ["6.00 ± 2.00", "7.67 ± 2.31"]
    matrix = at.dataframe[1].value
    assert matrix["v1"].tolist() == [4, 6, 8] and matrix["v2"].tolist() == [9, 9, 5]
    assert len(at.get("plotly_chart")) == 2


def test_dashboard_page_deep_link_unknown_link_and_empty_store(llm, tmp_path, monkeypatch):
    db, dataset = tmp_path / "s.duckdb", index_dataset(tmp_path)
    older = evaluate_version(llm, dataset, {0: "score=4"}, db, "v1")
    evaluate_version(llm, write_dataset(tmp_path / "other.json", ["0"]), {0: "score=6"}, db, "v1")
    linked = page(monkeypatch, db, dataset=older.dataset_hash[:12])
    assert not linked.exception and not linked.warning
    assert linked.selectbox(key="prompts_dataset").value == older.dataset_hash  # not the newest dataset
    assert linked.dataframe[1].value["v1"].tolist() == [4, 5, 5]
    at = page(monkeypatch, db, dataset="feedface")
    assert not at.exception and "Unknown dataset" in at.warning[0].value and "feedface" in at.warning[0].value
    h = at.selectbox(key="prompts_dataset").value
    assert at.query_params["dataset"] in ([h[:12]], h[:12])  # the URL now names the dataset shown
    empty = page(monkeypatch, tmp_path / "none.duckdb")
    assert not empty.exception and "No prompt evaluations yet" in empty.info[0].value


def test_concurrency_defaults_to_the_endpoints(llm):
    assert pe.PromptEvaluator(config(llm)).concurrency == 8
    assert pe.PromptEvaluator(config(llm, concurrency=1)).concurrency == 1  # a server answering one at a time
    assert pe.PromptEvaluator(config(llm, concurrency=1), concurrency=3).concurrency == 3
