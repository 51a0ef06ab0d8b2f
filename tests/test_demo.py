"""The bundled demo data keeps the promises of SPEC §8."""

from __future__ import annotations

from pathlib import Path

from evalcore import store
from evalcore.demo import seed_demo

DEMO = Path(__file__).resolve().parent.parent / "data" / "demo"


def test_demo_outcomes_and_idempotency(db):
    seeded = seed_demo(db, DEMO)
    gates = {(r.domain, r.prompt_version): r.gate for r in seeded}
    assert gates == {
        ("medical", "v1"): "review", ("medical", "v2"): "fail", ("medical", "v3"): "review",
        ("legal", "v1"): "review", ("legal", "v2"): "fail", ("legal", "v3"): "review",
        ("ecommerce", "v1"): "pass", ("ecommerce", "v2"): "fail", ("ecommerce", "v3"): "pass",
    }
    again = seed_demo(db, DEMO)
    assert not any(r.created for r in again)
    assert len(store.list_runs(db)) == 9
    for r in seeded:
        if r.prompt_version == "v3":
            row = store.get_run(db, r.run_id)
            assert row["regressed_queries"] == []  # v3 regresses nothing
            assert row["aggregate_precision"] >= 0.80 and row["aggregate_recall"] >= 0.85


def test_demo_sets_are_large_and_realistic():
    for domain in ("medical", "legal", "ecommerce"):
        lines = (DEMO / domain / "golden.jsonl").read_text(encoding="utf-8").splitlines()
        assert len(lines) >= 40
        text = "\n".join(lines)
        assert '"critical": true' in text and "forbidden_terms" in text
