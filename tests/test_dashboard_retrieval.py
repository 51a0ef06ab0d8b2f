"""The retrieval effect on the dashboard (issue 34 item 7): Compare's retrieval deltas beside
the term metrics, and one query's top documents side by side, through AppTest on a store of
runs that `evaluate --corpus --qrels` recorded. What a reviewer should read is worked out
from the store's own rows and summary, never typed in by hand.

The world: tests/retrieval_world.py (runs `right`, `flooded` against it, and `plain`).
"""

from __future__ import annotations

import shutil

import pytest

from termgate import store
from termgate.dashboard.retrieval_view import gained_and_lost, mark, top_documents
from termgate.retrieval.attribution import brought_in_line

from retrieval_world import record
from test_side_by_side import page, shown


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    return record(tmp_path_factory.mktemp("retrieval-dashboard"))


@pytest.fixture
def world(recorded, tmp_path, monkeypatch):
    db, ids = recorded
    copy = tmp_path / "store.duckdb"
    shutil.copy(db, copy)
    monkeypatch.setenv("TERMGATE_DB", str(copy))
    from termgate.dashboard import data
    data.clear()
    return copy, ids




def rows_of(db, run_id: str) -> dict[tuple[str, str], dict]:
    return {(r["query_id"], r["variant"]): r for r in store.retrieval_table(db, run_id).to_pylist()}


@pytest.mark.parametrize("grade, text", [(2, "● 2 relevant"), (1, "● 1 relevant"), (0, "○ 0 not relevant"),
                                         (None, "· unjudged")])
def test_a_relevance_mark_names_the_grade_in_words(grade, text):
    assert mark(grade) == text


def test_gained_and_lost_are_relevant_documents_in_one_top_k_only():
    reference = {"top_ids": ["a", "b", "c", "x"], "top_grades": [2, 0, 1, 1]}
    candidate = {"top_ids": ["c", "d", "e", "a"], "top_grades": [1, 1, None, 2]}
    # k = 3: a is in the reference's top 3 only (the candidate has it 4th): lost;
    # d is relevant and new: gained; e is unjudged, b not relevant, c in both
    assert gained_and_lost(reference, candidate, 3) == (["d"], ["a"])


def test_an_external_engines_documents_have_no_title_column_and_the_reference_no_term():
    # an engine over HTTP returns ids only (top_titles None); the reference has no brought_by
    row = {"top_ids": ["a", "b", "c"], "top_grades": [1, None, 0], "top_titles": None, "brought_by": None}
    table = top_documents(row, 2)
    assert list(table.columns) == ["rank", "document", "relevance"]
    assert table.to_dict("list") == {"rank": [1, 2], "document": ["a", "b"], "relevance": ["● 1 relevant", "· unjudged"]}


@pytest.mark.slow
def test_compare_shows_the_retrieval_deltas_beside_the_term_metrics(world):
    db, ids = world
    summary = store.get_run(db, ids["flooded"])["retrieval"]
    at = page("compare", run=ids["flooded"], baseline=ids["right"])
    assert not at.exception
    metrics = {shown(m.label): (m.value, m.delta) for m in at.metric}
    for metric, label in summary["labels"].items():
        value = summary["means"]["candidate"][metric]
        assert metrics[label] == (f"{value:.3f}", f"{value - summary['means']['baseline'][metric]:+.3f}")
    assert "F1" in metrics  # beside the term metrics
    text = [shown(m.value) for m in at.markdown]
    s = summary["statistics"]["ndcg"]
    assert (f"**nDCG@10** change {s['mean_delta']:+.4f} [{s['ci_low']:+.4f}, {s['ci_high']:+.4f}], "
            f"p = {s['p_value']:.4f} (Holm {s['p_value_holm']:.4f}), n = 2") in "\n".join(text)
    assert any("2 regressed (lost more than 0.1 nDCG@10), 0 of them high-risk · 0 improved" in t for t in text)
    [means] = [t.value for t in at.table]  # a small static table: the page's dataframes stay the queries'
    assert list(means.index) == ["unexpanded", "baseline", "candidate"]
    assert float(means.loc["baseline", "nDCG@10"]) == pytest.approx(summary["means"]["baseline"]["ndcg"], abs=5e-4)

    table = at.dataframe[-1].value.set_index("query_id")
    rows = rows_of(db, ids["flooded"])
    for qid in ("q1", "q2"):
        delta = rows[(qid, "candidate")]["ndcg"] - rows[(qid, "baseline")]["ndcg"]
        assert table.loc[qid, "ndcg_delta"] == pytest.approx(delta)
        assert table.loc[qid, "retrieval_status"] == "regressed"
    assert list(table.columns[table.columns.get_loc("delta_f1"):][:3]) == ["delta_f1", "ndcg_delta",
                                                                          "retrieval_status"]


