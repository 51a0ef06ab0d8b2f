"""The Runs page's judge agreement: the drift judge against reviewers' verdicts, per domain and
judge configuration, and reviewers against each other (termgate.governance.agreement; docs/verdicts.md).

The figures are each run's recorded judge (what it said of the term when the verdict was
given): re-judging with the current judge may load a model or call an endpoint, which the
dashboard never does; `termgate drift agreement` does that."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from . import data, ui

CELLS = {"D/D": "both_drift", "D/N": "judge_only", "N/D": "reviewer_only", "N/N": "neither"}


def _kappa(value: float) -> float | None:
    return None if math.isnan(value) else value


def _interval(table) -> str:
    return "-" if math.isnan(table.ci_low) else f"[{table.ci_low:.3f}, {table.ci_high:.3f}]"


def judge_rows(report) -> pd.DataFrame:
    """One row per domain and judge configuration: kappa, its 95% interval, precision, recall, n, the cells."""
    return pd.DataFrame([{"domain": j.domain or "-", "judge": j.judge, "config": j.config_id, "source": j.source,
                          "n": j.table.n, "kappa": _kappa(j.table.kappa), "95% CI": _interval(j.table),
                          "precision": j.table.precision, "recall": j.table.recall,
                          **{k: getattr(j.table, v) for k, v in CELLS.items()}, "unjudged": j.table.unjudged}
                         for j in report.judges])


def rater_rows(report) -> pd.DataFrame:
    """One row per domain and pair of reviewers who judged the same terms."""
    return pd.DataFrame([{"domain": r.domain or "-", "reviewer A": r.reviewer_a, "reviewer B": r.reviewer_b,
                          "n": r.table.n, "kappa": _kappa(r.table.kappa), "95% CI": _interval(r.table),
                          "label kappa": _kappa(r.label_kappa), **{k: getattr(r.table, v) for k, v in CELLS.items()}}
                         for r in report.raters])


FIGURES = {c: st.column_config.NumberColumn(c, format="%.3f") for c in ("kappa", "precision", "recall", "label kappa")}


def section() -> None:
    """The subheader, both tables and where to re-judge; one line when there are no verdicts."""
    st.subheader("Drift judge agreement with reviewers")
    report = data.agreement()
    if not report.verdicts:
        st.caption("No term verdicts yet: reviewers record them on the Compare page's side-by-side view or with "
                   "`termgate verdict RUN QUERY TERM --synonym|--related|--drift`.")
        return
    problem = data.chain_problem()
    if problem:
        st.error(f"The audit chain is broken, so its verdicts cannot be trusted: {ui.literal(problem)}")
        return
    st.caption(f"{report.verdicts} standing verdicts. Each run's drift judge, as it judged the term then, against "
               "the reviewers (drift: `--drift`; not drift: `--synonym`, `--related`); only false positives a judge "
               "is asked about count. Cells judge/reviewer, D drift, N not drift; a blank kappa is undefined.")
    st.caption("To re-judge the verdict terms with the current judge: `termgate drift agreement [--domain D]`.")
    if report.judges:
        st.dataframe(judge_rows(report), hide_index=True, width="stretch", column_config=FIGURES, key="runs_agreement")
        configs = dict.fromkeys((j.config_id, j.config) for j in report.judges)
        st.code("\n".join(f"config {cid}: {ui.visible(ui.settings(text))}" for cid, text in configs), language=None,
                wrap_lines=True)
    else:
        st.caption("No verdict is on a false positive a judge was asked about.")
    if report.raters:
        st.markdown("**Between reviewers** (drift or not; label kappa over synonym, related and drift)")
        st.dataframe(rater_rows(report), hide_index=True, width="stretch", column_config=FIGURES, key="runs_raters")
    else:
        st.caption("Between reviewers: no two reviewers judged the same term.")
