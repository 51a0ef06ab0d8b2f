"""Hand-computed fixtures for every scoring rule of SPEC §2 (rules 1–7)."""

from __future__ import annotations

import pytest

from termgate.drift.judge import DriftVerdict
from termgate.models import Thresholds
from termgate.report import build_report

from conftest import golden_row


def only(run):
    assert len(run.scores) == 1
    return run.scores[0]


def test_perfect_expansion(score):
    s = only(score([golden_row("q1", "heart attack", ["myocardial infarction", "MI"])],
                   [{"query_id": "q1", "terms": ["MI", "myocardial infarction"]}]))
    assert (s.precision, s.recall, s.f1, s.term_drift_score, s.passed) == (1.0, 1.0, 1.0, 1.0, True)
    assert s.failure_reasons == []
    assert list(s.generated) == ["mi", "myocardial infarction"]  # first-seen order, normalised


def test_partial_expansion_numbers(score):
    # expected {a,b,c,d}; generated {a,b,x}: TP 2, FP 1, FN 2 -> P 2/3, R 1/2, F1 4/7
    s = only(score([golden_row("q1", "q", ["a", "b", "c", "d"])], [{"query_id": "q1", "terms": ["a", "b", "x"]}]))
    assert s.true_positives == ["a", "b"] and s.false_positives == ["x"] and s.false_negatives == ["c", "d"]
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(0.5)
    assert s.f1 == pytest.approx(4 / 7)
    assert not s.passed
    assert s.failure_reasons == ["recall 0.50 < 0.60"]


def test_both_lists_empty_is_an_empty_expansion(score):
    s = only(score([golden_row("q1", "q", [])], [{"query_id": "q1", "terms": []}]))
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    assert "empty expansion" in s.failure_reasons
    assert s.notes == ["no golden terms provided"]
    assert not s.passed


def test_expected_empty_gives_recall_one(score):
    s = only(score([golden_row("q1", "q", [])], [{"query_id": "q1", "terms": ["x"]}]))
    assert s.recall == 1.0 and s.precision == 0.0 and s.f1 == 0.0
    assert s.notes == ["no golden terms provided"]
    assert s.failure_reasons == ["precision 0.00 < 0.60"]


def test_missing_generated_line_is_empty_expansion(score):
    run = score([golden_row("q1", "q", ["a"]), golden_row("q2", "r", ["b"])], [{"query_id": "q1", "terms": ["a"]}])
    s = run.scores[1]
    assert s.query_id == "q2" and s.generated == {}
    assert s.failure_reasons[0] == "empty expansion"
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    assert s.notes == ["no expansion generated"]


def test_queries_without_a_line_are_noted_and_counted(score):
    # three golden queries, a generated line for q2 only: q1 and q3 have no expansion at all
    run = score([golden_row("q1", "a", ["x"]), golden_row("q2", "b", ["y"]), golden_row("q3", "c", [])],
                [{"query_id": "q2", "terms": ["y"]}])
    assert [s.notes for s in run.scores] == [["no expansion generated"], [],
                                             ["no golden terms provided", "no expansion generated"]]
    assert run.no_expansion == 2 and build_report(run.run)["run"]["no_expansion"] == 2
    # both still score as an empty expansion (SPEC §2 rule 4): only the note differs
    assert run.scores[0].failure_reasons[0] == run.scores[2].failure_reasons[0] == "empty expansion"


def test_an_empty_terms_list_and_an_errored_item_are_not_missing(score):
    run = score([golden_row("q1", "a", ["x"]), golden_row("q2", "b", ["y"])],
                [{"query_id": "q1", "terms": []}, {"query_id": "q2", "terms": ["y"]}], errors={"q2": "HTTP 429 after 2 tries"})
    assert [s.notes for s in run.scores] == [[], []]
    assert run.scores[0].failure_reasons == ["empty expansion", "precision 0.00 < 0.60", "recall 0.00 < 0.60"]
    assert run.scores[1].failure_reasons[0] == "error: HTTP 429 after 2 tries"
    assert run.no_expansion == 0


def test_underweight_term_is_fp_and_fn_with_reason(score):
    s = only(score([golden_row("q1", "heart attack", [{"term": "MI", "min_weight": 0.5}, "cardiac arrest"])],
                   [{"query_id": "q1", "terms": [{"term": "mi", "weight": 0.3}, "cardiac arrest"]}]))
    assert s.false_positives == ["mi"] and s.false_negatives == ["mi"]
    assert "underweight: mi 0.30 < 0.50" in s.failure_reasons
    assert s.drift_terms == []  # an underweight expected term is never drift


def test_duplicates_after_normalisation_merge_keeping_highest_weight(score):
    s = only(score([golden_row("q1", "q", [{"term": "MI", "min_weight": 0.2}, {"term": " mi ", "min_weight": 0.6}])],
                   [{"query_id": "q1", "terms": [{"term": "MI", "weight": 0.5}, {"term": "ｍｉ", "weight": 0.7}]}]))
    assert s.expected == {"mi": 0.6}  # highest min_weight kept
    assert s.generated == {"mi": 0.7}  # highest weight kept; full-width folded
    assert s.true_positives == ["mi"]


