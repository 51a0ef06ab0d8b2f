"""The hybrid judge and `termgate drift calibrate` (issue 18 items 3 and 4): the LLM sees only
the combiner's uncertain band; calibrate measures, refits into --out and never overwrites."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.config import Settings
from termgate.drift.judge import (JUDGE_NAMES, DriftCandidate, DriftVerdict, EmbeddingDriftJudge, HybridDriftJudge,
                                 NoDriftJudge)
from termgate.drift.model import SHIPPED_MODEL
from termgate.drift.embeddings import packaged_model_available
from termgate.drift.resolve import resolve_judge
from termgate.llm.client import LLMConfig
from termgate.drift.llm_judge import LLMDriftJudge

from drift_fakes import FakeEmbedder, hand_lexicon, hand_model, unit
from llm_server import LoopbackLLM


def leading_json(text: str):
    """The JSON a judge's user message opens with (a repaired retry adds its hint after it)."""
    return json.JSONDecoder().raw_decode(text)[0]


def with_hint(messages: list[dict], hint: str) -> list[dict]:
    """The request a repaired retry sends: the hint after the last user message's text (a blank line between)."""
    return [*messages[:-1], {**messages[-1], "content": messages[-1]["content"].rstrip() + "\n\n" + hint}]


needs_model = pytest.mark.skipif(not packaged_model_available(), reason="embedding extra not installed")


@pytest.fixture
def llm():
    server = LoopbackLLM()
    yield server
    server.close()


def answer_every_candidate(body):
    """The test server's reply: each candidate it was sent, drift when it names a fruit."""
    sent = leading_json(body["messages"][1]["content"])
    return ("json", {"verdicts": [{"term": t, "drift": t in ("banana", "kumquat"), "reason": "asked"}
                                  for t in sent["candidates"]]})


def hybrid(server) -> HybridDriftJudge:
    # p = sigmoid(5 − 10·sim_query): 'kumquat' (sim 0.5) lands in the band 0.4-0.6
    model = hand_model({"sim_query": -10.0}, intercept=5.0, band=(0.4, 0.6))
    vectors = {"fruit salad": unit((0, 1)), "kumquat": unit((0, 0.5), (1, 0.8660254)),
               "fruit cocktail": unit((0, 1)), "tax return": unit((2, 1))}
    combiner = EmbeddingDriftJudge(FakeEmbedder(vectors), model, hand_lexicon())
    return HybridDriftJudge(combiner, LLMDriftJudge(LLMConfig(model="judge", base_url=server.url, max_tries=1)))


def test_hybrid_sends_only_band_terms_to_the_llm(llm):
    llm.default = ("callable", answer_every_candidate)
    judge = hybrid(llm)
    candidates = [DriftCandidate("q1", "fruit salad", t, None, None, ()) for t in ("kumquat", "fruit cocktail", "tax return")]
    kumquat, cocktail, tax = judge.judge(candidates)
    assert llm.chat_calls == 1
    assert leading_json(llm.requests[0]["body"]["messages"][1]["content"])["candidates"] == ["kumquat"]
    assert kumquat.drift is True and kumquat.reason.startswith("llm: asked (combiner: unjudged 0.50")
    assert cocktail.drift is False and tax.drift is True  # the combiner's own verdicts
    assert judge.log and judge.log[0]["query_id"] == "q1"  # stored with the run like the LLM judge's


def test_hybrid_makes_no_call_without_band_terms(llm):
    judge = hybrid(llm)
    verdicts = judge.judge([DriftCandidate("q1", "fruit salad", "tax return", None, None, ())])
    assert verdicts[0].drift is True and llm.chat_calls == 0


def test_hybrid_llm_failure_leaves_band_terms_unjudged(llm):
    llm.default = ("text", "not json")
    (kumquat,) = hybrid(llm).judge([DriftCandidate("q1", "fruit salad", "kumquat", None, None, ())])
    assert kumquat.drift is None and "combiner" in kumquat.reason


