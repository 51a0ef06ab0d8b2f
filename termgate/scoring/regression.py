"""Compare a run with its baseline, matched by query_id (SPEC §2 rule 8)."""

from __future__ import annotations

from dataclasses import dataclass, field

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .metrics import EPSILON, FORBIDDEN_FAILS, FORBIDDEN_REASON
from ..models import PASS_RULES, Baseline, BaselineRow, recorded_rule

__all__ = ["BaselineRow", "Baseline", "RegressionResult", "compare_to_baseline", "pair_queries", "revisions_of_one_set",
           "DIFFERENT_GOLDEN_SET", "OTHER_REVISION", "other_name_note", "names_differ", "NEWLY_FAILING",
           "regression_label", "newly_failing_aside", "rules_note", "passed_under"]

DIFFERENT_GOLDEN_SET = ("The baseline was scored on a different golden set: deltas mix curation "
                        "changes with model changes.")
"""The one wording of that warning: evaluate's recommendation and the dashboard's Compare."""

OTHER_REVISION = ("The baseline was scored on another revision of this golden set: queries whose golden "
                  "entry changed are golden_changed, listed apart and left out of the statistics.")
"""Compare's note when the two runs used two revisions of one golden set (SPEC §2 rule 8)."""


NEWLY_FAILING = "newly failing"
"""How a regressed query whose F1 did not fall reads: it passed in the baseline and fails now."""


def regression_label(status: str | None, f1: float | None, baseline_f1: float | None) -> str | None:
    """How a query's regression status reads wherever it is shown (reports, the CLI, the
    dashboard): a `regressed` query whose F1 did not fall (within the 1e-9 tolerance)
    regressed only because it passed in the baseline and fails now, and reads "newly
    failing"; every other status reads as itself. The status value stays `regressed`
    (SPEC §2 rule 8). A missing F1 (None or NaN) never reads as "did not fall"."""
    if status == "regressed" and f1 is not None and baseline_f1 is not None and f1 >= baseline_f1 - EPSILON:
        return NEWLY_FAILING
    return status


RULES_CHANGED = "The baseline was scored under other pass rules"
"""How rules_note begins; the delta summary repeats it with the rules named."""


def rules_note(current: dict, baseline: dict | None) -> str | None:
    """The note when the baseline was scored under other pass rules (SPEC §2 rule 8):
    `current` and `baseline` are the two runs' thresholds as recorded (recorded_rule reads a
    key a run recorded before it existed); None when they agree or the baseline's are unknown."""
    if baseline is None:
        return None
    changed = [(k, recorded_rule(baseline, k), recorded_rule(current, k)) for k in PASS_RULES
               if recorded_rule(baseline, k) != recorded_rule(current, k)]
    if not changed:
        return None
    named = "; ".join(f"{k} {_shown(old)}, this run {_shown(new)}" for k, old, new in changed)
    out = f"{RULES_CHANGED} ({named}): pass/fail changes mix rule changes with model changes."
    if any(k == "forbidden_fails" for k, _, _ in changed):
        out += (" This run's pass/fail is compared as the baseline's forbidden_fails reads it, so a query failed or "
                "passed only by the forbidden-term rule is not listed as regressed or improved.")
    return out


def _shown(value) -> str:
    return format(value, "g") if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


# Rule 6's pass/fail of a scored or stored row as another forbidden_fails reads it: the other
# checks are met when the row passed, or when it failed only by forbidden terms (an
# underweight reason never fails a query on its own); then FORBIDDEN_FAILS under `$ff`.
_PASSED_UNDER = f"""
SELECT (passed OR len(list_filter(coalesce(failure_reasons, []), lambda r: NOT (starts_with(r, '{FORBIDDEN_REASON}')
                                  OR starts_with(r, 'underweight: ')))) = 0)
       AND NOT {FORBIDDEN_FAILS} AS passed
FROM (SELECT passed, failure_reasons, critical,
             len(list_filter(coalesce(drift_reasons, []), lambda r: r = 'forbidden term')) AS n_forbidden FROM side)
"""


