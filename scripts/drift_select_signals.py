"""Which of issue 36's sense-aware signals the drift combiner weighs (termgate.drift.senses.SENSE_FEATURES).

On the training rows only (never a held-out file): start from the 41 earlier signals and all of
`SENSE_SIGNALS`; remove, one at a time, the sense-aware signal whose removal lowers the grouped
cross-validated log-loss most (the better of L2 3 and 10), while it lowers it by `--tol` or
more. Prints each step, the signals kept, and SENSE_FEATURES: those kept plus every signal the
current SENSE_FEATURES already names (an earlier round's coefficients file names them and must
stay scoreable by name), in `SENSE_SIGNALS` order, with the log-loss of that set.

Usage: python scripts/drift_select_signals.py [--data data/drift/train.jsonl] [--db /tmp/x.duckdb] [--tol 0.0005]
"""

from __future__ import annotations

import argparse

import numpy as np

from termgate.config import load_settings
from termgate.drift.calibration import candidates_of, cross_validate, load_rows, log_loss
from termgate.drift.embeddings import make_embedder
from termgate.drift.resolve import lexicon_for
from termgate.drift.senses import SENSE_FEATURES, SENSE_SIGNALS
from termgate.drift.signals import FEATURES, compute_signals
from termgate.store import StoredVectors

BEFORE = FEATURES[:41]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/drift/train.jsonl")
    parser.add_argument("--db", default="data/termgate.duckdb", help="the store holding the vector and lexicon caches")
    parser.add_argument("--tol", type=float, default=0.0005)
    args = parser.parse_args()
    rows = load_rows(args.data)
    vectors = StoredVectors(args.db)
    signals = compute_signals(candidates_of(rows), make_embedder(load_settings().drift, vectors), lexicon_for(vectors))
    y = np.array([r.drift for r in rows], dtype=float)
    groups = [r.group for r in rows]

    def loss(extra: list[str]) -> float:
        x = np.array([[s[n] for n in BEFORE + tuple(extra)] for s in signals])
        return min(log_loss(cross_validate(x, y, groups, 5, l2), y) for l2 in (3.0, 10.0))

    kept = list(SENSE_SIGNALS)
    best = loss(kept)
    print(f"the 41 earlier signals: {loss([]):.4f}; with all {len(kept)} sense-aware ones: {best:.4f}")
    while kept:
        trials = sorted((loss([f for f in kept if f != name]), name) for name in kept)
        if trials[0][0] >= best - args.tol:
            break
        best, dropped = trials[0]
        kept.remove(dropped)
        print(f"without {dropped}: {best:.4f}")
    print("kept:", tuple(kept))
    union = [f for f in SENSE_SIGNALS if f in kept or f in SENSE_FEATURES]
    print(f"SENSE_FEATURES = {tuple(union)}  (with those weighed before: {loss(union):.4f})")


if __name__ == "__main__":
    main()
