"""The retrieval effect of a run that measured one (issue 34, docs/retrieval.md): beside
Compare's term metrics its means, change and counts; in one query side by side the top
documents of the reference and of the candidate. A run without retrieval shows none of it.

The figures are the candidate run's own, measured when it was evaluated: against the
baseline it was evaluated with, else against the unexpanded query (its `reference`).
Ids, titles and terms come from data: Markdown gets them through ui.literal, tables as
plain cells. Relevance is never colour alone: each mark names the grade in words.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ..retrieval.attribution import brought_in_line
from ..retrieval.outcome import METRICS, VARIANTS
from . import data, ui

REFERENCE_NAMES = {"baseline": "baseline", "unexpanded": "unexpanded query"}


def mark(grade: int | None) -> str:
    """A document's relevance as a reader sees it: "● 2 relevant", "○ 0 not relevant", "· unjudged"."""
    if grade is None:
        return "· unjudged"
    return f"● {grade} relevant" if grade > 0 else f"○ {grade} not relevant"


def top_documents(row: dict, k: int) -> pd.DataFrame:
    """A variant's top k stored documents: rank, id, relevance, for the candidate the term
    that brought each one in, then the title (left out for an engine with its own index),
    which a half-width table may cut."""
    n = min(k, len(row["top_ids"]))
    table = {"rank": list(range(1, n + 1)), "document": row["top_ids"][:n],
             "relevance": [mark(g) for g in row["top_grades"][:n]]}
    if row["brought_by"] is not None:
        table["brought in by"] = [t or "" for t in row["brought_by"][:n]]
    if row["top_titles"] is not None:
        table["title"] = [t or "" for t in row["top_titles"][:n]]
    return pd.DataFrame(table)


def gained_and_lost(reference: dict, candidate: dict, k: int) -> tuple[list[str], list[str]]:
    """The relevant documents (grade > 0) in the candidate's top k and not the reference's,
    and those in the reference's top k and not the candidate's."""
    def relevant(row: dict) -> list[str]:
        return [d for d, g in zip(row["top_ids"][:k], row["top_grades"][:k]) if g is not None and g > 0]

    ours, theirs = set(candidate["top_ids"][:k]), set(reference["top_ids"][:k])
    return [d for d in relevant(candidate) if d not in theirs], [d for d in relevant(reference) if d not in ours]


def _signed(value: float | None, decimals: int = 3) -> str:
    return "—" if value is None else f"{value:+.{decimals}f}"


# ---------------------------------------------------------------- Compare


def overview(run_id: str, baseline_id: str) -> None:
    """The candidate's retrieval beside the term metrics: each metric's mean with its change
    against the reference, every variant's means, the intervals with Holm's p, the counts."""
    summary = data.retrieval(run_id)
    if summary is None:
        return
    labels, reference, means = summary["labels"], summary["reference"], summary["means"]
    against = REFERENCE_NAMES.get(reference, reference)
    st.markdown(f"**Retrieval** ({ui.literal(summary['engine'].get('engine'))}): the candidate against "
                f"the {ui.literal(against)}, over {summary['compared_queries']:,} of "
                f"{summary['judged_queries']:,} judged queries")
    _other_baseline(run_id, baseline_id, reference)
    for col, metric in zip(st.columns(len(METRICS)), METRICS):
        value, base = means["candidate"].get(metric), means.get(reference, {}).get(metric)
        col.metric(ui.literal(labels[metric]), "—" if value is None else f"{value:.3f}",
                   None if value is None or base is None else f"{value - base:+.3f}")
    rows = [{"variant": v} | {labels[m]: "—" if means[v].get(m) is None else f"{means[v][m]:.3f}" for m in METRICS}
            for v in VARIANTS if v in means]
    st.table(pd.DataFrame(rows).set_index("variant"))  # a small static table: the page's dataframes stay the queries
    stats = summary.get("statistics") or {}
    lines = [f"**{ui.literal(labels[m])}** change {_signed(s['mean_delta'], 4)} "
             f"[{_signed(s['ci_low'], 4)}, {_signed(s['ci_high'], 4)}], p = {s['p_value']:.4f} "
             f"(Holm {s['p_value_holm']:.4f}), n = {s['n']:,}"
             for m in METRICS if (s := stats.get(m)) and s.get("mean_delta") is not None]
    lines.append(f"{len(summary['regressed_queries']):,} regressed (lost more than {summary['delta']:g} "
                 f"{ui.literal(labels['ndcg'])}), {len(summary['regressed_high_risk']):,} of them high-risk · "
                 f"{len(summary['improved_queries']):,} improved · {len(summary['unjudged_queries']):,} unjudged")
    st.markdown("  \n".join(lines))