def passed_under(side: pa.Table, forbidden_fails: str) -> pa.ChunkedArray:
    """Each row's pass/fail (SPEC §2 rule 6) had it been scored under this forbidden_fails;
    `side` holds `passed`, `failure_reasons`, `drift_reasons` and `critical` as scored or stored."""
    with duckdb.connect(":memory:") as con:
        con.register("side", side)
        return con.sql(_PASSED_UNDER, params={"ff": forbidden_fails}).to_arrow_table().column("passed")


def other_name_note(name: str, base_name: str) -> str:
    """The note when the two runs' golden sets have other names but the same content (SPEC §1.1:
    two names are two golden sets, whatever the content)."""
    return (f"The baseline's golden set is named {base_name!r}, this run's {name!r}, with the same content: "
            "under two names they are two golden sets (the trend, the noise floor, approvals and the comment "
            f"marker go by name); run with --golden-name {base_name!r} to keep one set.")


def names_differ(name: str | None, base_name: str | None) -> bool:
    """Whether both runs recorded a golden-set name and the names differ (SPEC §1.1)."""
    return name is not None and base_name is not None and name != base_name


@dataclass(slots=True)
class RegressionResult:
    """Outcome of the comparison; `status` maps query_id -> regressed/improved/unchanged/added."""

    baseline_id: str | None
    regressed: list[str] = field(default_factory=list)
    improved: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    status: dict[str, str] = field(default_factory=dict)
    baseline_f1: dict[str, float] = field(default_factory=dict)
    golden_changed: list[str] = field(default_factory=list)
    """Queries whose golden entry differs between two revisions of the same golden set."""
    newly_failing: list[str] = field(default_factory=list)
    """The regressed queries whose F1 did not fall (regression_label: "newly failing")."""
    golden_set_changed: bool = False
    """The baseline's golden set is another one: another revision, or another name (SPEC §1.1)."""
    other_revision: bool = False
    """The baseline used another revision of the same golden set (same name, another hash)."""
    rules_changed: str | None = None
    """rules_note: the baseline was scored under other pass rules (SPEC §2 rule 8)."""
    other_name: tuple[str, str] | None = None
    """(this run's, the baseline's) golden-set names when they differ and the content is the
    same: two golden sets all the same (SPEC §1.1)."""
    mean_f1_delta: float | None = None
    summary: str = "No baseline was given: regression analysis skipped."

    @property
    def detected(self) -> bool:
        return bool(self.regressed)


# The rule, once (SPEC §2 rule 8), over the two sides' keys: `$worse` and `$better` carry the
# 1e-9 tolerance in the query's favour; `$revisions` is true when the sides are two revisions
# of one golden set, and then a query whose golden entry differs is golden_changed (neither
# regressed nor improved). Rows come back in the current run's order, then the removed
# queries in the baseline's.
_RULE_SQL = """
SELECT c.row AS current_row, b.row AS baseline_row,
       CASE WHEN c.query_id IS NULL THEN 'removed'
            WHEN b.query_id IS NULL THEN 'added'
            WHEN $revisions AND c.entry <> b.entry THEN 'golden_changed'  -- both recorded, and they differ
            WHEN b.f1 - c.f1 > $worse OR (b.passed AND NOT c.passed) THEN 'regressed'
            WHEN c.f1 - b.f1 > $better OR (NOT b.passed AND c.passed) THEN 'improved'
            ELSE 'unchanged' END AS status,
       c.f1 - b.f1 AS delta_f1
FROM current_keys c FULL OUTER JOIN baseline_keys b ON c.query_id = b.query_id
ORDER BY c.row NULLS LAST, b.row
"""


def _keys(side: pa.Table, passed=None) -> pa.Table:
    entry = (side.column("golden_entry_hash") if "golden_entry_hash" in side.column_names
             else pa.nulls(side.num_rows, pa.string()))
    passed = side.column("passed") if passed is None else passed
    return pa.table({"query_id": side.column("query_id"), "f1": side.column("f1"), "passed": passed,
                     "entry": entry, "row": pa.array(np.arange(side.num_rows), pa.int64())})


