"""bench_scoring: `termgate evaluate` end to end (parse, score, JSON, store) on synthetic data.

Synthetic golden sets of 100k and 1M queries, ~8 expected and ~10 generated terms each,
drift judge `none` (SPEC §7). Prints wall time and peak RSS of the evaluate process beside
the issue's goals (100k ≤ 4 s; 1M ≤ 40 s and ≤ 4 GB).

Usage: python bench/bench_scoring.py [--sizes 100000,1000000] [--keep DIR] [--reference CHECKOUT] [--repeat N]
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

GOALS = {100_000: (4.0, None), 1_000_000: (40.0, 4096.0)}
SYLLABLES = ["car", "dio", "neo", "plas", "ma", "ter", "gen", "ic", "lex", "ju", "ris", "tort",
             "vas", "cu", "lar", "pul", "mon", "ary", "re", "nal", "hep", "at", "os", "te"]


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def make_data(n: int, folder: Path, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    vocab = _vocabulary(20_000, rng)
    golden, generated = folder / f"golden-{n}.jsonl", folder / f"generated-{n}.jsonl"
    with golden.open("w") as g, generated.open("w") as c:
        for i in range(n):
            words = rng.sample(vocab, 16)
            expected = [f"{words[k]} {words[k + 8]}" for k in range(8)]
            exp = [{"term": t, "min_weight": 0.5} if k == 0 else {"term": t} for k, t in enumerate(expected)]
            item = {"query_id": f"q{i:07d}", "query": f"{words[0]} {words[1]}",
                    "context": {"domain": "medical" if i % 2 else "legal", "intent": "lookup"},
                    "expected_expansions": exp, "forbidden_terms": [f"{words[2]} x"], "critical": i % 50 == 0}
            g.write(json.dumps(item) + "\n")
            kept = expected[: rng.randint(5, 8)]
            extra = [f"{rng.choice(vocab)} {rng.choice(vocab)}" for _ in range(10 - len(kept))]
            terms = [{"term": t.upper() if k % 3 == 0 else t, "weight": round(rng.random(), 3)}
                     if k % 2 else t for k, t in enumerate(kept + extra)]
            c.write(json.dumps({"query_id": f"q{i:07d}", "terms": terms}) + "\n")
    return golden, generated


def run_evaluate(golden: Path, generated: Path, folder: Path, source: str | None = None) -> tuple[float, float, int]:
    """One `evaluate` process: wall seconds, its own peak RSS (MB) and exit code. `source`
    is another checkout's folder to run instead of this one (the reference)."""
    db = folder / "bench.duckdb"
    db.unlink(missing_ok=True)
    # a reference checkout from before the rename holds the package as evalcore
    module = "evalcore" if source and not (Path(source) / "termgate").is_dir() else "termgate"
    cmd = [sys.executable, "-m", module, "evaluate", "--golden", str(golden), "--generated", str(generated),
           "--drift-judge", "none", "--json", str(folder / "report.json"), "--db", str(db), "--quiet"]
    env = dict(os.environ, PYTHONPATH=source) if source else None
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 3):
        sys.exit(f"evaluate failed ({code}): {proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024, code


def _line(label: str, n: int, wall: float, peak: float, code: int) -> str:
    goal_s, goal_mb = GOALS.get(n, (None, None))
    goal = f"goal ≤ {goal_s:.0f} s" if goal_s else "no goal"
    if goal_mb:
        goal += f", ≤ {goal_mb:.0f} MB"
    ratio = f" ({wall / goal_s:.2f}× the goal)" if goal_s else ""
    return (f"bench_scoring {label:<9} n={n:>9,}  wall {wall:6.2f} s  peak RSS {peak:7.0f} MB  "
            f"exit {code}  [{goal}]{ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--keep", help="keep generated data in this folder (reused when present)")
    parser.add_argument("--reference", help="another checkout (e.g. `git worktree add /tmp/before HEAD~1`) "
                                            "measured on the same data, alternating with this one")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, alternating [1]")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_scoring-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            golden, generated = folder / f"golden-{n}.jsonl", folder / f"generated-{n}.jsonl"
            if not (args.keep and golden.exists() and generated.exists()):
                golden, generated = make_data(n, folder)
            for _ in range(args.repeat):
                if args.reference:
                    print(_line("reference", n, *run_evaluate(golden, generated, folder, args.reference)), flush=True)
                print(_line("this", n, *run_evaluate(golden, generated, folder)), flush=True)
            if not args.keep:
                for f in (golden, generated):
                    f.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("TERMGATE_STORE_TIMEOUT", "30")
    main()
