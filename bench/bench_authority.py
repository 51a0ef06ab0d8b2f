"""bench_authority: `termgate gate RUN` and `termgate audit verify` on a store holding a
100k-query run, for two versions of termgate in the same run — `--before REV` (default
a6ecbd7, the commit before issue 32) checked out into a temporary `git worktree`, and this
checkout. Issue 32 ("Measured"): authority from the chain may cost at most 10% here, so
each line's ratio after / before should be ≤ 1.10.

The store is built once by the older version (bench_scoring's synthetic data, drift judge
none, two accounts) and kept under the cache folder; each version then reads a copy of its
own, since a newer termgate migrates a store in place when it opens it (one untimed warm-up
per version and command does that, and warms the file cache). The commands run as
processes, alternating versions, each timed `--repeat` times: the median wall time and
the median CPU time (user and system; steadier than the wall time on a shared machine).
Figures only: nothing is asserted.

`--postgres` also measures both commands on a PostgreSQL store (a private server, as the
tests start; each version reads a database copied from the one the older version built).
On the 2-core machine the DuckDB part takes about 4 minutes (the store built once, then
kept), `--postgres` about 9 more.

Usage: python bench/bench_authority.py [--before REV] [--queries 100000] [--repeat 5]
                                       [--cache DIR] [--postgres]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "bench")]
GOAL = 1.10
PASSWORD = "bench-password-1"


def termgate(tree: Path, *args: str, check: tuple[int, ...] = (0,)) -> tuple[float, float, int]:
    """One `python -m termgate ARGS` process of the checkout `tree`: (wall s, CPU s, exit code)."""
    env = dict(os.environ, PYTHONPATH=str(tree), TERMGATE_PASSWORD=PASSWORD)
    env.pop("TERMGATE_CONFIG", None)
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "termgate", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, cwd=tree)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode(errors="replace")
    proc.stderr.close()
    if code not in check or "Traceback" in err:
        sys.exit(f"bench_authority: termgate {' '.join(args[:2])} of {tree} exited {code}: {err.strip()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, code


def checkout(rev: str, tree: Path) -> None:
    """REV in a temporary worktree at `tree` (removed by `remove_checkout`); its termgate is
    the one its processes import."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--force", str(tree), rev],
                   check=True, capture_output=True)
    for path in (tree, ROOT):
        found = subprocess.run([sys.executable, "-c", "import termgate; print(termgate.__file__)"], cwd=path,
                               env=dict(os.environ, PYTHONPATH=str(path)), capture_output=True, text=True, check=True)
        if not Path(found.stdout.strip()).resolve().is_relative_to(path.resolve()):
            sys.exit(f"bench_authority: PYTHONPATH={path} imports {found.stdout.strip()}, not that checkout's")


def remove_checkout(tree: Path) -> None:
    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)
    shutil.rmtree(tree, ignore_errors=True)
    subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], capture_output=True)


def build_store(before: Path, db: str, golden: Path, generated: Path) -> None:
    """Two accounts and the 100k-query run (author bench), written by the older version."""
    for name in ("carol", "dave"):
        termgate(before, "users", "add", name, "--role", "approver", "--domains", "medical,legal", "--db", db)
    termgate(before, "evaluate", "--golden", str(golden), "--generated", str(generated), "--drift-judge", "none",
             "--author", "bench", "--db", db, "--quiet", check=(0, 1, 3))


def run_id_of(db: str) -> str:
    """The run the older version stored (read as data, by this process's DuckDB or psycopg)."""
    if db.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(db) as conn:
            return conn.execute("SELECT run_id FROM runs").fetchone()[0]
    import duckdb

    with duckdb.connect(db, read_only=True) as con:
        return con.execute("SELECT run_id FROM runs").fetchall()[0][0]


