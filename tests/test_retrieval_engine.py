"""The embedded Tantivy engine (issue 34): the query template and its escaping, the index
folder (key, reuse, atomic build, concurrent builds) and the rankings it returns."""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import string
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import tantivy
from hypothesis import given, settings
from hypothesis import strategies as st

from termgate.retrieval import engine as engine_module
from termgate.retrieval import index_folder, query_template
from termgate.retrieval.engine import TantivyEngine, index_key
from termgate.retrieval.index_folder import MARKER, STALE_AFTER, remove_stale
from termgate.retrieval.outcome import Ranking
from termgate.retrieval.query_template import QueryTemplate, TemplateError, escape, format_weight


@dataclass(frozen=True)
class Corpus:
    """Stand-in for termgate.retrieval.inputs.Corpus: the engine reads these fields only."""

    path: str
    ids: list[str]
    titles: list[str]
    texts: list[str]
    hash: str


def make_corpus(rows: list[tuple[str, str, str]]) -> Corpus:
    ids, titles, texts = (list(column) for column in zip(*rows))
    return Corpus("corpus.jsonl", ids, titles, texts, hashlib.sha256(json.dumps(rows).encode()).hexdigest())


DESSERTS = make_corpus([
    ("d-apple", "Apple pie", "an apple pie recipe with cinnamon"),
    ("d-banana", "Loaf", "banana bread baked slowly"),
    ("d-cherry", "Tart", "cherry tart with almonds"),
    ("d-401k", "Retirement", "what is a 401(k)? a retirement plan"),
    ("d-hi", "Greeting", 'he said "hi" to me, then C++ & c# code: a+b AND NOT x'),
    ("d other", "Other", "nothing in common here"),
])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "indexes"


@pytest.fixture
def desserts(root: Path) -> TantivyEngine:
    return TantivyEngine(DESSERTS, root)


# --- the query template -------------------------------------------------------------


def test_the_docstring_example_renders_as_documented():
    doc = query_template.__doc__
    call = re.search(r"^    (QueryTemplate\(\)\.render\(.*\))$", doc, re.M).group(1)
    rendered = re.search(r"^renders\n\n    (.*)$", doc, re.M).group(1)
    assert eval(call, {"QueryTemplate": QueryTemplate}) == rendered
    assert rendered == r'(what is a 401\(k\)\?) OR ("say \"hi\""^0.5) OR ("roth ira"^1)'


def test_no_terms_or_only_weight_zero_terms_render_the_query_clause_alone():
    template = QueryTemplate()
    assert template.render("apple pie", []) == "apple pie"
    # a boost of 0 has no place in the query: the term is left out, with its OR
    assert template.render("apple pie", [("banana bread", 0.0), ("cherry", 1e-9)]) == "apple pie"
    assert template.render("apple pie", [("banana bread", 0.0), ("cherry", 0.25)]) == '(apple pie) OR ("cherry"^0.25)'
    assert template.render("", [("cherry", 1.0)]) == '"cherry"^1'
    assert template.render("  ", []) == ""


@pytest.mark.parametrize(("weight", "text"), [
    (1.0, "1"), (0.5, "0.5"), (0.1234567, "0.123457"), (0.000125, "0.000125"), (2e-7, "0"), (1e-5, "0.00001"),
])
def test_weights_are_written_in_fixed_point(weight, text):
    assert format_weight(weight) == text  # Tantivy's boost grammar has no exponent (".6g" gives 1e-05)
    _parser().parse_query(QueryTemplate().render("q", [("t", weight)]), ["title", "text"])  # Tantivy reads it


def test_a_custom_template_places_the_pieces():
    template = QueryTemplate(query="title:({query})^2 {query}", term="{term}^{weight}", fields=("text",))
    assert template.render("apple pie", [("tart", 0.5)]) == "(title:(apple pie)^2 apple pie) OR (tart^0.5)"
    assert template.describe() == {"query": "title:({query})^2 {query}", "term": "{term}^{weight}", "fields": ["text"]}


