"""Evaluators: the deterministic ones by hand, embeddings with a toy and the real model,
the LLM judge against a real OpenAI-compatible server on loopback (sync and async clients)."""

from __future__ import annotations

import asyncio
import re
import time

import numpy as np
import openai
import pydantic
import pytest

from termgate.drift.embeddings import NumpyEmbedder, packaged_model_available
from termgate.errors import TermgateError
from termgate.evaluators import (
    DEFAULT_JUDGE_TEMPLATE,
    EmbeddingDistanceEvaluator,
    EvalResult,
    EvaluatorError,
    EvaluatorParseError,
    ExactMatchEvaluator,
    JsonValidityEvaluator,
    LLMJudgeEvaluator,
    RegexMatchEvaluator,
    parse_judge_score,
)
from termgate.llm.client import LLMCallError

from llm_server import LoopbackLLM

needs_model = pytest.mark.skipif(not packaged_model_available(), reason="embedding extra not installed")


@pytest.fixture
def server():
    llm = LoopbackLLM()
    yield llm
    llm.close()


@pytest.fixture
def client(server):
    """A real sync OpenAI client pointed at the loopback server."""
    sync = openai.OpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=10)
    yield sync
    sync.close()


@pytest.fixture
def aclient(server):
    """A real AsyncOpenAI client; tests that await it close it with `run_and_close`."""
    return openai.AsyncOpenAI(base_url=server.url, api_key="x", max_retries=0, timeout=10)


def run_and_close(aclient: openai.AsyncOpenAI, coro):
    """asyncio.run(coro), closing the client's connections on the loop that opened them."""
    async def main():
        try:
            return await coro
        finally:
            await aclient.close()

    return asyncio.run(main())


def sent_prompt(request: dict) -> str:
    return request["body"]["messages"][0]["content"]


# -- EvalResult -------------------------------------------------------------------------------


def test_eval_result_is_frozen():
    result = EvalResult(score=1.0, passed=True)
    with pytest.raises(pydantic.ValidationError):
        result.score = 0.0
    assert result.reasoning is None


# -- exact match ------------------------------------------------------------------------------


@pytest.mark.parametrize("evaluator, prediction, reference, passed", [
    (ExactMatchEvaluator(), "Paris", "Paris", True),
    (ExactMatchEvaluator(), "paris", "Paris", False),          # case-sensitive by default
    (ExactMatchEvaluator(), "Paris ", "Paris", False),         # no trimming
    (ExactMatchEvaluator.case_insensitive(), "paris", "Paris", True),
    (ExactMatchEvaluator.case_insensitive(), "STRASSE", "Straße", True),  # case folding, not lower()
    (ExactMatchEvaluator.case_insensitive(), "Lyon", "Paris", False),
])
def test_exact_match_table(evaluator, prediction, reference, passed):
    result = evaluator.evaluate(prediction, reference)
    assert result.passed is passed
    assert result.score == (1.0 if passed else 0.0)


def test_exact_match_failure_shows_expected_and_got():
    result = ExactMatchEvaluator().evaluate("paris", "Paris")
    assert result.reasoning == "expected 'Paris', got 'paris'"
    assert ExactMatchEvaluator().evaluate("Paris", "Paris").reasoning is None


# -- JSON validity ----------------------------------------------------------------------------


@pytest.mark.parametrize("text", ['{"a": 1}', '[1, 2.5, null, true]', '"just a string"', "0", ' {"nested": {"b": []}} '])
def test_json_validity_accepts_strict_json(text):
    result = JsonValidityEvaluator().evaluate(text)
    assert (result.score, result.passed, result.reasoning) == (1.0, True, None)


