"""Golden-set four-eyes with authority from the chain (issue 32 items 1 to 3 and 6, golden
parts), each attack a regression test on both backends:

- the proposer is an authenticated account (an invented `--proposer` is refused);
- an approval counts only from its approver's chained account state (role, scope, enabled),
  never from its record's own claims, and a golden set names its domains before approval;
- a proposal's diff is taken from the latest approved revision in the chain, naming any
  unapproved file it was made over;
- `golden propose` appends nothing to a broken chain."""

from __future__ import annotations


import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.governance import golden_revisions as gr
from termgate.governance import signoff as so

from conftest import golden_row, run_sql, write_jsonl

PASSWORDS = {"carol": "carol-password", "alice": "alice-password", "lena": "legal-only-pass",
             "eve": "engineer-pass", "vic": "viewer-password", "ada": "admin-password"}


def cli(*args, password=None):
    env = {"TERMGATE_PASSWORD": password} if password else {"TERMGATE_PASSWORD": None}
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def add_accounts(db) -> None:
    for name, role, domains, aliases in (("carol", "approver", "medical", ["carol-gh"]),
                                         ("alice", "approver", "medical", []), ("lena", "approver", "legal", []),
                                         ("eve", "engineer", "", []), ("vic", "viewer", "", []),
                                         ("ada", "admin", "", [])):
        so.add_user(db, name, role, PASSWORDS[name], domains, aliases)


def propose(db, golden, proposer="carol", *extra, password=None, name="cardio"):
    return cli("golden", "propose", golden, "--golden-name", name, "--proposer", proposer, "--db", db, *extra,
               password=password if password is not None else PASSWORDS.get(proposer, "x" * 12))


def approve(db, reviewer, revision, name="cardio"):
    return cli("golden", "approve", name, revision[:12], "--reviewer", reviewer, "--comment", "checked", "--db", db,
               password=PASSWORDS[reviewer])


def golden_kinds(db) -> list[tuple[str, str]]:
    return [(r["kind"], r["actor"]) for r in store.audit_records(db) if r["kind"].startswith("golden")]


MEDICAL = [golden_row("m1", "heart attack", ["myocardial infarction"], domain="medical", forbidden=["panic attack"],
                      critical=True),
           golden_row("m2", "stroke", ["cerebrovascular accident"], domain="medical"),
           golden_row("m3", "flu", ["influenza"], domain="medical")]


@pytest.fixture
def accounts(backend):
    add_accounts(backend)
    return backend


# ---------------------------------------------------------------- item 2: the proposer is an account


@pytest.mark.slow
def test_an_invented_or_unproven_proposer_is_refused_and_records_nothing(accounts, tmp_path):
    db = accounts
    golden = write_jsonl(tmp_path / "g.jsonl", MEDICAL)
    # alice, an approver, proposes under a name nobody has, then would approve alone
    ghost = propose(db, golden, "ghost", password="whatever-it-is")
    assert ghost.exit_code == 4 and "wrong account name or password for 'ghost'" in ghost.output, ghost.output
    wrong = propose(db, golden, "carol", password="not-carols-password")  # a real account, unproven
    assert wrong.exit_code == 4 and "wrong account name or password" in wrong.output
    viewer = propose(db, golden, "vic")  # a viewer may not propose
    assert viewer.exit_code == 4 and "role 'viewer' may not propose" in viewer.output
    assert golden_kinds(db) == [] and store.golden_content(db, gr.load_revision(golden).revision) is None
    # proposed as herself, she cannot approve it: the proposal's actor is the account that signed in
    mine = propose(db, golden, "alice")
    assert mine.exit_code == 0, mine.output
    revision = gr.load_revision(golden).revision
    refused = approve(db, "alice", revision)
    assert refused.exit_code == 4 and "four-eyes" in refused.output
    assert golden_kinds(db) == [("golden_proposal", "alice")] and not gr.is_approved(db, "cardio", revision)


