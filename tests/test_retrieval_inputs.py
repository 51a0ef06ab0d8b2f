"""The retrieval inputs (issue 34): corpus, qrels and TREC run files, read and validated
like every other input (one `FILE:LINE: FIELD: message` problem per fault, exit 2), ids
percent-encoded in TREC files, hashes over content, and run files ordered as trec_eval
orders them.

Each bad case is a hand-made file with one fault, after a valid line so its line number
is not trivially 1.
"""

from __future__ import annotations

import doctest
import hashlib
import io
import json
import math
import re
import sys
from pathlib import Path

import numpy as np
import pytest
import pytrec_eval
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from termgate.errors import InputError, Problem
from termgate.io import query_id_problem
from termgate.retrieval import inputs
from termgate.retrieval.inputs import (decode_id, encode_id, load_corpus, load_qrels, read_run, run_file_hash,
                                       write_run)
from termgate.retrieval.outcome import Ranking, strictly_decreasing

from helpers_io import PROBLEM_LINE

TMP = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _write(path: Path, lines: list[str | dict], ending: str = "\n") -> Path:
    path.write_bytes("".join((x if isinstance(x, str) else json.dumps(x)) + ending for x in lines).encode("utf-8"))
    return path


def _only_problem(exc: InputError) -> Problem:
    assert len(exc.problems) == 1, exc.lines()
    return exc.problems[0]


def _assert_problem(load, path: Path, line: int, field: str, phrase: str) -> None:
    with pytest.raises(InputError) as info:
        load(path)
    problem = _only_problem(info.value)
    assert (problem.file, problem.line, problem.field) == (str(path), line, field), problem
    assert re.search(phrase, problem.message), problem.message


# ---------------------------------------------------------------- the module docstring


def test_the_docstring_examples_run():
    assert doctest.testmod(inputs).failed == 0


def _docstring_blocks() -> list[list[str]]:
    """The indented example files of the module docstring (doctests left out), in order."""
    blocks: list[list[str]] = [[]]
    for line in inputs.__doc__.splitlines():
        if line.startswith("    ") and not line.lstrip().startswith((">>>", "(", "'")):
            blocks[-1].append(line[4:])
        elif blocks[-1]:
            blocks.append([])
    return [b for b in blocks if b]


def test_the_docstring_files_read_as_it_says(tmp_path):
    corpus, trec, jsonl = _docstring_blocks()
    loaded = load_corpus(_write(tmp_path / "corpus.jsonl", corpus))
    assert loaded.ids == ["d1", "d 2"] and loaded.titles[1] == ""  # title defaults to "", "source" ignored
    # "These two files hold the same judgments", the TREC one with d%202 encoded
    a, b = load_qrels(_write(tmp_path / "q.txt", trec)), load_qrels(_write(tmp_path / "q.jsonl", jsonl))
    assert a.judgments == b.judgments == {"q1": {"d1": 2, "d 2": 0}}
    assert a.hash == b.hash
    # the documented canonical forms
    docs = zip(loaded.ids, loaded.titles, loaded.texts)
    lines = "".join(json.dumps(list(d), ensure_ascii=False, separators=(",", ":")) + "\n" for d in docs)
    assert loaded.hash == hashlib.sha256(lines.encode("utf-8")).hexdigest()
    rows = sorted((q, d, g) for q, docs in a.judgments.items() for d, g in docs.items())
    lines = "".join(json.dumps(list(r), ensure_ascii=False, separators=(",", ":")) + "\n" for r in rows)
    assert a.hash == hashlib.sha256(lines.encode("utf-8")).hexdigest()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(), min_size=3, max_size=3))
def test_the_canonical_json_is_what_json_dumps_writes(values):
    """The docstring defines the hashed lines by json.dumps; the code writes them with orjson."""
    if any(0xD800 <= ord(c) <= 0xDFFF for v in values for c in v):
        return  # no UTF-8 file holds a lone surrogate
    assert inputs.orjson.dumps(values) == json.dumps(values, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------- ids in TREC files


def test_every_white_space_character_is_encoded_and_nothing_else():
    spaces = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]
    for ch in spaces:
        encoded = encode_id(f"a{ch}b")
        assert encoded.split() == [encoded] and decode_id(encoded) == f"a{ch}b"
    assert encode_id(" \t\u00a0\u3000%") == "%20%09%C2%A0%E3%80%80%25"
    assert encode_id("Ünïcödé/+&=#?\x00") == "Ünïcödé/+&=#?\x00"  # not white space: as it is