@pytest.mark.parametrize("text, detail", [
    ('{"a": NaN}', "NaN"),
    ("Infinity", "Infinity"),
    ("[-Infinity]", "-Infinity"),
    ("{'a': 1}", "double quotes"),
    ("", "Expecting value"),
    ('{"a": 1} trailing', "Extra data"),
    ("[" * 100_000, ""),   # deep nesting: invalid, and no RecursionError escapes
])
def test_json_validity_rejects_with_reason(text, detail):
    result = JsonValidityEvaluator().evaluate(text)
    assert (result.score, result.passed) == (0.0, False)
    assert result.reasoning.startswith("Invalid JSON:")
    assert detail in result.reasoning


# -- regex ------------------------------------------------------------------------------------


def test_regex_matches_anywhere_not_only_at_start():
    evaluator = RegexMatchEvaluator(r"\d{4}-\d{2}-\d{2}")
    assert evaluator.evaluate("due on 2024-05-01, thanks").passed is True
    assert evaluator.evaluate("due on 2024-05-01, thanks").score == 1.0


def test_regex_failure_names_the_pattern():
    result = RegexMatchEvaluator(r"\d{4}-\d{2}-\d{2}").evaluate("due next week")
    assert (result.score, result.passed) == (0.0, False)
    assert result.reasoning == r"no match for pattern '\\d{4}-\\d{2}-\\d{2}'"


def test_regex_flags_apply():
    assert RegexMatchEvaluator("paris", flags=re.IGNORECASE).evaluate("PARIS").passed is True
    assert RegexMatchEvaluator("paris").evaluate("PARIS").passed is False


@pytest.mark.parametrize("pattern", ["(unclosed", "*bad", "[z-a]"])
def test_invalid_regex_raises_at_construction(pattern):
    with pytest.raises(EvaluatorError, match="invalid regular expression") as info:
        RegexMatchEvaluator(pattern)
    assert isinstance(info.value, ValueError) and isinstance(info.value, TermgateError)


# -- embedding distance -----------------------------------------------------------------------


class ToyEmbedder:
    """Fixed 2-d vectors, deliberately NOT unit length, so the evaluator must normalise."""

    VECTORS = {"a": [1.0, 0.0], "b": [3.0, 4.0], "c": [0.0, -2.0], "z": [0.0, 0.0], "a2": [5.0, 0.0]}
    model_id = "toy"

    def __init__(self):
        self.calls: list[list[str]] = []

    def embed(self, texts):
        self.calls.append(list(texts))
        return np.array([self.VECTORS[t] for t in texts])


@pytest.mark.parametrize("prediction, reference, similarity", [
    ("a", "b", 0.6),    # [1,0]·[3,4]/5 = 0.6: exactly at the threshold passes
    ("a", "a2", 1.0),   # same direction, different length
    ("a", "c", 0.0),    # orthogonal
    ("b", "c", -0.8),   # [3,4]·[0,-2] / (5·2) = -0.8
    ("a", "z", 0.0),    # a zero vector is similar to nothing
])
def test_embedding_distance_exact_numbers(prediction, reference, similarity):
    result = EmbeddingDistanceEvaluator(ToyEmbedder(), threshold=0.6).evaluate(prediction, reference)
    assert result.score == pytest.approx(similarity, abs=1e-12)
    assert result.passed is (similarity >= 0.6)
    assert result.reasoning == f"Cosine similarity: {similarity:.4f}, threshold: 0.6000"


def test_embedding_reason_format():
    result = EmbeddingDistanceEvaluator(lambda texts: [[1.0, 0.0], [0.9234, 0.3839]], threshold=0.8).evaluate("x", "y")
    # cos = 0.9234 / |(0.9234, 0.3839)| = 0.9234 / 1.00002... -> 0.9234 at four places
    assert result.reasoning == "Cosine similarity: 0.9234, threshold: 0.8000"
    assert result.passed is True


def test_embedding_accepts_a_plain_callable():
    seen = []

    def embed(texts):
        seen.append(texts)
        return [ToyEmbedder.VECTORS[t] for t in texts]   # a list of lists, not an array

    result = EmbeddingDistanceEvaluator(embed, threshold=0.5).evaluate("a", "b")
    assert result.score == pytest.approx(0.6)
    assert seen == [["a", "b"]]