@pytest.mark.slow
def test_the_queries_sort_by_their_ndcg_change(world):
    db, ids = world
    rows = rows_of(db, ids["flooded"])
    deltas = {q: rows[(q, "candidate")]["ndcg"] - rows[(q, "baseline")]["ndcg"] for q in ("q1", "q2")}
    at = page("compare", run=ids["flooded"], baseline=ids["right"])
    at.selectbox(key="cmp_sort").select("largest nDCG drop").run()
    assert list(at.dataframe[-1].value["query_id"]) == sorted(deltas, key=deltas.get)
    at.selectbox(key="cmp_sort").select("largest nDCG gain").run()
    assert list(at.dataframe[-1].value["query_id"]) == sorted(deltas, key=deltas.get, reverse=True)


@pytest.mark.slow
def test_a_regressed_query_side_by_side_shows_documents_marks_losses_and_the_term(world):
    db, ids = world
    summary = store.get_run(db, ids["flooded"])["retrieval"]
    rows = rows_of(db, ids["flooded"])
    at = page("compare", run=ids["flooded"], baseline=ids["right"], query="q1")
    assert not at.exception
    reference, candidate = (next(d.value for d in at.dataframe if "rank" in d.value.columns and
                                 ("brought in by" in d.value.columns) == ours) for ours in (False, True))
    for table, row in ((reference, rows[("q1", "baseline")]), (candidate, rows[("q1", "candidate")])):
        assert list(table["rank"]) == list(range(1, 11)) and list(table["document"]) == row["top_ids"]
        assert list(table["title"]) == row["top_titles"]  # a title as given: a table cell is plain text
        assert list(table["relevance"]) == [mark(g) for g in row["top_grades"]]
    assert set(reference["relevance"]) == {"● 2 relevant", "● 1 relevant"}
    assert set(candidate["relevance"]) == {"○ 0 not relevant", "· unjudged"} and "**Tennis** racket" in set(
        candidate["title"])
    assert set(candidate["brought in by"]) == {"tennis racket"}
    text = [shown(m.value) for m in at.markdown]
    assert f"**Relevant gained** (0): none\n**Relevant lost** (10): {' · '.join(rows[('q1', 'baseline')]['top_ids'])}" \
        in [t.replace("  \n", "\n") for t in text]
    assert any("mi \\*0\\*" in m.value for m in at.markdown)  # an id is text, never emphasis
    top = summary["attribution"]["q1"][0]
    assert top["term"] == "tennis racket"
    assert f"↳ {brought_in_line(top, 10)}" in text
    delta = rows[("q1", "candidate")]["ndcg"] - rows[("q1", "baseline")]["ndcg"]
    assert any(m.value == ":red-badge[retrieval regressed]" for m in at.markdown)
    assert any(shown(m.value) == f":gray-badge[ΔnDCG@10 {delta:+.3f}]" for m in at.markdown)


@pytest.mark.slow
def test_a_moved_exact_identifier_is_a_warning_on_its_query(world):
    db, ids = world
    [moved] = store.get_run(db, ids["flooded"])["retrieval"]["identifiers"]
    assert moved["query_id"] == "q2" and moved["moved_by"] == "expansion"
    at = page("compare", run=ids["flooded"], baseline=ids["right"], query="q2")
    assert [shown(w.value) for w in at.warning] == [
        f"Must find stone-1 first: the expansion moved it to rank {moved['candidate_rank']}."]


@pytest.mark.slow
def test_without_a_baseline_the_reference_is_the_unexpanded_query_and_the_gains_show(world):
    db, ids = world
    rows = rows_of(db, ids["right"])
    at = page("compare", run=ids["right"], baseline=ids["plain"], query="q1")
    assert not at.exception
    text = [shown(m.value) for m in at.markdown]
    assert "##### Retrieval · top 10 documents against the unexpanded query" in text
    assert any(t.startswith("**Unexpanded query's top 10** · nDCG@10") for t in text)
    gained = [d for d, g in zip(rows[("q1", "candidate")]["top_ids"], rows[("q1", "candidate")]["top_grades"]) if g]
    assert len(gained) == 10
    assert any(t.startswith(f"**Relevant gained** (10): {' · '.join(gained)}") for t in text)


@pytest.mark.slow
def test_a_run_without_retrieval_shows_nothing_of_it(world):
    _, ids = world
    at = page("compare", run=ids["plain"], baseline=ids["right"])
    assert not at.exception
    assert not any("Retrieval" in m.value for m in at.markdown)
    assert "nDCG@10" not in {shown(m.label) for m in at.metric}
    assert "ndcg_delta" not in at.dataframe[-1].value.columns
    assert "largest nDCG drop" not in at.selectbox(key="cmp_sort").options
    opened = page("compare", run=ids["plain"], baseline=ids["right"], query="q1")
    assert not opened.exception and not any("Retrieval" in m.value for m in opened.markdown)
    assert not any("relevance" in d.value.columns for d in opened.dataframe)


@pytest.mark.slow
def test_against_another_baseline_the_page_names_the_one_retrieval_was_measured_against(world):
    _, ids = world
    at = page("compare", run=ids["flooded"], baseline=ids["plain"], query="q1")
    assert not at.exception
    note = (f"Retrieval was measured against the baseline the run was evaluated with, {ids['right']}, "
            "not the one shown here.")
    assert note in [shown(c.value) for c in at.caption]
