"""One query side by side (dashboard.side_by_side) on Compare, Regressions and Sign-off, through
AppTest on a copy of the demo store; the expectations come from the store's own rows
(term_rows, the stored golden line, the paired metrics), never typed in by hand."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from termgate import comparison, store
from termgate.cli import main
from termgate.dashboard import APP as DASHBOARD_APP

ROOT = Path(__file__).resolve().parent.parent
APP = str(DASHBOARD_APP)
BADGE = re.compile(r"^:(\w+)-badge\[(.*)\]$", re.S)


@pytest.fixture
def db(demo_store, tmp_path, monkeypatch) -> Path:
    copy = tmp_path / "store.duckdb"
    shutil.copy(demo_store, copy)
    monkeypatch.setenv("TERMGATE_DB", str(copy))
    from termgate.dashboard import data
    data.clear()
    return copy


def runs_by(db: Path) -> dict[tuple[str, str], str]:
    df = store.runs_overview(db)
    return {(r.name.split()[0], r.prompt_version): r.run_id for r in df.itertuples() if isinstance(r.name, str)}


def page(name: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(f"views/{name}.py")
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def shown(markdown: str) -> str:
    """What a visitor reads from Markdown the dashboard escaped with ui.literal."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def badges(block) -> list[tuple[str, str, str]]:
    """(colour, label Markdown, tooltip) of every st.badge in a block, in order."""
    out = []
    for m in block.markdown:
        found = BADGE.match(m.value)
        if found:
            out.append((found.group(1), found.group(2), m.proto.help))
    return out


def expected_chips(db: Path, run_id: str, query_id: str, rows: bool = False) -> list:
    """(colour, term) per chip, worked out here from the store's term rows: matched green,
    drift violet, underweight (generated below its min_weight) yellow and shown once,
    other false positives orange, missed expected terms grey; with `rows`, each term row too."""
    out, under = [], set()
    for r in store.term_rows(db, run_id, query_id).itertuples():
        if r.kind == "TP":
            colour = "green"
        elif r.kind == "FP" and r.drift:
            colour = "violet"
        elif r.kind == "FP" and pd.notna(r.exp_pos):
            colour = "yellow"
            under.add(r.term)
        elif r.kind == "FP":
            colour = "orange"
        elif r.term in under:
            continue
        else:
            colour = "gray"
        out.append((colour, r.term, r) if rows else (colour, r.term))
    return out


def label_term(colour: str, label: str) -> str:
    """The term a chip's label names, as a reader sees it (symbol and detail taken off)."""
    text = shown(label.replace("\\[", "[").replace("\\]", "]"))  # st.badge's own bracket escapes
    text = text.split(" ", 1)[1]
    if colour == "gray":
        return text.removeprefix("~~").removesuffix("~~")
    if colour == "violet":
        return text.removesuffix(" · drift")
    if colour == "yellow":
        return re.sub(r" \d+\.\d+ < \d+\.\d+$", "", text)
    return text


def side_columns(at: AppTest):
    """The baseline's and the candidate's bordered columns."""
    sides = [c for c in at.columns if any(m.value.startswith(("**Baseline**", "**Candidate**")) for m in c.markdown)]
    assert len(sides) == 2
    return sides


