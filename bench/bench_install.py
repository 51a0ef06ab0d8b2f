"""bench_install: the wheel a user installs, and what installing it costs.

Builds the wheel from this checkout, installs it into a fresh virtual environment (pip's
cache as this machine has it: a warm cache, so the time is pip's own work, not downloads),
then adds the default drift judge with `termgate drift install`. Prints the wheel's size,
each step's wall time, the environment's size after each and its five largest packages, and
`termgate --version`'s cold start (median of N runs, a new process each).

Usage: python bench/bench_install.py [--runs 10] [--keep DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink()) / 1e6


def _timed(*cmd) -> float:
    start = time.perf_counter()
    subprocess.run([str(c) for c in cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def _largest(site: Path, count: int = 5) -> str:
    sizes: dict[str, float] = {}
    for p in site.iterdir():  # a package folder, or a module file such as duckdb's extension
        if p.name.endswith((".dist-info", "__pycache__", ".pth")):
            continue
        name = p.name if p.is_dir() else p.name.split(".")[0].lstrip("_")
        sizes[name] = sizes.get(name, 0.0) + (_mb(p) if p.is_dir() else p.stat().st_size / 1e6)
    return ", ".join(f"{name} {mb:.0f}" for name, mb in sorted(sizes.items(), key=lambda kv: -kv[1])[:count])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10, help="cold starts of `termgate --version` [10]")
    parser.add_argument("--keep", help="build and install here, and keep it")
    args = parser.parse_args()
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench_install-"))
    try:
        wall = _timed(sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", base / "dist", ROOT)
        wheel = next((base / "dist").glob("termgate-*.whl"))
        print(f"bench_install wheel            {wheel.name}  {wheel.stat().st_size / 1e3:7.0f} kB  (built in {wall:.1f} s)")
        venv = base / "venv"
        _timed(sys.executable, "-m", "venv", venv)
        empty = _mb(venv)
        wall = _timed(venv / "bin/pip", "install", "-q", "--disable-pip-version-check", wheel)
        site = next((venv / "lib").glob("python3*/site-packages"))
        print(f"bench_install runtime          install {wall:6.1f} s  environment {_mb(venv):6.0f} MB "
              f"(+{_mb(venv) - empty:.0f} MB over an empty venv)  largest MB: {_largest(site)}")
        wall = _timed(venv / "bin/termgate", "drift", "install")
        print(f"bench_install + drift judge    install {wall:6.1f} s  environment {_mb(venv):6.0f} MB  "
              f"largest MB: {_largest(site)}")
        starts = []
        for _ in range(args.runs + 1):
            starts.append(_timed(venv / "bin/termgate", "--version"))
        starts = starts[1:]  # the first one writes the bytecode caches
        print(f"bench_install --version cold   median {statistics.median(starts) * 1000:6.0f} ms  "
              f"min {min(starts) * 1000:.0f}  max {max(starts) * 1000:.0f}  ({args.runs} runs)")
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