def test_embedding_rejects_a_bad_embedder_output_and_bad_settings():
    with pytest.raises(EvaluatorError, match=r"shape \(3,\) for 2 texts"):
        EmbeddingDistanceEvaluator(lambda texts: [1.0, 2.0, 3.0], threshold=0.5).evaluate("a", "b")
    with pytest.raises(EvaluatorError, match="threshold"):
        EmbeddingDistanceEvaluator(ToyEmbedder(), threshold=1.5)
    with pytest.raises(EvaluatorError, match="embedder"):
        EmbeddingDistanceEvaluator(object(), threshold=0.5)


def test_embedding_dataset_embeds_once_and_keeps_order():
    embedder = ToyEmbedder()
    rows = [("a", "b"), {"prediction": "b", "reference": "c"}, ("a", "a2"), ("a", "b")]
    results = EmbeddingDistanceEvaluator(embedder, threshold=0.5).evaluate_dataset(rows)
    assert [round(r.score, 6) for r in results] == [0.6, -0.8, 1.0, 0.6]
    assert len(embedder.calls) == 1 and sorted(embedder.calls[0]) == ["a", "a2", "b", "c"]  # each text once


def test_embedding_async_twins():
    evaluator = EmbeddingDistanceEvaluator(ToyEmbedder(), threshold=0.5)
    assert asyncio.run(evaluator.aevaluate("a", "b")).score == pytest.approx(0.6)
    results = asyncio.run(evaluator.aevaluate_dataset([("b", "c"), ("a", "a2")]))
    assert [round(r.score, 6) for r in results] == [-0.8, 1.0]


@needs_model
def test_real_model_ranks_synonym_above_unrelated_word():
    evaluator = EmbeddingDistanceEvaluator(NumpyEmbedder(), threshold=0.5)
    synonym = evaluator.evaluate("heart attack", "myocardial infarction")
    unrelated = evaluator.evaluate("heart attack", "banana")
    assert synonym.score > unrelated.score + 0.2
    assert synonym.passed is True and unrelated.passed is False
    assert re.fullmatch(r"Cosine similarity: 0\.\d{4}, threshold: 0\.5000", synonym.reasoning)
    batch = evaluator.evaluate_dataset([("heart attack", "myocardial infarction"), ("heart attack", "banana")])
    assert [r.score for r in batch] == pytest.approx([synonym.score, unrelated.score], abs=1e-5)


# -- LLM judge: parsing -----------------------------------------------------------------------


# Realistic judge replies and what a person reads in them (SPEC §6, in rule order).
@pytest.mark.parametrize("reply, score", [
    # 1. the last fraction N/M or N out of M (M > 0)
    ("8/10", 0.8),
    ("8 out of 10", 0.8),
    ("Rating: 85/100", 0.85),
    ("Score: 7.5/10", 0.75),
    ("Score: 4 / 5 stars", 0.8),
    ("I'd rate it 7 out of 10. The answer misses 2 points.", 0.7),  # the fraction beats the later 2
    ("First impression 6/10, but on reflection 8/10.", 0.8),          # the last fraction
    ("99 out of 100", 0.99),
    ("Score: 10/10 - flawless", 1.0),
    ("0/0 tests were run; overall 7", 0.7),                            # M = 0 is no fraction
    # 2. the last score / rating / grade followed by N, / 10
    ("There are 2 minor issues.\nScore: 9", 0.9),
    ("**Score:** 8", 0.8),
    ("The answer covers 3 of the 4 points. Rating of 6", 0.6),
    ("Grade - 9", 0.9),
    ("The score is 7.", 0.7),
    ("SCORE = 5", 0.5),
    ("Score (1-10): 8\nIt cites 2 sources.", 0.8),
    ("Score: 0", 0.0),
    ("Score: 8. Confidence: 90%", 0.8),                                # the score line beats a later %
    ("Reviewed on 2024-05-01 by GPT-4. Score: 6", 0.6),                 # neither the date nor GPT-4
    # 3. a reply that is only a number
    ("7", 0.7),
    ("  8.5\n", 0.85),
    ("10", 1.0),
    # 4. the last number not part of a stated scale, / 10
    ("On a scale of 1-10, I'd give this a 9.", 0.9),
    ("On a scale from 0 to 10 I would say 6, since 2 facts are wrong.", 0.2),  # the last number wins
    ("(1–10) 4: mostly wrong", 0.4),
    ("I give it 8, out of 10", 0.8),
    ("8 on a 10-point scale", 0.8),
    ("gpt4 and v1.2 agree: 9", 0.9),                                    # glued digits are not scores
    ("评分：7分", 0.7),
    ("7.5 - mostly right", 0.75),
    # N% is hundredths wherever rules 2-4 find it
    ("85%", 0.85),
    ("Score: 70%", 0.7),
])
def test_parse_judge_score_table(reply, score):
    assert parse_judge_score(reply) == pytest.approx(score)


