"""bench_scoring: `termgate evaluate` end to end (parse, score, JSON, store) on synthetic data.

Synthetic golden sets of 100k and 1M queries, ~8 expected and ~10 generated terms each,
drift judge `none` (SPEC §7). Prints wall time and peak RSS of the evaluate process beside
the issue's goals (100k ≤ 4 s; 1M ≤ 40 s and ≤ 4 GB).

`--scripts ascii,accented,cyrillic` also scores the same sets with every vowel accented
(French, German, Spanish: rule 1 in SQL) or Cyrillic (rule 1 in Python), and prints each
one's time and peak RSS as a ratio to ASCII's (issue 31: accented ≤ 1.5× both).

Usage: python bench/bench_scoring.py [--sizes 100000,1000000] [--scripts ascii,accented,cyrillic]
                                     [--keep DIR] [--reference CHECKOUT] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOALS = {100_000: (4.0, None), 1_000_000: (40.0, 4096.0)}
ACCENTED_GOAL = 1.5
"""Issue 31: accented terms take at most this many times ASCII's time and peak memory."""
SYLLABLES = ["car", "dio", "neo", "plas", "ma", "ter", "gen", "ic", "lex", "ju", "ris", "tort",
             "vas", "cu", "lar", "pul", "mon", "ary", "re", "nal", "hep", "at", "os", "te"]


def _vocabulary(size: int, rng: random.Random) -> list[str]:
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


SCRIPTS = {"ascii": None, "accented": str.maketrans("aeiou", "àéîôü"),
           "cyrillic": str.maketrans("aeiou", "аеиоу")}
"""Variants of one set: every vowel of every term, query and domain replaced, so all of them
are non-ASCII, while the structure, lengths in characters and random draws stay those of
the ASCII set. `accented` is the text rule 1 normalises in SQL (ASCII and Latin-1 letters),
`cyrillic` text it hands to Python."""


def make_data(n: int, folder: Path, seed: int = 0, script: str = "ascii") -> tuple[Path, Path]:
    rng = random.Random(seed)
    vocab = _vocabulary(20_000, rng)
    table = SCRIPTS[script]
    tag = "" if table is None else f"-{script}"
    if table is not None:
        vocab = [w.translate(table) for w in vocab]
    golden, generated = folder / f"golden-{n}{tag}.jsonl", folder / f"generated-{n}{tag}.jsonl"
    domains = [d if table is None else d.translate(table) for d in ("legal", "medical")]
    with golden.open("w") as g, generated.open("w") as c:
        for i in range(n):
            words = rng.sample(vocab, 16)
            expected = [f"{words[k]} {words[k + 8]}" for k in range(8)]
            exp = [{"term": t, "min_weight": 0.5} if k == 0 else {"term": t} for k, t in enumerate(expected)]
            item = {"query_id": f"q{i:07d}", "query": f"{words[0]} {words[1]}",
                    "context": {"domain": domains[i % 2], "intent": "lookup"},
                    "expected_expansions": exp, "forbidden_terms": [f"{words[2]} x"], "critical": i % 50 == 0}
            g.write(json.dumps(item, ensure_ascii=False) + "\n")
            kept = expected[: rng.randint(5, 8)]
            extra = [f"{rng.choice(vocab)} {rng.choice(vocab)}" for _ in range(10 - len(kept))]
            terms = [{"term": t.upper() if k % 3 == 0 else t, "weight": round(rng.random(), 3)}
                     if k % 2 else t for k, t in enumerate(kept + extra)]
            c.write(json.dumps({"query_id": f"q{i:07d}", "terms": terms}, ensure_ascii=False) + "\n")
    return golden, generated


