"""Drift judges: the real packaged embedding model, its cache, and the LLM judge over HTTP."""

from __future__ import annotations

import pytest

from termgate.config import Settings
from termgate.drift.judge import DriftCandidate, EmbeddingDriftJudge
from termgate.drift.resolve import resolve_judge
from termgate.drift.embeddings import CachedEmbedder, make_embedder, packaged_model_available
from termgate.llm.client import LLMConfig
from termgate.drift.llm_judge import LLMDriftJudge
from termgate.store import StoredVectors

from conftest import golden_row
from llm_server import LoopbackLLM

needs_model = pytest.mark.skipif(not packaged_model_available(), reason="embedding extra not installed")


def default_model():
    """The configured default embedder, uncached (the packaged MiniLM)."""
    return make_embedder({}, None).inner


class CountingEmbedder:
    """Wraps the real model and counts the texts it is asked to embed."""

    def __init__(self):
        self.inner = default_model()
        self.model_id = self.inner.model_id
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return self.inner.embed(texts)


def candidate(term, query="heart attack", domain="medical", expected=("myocardial infarction", "mi")):
    return DriftCandidate("q1", query, term, domain, None, tuple(expected))


@needs_model
def test_real_model_flags_banana_not_myocardial_infarction():
    judge = EmbeddingDriftJudge(CachedEmbedder(default_model(), None))
    banana, mi = judge.judge([candidate("banana", expected=("myocardial infarction", "acute coronary syndrome")),
                              candidate("heart infarction", expected=("myocardial infarction", "acute coronary syndrome"))])
    assert banana.drift is True and mi.drift is False
    assert banana.reason.startswith("drift 0.") and mi.reason.startswith("not drift 0.")


@needs_model
def test_explanation_is_in_words():
    judge = EmbeddingDriftJudge(CachedEmbedder(default_model(), None))
    (verdict,) = judge.judge([candidate("guitar", query="lawyer", domain="legal", expected=("attorney", "counsel"))])
    assert verdict.drift is True
    assert verdict.reason.startswith("drift 0.") and ": " in verdict.reason
    assert any(words in verdict.reason for words in ("WordNet", "far from", "outside the domain 'legal'"))


@needs_model
def test_vectors_are_cached_in_duckdb_across_runs(db):
    from termgate import store

    store.connect(db, write=True).__enter__()  # create the store file
    first = CountingEmbedder()
    EmbeddingDriftJudge(CachedEmbedder(first, StoredVectors(db))).judge([candidate("banana"), candidate("cardiac arrest")])
    assert len(first.texts) == len(set(first.texts)) > 0  # each text once
    second = CountingEmbedder()  # a new process would start like this: empty memory
    cached = CachedEmbedder(second, StoredVectors(db))
    EmbeddingDriftJudge(cached).judge([candidate("banana"), candidate("cardiac arrest")])
    assert second.texts == [] and cached.model_calls == 0
    EmbeddingDriftJudge(cached).judge([candidate("kumquat")])
    assert second.texts == ["kumquat"]  # only the new term


@needs_model
def test_evaluate_with_embedding_judge_records_reason(score):
    judge = resolve_judge("embedding", Settings(), None)
    run = score([golden_row("q1", "heart attack", ["myocardial infarction", "mi", "acute coronary syndrome",
                                                    "cardiac arrest"], domain="medical")],
                [{"query_id": "q1", "terms": ["mi", "myocardial infarction", "cardiac arrest", "banana",
                                              "coronary thrombosis"]}], judge=judge)
    s = run.scores[0]
    # 'coronary thrombosis' is related, but with these expected terms the combiner may flag it (docs/drift.md)
    assert "banana" in s.drift_terms and set(s.drift_terms) <= {"banana", "coronary thrombosis"}
    assert s.drift_reasons["banana"].startswith("drift 0.")
    assert run.judge.config()["model"] == "sentence-transformers/all-MiniLM-L6-v2"


# ---------------------------------------------------------------- LLM judge over real HTTP


@pytest.fixture
def llm():
    server = LoopbackLLM()
    yield server
    server.close()


def llm_judge(server, **config) -> LLMDriftJudge:
    params = dict(model="judge-model", base_url=server.url, timeout=2.0, max_tries=3, backoff=0.01)
    params.update(config)
    return LLMDriftJudge(LLMConfig(**params), concurrency=2)


CANDIDATES = [candidate("banana"), candidate("cardiac arrest")]
GOOD = {"verdicts": [{"term": "banana", "drift": True, "reason": "a fruit"},
                     {"term": "cardiac arrest", "drift": False, "reason": "related cardiac event"}]}


def test_llm_judge_good_answer(llm):
    llm.actions = [("json", GOOD)]
    judge = llm_judge(llm)
    banana, arrest = judge.judge(CANDIDATES)
    assert (banana.drift, arrest.drift) == (True, False)
    assert banana.reason == "llm: a fruit"
    assert llm.chat_calls == 1  # one call per query, judging all its false positives
    sent = llm.requests[0]["body"]
    assert sent["model"] == "judge-model" and "banana" in sent["messages"][1]["content"]
    assert judge.log[0]["verdicts"]["verdicts"][0]["term"] == "banana" and judge.log[0]["error"] is None


def test_llm_judge_garbage_is_retried_then_unjudged(llm):
    llm.default = ("text", "I think banana is fine?")
    judge = llm_judge(llm)
    verdicts = judge.judge(CANDIDATES)
    assert all(v.drift is None for v in verdicts)  # unjudged, never silently clean or drift
    assert "unparseable" in verdicts[0].reason
    assert llm.chat_calls == 2  # temperature 0: the request, then once with the repair hint (never the same twice)
    assert judge.log[0]["error"]


def test_llm_judge_429_then_success_honours_retry_after(llm):
    llm.actions = [("status", 429, {"Retry-After": "0.2"}), ("json", GOOD)]
    judge = llm_judge(llm)
    slept = []

    async def record(seconds):
        slept.append(seconds)

    judge.sleep = record
    banana, _ = judge.judge(CANDIDATES)
    assert banana.drift is True
    assert llm.chat_calls == 2 and slept == [0.2]


def test_llm_judge_timeout_marks_unjudged(llm):
    llm.default = ("sleep", 1.5)
    llm.actions = []
    judge = llm_judge(llm, timeout=0.3, max_tries=2)
    verdicts = judge.judge(CANDIDATES)
    assert all(v.drift is None for v in verdicts)
    assert "timed out" in verdicts[0].reason


def test_llm_judge_unjudged_terms_send_the_run_to_review(llm, score, db):
    llm.default = ("text", "not json")
    judge = llm_judge(llm, max_tries=1)
    rows = [golden_row("q1", "heart attack", ["mi", "myocardial infarction", "cardiac arrest", "chest pain",
                                              "acute coronary syndrome"])]
    run = score(rows, [{"query_id": "q1", "terms": ["mi", "myocardial infarction", "cardiac arrest",
                                                    "chest pain", "acute coronary syndrome", "angina"]}], judge=judge)
    assert run.scores[0].unjudged_terms == ["angina"]
    assert run.gate.decision == "review"
    assert any("could not be judged" in r for r in run.gate.reasons)
    from termgate import store
    store.save_run(db, run)  # prompt, raw reply and error are stored with the run
    log = store.judge_log(db, run.evaluation_id)
    assert list(log["query_id"]) == ["q1"] and "angina" in log["prompt"].iloc[0]
    assert log["reply"].iloc[0] == "not json" and "unparseable" in log["error"].iloc[0]
