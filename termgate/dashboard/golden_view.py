"""The Golden sets page's pieces: the golden sets and revisions there are (proposed in the
audit chain, or only used by runs), the picker with its deep link, and one revision shown.

Every value from the store is data: Markdown gets it through ui.literal, the diff and the
commands go to st.code, tables to st.dataframe (plain text)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass

import pandas as pd
import streamlit as st

from termgate.governance.golden_approvals import NO_DOMAIN
from termgate.text import counted

from . import data, ui

HOW_TO = """\
# the next revision from reviewers' verdicts (termgate verdict): writes NEW.jsonl and NEW.jsonl.diff,
# the diff from the set's latest approved revision; the proposer signs in with its password
TERMGATE_PASSWORD=... termgate golden propose GOLDEN.jsonl --from-verdicts [RUN ...] --out NEW.jsonl --golden-name NAME --proposer YOU
# or a file as it is (a golden set's first revision); its entries name their domain (context.domain)
TERMGATE_PASSWORD=... termgate golden propose GOLDEN.jsonl --golden-name NAME --proposer YOU
# an approver covering its domains, who did not propose it, approves it
TERMGATE_PASSWORD=... termgate golden approve NAME REVISION --reviewer NAME --comment TEXT"""


CHANGES = {"query_id": "query_id", "line": "line", "added_expected": "+ expected", "added_forbidden": "+ forbidden",
           "removed_expected": "- expected (now forbidden)", "removed_forbidden": "- forbidden (now expected)",
           "verdict_seqs": "verdicts (audit records)"}
"""A proposal's per-query change keys, as the table heads them."""


@dataclass(frozen=True)
class Entry:
    """One revision of a golden set: proposed (`proposal` set) or only used by runs."""

    revision: str
    proposal: object | None
    """golden_revisions.Revision, or None when no one proposed this revision."""
    runs: pd.DataFrame
    needed: int

    @property
    def status(self) -> str:
        if self.proposal is None:
            return "never proposed"
        if self.proposal.approved:
            return "approved"
        return f"awaiting approval ({len({a.approver for a in self.proposal.approvals})} of {self.needed})"

    @property
    def label(self) -> str:
        """For the picker (plain text)."""
        when = f" · proposed {self.proposal.proposed_at[:16].replace('T', ' ')}" if self.proposal else ""
        return f"{self.revision[:12]} · {self.status}{when} · {counted(len(self.runs), 'run')}"


def golden_sets(revisions: list, runs: pd.DataFrame) -> list[str]:
    """Every golden-set name the chain or the runs know: those with proposals first (the
    latest proposal first), then the others by name."""
    proposed = list(dict.fromkeys(r.name for r in sorted(revisions, key=lambda r: r.seq, reverse=True)))
    return proposed + sorted({n for n in runs["golden_name"] if isinstance(n, str)} - set(proposed))


def entries(name: str, revisions: list, runs: pd.DataFrame) -> list[Entry]:
    """The set's proposed revisions, newest proposal first, then revisions only runs used (newest run first)."""
    mine = runs[runs["golden_name"] == name]
    on = lambda digest: mine[mine["golden_hash"] == digest]  # noqa: E731
    proposed = [Entry(r.revision, r, on(r.revision), data.approvals_needed(r.domains))
                for r in reversed([r for r in revisions if r.name == name])]
    known = {e.revision for e in proposed}
    used = [h for h in dict.fromkeys(mine["golden_hash"]) if isinstance(h, str) and h not in known]
    return proposed + [Entry(h, None, on(h), 1) for h in used]


def pick(names: list[str], revisions: list, runs: pd.DataFrame) -> tuple[str, Entry]:
    """The golden set and revision pickers, from the link (?name=&revision=, a hash or its
    first digits) when it names them; changes are written back to the URL."""
    wanted_name, wanted_rev = st.query_params.get("name"), (st.query_params.get("revision") or "").lower()
    if wanted_name and wanted_name not in names:
        st.warning(f"Unknown golden set {ui.literal(wanted_name)} in the link: pick one below.")
    name = st.selectbox("Golden set", names, index=names.index(wanted_name) if wanted_name in names else 0,
                        key="golden_name", on_change=lambda: st.session_state.pop("golden_revision", None))
    found = entries(name, revisions, runs)
    linked = [i for i, e in enumerate(found) if wanted_rev and e.revision.startswith(wanted_rev)]
    if wanted_rev and name == wanted_name and len(linked) != 1:
        st.warning(f"Revision {ui.literal(wanted_rev)} in the link is not one of {ui.literal(name)}'s: pick one below.")
    index = linked[0] if len(linked) == 1 and name == wanted_name else 0
    chosen = st.selectbox("Revision", range(len(found)), index=index, key="golden_revision",
                          format_func=lambda i: found[i].label)
    entry = found[chosen if chosen is not None and chosen < len(found) else 0]
    if (st.query_params.get("name"), st.query_params.get("revision")) != (name, entry.revision[:12]):
        st.query_params.update({"name": name, "revision": entry.revision[:12]})  # shareable URL
    return name, entry