def test_the_proposer_is_the_account_and_its_chained_aliases_count_for_four_eyes(accounts, tmp_path):
    db = accounts
    golden = write_jsonl(tmp_path / "g.jsonl", MEDICAL)
    # the account's canonical name is recorded
    assert propose(db, golden, "Carol", password=PASSWORDS["carol"]).exit_code == 0
    revision = gr.load_revision(golden).revision
    [rev] = gr.list_revisions(db, "cardio")
    assert rev.proposers == ["carol"] and "carol-gh" in rev.proposer_names
    # carol's alias moves to alice after the proposal: alice was the proposer too, her approval never counts
    so.set_aliases(db, "carol", remove=["carol-gh"])
    so.set_aliases(db, "alice", add=["carol-gh"])
    assert approve(db, "alice", revision).exit_code == 4
    # a record appended by a process writing the store (not through termgate's checks) does not count either
    store.append_audit(db, {"created_at": "2026-12-03T10:00:00.000Z", "kind": "golden_approval", "actor": "alice",
                            "run_id": None, "content_hash": revision, "decision": None, "comment": "ok",
                            "payload": {"golden_name": "cardio", "revision": revision}})
    assert not gr.is_approved(db, "cardio", revision)


# ---------------------------------------------------------------- item 1: scope and role from the chain


def _forged(db, actor, revision, name="cardio", role="approver", domains=("medical",)):
    """An approval record as a process that writes the store can append it, claiming what it likes."""
    return store.append_audit(db, {"created_at": "2026-12-03T10:00:00.000Z", "kind": "golden_approval",
                                   "actor": actor, "run_id": None, "content_hash": revision, "decision": None,
                                   "comment": "looks fine", "payload": {"golden_name": name, "revision": revision,
                                                                        "role": role,
                                                                        "approves_domains": list(domains)}})


@pytest.mark.slow
def test_an_approval_counts_only_from_the_approvers_chained_account(accounts, tmp_path):
    db = accounts
    golden = write_jsonl(tmp_path / "g.jsonl", MEDICAL)
    assert propose(db, golden, "carol").exit_code == 0
    revision = gr.load_revision(golden).revision
    so.add_user(db, "dave", "approver", "dave-password", "medical")
    so.disable_user(db, "dave")
    for actor in ("mallory", "lena", "eve", "vic", "dave"):  # no account, legal only, engineer, viewer, disabled
        _forged(db, actor, revision)
    assert not gr.is_approved(db, "cardio", revision)
    assert gr.list_revisions(db, "cardio")[0].approvals == []
    # lena becomes a medical approver only after her record: it still does not count
    so.set_role(db, "lena", "approver", "legal,medical")
    assert not gr.is_approved(db, "cardio", revision)
    # an admin's record counts (its chained role), and says nothing of domains it does not need to
    _forged(db, "ada", revision, role="viewer", domains=())
    [rev] = gr.list_revisions(db, "cardio")
    assert rev.approved and [a.approver for a in rev.approvals] == ["ada"] and rev.approvals[0].domains == ["medical"]
    assert so.verify_chain(db).ok


@pytest.mark.slow
def test_a_golden_set_without_domains_cannot_be_approved(accounts, tmp_path):
    db = accounts
    rows = [{k: v for k, v in golden_row("m1", "heart attack", ["mi"]).items() if k != "context"},
            {k: v for k, v in golden_row("m2", "stroke", ["cva"]).items() if k != "context"}]
    golden = write_jsonl(tmp_path / "g.jsonl", rows)
    assert propose(db, golden, "carol").exit_code == 0
    revision = gr.load_revision(golden).revision
    refused = approve(db, "lena", revision)  # a legal approver; before: approved, and counted for medical runs
    assert refused.exit_code == 4, refused.output
    assert "names no domain" in refused.output and '"context": {"domain":' in refused.output
    assert approve(db, "ada", revision).exit_code == 4  # not even an admin
    _forged(db, "ada", revision)
    assert not gr.is_approved(db, "cardio", revision)
    # a run made medical with --domain carries the golden item: nothing approved its revision
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "m1", "terms": ["mi"]},
                                                   {"query_id": "m2", "terms": ["cva"]}])
    result = cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "cardio", "--db", db,
                 "--domain", "medical", "--drift-judge", "none", "--author", "eve", "-q")
    assert result.exit_code in (0, 3), result.output
    run_id = store.list_runs(db)["run_id"].iloc[0]
    assert [i.kind for i in so.flagged_items(db, run_id)] == ["golden"]