@pytest.mark.parametrize("reply, why", [
    ("", "no score"),
    ("N/A", "no score"),
    ("excellent answer, no number needed", "no score"),
    ("0/0", "no score"),                # M > 0 required, and its numbers are no score either
    ("2024-05-01", "no score"),          # a date
    ("7-8", "no score"),                 # a range is not one score
    ("Score by GPT-4", "no score"),
    ("Score: 12", "outside"),
    ("12/10", "outside"),
    ("-2", "outside"),                   # negative numbers are read, then refused
    ("Score: -3", "outside"),
    ("10.5", "outside"),
    ("150%", "outside"),
])
def test_parse_judge_score_raises_on_a_reply_with_no_usable_score(reply, why):
    with pytest.raises(EvaluatorParseError, match=why) as info:
        parse_judge_score(reply)
    assert isinstance(info.value, TermgateError) and isinstance(info.value, ValueError)
    assert repr(reply) in str(info.value)
    assert info.value.reply == reply


def test_parse_error_truncates_a_long_reply():
    reply = "no score here. " * 100
    with pytest.raises(EvaluatorParseError) as info:
        parse_judge_score(reply)
    assert "no score here." in str(info.value) and "…" in str(info.value)
    assert len(str(info.value)) < 400 < len(reply)
    assert info.value.reply == reply


# -- LLM judge: templates ---------------------------------------------------------------------


@pytest.mark.parametrize("template, named", [
    ("Rate {prediction} for {input}", "{reference}"),
    ("Rate {prediction} against {reference}", "{input}"),
    ("{input} {reference}", "{prediction}"),
    ("{input} {prediction} {reference} {extra}", "{extra}"),   # would fail at the first row
    ("{input} {prediction} {reference} {", "format string"),
])
def test_bad_custom_template_raises_at_construction(server, client, template, named):
    with pytest.raises(EvaluatorError) as info:
        LLMJudgeEvaluator(client, "judge-model", template=template)
    assert isinstance(info.value, ValueError)
    assert named in str(info.value)
    assert server.chat_calls == 0


def test_custom_template_placeholders_are_filled_in_the_request(server, client):
    server.actions = [("text", "9")]
    template = "Q={input} | A={prediction} | R={reference} | reply {{score}} first"
    judge = LLMJudgeEvaluator(client, "judge-model", template=template)
    judge.evaluate("Paris", reference="Paris, France", input="Capital of France?")
    (request,) = server.requests
    assert request["path"].endswith("/chat/completions")
    assert request["body"]["model"] == "judge-model"
    assert request["body"]["temperature"] == 0
    assert sent_prompt(request) == "Q=Capital of France? | A=Paris | R=Paris, France | reply {score} first"