def overview(found: list[Entry]) -> None:
    """One row per revision of the set."""
    rows = [{"revision": e.revision[:12], "status": e.status,
             "base (approved)": (e.proposal.base_revision or "-")[:12] if e.proposal else "",
             "over (unapproved)": (e.proposal.proposed_over or "-")[:12] if e.proposal else "",
             "proposed by": ", ".join(e.proposal.proposers) if e.proposal else "",
             "proposed at": e.proposal.proposed_at if e.proposal else "",
             "approved by": ", ".join(a.approver for a in e.proposal.approvals) if e.proposal else "",
             "domains": ", ".join(e.proposal.domains) if e.proposal else "",
             "changes": str(len(e.proposal.changes)) if e.proposal else "", "runs": len(e.runs)} for e in found]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")


def revision(name: str, entry: Entry) -> None:
    """One revision: who proposed and approved it, its diff, its changes per query, its runs."""
    rev = entry.proposal
    st.subheader(f"Revision {ui.literal(entry.revision[:12])}")
    st.caption(f"Golden hash {ui.literal(entry.revision)}")
    if rev is None:
        st.warning("Never proposed: runs used this revision, but it is not in the audit chain, so it is not "
                   "approved. Propose the file as it is, then an approver approves it:")
        st.code(f"TERMGATE_PASSWORD=... termgate golden propose GOLDEN.jsonl --golden-name {shlex.quote(name)} "
                "--proposer YOU", language="sh")
    else:
        base = (f"base {ui.literal(rev.base_revision[:12])} (approved)" if rev.base_revision
                else "first revision (the whole file is new)")
        st.markdown(f"**{ui.literal(entry.status)}** · {base} · domains {ui.literal(', '.join(rev.domains) or '-')} · "
                    f"proposed by {ui.literal(', '.join(rev.proposers))} at {ui.literal(rev.proposed_at)} "
                    f"(audit record {rev.seq})")
        if rev.proposed_over:
            st.warning(_over(rev))
        _approvals(name, entry)
        st.markdown("**Diff**")
        st.code(ui.visible(rev.diff.rstrip("\n")), language="diff", wrap_lines=True)
        if rev.changes:
            st.markdown("**Changes per query**")
            st.dataframe(pd.DataFrame([{label: ui.cell(c.get(key)) for key, label in CHANGES.items()}
                                       for c in rev.changes]),
                         hide_index=True, width="stretch")
    _runs(entry)


def _over(rev) -> str:
    """A proposal made over a file nobody approved: what its diff is taken from instead."""
    over = f"Proposed over {ui.literal(rev.proposed_over[:12])}, which is not approved"
    if rev.base_revision is None:
        return f"{over}, and no revision of this set is approved yet: the diff below is the whole file."
    return (f"{over}: the diff below is from the approved revision {ui.literal(rev.base_revision[:12])}, so it "
            "includes that file's own changes.")


def _approvals(name: str, entry: Entry) -> None:
    rev = entry.proposal
    if not rev.domains:
        st.warning(f"This revision {ui.literal(NO_DOMAIN)}.")
        return
    if rev.approvals:
        st.dataframe(pd.DataFrame([{"approved by": a.approver, "at": a.approved_at, "comment": a.comment,
                                    "audit record": a.seq} for a in rev.approvals]), hide_index=True, width="stretch")
    if not rev.approved:
        st.caption(f"Needs {entry.needed} distinct approver{'s' if entry.needed != 1 else ''} covering its domains, "
                   "none of its proposers. From the command line:")
        st.code(f"TERMGATE_PASSWORD=... termgate golden approve {shlex.quote(name)} {entry.revision[:12]} "
                "--reviewer NAME --comment TEXT", language="sh")


def _runs(entry: Entry) -> None:
    approved = entry.proposal is not None and entry.proposal.approved
    st.markdown(f"**Runs on this revision** · {counted(len(entry.runs), 'run')} · "
                f"{'approved' if approved else 'not approved: ' + ui.literal(entry.status)}")
    if entry.runs.empty:
        st.caption("No run has used this revision yet: evaluate against the file it names.")
        return
    table = entry.runs.assign(gate=entry.runs["gate_decision"].str.upper(), domains=entry.runs["domains"].map(ui.terms))
    columns = ["run_id", "created_at", "name", "prompt_version", "gate", "domains", "author"]
    st.dataframe(table[columns].map(ui.cell),  # a run without a name shows nothing, not None
                 hide_index=True, width="stretch", column_config={"prompt_version": "prompt"})
