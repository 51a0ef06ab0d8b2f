"""The dashboard's parts of issue 19 beside the side-by-side view: the Golden sets page (each
set's revisions, who proposed and approved them, the diff, the runs on each revision, the
deep link), hostile names and diffs shown as text, and the Runs page's judge agreement, on
both store backends. Also the contract coverage: golden revisions, their approvals and
verdicts survive `store copy` DuckDB -> PostgreSQL -> DuckDB with `audit verify` intact
(verdicts alone: test_verdicts.py; one hop each way: test_golden_propose.py)."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

from termgate.governance import agreement as ag
from termgate.governance import golden_revisions as gr
from termgate.governance import signoff as so
from termgate import store
from termgate.governance import verdicts as vd

from conftest import golden_row, write_jsonl
from test_contract import page as contract_page
from test_golden_propose import V, _revision_store, approve, cli, evaluate

ROOT = Path(__file__).resolve().parent.parent
HOSTILE = ["<img src=x onerror=alert(1)>", "**bold** [x](javascript:alert(1))", ":red[x] $y$ ~~s~~ `c`"]
RENDER = MarkdownIt("commonmark").enable("strikethrough")


def page(view: str, **params) -> AppTest:
    from termgate.dashboard import data

    data.clear()  # the page reads the store as it is now, not a neighbour test's cache
    return contract_page(view, **params)


def shown(markdown: str) -> str:
    """What a visitor reads from Markdown the dashboard escaped with ui.literal."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def frame(at: AppTest, *columns: str):
    """The first table on the page holding these columns."""
    return next(d.value for d in at.dataframe if set(columns) <= set(d.value.columns))


def markdown_texts(at: AppTest) -> list[str]:
    return [e.value for kind in ("markdown", "caption", "subheader", "warning", "error", "info", "success")
            for e in getattr(at, kind)]


# ---------------------------------------------------------------- the Golden sets page


def _approved_store(db: str, folder: Path) -> dict:
    """_revision_store (eve's verdicts on a run on v1, carol's proposal of v2), alice's
    approval of v2, and a run on v2."""
    made = _revision_store(db, folder)
    assert approve(db, "alice", made["revision"], comment="checked the diff").exit_code == 0
    time.sleep(1.1)  # run ids are per second
    made["on_v2"] = evaluate(db, made["v2"], made["generated"], "--baseline", made["base"])
    made["base_revision"] = store.get_run(db, made["base"])["golden_hash"]
    return made


@pytest.fixture
def approved(request, tmp_path, backend, store_templates, monkeypatch):
    db, made = store_templates.copy(request, backend, "golden-page", _approved_store, tmp_path)
    monkeypatch.setenv("TERMGATE_DB", db)
    return db, made


def test_the_golden_sets_page_lists_the_revision_its_people_diff_and_runs(approved):
    db, made = approved
    [rev] = gr.list_revisions(db, "cardio")
    at = page("golden")
    assert at.selectbox(key="golden_name").value == "cardio"
    assert at.query_params["name"] == "cardio" and at.query_params["revision"] == made["revision"][:12]
    overview = frame(at, "revision", "status", "proposed by")
    assert list(overview["revision"]) == [made["revision"][:12], made["base_revision"][:12]]  # proposed, then used
    assert list(overview["status"]) == ["approved", "never proposed"]
    assert list(overview["proposed by"])[0] == "carol" and list(overview["approved by"])[0] == "alice"
    assert list(overview["over (unapproved)"])[0] == made["base_revision"][:12]  # nothing was approved before it
    assert list(overview["runs"]) == [1, 1]
    approvals = frame(at, "approved by", "comment")
    assert approvals.to_dict("records") == [{"approved by": "alice", "at": rev.approvals[0].approved_at,
                                             "comment": "checked the diff", "audit record": rev.approvals[0].seq}]
    [diff] = [c for c in at.code if c.language == "diff"]
    assert diff.value == rev.diff.rstrip("\n") and "+ forbidden 'panic attack'" in diff.value  # exactly the proposal's diff
    changes = frame(at, "query_id", "+ expected")
    assert dict(zip(changes["query_id"], changes["+ expected"])) == {"m1": "mi", "m3": "grippe"}
    assert dict(zip(changes["query_id"], changes["+ forbidden"])) == {"m1": "panic attack", "m3": ""}
    assert list(frame(at, "run_id", "gate")["run_id"]) == [made["on_v2"]]
    said = " ".join(shown(t) for t in markdown_texts(at))
    assert "approved** · first revision (the whole file is new)" in said and "proposed by carol at" in said
    assert f"Proposed over {made['base_revision'][:12]}, which is not approved" in said
    assert "**Runs on this revision** · 1 run · approved" in said