def test_decode_undoes_only_what_encode_writes():
    assert decode_id("100%pure") == "100%pure"  # a % that starts no escape is kept
    assert decode_id("%41%zz%") == "%41%zz%"  # %41 is "A", but encode_id never writes it
    assert decode_id("a%2520") == "a%20"  # %25 first: the rest is text
    assert decode_id("%c2%a0%0a") == "\u00a0\n"  # hex in either case


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_decode_reverses_encode(value):
    encoded = encode_id(value)
    assert decode_id(encoded) == value
    assert not any(c.isspace() for c in encoded)


@settings(max_examples=300, deadline=None)
@given(st.text().filter(lambda v: "%" not in v and not any(c.isspace() for c in v)))
def test_an_id_without_percent_or_white_space_is_written_as_it_is(value):
    assert encode_id(value) == value == decode_id(value)


# ---------------------------------------------------------------- corpus

DOC = {"id": "d0", "title": "Heart attack", "text": "Myocardial infarction"}

CORPUS_BAD = [
    pytest.param([DOC, {"title": "t", "text": "x"}], 2, "id", r"required field is missing", id="id-missing"),
    pytest.param([DOC, {"id": "", "text": "x"}], 2, "id", r"must not be empty", id="id-empty"),
    pytest.param([DOC, {"id": 7, "text": "x"}], 2, "id", r"must be a string \(got 7\)", id="id-number"),
    pytest.param([DOC, {"id": "a\u0000b", "text": "x"}], 2, "id", r"U\+0000", id="id-nul"),
    pytest.param([DOC, {"id": "d1", "title": None, "text": "x"}], 2, "title", r"got null", id="title-null"),
    pytest.param([DOC, {"id": "d1", "title": True, "text": "x"}], 2, "title", r"got true", id="title-bool"),
    pytest.param([DOC, {"id": "d1", "text": 3.5}], 2, "text", r"must be a string \(got 3\.5\)", id="text-number"),
    pytest.param([DOC, {"id": "d1", "title": "t"}], 2, "text", r"required field is missing", id="text-missing"),
    pytest.param([DOC, {"id": "d1", "title": " ", "text": "\t"}], 2, "text", r"no title and no text",
                 id="nothing-to-search"),
    pytest.param([DOC, "", {"id": "d0", "text": "again"}], 3, "id", r"duplicate id \"d0\" \(first on line 1\)",
                 id="duplicate-id"),
    pytest.param([DOC, '["d1", "t", "x"]'], 2, "json", r"expected a JSON object", id="array"),
    pytest.param([DOC, '{"id": "d1", "text": '], 2, "json", r"malformed JSON", id="malformed"),
    pytest.param([DOC, '{"id": "d1", "text": NaN}'], 2, "json", r"malformed JSON", id="nan"),
    pytest.param([DOC, '{"id": "d1", "text": "x", "id": "d2"}'], 2, "id", r"repeated key 'id'", id="repeated-key"),
    pytest.param(["", "  "], 0, "corpus", r"no documents", id="blank-file"),
    pytest.param([], 0, "corpus", r"no documents", id="empty-file"),
]


@pytest.mark.parametrize(("lines", "line", "field", "phrase"), CORPUS_BAD)
def test_corpus_bad_input(tmp_path, lines, line, field, phrase):
    _assert_problem(load_corpus, _write(tmp_path / "corpus.jsonl", lines), line, field, phrase)


def test_corpus_reads_documents_in_order_with_title_optional(tmp_path):
    path = _write(tmp_path / "c.jsonl", [DOC, {"id": "d 1", "text": "", "title": "only a title", "lang": "en"},
                                         {"id": "d2", "text": "only text"}])
    corpus = load_corpus(path)
    assert corpus.path == str(path)
    assert corpus.ids == ["d0", "d 1", "d2"]
    assert corpus.titles == ["Heart attack", "only a title", ""]
    assert corpus.texts == ["Myocardial infarction", "", "only text"]


