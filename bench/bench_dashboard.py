"""bench_dashboard: the Compare page on a 100k-query run against a 100k-query baseline.

Builds a real DuckDB store with two synthetic runs (the candidate perturbs ~20% of the
baseline's expansions), then drives the real page through Streamlit's AppTest: the first
render (cold caches) and a filter change (status = regressed); then the page opened on a
regressed query side by side (?query=, cold caches) and its Next. Goals on this machine:
first render ≤ 3 s, filter change ≤ 1 s, side-by-side first render ≤ 2 s. When
PostgreSQL's binaries are installed, the same store is copied into a private PostgreSQL
server (`evalcore store copy`, as the tests start one) and the page is measured on it too,
in the same run (issue 15).

Usage: python bench/bench_dashboard.py [--queries 100000] [--keep DIR] [--backend duckdb|postgresql|both]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT))


def perturb(generated: Path, out: Path, seed: int = 1) -> None:
    rng = random.Random(seed)
    with generated.open() as src, out.open("w") as dst:
        for line in src:
            row = json.loads(line)
            if rng.random() < 0.2:
                row["terms"] = row["terms"][: rng.randint(2, len(row["terms"]))] + ["banana split"]
            dst.write(json.dumps(row) + "\n")


def evaluate(golden: Path, generated: Path, db: Path, version: str, baseline: str | None) -> str:
    exe = Path(sys.executable).with_name("evalcore")
    report = db.parent / f"{version}.json"
    cmd = [str(exe), "evaluate", "--golden", str(golden), "--generated", str(generated), "--drift-judge", "none",
           "--db", str(db), "--json", str(report), "--prompt-version", version, "--name", "bench", "-q"]
    if baseline:
        cmd += ["--baseline", baseline]
    subprocess.run(cmd, check=False, capture_output=True)
    with report.open("rb") as handle:
        head = handle.read(200).decode()
    return head.split('"evaluation_id":"')[1].split('"')[0]


def measure(db: str, run_id: str, base_id: str) -> tuple[float, int, float, str]:
    """(first render s, rows on page 1, filter change s, the match caption) of Compare."""
    os.environ["EVALCORE_DB"] = db
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("views/compare.py")
    at.query_params["run"], at.query_params["baseline"] = run_id, base_id
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    if at.exception:
        sys.exit(f"page failed on {db}: {at.exception[0].value}")
    rows = len(at.dataframe[0].value)
    start = time.perf_counter()
    at.multiselect(key="cmp_status").set_value(["regressed"]).run()
    change = time.perf_counter() - start
    caption = next(c.value for c in at.caption if "queries match" in c.value)
    return first, rows, change, caption


def measure_panel(db: str, run_id: str, base_id: str) -> tuple[float, float, str]:
    """(first render s, Next s, the query) of Compare opened on a regressed query side by side
    (/compare?run=&baseline=&query=), caches cleared first as for a link opened cold."""
    os.environ["EVALCORE_DB"] = db
    from streamlit.testing.v1 import AppTest

    from dashboard import data
    from evalcore import comparison

    regressed = comparison.pair_runs(db, run_id, base_id).page(comparison.CompareFilter(statuses=("regressed",)), 0, 1)
    query_id = str(regressed[0]["query_id"].iloc[0])
    data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("views/compare.py")
    at.query_params.update(run=run_id, baseline=base_id, query=query_id)
    start = time.perf_counter()
    at.run()
    first = time.perf_counter() - start
    if at.exception or not any(m.value.startswith("**Candidate**") for m in at.markdown):
        sys.exit(f"side-by-side panel failed on {db}: {at.exception[0].value if at.exception else 'not shown'}")
    start = time.perf_counter()
    at.button(key="cmp_next").click().run()
    step = time.perf_counter() - start
    return first, step, query_id


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--keep")
    parser.add_argument("--backend", choices=("duckdb", "postgresql", "both"), default="both")
    args = parser.parse_args()
    from bench_scoring import make_data

    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_dashboard-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "store.duckdb"
    try:
        if not db.exists():
            golden, generated = make_data(args.queries, folder)
            candidate = folder / "candidate.jsonl"
            perturb(generated, candidate)
            base_id = evaluate(golden, generated, db, "v1", None)
            run_id = evaluate(golden, candidate, db, "v2", base_id)
        else:
            from evalcore import store
            runs = store.runs_overview(db)
            run_id, base_id = runs["run_id"].iloc[0], runs["run_id"].iloc[1]
        server = None
        targets = [("DuckDB", str(db))] if args.backend != "postgresql" else []
        if args.backend != "duckdb":
            sys.path.insert(0, str(ROOT / "tests"))
            from pg_server import PostgresServer, binaries

            if binaries() is None:
                print("bench_dashboard: PostgreSQL binaries are not installed: PostgreSQL not measured")
            else:
                server = PostgresServer().start()
                url = server.url(server.create_database())
                exe = Path(sys.executable).with_name("evalcore")
                subprocess.run([str(exe), "store", "copy", "--from", str(db), "--to", url], check=True,
                               capture_output=True)
                targets.append(("PostgreSQL", url))
        try:
            for label, target in targets:
                first, rows, change, caption = measure(target, run_id, base_id)
                print(f"bench_dashboard {label} {args.queries:,} vs {args.queries:,} queries: Compare first render "
                      f"{first:.2f} s [goal ≤ 3 s] ({rows} rows on page 1); filter change {change:.2f} s "
                      f"[goal ≤ 1 s] ({caption.split(' ·')[0]})")
                first, step, query_id = measure_panel(target, run_id, base_id)
                print(f"bench_dashboard {label} {args.queries:,} vs {args.queries:,} queries: Compare side by side "
                      f"(?query={query_id}, a regressed query) first render {first:.2f} s [goal ≤ 2 s]; "
                      f"Next {step:.2f} s")
        finally:
            if server is not None:
                server.stop()
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