@pytest.mark.slow
def test_an_approval_counts_for_a_run_only_in_the_domains_its_approver_covers(accounts, tmp_path):
    """A set with medical entries and entries without a domain, approved by a medical approver,
    evaluated with --domain legal: the run is legal too, which no approval of it covered."""
    db = accounts
    rows = [golden_row("m1", "heart attack", ["mi"], domain="medical"),
            {k: v for k, v in golden_row("x1", "contract", ["agreement"]).items() if k != "context"}]
    golden = write_jsonl(tmp_path / "g.jsonl", rows)
    assert propose(db, golden, "carol").exit_code == 0
    revision = gr.load_revision(golden).revision
    assert approve(db, "alice", revision).exit_code == 0 and gr.is_approved(db, "cardio", revision)
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "m1", "terms": ["mi"]},
                                                   {"query_id": "x1", "terms": ["agreement"]}])
    result = cli("evaluate", "--golden", golden, "--generated", generated, "--golden-name", "cardio", "--db", db,
                 "--domain", "legal", "--drift-judge", "none", "--author", "eve", "-q")
    assert result.exit_code in (0, 3), result.output
    run_id = store.list_runs(db)["run_id"].iloc[0]
    [item] = [i for i in so.flagged_items(db, run_id) if i.kind == "golden"]
    assert "legal" in item.detail


# ---------------------------------------------------------------- item 3: diffs from the approved base


def _stripped(rows):
    """The attacker's base: every forbidden term and critical flag removed, never approved."""
    return [{k: v for k, v in r.items() if k not in ("forbidden_terms", "critical")} for r in rows]


@pytest.mark.slow
def test_a_proposal_over_an_unapproved_base_shows_the_diff_from_the_approved_one(accounts, tmp_path, monkeypatch):
    db = accounts
    (tmp_path / "v1").mkdir()
    (tmp_path / "x").mkdir()
    v1 = write_jsonl(tmp_path / "v1" / "golden.jsonl", MEDICAL)
    first = propose(db, v1, "carol")
    assert first.exit_code == 0, first.output
    v1_rev = gr.load_revision(v1).revision
    # the first revision is shown as a whole new file
    [rev] = gr.list_revisions(db, "cardio")
    assert rev.base_revision is None and rev.proposed_over is None
    assert "first revision of 'cardio'" in rev.diff and rev.diff.count('\n+{"query_id"') == 3
    assert approve(db, "alice", v1_rev).exit_code == 0
    stripped = write_jsonl(tmp_path / "x" / "golden.jsonl", _stripped(MEDICAL))
    x_rev = gr.load_revision(stripped).revision
    monkeypatch.setattr(gr, "verdicts_for", lambda db, runs, name: [_V("m3", "grippe", "synonym")])
    result = propose(db, stripped, "carol", "--from-verdicts", "--out", tmp_path / "v2.jsonl")
    assert result.exit_code == 0, result.output
    v2_rev = gr.load_revision(tmp_path / "v2.jsonl").revision
    rev = gr.find_revision(db, "cardio", v2_rev)
    assert (rev.base_revision, rev.proposed_over) == (v1_rev, x_rev)
    for diff in (rev.diff, result.output, (tmp_path / "v2.jsonl.diff").read_text()):
        assert f"proposed over {x_rev[:12]}, which is not approved" in diff
        assert '"forbidden_terms": ["panic attack"]' in diff and '"critical": true' in diff  # the hidden removal
        assert "+ expected 'grippe'" in diff
    shown = cli("golden", "show", "cardio", v2_rev[:12], "--db", db)
    assert f"base:       {v1_rev} (approved)" in shown.output
    assert f"over:       {x_rev} (not approved" in shown.output and '"critical": true' in shown.output
    listed = cli("golden", "list", "cardio", "--db", db)
    assert x_rev[:12] in listed.output and "over (unapproved)" in listed.output
    # the same file proposed as it is: named, with the same diff from v1
    assert propose(db, stripped, "carol").exit_code == 0
    assert gr.find_revision(db, "cardio", x_rev).proposed_over is None  # the file itself is the revision
    assert '"critical": true' in gr.find_revision(db, "cardio", x_rev).diff