def test_corpus_bom_crlf_and_blank_lines(tmp_path):
    """Read as every JSONL input is: the BOM dropped, CRLF read as LF, blank lines counted."""
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + f'{json.dumps(DOC)}\r\n\r\n{{"id": 1, "text": "x"}}\r\n'.encode())
    _assert_problem(load_corpus, path, 3, "id", r"got 1")
    path.write_bytes(b"\xef\xbb\xbf" + f'{json.dumps(DOC)}\r\n\r\n'.encode())
    assert load_corpus(path).ids == ["d0"]


def test_corpus_not_utf8_names_the_line(tmp_path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(json.dumps(DOC).encode() + b'\n{"id": "d1", "text": "caf\xe9"}\n')
    _assert_problem(load_corpus, path, 2, "encoding", r"not UTF-8 \(byte 0xe9")


def test_corpus_missing_file(tmp_path):
    _assert_problem(load_corpus, tmp_path / "nope.jsonl", 0, "corpus", r"file not found")


def test_corpus_collects_every_problem(tmp_path):
    path = _write(tmp_path / "c.jsonl", [DOC, {"id": 1, "title": 2, "text": "x"}, "[]", {"id": "d0", "text": "x"}])
    with pytest.raises(InputError) as info:
        load_corpus(path)
    assert [(p.line, p.field) for p in info.value.problems] == [(2, "id"), (2, "title"), (3, "json"), (4, "id")]


def test_corpus_hash_is_over_the_documents_not_the_bytes(tmp_path):
    docs = [{"id": "é 1", "title": "", "text": "x"}, {"id": "2", "text": "y"}]
    plain = load_corpus(_write(tmp_path / "a.jsonl", docs))
    # other key order, spacing, escapes, no title instead of "", an ignored key, BOM, CRLF, blank lines
    same = tmp_path / "b.jsonl"
    same.write_bytes(b'\xef\xbb\xbf{ "text" : "x",  "id":"\\u00e9 1"}\r\n\r\n'
                     b'{"id": "2", "title": "", "text": "y", "k": 1}\r\n')
    assert load_corpus(same).hash == plain.hash
    changed = [
        [{"id": "2", "text": "y"}, {"id": "é 1", "text": "x"}],  # order
        [{"id": "é 1", "text": "x"}, {"id": "2", "text": "y "}],  # a text
        [{"id": "é 1", "title": "x", "text": ""}, {"id": "2", "text": "y"}],  # text moved into the title
        [{"id": "é 2", "text": "x"}, {"id": "2", "text": "y"}],  # an id
    ]
    hashes = {load_corpus(_write(tmp_path / f"{i}.jsonl", docs)).hash for i, docs in enumerate(changed)}
    assert plain.hash not in hashes and len(hashes) == len(changed)


@pytest.mark.slow
def test_corpus_of_many_documents_loads(tmp_path):
    """A corpus of 20k documents of ~1 KB loads whole (bench/ measures the time, not a test)."""
    path = tmp_path / "big.jsonl"
    path.write_text("".join(json.dumps({"id": f"d{i}", "title": f"t {i}", "text": "word " * 200}) + "\n"
                            for i in range(20_000)))
    corpus = load_corpus(path)
    assert len(corpus.ids) == 20_000 and corpus.ids[-1] == "d19999"


# ---------------------------------------------------------------- qrels

TREC_OK = "q0 0 d0 1"
JSONL_OK = {"query_id": "q0", "doc_id": "d0", "grade": 1}

QRELS_BAD = [
    pytest.param([TREC_OK, "q1 0 d1"], 2, "fields", r"expected 4 fields .*found 3", id="trec-3-fields"),
    pytest.param([TREC_OK, "q1 0 d 1 2"], 2, "fields", r"found 5", id="trec-space-in-id"),
    pytest.param([TREC_OK, "q1 0 d1 1.0"], 2, "grade", r"must be an integer .*\(got \"1\.0\"\)", id="trec-float"),
    pytest.param([TREC_OK, "q1 0 d1 high"], 2, "grade", r"got \"high\"", id="trec-word"),
    pytest.param([TREC_OK, "q1 0 d1 2147483648"], 2, "grade", r"integer in", id="trec-too-large"),
    pytest.param([TREC_OK, "q%091 0 d1 1"], 2, "query_id", r"U\+0009", id="trec-tab-in-query-id"),
    pytest.param([TREC_OK, "q1%20 0 d1 1"], 2, "query_id", r"white space", id="trec-padded-query-id"),
    pytest.param([TREC_OK, "", "q0 7 d0 1"], 3, "doc_id", r"\"d0\" is judged twice .*\(first on line 1\)",
                 id="trec-same-pair-same-grade"),
    pytest.param([TREC_OK, "q0 0 d0 3"], 2, "doc_id", r"judged twice", id="trec-same-pair-other-grade"),
    pytest.param([JSONL_OK, {"query_id": "q1", "doc_id": "d1", "grade": 1.0}], 2, "grade", r"\(got 1\.0\)",
                 id="jsonl-float"),
    pytest.param([JSONL_OK, {"query_id": "q1", "doc_id": "d1", "grade": True}], 2, "grade", r"\(got true\)",
                 id="jsonl-bool"),
    pytest.param([JSONL_OK, {"query_id": "q1", "doc_id": "d1", "grade": "2"}], 2, "grade", r"\(got \"2\"\)",
                 id="jsonl-string"),
    pytest.param([JSONL_OK, {"query_id": "q1", "doc_id": "d1"}], 2, "grade", r"required field is missing",
                 id="jsonl-grade-missing"),
    pytest.param([JSONL_OK, {"query_id": 1, "doc_id": "d1", "grade": 1}], 2, "query_id", r"got 1", id="jsonl-qid"),
    pytest.param([JSONL_OK, {"query_id": "q1", "doc_id": "", "grade": 1}], 2, "doc_id", r"must not be empty",
                 id="jsonl-empty-doc"),
    pytest.param([JSONL_OK, {"query_id": "q0", "doc_id": "d0", "grade": 1}], 2, "doc_id", r"first on line 1",
                 id="jsonl-same-pair"),
    pytest.param([JSONL_OK, "q1 0 d1 1"], 2, "json", r"malformed JSON", id="jsonl-then-trec"),
    pytest.param([JSONL_OK, "7"], 2, "json", r"expected a JSON object", id="jsonl-not-object"),
    pytest.param(["", " "], 0, "qrels", r"no judgments", id="blank-file"),
]


@pytest.mark.parametrize(("lines", "line", "field", "phrase"), QRELS_BAD)
def test_qrels_bad_input(tmp_path, lines, line, field, phrase):
    _assert_problem(load_qrels, _write(tmp_path / "qrels", lines), line, field, phrase)


def test_qrels_trec_and_jsonl_read_alike(tmp_path):
    trec = _write(tmp_path / "q.txt", ["", "q1 0 d1 2", "q1\t0 d%202  -1", "q%202 0 d1 0"],
                  ending="\r\n")
    jsonl = _write(tmp_path / "q.jsonl", ["", {"query_id": "q 2", "doc_id": "d1", "grade": 0, "note": "x"},
                                          {"grade": -1, "doc_id": "d 2", "query_id": "q1"},
                                          {"query_id": "q1", "doc_id": "d1", "grade": 2}])
    a, b = load_qrels(trec), load_qrels(jsonl)  # the JSONL one starts with a blank line: told apart by "{"
    assert a.judgments == b.judgments == {"q1": {"d1": 2, "d 2": -1}, "q 2": {"d1": 0}}  # negative grades kept
    assert a.hash == b.hash  # any order, either format
    assert a.path == str(trec)


def test_qrels_hash_ignores_the_iteration_and_follows_the_judgments(tmp_path):
    base = load_qrels(_write(tmp_path / "a", ["q1 0 d1 1", "q1 0 d2 0"])).hash
    assert load_qrels(_write(tmp_path / "b", ["q1 iter7 d1 1", "q1 Q0 d2 0"])).hash == base
    others = [["q1 0 d1 2", "q1 0 d2 0"], ["q1 0 d1 1"], ["q1 0 d1 1", "q2 0 d2 0"], ["q1 0 d1 1", "q1 0 d3 0"]]
    assert base not in {load_qrels(_write(tmp_path / f"o{i}", lines)).hash for i, lines in enumerate(others)}


def test_qrels_bom_and_not_utf8(tmp_path):
    path = tmp_path / "q.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(JSONL_OK).encode() + b"\n")
    assert load_qrels(path).judgments == {"q0": {"d0": 1}}  # the BOM is not the first character
    path.write_bytes(b"q0 0 d0 1\nq1 0 d\xff 1\n")
    _assert_problem(load_qrels, path, 2, "encoding", r"not UTF-8")


# ---------------------------------------------------------------- run files


def test_write_run_writes_the_documented_lines_and_returns_their_hash(tmp_path):
    run = {"q 1": Ranking(["d1", "d%2"], [2.5, 1e-300]), "q0": Ranking([], []), "q2": Ranking(["d1"], [-0.0])}
    stream = io.BytesIO()
    digest = write_run(stream, run, "my run")
    assert stream.getvalue() == (b"q%201 Q0 d1 1 2.5 my%20run\n"
                                 b"q%201 Q0 d%252 2 1e-300 my%20run\n"
                                 b"q2 Q0 d1 1 -0.0 my%20run\n")  # q0 has no results: no line
    assert digest == hashlib.sha256(stream.getvalue()).hexdigest() == run_file_hash(run, "my run")
    assert write_run(None, run, "my run") == digest
    assert write_run(tmp_path / "run.txt", run, "my run") == digest
    assert (tmp_path / "run.txt").read_bytes() == stream.getvalue()
    assert [p.name for p in tmp_path.iterdir()] == ["run.txt"]  # no temporary file left


def test_write_run_writes_numpy_and_int_scores_as_floats():
    """An engine's numpy scores: repr(np.float64(2.5)) is 'np.float64(2.5)', not a TREC score."""
    as_floats = run_file_hash({"q1": Ranking(["a", "b", "c"], [3.0, 2.5, 1.0])}, "t")
    assert run_file_hash({"q1": Ranking(["a", "b", "c"], [3, np.float64(2.5), np.float32(1.0)])}, "t") == as_floats


@pytest.mark.parametrize(("ranking", "phrase"), [
    (Ranking(["a", "b"], [1.0, 1.0]), r"not strictly decreasing"),
    (Ranking(["a", "b"], [1.0, 2.0]), r"not strictly decreasing"),
    (Ranking(["a", "b"], [1.0, math.nan]), r"not finite"),
    (Ranking(["a"], [math.inf]), r"not finite"),
    (Ranking(["a", "b"], [1.0]), r"2 ids but 1 scores"),
    (Ranking(["a", "a"], [2.0, 1.0]), r"ranked twice"),
    (Ranking(["a", ""], [2.0, 1.0]), r"doc id must not be empty"),
    (Ranking(["a\x00"], [2.0]), r"doc id .*U\+0000"),
    (Ranking(["é", "\ud800"], [2.0, 1.0]), r"doc id .*lone surrogate"),
])
def test_write_run_refuses_what_read_run_would_not_read_back_and_writes_nothing(tmp_path, ranking, phrase):
    run = {"q0": Ranking(["x"], [1.0]), "q1": ranking}
    stream, target = io.BytesIO(), tmp_path / "run.txt"
    for where in (stream, target, None):
        with pytest.raises(ValueError, match=phrase):
            write_run(where, run, "t")
    assert stream.getvalue() == b"" and not any(tmp_path.iterdir())


def test_write_run_refuses_a_bad_query_id_or_tag():
    with pytest.raises(ValueError, match=r"U\+0009"):
        write_run(None, {"q\t1": Ranking(["a"], [1.0])}, "t")
    with pytest.raises(ValueError, match=r"tag"):
        write_run(None, {"q1": Ranking(["a"], [1.0])}, "")


def test_write_run_failing_midway_leaves_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "run.txt"
    target.write_bytes(b"old\n")
    real = inputs.encode_id

    def encode_id(value):  # a failure once q1's lines are written, as a full disk would
        if value == "q2":
            raise OSError("disk full")
        return real(value)

    monkeypatch.setattr(inputs, "encode_id", encode_id)
    with pytest.raises(OSError):
        write_run(target, {"q1": Ranking(["a", "b"], [2.0, 1.0]), "q2": Ranking(["a"], [1.0])}, "t")
    assert target.read_bytes() == b"old\n" and [p.name for p in tmp_path.iterdir()] == ["run.txt"]


_text = st.text(st.characters(exclude_categories=("Cs",)), min_size=1)  # no lone surrogate: no UTF-8 file holds one
_doc_ids = _text.filter(lambda v: "\x00" not in v)
_query_ids = _text.filter(lambda v: query_id_problem(v) is None)


@st.composite
def _runs(draw):
    run = {}
    for qid in draw(st.lists(_query_ids, min_size=1, max_size=4, unique=True)):
        ids = draw(st.lists(_doc_ids, min_size=1, max_size=6, unique=True))
        scores = draw(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=len(ids),
                               max_size=len(ids), unique=True))
        # as every engine's ranking: strictly decreasing in single precision (outcome.strictly_decreasing)
        run[qid] = Ranking(ids, strictly_decreasing(sorted(scores, reverse=True)))
    return run