@pytest.mark.parametrize("query_id", ["med-001", "med-045"])  # drift + underweight + wrong; every term missed
def test_compare_link_opens_a_regressed_query_side_by_side(db, query_id):
    ids = runs_by(db)
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    row = comparison.pair_runs(db, run, base).query(query_id)
    assert row["status"] == "regressed"
    at = page("compare", run=run, baseline=base, query=query_id)
    assert not at.exception
    assert any(m.value == f"#### {query_id.replace('-', chr(92) + '-')} · {row['query']}" for m in at.markdown)
    left, right = side_columns(at)
    for column, run_id, prefix in ((left, base, "base_"), (right, run, "")):
        chips = badges(column)
        assert [(c, label_term(c, label)) for c, label, _ in chips] == expected_chips(db, run_id, query_id)
        for (colour, label, tip), (_, _, r) in zip(chips, expected_chips(db, run_id, query_id, rows=True)):
            assert label.startswith({"green": "✓", "orange": "✗", "violet": "⚠", "yellow": "↓", "gray": "–"}[colour])
            if colour == "violet":  # the reason in the tooltip and in the text below the chips
                assert shown(tip).endswith(f"why drift: {r.reason}")
                assert any(shown(m.value) == f"⚠ drift: **{r.term}** — {r.reason}" for m in column.markdown)
            if colour == "yellow":
                assert label.endswith(f"{r.weight:.2f} < {r.min_weight:.2f}")
        metrics = next(m.value for m in column.markdown if m.value.startswith("P **"))
        for key in ("precision", "recall", "f1"):
            assert f"**{row[prefix + key]:.3f}**" in metrics
        reasons = row[prefix + "failure_reasons"]
        why = [shown(m.value) for m in column.markdown if m.value.startswith("**Why it fails:**")]
        assert why == ([f"**Why it fails:** {' · '.join(reasons)}"] if reasons else [])
    # the golden entry: the stored line as given, and its expected, forbidden and critical read from it
    line, text = store.golden_entry(db, store.get_run(db, run)["golden_hash"], query_id)
    assert [c.value for c in at.code] == [text]
    golden = json.loads(text)
    summary = shown(next(m.value for m in at.markdown if m.value.startswith("**Golden entry**")))
    for e in golden["expected_expansions"]:
        assert e["term"] in summary
        if e.get("min_weight"):
            assert f"{e['term']} (min_weight {e['min_weight']:.2f})" in summary
    assert f"forbidden: {' · '.join(golden.get('forbidden_terms', [])) or 'none'}" in summary
    assert f"critical: {'yes' if golden.get('critical') else 'no'}" in summary
    assert any(f"line {line}" in e.label for e in at.expander)


def test_next_and_previous_walk_the_filtered_list_and_the_url_follows(db):
    ids = runs_by(db)
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    regressed = comparison.CompareFilter(statuses=("regressed",))
    order = list(comparison.pair_runs(db, run, base).page(regressed, 0, None)[0]["query_id"])
    assert len(order) == 11
    at = page("compare", run=run, baseline=base, query=order[0])
    at.multiselect(key="cmp_status").set_value(["regressed"]).run()
    assert any(m.value == "query 1 of 11 in the filtered list" for m in at.markdown)
    assert at.button(key="cmp_previous").disabled
    at.button(key="cmp_next").click().run()
    assert at.query_params["query"] in ([order[1]], order[1])
    assert any(m.value.startswith(f"#### {order[1].replace('-', chr(92) + '-')} ") for m in at.markdown)
    assert any(m.value == "query 2 of 11 in the filtered list" for m in at.markdown)
    at.button(key="cmp_previous").click().run()
    assert at.query_params["query"] in ([order[0]], order[0])
    last = page("compare", run=run, baseline=base, query=order[-1])
    last.multiselect(key="cmp_status").set_value(["regressed"]).run()
    assert any(m.value == "query 11 of 11 in the filtered list" for m in last.markdown)
    assert last.button(key="cmp_next").disabled and not last.button(key="cmp_previous").disabled
    last.button(key="cmp_back").click().run()  # back to the table, on the page that holds the query
    assert "query" not in last.query_params and len(last.dataframe) == 1


def test_an_unknown_query_in_the_link_says_so_and_shows_the_table(db):
    ids = runs_by(db)
    at = page("compare", run=ids[("medical", "v2")], baseline=ids[("medical", "v1")], query="no-such-query")
    assert not at.exception
    assert any("no\\-such\\-query" in w.value for w in at.warning) and len(at.dataframe) == 1