def run_evaluate(golden: Path, generated: Path, folder: Path,
                 source: str | None = None) -> tuple[float, float, int, float]:
    """One `evaluate` process: wall seconds, its own peak RSS (MB), exit code and CPU
    seconds (user and system: on a shared machine, steadier than the wall time). `source`
    is another checkout's folder to run instead of this one (the reference)."""
    db, report = folder / "bench.duckdb", folder / "report.json"
    db.unlink(missing_ok=True)
    report.unlink(missing_ok=True)
    # a reference checkout from before the rename holds the package as evalcore
    module = "evalcore" if source and not (Path(source) / "termgate").is_dir() else "termgate"
    cmd = [sys.executable, "-m", module, "evaluate", "--golden", str(golden), "--generated", str(generated),
           "--drift-judge", "none", "--json", str(report), "--db", str(db), "--quiet"]
    env = dict(os.environ, PYTHONPATH=source) if source else None
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 3) or not report.exists():  # a traceback exits 1 too, with no report
        sys.exit(f"evaluate failed ({code}): {proc.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024, code, usage.ru_utime + usage.ru_stime


def _line(label: str, n: int, wall: float, peak: float, code: int, cpu: float) -> str:
    goal_s, goal_mb = GOALS.get(n, (None, None))
    goal = f"goal ≤ {goal_s:.0f} s" if goal_s else "no goal"
    if goal_mb:
        goal += f", ≤ {goal_mb:.0f} MB"
    ratio = f" ({wall / goal_s:.2f}× the goal)" if goal_s else ""
    return (f"bench_scoring {label:<18} n={n:>9,}  wall {wall:6.2f} s  CPU {cpu:6.2f} s  peak RSS {peak:7.0f} MB  "
            f"exit {code}  [{goal}]{ratio}")


def _ratio_line(script: str, n: int, runs: dict[str, list[tuple[float, float, float]]]) -> str:
    """A script's median wall time, CPU time and peak RSS over ASCII's, same size, same checkout."""
    wall, cpu, peak = (statistics.median(r[k] for r in runs[script]) for k in range(3))
    ascii_wall, ascii_cpu, ascii_peak = (statistics.median(r[k] for r in runs["ascii"]) for k in range(3))
    goal = f"  [goal ≤ {ACCENTED_GOAL}× time and memory]" if script == "accented" else ""
    return (f"bench_scoring {script} / ascii   n={n:>9,}  wall {wall / ascii_wall:.2f}×  CPU {cpu / ascii_cpu:.2f}×  "
            f"peak RSS {peak / ascii_peak:.2f}×  (medians of {len(runs[script])}){goal}")


def _data(n: int, script: str, folder: Path, keep: bool) -> tuple[Path, Path]:
    tag = "" if script == "ascii" else f"-{script}"
    golden, generated = folder / f"golden-{n}{tag}.jsonl", folder / f"generated-{n}{tag}.jsonl"
    if keep and golden.exists() and generated.exists():
        return golden, generated
    return make_data(n, folder, script=script)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--scripts", default="ascii", help=f"comma-separated, of {','.join(SCRIPTS)} [ascii]")
    parser.add_argument("--keep", help="keep generated data in this folder (reused when present)")
    parser.add_argument("--reference", help="another checkout (e.g. `git worktree add /tmp/before HEAD~1`) "
                                            "measured on the same data, alternating with this one")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each, alternating [1]")
    args = parser.parse_args()
    scripts = args.scripts.split(",")
    if unknown := set(scripts) - set(SCRIPTS):
        parser.error(f"unknown script {sorted(unknown)[0]!r}: expected some of {','.join(SCRIPTS)}")
    if scripts != ["ascii"] and "ascii" not in scripts:
        scripts.insert(0, "ascii")  # the ratios' denominator
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_scoring-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        for n in (int(s) for s in args.sizes.split(",")):
            data = {script: _data(n, script, folder, bool(args.keep)) for script in scripts}
            runs: dict[str, list[tuple[float, float, float]]] = {script: [] for script in scripts}
            for _ in range(args.repeat):
                for script, (golden, generated) in data.items():  # alternating: the machine's drift hits all
                    label = "this" if script == "ascii" else f"this {script}"
                    if args.reference:
                        print(_line(label.replace("this", "reference"), n,
                                    *run_evaluate(golden, generated, folder, args.reference)), flush=True)
                    wall, peak, code, cpu = run_evaluate(golden, generated, folder)
                    runs[script].append((wall, cpu, peak))
                    print(_line(label, n, wall, peak, code, cpu), flush=True)
            for script in scripts[1:]:
                print(_ratio_line(script, n, runs), flush=True)
            if not args.keep:
                for golden, generated in data.values():
                    golden.unlink()
                    generated.unlink()
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    os.environ.setdefault("TERMGATE_STORE_TIMEOUT", "30")
    main()