@pytest.mark.parametrize(("key", "kwargs", "says"), [
    ("query", {"query": "{q}"}, "unknown placeholder {q}"),
    ("query", {"query": "{query"}, "literal brace"),
    ("query", {"query": "pie"}, "must use {query}"),
    ("query", {"query": ""}, "non-empty"),
    ("term", {"term": '"{term}"^{weight:.2f}'}, "no format"),
    ("term", {"term": '"{term}"^{boost}'}, "unknown placeholder {boost}"),
    ("term", {"term": "{weight}"}, "must use {term}"),
    ("term", {"term": '"{term}"^^{weight}'}, "does not parse"),
    ("query", {"query": "({query}"}, "does not parse"),
    ("fields", {"fields": ("body",)}, "must name some of"),
    ("fields", {"fields": ()}, "must name some of"),
])
def test_a_bad_template_is_refused_naming_its_key(key, kwargs, says):
    with pytest.raises(TemplateError, match=re.escape(says)) as raised:
        QueryTemplate(**kwargs)
    assert raised.value.key == key and isinstance(raised.value, ValueError)
    assert f"`{key}`" in str(raised.value)


# --- escaping -----------------------------------------------------------------------


@pytest.mark.parametrize(("query", "expected"), [
    ("what is a 401(k)?", "d-401k"),
    ('he said "hi"', "d-hi"),
    ("C++ & c#: a+b", "d-hi"),
    ("AND NOT x", "d-hi"),  # words, not operators
    ("-banana +bread* [x] {y} ~z ^2 /re/ 'q' `b` ! \\", "d-banana"),
])
def test_special_characters_in_a_query_are_text(desserts, query, expected):
    [ranking] = desserts.search([(query, [])], depth=3)
    assert desserts.problems == []  # parsed as written, no fallback
    assert ranking.ids[0] == expected


@pytest.mark.parametrize(("term", "expected"), [
    ('said "hi"', "d-hi"),       # quotes inside the phrase
    ("401(k)?", "d-401k"),
    ("a+b AND NOT", "d-hi"),
    ("c++ & c#", "d-hi"),
])
def test_special_characters_in_a_term_are_text_inside_the_phrase(desserts, term, expected):
    [ranking] = desserts.search([("zzz", [(term, 1.0)])], depth=3)
    assert desserts.problems == []
    assert ranking.ids == [expected]
    assert desserts.matches(term, 1.0, DESSERTS.ids) == {expected}


@functools.cache
def _parser() -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("title")
    builder.add_text_field("text")
    return tantivy.Index(builder.build())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.one_of(st.sampled_from(string.printable + "é\u00a0\u2003\u3000“”"), st.characters()),
               max_size=40))
def test_any_escaped_text_parses_inside_and_outside_quotes(text):
    index = _parser()
    index.parse_query(f'"{escape(text)}"', ["title", "text"])
    try:
        index.parse_query(escape(text), ["title", "text"])
    except ValueError as exc:
        # Tantivy refuses a query all of whose words analyse to nothing; it matches nothing
        assert "Only excluding terms" in str(exc) and not any(c.isalnum() for c in text), text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(string.punctuation + " "), min_size=2, max_size=2),
       st.integers(0, 1), st.integers(2, 3))
def test_a_phrase_of_words_with_any_punctuation_between_matches_its_document(tmp_path_factory, seps, start, length):
    engine = _phrase_engine(tmp_path_factory)
    words = ["alpha", "beta", "gamma"][start:start + length]
    term = words[0] + "".join(sep + word for sep, word in zip(seps, words[1:]))
    assert engine.matches(term, 0.5, ["abc", "cba"]) == {"abc"}, term


_PHRASE_ENGINES: dict = {}


def _phrase_engine(factory) -> TantivyEngine:
    if "engine" not in _PHRASE_ENGINES:
        corpus = make_corpus([("abc", "", "alpha beta gamma"), ("cba", "", "gamma beta alpha")])
        _PHRASE_ENGINES["engine"] = TantivyEngine(corpus, factory.mktemp("phrases"))
    return _PHRASE_ENGINES["engine"]


