"""Shared fixtures: input files in a temporary folder, a fresh store, isolated settings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evalcore.config import Settings
from evalcore.demo import seed_demo
from evalcore.drift import NoDriftJudge
from evalcore.evaluation import EvaluationRun, evaluate_loaded
from evalcore.io import load_generated, load_golden_set
from evalcore.models import Thresholds


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def golden_row(qid: str, query: str, expected: list, *, domain: str = "ecommerce", forbidden=None,
               critical: bool = False) -> dict:
    row = {"query_id": qid, "query": query, "context": {"domain": domain},
           "expected_expansions": [e if isinstance(e, dict) else {"term": e} for e in expected]}
    if forbidden:
        row["forbidden_terms"] = forbidden
    if critical:
        row["critical"] = True
    return row


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    """No test reads the developer's evalcore.toml or store."""
    monkeypatch.delenv("EVALCORE_CONFIG", raising=False)
    monkeypatch.delenv("EVALCORE_HIGH_RISK_DOMAINS", raising=False)
    monkeypatch.setenv("EVALCORE_DB", str(tmp_path / "default.duckdb"))
    monkeypatch.setenv("EVALCORE_STORE_TIMEOUT", "30")


@pytest.fixture
def score(tmp_path):
    """score(golden_rows, generated_rows, **kw) -> EvaluationRun, through the real loaders."""
    counter = iter(range(10_000))

    def run(golden_rows: list, generated_rows: list, thresholds: Thresholds | None = None,
            baseline=None, judge=None, errors=None) -> EvaluationRun:
        n = next(counter)
        golden = load_golden_set(write_jsonl(tmp_path / f"g{n}.jsonl", golden_rows))
        generated = load_generated(write_jsonl(tmp_path / f"c{n}.jsonl", generated_rows),
                                   {i.query_id for i in golden.items})
        return evaluate_loaded(golden, generated, thresholds or Thresholds(), judge=judge or NoDriftJudge(),
                               baseline=baseline, settings=Settings(), errors=errors, author="tester")

    return run


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    config = folder / "evalcore.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    old = os.environ.get("EVALCORE_CONFIG")
    os.environ["EVALCORE_CONFIG"] = str(config)
    try:
        seed_demo(folder / "demo.duckdb", ROOT / "data" / "demo")
    finally:
        if old is None:
            os.environ.pop("EVALCORE_CONFIG")
        else:
            os.environ["EVALCORE_CONFIG"] = old
    return folder / "demo.duckdb"


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "store.duckdb"
