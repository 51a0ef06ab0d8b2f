"""The bundled demo data keeps the promises of SPEC §8."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from termgate import store
from termgate.demo import seed_demo

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


@pytest.mark.slow
def test_demo_outcomes_and_idempotency(db, tmp_path, monkeypatch):
    monkeypatch.setenv("TERMGATE_INDEX_DIR", str(tmp_path / "indexes"))
    seeded = seed_demo(db, DEMO).runs
    gates = {(r.domain, r.prompt_version): r.gate for r in seeded}
    assert gates == {
        ("medical", "v1"): "review", ("medical", "v2"): "fail", ("medical", "v3"): "review",
        ("legal", "v1"): "review", ("legal", "v2"): "fail", ("legal", "v3"): "review",
        # e-commerce (not high-risk, outside SPEC §8) under the drift combiner of issue 36: it
        # sends 'pull-ups' (a diaper brand; issue 18's combiner flagged it, failing the baseline's
        # critical query ecom-021) and 'poncho' (for 'rain jacket') to review, flagging neither
        # (docs/drift.md, the demo)
        ("ecommerce", "v1"): "review", ("ecommerce", "v2"): "fail", ("ecommerce", "v3"): "review",
    }
    again = seed_demo(db, DEMO)
    assert not any(r.created for r in again.runs) and not any(p.created for p in again.prompt_evals)
    assert len(store.list_runs(db)) == 9
    for r in seeded:
        if r.prompt_version == "v3":
            row = store.get_run(db, r.run_id)
            assert row["regressed_queries"] == []  # v3 regresses nothing
            assert row["aggregate_precision"] >= 0.80 and row["aggregate_recall"] >= 0.85
    assert {p.name for p in (tmp_path / "indexes").iterdir()}  # the demo's indexes went where it was told
    check_demo_retrieval(db, seeded)


def check_demo_retrieval(db, seeded):
    """Every demo run measured its retrieval effect over its domain's demo corpus (issue 34)."""
    runs = {(r.domain, r.prompt_version): store.get_run(db, r.run_id) for r in seeded}
    for (domain, version), row in runs.items():
        summary = row["retrieval"]
        assert summary["corpus"]["documents"] >= 2000 and summary["judged_queries"] == 48, (domain, version)
        assert summary["reference"] == ("unexpanded" if version == "v1" else "baseline")
        rows = store.retrieval_rows(db, row["run_id"])
        assert len(rows) == 48 * (2 if version == "v1" else 3)  # v1 has no baseline to search with
    # high-risk: no expansion the sign-off walkthrough approves loses search quality
    for domain in ("medical", "legal"):
        for version in ("v1", "v3"):
            assert runs[domain, version]["retrieval"]["regressed_queries"] == [], (domain, version)
    assert runs["medical", "v2"]["retrieval"]["regressed_high_risk"]  # v2's drift hurts search too
    # e-commerce v3: better terms, worse search ('wearable' for 'smartwatch' floods the top ten)
    v1, v3 = runs["ecommerce", "v1"], runs["ecommerce", "v3"]
    assert v3["aggregate_f1"] > v1["aggregate_f1"]
    summary = v3["retrieval"]
    means = summary["means"]
    assert summary["mean_ndcg_delta"] < 0 and means["candidate"]["ndcg"] < means["baseline"]["ndcg"]
    assert summary["regressed_queries"] == ["ecom-045"]
    worst = summary["attribution"]["ecom-045"][0]
    assert worst["term"] == "wearable" and worst["non_relevant"] >= 5


