"""Issue 17 item 3's fixes outside Compare, and item 4 (the demo's prompt evaluations on the
Prompts page), through AppTest on a copy of the session's demo store."""

from __future__ import annotations

import base64
import json
import re

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from termgate.governance import signoff as so
from termgate import store
from termgate.cli import main

from streamlit.testing.v1 import AppTest

from test_dashboard import APP, ROOT, db, page, runs_by, shown, sign_in  # noqa: F401 (db: the fixture)

MEDICAL = ROOT / "data" / "demo" / "medical"


def evaluate(db, generated: str, *flags: str) -> str:
    """`termgate evaluate` of a medical demo file into the store (judge off); the new run's id."""
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(MEDICAL / "golden.jsonl"), "--generated",
                                       str(MEDICAL / generated), "--db", str(db), "--drift-judge", "none", "-q",
                                       *flags])
    assert result.exit_code in (0, 1, 3), result.output
    return store.list_runs(db)["run_id"].iloc[0]


def labels(at) -> dict[str, str]:
    """run id -> its expander's label on Regressions, as a visitor reads it."""
    out = {}
    for expander in at.expander:
        text = shown(expander.label)
        out[next(rid for rid in re.findall(r"\d{8}-\d{6}-[0-9a-f]{6}", text))] = text
    return out


# ---------------------------------------------------------------- Regressions


def test_regressions_labels_a_run_from_what_it_has_never_nan(db):
    unnamed = evaluate(db, "v2-candidate.jsonl")  # no --name, no --prompt-version; fails its critical queries
    row = store.get_run(db, unnamed)
    assert row["name"] is None and row["prompt_version"] is None and row["gate_decision"] == "fail"
    shown_labels = labels(page("regressions"))
    assert not any(re.search(r"\bnan\b", label, re.I) for label in shown_labels.values())
    assert re.fullmatch(rf"FAIL · not releasable — {unnamed} — \d+ items", shown_labels[unnamed])
    medical_v2 = runs_by(db)[("medical", "v2")]
    assert shown_labels[medical_v2].startswith(f"FAIL · not releasable — medical demo · v2 · {medical_v2} — ")


@pytest.mark.slow
def test_regressions_show_a_rejected_run_as_rejected(db):
    from termgate.dashboard import data

    so.add_user(db, "alice", "approver", "alice-password", "medical")
    ids = runs_by(db)
    so.decide(db, ids[("medical", "v3")], "alice", "alice-password", "reject", "drift is not acceptable",
              ack_all=True)
    data.clear()
    shown_labels = labels(page("regressions"))
    assert shown_labels[ids[("medical", "v3")]].startswith("REVIEW · rejected — medical demo · v3 · ")
    assert shown_labels[ids[("legal", "v3")]].startswith("REVIEW · awaiting sign-off — legal demo · v3 · ")


@pytest.mark.slow
def test_a_rejected_failed_run_says_it_was_rejected(db):
    """A failed gate is not releasable whatever a reviewer says; a rejection on it is still
    shown (Regressions' label, the state's reasons), not hidden behind the gate."""
    from termgate.dashboard import data

    so.add_user(db, "alice", "approver", "alice-password", "medical")
    run_id = runs_by(db)[("medical", "v2")]
    so.decide(db, run_id, "alice", "alice-password", "reject", "eleven regressions", ack_all=True)
    state = so.release_state(db, run_id)
    assert (state.status, state.exit_code) == ("not releasable", 1)
    assert state.reasons == ["gate fail", "rejected by alice: eleven regressions"]
    data.clear()
    assert labels(page("regressions"))[run_id].startswith("FAIL · rejected — medical demo · v2 · ")


# ---------------------------------------------------------------- Sign-off


