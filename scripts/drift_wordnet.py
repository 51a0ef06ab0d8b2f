"""A small reader of the WordNet 3.0 database files (Debian's `wordnet-base`, in
/usr/share/wordnet), enough for scripts/build_drift_labels.py: synsets, their lemmas,
pointers (hypernym, hyponym, antonym, derivation, similar-to), sense ranks and tag counts.

Only the build script uses it; nothing at run time reads WordNet through this module.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

WORDNET = Path("/usr/share/wordnet")
POS_FILES = {"n": "noun", "a": "adj", "v": "verb"}
LEXNAMES = {0: "adj.all", 1: "adj.pert", 3: "noun.Tops", 4: "noun.act", 5: "noun.animal",
            6: "noun.artifact", 7: "noun.attribute", 8: "noun.body", 9: "noun.cognition",
            10: "noun.communication", 11: "noun.event", 12: "noun.feeling", 13: "noun.food",
            14: "noun.group", 15: "noun.location", 16: "noun.motive", 17: "noun.object",
            18: "noun.person", 19: "noun.phenomenon", 20: "noun.plant", 21: "noun.possession",
            22: "noun.process", 23: "noun.quantity", 24: "noun.relation", 25: "noun.shape",
            26: "noun.state", 27: "noun.substance", 28: "noun.time"}


@dataclass
class Synset:
    key: str                       # "n:02084071"
    pos: str                       # "n" or "a" (satellites "s" are stored as "a")
    lexfile: int
    lemmas: list[str]              # as written in the data file, "_" replaced by " "
    lex_ids: list[int]
    gloss: str
    pointers: list[tuple[str, str, int, int]] = field(default_factory=list)  # (symbol, target key, src word, dst word)

    def targets(self, *symbols: str) -> list[str]:
        return [t for s, t, _, _ in self.pointers if s in symbols]


class WordNet:
    def __init__(self, root: Path = WORDNET) -> None:
        if not (root / "data.noun").exists():
            raise SystemExit(f"WordNet 3.0 not found in {root}: apt-get install -y wordnet-base")
        self.synsets: dict[str, Synset] = {}
        self.senses: dict[tuple[str, str], list[str]] = {}   # (lemma lower, pos) -> synset keys, most frequent first
        self.counts: dict[tuple[str, str], int] = defaultdict(int)  # (lemma lower, synset key) -> tag count
        self.lemma_count: dict[str, int] = defaultdict(int)   # lemma lower -> tag count over all senses
        for pos, name in POS_FILES.items():
            self._read_data(root / f"data.{name}", pos)
            self._read_index(root / f"index.{name}", pos)
        self._read_counts(root / "cntlist.rev")
        lower = {w for synset in self.synsets.values() for w in synset.lemmas if w == w.lower()}
        # lemmas written only capitalised (names, places, acronyms): never used as terms
        self.proper = {w.lower() for synset in self.synsets.values() for w in synset.lemmas} - lower
        self._depth: dict[str, int] = {}
        self._ancestors: dict[str, dict[str, int]] = {}

    # ---------------------------------------------------------------- reading
    def _read_data(self, path: Path, pos: str) -> None:
        for line in path.read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            head, _, gloss = line.partition(" | ")
            parts = head.split()
            offset, lexfile, count = parts[0], int(parts[1]), int(parts[3], 16)
            lemmas, lex_ids = [], []
            for i in range(count):
                word = parts[4 + 2 * i]
                if pos == "a" and word.endswith(")"):
                    word = word[:word.index("(")]
                lemmas.append(word.replace("_", " "))
                lex_ids.append(int(parts[5 + 2 * i], 16))
            at = 4 + 2 * count
            p_cnt = int(parts[at])
            synset = Synset(f"{pos}:{offset}", pos, lexfile, lemmas, lex_ids, gloss.strip())
            for j in range(p_cnt):
                symbol, target, tpos, srcdst = parts[at + 1 + 4 * j: at + 5 + 4 * j]
                tpos = "a" if tpos == "s" else tpos
                if tpos not in POS_FILES:
                    continue
                synset.pointers.append((symbol, f"{tpos}:{target}", int(srcdst[:2], 16), int(srcdst[2:], 16)))
            self.synsets[synset.key] = synset

    def _read_index(self, path: Path, pos: str) -> None:
        for line in path.read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            parts = line.split()
            lemma, synset_cnt, p_cnt = parts[0], int(parts[2]), int(parts[3])
            offsets = parts[6 + p_cnt:6 + p_cnt + synset_cnt]
            self.senses[(lemma.replace("_", " "), pos)] = [f"{pos}:{o}" for o in offsets]

    def _read_counts(self, path: Path) -> None:
        # sense key lemma%ss_type:lexfile:lex_id:head:head_id -> synset via (lemma, lexfile, lex_id)
        where: dict[tuple[str, int, int, str], str] = {}
        for key, synset in self.synsets.items():
            for lemma, lex_id in zip(synset.lemmas, synset.lex_ids):
                where[(lemma.lower(), synset.lexfile, lex_id, synset.pos)] = key
        for line in path.read_text(encoding="latin-1").splitlines():
            sense_key, _, count = line.split()
            lemma, _, rest = sense_key.partition("%")
            ss_type, lexfile, lex_id = rest.split(":")[:3]
            pos = {"1": "n", "2": "v", "3": "a", "5": "a"}.get(ss_type)
            if pos is None:
                continue
            lemma = lemma.replace("_", " ")
            key = where.get((lemma, int(lexfile), int(lex_id), pos))
            if key is not None:
                self.counts[(lemma, key)] += int(count)
                self.lemma_count[lemma] += int(count)

    # ---------------------------------------------------------------- queries
    def rank(self, lemma: str, key: str) -> int:
        """Sense rank of `lemma` in synset `key` (0 = its most frequent sense), 99 if absent."""
        keys = self.senses.get((lemma.lower(), key[0]), [])
        return keys.index(key) if key in keys else 99

    def synsets_of(self, lemma: str, pos: str | None = None) -> list[str]:
        out = []
        for p in ([pos] if pos else list(POS_FILES)):
            out += self.senses.get((lemma.lower(), p), [])
        return out

    def pos_count(self, lemma: str, pos: str) -> int:
        return sum(self.counts[(lemma.lower(), k)] for k in self.synsets_of(lemma, pos))

    def noun_dominant(self, lemma: str) -> bool:
        """Mostly a noun: its noun senses are tagged more often than its verb and adjective senses."""
        noun = self.pos_count(lemma, "n")
        return noun > 0 and noun >= 2 * (self.pos_count(lemma, "v") + self.pos_count(lemma, "a"))

    def ancestors(self, key: str) -> dict[str, int]:
        """Hypernym ancestors (instance hypernyms too) of a synset with their distance, itself at 0."""
        if key in self._ancestors:
            return self._ancestors[key]
        out = {key: 0}
        frontier = [key]
        dist = 0
        while frontier:
            dist += 1
            nxt = []
            for k in frontier:
                for t in self.synsets[k].targets("@", "@i"):
                    if t not in out:
                        out[t] = dist
                        nxt.append(t)
            frontier = nxt
        self._ancestors[key] = out
        return out

    def depth(self, key: str) -> int:
        """Length of the longest hypernym path from the synset to a root (0 for a root)."""
        if key not in self._depth:
            ups = self.synsets[key].targets("@", "@i")
            self._depth[key] = 1 + max(self.depth(u) for u in ups) if ups else 0
        return self._depth[key]

    def distance(self, a: str, b: str) -> int:
        """Shortest hypernym-tree path between two synsets (99 if no common ancestor)."""
        aa, bb = self.ancestors(a), self.ancestors(b)
        common = set(aa) & set(bb)
        return min((aa[c] + bb[c] for c in common), default=99)

    def related_lemmas(self, lemma: str) -> set[str]:
        """Every lemma linked to `lemma` by a shared synset or any pointer, in any sense."""
        out = set()
        for key in self.synsets_of(lemma):
            synset = self.synsets[key]
            out.update(w.lower() for w in synset.lemmas)
            for _, target, _, _ in synset.pointers:
                out.update(w.lower() for w in self.synsets[target].lemmas)
        return out