def test_demo_corpus_is_regenerated_byte_for_byte(tmp_path):
    """scripts/make_demo_corpus.py wrote the committed corpora and judgments, and writes them
    again identically; every document says it is demo data."""
    script = Path(__file__).resolve().parent.parent / "scripts" / "make_demo_corpus.py"
    made = subprocess.run([sys.executable, str(script), str(tmp_path)], capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    for domain in ("medical", "legal", "ecommerce"):
        for name in ("corpus.jsonl", "qrels.txt"):
            committed = (DEMO / domain / name).read_bytes()
            assert (tmp_path / domain / name).read_bytes() == committed, f"{domain}/{name}: run the script again"
            assert len(committed) < 1_000_000


def test_demo_corpus_is_marked_and_judged():
    from termgate.io import load_golden_set
    from termgate.retrieval.inputs import load_corpus, load_qrels

    for domain, prefix in (("medical", "med"), ("legal", "leg"), ("ecommerce", "ecom")):
        corpus = load_corpus(DEMO / domain / "corpus.jsonl")
        assert 2000 <= len(corpus.ids) <= 5000
        assert all(i.startswith(f"demo-{prefix}-") for i in corpus.ids) and all(
            t.endswith("(demo)") for t in corpus.titles)
        judgments = load_qrels(DEMO / domain / "qrels.txt").judgments
        assert set(judgments) == set(load_golden_set(DEMO / domain / "golden.jsonl").query_ids())
        for qid, grades in judgments.items():
            assert set(grades) <= set(corpus.ids) and sorted(set(grades.values()) - {0}) == [1, 2, 3], qid


def test_demo_sets_are_large_and_realistic():
    for domain in ("medical", "legal", "ecommerce"):
        lines = (DEMO / domain / "golden.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) >= 40
        text = "\n".join(lines)
        assert '"critical": true' in text and "forbidden_terms" in text


# ---------------------------------------------------------------- the demo's prompt evaluations (issue 17 item 4)

# Hand-computed from data/demo/prompts/VERSION.json (10 cases, pass threshold 7):
# v1 scores 3 6 3 4 5 4 5 4 3 2 -> mean 3.9, none passes; v2 6 9 6 6 9 9 6 9 5 3 -> 6.8, four
# pass; v3 9 9 9 8 6 9 9 9 9 9 -> 8.6, nine pass (its case 5, "fired for no reason", is worse than v2's).
DEMO_PROMPTS = {"v1": (3.9, 0.0), "v2": (6.8, 0.4), "v3": (8.6, 0.9)}


def test_demo_stores_prompt_evaluations_once_on_either_backend(backend):
    from termgate.demo_prompts import DEMO_PROMPT_NAME, seed_demo_prompts

    first = seed_demo_prompts(backend, DEMO / "prompts")
    assert [(p.prompt_version, p.created) for p in first] == [("v1", True), ("v2", True), ("v3", True)]
    digest = first[0].dataset_hash
    versions = store.prompt_eval_versions(backend, digest).set_index("version")
    assert list(versions.index) == ["v1", "v2", "v3"]  # oldest recording first
    for version, (average, pass_rate) in DEMO_PROMPTS.items():
        assert versions.loc[version, "average_score"] == pytest.approx(average)
        assert versions.loc[version, "pass_rate"] == pytest.approx(pass_rate)
        assert versions.loc[version, "scored_cases"] == 10 and versions.loc[version, "errored_cases"] == 0
    listed = store.list_prompt_evals(backend)
    assert set(listed["name"]) == {DEMO_PROMPT_NAME}  # marked as demo data ...
    assert all(m.startswith("demo: ") for m in listed["model"]) and all(
        "no model was called" in json.loads(u)["note"] for u in listed["usage"])  # ... in three places
    cases = store.prompt_eval_results(backend, versions.loc["v3", "eval_id"])
    assert len(cases) == 10 and cases["output"].iloc[9] == "[]"  # the ISBN: nothing to expand
    assert all(cases["reasoning"].str.len() > 20) and json.loads(cases["weaknesses"].iloc[4]) == [
        "unfair dismissal is missing", "only two terms"]
    assert store.prompt_eval_matrix(backend, digest)["v3"].tolist() == [9, 9, 9, 8, 6, 9, 9, 9, 9, 9]

    again = seed_demo_prompts(backend, DEMO / "prompts")
    assert [p.eval_id for p in again] == [p.eval_id for p in first] and not any(p.created for p in again)
    assert len(store.list_prompt_evals(backend)) == 3


def test_demo_prompt_recordings_are_checked_before_anything_is_stored(tmp_path, db):
    from termgate.demo_prompts import seed_demo_prompts
    from termgate.errors import InputError

    folder = tmp_path / "prompts"
    shutil.copytree(DEMO / "prompts", folder)
    v2 = json.loads((folder / "v2.json").read_text(encoding="utf-8"))
    v2["cases"].pop()
    (folder / "v2.json").write_text(json.dumps(v2, indent=2), encoding="utf-8")
    with pytest.raises(InputError, match=r"v2\.json:\d+: cases: 9 recorded cases for a dataset of 10"):
        seed_demo_prompts(db, folder)
    assert not db.exists()  # v1 was fine, and still nothing was stored
    v2["cases"].append(v2["cases"][0])
    v2["model"] = "gpt-4o"  # not labelled as demo data
    (folder / "v2.json").write_text(json.dumps(v2, indent=2), encoding="utf-8")
    with pytest.raises(InputError, match=r"v2\.json:\d+: model: string should match pattern"):
        seed_demo_prompts(db, folder)


def test_demo_prompt_dataset_is_small_and_realistic():
    from termgate.llm.prompt_models import load_dataset

    dataset = load_dataset(DEMO / "prompts" / "dataset.json")
    assert 8 <= len(dataset.cases) <= 12
    assert {c.prompt_inputs["domain"] for c in dataset.cases} == {"medical", "legal", "ecommerce"}
    for version in DEMO_PROMPTS:
        recording = json.loads((DEMO / "prompts" / f"{version}.json").read_text(encoding="utf-8"))
        assert recording["prompt_version"] == version and "{query}" in recording["prompt"]
        for case in recording["cases"]:
            verdict = case["verdict"]
            assert case["output"] and verdict["reasoning"] and verdict["strengths"] + verdict["weaknesses"]


def test_demo_prompt_evaluations_are_copied_by_store_copy(pg, pgdb, tmp_path):
    from click.testing import CliRunner

    from termgate.cli import main
    from termgate.demo_prompts import seed_demo_prompts

    source = tmp_path / "source.duckdb"
    digest = seed_demo_prompts(source, DEMO / "prompts")[0].dataset_hash
    copied = CliRunner().invoke(main, ["store", "copy", "--from", str(source), "--to", pgdb])
    assert copied.exit_code == 0, copied.output + copied.stderr
    for eval_id in store.list_prompt_evals(source)["eval_id"]:
        assert store.prompt_eval_results(pgdb, eval_id).equals(store.prompt_eval_results(source, eval_id))
    assert store.prompt_eval_versions(pgdb, digest).equals(store.prompt_eval_versions(source, digest))
    assert not any(p.created for p in seed_demo_prompts(pgdb, DEMO / "prompts"))  # the copy counts as seeded