def test_a_proposal_record_claiming_another_base_is_shown_from_the_chains(accounts, tmp_path):
    """A proposal record whose payload names a base and a diff of its own (a process writing
    the store): the base and diff shown are the chain's, from the stored files."""
    db = accounts
    v1 = write_jsonl(tmp_path / "g.jsonl", MEDICAL)
    assert propose(db, v1, "carol").exit_code == 0
    v1_rev = gr.load_revision(v1).revision
    assert approve(db, "alice", v1_rev).exit_code == 0
    stripped = write_jsonl(tmp_path / "x.jsonl", _stripped(MEDICAL))
    new = gr.load_revision(stripped)
    from termgate.store.golden import save_golden_proposal

    save_golden_proposal(db, [(new.revision, new.path, new.text, "2026-12-03T10:00:00.000Z")], {
        "created_at": "2026-12-03T10:00:00.000Z", "kind": "golden_proposal", "actor": "carol", "run_id": None,
        "content_hash": new.revision, "decision": None, "comment": "2 queries changed",
        "payload": {"golden_name": "cardio", "revision": new.revision, "base_revision": new.revision,
                    "domains": ["medical"], "diff": "2 queries changed: nothing to see\n", "changes": []}})
    rev = gr.find_revision(db, "cardio", new.revision)
    assert rev.base_revision == v1_rev and '"critical": true' in rev.diff and "nothing to see" not in rev.diff


class _V:
    def __init__(self, query_id, term, label):
        self.query_id, self.term, self.label, self.forbid = query_id, term, label, False
        self.created_at, self.seq = "2026-12-01T10:00:00.000Z", 1


# ---------------------------------------------------------------- item 6: nothing on a broken chain


@pytest.mark.slow
def test_propose_refuses_a_broken_chain_and_stores_nothing(accounts, tmp_path, monkeypatch):
    db = accounts
    golden = write_jsonl(tmp_path / "g.jsonl", MEDICAL)
    run_sql(db, "UPDATE audit_log SET comment = 'edited' WHERE seq = 1")
    before = len(store.audit_records(db))
    result = propose(db, golden, "carol")
    assert result.exit_code == 4 and "audit chain is broken" in result.output, result.output
    monkeypatch.setattr(gr, "verdicts_for", lambda db, runs, name: [_V("m3", "grippe", "synonym")])
    result = propose(db, golden, "carol", "--from-verdicts", "--out", tmp_path / "v2.jsonl")
    assert result.exit_code == 4 and "audit chain is broken" in result.output, result.output
    assert len(store.audit_records(db)) == before and golden_kinds(db) == []
    assert store.golden_content(db, gr.load_revision(golden).revision) is None
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix in (".jsonl", ".diff")) == ["g.jsonl"]


def test_the_golden_sets_page_names_the_unapproved_file_and_diffs_from_the_approved_one(accounts, tmp_path,
                                                                                       monkeypatch):
    from test_golden_page import page

    db = accounts
    monkeypatch.setenv("TERMGATE_DB", db)
    v1 = write_jsonl(tmp_path / "g.jsonl", MEDICAL)
    assert propose(db, v1, "carol").exit_code == 0
    v1_rev = gr.load_revision(v1).revision
    assert approve(db, "alice", v1_rev).exit_code == 0
    stripped = write_jsonl(tmp_path / "x.jsonl", _stripped(MEDICAL))
    over = gr.load_revision(stripped)
    proposal = gr.propose(stripped.read_bytes(), [_V("m3", "grippe", "synonym")])
    (tmp_path / "v2.jsonl").write_bytes(proposal.new_bytes)
    new = gr.load_revision(tmp_path / "v2.jsonl")
    gr.record_proposal(db, "cardio", over, new, proposal, so.authenticate(db, "carol", PASSWORDS["carol"]))
    at = page("golden", name="cardio", revision=new.revision[:12])
    assert any(f"Proposed over {over.revision[:12]}, which is not approved: the diff below is from the approved "
               f"revision {v1_rev[:12]}" in w.value for w in at.warning), [w.value for w in at.warning]
    [diff] = [c for c in at.code if c.language == "diff"]
    assert '"critical": true' in diff.value and "+ expected 'grippe'" in diff.value
    overview = next(d.value for d in at.dataframe if "over (unapproved)" in d.value.columns)
    assert list(overview["base (approved)"])[0] == v1_rev[:12]
    assert list(overview["over (unapproved)"])[0] == over.revision[:12]