def test_the_judge_sends_max_tokens_and_refuses_a_cut_off_reply(server, client):
    """Issue 35 item 3: a local server runs to its context's end without max_tokens; a reply
    cut off there may hold a number in its reasoning, which is no score."""
    server.actions = [("text", "Step 1 of 3 is right, the rest", {"finish_reason": "length"})]
    server.default = ("text", "Score: 8")
    judge = LLMJudgeEvaluator(client, "m", max_tokens=40)
    with pytest.raises(EvaluatorParseError, match=r"cut off at max_tokens \(40\)") as info:
        judge.evaluate("x", "y")
    assert info.value.reply == "Step 1 of 3 is right, the rest"
    assert judge.evaluate("x", "y").score == 0.8
    assert [r["body"]["max_tokens"] for r in server.requests] == [40, 40]
    LLMJudgeEvaluator(client, "m").evaluate("x", "y")
    LLMJudgeEvaluator(client, "m", max_tokens=None).evaluate("x", "y")
    assert server.requests[2]["body"]["max_tokens"] == 512 and "max_tokens" not in server.requests[3]["body"]


def test_default_template_carries_all_three_texts(server, client):
    server.actions = [("text", "5")]
    LLMJudgeEvaluator(client, "m").evaluate("PRED-TEXT", reference="REF-TEXT", input="INPUT-TEXT")
    prompt = sent_prompt(server.requests[0])
    assert prompt == DEFAULT_JUDGE_TEMPLATE.format(input="INPUT-TEXT", prediction="PRED-TEXT", reference="REF-TEXT")
    assert "from 0" in prompt and "to 10" in prompt and 'end your reply with one line "Score: N/10"' in prompt


def test_braces_in_row_texts_are_sent_literally(server, client):
    server.actions = [("text", "5")]
    template = "{input}|{prediction}|{reference}"
    LLMJudgeEvaluator(client, "m", template=template).evaluate('{"a": 1}', "{reference}", "{0}")
    assert sent_prompt(server.requests[0]) == '{0}|{"a": 1}|{reference}'


# -- LLM judge: scoring over HTTP -------------------------------------------------------------


@pytest.mark.parametrize("reply, score, passed", [
    ("7", 0.7, True),
    ("Score: 3/10", 0.3, False),
    ("On a scale of 1-10, I'd give this a 9.", 0.9, True),
    ("There are 2 minor issues.\nScore: 9", 0.9, True),
    ("Rating: 85/100", 0.85, True),
    ("The answer misses 3 facts.\n\n**Score:** 4", 0.4, False),
    ("5", 0.5, True),            # exactly at the threshold passes
])
def test_judge_scores_over_http(server, client, reply, score, passed):
    server.actions = [("text", reply)]
    result = LLMJudgeEvaluator(client, "m", threshold=0.5).evaluate("Paris", "Paris", "Capital?")
    assert result.score == pytest.approx(score)
    assert result.passed is passed
    assert result.reasoning == reply


@pytest.mark.parametrize("reply", ["I refuse to grade this.", "Score: 12 - better than perfect"])
def test_judge_unusable_reply_raises_parse_error_naming_it(server, client, reply):
    server.actions = [("text", reply)]
    judge = LLMJudgeEvaluator(client, "m")
    with pytest.raises(EvaluatorParseError, match=re.escape(repr(reply))) as info:
        judge.evaluate("x", "y")
    assert isinstance(info.value, ValueError) and isinstance(info.value, TermgateError)


@pytest.mark.parametrize("threshold", [7, -0.1, float("nan")])
def test_judge_threshold_is_validated(client, threshold):
    with pytest.raises(EvaluatorError, match="threshold"):
        LLMJudgeEvaluator(client, "m", threshold=threshold)


def test_judge_http_error_becomes_llm_call_error(server, client):
    server.actions = [("status", 400, {})]
    with pytest.raises(LLMCallError, match="'m'"):
        LLMJudgeEvaluator(client, "m").evaluate("x", "y")