def test_hybrid_by_name_and_its_config(llm):
    assert "hybrid" in JUDGE_NAMES
    settings = Settings(llm={"base_url": llm.url, "model": "judge-model"})
    judge = resolve_judge("hybrid", settings)
    assert judge.name == "hybrid"
    config = judge.config()
    assert config["combiner"]["judge"] == "embedding" and config["llm"]["model"] == "judge-model"
    assert config["combiner"]["band"][0] <= config["combiner"]["cutoff"] <= config["combiner"]["band"][1]


ROWS = [  # (group, query, expected, term, label, kind)
    ("g1", "heart attack", ["myocardial infarction"], "banana", "drift", "unrelated"),
    ("g1", "heart attack", ["myocardial infarction"], "cardiac arrest", "not_drift", "related"),
    ("g2", "lawyer", ["attorney"], "guitar", "drift", "unrelated"),
    ("g2", "lawyer", ["attorney"], "counsel", "not_drift", "synonym"),
    ("g3", "tort", ["civil wrong"], "torte", "drift", "lookalike"),
    ("g3", "tort", ["civil wrong"], "negligence", "not_drift", "related"),
]


def write_rows(path, rows, domain="medical"):
    path.write_text("".join(json.dumps({"id": f"r{i}", "group": g, "domain": domain, "query": q, "expected_terms": e,
                                        "term": t, "label": label, "kind": kind, "source": "hand"}) + "\n"
                            for i, (g, q, e, t, label, kind) in enumerate(rows)), encoding="utf-8")
    return path