@TMP
@given(run=_runs(), tag=_doc_ids)
def test_read_run_reads_back_what_write_run_wrote(tmp_path, run, tag):
    """Ids with spaces, tabs, %, any script; scores of any size, -0.0 and 0.0 apart from it."""
    path = tmp_path / "run.txt"
    digest = write_run(path, run, tag)
    back = read_run(path)
    assert back == run and list(back) == list(run)
    assert [[str(s) for s in r.scores] for r in back.values()] == [[str(s) for s in r.scores] for r in run.values()]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def _trec_eval_order(qid: str, file_docs: dict[str, float]) -> list[str]:
    """The order pytrec_eval ranks `file_docs` in: judge one doc relevant at a time and read
    its rank off the reciprocal rank."""
    rank = {}
    for doc in file_docs:
        evaluator = pytrec_eval.RelevanceEvaluator({qid: {doc: 1}}, {"recip_rank"})
        rank[doc] = round(1 / evaluator.evaluate({qid: file_docs})[qid]["recip_rank"])
    return sorted(file_docs, key=rank.get)


def test_read_run_orders_as_trec_eval_does(tmp_path):
    """Lines out of order, and ties: trec_eval ranks by score, then doc id descending."""
    lines = ["q1 Q0 b 1 1.0 t", "q1 Q0 a 2 3.0 t", "q1 Q0 c 3 1.0 t", "q1 Q0 B 4 1.0 t", "q1 Q0 é 5 0.5 t",
             "q1 Q0 z 6 0.5 t", "q1 Q0 x 7 -0 t", "q1 Q0 y 8 0.0 t"]
    ranking = read_run(_write(tmp_path / "run.txt", lines))["q1"]
    assert ranking.ids == ["a", "c", "b", "B", "é", "z", "y", "x"]
    assert ranking.ids == _trec_eval_order("q1", {"a": 3.0, "b": 1.0, "c": 1.0, "B": 1.0, "é": 0.5, "z": 0.5,
                                                   "x": -0.0, "y": 0.0})
    # made strictly decreasing, in that order: the tied b is one step below c
    assert all(b < a for a, b in zip(ranking.scores, ranking.scores[1:]))
    assert ranking.scores[:3] == [3.0, 1.0, float(np.nextafter(np.float32(1.0), np.float32(-np.inf)))]
    # P@1 as pytrec_eval scores the file is P@1 of the ranking read: c, tied with b and B, is first
    p1 = pytrec_eval.RelevanceEvaluator({"q1": {"c": 1}}, {"P_1"}).evaluate({"q1": {"c": 1.0, "b": 1.0, "B": 1.0}})
    assert p1["q1"]["P_1"] == 1.0