def test_async_judge_with_async_client(server, aclient):
    server.actions = [("text", "8 - good answer")]
    judge = LLMJudgeEvaluator(aclient, "m", threshold=0.9)
    result = run_and_close(aclient, judge.aevaluate("Paris", "Paris", "Capital?"))
    assert (result.score, result.passed, result.reasoning) == (pytest.approx(0.8), False, "8 - good answer")
    assert "Capital?" in sent_prompt(server.requests[0])


def test_async_judge_with_sync_client(server, client):
    server.actions = [("text", "6")]
    result = asyncio.run(LLMJudgeEvaluator(client, "m").aevaluate("x", "y"))
    assert result.score == pytest.approx(0.6) and server.chat_calls == 1


def test_sync_judge_with_async_client_works_repeatedly(server, aclient):
    # An AsyncOpenAI client's connections belong to the loop that opened them; calling it from
    # several fresh loops fails with "Event loop is closed" unless the evaluator isolates them.
    server.default = ("text", "9")
    judge = LLMJudgeEvaluator(aclient, "m")
    results = [judge.evaluate("x", "y") for _ in range(3)]
    assert [r.score for r in results] == [pytest.approx(0.9)] * 3
    assert server.chat_calls == 3


def test_sync_judge_with_async_client_inside_a_running_loop(server, aclient):
    server.actions = [("text", "4")]
    judge = LLMJudgeEvaluator(aclient, "m")

    async def caller():
        return judge.evaluate("x", "y")   # sync call from async code: must not hit "loop already running"

    assert asyncio.run(caller()).score == pytest.approx(0.4)


def test_async_judge_parse_error_is_raised_as_itself(server, aclient):
    server.actions = [("text", "no idea")]
    with pytest.raises(EvaluatorParseError, match="no idea"):
        run_and_close(aclient, LLMJudgeEvaluator(aclient, "m").aevaluate("x", "y"))


# -- datasets ---------------------------------------------------------------------------------


def score_from_prompt(body: dict) -> tuple:
    """Replies with the digit in the prediction, later rows faster, so completion order differs."""
    digit = int(re.search(r"ANSWER-(\d)", body["messages"][0]["content"]).group(1))
    time.sleep((10 - digit) * 0.02)
    return ("text", f"{digit}/10")


DIGITS = [3, 9, 1, 7, 5, 0]
JUDGE_ROWS = [{"prediction": f"ANSWER-{d}", "reference": "r", "input": "q", "id": n} for n, d in enumerate(DIGITS)]


def test_judge_dataset_keeps_input_order_sync_client(server, client):
    server.default = ("callable", score_from_prompt)
    results = LLMJudgeEvaluator(client, "m").evaluate_dataset(JUDGE_ROWS, concurrency=4)
    assert [r.score for r in results] == pytest.approx([d / 10 for d in DIGITS])
    assert [r.passed for r in results] == [d >= 5 for d in DIGITS]
    assert server.chat_calls == len(DIGITS)


def test_judge_dataset_keeps_input_order_async_client(server, aclient):
    server.default = ("callable", score_from_prompt)
    judge = LLMJudgeEvaluator(aclient, "m")
    sync_results = judge.evaluate_dataset(JUDGE_ROWS, concurrency=3)   # async client, sync batch
    assert [r.score for r in sync_results] == pytest.approx([d / 10 for d in DIGITS])
    async_results = run_and_close(aclient, judge.aevaluate_dataset(JUDGE_ROWS, concurrency=4))
    assert async_results == sync_results
    assert server.chat_calls == 2 * len(DIGITS)


def test_async_dataset_runs_rows_concurrently(server, aclient):
    server.default = ("callable", lambda body: (time.sleep(0.3), ("text", "5"))[1])
    judge = LLMJudgeEvaluator(aclient, "m")
    results = run_and_close(aclient, judge.aevaluate_dataset([("x",)] * 4, concurrency=4))
    assert [r.score for r in results] == [0.5] * 4
    # the server saw all four requests in flight at once (one after another it would see one)
    assert server.max_in_flight == 4