def test_calibrate_llm_measures_the_configured_endpoint(tmp_path, monkeypatch, llm):
    llm.default = ("callable", lambda body: ("json", {"verdicts": [
        {"term": t, "drift": t in ("banana", "guitar"), "reason": "x"}
        for t in leading_json(body["messages"][1]["content"])["candidates"]]}))
    config = tmp_path / "termgate.toml"
    config.write_text(f'[llm]\nbase_url = "{llm.url}"\nmodel = "judge-model"\nmax_tries = 1\n', encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    data = write_rows(tmp_path / "train.jsonl", ROWS)
    held = write_rows(tmp_path / "held.jsonl", ROWS[:2])
    other = write_rows(tmp_path / "other.jsonl", ROWS[4:])  # --heldout given twice: two evaluation sets
    result = CliRunner().invoke(main, ["drift", "calibrate", "--judge", "llm", "--data", str(data),
                                       "--heldout", str(held), "--heldout", str(other), "--db", str(tmp_path / "s.duckdb")])
    assert result.exit_code == 0, result.output
    assert llm.chat_calls == 3 + 1 + 1  # one call per query group: three in train, one in each evaluation set
    lines = [line.split() for line in result.output.splitlines()]
    train, held = (next(w for w in lines if w[:3] == [name, "llm", "judge-model"]) for name in ("train.jsonl", "held.jsonl"))
    assert train[3:6] == ["6", "1.000", "0.667"]  # rows, precision, recall (torte missed)
    assert held[3:6] == ["2", "1.000", "1.000"] and held[-1] == "-"  # no probabilities: goals not judged
    assert next(w for w in lines if w[:3] == ["other.jsonl", "llm", "judge-model"])[3:6] == ["2", "0.000", "0.000"]


def test_calibrate_refuses_the_shipped_file_and_existing_files(tmp_path):
    data = write_rows(tmp_path / "train.jsonl", ROWS)
    existing = tmp_path / "mine.json"
    existing.write_text("keep", encoding="utf-8")
    for out in (SHIPPED_MODEL, existing):
        result = CliRunner().invoke(main, ["drift", "calibrate", "--data", str(data), "--out", str(out)])
        assert result.exit_code == 2 and "never overwrites" in result.output
    assert existing.read_text(encoding="utf-8") == "keep"


def test_calibrate_needs_both_labels(tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    one_label = write_rows(tmp_path / "drift_only.jsonl", [r for r in ROWS if r[4] == "drift"])
    for data, what in ((empty, "no rows"), (one_label, "only drift rows")):
        result = CliRunner().invoke(main, ["drift", "calibrate", "--data", str(data), "--out", str(tmp_path / "m.json")])
        assert result.exit_code == 2 and result.output.strip() == (
            f"{data}:1: label: calibration needs drift and not-drift rows; the file has {what}")
    assert not (tmp_path / "m.json").exists()


def test_calibrate_refuses_an_out_path_in_no_folder_before_any_work(tmp_path):
    (tmp_path / "afile").write_text("keep", encoding="utf-8")
    out = tmp_path / "afile" / "m.json"
    result = CliRunner().invoke(main, ["drift", "calibrate", "--out", str(out)])
    assert result.exit_code == 2 and result.output.strip() == (
        f"error: --out {out}: there is no folder {tmp_path / 'afile'}; nothing was written")
    assert (tmp_path / "afile").read_text(encoding="utf-8") == "keep"


@needs_model
def test_calibrate_refits_into_out(tmp_path):
    rows = [(f"{g}{i}", q, e, t, label, kind) for i in range(4) for g, q, e, t, label, kind in ROWS]
    data = write_rows(tmp_path / "train.jsonl", rows)
    held = write_rows(tmp_path / "held.jsonl", ROWS, domain="legal")
    out = tmp_path / "refit.json"
    args = ["drift", "calibrate", "--data", str(data), "--heldout", str(held), "--out", str(out),
            "--db", str(tmp_path / "s.duckdb")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    for words in ("CV (5 folds, grouped)", "held.jsonl", "cosine < 0.34", "band (unjudged)", "previous (in-sample)",
                  "accuracy per kind, held.jsonl", "lookalike", "ROC AUC", "ECE", "drift<0.1", "review", "goals"):
        assert words in result.output
    from termgate.drift.model import load_model
    refit = load_model(out)
    assert refit.band[0] <= refit.cutoff <= refit.band[1] and refit.trained_on == "train.jsonl"
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 2 and load_model(out).sha256 == refit.sha256


# -- the query is never drift (issue 35 item 7): one rule in the scorer, whatever the judge --

QUERY_GOLDEN = [  # the query in another case and spacing: rule 1 makes it the generated "cell phone"
    {"query_id": "q1", "query": "Cell  Phone", "expected_expansions": [{"term": "mobile phone"}]},
    {"query_id": "q2", "query": "heart attack", "expected_expansions": [], "forbidden_terms": ["Heart Attack"]},
]
QUERY_GENERATED = [{"query_id": "q1", "terms": ["CELL PHONE", "banana", "mobile phone"]},
                   {"query_id": "q2", "terms": ["heart attack", "banana"]}]


def score_query_rows(tmp_path, judge) -> dict[str, tuple]:
    """query_id -> (drift_terms, unjudged_terms, term_drift_score), scored by the one scorer."""
    from termgate.models import Thresholds
    from termgate.scoring.scorer import score
    golden, generated = tmp_path / "golden.jsonl", tmp_path / "generated.jsonl"
    golden.write_text("".join(json.dumps(r) + "\n" for r in QUERY_GOLDEN), encoding="utf-8")
    generated.write_text("".join(json.dumps(r) + "\n" for r in QUERY_GENERATED), encoding="utf-8")
    scored = score(golden, generated, Thresholds(), judge)
    try:
        return {q: (d, u, s) for q, d, u, s in scored.con.execute(
            "SELECT query_id, drift_terms, unjudged_terms, term_drift_score FROM query_scores").fetchall()}
    finally:
        scored.close()


class AskedJudge:
    """Wraps a judge and records every candidate it was asked about."""

    def __init__(self, judge):
        self.inner, self.name, self.asked = judge, judge.name, []

    def config(self):
        return self.inner.config()

    def judge(self, candidates):
        self.asked += [(c.query, c.term) for c in candidates]
        return self.inner.judge(candidates)


def everything_drift(body):
    sent = leading_json(body["messages"][1]["content"])
    return ("json", {"verdicts": [{"term": t, "drift": True, "reason": "off topic"} for t in sent["candidates"]]})


def query_judges(server):
    """Each judge kind, set to call every term it is asked about drift (the hybrid's combiner
    puts every term in its band, so its LLM decides: drift too)."""
    all_drift = EmbeddingDriftJudge(FakeEmbedder(), hand_model({}, intercept=10.0), hand_lexicon())
    llm = LLMDriftJudge(LLMConfig(model="judge", base_url=server.url, max_tries=1))
    in_band = EmbeddingDriftJudge(FakeEmbedder(), hand_model({}, intercept=0.0, band=(0.4, 0.6)), hand_lexicon())
    hybrid_judge = HybridDriftJudge(in_band, LLMDriftJudge(LLMConfig(model="judge", base_url=server.url, max_tries=1)))
    return {"embedding": all_drift, "llm": llm, "hybrid": hybrid_judge}


@pytest.mark.parametrize("kind", ["embedding", "llm", "hybrid"])
def test_the_query_itself_is_never_drift_whatever_the_judge(tmp_path, llm, kind):
    llm.default = ("callable", everything_drift)
    judge = AskedJudge(query_judges(llm)[kind])
    rows = score_query_rows(tmp_path, judge)
    drift, unjudged, score = rows["q1"]
    assert drift == ["banana"] and unjudged == []  # "CELL PHONE" is the query "Cell  Phone" after rule 1
    assert score == pytest.approx(1 - 1 / 3)
    assert ("Cell  Phone", "cell phone") not in judge.asked and ("Cell  Phone", "banana") in judge.asked
    if kind != "embedding":  # the LLM was never shown the query's own text as a candidate
        sent = [t for r in llm.requests for t in leading_json(r["body"]["messages"][1]["content"])["candidates"]]
        assert "cell phone" not in sent and "heart attack" not in sent


@pytest.mark.parametrize("kind", ["embedding", "llm", "hybrid"])
def test_the_query_as_a_forbidden_term_is_still_drift(tmp_path, llm, kind):
    llm.default = ("callable", everything_drift)
    drift, unjudged, score = score_query_rows(tmp_path, query_judges(llm)[kind])["q2"]
    assert drift == ["heart attack", "banana"] and unjudged == [] and score == 0.0


def test_the_query_is_never_drift_in_the_oracle_either(tmp_path, llm):
    """tests/oracle.py (the differential tests' second implementation) keeps the same rule."""
    import oracle
    from termgate.io import load_generated, load_golden_set
    from termgate.models import Thresholds
    llm.default = ("callable", everything_drift)
    score_query_rows(tmp_path, query_judges(llm)["llm"])  # writes the two files
    golden = load_golden_set(tmp_path / "golden.jsonl")
    rows, _ = oracle.score(golden, load_generated(tmp_path / "generated.jsonl", golden.query_ids()), Thresholds(),
                           query_judges(llm)["llm"])
    assert [(r["drift_terms"], r["unjudged_terms"]) for r in rows] == [(["banana"], []),
                                                                      (["heart attack", "banana"], [])]


# -- honest judges (issue 35 item 6): an unreadable reply names the field ---------------------

def test_an_unreadable_llm_verdict_names_the_missing_field(llm):
    llm.default = ("callable", lambda body: ("json", {"verdicts": [
        {"term": t, "is_drift": True} for t in leading_json(body["messages"][1]["content"])["candidates"]]}))
    judge = LLMDriftJudge(LLMConfig(model="judge", base_url=llm.url, max_tries=1))
    (verdict,) = judge.judge([DriftCandidate("q1", "cell phone", "banana", None, None, ())])
    assert verdict.drift is None
    assert "field 'drift' missing in verdicts[0] (it has 'term', 'is_drift')" in verdict.reason
    assert "Field required" not in verdict.reason
    assert "field 'drift' missing" in judge.log[0]["error"]


def test_the_headline_counts_unjudged_terms_beside_the_drift_score(tmp_path, monkeypatch, llm):
    """Every reply lacks the field: the drift score stays 1.000 (rule 5), and the headline
    says that no term was judged."""
    llm.default = ("callable", lambda body: ("json", {"verdicts": [
        {"term": t, "is_drift": True} for t in leading_json(body["messages"][1]["content"])["candidates"]]}))
    config = tmp_path / "termgate.toml"
    config.write_text(f'[llm]\nbase_url = "{llm.url}"\nmodel = "judge-model"\nmax_tries = 1\n', encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    score_query_rows(tmp_path, NoDriftJudge())  # writes golden.jsonl and generated.jsonl
    result = CliRunner().invoke(main, [
        "evaluate", "--golden", str(tmp_path / "golden.jsonl"), "--generated", str(tmp_path / "generated.jsonl"),
        "--drift-judge", "llm", "--no-store", "--json", str(tmp_path / "r.json"), "--html", str(tmp_path / "r.html"),
        "--summary", str(tmp_path / "summary.md")])
    # a banana each (the query and the expected term are never asked); q2's forbidden term drifts: 0.5
    assert "drift 0.750 (2 of 2 terms unjudged)" in result.stdout, result.stdout + result.stderr
    summary = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["summary"]
    assert (summary["mean_term_drift_score"], summary["terms_unjudged"], summary["terms_put_to_judge"]) == (0.75, 2, 2)
    assert "0.750 (2 of 2 terms unjudged)" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "| drift | 0.750 (2 of 2 terms unjudged) |" in (tmp_path / "summary.md").read_text(encoding="utf-8")


def test_show_counts_a_stored_runs_unjudged_terms_beside_its_drift(tmp_path, monkeypatch, llm):
    llm.default = ("callable", lambda body: ("json", {"verdicts": [
        {"term": t, "is_drift": True} for t in leading_json(body["messages"][1]["content"])["candidates"]]}))
    config = tmp_path / "termgate.toml"
    config.write_text(f'[llm]\nbase_url = "{llm.url}"\nmodel = "judge-model"\nmax_tries = 1\n', encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    score_query_rows(tmp_path, NoDriftJudge())
    db = str(tmp_path / "t.duckdb")
    result = CliRunner().invoke(main, [
        "evaluate", "--golden", str(tmp_path / "golden.jsonl"), "--generated", str(tmp_path / "generated.jsonl"),
        "--drift-judge", "llm", "--db", db, "--json", str(tmp_path / "r.json")])
    assert result.exit_code in (0, 1), result.output  # scored (a gate verdict), not a usage or input error
    run_id = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["evaluation_id"]
    shown = CliRunner().invoke(main, ["show", run_id, "--db", db])
    assert shown.exit_code == 0, shown.output
    assert "drift 0.750 (2 terms unjudged)" in shown.output, shown.output


def test_no_unjudged_note_when_every_term_was_judged(tmp_path, llm):
    from termgate.models import Thresholds
    from termgate.scoring.scorer import score
    llm.default = ("callable", everything_drift)
    score_query_rows(tmp_path, NoDriftJudge())
    scored = score(tmp_path / "golden.jsonl", tmp_path / "generated.jsonl", Thresholds(), query_judges(llm)["llm"])
    try:
        assert scored.facts.unjudged_line() is None and int(scored.facts.n_asked.sum()) == 2
    finally:
        scored.close()


# -- repair hint and max_tokens (issue 35 items 3 and 5) ---------------------------------------

def test_an_unreadable_verdict_is_asked_again_with_the_repair_hint(llm):
    from termgate.drift.llm_judge import REPAIR
    llm.actions = [("json", {"verdicts": [{"term": "banana", "is_drift": True}]}),
                   ("json", {"verdicts": [{"term": "banana", "drift": True, "reason": "a fruit"}]})]
    judge = LLMDriftJudge(LLMConfig(model="judge", base_url=llm.url, max_tries=4, backoff=0.001))
    (verdict,) = judge.judge([DriftCandidate("q1", "cell phone", "banana", None, None, ())])
    assert verdict.drift is True and verdict.reason == "llm: a fruit"
    first, retry = (r["body"]["messages"] for r in llm.requests)
    assert retry == with_hint(first, REPAIR)  # temperature 0: the retry asks otherwise
    assert judge.config()["repair"] == REPAIR


def test_the_llm_judge_sends_max_tokens_enough_for_every_verdict(llm):
    llm.default = ("callable", everything_drift)
    judge = LLMDriftJudge(LLMConfig(model="judge", base_url=llm.url, max_tries=1, max_tokens=300))
    few = [DriftCandidate("q1", "cell phone", t, None, None, ()) for t in ("banana", "kumquat")]
    many = [DriftCandidate("q2", "lawyer", f"term {i}", None, None, ()) for i in range(20)]
    judge.judge(few + many)
    sent = {leading_json(r["body"]["messages"][1]["content"])["query"]: r["body"]["max_tokens"] for r in llm.requests}
    assert sent == {"cell phone": 300, "lawyer": 100 + 60 * 20}  # max(max_tokens, 100 + 60 per candidate)
    assert judge.config()["max_tokens"] == 300


@pytest.mark.parametrize("flag, sent", [([], 160), (["--max-tokens", "700"], 700)])
def test_evaluate_max_tokens_reaches_the_llm_judge(tmp_path, monkeypatch, llm, flag, sent):
    llm.default = ("callable", everything_drift)
    config = tmp_path / "termgate.toml"
    config.write_text(f'[llm]\nbase_url = "{llm.url}"\nmodel = "judge-model"\nmax_tries = 1\nmax_tokens = 64\n',
                      encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    score_query_rows(tmp_path, NoDriftJudge())
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(tmp_path / "golden.jsonl"), "--generated",
                                       str(tmp_path / "generated.jsonl"), "--no-store", "--drift-judge", "llm",
                                       "--json", str(tmp_path / "r.json"), *flag])
    assert result.exit_code in (0, 1, 3), result.output
    # [llm] max_tokens 64 is less than one verdict's 100 + 60; the flag overrides the setting
    assert [r["body"]["max_tokens"] for r in llm.requests] == [sent, sent]
    config_shown = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["run"]["drift_judge_config"]
    assert config_shown["max_tokens"] == (int(flag[1]) if flag else 64)


def test_evaluate_max_tokens_sets_the_hybrid_judges_llm_and_refuses_a_judge_without_one(tmp_path, llm):
    from termgate.cli.evaluate import with_max_tokens
    settings = with_max_tokens(Settings(llm={"base_url": llm.url, "model": "m", "max_tokens": 64}), 900)
    assert resolve_judge("hybrid", settings).config()["llm"]["max_tokens"] == 900
    score_query_rows(tmp_path, NoDriftJudge())
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(tmp_path / "golden.jsonl"), "--generated",
                                       str(tmp_path / "generated.jsonl"), "--no-store", "--drift-judge", "none",
                                       "--max-tokens", "100"])
    assert result.exit_code == 2 and "the drift judge none makes none" in result.output


def test_a_verdict_for_another_term_leaves_the_term_unjudged_saying_what_was_named(llm):
    """SmolLM2 echoes the prompt's template: '<candidate exactly as given>' is no candidate."""
    llm.default = ("json", {"verdicts": [{"term": "<candidate exactly as given>", "drift": True, "reason": "x"}]})
    judge = LLMDriftJudge(LLMConfig(model="judge", base_url=llm.url, max_tries=1))
    (verdict,) = judge.judge([DriftCandidate("q1", "cell phone", "banana", None, None, ())])
    assert verdict == DriftVerdict(None, "llm judge gave no verdict for this term (its verdicts name "
                                         "'<candidate exactly as given>')")
    llm.default = ("json", {"verdicts": []})
    (verdict,) = judge.judge([DriftCandidate("q1", "cell phone", "banana", None, None, ())])
    assert verdict.reason == "llm judge gave no verdict for this term (its verdicts list is empty)"
