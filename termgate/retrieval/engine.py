"""The embedded search engine: Tantivy, Lucene-style BM25 with phrases and boosts (issue 34).

`TantivyEngine(corpus, index_root)` indexes a corpus (any object with `ids`, `titles`,
`texts` and `hash`, e.g. `inputs.Corpus`) once per index key and answers *requests*,
`(query_text, [(term, weight), ...])`, with rankings:

    engine = TantivyEngine(corpus, Path(".termgate/indexes"))
    [unexpanded, candidate] = engine.search([(q, []), (q, terms)], depth=100)

Schema: `id` (the corpus id, raw, stored, indexed untokenised), `title` and `text` (the
analyser, neither stored: a search needs ids only), and `ord` (the document's position in
the corpus, a fast field: a hit's id is read from it in one call per query, instead of one
stored-document read per hit; the key covers the corpus hash, so positions never go stale).

Rankings are reproducible: equal scores rank the earlier document of the corpus first (and
are then nudged strictly decreasing, `outcome.strictly_decreasing`), so two builds of one
index give the same rankings. One writer thread builds the index as one segment, in corpus
order, where Tantivy's own order (document number) is that rule; an index of several
segments (a corpus beyond the writer's memory budget) is ranked by the rule explicitly.

The index folder, its key and its atomic build: `index_folder`. The query syntax and
escaping: `query_template`.

A query that does not parse does not stop a run: its ranking is empty, and the request is
listed in `engine.problems` (`QueryProblem`: the request's position, the query, Tantivy's
message) for the last `search` call; the caller reports them. With the escaping of
`query_template`, what Tantivy refuses is a query none of whose words holds a token
(`?? !!`, a query of emoji), which matches nothing anyway, or a custom template that breaks
on some value. Tantivy's lenient parser is not used: for such a query it builds one that
matches every document.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import tantivy

from termgate.retrieval.index_folder import publish
from termgate.retrieval.outcome import Ranking, strictly_decreasing_each
from termgate.retrieval.query_template import SEARCHABLE_FIELDS, QueryTemplate, TemplateError

__all__ = ["ANALYZERS", "LAYOUT", "CorpusLike", "QueryProblem", "QueryTemplate", "TantivyEngine",
           "TemplateError", "index_key"]

LAYOUT = 1
"""Our index layout (schema, marker); bump it when either changes, and every key changes."""
ANALYZERS = ("en_stem", "default", "whitespace")
"""Tantivy's built-in analysers for text: lower-cased words with English stemming (the
default), lower-cased words without stemming, whitespace-separated tokens as they are (case
and punctuation kept). Tantivy's `raw` (the whole field one token) matches no query of
words, so it is not offered."""
_BLOCK = 256
"""Requests a search thread takes at a time."""
_HEAP = 1_000_000_000
"""The index writer's memory budget in bytes (a ceiling: it takes what the corpus needs).
One writer thread within it writes one segment, in corpus order: 100k documents of 100
words took under 100 MB, so about a million fit. A larger corpus spills into more segments."""


class CorpusLike(Protocol):
    """What the engine needs of a corpus (`termgate.retrieval.inputs.Corpus` has it)."""

    ids: list[str]
    titles: list[str]
    texts: list[str]
    hash: str


@dataclass(frozen=True)
class QueryProblem:
    """A request whose query did not parse as written."""

    request: int
    """Its position in the `search` call's requests."""
    query: str
    """The query as rendered."""
    message: str
    """Tantivy's message."""


def index_key(corpus_hash: str, analyzer: str) -> str:
    """The index folder's name: SHA-256 over what decides the index's content."""
    facts = {"corpus": corpus_hash, "tantivy": tantivy.__version__, "analyzer": analyzer, "layout": LAYOUT}
    return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()