def test_a_query_that_does_not_parse_has_no_results_and_is_listed(desserts):
    desserts.template = SimpleNamespace(render=lambda query, terms: query)  # no escaping at all
    rankings = desserts.search([("apple", []), ('apple "pie', []), ("cherry)", [])], depth=5)
    assert [p.request for p in desserts.problems] == [1, 2]
    assert desserts.problems[0].query == 'apple "pie' and "Syntax Error" in desserts.problems[0].message
    assert rankings[0].ids[0] == "d-apple" and rankings[1:] == [Ranking([], []), Ranking([], [])]
    desserts.search([("apple", [])], depth=5)
    assert desserts.problems == []  # the list is the last call's


def test_a_query_without_a_token_has_no_results_and_is_listed(desserts):
    # Tantivy's lenient parser would make `?? !!` a query matching every document
    rankings = desserts.search([("?? !!", []), ("?? !!", [("#", 1.0), ("apple", 0.5)])], depth=10)
    assert rankings[0] == Ranking([], []) and [p.request for p in desserts.problems] == [0]
    assert rankings[1].ids == ["d-apple"]


# --- rankings -----------------------------------------------------------------------


def test_rankings_hold_corpus_ids_in_request_order(desserts):
    rankings = desserts.search([("cherry", []), ("apple pie", []), ("nomatch", [])], depth=10)
    assert all(isinstance(r, Ranking) for r in rankings)
    assert [r.ids[:1] for r in rankings] == [["d-cherry"], ["d-apple"], []]
    assert rankings[2] == Ranking([], [])


def test_ids_with_spaces_come_back_as_they_are(desserts):
    assert desserts.search([("nothing common", [])], depth=1)[0].ids == ["d other"]


def test_boosts_move_documents_the_way_the_weights_say(desserts):
    # banana bread and cherry tart: two-word phrases in documents of the same length
    banana_first = desserts.search([("recipe", [("banana bread", 1.0), ("cherry tart", 0.1)])], depth=10)[0]
    cherry_first = desserts.search([("recipe", [("banana bread", 0.1), ("cherry tart", 1.0)])], depth=10)[0]
    assert banana_first.ids.index("d-banana") < banana_first.ids.index("d-cherry")
    assert cherry_first.ids.index("d-cherry") < cherry_first.ids.index("d-banana")
    unexpanded = desserts.search([("recipe", [])], depth=10)[0]
    assert unexpanded.ids == ["d-apple"]


def test_a_weight_zero_term_is_left_out_entirely(desserts):
    # Tantivy would match `"banana bread"^0` with score 0: the document must not come in
    [alone, with_zero] = desserts.search([("recipe", []), ("recipe", [("banana bread", 0.0)])], depth=10)
    assert with_zero == alone == Ranking(["d-apple"], alone.scores)
    assert desserts.matches("banana bread", 0.0, DESSERTS.ids) == set()


def test_tied_scores_become_strictly_decreasing_in_the_engines_order(root):
    twins = make_corpus([(f"twin-{i}", "same", "identical words here") for i in range(6)] + [("odd", "x", "y")])
    engine = TantivyEngine(twins, root)
    [ranking] = engine.search([("identical words", [])], depth=10)
    assert ranking.ids == [f"twin-{i}" for i in range(6)]  # equal scores: corpus order
    assert all(a > b for a, b in zip(ranking.scores, ranking.scores[1:]))
    # one single-precision step each, no more (pytrec_eval compares 32-bit floats: outcome.strictly_decreasing)
    assert ranking.scores[1] == float(np.nextafter(np.float32(ranking.scores[0]), np.float32(-np.inf)))
    assert ranking.scores[0] - ranking.scores[-1] < 6 * 2 * float(np.spacing(np.float32(ranking.scores[0])))


