"""bench_dashboard: the Compare page on a 100k-query run against a 100k-query baseline.

Builds a real DuckDB store with two synthetic runs (the candidate perturbs ~20% of the
baseline's expansions), then drives the real page through Streamlit's AppTest: the first
render (cold caches; the process's imports paid before, as a running server has) and a filter
change (status = regressed); then the page opened on a
regressed query side by side (?query=, cold caches) and its Next. Goals on this machine:
first render ≤ 3 s, filter change ≤ 1 s, side-by-side first render ≤ 2 s. Then the first
render of every dashboard page on the demo store (`termgate demo`, drift judge none), each
opened as its deep link with cold caches, goal ≤ 2 s each (issue 17); a table of every
figure beside its goal closes the output. When
PostgreSQL's binaries are installed, the same store is copied into a private PostgreSQL
server (`termgate store copy`, as the tests start one) and the page is measured on it too,
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
from termgate.dashboard import APP as DASHBOARD_APP

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
    exe = Path(sys.executable).with_name("termgate")
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
    os.environ["TERMGATE_DB"] = db
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=120)
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
    os.environ["TERMGATE_DB"] = db
    from streamlit.testing.v1 import AppTest

    from termgate.dashboard import data
    from termgate import comparison

    regressed = comparison.pair_runs(db, run_id, base_id).page(comparison.CompareFilter(statuses=("regressed",)), 0, 1)
    query_id = str(regressed[0]["query_id"].iloc[0])
    data.clear()
    at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=120)
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


# The demo pages, each opened as a user's link opens it: (label, page, query parameters).
# {run}/{base}/{review} are filled with the demo's medical v2, v1 and v3 runs.
DEMO_PAGES = [
    ("Runs", "views/runs.py", {}),
    ("Compare", "views/compare.py", {"run": "{run}", "baseline": "{base}"}),
    ("Compare side by side", "views/compare.py", {"run": "{run}", "baseline": "{base}", "query": "{query}"}),
    ("Query history", "views/query.py", {"query_id": "{query}"}),
    ("Regressions", "views/regressions.py", {}),
    ("Import", "views/import.py", {}),
    ("Sign-off", "views/signoff.py", {"run": "{review}"}),
    ("Prompts", "views/prompts.py", {}),
]
PAGE_GOAL = 2.0
URL_PATHS = {"views/runs.py": "/", "views/compare.py": "/compare", "views/query.py": "/query",
             "views/regressions.py": "/regressions", "views/import.py": "/import", "views/signoff.py": "/signoff",
             "views/prompts.py": "/prompts"}


def seed_demo_store(folder: Path) -> Path:
    """The demo store as `termgate demo` builds it, the drift judge off (as tests/conftest.py's
    demo_store fixture does: no model to load)."""
    from termgate.demo import seed_demo

    config = folder / "termgate.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    old = os.environ.get("TERMGATE_CONFIG")
    os.environ["TERMGATE_CONFIG"] = str(config)
    try:
        seed_demo(folder / "demo.duckdb", ROOT / "data" / "demo")
    finally:
        if old is None:
            os.environ.pop("TERMGATE_CONFIG")
        else:
            os.environ["TERMGATE_CONFIG"] = old
    return folder / "demo.duckdb"


def demo_ids(db: str) -> dict[str, str]:
    """The demo's medical runs (v2 the candidate with regressions, v1 its baseline, v3 the
    review run) and v2's first regressed query, as Compare lists it."""
    from termgate import comparison, store

    ids = {(r.name.split()[0], r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    regressed = comparison.pair_runs(db, run, base).page(comparison.CompareFilter(statuses=("regressed",)), 0, 1)
    return {"run": run, "base": base, "review": ids[("medical", "v3")],
            "query": str(regressed[0]["query_id"].iloc[0])}


def measure_pages(db: str) -> list[tuple[str, float | None, str]]:
    """(page, first render s or None when it failed, what was opened) of every demo page,
    each in a new session with the dashboard's caches cleared, as a link opened cold."""
    os.environ["TERMGATE_DB"] = db
    from streamlit.testing.v1 import AppTest

    from termgate.dashboard import data

    ids = demo_ids(db)
    out = []
    for label, page, params in DEMO_PAGES:
        params = {k: v.format(**ids) for k, v in params.items()}
        data.clear()
        at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=120)
        at.switch_page(page)
        at.query_params.update(params)
        start = time.perf_counter()
        at.run()
        seconds = time.perf_counter() - start
        link = URL_PATHS[page] + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")
        if at.exception:
            out.append((label, None, f"{link}: {at.exception[0].value.splitlines()[0]}"))
        else:
            out.append((label, seconds, link))
    return out


def warm_up(db: str) -> None:
    """Import what every page imports (plotly, the views' modules) in a throwaway session, so the
    first page measured does not pay the process's imports: a server pays them once."""
    os.environ["TERMGATE_DB"] = db
    from streamlit.testing.v1 import AppTest

    for _, page, _ in DEMO_PAGES:
        at = AppTest.from_file(str(DASHBOARD_APP), default_timeout=120)
        at.switch_page(page)
        at.run()


def goal_cell(seconds: float | None, goal: float) -> str:
    if seconds is None:
        return "failed"
    return f"{seconds:.2f} s [goal ≤ {goal:g} s{'' if seconds <= goal else ', not met'}]"


def print_table(rows: list[tuple[str, str, str, float | None, float | None]]) -> None:
    """rows: (backend, store, what, seconds, goal or None)."""
    head = ("backend", "store", "measured", "seconds", "goal", "result")
    cells = [(b, s, w, "failed" if x is None else f"{x:.2f}", "-" if g is None else f"≤ {g:g} s",
              "failed" if x is None else "-" if g is None else "met" if x <= g else "NOT met")
             for b, s, w, x, g in rows]
    widths = [max(len(r[i]) for r in [head, *cells]) for i in range(len(head))]
    print()
    for r in [head, tuple("-" * w for w in widths), *cells]:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


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
            from termgate import store
            runs = store.runs_overview(db)
            run_id, base_id = runs["run_id"].iloc[0], runs["run_id"].iloc[1]
        demo = seed_demo_store(folder) if not (folder / "demo.duckdb").exists() else folder / "demo.duckdb"
        server = None
        targets = [("DuckDB", str(db), str(demo))] if args.backend != "postgresql" else []
        if args.backend != "duckdb":
            sys.path.insert(0, str(ROOT / "tests"))
            from pg_server import PostgresServer, binaries

            if binaries() is None:
                print("bench_dashboard: PostgreSQL binaries are not installed: PostgreSQL not measured")
            else:
                server = PostgresServer().start()
                url = server.url(server.create_database())
                exe = Path(sys.executable).with_name("termgate")
                subprocess.run([str(exe), "store", "copy", "--from", str(db), "--to", url], check=True,
                               capture_output=True)
                demo_url = server.url(server.create_database())
                subprocess.run([str(exe), "store", "copy", "--from", str(demo), "--to", demo_url], check=True,
                               capture_output=True)
                targets.append(("PostgreSQL", url, demo_url))
        table = []
        size = f"{args.queries // 1000}k" if args.queries % 1000 == 0 else f"{args.queries:,}"
        big = f"{size} vs {size}"
        try:
            for label, target, demo_target in targets:
                warm_up(demo_target)  # the process's imports, paid once by a server, before every figure
                first_cmp, rows, change, caption = measure(target, run_id, base_id)
                print(f"bench_dashboard {label} {args.queries:,} vs {args.queries:,} queries: Compare first render "
                      f"{first_cmp:.2f} s [goal ≤ 3 s] ({rows} rows on page 1); filter change {change:.2f} s "
                      f"[goal ≤ 1 s] ({caption.split(' ·')[0]})")
                first, step, query_id = measure_panel(target, run_id, base_id)
                print(f"bench_dashboard {label} {args.queries:,} vs {args.queries:,} queries: Compare side by side "
                      f"(?query={query_id}, a regressed query) first render {first:.2f} s [goal ≤ 2 s]; "
                      f"Next {step:.2f} s")
                table += [(label, big, "Compare first render", first_cmp, 3.0),
                          (label, big, "Compare filter change", change, 1.0),
                          (label, big, "Compare side by side first render", first, 2.0),
                          (label, big, "Compare side by side Next", step, None)]
                for page, seconds, link in measure_pages(demo_target):
                    print(f"bench_dashboard {label} demo store: {page} first render {goal_cell(seconds, PAGE_GOAL)} "
                          f"({link})")
                    table.append((label, "demo", f"{page} first render", seconds, PAGE_GOAL))
            print_table(table)
        finally:
            if server is not None:
                server.stop()
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