def test_signoff_shows_the_decision_at_once_without_a_reload(db):
    so.add_user(db, "alice", "approver", "alice-password", "medical")
    run_id = runs_by(db)[("medical", "v3")]
    at = sign_in(page("signoff", run=run_id), "alice", "alice-password")
    read = lambda elements: [shown(e.value) for e in elements]  # noqa: E731 (what a visitor reads)
    records = int(re.search(r"intact: (\d+) records", read(at.success)[0]).group(1))
    assert any(m.startswith("**awaiting sign-off** — medical: 0 of 1 approvals") for m in read(at.markdown))
    for box in (c for c in at.checkbox if c.key.startswith("so_ack_")):
        box.check()
    at.text_area(key=f"so_comment_{run_id}").input("reviewed every drift term").run()
    assert run_id in labels(page("regressions"))  # now cached for 5 s as awaiting sign-off

    at.button(key="so_approve").click().run()  # the same session: no reload, no new AppTest
    assert not at.exception
    assert f"Recorded approve (audit record {records + 1})." in read(at.success)
    assert f"Audit chain: audit chain intact: {records + 1} records" in read(at.success)
    assert any(m.startswith("**releasable** — approved by alice") for m in read(at.markdown))
    assert not any("awaiting sign-off" in m for m in read(at.markdown))
    assert any(m.startswith("**approve** by alice at ") for m in read(at.markdown))  # the history, too
    assert at.text_area(key=f"so_comment_{run_id}").value == ""  # a second click records nothing
    assert at.button(key="so_approve").disabled
    assert run_id not in labels(page("regressions"))  # the cached states were dropped as well


@pytest.mark.slow
def test_signoff_empties_the_comment_box_in_the_browser_too(db):
    """After a decision the browser's comment box is emptied, not only the page's value: the
    real browser kept showing the recorded comment while Approve and Reject were disabled for
    an empty one (scripts/walkthrough.py's screenshots). Only a value the script sets is sent
    to the browser (the widget's set_value)."""
    so.add_user(db, "alice", "approver", "alice-password", "medical")
    run_id = runs_by(db)[("medical", "v2")]  # failed its gate: rejected
    at = sign_in(page("signoff", run=run_id), "alice", "alice-password")
    at.text_area(key=f"so_comment_{run_id}").input("eleven regressions").run()
    at.button(key="so_reject").click().run()
    assert not at.exception and any(s.value.startswith("Recorded reject") for s in at.success)
    box = at.text_area(key=f"so_comment_{run_id}")
    assert box.value == "" and box.proto.set_value and box.proto.value == ""


# ---------------------------------------------------------------- Query history


@pytest.mark.slow
def test_query_history_plots_each_run_at_its_time_one_chart_per_metric(db):
    # v1 again after v3: over prompt versions the line went back to v1 (a zigzag); over time it goes on
    again = evaluate(db, "v1-baseline.jsonl", "--name", "medical demo", "--prompt-version", "v1")
    history = store.query_history(db, "med-001")
    assert list(history["prompt_version"]) == ["v1", "v2", "v3", "v1"] and history["run_id"].iloc[-1] == again
    at = page("query", query_id="med-001")
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table.columns[:4]) == ["run_id", "created_at", "prompt_version", "name"]
    assert list(table["run_id"]) == list(history["run_id"])
    traces = json.loads(at.get("plotly_chart")[0].proto.spec)["data"]
    assert sorted(t["name"] for t in traces) == ["F1", "drift score", "precision", "recall"]
    assert len({t["xaxis"] for t in traces}) == 4  # a chart of its own each: no line hides another
    times = pd.to_datetime(history["created_at"], utc=True).dt.tz_localize(None).tolist()
    assert times == sorted(times)
    for trace in traces:
        assert trace["mode"] == "lines+markers"
        assert pd.to_datetime(trace["x"]).tolist() == times  # one point per run, at its time
        assert [c[:3] for c in trace["customdata"]] == [list(r) for r in zip(
            history["run_id"], history["prompt_version"], history["name"])]
        assert all(part in trace["hovertemplate"] for part in ("run=", "prompt=", "name="))