@TMP
@given(st.lists(st.tuples(st.sampled_from("abcdeé0Z"), st.sampled_from([0.0, 1.0, 2.5, -1.0])), min_size=1,
                max_size=8, unique_by=lambda t: t[0]))
def test_read_run_order_is_pytrec_evals_on_random_ties(tmp_path, docs):
    path = _write(tmp_path / "run.txt", [f"q1 Q0 {d} {i} {s!r} t" for i, (d, s) in enumerate(docs, 1)])
    assert read_run(path)["q1"].ids == _trec_eval_order("q1", dict(docs))


def test_read_run_keeps_queries_in_order_of_first_appearance(tmp_path):
    path = _write(tmp_path / "run.txt", ["q2 Q0 a 1 2 t", "q1 Q0 a 1 2 t", "q2 Q0 b 2 1 t"])
    assert read_run(path) == {"q2": Ranking(["a", "b"], [2.0, 1.0]), "q1": Ranking(["a"], [2.0])}
    assert list(read_run(path)) == ["q2", "q1"]


RUN_OK = "q0 Q0 d0 1 1.5 t"

RUN_BAD = [
    pytest.param([RUN_OK, "q1 Q0 d1 1 1.5"], 2, "fields", r"expected 6 fields .*found 5", id="5-fields"),
    pytest.param([RUN_OK, "q1 Q0 d 1 1 1.5 t"], 2, "fields", r"found 7", id="space-in-id"),
    pytest.param([RUN_OK, "q1 Q0 d1 1.0 1.5 t"], 2, "rank", r"must be an integer \(got '1\.0'\)", id="rank-float"),
    pytest.param([RUN_OK, "q1 Q0 d1 1 nan t"], 2, "score", r"finite number \(got 'nan'\)", id="score-nan"),
    pytest.param([RUN_OK, "q1 Q0 d1 1 inf t"], 2, "score", r"got 'inf'", id="score-inf"),
    pytest.param([RUN_OK, "q1 Q0 d1 1 1e400 t"], 2, "score", r"got '1e400'", id="score-overflow"),
    pytest.param([RUN_OK, "q1 Q0 d1 1 1_0 t"], 2, "score", r"got '1_0'", id="score-underscore"),
    pytest.param([RUN_OK, "q1 Q0 d1 1 high t"], 2, "score", r"got 'high'", id="score-word"),
    pytest.param([RUN_OK, "q1 Q0 d1 1 1 t", "", "q1 Q0 d1 2 0.5 t"], 4, "doc_id",
                 r"\"d1\" is ranked twice for query \"q1\" \(first on line 2\)", id="doc-twice"),
    pytest.param([RUN_OK, "q%0A1 Q0 d1 1 1 t"], 2, "query_id", r"U\+000A", id="newline-in-query-id"),
    pytest.param(["", ""], 0, "run file", r"no results", id="blank-file"),
]


@pytest.mark.parametrize(("lines", "line", "field", "phrase"), RUN_BAD)
def test_read_run_bad_input(tmp_path, lines, line, field, phrase):
    _assert_problem(read_run, _write(tmp_path / "run.txt", lines), line, field, phrase)


def test_read_run_same_doc_in_two_queries_is_fine(tmp_path):
    assert set(read_run(_write(tmp_path / "r", [RUN_OK, "q1 Q0 d0 1 1.5 t"]))) == {"q0", "q1"}


# ---------------------------------------------------------------- the problem lines themselves


def test_input_error_lines_name_file_line_and_field(tmp_path):
    """What the CLI prints (exit 2): one `FILE:LINE: FIELD: message` line per problem."""
    path = _write(tmp_path / "qrels.txt", ["q0 0 d0 1", "q1 0 d1 x", "q1 0 d1"])
    with pytest.raises(InputError) as info:
        load_qrels(path)
    shown = info.value.lines()
    assert str(info.value).splitlines() == shown and len(shown) == 2
    found = [PROBLEM_LINE.match(line).group("file", "line", "field") for line in shown]
    assert found == [(str(path), "2", "grade"), (str(path), "3", "fields")]