def revisions_of_one_set(current: tuple[str | None, str | None], baseline: tuple[str | None, str | None]) -> bool:
    """Whether two runs' (golden name, golden hash) are two revisions of one golden set:
    the same name (SPEC §1.1; a run that recorded none names no set), another hash."""
    (name, digest), (base_name, base_digest) = current, baseline
    return name is not None and name == base_name and digest is not None and base_digest is not None \
        and digest != base_digest


def pair_queries(current: pa.Table, baseline: pa.Table, regression_delta: float,
                 revisions: bool = False, passed_as_baseline=None) -> pa.Table:
    """The regression rule (SPEC §2 rule 8), the one implementation every comparison uses.

    `current` and `baseline` hold one row per query with at least `query_id`, `f1` and
    `passed` (and `golden_entry_hash` when known); any other columns are carried along.
    `revisions`: the sides are two revisions of one golden set (revisions_of_one_set).
    `passed_as_baseline`: the current rows' pass/fail under the baseline's forbidden_fails
    (passed_under), when the two differ; the rule then reads it instead of `passed`.
    Returns one row per query on either side: `query_id`, `status` (regressed / improved /
    unchanged / added / removed / golden_changed), `delta_f1` (current − baseline, null for
    a one-sided query), then every other column of `current` under its own name and of
    `baseline` prefixed `base_` (null on the side a query is missing from); in `current`'s
    order, then the removed queries in `baseline`'s order.
    """
    clash = [n for n in current.column_names if n in ("status", "delta_f1") or n.startswith("base_")]
    if clash:
        raise ValueError(f"pair_queries: current's columns {clash} would clash with its output")
    delta = float(regression_delta)
    with duckdb.connect(":memory:") as con:
        con.register("current_keys", _keys(current, passed_as_baseline))
        con.register("baseline_keys", _keys(baseline))
        index = con.sql(_RULE_SQL, params={"worse": delta + EPSILON, "better": delta - EPSILON,
                                           "revisions": bool(revisions)}).to_arrow_table()
    # only the keys went through DuckDB; the other columns, lists included, are gathered by row
    here, there = current.take(index.column("current_row")), baseline.take(index.column("baseline_row"))
    columns = {"query_id": pc.coalesce(here.column("query_id"), there.column("query_id")),
               "status": index.column("status"), "delta_f1": index.column("delta_f1")}
    columns.update((n, here.column(n)) for n in current.column_names if n != "query_id")
    columns.update((f"base_{n}", there.column(n)) for n in baseline.column_names if n != "query_id")
    return pa.table(columns)


def _baseline_table(baseline: Baseline) -> pa.Table:
    rows = baseline.rows.values()
    return pa.table({"query_id": pa.array(list(baseline.rows), pa.string()),
                     "f1": pa.array([r.f1 for r in rows], pa.float64()),
                     "passed": pa.array([r.passed for r in rows], pa.bool_()),
                     "golden_entry_hash": pa.array([r.golden_entry_hash for r in rows], pa.string())})


def compare_to_baseline(rows: list[tuple], baseline: Baseline | None, regression_delta: float,
                        golden_hash: str | None = None, golden_name: str | None = None,
                        thresholds: dict | None = None, passed_as_baseline: list[bool] | None = None
                        ) -> RegressionResult:
    """rows: (query_id, f1, passed[, golden_entry_hash]) of the current run, in golden-set
    order; `golden_hash` and `golden_name` are the current run's golden revision and name,
    `thresholds` its thresholds (None: as the baseline's). `passed_as_baseline`: each row's
    pass/fail under the baseline's forbidden_fails (passed_under), when the two differ."""
    if baseline is None:
        return RegressionResult(None)
    ids = [r[0] for r in rows]
    current = pa.table({"query_id": pa.array(ids, pa.string()), "f1": pa.array([r[1] for r in rows], pa.float64()),
                        "passed": pa.array([r[2] for r in rows], pa.bool_()),
                        "golden_entry_hash": pa.array([r[3] if len(r) > 3 else None for r in rows], pa.string())})
    revisions = revisions_of_one_set((golden_name, golden_hash), (baseline.golden_name, baseline.golden_hash))
    as_baseline = None if passed_as_baseline is None else pa.array(passed_as_baseline, pa.bool_())
    paired = pair_queries(current, _baseline_table(baseline), regression_delta, revisions, as_baseline)
    status, query_id = paired.column("status"), paired.column("query_id")
    result = RegressionResult(baseline.evaluation_id, **{
        name: query_id.filter(pc.equal(status, name)).to_pylist()
        for name in ("regressed", "improved", "added", "removed", "golden_changed")})
    deltas = _per_query(result, paired.slice(0, len(ids)), ids)  # the current run's rows come first
    if result.regressed:
        f1_of = {r[0]: r[1] for r in rows}
        result.newly_failing = [q for q in result.regressed if regression_label(
            "regressed", f1_of[q], result.baseline_f1.get(q)) == NEWLY_FAILING]
    result.golden_set_changed = (golden_hash is not None and baseline.golden_hash is not None
                                 and golden_hash != baseline.golden_hash)
    result.other_revision = revisions
    result.rules_changed = rules_note(thresholds, baseline.thresholds) if thresholds is not None else None
    if names_differ(golden_name, baseline.golden_name) and not result.golden_set_changed:
        result.golden_set_changed = True  # other names are other golden sets, whatever the content
        result.other_name = (golden_name, baseline.golden_name)
    result.mean_f1_delta = sum(deltas) / len(deltas) if deltas else None  # summed in golden order
    result.summary = _describe(result, len(deltas))
    return result