def test_regressions_and_signoff_open_the_same_panel_and_walk_their_flagged_queries(db):
    ids = runs_by(db)
    run = ids[("medical", "v2")]
    flagged = list(dict.fromkeys(store.flagged_items(db, [run])["query_id"]))
    at = page("regressions", run=run, query=flagged[0])
    assert not at.exception
    assert any(m.value == f"query 1 of {len(flagged)} in this run\\'s flagged queries" for m in at.markdown)
    left, right = side_columns(at)
    assert [(c, label_term(c, label)) for c, label, _ in badges(right)] == expected_chips(db, run, flagged[0])
    at.button(key="reg_next").click().run()
    assert at.query_params["query"] in ([flagged[1]], flagged[1])
    assert at.query_params["run"] in ([run], run)
    review = ids[("medical", "v3")]  # gate review: on Sign-off
    items = store.flagged_items(db, [review])
    at = page("signoff", run=review, query=items["query_id"].iloc[0])
    assert not at.exception
    left, right = side_columns(at)
    assert [(c, label_term(c, label)) for c, label, _ in badges(right)] == expected_chips(
        db, review, items["query_id"].iloc[0])
    assert [(c, label_term(c, label)) for c, label, _ in badges(left)] == expected_chips(
        db, ids[("medical", "v1")], items["query_id"].iloc[0])
    table = page("signoff", run=review)  # no query open: the flagged queries to pick from
    assert list(table.dataframe[0].value["query_id"]) == list(items["query_id"])


# ---------------------------------------------------------------- data is text, never markup

HOSTILE = ["<img src=x onerror=alert(1)>", "**bold** [x](javascript:alert(1))", ":red[x] $y$ ~~s~~ `c`"]


def _evaluate(db: Path, golden: Path, generated: Path, *extra: str) -> str:
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                       "--db", str(db), "--drift-judge", "none", "-q", *extra])
    assert result.exit_code in (0, 1, 3), result.output
    return store.list_runs(db)["run_id"].iloc[0]


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """A baseline that matches every hostile term and a candidate where each is wrong,
    forbidden (drift), underweight or missed."""
    db = tmp_path / "hostile.duckdb"
    monkeypatch.setenv("TERMGATE_DB", str(db))
    golden = tmp_path / "golden.jsonl"
    golden.write_text(json.dumps({
        "query_id": "q<b>1</b>", "query": "*query* <i>x</i>", "critical": True,
        "expected_expansions": [{"term": HOSTILE[0], "min_weight": 0.5}, {"term": HOSTILE[1]}],
        "forbidden_terms": [HOSTILE[2]]}) + "\n")
    base = tmp_path / "base.jsonl"
    base.write_text(json.dumps({"query_id": "q<b>1</b>", "terms": [HOSTILE[0], HOSTILE[1]]}) + "\n")
    cand = tmp_path / "cand.jsonl"
    cand.write_text(json.dumps({"query_id": "q<b>1</b>", "terms": [
        {"term": HOSTILE[0], "weight": 0.2}, HOSTILE[2], "[a](http://127.0.0.1:9/)"]}) + "\n")
    base_id = _evaluate(db, golden, base)
    time.sleep(1.1)  # run ids and created_at are per second
    cand_id = _evaluate(db, golden, cand, "--baseline", base_id)
    from termgate.dashboard import data
    data.clear()
    return db, cand_id, base_id


def test_hostile_terms_show_as_text_in_chips_tooltips_and_headings(hostile):
    db, run, base = hostile
    at = page("compare", run=run, baseline=base, query="q<b>1</b>")
    assert not at.exception
    left, right = side_columns(at)
    render = MarkdownIt("commonmark").enable("strikethrough")
    seen = []
    for colour, label, tip in badges(left) + badges(right):
        for text in (label.replace("\\[", "[").replace("\\]", "]"), tip):  # the Markdown Streamlit renders
            html = render.renderInline(text)
            assert not re.search(r"<(img|a|strong|em|i|b|code)\b", html), html
            seen.append(shown(text))
    for term in HOSTILE + ["[a](http://127.0.0.1:9/)"]:
        assert any(term.casefold() in s for s in seen), term  # read back as typed (normalised terms)
    headings = [m.value for m in at.markdown if m.value.startswith(("#### ", "**Golden entry**"))]
    for value in headings:
        html = render.render(value)
        assert not re.search(r"<(img|a|strong|em|i|b|code)\b", html.replace("<strong>Golden entry</strong>", "")), html
    assert "*query* <i>x</i>" in shown(headings[0]) and HOSTILE[2] in shown(headings[1])