# ---------------------------------------------------------------- Import

GOLDEN = (b'{"query_id": "q1", "query": "sneakers", "context": {"domain": "ecommerce"}, '
          b'"expected_expansions": [{"term": "trainers"}]}\n')
GENERATED = b'{"query_id": "q1", "terms": ["trainers"]}\n'


@pytest.fixture
def port_8765():
    """The server's port set as `streamlit run --server.port 8765` sets it."""
    from streamlit import config

    before = config.get_option("server.port")
    config.set_option("server.port", 8765)
    yield 8765
    config.set_option("server.port", before)


def imported_output(db, context: dict | None = None) -> str:
    """Evaluate an upload on the Import page signed in as an engineer; what the child printed."""
    so.add_user(db, "erin", "engineer", "erin-password")
    at = sign_in(page("import"), "erin", "erin-password")
    at.context = context or {}
    at.file_uploader(key="imp_golden").upload("golden.jsonl", GOLDEN)
    at.file_uploader(key="imp_gen").upload("gen.jsonl", GENERATED)
    at.selectbox(key="imp_judge").set_value("none")
    next(b for b in at.button if b.label == "Evaluate").click().run()
    assert not at.exception and any("Recorded run" in s.value for s in at.success), [e.value for e in at.error]
    return "\n".join(c.value for c in at.code)


@pytest.mark.slow
def test_import_link_uses_the_servers_port(db, port_8765):
    output = imported_output(db)
    run_id = store.list_runs(db)["run_id"].iloc[0]
    assert f"dashboard: http://localhost:8765/?run={run_id}" in output
    assert ":8501" not in output


@pytest.mark.slow
def test_import_link_uses_the_address_the_browser_reached(db, port_8765):
    output = imported_output(db, {"url": "https://termgate.example.org:9443/import"})
    run_id = store.list_runs(db)["run_id"].iloc[0]
    assert f"dashboard: https://termgate.example.org:9443/?run={run_id}" in output
    assert ":8765" not in output and ":8501" not in output


def test_import_baseline_picker_names_each_run(db):
    unnamed = evaluate(db, "v2-candidate.jsonl")
    runs = store.runs_overview(db)
    at = page("import")
    options = at.selectbox(key="imp_base").options
    assert options[0] == "(none)" and len(options) == len(runs) + 1 == 11
    for option, row in zip(options[1:], runs.itertuples()):
        when = f"{row.created_at[:10]} {row.created_at[11:16]} UTC"
        named = f"{row.name} · {row.prompt_version} · " if row.run_id != unnamed else ""
        assert option == f"{row.run_id} — {named}{when} · gate {row.gate_decision}"
    assert not any(re.search(r"\bnan\b", o) for o in options)


# ---------------------------------------------------------------- Prompts (item 4)


def test_prompts_page_compares_the_demos_prompt_versions(db):
    at = page("prompts")
    assert not at.exception
    assert any("Demo data" in i.value and "no model was called" in i.value for i in at.info)
    table = at.dataframe[0].value
    assert list(table["version"]) == ["v1", "v2", "v3"] and set(table["name"]) == {"demo"}
    assert list(table["pass_rate"]) == pytest.approx([0.0, 0.4, 0.9])  # tests/test_demo.py: DEMO_PROMPTS
    heat = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    z = heat["z"]  # Plotly sends the matrix as a typed array: base64 of float64, with its shape
    scores = np.frombuffer(base64.b64decode(z["bdata"]), dtype="<f8").reshape(
        [int(n) for n in z["shape"].split(",")])
    assert heat["x"] == ["v1", "v2", "v3"] and scores.shape == (10, 3)  # ten cases, three versions side by side
    assert scores[:, 2].tolist() == [9, 9, 9, 8, 6, 9, 9, 9, 9, 9] and scores[:, 0].max() == 6