def test_decomposed_unicode_matches_composed(score):
    s = only(score([golden_row("q1", "dry eyes", ["Sjögren's syndrome"])],
                   [{"query_id": "q1", "terms": ["SJO\u0308GREN'S   SYNDROME"]}]))
    assert s.true_positives == ["sjögren's syndrome"]


def test_forbidden_term_is_drift(score):
    # 5 generated, 1 forbidden: drift score 0.8 -> still passes the drift check (>= 0.8)
    s = only(score([golden_row("q1", "heart attack", ["a", "b", "c", "d"], forbidden=["Panic Attack"])],
                   [{"query_id": "q1", "terms": ["a", "b", "c", "d", "panic attack"]}]))
    assert s.drift_terms == ["panic attack"]
    assert s.drift_reasons == {"panic attack": "forbidden term"}
    assert s.term_drift_score == pytest.approx(0.8)
    assert s.passed


# ---------------------------------------------------------------- forbidden_fails (issue 31 item 14)


@pytest.mark.parametrize("rule, critical, passed", [
    ("critical", True, False),   # the default: a forbidden term fails a critical query …
    ("critical", False, True),   # … not another one (its drift score 0.8 meets drift_min)
    ("all", False, False),
    ("all", True, False),
    ("none", True, True),        # only through drift: the old behaviour
])
def test_a_forbidden_term_fails_by_the_rule_whatever_the_drift_score(score, rule, critical, passed):
    # 5 generated, 1 forbidden: drift score 0.8, exactly drift_min; precision 0.8, recall 1
    run = score([golden_row("q1", "heart attack", ["a", "b", "c", "d"], forbidden=["Panic Attack"], critical=critical)],
                [{"query_id": "q1", "terms": ["a", "b", "c", "d", "panic attack"]}],
                thresholds=Thresholds(forbidden_fails=rule))
    s = only(run)
    assert s.term_drift_score == pytest.approx(0.8) and s.passed is passed
    assert s.failure_reasons == ([] if passed else ["forbidden term: panic attack"])
    if critical:
        assert (run.gate.decision == "fail") is not passed  # a critical query that fails fails the gate


def test_forbidden_fails_defaults_to_critical_and_enters_the_content_hash(score):
    assert Thresholds().forbidden_fails == "critical"
    rows = ([golden_row("q1", "q", ["a", "b", "c", "d"], forbidden=["x"], critical=True)],
            [{"query_id": "q1", "terms": ["a", "b", "c", "d", "x"]}])
    hashes = {rule: score(*rows, thresholds=Thresholds(forbidden_fails=rule)).content_hash
              for rule in ("critical", "all", "none")}
    assert len(set(hashes.values())) == 3


def test_drift_check_fails_below_threshold(score):
    s = only(score([golden_row("q1", "q", ["a"], forbidden=["bad"])], [{"query_id": "q1", "terms": ["a", "bad"]}]))
    assert s.term_drift_score == 0.5
    assert "term_drift_score 0.50 < 0.80" in s.failure_reasons
    assert "precision 0.50 < 0.60" in s.failure_reasons


def test_threshold_comparisons_allow_epsilon(score):
    # recall 3/5 = 0.6 exactly passes recall_min 0.6; precision 3/5 passes 0.6
    s = only(score([golden_row("q1", "q", ["a", "b", "c", "d", "e"])],
                   [{"query_id": "q1", "terms": ["a", "b", "c", "x", "y"]}]))
    assert s.passed


class ListJudge:
    """A judge that says drift for terms in `drift`, undecided for terms in `unsure`."""

    name = "test"

    def __init__(self, drift=(), unsure=()):
        self.drift, self.unsure, self.calls = set(drift), set(unsure), []

    def config(self):
        return {"judge": "test"}

    def judge(self, candidates):
        self.calls.append([c.term for c in candidates])
        return [DriftVerdict(None, "timeout") if c.term in self.unsure else
                DriftVerdict(c.term in self.drift, "unrelated") for c in candidates]


def test_judge_sees_only_unforbidden_non_expected_false_positives(score):
    judge = ListJudge(drift={"banana"}, unsure={"guitar"})
    s = only(score([golden_row("q1", "heart attack", [{"term": "mi", "min_weight": 0.9}, "cardiac"],
                               forbidden=["panic attack"])],
                   [{"query_id": "q1", "terms": ["cardiac", {"term": "mi", "weight": 0.1}, "panic attack",
                                                  "banana", "guitar"]}], judge=judge))
    assert judge.calls == [["banana", "guitar"]]  # not the TP, not the underweight mi, not the forbidden term
    assert s.drift_terms == ["panic attack", "banana"]
    assert s.unjudged_terms == ["guitar"]
    assert s.term_drift_score == pytest.approx(1 - 2 / 5)


