"""bench_pg_store: storing one evaluated run in the PostgreSQL team store beside the DuckDB
file, measured in the same run on the same scored run (bench_scoring's synthetic data,
drift judge none): the store step alone (save_run: rows, golden file, header in the audit
chain, one transaction), then `audit verify` of that run on each backend; and five `evaluate`
processes started at once on one store (the concurrency test's wall time: on PostgreSQL
they write side by side, on a DuckDB file one after another). Goal (issue 15): a 100k-query
run stored in PostgreSQL in ≤ 5 s.

Needs PostgreSQL's binaries (Debian's postgresql); starts a private server like the tests.

Usage: python bench/bench_pg_store.py [--queries 100000] [--writer-queries 1000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import shutil
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "bench")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--writer-queries", type=int, default=1_000, help="queries per run of the five writers")
    args = parser.parse_args()
    from bench_scoring import make_data
    from pg_server import PostgresServer, binaries

    from termgate import store
    from termgate.evaluation import evaluate
    from termgate.governance.signoff import verify_chain

    if binaries() is None:
        sys.exit("bench_pg_store: PostgreSQL binaries are not installed (apt-get install postgresql)")
    folder = Path(tempfile.mkdtemp(prefix="bench_pg-"))
    golden, generated = make_data(args.queries, folder)
    server = PostgresServer().start()
    try:
        url = server.url(server.create_database())
        from termgate.store.postgres import migrate_pg
        migrate_pg(url)
        duck = folder / "store.duckdb"
        store.ensure_store(duck)
        times = {}
        for label, db in (("DuckDB", str(duck)), ("PostgreSQL", url)):
            run = evaluate(golden, generated, drift_judge="none", author="bench")
            start = time.perf_counter()
            store.save_run(db, run)
            stored = time.perf_counter() - start
            start = time.perf_counter()
            report = verify_chain(db, runs=[run.evaluation_id])
            verified = time.perf_counter() - start
            assert report.ok, report.message
            times[label] = (stored, verified)
            run.close()
        (d_store, d_verify), (p_store, p_verify) = times["DuckDB"], times["PostgreSQL"]
        print(f"bench_pg_store {args.queries:,} queries: store PostgreSQL {p_store:.2f} s [goal ≤ 5 s] vs DuckDB "
              f"{d_store:.2f} s ({p_store / d_store:.1f}×); audit verify of the run PostgreSQL {p_verify:.2f} s vs "
              f"DuckDB {d_verify:.2f} s")
        small = folder / "writers"
        small.mkdir()
        golden, generated = make_data(args.writer_queries, small)
        walls = {label: five_writers(db, golden, generated)
                 for label, db in (("DuckDB", str(small / "store.duckdb")),
                                   ("PostgreSQL", server.url(server.create_database())))}
        print(f"bench_pg_store five writers at once ({args.writer_queries:,} queries each, evaluate processes, "
              f"drift judge none): PostgreSQL {walls['PostgreSQL']:.2f} s vs DuckDB {walls['DuckDB']:.2f} s wall")
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)  # 100k-query files and a store: several GB


def five_writers(db: str, golden: Path, generated: Path) -> float:
    """Wall time of five `termgate evaluate` processes started at once on one store; each
    must store its run, and the chain must verify with five records."""
    from termgate.governance.signoff import verify_chain

    exe = Path(sys.executable).with_name("termgate")
    start = time.perf_counter()
    procs = [subprocess.Popen([str(exe), "evaluate", "--golden", str(golden), "--generated", str(generated),
                               "--db", db, "--drift-judge", "none", "-q"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True) for _ in range(5)]
    codes = [p.wait() for p in procs]
    wall = time.perf_counter() - start
    if any(code not in (0, 1, 3) for code in codes):
        sys.exit(f"bench_pg_store: a writer failed on {db}: {[p.stderr.read() for p in procs]}")
    report = verify_chain(db)
    assert report.ok and "5 records" in report.message, report.message
    return wall


if __name__ == "__main__":
    main()