def test_dataset_parse_error_is_raised_as_itself(server, aclient):
    server.actions = [("text", "7"), ("text", "cannot say"), ("text", "7")]
    judge = LLMJudgeEvaluator(aclient, "m")
    with pytest.raises(EvaluatorParseError, match="cannot say"):   # not an ExceptionGroup
        run_and_close(aclient, judge.aevaluate_dataset([("a",), ("b",), ("c",)], concurrency=1))


def test_dataset_rows_as_dicts_tuples_and_lists_keep_order():
    rows = [("Paris", "Paris"), {"prediction": "Lyon", "reference": "Paris"}, ["x"], {"prediction": "", "reference": None}]
    results = ExactMatchEvaluator().evaluate_dataset(rows, concurrency=3)
    assert [r.passed for r in results] == [True, False, False, True]   # ["x"] vs "" fails; "" vs None ("") passes
    assert results[1].reasoning == "expected 'Paris', got 'Lyon'"


def test_dataset_generator_and_async_twin():
    rows = ((f"{n}", "3") for n in range(6))
    results = asyncio.run(ExactMatchEvaluator().aevaluate_dataset(rows, concurrency=2))
    assert [r.passed for r in results] == [False, False, False, True, False, False]


@pytest.mark.parametrize("rows, message", [
    ([{"reference": "x"}], "row 0: missing 'prediction'"),
    ([("ok",), (None, "x")], "row 1: prediction must be a string"),
    ([("a", "b", "c", "d")], "row 0: expected a dict"),
    (["just a string"], "row 0: expected a dict"),
    ([("a", 3)], "row 0: reference must be a string"),
])
def test_dataset_bad_rows_raise_before_scoring(server, client, rows, message):
    server.default = ("text", "5")
    with pytest.raises(EvaluatorError, match=re.escape(message)):
        LLMJudgeEvaluator(client, "m").evaluate_dataset(rows)
    assert server.chat_calls == 0


@pytest.mark.parametrize("concurrency", [0, -1, 1.5, True])
def test_dataset_concurrency_is_validated(concurrency):
    with pytest.raises(EvaluatorError, match="concurrency"):
        ExactMatchEvaluator().evaluate_dataset([("a", "a")], concurrency=concurrency)


@pytest.mark.parametrize("evaluator, args", [
    (ExactMatchEvaluator(), ("paris", "Paris")),
    (ExactMatchEvaluator.case_insensitive(), ("paris", "Paris")),
    (JsonValidityEvaluator(), ('{"a": NaN}',)),
    (JsonValidityEvaluator(), ("[1]",)),
    (RegexMatchEvaluator(r"\d+"), ("abc",)),
    (RegexMatchEvaluator(r"\d+"), ("a1c",)),
])
def test_async_twin_matches_sync(evaluator, args):
    assert asyncio.run(evaluator.aevaluate(*args)) == evaluator.evaluate(*args)


@pytest.mark.parametrize("reply, expected", [
    ('{"score": 8, "confidence": 0.9}', 0.8),  # a JSON answer's score key is a keyed score
    ('{"score": 8, "max_score": 10}', 0.8),
    ("The answer deserves a 3 (out of 5)", 0.6),
    ("Rating: 3 stars out of 5", 0.6),
    ("<think>Maybe 5/10? No, better than that.</think>\nScore: 9", 0.9),  # drafts in reasoning are not the score
])
def test_judge_scores_a_reviewer_found(reply, expected):
    from termgate.evaluators.judge import parse_judge_score

    assert parse_judge_score(reply) == pytest.approx(expected)


def test_a_long_run_of_digits_is_out_of_range_not_a_hang():
    from termgate.evaluators import EvaluatorParseError
    from termgate.evaluators.judge import parse_judge_score

    with pytest.raises(EvaluatorParseError, match="outside the scale"):
        parse_judge_score("7" * 20000)