# ---------------------------------------------------------------- one query side by side


def query_section(run_id: str, baseline_id: str | None, query_id: str) -> None:
    """One query's top documents, reference beside candidate, with what the reviewer needs
    above them: the relevant documents gained and lost, for a regressed query the terms that
    brought documents in, and an exact identifier the expansion moved. `baseline_id`: the
    baseline the page shows, named when the run was measured against another."""
    summary = data.retrieval(run_id)
    if summary is None:
        return
    rows = data.retrieval_query(run_id, query_id)
    reference, k, labels = summary["reference"], summary["k"], summary["labels"]
    if "candidate" not in rows or reference not in rows:
        if query_id in summary["unjudged_queries"]:
            st.caption("Retrieval: the judgments hold no relevant document for this query; not measured.")
        return
    ours, theirs = rows["candidate"], rows[reference]
    against = REFERENCE_NAMES.get(reference, reference)
    status = ("regressed" if query_id in summary["regressed_queries"] else
              "improved" if query_id in summary["improved_queries"] else "unchanged")
    st.markdown(f"##### Retrieval · top {k} documents against the {ui.literal(against)}")
    _other_baseline(run_id, baseline_id, reference)
    with st.container(horizontal=True, vertical_alignment="center"):
        st.badge(f"retrieval {status}", color={"regressed": "red", "improved": "green"}.get(status, "gray"))
        st.badge(f"Δ{ui.badge(labels['ndcg'])} {_signed(ours['ndcg'] - theirs['ndcg'])}", color="gray")
    _findings(summary, query_id, theirs, ours)
    left, right = st.columns(2, border=True)
    for column, title, row, base in ((left, against.capitalize(), theirs, None), (right, "Candidate", ours, theirs)):
        with column:
            change = "" if base is None else f" ({_signed(row['ndcg'] - base['ndcg'])})"
            st.markdown(f"**{title}'s top {k}** · {ui.literal(labels['ndcg'])} **{row['ndcg']:.3f}**{change}")
            _documents(row, k)
    st.caption("● relevant (grade)  ·  ○ judged not relevant  ·  · unjudged  ·  brought in by: the expansion term "
               "whose clause matches a document the unexpanded query did not have in its top "
               f"{k}")


def _findings(summary: dict, query_id: str, reference: dict, candidate: dict) -> None:
    """What changed, in words: the relevant documents gained and lost, the terms that
    brought documents in (a regressed query's attribution), a moved exact identifier."""
    k = summary["k"]
    gained, lost = gained_and_lost(reference, candidate, k)
    st.markdown(f"**Relevant gained** ({len(gained)}): {_ids(gained)}  \n"
                f"**Relevant lost** ({len(lost)}): {_ids(lost)}")
    for entry in summary.get("attribution", {}).get(query_id, []):
        if entry["brought_in"] or entry["recovers"] > 0:  # the terms that did something
            st.markdown(f"↳ {ui.literal(brought_in_line(entry, k))}")
    for moved in (m for m in summary.get("identifiers", []) if m["query_id"] == query_id):
        where = f"rank {moved['candidate_rank']}" if moved["candidate_rank"] else f"not in the top {summary['depth']}"
        st.warning(f"Must find {ui.literal(moved['document'])} first: "
                   f"{'the expansion moved it to' if moved['moved_by'] == 'expansion' else 'the engine has it at'} "
                   f"{where}" + (" (a high-risk domain)." if moved.get("high_risk") else "."))


def _other_baseline(run_id: str, baseline_id: str | None, reference: str) -> None:
    recorded = data.runs().set_index("run_id")["baseline_id"].get(run_id)
    if reference == "baseline" and recorded != baseline_id:
        st.caption(f"Retrieval was measured against the baseline the run was evaluated with, "
                   f"{ui.literal(recorded)}, not the one shown here.")


def _ids(ids: list[str]) -> str:
    return " · ".join(ui.literal(d) for d in ids) if ids else "none"


def _documents(row: dict, k: int) -> None:
    table = top_documents(row, k)
    if table.empty:
        st.caption("No document found.")
        return
    st.dataframe(table, hide_index=True, width="stretch", height=38 + 35 * len(table),
                 column_config={"rank": st.column_config.NumberColumn("#", width=36),
                                "document": st.column_config.TextColumn("document", width=100),
                                "relevance": st.column_config.TextColumn("relevance", width=120)})
