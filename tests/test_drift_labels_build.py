"""The labelled drift rows (data/drift/*.jsonl) and the parts of their build that need no
WordNet: the hand-row format of scripts/build_drift_labels.py and the rules the committed
files must keep (checked here independently of the build's own validate())."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "drift"
sys.path.insert(0, str(ROOT / "scripts"))

import build_drift_labels as build  # noqa: E402

# the kinds' labels, written out again here rather than read from the build
DRIFT = {"lookalike", "sense_shift", "other_sense", "opposite", "sibling", "abbrev_other_sense", "unrelated"}
NOT_DRIFT = {"synonym", "related", "broader", "narrower", "abbreviation", "jargon", "archaic", "brand_generic",
             "regional"}
FILES = {"train.jsonl": ("", {"wordnet", "hand", "model"}), "heldout.jsonl": ("h", {"hand", "model"}),
         "heldout_realistic2.jsonl": ("s", {"hand", "model"})}


def rows_of(name: str) -> list[dict]:
    path = DATA / name
    if not path.exists():
        pytest.skip(f"{path} is not built here")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def present() -> dict[str, list[dict]]:
    return {name: rows_of(name) for name in FILES if (DATA / name).exists()}


def test_a_model_comment_sets_source_model_and_other_comments_do_not():
    text = """
@ legal
= notary seal | notarial seal  # a comment on the group
osen  sea lion  # model
osen  gasket  # seen in a model's output once
sib   court clerk
brand Band-Aid  # model
"""
    rows = build.parse_hand(text, "rows.py")
    assert [(r["term"], r["kind"], r["label"], r["source"]) for r in rows] == [
        ("sea lion", "other_sense", "drift", "model"), ("gasket", "other_sense", "drift", "hand"),
        ("court clerk", "sibling", "drift", "hand"), ("Band-Aid", "brand_generic", "not_drift", "model")]
    assert rows[0]["expected_terms"] == ["notarial seal"]


@pytest.mark.parametrize("line", ["bogus  term", "sib", "broader  a spelled-out code"])
def test_an_unreadable_hand_line_stops_with_file_and_line(line):
    with pytest.raises(SystemExit, match=r"rows\.py:4: bad line"):
        build.parse_hand(f"\n@ medical\n= query | expected\n{line}\n", "rows.py")


def test_validate_names_a_query_labelled_in_another_file_and_a_source_not_allowed_there():
    rows = build.assign_ids(build.parse_hand("@ medical\n= omeprazole | Prilosec\nsib   pantoprazole  # model\n", "x"),
                            prefix="h")
    errors = build.validate(rows, "heldout", {"omeprazole"}, {"hand"})
    assert [e for e in errors if "also labelled" in e] == ["heldout: query 'omeprazole' also labelled in another file"]
    assert any("source 'model'" in e for e in errors)
    assert build.validate(rows, "heldout", set(), {"hand", "model"}) == []


def test_every_committed_row_has_the_schema_and_its_kind_decides_its_label():
    for name, rows in present().items():
        prefix, sources = FILES[name]
        for row in rows:
            assert list(row) == build.KEYS, (name, row["id"])
            assert row["kind"] in DRIFT | NOT_DRIFT, (name, row["id"], row["kind"])
            assert row["label"] == ("drift" if row["kind"] in DRIFT else "not_drift"), (name, row["id"])
            assert row["source"] in sources, (name, row["id"], row["source"])
            assert row["id"].startswith(prefix) and row["group"].startswith(prefix), (name, row["id"])
            assert row["term"].lower() not in {e.lower() for e in row["expected_terms"]} | {row["query"].lower()}


def test_no_query_is_labelled_in_two_files_nor_taken_from_a_demo_golden_set():
    files = present()
    queries = {name: {r["query"].lower() for r in rows} for name, rows in files.items()}
    names = sorted(queries)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            assert not queries[a] & queries[b], (a, b, sorted(queries[a] & queries[b])[:5])
    demo = {json.loads(line)["query"].lower() for path in (ROOT / "data" / "demo").glob("*/golden.jsonl")
            for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    assert demo, "no demo golden sets found"
    for name, labelled in queries.items():
        assert not labelled & demo, (name, sorted(labelled & demo))
    ids = Counter(r["id"] for rows in files.values() for r in rows)
    assert [i for i, n in ids.items() if n > 1] == []


def test_train_holds_every_realistic_kind_from_hand_and_model_rows_in_the_three_domains():
    rows = rows_of("train.jsonl")
    kinds = {(r["kind"], r["domain"]) for r in rows}
    for kind in ("sibling", "other_sense", "broader", "narrower", "regional"):
        assert {(kind, d) for d in ("medical", "legal", "ecommerce")} <= kinds, kind
    assert any(k == "brand_generic" for k, _ in kinds)
    model = [r for r in rows if r["source"] == "model"]
    assert {r["label"] for r in model} == {"drift", "not_drift"}


def test_the_realistic_fit_rows_are_in_train_as_written():
    """Both the rows written for fitting and the first realistic held-out set (measured once,
    fitted on since) are in train.jsonl with their kind and source unchanged."""
    from drift_hand_realistic_heldout import ROWS as MEASURED_ONCE
    from drift_hand_realistic_train import ROWS
    train = {(r["query"], r["term"], r["kind"], r["source"]) for r in rows_of("train.jsonl")}
    for text in (ROWS, MEASURED_ONCE):
        written = {(r["query"], r["term"], r["kind"], r["source"]) for r in build.parse_hand(text, "rows.py")}
        assert written and written <= train


def test_the_first_realistic_held_out_set_is_no_longer_an_evaluation_set():
    from termgate.cli.drift import EVALUATION
    assert not (DATA / "heldout_realistic.jsonl").exists()
    assert [p.name for p in EVALUATION] == ["heldout.jsonl", "heldout_realistic2.jsonl", "biosynonyms.jsonl"]


def test_the_build_and_the_judge_s_figures_count_the_same_kinds_as_hard():
    """The build's counts and `drift calibrate`'s hard-row accuracy name the same kinds (the
    build stays standard-library only, so it keeps its own copy of the list)."""
    from termgate.drift.measures import HARD_KINDS

    assert set(build.HARD_KINDS) == set(HARD_KINDS)
    assert set(HARD_KINDS) <= build.DRIFT_KINDS | build.CLEAN_KINDS