def _build_in_batches(self, folder, corpus):
    """A build that commits every 7 documents: an index of several segments, as a corpus
    beyond the writer's memory budget makes."""
    index = tantivy.Index(engine_module._schema(self.analyzer), path=str(folder), reuse=False)
    writer = index.writer(heap_size=50_000_000, num_threads=1)
    for position, (doc_id, title, text) in enumerate(zip(corpus.ids, corpus.titles, corpus.texts)):
        writer.add_document(tantivy.Document(id=doc_id, ord=position, title=title, text=text))
        if position % 7 == 6:
            writer.commit()
    writer.commit()
    writer.wait_merging_threads()
    return {"documents": len(corpus.ids)}


def test_several_segments_rank_as_one_does(tmp_path, monkeypatch):
    # three kinds of document, each many times: most scores tie, also across the depth cut
    kinds = ["red fox jumps", "red fox sleeps under the old tree", "blue fox"]
    corpus = make_corpus([(f"d{i:02d}", "", kinds[i % 3]) for i in range(45)])
    requests = [("red fox", []), ("fox", []), ("blue red", [("old tree", 0.5)]), ("sleeps", [])]
    one = TantivyEngine(corpus, tmp_path / "one")
    monkeypatch.setattr(TantivyEngine, "_build", _build_in_batches)
    several = TantivyEngine(corpus, tmp_path / "several")
    assert one.index.searcher().num_segments == 1 and several.index.searcher().num_segments > 3
    for depth in (1, 4, 10, 16, 100):
        assert several.search(requests, depth) == one.search(requests, depth), depth
    ranking = one.search([("red fox", [])], 4)[0]
    assert ranking.ids == ["d00", "d03", "d06", "d09"]  # the shortest documents, then corpus order


@pytest.mark.parametrize("depth", [1, 2, 5])
def test_depth_bounds_the_ranking(desserts, depth):
    [ranking] = desserts.search([("a apple banana cherry retirement hi", [])], depth=depth)
    assert len(ranking.ids) == len(ranking.scores) == depth


def test_depth_below_one_is_refused(desserts):
    with pytest.raises(ValueError, match="depth"):
        desserts.search([("apple", [])], depth=0)


def test_threads_do_not_change_the_rankings(root):
    corpus = make_corpus([(f"d{i}", f"title {i % 7}", f"w{i % 5} w{i % 11} w{i % 13} word") for i in range(300)])
    requests = [(f"w{i % 5} w{i % 13}", [(f"w{i % 11} word", 0.5)] if i % 2 else []) for i in range(700)]
    one = TantivyEngine(corpus, root, threads=1).search(requests, depth=20)
    two = TantivyEngine(corpus, root, threads=2).search(requests, depth=20)  # 3 blocks of 256
    assert one == two and len(one) == 700


def test_matches_names_the_documents_a_term_brings(desserts):
    assert desserts.matches("cinnamon", 0.3, ["d-apple", "d-banana", "d-unknown"]) == {"d-apple"}
    assert desserts.matches("apple recipe", 1.0, DESSERTS.ids) == set()  # a phrase, not two words
    assert desserts.matches("cherry", 1.0, ["d-banana"]) == set()  # only among the given ids
    assert desserts.matches("common", 1.0, ["d other"]) == {"d other"}


def test_describe_is_json_ready_and_names_the_index(desserts):
    facts = desserts.describe()
    assert json.loads(json.dumps(facts)) == facts
    assert facts == {"engine": "tantivy", "version": tantivy.__version__, "analyzer": "en_stem",
                     "fields": ["title", "text"], "template": QueryTemplate().describe(),
                     "index_key": desserts.key}
    assert desserts.folder.name == desserts.key


def test_an_unknown_analyzer_is_refused(root):
    with pytest.raises(ValueError, match="analyzer"):
        TantivyEngine(DESSERTS, root, analyzer="klingon")


def test_the_analyzer_decides_what_matches(root):
    stemmed = TantivyEngine(DESSERTS, root, analyzer="en_stem").search([("baking recipes", [])], depth=5)[0]
    plain = TantivyEngine(DESSERTS, root, analyzer="default").search([("baking recipes", [])], depth=5)[0]
    assert set(stemmed.ids) == {"d-apple", "d-banana"}  # bak(ed), recip(e)
    assert plain.ids == []


