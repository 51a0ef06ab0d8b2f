"""Golden-set revisions under sign-off (issue 19 items 2 and 3): `golden propose` turns
verdicts into the next revision (untouched lines byte for byte), `golden approve` records an
approval (approver scoped to the set's domains, never its proposer), and a high-risk run on
an unapproved revision carries a flagged item. The store parts run on both backends."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.governance import golden_revisions as gr
from termgate.governance import signoff as so
from termgate import store
from termgate.cli import main
from termgate.io import load_golden_set

from conftest import golden_row, write_jsonl


@dataclass(frozen=True)
class V:
    """A verdict as termgate.governance.verdicts.list_verdicts returns one (the fields propose reads)."""

    query_id: str
    term: str
    label: str
    forbid: bool = False
    created_at: str = "2026-12-01T10:00:00.000Z"
    seq: int = 1
    run_id: str = "r"
    reviewer: str = "eve"


def cli(*args, password=None):
    env = {"TERMGATE_PASSWORD": password} if password else {}
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


# ---------------------------------------------------------------- the transform


GOLDEN = (b'\xef\xbb\xbf{"query_id":"q1","query":"caf\\u00e9","expected_expansions":[{"term":"coffee shop"}]}\n'
          b'{"query_id": "q2", "query": "heart attack", "x-owner": {"team": "cardio", "since": 2019}, '
          b'"context": {"domain": "medical", "tier": 2}, "expected_expansions": [{"term": "MI", "min_weight": 0.50}]}\r\n'
          b"\n"
          b'{ "query_id" : "q3", "query": "stroke", "expected_expansions": [ {"term": "CVA"} ], '
          b'"forbidden_terms": ["brain freeze"] }\n'
          b'{"query_id": "q4", "query": "flu", "expected_expansions": []}')


def lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def test_untouched_lines_stay_byte_for_byte(tmp_path):
    proposal = gr.propose(GOLDEN, [V("q2", "myocardial infarction", "synonym", seq=7)], 0.4)
    old, new = lines(GOLDEN), lines(proposal.new_bytes)
    assert len(old) == len(new)
    assert [i for i, (a, b) in enumerate(zip(old, new)) if a != b] == [1]  # only q2's line changed
    assert new[1].endswith(b"\r")  # it keeps its CRLF ending; the BOM, escapes, spaces elsewhere stay
    assert new[-1] == old[-1] and not proposal.new_bytes.endswith(b"\n")
    assert [c.as_dict() for c in proposal.changes] == [{
        "query_id": "q2", "line": 2, "added_expected": ["myocardial infarction"], "added_forbidden": [],
        "removed_expected": [], "removed_forbidden": [], "verdict_seqs": [7]}]
    (tmp_path / "new.jsonl").write_bytes(proposal.new_bytes)
    item = {i.query_id: i for i in load_golden_set(tmp_path / "new.jsonl").items}["q2"]
    assert item.expected == {"mi": 0.5, "myocardial infarction": 0.4}  # with --min-weight


def test_a_changed_line_keeps_unknown_keys_and_key_order():
    proposal = gr.propose(GOLDEN, [V("q2", "panic attack", "drift", forbid=True)])
    changed = json.loads(lines(proposal.new_bytes)[1])
    # the same keys in the same order, nested ones too; the new key at the end
    assert list(changed) == ["query_id", "query", "x-owner", "context", "expected_expansions", "forbidden_terms"]
    assert changed["x-owner"] == {"team": "cardio", "since": 2019} and list(changed["context"]) == ["domain", "tier"]
    assert changed["forbidden_terms"] == ["panic attack"]


def test_a_forbid_verdict_on_an_expected_term_moves_it_to_forbidden(tmp_path):
    # q2 expects "MI"; a reviewer forbids "mi" (normalised): it leaves the expected terms
    proposal = gr.propose(GOLDEN, [V("q2", "mi", "drift", forbid=True)])
    change = proposal.changes[0]
    assert (change.removed_expected, change.added_forbidden) == (["mi"], ["mi"])
    (tmp_path / "new.jsonl").write_bytes(proposal.new_bytes)
    item = {i.query_id: i for i in load_golden_set(tmp_path / "new.jsonl").items}["q2"]  # valid: never both
    assert item.expected == {} and item.forbidden == {"mi"}
    assert "- expected 'mi' (now forbidden)" in proposal.diff


def test_a_synonym_verdict_on_a_forbidden_term_moves_it_to_expected(tmp_path):
    proposal = gr.propose(GOLDEN, [V("q3", "Brain Freeze", "synonym")])
    change = proposal.changes[0]
    assert (change.query_id, change.removed_forbidden, change.added_expected) == ("q3", ["brain freeze"],
                                                                                  ["brain freeze"])
    (tmp_path / "new.jsonl").write_bytes(proposal.new_bytes)
    assert {i.query_id: i for i in load_golden_set(tmp_path / "new.jsonl").items}["q3"].forbidden == frozenset()


def test_the_latest_verdict_on_a_term_counts_and_related_or_drift_change_nothing():
    verdicts = [V("q4", "influenza", "synonym", created_at="2026-12-01T10:00:00.000Z", seq=1),
                V("q4", "influenza", "related", created_at="2026-12-01T11:00:00.000Z", seq=2),  # later: no change
                V("q1", "cafe", "drift"), V("q1", "latte", "related")]
    proposal = gr.propose(GOLDEN, verdicts)
    assert proposal.changes == [] and proposal.new_bytes == GOLDEN
    assert proposal.diff.startswith("no changes")


def test_verdicts_on_a_query_not_in_the_file_are_skipped_and_said():
    proposal = gr.propose(GOLDEN, [V("q9", "x", "synonym"), V("q4", "influenza", "synonym")])
    assert [c.query_id for c in proposal.changes] == ["q4"]
    assert proposal.skipped == ["1 verdict on query 'q9', which is not in this golden set"]


def test_the_diff_names_each_change_and_the_changed_lines():
    proposal = gr.propose(GOLDEN, [V("q4", "influenza", "synonym"), V("q4", "cold", "drift", forbid=True)],
                          old_label="a.jsonl", new_label="b.jsonl")
    assert "q4 (line 5, 'flu'): + expected 'influenza' (min_weight 0.0); + forbidden 'cold'" in proposal.diff
    assert "--- a.jsonl" in proposal.diff and "\n-{\"query_id\": \"q4\"" in proposal.diff
    assert "\n+{\"query_id\": \"q4\", \"query\": \"flu\", \"expected_expansions\": [{\"term\": \"influenza\"" \
        in proposal.diff


# ---------------------------------------------------------------- the command's files


def proposer(db, monkeypatch, name="carol") -> str:
    """An account that may propose, signed in through TERMGATE_PASSWORD (golden propose signs its proposer in)."""
    so.add_user(db, name, "engineer", "proposer-password")
    monkeypatch.setenv("TERMGATE_PASSWORD", "proposer-password")
    return name


@pytest.fixture
def proposing(tmp_path, monkeypatch):
    """A golden file, a store with carol's account, and a stand-in for the store's verdicts
    (the files are what is tested)."""
    golden = tmp_path / "golden.jsonl"
    golden.write_bytes(GOLDEN)
    monkeypatch.setattr(gr, "verdicts_for", lambda db, runs, name: [V("q4", "influenza", "synonym")])
    (tmp_path / "store").mkdir()
    db = str(tmp_path / "store" / "store.duckdb")
    proposer(db, monkeypatch)
    return golden, db


def test_propose_writes_the_revision_and_its_diff_and_records_it(proposing, tmp_path):
    golden, db = proposing
    result = cli("golden", "propose", golden, "--from-verdicts", "--out", tmp_path / "v2.jsonl", "--db", db,
                 "--golden-name", "flu-set", "--proposer", "carol")
    assert result.exit_code == 0, result.output
    new = (tmp_path / "v2.jsonl").read_bytes()
    assert lines(new)[:4] == lines(GOLDEN)[:4] and b"influenza" in lines(new)[4]
    diff = (tmp_path / "v2.jsonl.diff").read_text()
    assert "+ expected 'influenza'" in diff and "+ expected 'influenza'" in result.output
    revision = gr.load_revision(tmp_path / "v2.jsonl").revision
    [rev] = gr.list_revisions(db, "flu-set")
    # nothing approved yet: no base, the whole file is new, and the file it was made over is named
    assert (rev.revision, rev.base_revision, rev.proposed_over, rev.proposer, rev.approved) == (
        revision, None, gr.load_revision(golden).revision, "carol", False)
    assert "first revision of 'flu-set'" in diff and diff.count("\n+{") == 4
    # the text is stored under its hash, read as evaluate stores a golden file (text mode)
    assert store.golden_content(db, revision) == new.decode("utf-8-sig").replace("\r\n", "\n")
    assert so.verify_chain(db).ok


def test_show_content_gives_back_the_stored_file_exactly(tmp_path, monkeypatch):
    """A right-to-left override and a NEL are legal inside a JSON string: redirected, `golden
    show --content` prints the revision exactly, so its hash holds ('x\u0085y' is not 'xy')."""
    golden = tmp_path / "g.jsonl"
    golden.write_bytes('{"query_id": "q1", "query": "heart attack", "expected_expansions": [{"term": "mi"}], '
                       '"forbidden_terms": ["\u202eevil", "x\u0085y"]}\n'.encode("utf-8"))
    db = str(tmp_path / "s.duckdb")
    proposer(db, monkeypatch)
    proposed = cli("golden", "propose", golden, "--golden-name", "gs", "--proposer", "carol", "--db", db)
    assert proposed.exit_code == 0, proposed.output
    revision = gr.load_revision(golden).revision
    shown = cli("golden", "show", "gs", revision[:12], "--content", "--db", db)
    assert shown.exit_code == 0 and shown.stdout_bytes == golden.read_bytes()
    (tmp_path / "back.jsonl").write_bytes(shown.stdout_bytes)
    assert gr.load_revision(tmp_path / "back.jsonl").revision == revision


@pytest.mark.slow
def test_show_content_with_standard_output_closed_is_no_traceback(tmp_path, monkeypatch):
    """`golden show … --content >&-`: Python starts with sys.stdout None (an AttributeError
    traceback, exit 1, before); nothing to print to, exit 0 as for a reader gone (SPEC §3)."""
    import os
    import subprocess
    import sys

    golden = tmp_path / "g.jsonl"
    golden.write_text('{"query_id": "q1", "query": "flu", "expected_expansions": [{"term": "influenza"}]}\n')
    db = str(tmp_path / "s.duckdb")
    proposer(db, monkeypatch)
    assert cli("golden", "propose", golden, "--golden-name", "gs", "--proposer", "carol", "--db", db).exit_code == 0
    revision = gr.load_revision(golden).revision
    done = subprocess.run([sys.executable, "-m", "termgate", "golden", "show", "gs", revision[:12], "--content",
                           "--db", db], stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=lambda: os.close(1))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr


def test_the_diff_shows_a_hidden_character_as_an_escape(proposing, tmp_path, monkeypatch):
    golden, db = proposing  # q4's line, as given, holds a raw right-to-left override; the diff shows it
    golden.write_bytes(GOLDEN.replace(b'"expected_expansions": []}', '"expected_expansions": [], "x-note": "\u202eevil"}'.encode()))
    monkeypatch.setattr(gr, "verdicts_for", lambda db, runs, name: [V("q4", "influenza", "synonym")])
    result = cli("golden", "propose", golden, "--from-verdicts", "--out", tmp_path / "v2.jsonl", "--db", db,
                 "--golden-name", "flu-set", "--proposer", "carol")
    assert result.exit_code == 0, result.output
    revision = gr.load_revision(tmp_path / "v2.jsonl").revision
    shown = cli("golden", "show", "flu-set", revision[:12], "--db", db)
    for output in (result.output, shown.output):
        assert "\\u202eevil" in output and "\u202e" not in output


@pytest.mark.parametrize("taken", ["out", "diff", "input"])
def test_propose_never_overwrites_a_file(proposing, tmp_path, taken):
    golden, db = proposing
    out = golden if taken == "input" else tmp_path / "v2.jsonl"
    if taken == "out":
        out.write_text("keep me\n")
    if taken == "diff":
        (tmp_path / "v2.jsonl.diff").write_text("keep me\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    records = store.audit_records(db)
    result = cli("golden", "propose", golden, "--from-verdicts", "--out", out, "--db", db, "--proposer", "carol")
    assert result.exit_code == 2 and "never replaces a file" in result.output
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == before  # nothing written
    assert store.audit_records(db) == records  # nothing recorded


def test_propose_leaves_nothing_half_written_when_recording_fails(proposing, tmp_path, monkeypatch):
    golden, db = proposing

    def busy(*args, **kwargs):
        from termgate.errors import StoreBusyError
        raise StoreBusyError("store busy")

    monkeypatch.setattr(gr, "record_proposal", busy)
    result = cli("golden", "propose", golden, "--from-verdicts", "--out", tmp_path / "v2.jsonl", "--db", db,
                 "--proposer", "carol")
    assert result.exit_code == 2 and "store busy" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden.jsonl", "store"]  # no output, no diff, no temporary


def test_each_file_appears_whole_under_its_name(proposing, tmp_path, monkeypatch):
    """Staged in a temporary file, flushed, then linked into place: the name never shows a
    partly written file."""
    import termgate.cli.golden as golden_cli

    golden, db = proposing
    seen, link = {}, os.link

    def watched(src, dst):
        assert not os.path.lexists(dst) and Path(src).parent == Path(dst).parent
        seen[Path(dst).name] = Path(src).read_bytes()  # what the name will show, complete before it shows it
        link(src, dst)

    monkeypatch.setattr(golden_cli.os, "link", watched)
    assert cli("golden", "propose", golden, "--from-verdicts", "--out", tmp_path / "v2.jsonl", "--db", db,
               "--proposer", "carol").exit_code == 0
    assert seen == {"v2.jsonl": (tmp_path / "v2.jsonl").read_bytes(),
                    "v2.jsonl.diff": (tmp_path / "v2.jsonl.diff").read_bytes()}
    assert seen["v2.jsonl"] == gr.propose(GOLDEN, [V("q4", "influenza", "synonym")]).new_bytes
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_no_verdicts_write_nothing_and_say_why(proposing, tmp_path, monkeypatch):
    golden, db = proposing
    monkeypatch.setattr(gr, "verdicts_for", lambda db, runs, name: [])
    result = cli("golden", "propose", golden, "--from-verdicts", "--out", tmp_path / "v2.jsonl", "--db", db)
    assert result.exit_code == 0 and "no verdicts on runs of golden set" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["golden.jsonl", "store"]


def test_propose_refuses_a_bad_min_weight_and_out_without_verdicts(proposing, tmp_path):
    golden, db = proposing
    assert cli("golden", "propose", golden, "--from-verdicts", "--min-weight", "1.5", "--out",
               tmp_path / "v2.jsonl", "--db", db).exit_code == 2
    assert cli("golden", "propose", golden, "--from-verdicts", "--db", db).exit_code == 2  # no --out
    assert not (tmp_path / "v2.jsonl").exists()


# ---------------------------------------------------------------- proposal and approval in the store

PASSWORDS = {"carol": "carol-password", "alice": "alice-password", "lena": "legal-only-pass", "eve": "engineer-pass"}
ROWS = [golden_row("m1", "heart attack", ["myocardial infarction"], domain="medical"),
        golden_row("m2", "stroke", ["cerebrovascular accident"], domain="medical"),
        golden_row("m3", "flu", ["influenza"], domain="medical")]
GENERATED = [{"query_id": "m1", "terms": ["myocardial infarction", "mi", "panic attack"]},
             {"query_id": "m2", "terms": ["cerebrovascular accident"]},
             {"query_id": "m3", "terms": ["influenza", "grippe"]}]


def evaluate(db, golden, generated, *extra):
    result = cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "cardio", "--db", db,
                 "--drift-judge", "none", "--author", "eve", "-q", *extra)
    assert result.exit_code in (0, 1, 3), result.output
    return store.list_runs(db)["run_id"].iloc[0]


def _revision_store(db: str, folder: Path) -> dict:
    """Accounts, a medical run on v1 by eve, eve's three verdicts, carol's proposal of v2."""
    for name, role, domains, aliases in (("carol", "approver", "medical", ["carol-gh"]),
                                         ("alice", "approver", "medical", []),
                                         ("lena", "approver", "legal", []), ("eve", "engineer", "", [])):
        so.add_user(db, name, role, PASSWORDS[name], domains, aliases)
    golden = write_jsonl(folder / "golden.jsonl", ROWS)
    generated = write_jsonl(folder / "generated.jsonl", GENERATED)
    base = evaluate(db, golden, generated, "--json", folder / "base.json")
    for query, term, flags in (("m1", "mi", ["--synonym"]), ("m1", "panic attack", ["--drift", "--forbid"]),
                               ("m3", "grippe", ["--synonym"])):
        result = cli("verdict", base, query, term, *flags, "--reviewer", "eve", "--comment", "seen", "--db", db,
                     password=PASSWORDS["eve"])
        assert result.exit_code == 0, result.output
    result = cli("golden", "propose", golden, base, "--from-verdicts", "--min-weight", "0.5", "--out",
                 folder / "v2.jsonl", "--golden-name", "cardio", "--proposer", "carol", "--db", db,
                 password=PASSWORDS["carol"])
    assert result.exit_code == 0, result.output
    return {"golden": golden, "generated": generated, "base": base, "v2": folder / "v2.jsonl",
            "revision": gr.load_revision(folder / "v2.jsonl").revision}


@pytest.fixture
def proposed(request, tmp_path, backend, store_templates):
    db, made = store_templates.copy(request, backend, "golden-revisions", _revision_store, tmp_path)
    return db, made


def approve(db, reviewer, revision, name="cardio", comment="checked the diff"):
    return cli("golden", "approve", name, revision[:12], "--reviewer", reviewer, "--comment", comment, "--db", db,
               password=PASSWORDS.get(reviewer, "x"))


def golden_records(db) -> list[str]:
    return [r["kind"] for r in store.audit_records(db) if r["kind"].startswith("golden")]


@pytest.mark.slow
def test_the_proposal_holds_the_verdicts_changes(proposed):
    db, made = proposed
    [rev] = gr.list_revisions(db)
    assert (rev.name, rev.revision, rev.proposer, rev.domains) == ("cardio", made["revision"], "carol", ["medical"])
    changes = {c["query_id"]: c for c in rev.changes}
    assert changes["m1"]["added_expected"] == ["mi"] and changes["m1"]["added_forbidden"] == ["panic attack"]
    assert changes["m3"]["added_expected"] == ["grippe"] and "m2" not in changes
    verdict_seqs = [r["seq"] for r in store.audit_records(db) if r["kind"] == "verdict"]
    [record] = [r for r in store.audit_records(db) if r["kind"] == "golden_proposal"]
    assert record["payload"]["verdict_seqs"] == verdict_seqs and record["content_hash"] == made["revision"]
    # nothing approved yet: no base; the file it was made over is the hash evaluate recorded for the run
    assert record["payload"]["base_revision"] is None
    assert record["payload"]["proposed_over"] == json.loads(Path(made["v2"]).with_name("base.json").read_text())[
        "run"]["golden_hash"]
    assert "+ forbidden 'panic attack'" in record["payload"]["diff"]


@pytest.mark.slow
def test_propose_then_approve_with_two_accounts(proposed):
    db, made = proposed
    assert not gr.is_approved(db, "cardio", made["revision"])
    result = approve(db, "alice", made["revision"])
    assert result.exit_code == 0, result.output
    assert "approved by alice" in result.output
    [rev] = gr.list_revisions(db, "cardio")
    assert rev.approved and [(a.approver, a.comment) for a in rev.approvals] == [("alice", "checked the diff")]
    assert gr.is_approved(db, "cardio", made["revision"])
    assert not gr.is_approved(db, "other-name", made["revision"])  # an approval is for the named set
    listed = cli("golden", "list", "--db", db)
    assert "cardio" in listed.output and "alice" in listed.output and "carol" in listed.output
    shown = cli("golden", "show", "cardio", made["revision"][:10], "--db", db)
    assert "status:     approved" in shown.output and "+ expected 'grippe' (min_weight 0.5)" in shown.output
    audit = cli("audit", "verify", "--db", db)
    assert audit.exit_code == 0 and "audit chain intact" in audit.output
    # neither kind is a release decision
    assert store.decisions_for(db, made["revision"]) == []
    assert so.release_state(db, made["base"]).decisions == []


@pytest.mark.parametrize("reviewer, message", [
    ("carol", "proposed revision"),  # the proposer: four-eyes
    ("lena", "may approve legal only"),  # scoped to another domain
    ("eve", "role 'engineer' may not approve"),
])
def test_refused_approvals_record_nothing(proposed, reviewer, message):
    db, made = proposed
    before = golden_records(db)
    result = approve(db, reviewer, made["revision"])
    assert result.exit_code == 4 and message in result.output, result.output
    assert golden_records(db) == before and not gr.is_approved(db, "cardio", made["revision"])


def test_a_wrong_password_or_an_unknown_revision_is_refused(proposed):
    db, made = proposed
    assert cli("golden", "approve", "cardio", made["revision"][:12], "--reviewer", "alice", "--comment", "ok",
               "--db", db, password="not-her-password").exit_code == 4
    assert approve(db, "alice", "0123456789ab").exit_code == 2  # no such revision
    assert approve(db, "alice", made["revision"][:4]).exit_code == 2  # too short to name one
    assert approve(db, "alice", made["revision"], name="other").exit_code == 2
    assert golden_records(db) == ["golden_proposal"]


def test_a_single_sign_on_account_is_refused_from_the_cli(proposed):
    db, made = proposed
    so.add_user(db, "sam@example.com", "approver", None, "medical", sso=True)
    result = approve(db, "sam@example.com", made["revision"])
    assert result.exit_code == 4 and "single sign-on" in result.output


def test_an_approval_stops_counting_once_the_approver_gains_the_proposers_alias(proposed):
    db, made = proposed
    assert approve(db, "alice", made["revision"]).exit_code == 0
    so.set_aliases(db, "carol", remove=["carol-gh"])
    so.set_aliases(db, "alice", add=["carol-gh"])  # alice turns out to be the proposer too
    assert not gr.is_approved(db, "cardio", made["revision"])


@pytest.mark.slow
def test_re_evaluating_on_the_new_revision_shows_golden_changed_queries(proposed, tmp_path):
    db, made = proposed
    assert approve(db, "alice", made["revision"]).exit_code == 0
    run_id = evaluate(db, made["v2"], made["generated"], "--baseline", made["base"], "--json", tmp_path / "r.json")
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["run"]["golden_hash"] == made["revision"]  # the proposed revision is what evaluate reads
    analysis = report["regression_analysis"]
    assert analysis["golden_changed_queries"] == ["m1", "m3"] and analysis["regressed_queries"] == []
    assert report["run"]["golden_revision"] == {"name": "cardio", "revision": made["revision"], "approved": True,
                                               "approved_by": ["alice"]}
    base = json.loads(Path(made["v2"]).with_name("base.json").read_text())  # evaluated before any proposal
    assert base["run"]["golden_revision"] == {"name": "cardio", "revision": base["run"]["golden_hash"],
                                             "approved": False, "approved_by": []}
    assert store.get_run(db, run_id)["golden_hash"] == made["revision"]
    assert so.verify_chain(db).ok


@pytest.mark.slow
def test_an_unapproved_revision_is_a_flagged_item_of_a_high_risk_run_until_approved(proposed, tmp_path):
    db, made = proposed
    run_id = evaluate(db, made["v2"], made["generated"], "--json", tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text())["run"]["golden_revision"]["approved"] is False
    items = [i for i in so.flagged_items(db, run_id) if i.kind == "golden"]
    assert len(items) == 1 and made["revision"][:12] in items[0].detail and "carol" in items[0].detail
    others = {i.key for i in so.flagged_items(db, run_id) if i.kind != "golden"}
    with pytest.raises(so.SignoffRefused, match="not acknowledged"):
        so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", acknowledged=others)
    assert approve(db, "alice", made["revision"]).exit_code == 0
    # read from the chain at sign-off: the same run now has no golden item
    assert [i for i in so.flagged_items(db, run_id) if i.kind == "golden"] == []
    record = so.decide(db, run_id, "alice", PASSWORDS["alice"], "approve", "ok", acknowledged=others)
    assert record["kind"] == "decision"


def test_the_base_revision_never_proposed_is_flagged_too(proposed):
    db, made = proposed
    [item] = [i for i in so.flagged_items(db, made["base"]) if i.kind == "golden"]
    assert "never proposed" in item.detail


def test_a_run_outside_high_risk_domains_gets_no_golden_item(tmp_path):
    db = str(tmp_path / "s.duckdb")
    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("e1", "usb c cable", ["usb-c cable"])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "e1", "terms": ["usb-c cable", "charger"]}])
    run_id = evaluate(db, golden, generated)
    assert [i.kind for i in so.flagged_items(db, run_id)] == []


@pytest.mark.slow
def test_proposing_a_file_as_it_is_lets_the_first_revision_be_approved(tmp_path):
    db = str(tmp_path / "s.duckdb")
    so.add_user(db, "alice", "approver", PASSWORDS["alice"], "medical")
    so.add_user(db, "carol", "engineer", PASSWORDS["carol"])
    golden = write_jsonl(tmp_path / "g.jsonl", ROWS)
    result = cli("golden", "propose", golden, "--golden-name", "cardio", "--proposer", "carol", "--db", db,
                 password=PASSWORDS["carol"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.jsonl", "s.duckdb"]  # nothing written
    revision = gr.load_revision(golden).revision
    assert approve(db, "alice", revision).exit_code == 0
    run_id = evaluate(db, golden, write_jsonl(tmp_path / "c.jsonl", GENERATED))
    assert [i for i in so.flagged_items(db, run_id) if i.kind == "golden"] == []


def test_store_copy_carries_revisions_and_approvals(proposed, tmp_path, pg):
    db, made = proposed
    assert approve(db, "alice", made["revision"]).exit_code == 0
    target = str(tmp_path / "copy.duckdb") if db.startswith("postgresql") else pg.url(pg.create_database())
    copied = cli("store", "copy", "--from", db, "--to", target)
    assert copied.exit_code == 0, copied.output
    assert gr.is_approved(target, "cardio", made["revision"]) and so.verify_chain(target).ok
    assert store.golden_content(target, made["revision"]) == store.golden_content(db, made["revision"])
