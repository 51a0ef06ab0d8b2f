"""bench_drift: the embedding drift judge on 10,000 unique false-positive terms (SPEC §7).

1,000 queries with 10 unique candidate terms and 3 expected terms each; the judge embeds
every term, query, expected term and domain once. Prints the judging time (model load
excluded, measured separately), the texts embedded and model calls, then repeats with a
fresh judge over the same store to show the cache: zero model calls.
Goal: 10k unique terms judged ≤ 10 s on this CPU.

Usage: python bench/bench_drift.py [--terms 10000]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from evalcore.drift import DriftCandidate, EmbeddingDriftJudge
from evalcore.embeddings import CachedEmbedder, SentenceTransformerEmbedder
from evalcore.store import StoredVectors

WORDS = ("heart lung kidney liver bone blood brain skin nerve muscle joint artery vein cancer tumor "
         "infection fever pain ache injury fracture lawyer court judge contract lease tenant estate will "
         "trust claim appeal motion verdict fine penalty tax patent trademark copyright license shoe shirt "
         "phone laptop camera guitar piano banana apple orange bread cheese coffee river mountain ocean "
         "forest desert city village road bridge train plane car bicycle boat engine wheel window door "
         "garden flower tree grass stone metal glass paper book letter music movie game sport team player "
         "coach school teacher student doctor nurse hospital clinic pharmacy drug dose tablet injection").split()


def make_candidates(n_terms: int, seed: int = 0) -> list[DriftCandidate]:
    rng = random.Random(seed)
    terms: set[str] = set()
    while len(terms) < n_terms:
        terms.add(" ".join(rng.sample(WORDS, rng.choice((2, 3)))))
    terms_list = sorted(terms)
    out = []
    for q in range(n_terms // 10):
        query = f"{rng.choice(WORDS)} {rng.choice(WORDS)} {q}"
        expected = tuple(f"{rng.choice(WORDS)} {rng.choice(WORDS)}" for _ in range(3))
        domain = rng.choice(("medical", "legal", "ecommerce"))
        out += [DriftCandidate(f"q{q}", query, t, domain, None, expected) for t in terms_list[q * 10:q * 10 + 10]]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--terms", type=int, default=10_000)
    args = parser.parse_args()
    candidates = make_candidates(args.terms)
    model = SentenceTransformerEmbedder()
    start = time.perf_counter()
    model.embed(["warm up"])
    load = time.perf_counter() - start
    db = Path(tempfile.mkdtemp(prefix="bench_drift-")) / "cache.duckdb"
    from evalcore import store
    with store.connect(db, write=True):
        pass
    for label in ("first run", "second run (cache)"):
        cached = CachedEmbedder(model, StoredVectors(db))
        judge = EmbeddingDriftJudge(cached)
        start = time.perf_counter()
        verdicts = judge.judge(candidates)
        wall = time.perf_counter() - start
        drift = sum(1 for v in verdicts if v.drift)
        print(f"bench_drift {label:19} {len(candidates):,} unique terms judged in {wall:6.2f} s "
              f"({len(candidates) / wall:,.0f} terms/s)  texts embedded {cached.embedded:,}  "
              f"model calls {cached.model_calls}  drift {drift:,}  [goal ≤ 10 s; model load {load:.1f} s excluded]",
              flush=True)


if __name__ == "__main__":
    main()