# --- the index folder ---------------------------------------------------------------


def test_the_key_changes_with_what_decides_the_index(monkeypatch):
    key = index_key("corpus-hash", "en_stem")
    assert re.fullmatch(r"[0-9a-f]{64}", key) and key == index_key("corpus-hash", "en_stem")
    assert index_key("other-hash", "en_stem") != key
    assert index_key("corpus-hash", "default") != key
    monkeypatch.setattr(tantivy, "__version__", "tantivy v9.9.9")
    assert index_key("corpus-hash", "en_stem") != key
    monkeypatch.undo()
    monkeypatch.setattr(engine_module, "LAYOUT", engine_module.LAYOUT + 1)
    assert index_key("corpus-hash", "en_stem") != key


def test_an_unchanged_key_reuses_the_folder(root):
    first = TantivyEngine(DESSERTS, root)
    before = (first.folder.stat().st_ino, (first.folder / MARKER).stat().st_mtime_ns,
              sorted(p.name for p in first.folder.iterdir()))
    second = TantivyEngine(DESSERTS, root)
    assert (first.built, second.built) == (True, False)
    assert second.folder == first.folder
    assert before == (second.folder.stat().st_ino, (second.folder / MARKER).stat().st_mtime_ns,
                      sorted(p.name for p in second.folder.iterdir()))
    assert second.search([("cherry", [])], 1) == first.search([("cherry", [])], 1)


def test_a_changed_corpus_or_analyzer_builds_another_folder(root):
    first = TantivyEngine(DESSERTS, root)
    changed = make_corpus([*zip(DESSERTS.ids, DESSERTS.titles, DESSERTS.texts), ("d-new", "New", "plum cake")])
    other = TantivyEngine(changed, root)
    plain = TantivyEngine(DESSERTS, root, analyzer="default")
    assert other.built and plain.built
    assert len({first.folder, other.folder, plain.folder}) == 3
    assert other.search([("plum", [])], 1)[0].ids == ["d-new"]
    assert sorted(p.name for p in root.iterdir()) == sorted([first.key, other.key, plain.key])


def test_a_build_that_fails_leaves_nothing_and_the_next_one_builds(root, monkeypatch):
    real = TantivyEngine._build

    def interrupted(self, folder, corpus):
        real(self, folder, corpus)  # the index is written, the marker and the rename are not
        raise KeyboardInterrupt

    monkeypatch.setattr(TantivyEngine, "_build", interrupted)
    with pytest.raises(KeyboardInterrupt):
        TantivyEngine(DESSERTS, root)
    assert list(root.iterdir()) == []
    monkeypatch.undo()
    engine = TantivyEngine(DESSERTS, root)
    assert engine.built and [p.name for p in root.iterdir()] == [engine.key]


def test_a_killed_builds_temporary_folder_is_never_used(root):
    key = index_key(DESSERTS.hash, "en_stem")
    leftover = root / f".build-{key[:16]}-killed"
    leftover.mkdir(parents=True)
    (leftover / "meta.json").write_text("{}")  # what a killed build leaves: no marker, no rename
    abandoned = root / ".build-0123456789abcdef-long-ago"
    abandoned.mkdir()
    long_ago = time.time() - STALE_AFTER - 60
    os.utime(abandoned, (long_ago, long_ago))
    engine = TantivyEngine(DESSERTS, root)
    assert engine.built and engine.folder == root / key
    assert leftover.exists()  # young: it might be a build in progress elsewhere
    assert not abandoned.exists()  # the build cleared what nothing had touched for long
    assert engine.search([("cherry", [])], 1)[0].ids == ["d-cherry"]


def test_a_folder_without_the_marker_is_rebuilt(root):
    engine = TantivyEngine(DESSERTS, root)
    (engine.folder / MARKER).unlink()  # as if the rename had happened before the marker
    inode = engine.folder.stat().st_ino
    again = TantivyEngine(DESSERTS, root)
    assert again.built and (again.folder / MARKER).exists()
    assert again.folder.stat().st_ino != inode
    assert sorted(p.name for p in root.iterdir()) == [engine.key]  # the old one is gone, not kept aside