# ---------------------------------------------------------------- which baseline a bare link opens


def _another_medical_run(db: Path, tmp_path: Path, *extra: str) -> str:
    """A new run on the demo's medical golden set (its name, as the demo gives it: the newest
    run in the store)."""
    time.sleep(1.1)
    return _evaluate(db, ROOT / "data/demo/medical/golden.jsonl", ROOT / "data/demo/medical/v3-candidate.jsonl",
                     "--golden-name", "demo/medical", *extra)


def test_a_link_without_baseline_opens_the_recorded_one(db):
    ids = runs_by(db)
    at = page("compare", run=ids[("legal", "v2")])
    assert at.selectbox(key="cmp_base").value == ids[("legal", "v1")]
    assert any(c.value == "Baseline: the run\\'s recorded baseline." for c in at.caption)
    assert not at.warning


def test_without_a_recorded_baseline_the_latest_earlier_run_on_the_same_golden_set(db, tmp_path):
    ids = runs_by(db)
    new = _another_medical_run(db, tmp_path)  # no --baseline; ecommerce v3 is newer than medical v3
    at = page("compare", run=new)
    assert at.selectbox(key="cmp_base").value == ids[("medical", "v3")]
    assert any("latest earlier run on the same golden set" in shown(c.value) for c in at.caption)
    # a first run on its golden set: nothing is picked, least of all a run on another golden set
    first = page("compare", run=ids[("medical", "v1")])
    assert first.selectbox(key="cmp_base").value is None
    assert any("no earlier run shares its golden set" in shown(i.value) for i in first.info)
    assert not first.dataframe
    # the same file under its path as the name is another golden set (SPEC §1.1)
    time.sleep(1.1)  # the newest run in the store
    unnamed = _evaluate(db, ROOT / "data/demo/medical/golden.jsonl", ROOT / "data/demo/medical/v3-candidate.jsonl")
    from termgate.dashboard import data
    data.clear()  # the run list is cached for 5 s
    assert page("compare", run=unnamed).selectbox(key="cmp_base").value is None


def test_a_baseline_on_another_golden_set_is_warned_about_in_the_clis_words(db, tmp_path):
    from termgate.scoring.regression import DIFFERENT_GOLDEN_SET

    ids = runs_by(db)
    new = _another_medical_run(db, tmp_path, "--baseline", ids[("legal", "v1")])
    at = page("compare", run=new)
    assert at.selectbox(key="cmp_base").value == ids[("legal", "v1")]  # recorded: kept, and warned about
    assert [shown(w.value) for w in at.warning] == [DIFFERENT_GOLDEN_SET]
    assert DIFFERENT_GOLDEN_SET in store.get_run(db, new)["recommendations"]  # what evaluate printed


# ---------------------------------------------------------------- search is normalised like terms


def test_search_normalises_like_terms_on_the_page(db, tmp_path):
    golden = tmp_path / "g.jsonl"
    rows = [{"query_id": "drink-1", "query": "Café crème", "expected_expansions": [{"term": "coffee"}]},
            {"query_id": "ＤＲＩＮＫ-2", "query": "green tea", "expected_expansions": [{"term": "tea"}]}]
    golden.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    gen = tmp_path / "c.jsonl"
    gen.write_text('{"query_id": "drink-1", "terms": ["coffee"]}\n')
    first = _evaluate(db, golden, gen)
    time.sleep(1.1)
    second = _evaluate(db, golden, gen, "--baseline", first)
    at = page("compare", run=second, baseline=first)
    for text, found in (("CAFÉ", ["drink-1"]), ("cafe\u0301  CRÈME", ["drink-1"]), ("drink-2", ["ＤＲＩＮＫ-2"]),
                        ("café", ["drink-1"])):
        at.text_input(key="cmp_text").set_value(text).run()
        assert list(at.dataframe[0].value["query_id"]) == found, text