@pytest.mark.slow
def test_a_second_demo_seed_stores_no_prompt_evaluation(db):
    from termgate.demo import seed_demo

    before = store.list_prompt_evals(db)
    again = seed_demo(db, ROOT / "data" / "demo")
    assert len(again.prompt_evals) == 3 and not any(p.created for p in again.prompt_evals)
    assert store.list_prompt_evals(db)["eval_id"].tolist() == before["eval_id"].tolist()


@pytest.mark.parametrize(("n", "said"), [(0, "0 flagged items"), (1, "1 flagged item"), (2, "2 flagged items"),
                                         (1200, "1,200 flagged items")])
def test_counts_take_their_noun_in_the_right_number(n, said):
    from termgate.text import counted

    assert counted(n, "flagged item") == said


def test_regressions_counts_its_items_and_runs_in_words(db):
    at = page("regressions")
    caption = next(c.value for c in at.caption if "flagged item" in c.value)
    items = store.flagged_items(db, list(store.runs_overview(db)["run_id"]))
    assert not re.search(r"\b1 (flagged items|runs)\b", caption)
    assert re.fullmatch(r"[\d,]+ flagged items? in \d+ runs?", caption)


# ---------------------------------------------------------------- issue 31 item 15


def _noted(db, passed: bool) -> tuple[str, str, str]:
    """(run, query_id, its first reason) of a medical demo query that passes (fails) with reasons."""
    ids = runs_by(db)
    for version in ("v2", "v3", "v1"):
        rows = store.query_rows(db, ids[("medical", version)])
        rows = rows[(rows["passed"] == passed) & rows["failure_reasons"].map(lambda r: r is not None and len(r) > 0)]
        if len(rows):
            return ids[("medical", version)], rows["query_id"].iloc[0], rows["failure_reasons"].iloc[0][0]
    raise AssertionError(f"the medical demo has no {'passing' if passed else 'failing'} query with reasons")


@pytest.mark.parametrize(("passed", "heading"), [(True, "Noted, though it passes"), (False, "Why it fails")])
def test_a_querys_reasons_are_headed_as_its_status(db, passed, heading):
    """A passing query with a note (an underweight term) is not headed "Why it fails"."""
    run, query_id, reason = _noted(db, passed)
    baseline = next(r for r in runs_by(db).values() if r != run)
    at = page("compare", run=run, baseline=baseline, query=query_id)
    assert not at.exception
    lines = [shown(m.value) for m in at.markdown if reason in shown(m.value)]
    assert lines and all(line.startswith(f"**{heading}:**") for line in lines), lines


def _cells(at) -> list:
    """Every cell of every table on the page."""
    return [v for d in at.dataframe for v in d.value.astype(object).to_numpy().ravel()]


def test_the_golden_sets_page_shows_no_raw_none(db):
    """A revision nobody proposed has no changes, a run without a name has no name: the
    tables leave those cells empty instead of showing None."""
    unnamed = evaluate(db, "v2-candidate.jsonl", "--golden-name", "demo/medical")  # no --name, no --prompt-version
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("views/golden.py")
    at.query_params["name"] = "demo/medical"
    at.run()
    assert not at.exception
    assert unnamed in list(next(d.value for d in at.dataframe if "run_id" in d.value.columns)["run_id"])
    cells = _cells(at)
    assert cells and not [c for c in cells if c is None or c is pd.NA or (isinstance(c, float) and c != c)
                          or str(c) in ("None", "nan", "NaN", "<NA>")]


@pytest.mark.parametrize(("value", "said"), [
    (0.7749999999999999, "0.775"), (0.685, "0.685"), (0.5, "0.5"), (0.73, "0.73"), (1.0, "1"), (0, "0"),
    (12345, "12,345"), (2.0000001, "2"), (0.00012, "0.00012"), (-0.25, "-0.25"), (float("nan"), "-"), (None, "-"),
    (np.float64(0.30000000000000004), "0.3")])