def test_a_marker_for_another_key_is_not_complete(root):
    engine = TantivyEngine(DESSERTS, root)
    (engine.folder / MARKER).write_text(json.dumps({"key": "0" * 64}))
    assert TantivyEngine(DESSERTS, root).built


def test_old_temporary_folders_are_removed_young_ones_kept(root):
    root.mkdir()
    old, young, aside = root / ".build-aaaa-old", root / ".build-bbbb-young", root / ".stale-x"
    for folder in (old, young, aside):
        folder.mkdir()
        (folder / "segment").write_text("x")
    long_ago = time.time() - STALE_AFTER - 60
    for path in (old / "segment", old):
        os.utime(path, (long_ago, long_ago))
    os.utime(young, (long_ago, long_ago))  # the folder is old, but a file in it was just written
    (root / "not-ours").mkdir()
    assert sorted(p.name for p in remove_stale(root)) == [".build-aaaa-old", ".stale-x"]
    assert sorted(p.name for p in root.iterdir()) == [".build-bbbb-young", "not-ours"]


def test_two_builds_of_one_key_at_once_both_succeed(root, monkeypatch):
    real = TantivyEngine._build
    both_built = threading.Barrier(2, timeout=30)

    def build_then_wait(self, folder, corpus):
        facts = real(self, folder, corpus)
        both_built.wait()  # both have built their copy before either renames it into place
        return facts

    monkeypatch.setattr(TantivyEngine, "_build", build_then_wait)
    engines, errors = [], []

    def open_engine():
        try:
            engines.append(TantivyEngine(DESSERTS, root))
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_engine) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sorted(e.built for e in engines) == [False, True]  # one rename won, the other copy went
    assert [p.name for p in root.iterdir()] == [engines[0].key]
    assert engines[0].search([("tart", [])], 1) == engines[1].search([("tart", [])], 1)


def racer_corpus() -> Corpus:
    return make_corpus([(f"d{i}", f"title {i}", f"text {i} " * 50) for i in range(3000)])


_RACER = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_retrieval_engine import racer_corpus
from termgate.retrieval.engine import TantivyEngine
root, me = Path(sys.argv[1]), sys.argv[2]
corpus = racer_corpus()
real = TantivyEngine._build
def build(self, folder, corpus):
    facts = real(self, folder, corpus)
    (root.parent / f"built-{{me}}").touch()
    deadline = time.time() + 60
    while len(list(root.parent.glob("built-*"))) < 2 and time.time() < deadline:
        time.sleep(0.01)
    return facts
TantivyEngine._build = build
engine = TantivyEngine(corpus, root)
print(engine.built, engine.search([("text 7", [])], 1)[0].ids)
"""


@pytest.mark.slow
def test_two_processes_building_one_key_both_succeed(root, tmp_path):
    script = tmp_path / "racer.py"
    script.write_text(_RACER.format(tests=str(Path(__file__).parent)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    racers = [subprocess.Popen([sys.executable, str(script), str(root), name], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    results = [racer.communicate(timeout=120) for racer in racers]
    assert [r.returncode for r in racers] == [0, 0], results
    assert sorted(out for out, _ in results) == ["False ['d7']\n", "True ['d7']\n"]
    assert len(list(tmp_path.glob("built-*"))) == 2  # both really built a copy
    assert [p.name for p in root.iterdir()] == [index_key(racer_corpus().hash, "en_stem")]


def test_the_marker_records_the_build(desserts):
    marker = json.loads((desserts.folder / MARKER).read_text())
    assert marker == {"key": desserts.key, "documents": 6, "segments": 1, "analyzer": "en_stem",
                      "tantivy": tantivy.__version__, "layout": engine_module.LAYOUT}
    assert index_folder.is_complete(desserts.folder, desserts.key)
