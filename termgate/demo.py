"""Seed the bundled demo data into a store, idempotently (SPEC §8): the runs of three
domains (data/demo/DOMAIN/), each with its retrieval effect measured over the domain's demo
corpus and judgments, and the recorded prompt evaluations (data/demo/prompts/,
termgate.demo_prompts)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .demo_prompts import DemoPromptEval, seed_demo_prompts
from .evaluation import EvaluationRun, evaluate
from .scoring.regression import Baseline
from .store import find_run_by_content, load_baseline, save_run

__all__ = ["DEMO_DOMAINS", "DemoRun", "DemoPromptEval", "DemoSeed", "seed_demo", "DEMO_DATA"]

DEMO_DOMAINS = ("medical", "legal", "ecommerce")
VERSIONS = (("v1-baseline", "v1"), ("v2-candidate", "v2"), ("v3-candidate", "v3"))
DEMO_AUTHOR = "demo-pipeline"


@dataclass(frozen=True, slots=True)
class DemoRun:
    """One demo run: whether it was stored now or already present."""

    domain: str
    prompt_version: str
    run_id: str
    gate: str
    created: bool


@dataclass(frozen=True, slots=True)
class DemoSeed:
    """What seed_demo found: the demo runs, then the demo prompt evaluations."""

    runs: list[DemoRun]
    prompt_evals: list[DemoPromptEval]


def _store_once(db_path: str | Path, run: EvaluationRun) -> tuple[str, bool]:
    existing = find_run_by_content(db_path, run.content_hash)
    if existing is not None:
        return existing, False
    save_run(db_path, run)
    return run.evaluation_id, True


DEMO_DATA = Path(__file__).resolve().parent / "demo_data"
"""The demo's golden sets, outputs and recorded prompt evaluations, shipped in the package
(`data/demo` in a checkout points here)."""


def seed_demo(db_path: str | Path, data_dir: str | Path | None = None) -> DemoSeed:
    """Evaluate every demo version against its domain's v1 baseline, then store the recorded
    prompt evaluations; skip what is stored already (same content, same evaluation id).
    `data_dir`: a folder laid out like DEMO_DATA (the default)."""
    data_dir = DEMO_DATA if data_dir is None else Path(data_dir)  # the store stays as given: a path or a URL
    runs = _seed_runs(db_path, data_dir)
    return DemoSeed(runs, seed_demo_prompts(db_path, data_dir / "prompts"))


def _seed_runs(db_path: str | Path, data_dir: Path) -> list[DemoRun]:
    """The runs of every domain folder under data_dir, v2 and v3 against that domain's v1;
    with a corpus.jsonl and qrels.txt there, each run measures its retrieval effect."""
    out: list[DemoRun] = []
    for domain in DEMO_DOMAINS:
        folder = data_dir / domain
        if not (folder / "golden.jsonl").exists():
            continue
        baseline: Baseline | None = None
        retrieval = _retrieval_setup(folder)
        for stem, version in VERSIONS:
            generated = folder / f"{stem}.jsonl"
            if not generated.exists():
                continue
            run = evaluate(folder / "golden.jsonl", generated, baseline=baseline,
                           drift_judge=None, name=f"{domain} demo", prompt_version=version,
                           author=DEMO_AUTHOR, cache_db=db_path, golden_name=f"demo/{domain}",
                           retrieval=retrieval)
            run_id, created = _store_once(db_path, run)
            run.close()
            out.append(DemoRun(domain, version, run_id, run.gate.decision, created))
            if baseline is None:
                baseline = load_baseline(db_path, run_id)
    return out


def _retrieval_setup(folder: Path):
    """The domain's demo corpus and judgments with the embedded engine (its index in
    $TERMGATE_INDEX_DIR, else the user's cache), or None when the folder has none."""
    corpus, qrels = folder / "corpus.jsonl", folder / "qrels.txt"
    if not (corpus.exists() and qrels.exists()):
        return None
    from .retrieval.configure import open_setup

    return open_setup(str(corpus), str(qrels), {}, None)
