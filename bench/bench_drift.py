"""bench_drift: the drift combiner beside the old cosine judge (SPEC §7, issue 18 "Measured").

1. 10,000 unique false-positive terms (1,000 queries × 10 candidates, 3 expected terms each)
   judged cold — an empty store: every text embedded, every term looked up in WordNet —
   with the model's load time excluded and printed; then warm over the same store (goal:
   0 model calls, 0 WordNet lookups, ≤ 2 s). The old cosine judge is timed beside it, cold
   on its own fresh store.
2. One cold `evaluate` of a 48-query demo set with the default judge: a new process and an
   empty store (goal ≤ 4 s).
3. The figures of `termgate drift calibrate`: for the grouped cross-validated training rows
   and each evaluation set present (heldout.jsonl, heldout_realistic2.jsonl,
   biosynonyms.jsonl), the refit combiner beside the previous one
   (data/drift/previous_model.json) and the old cosine judge: precision, recall, ROC AUC,
   accuracy (hard kinds, per kind), expected calibration error, share of drift scored
   below 0.1, share sent to review, and the goals (recall ≥ 0.85 at precision ≥ 0.9,
   ≤ 5% of drift below 0.1, ≤ 10% to review).

Usage: python bench/bench_drift.py [--terms 10000] [--skip-calibration] [--only-calibration]
"""

from __future__ import annotations

import argparse
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from termgate.drift.judge import CosineDriftJudge, DriftCandidate, EmbeddingDriftJudge
from termgate.drift.embeddings import CachedEmbedder, make_embedder
from termgate.drift.lexicon import CachedLexicon
from termgate.store import StoredLexicon, StoredVectors

ROOT = Path(__file__).resolve().parents[1]
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


def fresh_store() -> Path:
    from termgate import store
    db = Path(tempfile.mkdtemp(prefix="bench_drift-")) / "cache.duckdb"
    with store.connect(db, write=True):
        pass
    return db


def bench_terms(n_terms: int) -> None:
    candidates = make_candidates(n_terms)
    model = make_embedder({}, None).inner  # the default backend, uncached
    start = time.perf_counter()
    model.embed(["warm up"])
    load = time.perf_counter() - start
    print(f"bench_drift model load (excluded below): {load:.1f} s", flush=True)
    db = fresh_store()
    for label in ("combiner cold", "combiner warm"):
        cached, lexicon = CachedEmbedder(model, StoredVectors(db)), CachedLexicon(StoredLexicon(db))
        start = time.perf_counter()
        verdicts = EmbeddingDriftJudge(cached, lexicon=lexicon).judge(candidates)
        wall = time.perf_counter() - start
        goal = "goal ≤ 30 s" if label.endswith("cold") else "goal ≤ 2 s, 0 model calls"
        print(f"bench_drift {label:14} {len(candidates):,} unique terms judged in {wall:6.2f} s "
              f"({len(candidates) / wall:,.0f} terms/s)  texts embedded {cached.embedded:,}  model calls "
              f"{cached.model_calls}  WordNet lookups {lexicon.lookups:,}  drift {sum(v.drift is True for v in verdicts):,}"
              f"  unjudged {sum(v.drift is None for v in verdicts):,}  [{goal}]", flush=True)
    cached = CachedEmbedder(model, StoredVectors(fresh_store()))
    start = time.perf_counter()
    verdicts = CosineDriftJudge(cached).judge(candidates)
    wall = time.perf_counter() - start
    print(f"bench_drift {'old judge cold':14} {len(candidates):,} unique terms judged in {wall:6.2f} s "
          f"({len(candidates) / wall:,.0f} terms/s)  texts embedded {cached.embedded:,}  model calls "
          f"{cached.model_calls}  drift {sum(v.drift is True for v in verdicts):,}  [the cosine judge before issue 18]",
          flush=True)


def bench_evaluate() -> None:
    db = Path(tempfile.mkdtemp(prefix="bench_drift-eval-")) / "store.duckdb"
    demo = ROOT / "data" / "demo" / "medical"
    command = [str(Path(sys.executable).parent / "termgate"), "evaluate", "--golden", str(demo / "golden.jsonl"),
               "--generated", str(demo / "v2-candidate.jsonl"), "--db", str(db)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    judge = next((line for line in done.stdout.splitlines() if "drift judge" in line), "?").strip()
    print(f"bench_drift cold evaluate (new process, empty store, 48 queries): {wall:.1f} s  exit {done.returncode}"
          f"  [{judge}]  [goal ≤ 4 s]", flush=True)


def bench_calibration() -> None:
    """The figures of `termgate drift calibrate` (the same function, the same evaluation sets
    and previous model), without writing anything."""
    from termgate.cli.drift import EVALUATION, PREVIOUS, TRAIN
    from termgate.drift.calibration import calibrate_combiner, load_rows
    from termgate.drift.measures import report_lines
    from termgate.drift.model import load_model
    train = load_rows(ROOT / TRAIN)
    evaluation = [(p.name, load_rows(ROOT / p)) for p in EVALUATION if (ROOT / p).exists()]
    previous = load_model(ROOT / PREVIOUS) if (ROOT / PREVIOUS).exists() else None
    embedder, lexicon = make_embedder({}, None), CachedLexicon()
    result = calibrate_combiner(train, evaluation, embedder, lexicon, CosineDriftJudge(embedder), previous=previous,
                                trained_on=TRAIN.name)
    m = result.model
    print(f"bench_drift combiner L2 {m.l2:g}, cut-off {m.cutoff:.2f}, band {m.band[0]:.3f}-{m.band[1]:.3f} ("
          + ", ".join(f"{s.band:.1%} of {s.name}" for s in result.sets) + " inside it)")
    for line in report_lines([(s.name, s.figures) for s in result.sets]):
        print(f"bench_drift {line}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--terms", type=int, default=10_000)
    parser.add_argument("--skip-calibration", action="store_true")
    parser.add_argument("--only-calibration", action="store_true", help="Only part 3, the calibration figures.")
    args = parser.parse_args()
    if not args.only_calibration:
        bench_evaluate()  # first: nothing of this process is warm for it
        bench_terms(args.terms)
    if not args.skip_calibration:
        bench_calibration()


if __name__ == "__main__":
    main()