def test_errored_item_is_scored_empty_with_reason(score):
    s = only(score([golden_row("q1", "q", ["a"])], [], errors={"q1": "timeout after 3 tries"}))
    assert s.error == "timeout after 3 tries"
    assert s.failure_reasons[0] == "error: timeout after 3 tries"
    assert not s.passed


def test_custom_thresholds_apply(score):
    s = only(score([golden_row("q1", "q", ["a", "b"])], [{"query_id": "q1", "terms": ["a"]}],
                   thresholds=Thresholds(recall_min=0.5)))
    assert s.passed  # recall 0.5 >= 0.5


def test_macro_means_are_over_golden_queries(score):
    run = score([golden_row("q1", "q", ["a"]), golden_row("q2", "r", ["b", "c"])],
                [{"query_id": "q1", "terms": ["a"]}, {"query_id": "q2", "terms": ["b", "x"]}])
    # q1: P1 R1 F1 1; q2: P .5 R .5 F1 .5 -> macro .75; micro TP2 FP1 FN1 -> P 2/3 R 2/3
    assert run.aggregate.macro_precision == pytest.approx(0.75)
    assert run.aggregate.macro_f1 == pytest.approx(0.75)
    assert run.aggregate.micro_precision == pytest.approx(2 / 3)
    assert run.aggregate.micro_recall == pytest.approx(2 / 3)


def test_a_bad_forbidden_fails_is_exit_2_naming_file_line_and_field(tmp_path):
    from click.testing import CliRunner

    from termgate.cli import main
    from conftest import write_jsonl

    golden = write_jsonl(tmp_path / "g.jsonl", [golden_row("q1", "q", ["a"])])
    generated = write_jsonl(tmp_path / "c.jsonl", [{"query_id": "q1", "terms": ["a"]}])
    thresholds = tmp_path / "t.toml"
    thresholds.write_text('drift_min = 0.8\nforbidden_fails = "always"\n', encoding="utf-8")
    result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated),
                                       "--thresholds", str(thresholds), "--no-store", "--drift-judge", "none"])
    assert result.exit_code == 2
    assert f'{thresholds}:2: forbidden_fails: must be "critical", "all" or "none" (got "always")' in result.output


@pytest.mark.slow
def test_rule_one_in_sql_is_normalize_term_for_every_character_and_plain_pair():
    # the scorer's normalise_text: plain text (PLAIN_TEXT) in SQL, the rest through Python
    # (normalize_term itself); every character below U+0800 alone, so none is taken for
    # plain that is not, every pair of plain characters, and plain runs of white space
    from itertools import product

    from termgate.scoring.metrics import normalize_term
    from termgate.scoring.scorer.database import PLAIN_TEXT, connect_scorer

    con = connect_scorer()
    try:
        plain = [c for (c,) in con.execute(f"SELECT c FROM unnest($c) t(c) WHERE regexp_full_match(c, '{PLAIN_TEXT}')",
                                           {"c": [chr(i) for i in range(0x300)]}).fetchall()]
        assert len(plain) == 128 + 61  # ASCII, and the Latin-1 letters but × ÷ ß
        texts = ([chr(i) for i in range(1, 0x800)] + ["ﬁ", "ẞ", "İ", "Ｍ", "\u3000", "\u2028"]
                 + ["".join(p) for p in product(plain, repeat=2)]
                 + [f" \t{a}  {b}\x1f" for a, b in zip(plain, reversed(plain))])
        got = con.execute("SELECT list_transform($t, lambda x: normalise_text(x))", {"t": texts}).fetchall()[0][0]
    finally:
        con.close()
    assert [(t, g) for t, g in zip(texts, got) if g != normalize_term(t)] == []


@pytest.mark.slow
def test_non_ascii_golden_set_scores_in_bounded_memory(score, monkeypatch):
    # 2,000 queries of accented and Greek terms, all distinct: the scorer used to join a map
    # of every distinct non-ASCII text into every row (quadratic, 1.4 GB at 1,000 queries);
    # now each term is normalised as its row is built, within a 100 MB DuckDB cap
    monkeypatch.setenv("TERMGATE_DUCKDB_MEMORY", "100MB")
    n = 2000
    golden = [golden_row(f"q{i}", f"requête {i}", [f"Café Crème {i}", f"STRAẞE {i}", f"Ωμέγα {i}", f"plain {i}"],
                         domain="Médical", forbidden=[f"forbidden é {i}"]) for i in range(n)]
    generated = [{"query_id": f"q{i}", "terms": [f"café  crème {i}", f"strasse {i}", f"ωμέγα {i}", f"éxtra {i}"]}
                 for i in range(n)]
    run = score(golden, generated)
    assert len(run.scores) == n
    for i in (0, n // 2, n - 1):
        s = run.scores[i]
        assert s.true_positives == [f"café crème {i}", f"strasse {i}", f"ωμέγα {i}"]
        assert s.false_positives == [f"éxtra {i}"] and s.false_negatives == [f"plain {i}"]
    assert {s.domain for s in run.scores} == {"médical"}