def test_numbers_are_formatted_for_people_by_one_function(value, said):
    from termgate.dashboard import ui

    assert ui.number(value) == said


JUDGE_CONFIG = json.dumps({"band": [0.685, 0.7749999999999999], "combiner": "logistic-regression", "cutoff": 0.73,
                           "domain_context": None, "judge": "embedding", "model": "sentence-transformers/all-MiniLM-L6-v2"})


def test_the_judge_configuration_prints_its_band_for_people(db, monkeypatch):
    """The Runs page's judge agreement shows each judge configuration: the embedding judge
    `termgate demo` records stores its band as [0.685, 0.7749999999999999] (the test store's
    runs are judged by none, so the recorded configuration is swapped for it as the page reads
    it), which people read as 0.775."""
    import dataclasses

    from termgate.dashboard import data
    from termgate.governance import verdicts as vd

    run = runs_by(db)[("medical", "v2")]
    so.add_user(db, "erin", "engineer", "erin-password-1")
    query_id, term = vd.unflagged_sample(db, run, 1, 0)[0]
    vd.record_verdict(db, so.authenticate(db, "erin", "erin-password-1"), run, query_id, term, "related", False, None)
    read = data.agreement
    monkeypatch.setattr(data, "agreement", lambda: dataclasses.replace(read(), judges=[
        dataclasses.replace(j, judge="embedding", config=JUDGE_CONFIG) for j in read().judges]))
    at = page("runs")
    assert not at.exception
    [config] = [c.value for c in at.code if c.value.startswith("config ")]
    assert "0.7749999999999999" not in config and "band [0.685, 0.775]" in config and "cutoff 0.73" in config
    assert "judge embedding" in config and "domain_context none" in config


@pytest.mark.slow
def test_import_names_the_uploaded_files_never_their_removed_temporary_copies(db):
    """The child works on copies in a private folder removed when it exits: what the page
    shows names the files the visitor uploaded, and no line points into that folder."""
    from termgate.dashboard.importer import run_import

    from test_dashboard import Upload

    golden = Upload("vet golden.jsonl", b'{"query_id": "q1", "query": "sneakers", "context": {"domain": "ecommerce"}, '
                                        b'"expected_expansions": [{"term": "trainers"}]}\n')
    ok = run_import(golden, Upload("gen.jsonl", b'{"query_id": "q1", "terms": ["trainers"]}\n'), judge="none",
                    author="carol")
    assert ok.run_id and "gate: PASS" in ok.output
    bad = run_import(Upload("vet golden.jsonl", b'{"query_id": "q1", "query": 5, "expected_expansions": []}\n'),
                     Upload("gen.jsonl", b'{"query_id": "q1", "terms": ["a"]}\n'), judge="none", author="carol")
    assert bad.problems == ["vet golden.jsonl:1: query: input should be a valid string (got 5)"]
    for said in [ok.output, bad.output, *bad.problems]:
        assert "termgate-import-" not in said and "report.json" not in said


@pytest.mark.slow
def test_a_link_to_regressions_with_a_run_opens_that_runs_group(db):
    """/regressions?run=RUN: with 60 items or more every group starts folded, except the one
    the link names, which comes first; a run with nothing flagged says so."""
    for _ in range(3):
        evaluate(db, "v2-candidate.jsonl")  # three more failing runs: over 60 flagged items in all
    ids = runs_by(db)
    legal = ids[("legal", "v3")]
    at = page("regressions")
    assert int(re.match(r"(\d+) flagged items", at.caption[1].value).group(1)) >= 60
    assert not any(e.proto.expanded for e in at.expander)
    at = page("regressions", run=legal)
    assert not at.exception
    assert legal in shown(at.expander[0].label) and at.expander[0].proto.expanded
    assert not any(e.proto.expanded for e in at.expander[1:])
    at = page("regressions", run=ids[("medical", "v1")])  # passed its gate: nothing flagged
    assert any("has nothing flagged here" in i.value for i in at.info)
