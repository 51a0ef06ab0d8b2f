"""Build data/drift_calibration.csv: labelled (query, domain, term, related) rows.

Related rows are WordNet synonyms (two lemmas of one noun synset); unrelated rows pair a
query with a frequent noun from a distant lexicographer file (food vs law, animals vs
disease, ...). Hand-labelled medical and legal rows follow from scripts/drift_hand_rows.csv.
Needs Debian's `wordnet-base` (apt-get install wordnet-base); the CSV it writes is committed,
so nothing at run time needs WordNet.

Usage: python scripts/build_drift_calibration.py [--per-side 170] [--seed 0]
"""

from __future__ import annotations

import argparse
import csv
import random
from collections import defaultdict
from pathlib import Path

WORDNET = Path("/usr/share/wordnet")
ROOT = Path(__file__).resolve().parent.parent
# lexicographer file number -> the domain label written in the calibration set
LEXNAMES = {4: "activities", 5: "animals", 6: "artifacts", 8: "anatomy", 10: "communication",
            12: "feelings", 13: "food", 14: "organisations", 15: "places", 18: "people",
            19: "natural phenomena", 20: "plants", 21: "finance", 26: "states and conditions",
            27: "substances", 28: "time"}
# pairs of domains far enough apart that a term from one is drift for a query from the other
DISTANT = {"animals": ["finance", "communication", "time"], "food": ["anatomy", "finance", "communication"],
           "anatomy": ["food", "artifacts", "finance"], "states and conditions": ["food", "artifacts", "places"],
           "finance": ["animals", "plants", "anatomy"], "plants": ["finance", "people", "artifacts"],
           "artifacts": ["feelings", "animals", "states and conditions"], "people": ["plants", "substances"],
           "communication": ["animals", "food", "plants"], "places": ["feelings", "states and conditions"],
           "feelings": ["artifacts", "places", "substances"], "substances": ["people", "feelings"],
           "activities": ["plants", "animals"], "organisations": ["plants", "food"],
           "natural phenomena": ["finance", "people"], "time": ["animals", "food"]}


def _frequencies() -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for line in (WORDNET / "cntlist.rev").read_text(encoding="latin-1").splitlines():
        key, _, count = line.split()
        lemma = key.split("%")[0]
        counts[lemma] = max(counts[lemma], int(count))
    return counts


MONOSEMOUS: set[str] = set()


def _sense_ranks() -> dict[tuple[str, str], int]:
    """(lemma, synset offset) -> sense rank of that lemma (0 = its most frequent sense).
    Also fills MONOSEMOUS: nouns with a single sense, safe as unrelated terms."""
    ranks = {}
    for line in (WORDNET / "index.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        parts = line.split()
        lemma, synset_cnt, p_cnt = parts[0], int(parts[2]), int(parts[3])
        offsets = parts[6 + p_cnt:6 + p_cnt + synset_cnt]
        if synset_cnt == 1:
            MONOSEMOUS.add(lemma)
        for rank, offset in enumerate(offsets):
            ranks[(lemma, offset)] = rank
    return ranks


def _synsets() -> list[tuple[str, list[str]]]:
    """(domain, lemmas) for noun synsets in the chosen lexicographer files, keeping only
    lemmas for which this synset is their first or second sense (no obscure senses)."""
    ranks = _sense_ranks()
    out = []
    for line in (WORDNET / "data.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        parts = line.split()
        lexfile, count = int(parts[1]), int(parts[3], 16)
        if lexfile not in LEXNAMES:
            continue
        lemmas = [parts[4 + 2 * i].lower() for i in range(count)]
        lemmas = [w for w in dict.fromkeys(lemmas) if "(" not in w and ranks.get((w, parts[0]), 9) == 0]
        out.append((LEXNAMES[lexfile], lemmas))
    return out


def build(per_side: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    freq = _frequencies()
    by_domain: dict[str, list[str]] = defaultdict(list)
    pairs = []
    for domain, lemmas in _synsets():
        common = [w for w in lemmas if freq.get(w, 0) >= 3]
        by_domain[domain].extend(w for w in common if w in MONOSEMOUS)
        for a in common[:1]:
            for b in lemmas[1:]:
                if b != a and freq.get(b, 0) >= 1 and a not in b and b not in a:
                    pairs.append((domain, a, b))
                    break
    rng.shuffle(pairs)
    rows, per_domain = [], defaultdict(int)
    for domain, a, b in pairs:
        if per_domain[domain] >= per_side // len(LEXNAMES) + 3:
            continue
        per_domain[domain] += 1
        rows.append({"query": a.replace("_", " "), "domain": domain, "term": b.replace("_", " "),
                     "related": 1, "source": "wordnet-synonym"})
        if len(rows) >= per_side:
            break
    unrelated = []
    for row in rows:
        far = rng.choice(DISTANT[row["domain"]])
        term = rng.choice(by_domain[far]).replace("_", " ")
        unrelated.append({"query": row["query"], "domain": row["domain"], "term": term, "related": 0,
                          "source": f"wordnet-distant:{far}"})
    return rows + unrelated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-side", type=int, default=170)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rows = build(args.per_side, args.seed)
    with (ROOT / "scripts" / "drift_hand_rows.csv").open(encoding="utf-8") as handle:
        rows += [dict(r, source="hand-labelled") for r in csv.DictReader(handle)]
    out = ROOT / "data" / "drift_calibration.csv"
    with out.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["query", "domain", "term", "related", "source"])
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out}: {len(rows)} rows ({sum(int(r['related']) for r in rows)} related)")


if __name__ == "__main__":
    main()