def test_the_deep_link_opens_a_revision_and_says_when_it_is_unknown(approved):
    db, made = approved
    at = page("golden", name="cardio", revision=made["base_revision"][:8])
    assert at.query_params["revision"] == made["base_revision"][:12]  # written back in full form
    assert any("Never proposed" in w.value for w in at.warning)
    assert list(frame(at, "run_id", "gate")["run_id"]) == [made["base"]]
    assert any("termgate golden propose GOLDEN.jsonl --golden-name cardio" in c.value for c in at.code)
    at = page("golden", name="nope", revision="0123abcd")
    assert any("Unknown golden set nope in the link" in shown(w.value) for w in at.warning)
    assert at.selectbox(key="golden_name").value == "cardio"
    at = page("golden", name="cardio", revision="0123abcd")
    assert any("Revision 0123abcd in the link is not one of cardio's" in shown(w.value) for w in at.warning)


def test_an_awaiting_revision_says_how_many_approvals_it_needs_and_how_to_approve(tmp_path, monkeypatch):
    db = str(tmp_path / "s.duckdb")
    config = tmp_path / "termgate.toml"
    config.write_text("[approvals_required]\nmedical = 2\n", encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    monkeypatch.setenv("TERMGATE_DB", db)
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("m1", "flu", ["influenza"], domain="medical")])
    so.add_user(db, "carol", "engineer", "carol-password")
    assert cli("golden", "propose", golden, "--golden-name", "cardio", "--proposer", "carol", "--db", db,
               password="carol-password").exit_code == 0
    revision = gr.load_revision(golden).revision
    at = page("golden")
    assert list(frame(at, "revision", "status")["status"]) == ["awaiting approval (0 of 2)"]
    assert any("Needs 2 distinct approvers" in c.value for c in at.caption)
    assert any(c.value.startswith(f"TERMGATE_PASSWORD=... termgate golden approve cardio {revision[:12]}")
               for c in at.code)
    [diff] = [c for c in at.code if c.language == "diff"]  # a first revision: the whole file is new
    assert diff.value.startswith("first revision of 'cardio'") and '\n+{"query_id": "m1"' in diff.value


def test_an_empty_store_says_how_to_propose_and_approve(tmp_path, monkeypatch):
    monkeypatch.setenv("TERMGATE_DB", str(tmp_path / "none.duckdb"))
    at = page("golden")
    assert "No golden-set revision has been proposed yet" in at.info[0].value
    [how] = at.code
    assert "termgate golden propose" in how.value and "termgate golden approve" in how.value


def test_a_hostile_golden_name_diff_and_comment_show_as_text(tmp_path, monkeypatch):
    db = str(tmp_path / "s.duckdb")
    monkeypatch.setenv("TERMGATE_DB", db)
    name = HOSTILE[0]
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("q<b>1</b>", HOSTILE[1], [HOSTILE[2]], domain="medical")])
    proposal = gr.propose(golden.read_bytes(), [V("q<b>1</b>", HOSTILE[1], "synonym")])
    (tmp_path / "v2.jsonl").write_bytes(proposal.new_bytes)
    so.add_user(db, "carol", "engineer", "carol-password")
    gr.record_proposal(db, name, gr.load_revision(golden), gr.load_revision(tmp_path / "v2.jsonl"), proposal,
                       so.authenticate(db, "carol", "carol-password"))
    so.add_user(db, "alice", "approver", "alice-password", "medical")
    gr.approve(db, name, gr.load_revision(tmp_path / "v2.jsonl").revision,
               so.authenticate(db, "alice", "alice-password"), HOSTILE[1])
    at = page("golden")
    assert at.selectbox(key="golden_name").options == [name]  # plain text in the picker
    [diff] = [c for c in at.code if c.language == "diff"]
    assert proposal.summary.rstrip("\n") in diff.value and HOSTILE[1] in diff.value  # as typed, in a code block
    assert frame(at, "approved by", "comment")["comment"].tolist() == [HOSTILE[1]]
    at = page("golden", name=HOSTILE[1] + HOSTILE[2])  # an unknown, hostile name in the link
    texts = markdown_texts(at)
    assert any(HOSTILE[1] + HOSTILE[2] in shown(t) for t in texts)
    for text in texts:
        html = RENDER.render(text)
        assert not re.search(r"<(img|a|em|i|b|code|del|s)\b", html), html
        assert "<strong>bold</strong>" not in html


# ---------------------------------------------------------------- the Runs page's agreement