def _per_query(result: RegressionResult, here: pa.Table, ids: list[str]) -> list[float]:
    """Fill `status` and `baseline_f1` from the current run's paired rows; the F1 deltas of
    the shared queries whose golden entry did not change. The dicts are keyed by the
    caller's own id objects (hashes cached) and share one string per status: at a million
    queries both matter."""
    codes = pc.dictionary_encode(here.column("status")).combine_chunks()
    names = np.array(codes.dictionary.to_pylist(), dtype=object)
    result.status = dict(zip(ids, names[codes.indices.to_numpy()].tolist()))
    shared = pc.not_equal(here.column("status"), "added").to_numpy(zero_copy_only=False)
    if shared.all():  # the usual case: no query was added
        result.baseline_f1 = dict(zip(ids, here.column("base_f1").to_pylist()))
    else:
        shared_ids = np.array(ids, dtype=object)[shared].tolist()
        result.baseline_f1 = dict(zip(shared_ids, here.column("base_f1").filter(shared).to_pylist()))
    counted = pc.invert(pc.is_in(here.column("status"), value_set=pa.array(["added", "golden_changed"])))
    return here.column("delta_f1").filter(counted).to_pylist()


def newly_failing_aside(count: int) -> str:
    """` (N newly failing: …)` after a count of regressed queries, when N > 0."""
    if not count:
        return ""
    return (f" ({count} of them {NEWLY_FAILING}: passed in the baseline, fail now, F1 not down)" if count > 1 else
            f" (1 of them {NEWLY_FAILING}: passed in the baseline, fails now, F1 not down)")


def _describe(result: RegressionResult, paired: int) -> str:
    parts = [f"Against baseline {result.baseline_id}: {len(result.regressed)} regressed"
             f"{newly_failing_aside(len(result.newly_failing))}, {len(result.improved)} improved, "
             f"{paired - len(result.regressed) - len(result.improved)} unchanged of {paired} shared queries"]
    if result.mean_f1_delta is not None:
        parts.append(f"mean F1 delta {result.mean_f1_delta:+.4f}")
    if result.added or result.removed:
        parts.append(f"{len(result.added)} added, {len(result.removed)} removed")
    if result.golden_changed:
        parts.append(f"{len(result.golden_changed)} golden entries changed (left out)")
    if result.rules_changed:
        parts.append(result.rules_changed.split("):", 1)[0].replace(RULES_CHANGED, RULES_CHANGED.lower(), 1) + ")")
    if result.other_revision:
        parts.append("the baseline was scored on another revision of this golden set")
    elif result.other_name:
        parts.append(f"the baseline's golden set has another name ({result.other_name[1]!r}, this run's "
                     f"{result.other_name[0]!r}) and the same content")
    elif result.golden_set_changed:
        parts.append("the baseline was scored on a different golden set")
    return "; ".join(parts) + "."