def _cores() -> int:
    """The cores this process may run on (a container's CPU set, not the host's count)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _schema(analyzer: str) -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw", index_option="basic")
    builder.add_integer_field("ord", fast=True)
    for name in SEARCHABLE_FIELDS:
        builder.add_text_field(name, tokenizer_name=analyzer)
    return builder.build()


class TantivyEngine:
    """Tantivy over one corpus; see the module docstring."""

    def __init__(self, corpus: CorpusLike, index_root: Path, analyzer: str = "en_stem",
                 template: QueryTemplate | None = None, threads: int | None = None):
        """Open the index of `corpus` under `index_root`, building it first when its key
        has no complete folder there (`built` says which). `threads`: search threads, by
        default one per core."""
        if analyzer not in ANALYZERS:
            raise ValueError(f"unknown analyzer {analyzer!r}; use one of {', '.join(ANALYZERS)}")
        self.template = template or QueryTemplate()
        self.analyzer = analyzer
        self.key = index_key(corpus.hash, analyzer)
        self.folder = Path(index_root) / self.key
        self._ids = list(corpus.ids)
        self.built = publish(Path(index_root), self.key, lambda folder: self._build(folder, corpus))
        self._index = tantivy.Index.open(str(self.folder))
        self._index.config_reader(reload_policy="manual")  # a complete index never changes: no watcher
        self._searcher = self._index.searcher()
        if self._searcher.num_docs != len(self._ids):
            raise ValueError(f"index {self.folder} holds {self._searcher.num_docs} documents, the corpus "
                             f"{len(self._ids)}: remove the folder and run again")
        self._segments = self._searcher.num_segments
        self._fields = list(self.template.fields)
        self.threads = max(1, threads if threads is not None else _cores())
        self.problems: list[QueryProblem] = []

    @property
    def index(self) -> tantivy.Index:
        """The open Tantivy index (its `ord` fast field is a hit's position in the corpus)."""
        return self._index

    def _build(self, folder: Path, corpus: CorpusLike) -> dict:
        index = tantivy.Index(_schema(self.analyzer), path=str(folder), reuse=False)
        writer = index.writer(heap_size=_HEAP, num_threads=1)
        document = tantivy.Document
        for position, (doc_id, title, text) in enumerate(zip(corpus.ids, corpus.titles, corpus.texts)):
            writer.add_document(document(id=doc_id, ord=position, title=title, text=text))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        return {"documents": len(corpus.ids), "segments": index.searcher().num_segments,
                "analyzer": self.analyzer, "tantivy": tantivy.__version__, "layout": LAYOUT}

    def search(self, requests: Sequence[tuple[str, Sequence[tuple[str, float]]]], depth: int) -> list[Ranking]:
        """One ranking per request, in order: at most `depth` corpus ids, best first,
        scores strictly decreasing. `problems` lists the requests whose query did not
        parse. Requests are searched on `threads` threads (Tantivy releases the GIL while
        it searches), in blocks, so the rankings do not depend on the thread count."""
        if depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth}")
        blocks = [range(start, min(start + _BLOCK, len(requests))) for start in range(0, len(requests), _BLOCK)]
        if self.threads > 1 and len(blocks) > 1:
            with ThreadPoolExecutor(self.threads, thread_name_prefix="tantivy-search") as pool:
                done = list(pool.map(lambda block: self._search_block(requests, block, depth), blocks))
        else:
            done = [self._search_block(requests, block, depth) for block in blocks]
        self.problems = [problem for _, problems in done for problem in problems]
        return [ranking for rankings, _ in done for ranking in rankings]

    def _search_block(self, requests: Sequence, block: range,
                      depth: int) -> tuple[list[Ranking], list[QueryProblem]]:
        render, ids = self.template.render, self._ids
        rankings, problems = [], []
        for position in block:
            rendered = render(*requests[position])
            query, problem = self._parse(rendered)
            if problem:
                problems.append(QueryProblem(position, rendered, problem))
            if query is None:
                rankings.append(([], []))
                continue
            scores, ords = self._top(query, depth) if self._segments > 1 else self._top_of_one(query, depth)
            rankings.append((list(map(ids.__getitem__, ords)), scores))
        # BM25 over quantised document lengths ties often: most rankings need the nudge, done for the block at once
        nudged = strictly_decreasing_each([scores for _, scores in rankings])
        return [Ranking(ids=found, scores=scores) for (found, _), scores in zip(rankings, nudged)], problems

    def _top_of_one(self, query: tantivy.Query, depth: int) -> tuple[list[float], list[int]]:
        """Scores and corpus positions of the best `depth` hits in a one-segment index:
        Tantivy ranks equal scores by document number, which is the corpus position."""
        hits = self._searcher.search(query, depth, count=False).hits
        if not hits:
            return [], []
        scores, addresses = zip(*hits)
        return list(scores), self._searcher.fast_field_values("ord", list(addresses))

    def _top(self, query: tantivy.Query, depth: int) -> tuple[list[float], list[int]]:
        """The same over several segments, whose order Tantivy takes from random segment
        ids: hits are fetched until every one tied with the last kept is in, then ranked by
        score and corpus position."""
        limit = depth + 1
        while True:
            scores, ords = self._top_of_one(query, limit)
            if len(scores) < limit or scores[-1] < scores[depth - 1]:
                break
            limit *= 2
        best = sorted(zip(scores, ords), key=lambda hit: (-hit[0], hit[1]))[:depth]
        return [score for score, _ in best], [position for _, position in best]

    def _ords(self, hits: list) -> list[int]:
        if not hits:
            return []
        return self._searcher.fast_field_values("ord", [address for _, address in hits])

    def _parse(self, text: str) -> tuple[tantivy.Query | None, str]:
        """The query, or None and Tantivy's message."""
        try:
            return self._index.parse_query(text, self._fields), ""
        except ValueError as exc:
            return None, f"{exc}; searched nothing"

    def matches(self, term: str, weight: float, doc_ids: Iterable[str]) -> set[str]:
        """Which of `doc_ids` match the clause of one expansion term (its phrase in the
        template's fields): what "this term brought the document in" needs. Empty for a
        term that is left out of the query (weight 0); unknown ids are ignored."""
        wanted = list(dict.fromkeys(doc_ids))
        clause = self.template.term_clause(term, weight)
        if not clause or not wanted:
            return set()
        query, _ = self._parse(clause)
        if query is None:
            return set()
        within = tantivy.Query.term_set_query(self._index.schema, "id", wanted)
        both = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, within)])
        hits = self._searcher.search(both, len(wanted), count=False).hits
        return {self._ids[o] for o in self._ords(hits)}

    def describe(self) -> dict:
        """JSON-ready: the engine, its version and its configuration, for the run's content
        hash and report."""
        return {"engine": "tantivy", "version": tantivy.__version__, "analyzer": self.analyzer,
                "fields": list(SEARCHABLE_FIELDS), "template": self.template.describe(),
                "index_key": self.key}