def test_the_runs_page_shows_the_agreement_figures_agreement_report_computes(backend, tmp_path, monkeypatch):
    from test_agreement import ALICE, EVE, RECORDED, evaluate_with
    from test_verdicts import PASSWORDS, add_users

    db = backend
    monkeypatch.setenv("TERMGATE_DB", db)
    run_id = evaluate_with(monkeypatch, db, tmp_path, RECORDED)
    assert any(c.value.startswith("No term verdicts yet") for c in page("runs").caption)  # one line, no table
    add_users(db)
    for reviewer, labels in (("eve", EVE), ("alice", ALICE)):
        account = so.authenticate(db, reviewer, PASSWORDS[reviewer])
        for query_id, term, label in labels:
            vd.record_verdict(db, account, run_id, query_id, term, label, False, "")
    report = ag.agreement_report(db, rejudge_terms=False)
    at = page("runs")
    assert any(s.value == "Drift judge agreement with reviewers" for s in at.subheader)
    table = frame(at, "kappa", "judge", "D/D")
    [judge] = report.judges
    t = judge.table
    [row] = table.to_dict("records")
    assert (row["domain"], row["judge"], row["config"], row["source"], row["n"]) == (
        "medical", "fake", judge.config_id, "recorded", 10)
    assert (row["D/D"], row["D/N"], row["N/D"], row["N/N"], row["unjudged"]) == (4, 2, 1, 3, 0)
    assert row["kappa"] == pytest.approx(t.kappa) == pytest.approx(0.4)
    assert row["95% CI"] == f"[{t.ci_low:.3f}, {t.ci_high:.3f}]"
    assert (row["precision"], row["recall"]) == (pytest.approx(4 / 6), pytest.approx(0.8))
    [pair] = report.raters
    [raters] = frame(at, "reviewer A", "label kappa").to_dict("records")
    assert (raters["reviewer A"], raters["reviewer B"], raters["n"]) == ("alice", "eve", 4)
    assert raters["kappa"] == pytest.approx(pair.table.kappa) and raters["label kappa"] == pytest.approx(0.2)
    from termgate.dashboard import ui  # the configuration for people: key value pairs, numbers rounded

    assert any(f"config {judge.config_id}: " + ui.settings(judge.config) in c.value for c in at.code)
    assert any(f"config {judge.config_id}: " in c.value and "judge fake" in c.value for c in at.code), [c.value for c in at.code]
    assert any("termgate drift agreement" in c.value for c in at.caption)


# ---------------------------------------------------------------- store copy, there and back


def test_revisions_approvals_and_verdicts_survive_store_copy_there_and_back(request, tmp_path, pg, store_templates):
    source, made = store_templates.copy(request, str(tmp_path / "x.duckdb"), "golden-page", _approved_store, tmp_path)
    there, back = pg.url(pg.create_database()), str(tmp_path / "back.duckdb")
    for frm, to in ((source, there), (there, back)):
        copied = cli("store", "copy", "--from", frm, "--to", to)
        assert copied.exit_code == 0, copied.output
    for db in (there, back):
        verify = cli("audit", "verify", "--db", db)
        assert verify.exit_code == 0 and "audit chain intact" in verify.output, verify.output
        assert gr.list_revisions(db) == gr.list_revisions(source) and gr.is_approved(db, "cardio", made["revision"])
        assert vd.list_verdicts(db) == vd.list_verdicts(source) and len(vd.list_verdicts(db)) == 3
        for revision in (made["revision"], made["base_revision"]):
            assert store.golden_content(db, revision) == store.golden_content(source, revision)
    assert [i.kind for i in so.flagged_items(back, made["on_v2"]) if i.kind == "golden"] == []  # still approved


def test_a_broken_chain_shows_no_agreement_figures_and_says_why(tmp_path, monkeypatch):
    from conftest import run_sql
    from test_agreement import RECORDED, evaluate_with
    from test_verdicts import PASSWORDS, add_users

    db = str(tmp_path / "s.duckdb")
    monkeypatch.setenv("TERMGATE_DB", db)
    run_id = evaluate_with(monkeypatch, db, tmp_path, RECORDED)
    add_users(db)
    vd.record_verdict(db, so.authenticate(db, "eve", PASSWORDS["eve"]), run_id, "q2", "migraine", "drift", False, "")
    run_sql(db, "UPDATE audit_log SET payload = replace(payload, '\"drift\"', '\"synonym\"') WHERE kind = 'verdict'")
    at = page("runs")
    assert any("its verdicts cannot be trusted" in e.value for e in at.error)
    assert not any("kappa" in d.value.columns for d in at.dataframe)
    assert any("cannot be trusted" in e.value for e in page("golden").error)  # the Golden sets page says so too