def measure(versions: dict[str, tuple[Path, str]], run_id: str, repeat: int) -> dict:
    """{(command, version): [(wall, CPU), ...]}, the versions alternating within each round."""
    commands = {"gate": lambda db: ("gate", run_id, "--db", db), "audit verify": lambda db: ("audit", "verify",
                                                                                            "--db", db)}
    times: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for command, args in commands.items():
        check = (0, 1, 3, 5) if command == "gate" else (0,)
        for tree, db in versions.values():  # warm-up: a migration on first open, the file cache
            termgate(tree, *args(db), check=check)
        for _ in range(repeat):
            for label, (tree, db) in versions.items():
                wall, cpu, _ = termgate(tree, *args(db), check=check)
                times.setdefault((command, label), []).append((wall, cpu))
    return times


def report(times: dict, backend: str, queries: int) -> None:
    labels = list(dict.fromkeys(label for _, label in times))
    for command in dict.fromkeys(c for c, _ in times):
        medians = {}
        for label in labels:
            runs = times[command, label]
            wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
            medians[label] = (wall, cpu)
            print(f"bench_authority {backend:<10} {command:<12} {label:<18} n={queries:,}  wall {wall:6.2f} s  "
                  f"CPU {cpu:6.2f} s  (medians of {len(runs)}; wall {min(r[0] for r in runs):.2f}–"
                  f"{max(r[0] for r in runs):.2f} s)")
        (before_wall, before_cpu), (after_wall, after_cpu) = medians[labels[0]], medians[labels[1]]
        print(f"bench_authority {backend:<10} {command:<12} after / before      wall {after_wall / before_wall:.2f}×  "
              f"CPU {after_cpu / before_cpu:.2f}×  [goal ≤ {GOAL:.2f}×]")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="a6ecbd7", help="the older version: a git revision [a6ecbd7]")
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "termgate-bench-authority",
                        help="where the data and the older version's store are kept between runs")
    parser.add_argument("--postgres", action="store_true", help="also on a PostgreSQL store (a private server)")
    args = parser.parse_args()
    from bench_scoring import make_data

    rev = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.before], capture_output=True,
                         text=True, check=True).stdout.strip()
    args.cache.mkdir(parents=True, exist_ok=True)
    golden, generated = args.cache / f"golden-{args.queries}.jsonl", args.cache / f"generated-{args.queries}.jsonl"
    if not (golden.exists() and generated.exists()):
        golden, generated = make_data(args.queries, args.cache)
    work = Path(tempfile.mkdtemp(prefix="bench_authority-"))
    before = work / f"before-{rev}"
    after_label = "after (this tree)"
    try:
        checkout(rev, before)
        base = args.cache / f"store-{rev}-{args.queries}.duckdb"
        if not base.exists():
            building = base.with_suffix(".building")
            building.unlink(missing_ok=True)
            build_store(before, str(building), golden, generated)
            building.rename(base)
        copies = {}
        for label, tree in ((f"before ({rev})", before), (after_label, ROOT)):
            copy = work / f"{tree.name}.duckdb"
            shutil.copyfile(base, copy)
            copies[label] = (tree, str(copy))
        report(measure(copies, run_id_of(str(base)), args.repeat), "DuckDB", args.queries)
        if args.postgres:
            measure_postgres(before, rev, golden, generated, args)
    finally:
        remove_checkout(before)
        shutil.rmtree(work, ignore_errors=True)


def measure_postgres(before: Path, rev: str, golden: Path, generated: Path, args) -> None:
    from pg_server import PostgresServer, binaries

    if binaries() is None:
        print("bench_authority PostgreSQL: skipped, the binaries are not installed (apt-get install postgresql)")
        return
    server = PostgresServer().start()
    try:
        base = server.create_database()
        build_store(before, server.url(base), golden, generated)
        versions = {f"before ({rev})": (before, server.url(server.create_database(template=base))),
                    "after (this tree)": (ROOT, server.url(server.create_database(template=base)))}
        report(measure(versions, run_id_of(server.url(base)), args.repeat), "PostgreSQL", args.queries)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
