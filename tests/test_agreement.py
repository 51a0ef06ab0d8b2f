"""Judge agreement (issue 19 item 4): Cohen's kappa against hand computations, its bootstrap
interval against an item-by-item bootstrap, `termgate drift agreement` on both backends with a
deterministic judge, and the sign-off flag for an unvalidated drift judge (drift_kappa_min)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from termgate.governance import agreement as ag
from termgate.governance import signoff as so
from termgate.governance import verdicts as vd
from termgate.cli import main
from termgate.drift.judge import DriftVerdict

from conftest import golden_row, write_jsonl
from test_verdicts import GENERATED, PASSWORDS, ROWS, add_users

# ---------------------------------------------------------------- kappa, by hand


@pytest.mark.parametrize("table, kappa", [
    # n 50: p_o = 35/50 = 0.7; judge 25/50 drift, reviewers 30/50: p_e = .5·.6 + .5·.4 = 0.5 -> (0.7-0.5)/0.5
    ([[20, 5], [10, 15]], 0.4),
    # n 100: p_o = 0.6; rows .6/.4, columns .7/.3: p_e = .42 + .12 = .54 -> 0.06/0.46
    ([[45, 15], [25, 15]], 0.06 / 0.46),
    # perfect agreement on both classes
    ([[3, 0], [0, 7]], 1.0),
    # always opposite, balanced: p_o = 0, p_e = 0.5 -> -1
    ([[0, 5], [5, 0]], -1.0),
    # the judge never flags: p_e = p_o = 0.6 -> 0
    ([[0, 0], [4, 6]], 0.0),
    # three labels: p_o = 2/4; rows .25 .25 .5, columns 0 .5 .5: p_e = 0.375 -> 0.125/0.625
    ([[0, 0, 1], [0, 1, 0], [0, 1, 1]], 0.2),
])
def test_kappa_equals_the_hand_computation(table, kappa):
    assert ag.cohen_kappa(table) == pytest.approx(kappa, abs=1e-12)


def test_kappa_is_undefined_when_chance_explains_everything():
    assert math.isnan(ag.cohen_kappa([[0, 0], [0, 9]]))  # both raters: all not drift
    assert math.isnan(ag.cohen_kappa([[0, 0], [0, 0]]))


def test_the_table_counts_every_cell_and_its_precision_and_recall():
    pairs = [(True, True)] * 4 + [(True, False)] * 2 + [(False, True)] + [(False, False)] * 3
    table = ag.agreement_table(pairs, unjudged=2)
    assert (table.both_drift, table.judge_only, table.reviewer_only, table.neither, table.n, table.unjudged) == (
        4, 2, 1, 3, 10, 2)
    assert table.precision == pytest.approx(4 / 6) and table.recall == pytest.approx(4 / 5)
    assert table.kappa == pytest.approx(0.4)  # p_o 0.7, p_e .6·.5 + .4·.5 = 0.5
    assert ag.agreement_table([]).precision == 0.0 and math.isnan(ag.agreement_table([]).kappa)


def _item_bootstrap(table, resamples, seed):
    """A second implementation: resample the rated items themselves, one index at a time."""
    items = [(i, j) for i in range(2) for j in range(2) for _ in range(table[i][j])]
    rng = np.random.default_rng(seed)
    kappas = []
    for _ in range(resamples):
        m = np.zeros((2, 2))
        for k in rng.integers(0, len(items), len(items)):
            m[items[k]] += 1
        kappas.append(ag.cohen_kappa(m))
    kappas = np.array(kappas)
    return np.percentile(kappas[~np.isnan(kappas)], [2.5, 97.5])


def test_the_bootstrap_interval_is_seeded_and_matches_an_item_by_item_bootstrap():
    table = [[20, 5], [10, 15]]
    low, high = ag.kappa_interval(table, 2000, seed=3)
    assert (low, high) == ag.kappa_interval(table, 2000, seed=3)  # reproducible
    assert ag.kappa_interval(table, 2000, seed=4) != (low, high)
    assert low < 0.4 < high
    other = _item_bootstrap(table, 2000, seed=11)
    assert abs(low - other[0]) < 0.06 and abs(high - other[1]) < 0.06  # the same distribution
    assert ag.kappa_interval([[5, 0], [0, 5]]) == (1.0, 1.0)
    assert all(math.isnan(x) for x in ag.kappa_interval([[1, 0], [0, 0]]))


# ---------------------------------------------------------------- end to end, with a deterministic judge


class SetJudge:
    """Drift exactly for the terms it is given."""

    name = "fake"

    def __init__(self, flags):
        self.flags = set(flags)

    def config(self) -> dict:
        return {"judge": "fake", "flags": sorted(self.flags)}

    def judge(self, candidates):
        return [DriftVerdict(c.term in self.flags, "flagged" if c.term in self.flags else "let through")
                for c in candidates]


RECORDED = SetJudge({"migraine", "hypotension", "nose bleed"})
CURRENT = SetJudge({"migraine", "hypotension", "low sugar"})


def cli(*args, password=None):
    env = {"TERMGATE_PASSWORD": password} if password else {}
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def evaluate_with(monkeypatch, db, tmp_path, judge, rows=ROWS, generated=GENERATED, thresholds=()) -> str:
    monkeypatch.setattr("termgate.cli.evaluate.resolve_judge", lambda *a, **k: judge)
    golden = write_jsonl(tmp_path / "golden.jsonl", rows)
    gen = write_jsonl(tmp_path / "generated.jsonl", generated)
    (tmp_path / "t.json").write_text(json.dumps(dict(thresholds)), encoding="utf-8")
    result = cli("evaluate", "--golden", golden, "--generated", gen, "--db", db, "--author", "ci-bot",
                 "--thresholds", tmp_path / "t.json", "--json", tmp_path / "r.json", "-q")
    assert result.exit_code in (1, 3), result.output
    return json.loads((tmp_path / "r.json").read_text())["evaluation_id"]


# (term, query): eve's and alice's labels; the recorded judge flags migraine, hypotension, nose bleed
EVE = [("q1", "cardiac arrest", "related"), ("q2", "brain attack", "synonym"), ("q2", "migraine", "drift"),
       ("q4", "hypotension", "drift"), ("q5", "low sugar", "drift"), ("q6", "nose bleed", "synonym"),
       ("q1", "panic attack", "drift"), ("q1", "mi", "synonym")]  # forbidden and matched: never the judge's
ALICE = [("q2", "migraine", "drift"), ("q4", "hypotension", "related"), ("q6", "nose bleed", "drift"),
         ("q1", "cardiac arrest", "related")]


@pytest.mark.slow
def test_drift_agreement_prints_every_figure_on_both_backends(backend, tmp_path, monkeypatch):
    db = backend
    run_id = evaluate_with(monkeypatch, db, tmp_path, RECORDED)
    add_users(db)
    for name, labels in (("eve", EVE), ("alice", ALICE)):
        account = so.authenticate(db, name, PASSWORDS[name])
        for query_id, term, label in labels:
            vd.record_verdict(db, account, run_id, query_id, term, label, False, "")
    monkeypatch.setattr("termgate.drift.resolve.resolve_judge", lambda *a, **k: CURRENT)
    report = ag.agreement_report(db)
    current, recorded = report.judges
    assert report.verdicts == 12
    # recorded, by hand: eve D/D migraine, hypotension; D/N nose bleed; N/D low sugar; N/N cardiac, brain;
    # alice D/D migraine, nose bleed; D/N hypotension; N/N cardiac -> 4 2 1 3, p_o 0.7, p_e 0.5
    assert recorded.source == "recorded" and recorded.domain == "medical" and recorded.judge == "fake"
    t = recorded.table
    assert (t.both_drift, t.judge_only, t.reviewer_only, t.neither) == (4, 2, 1, 3)
    assert t.kappa == pytest.approx(0.4) and t.precision == pytest.approx(4 / 6) and t.recall == pytest.approx(0.8)
    assert json.loads(recorded.config) == RECORDED.config()
    # current, re-judged: eve agrees on all six; alice D/D migraine, D/N hypotension, N/D nose bleed, N/N cardiac
    t = current.table
    assert current.source == "current" and json.loads(current.config) == CURRENT.config()
    assert (t.both_drift, t.judge_only, t.reviewer_only, t.neither) == (4, 1, 1, 4) and t.kappa == pytest.approx(0.6)
    # reviewers on their four shared terms: one in every cell (kappa 0); labels 0.2 (the 3×3 case above)
    (pair,) = report.raters
    assert (pair.reviewer_a, pair.reviewer_b, pair.table.n) == ("alice", "eve", 4)
    assert pair.table.kappa == pytest.approx(0.0) and pair.label_kappa == pytest.approx(0.2)
    printed = cli("drift", "agreement", "--domain", "medical", "--db", db)
    assert printed.exit_code == 0, printed.output
    lines = printed.output.splitlines()
    row = next(line for line in lines if " recorded " in line).split()
    assert row[:5] == ["medical", "fake", ag.config_id(RECORDED.config()), "recorded", "10"]
    assert row[5] == "0.400" and row[-5:] == ["4", "2", "1", "3", "0"]
    assert any(line.split()[:5] == ["medical", "alice", "eve", "4", "0.000"] for line in lines)
    assert "no verdicts in domain legal" in cli("drift", "agreement", "--domain", "legal", "--db", db).output


@pytest.mark.slow
def test_agreement_refuses_a_broken_chain(db, tmp_path, monkeypatch):
    from conftest import run_sql

    run_id = evaluate_with(monkeypatch, str(db), tmp_path, RECORDED)
    add_users(db)
    vd.record_verdict(db, so.authenticate(db, "eve", PASSWORDS["eve"]), run_id, "q2", "migraine", "drift", False, "")
    run_sql(db, "UPDATE audit_log SET payload = replace(payload, '\"drift\"', '\"synonym\"') WHERE kind = 'verdict'")
    result = cli("drift", "agreement", "--db", db, "--drift-judge", "none")
    assert result.exit_code == 1 and "cannot be trusted" in result.stderr


# ---------------------------------------------------------------- the sign-off flag


def _thirty(tmp_path):
    """30 medical queries z00..z29, each generating its expected term and one false positive t{i}."""
    rows = [golden_row(f"z{i:02d}", f"query {i}", [f"x{i}"], domain="medical") for i in range(30)]
    generated = [{"query_id": f"z{i:02d}", "terms": [f"x{i}", f"t{i}"]} for i in range(30)]
    return rows, generated


LENIENT = {"mean_precision_min": 0.4, "precision_min": 0.4}
"""Precision 0.5 per query passes: the run is a review run an approver may approve."""


@pytest.fixture
def thirty_verdicts(db, tmp_path, monkeypatch):
    """The judge flags t0..t14; eve calls the even ones drift. Cells: D/D 8 (0, 2, … 14), D/N 7,
    N/D 7 (16 … 28), N/N 8; p_o 16/30, p_e 0.5: kappa (16/30 − 0.5)/0.5 = 1/15 ≈ 0.07."""
    rows, generated = _thirty(tmp_path)
    run_id = evaluate_with(monkeypatch, str(db), tmp_path, SetJudge({f"t{i}" for i in range(15)}), rows, generated,
                           LENIENT)
    add_users(db)
    eve = so.authenticate(db, "eve", PASSWORDS["eve"])
    for i in range(29):
        vd.record_verdict(db, eve, run_id, f"z{i:02d}", f"t{i}", "drift" if i % 2 == 0 else "related", False, "")
    return db, run_id, eve


def _config(tmp_path, monkeypatch, text):
    path = tmp_path / "termgate.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(path))


@pytest.mark.slow
def test_an_unvalidated_judge_is_a_flagged_item_from_thirty_verdicts_on(thirty_verdicts, tmp_path, monkeypatch):
    db, run_id, eve = thirty_verdicts
    assert ag.judge_unvalidated(db, run_id) is None  # off by default
    _config(tmp_path, monkeypatch, "drift_kappa_min = 0.6\n")
    assert ag.judge_unvalidated(db, run_id) is None  # 29 verdicts: too few to say
    vd.record_verdict(db, eve, run_id, "z29", "t29", "related", False, "")
    message = "drift judge unvalidated for medical (κ 0.07 < 0.60, n = 30)"
    assert ag.judge_unvalidated(db, run_id) == message
    assert ag.judge_unvalidated(db, so.store.get_run(db, run_id)) == message
    judge_items = [i for i in so.flagged_items(db, run_id) if i.kind == "judge"]
    assert [(i.key, i.detail) for i in judge_items] == [("judge:medical:", message)]
    keys = {i.key for i in so.flagged_items(db, run_id)}
    so.add_user(db, "bob", "approver", "pw-bob-123456", domains=["medical"])
    bob = so.authenticate(db, "bob", "pw-bob-123456")
    with pytest.raises(so.SignoffRefused, match="not acknowledged"):
        so.decide_as(db, run_id, bob, "approve", "ok", acknowledged=keys - {"judge:medical:"})
    approved = so.decide_as(db, run_id, bob, "approve", "judge checked by hand", acknowledged=keys)
    assert "judge:medical:" in approved["payload"]["acknowledged"]
    signoff = cli("signoff", run_id, "--reject", "--reviewer", "eve", "--comment", "x", "--db", db,
                  password=PASSWORDS["eve"])
    assert "[judge]" in signoff.output and message in signoff.output  # listed before a decision
    _config(tmp_path, monkeypatch, "drift_kappa_min = 0.05\n")  # 0.07 is enough
    assert ag.judge_unvalidated(db, run_id) is None


@pytest.mark.slow
def test_only_the_runs_own_judge_configuration_counts(thirty_verdicts, tmp_path, monkeypatch):
    db, run_id, eve = thirty_verdicts
    vd.record_verdict(db, eve, run_id, "z29", "t29", "related", False, "")
    _config(tmp_path, monkeypatch, "drift_kappa_min = 0.6\n")
    (tmp_path / "other").mkdir()
    rows, generated = _thirty(tmp_path)
    other = evaluate_with(monkeypatch, str(db), tmp_path / "other", SetJudge({"t0"}), rows, generated, LENIENT)
    assert ag.judge_unvalidated(db, other) is None  # no verdict on this configuration's judgements
    assert ag.judge_unvalidated(db, run_id) is not None


def test_a_bad_kappa_minimum_is_an_input_error(tmp_path, monkeypatch):
    from termgate.config import load_settings
    from termgate.errors import InputError

    _config(tmp_path, monkeypatch, "drift_kappa_min = 2\n")
    with pytest.raises(InputError, match="drift_kappa_min"):
        load_settings()
    _config(tmp_path, monkeypatch, "drift_kappa_min = 0.6\n")
    assert load_settings().drift_kappa_min == 0.6
