"""Verdicts on the side-by-side view (issue 19 item 1): the form an engineer records one
with, who may not, the standing verdicts, and the sample of unflagged false positives."""

from __future__ import annotations

import pytest

from termgate.governance import signoff as so
from termgate import store
from termgate.governance import verdicts

from test_dashboard import sign_in
from test_side_by_side import db, page, runs_by, shown  # noqa: F401 (db: the fixture)


def opened(db, name=None, password=None, query_id="med-001"):
    ids = runs_by(db)
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    at = page("compare", run=run, baseline=base, query=query_id)
    assert not [e for e in at.expander if e.label == "Verdicts on this query's terms" and e.children]  # folded: unread
    if name:
        at = sign_in(at, name, password)
    at.session_state["cmp_vd_open"] = True  # the reviewer opens the section
    at.run()
    assert not at.exception
    return at, run


def expander(at):
    return next(e for e in at.expander if e.label == "Verdicts on this query's terms")


def field(box, kind, name):
    """The verdict form's widget `name` (its key carries the form's one-time token)."""
    return next(w for w in getattr(box, kind) if w.key and w.key.split("_")[:3] == ["cmp", "vd", name])


def fill(at, term, label, comment):
    """Choose a verdict in the form and click Record verdict (not yet sent: at.run() sends it)."""
    box = expander(at)
    field(box, "selectbox", "term").set_value(term)
    field(box, "radio", "label").set_value(label)
    field(box, "checkbox", "forbid").check()
    field(box, "text_input", "comment").input(comment)
    box.button[0].click()  # the form's submit button


@pytest.mark.slow
def test_signed_out_and_viewers_see_verdicts_but_cannot_record_one(db):
    at, _ = opened(db)
    assert any("Sign in (in the sidebar) as an engineer" in c.value for c in expander(at).caption)
    assert not expander(at).selectbox
    so.add_user(db, "vera", "viewer", "vera-password-1")
    at, _ = opened(db, "vera", "vera-password-1")
    assert any("may not record verdicts" in c.value for c in expander(at).caption)
    assert not expander(at).selectbox


@pytest.mark.slow
def test_an_engineer_records_a_verdict_in_the_chain_and_sees_it_standing(db):
    so.add_user(db, "erin", "engineer", "erin-password-1")
    at, run = opened(db, "erin", "erin-password-1")
    box = expander(at)
    term = field(box, "selectbox", "term")
    generated = set(store.term_rows(db, run, "med-001").query("kind != 'FN'")["term"])
    assert set(term.options) == {f"{t} · {w}" for t, w in _said(db, run)}
    assert {o.split(" · ")[0] for o in term.options} == generated
    drift = [o for o in term.options if o.endswith("· flagged drift")]
    assert drift and term.options[0] == drift[0]  # the flagged terms come first
    fill(at, term.options[0].split(" · ")[0], "drift", "wrong sense of attack")
    at.run()
    assert not at.exception
    [v] = verdicts.list_verdicts(db, [run])
    assert (v.reviewer, v.query_id, v.term, v.label, v.forbid, v.comment) == (
        "erin", "med-001", drift[0].split(" · ")[0], "drift", True, "wrong sense of attack")
    assert v.judge_verdict == "drift"
    assert so.verify_chain(db).ok
    assert any(s.value.startswith("Recorded verdict drift (forbid) on") for s in at.success)
    table = expander(at).dataframe[0].value
    assert list(table["term"]) == [v.term] and list(table["reviewer"]) == ["erin"]


def second_click(first_page):
    """What the browser sends for a second click on the submit button of the page it still
    shows (`first_page`, the tree with the first click): that form's button, and its fields
    as the browser then holds them (a form with clear_on_submit was reset to its defaults
    at the first click: a widget without a state is at its default)."""
    from streamlit.testing.v1.element_tree import Widget, _form_clear_flags, _widget_form_id

    cleared = {form for form, clears in _form_clear_flags(first_page).items() if clears}
    reset = {n.id for n in first_page if isinstance(n, Widget) and _widget_form_id(n) in cleared
             and n.type != "button"}
    states = first_page.get_widget_states()
    kept = [w for w in states.widgets if w.id not in reset]
    del states.widgets[:]
    states.widgets.extend(kept)
    return states


@pytest.mark.slow
def test_a_double_click_on_record_verdict_records_the_chosen_verdict_once(db):
    """Issue 31 item 2: the second click of a double-click comes before the page that says
    "Recorded" (its page run replaces that one), from the page the browser still shows. It
    records nothing more: the one record is the reviewer's choice, and the form is empty again."""
    from termgate.dashboard import verdict_view

    so.add_user(db, "erin", "engineer", "erin-password-1")
    at, run = opened(db, "erin", "erin-password-1")
    options = [o.split(" · ")[0] for o in field(expander(at), "selectbox", "term").options]
    chosen = options[-1]  # not the default (first) term
    fill(at, chosen, "related", "a sibling concept, not drift")
    first_page = at._tree
    at.run()
    assert not at.exception
    note = next(s.value for s in at.success if s.value.startswith("Recorded verdict related"))
    at.session_state[verdict_view._RECORDED] = note  # as before the "Recorded" page's run
    at._run(second_click(first_page))
    assert not at.exception
    records = [r for r in store.audit_records(db, run) if r["kind"] == verdicts.KIND]
    assert len(records) == 1
    [v] = verdicts.list_verdicts(db, [run])
    assert (v.term, v.label, v.forbid, v.comment) == (chosen, "related", True, "a sibling concept, not drift")
    box = expander(at)  # a fresh form for the next verdict
    assert field(box, "selectbox", "term").value == options[0] and field(box, "text_input", "comment").value == ""


@pytest.mark.slow
def test_a_click_that_interrupts_the_first_records_the_choice_not_the_defaults(db):
    """The second click can also stop the first click's page run before it records: the
    page run it starts records the reviewer's choice (the browser did not reset the form)."""
    so.add_user(db, "erin", "engineer", "erin-password-1")
    at, run = opened(db, "erin", "erin-password-1")
    options = [o.split(" · ")[0] for o in field(expander(at), "selectbox", "term").options]
    fill(at, options[-1], "related", "a sibling concept, not drift")
    at._run(second_click(at._tree))  # the first click's run never got to record
    assert not at.exception
    [v] = verdicts.list_verdicts(db, [run])
    assert (v.term, v.label, v.forbid, v.comment) == (options[-1], "related", True, "a sibling concept, not drift")


@pytest.mark.slow
def test_the_unflagged_sample_is_offered_and_opens_its_query(db):
    at, run = opened(db)
    sample = verdicts.unflagged_sample(db, run, 10, 0)
    assert sample, "the demo's v2 run has false positives its judge did not flag"
    buttons = [b for b in expander(at).button if b.key and b.key.startswith("cmp_vd_sample_")]
    assert [shown(b.label) for b in buttons] == [f"{q} · {t}" for q, t in sample]
    buttons[-1].click().run()
    assert at.query_params["query"] in ([sample[-1][0]], sample[-1][0])


def _said(db, run):
    """(term, what the panel says the judge made of it) per generated term of med-001."""
    from termgate.dashboard.side_by_side import chips

    found = [c for c in chips(store.term_rows(db, run, "med-001")) if c.kind != "missed"]
    return [(c.term, "flagged drift" if c.kind == "drift" else "unjudged" if c.unjudged else c.kind) for c in found]


@pytest.mark.slow
def test_the_unflagged_sample_leaves_out_terms_that_already_have_a_verdict(db):
    """A term a reviewer already judged is not offered again: the sample is for the terms
    nobody has looked at yet (issue 31 item 15)."""
    ids = runs_by(db)
    run = ids[("medical", "v2")]
    before = verdicts.unflagged_sample(db, run, 10, 0)
    so.add_user(db, "erin", "engineer", "erin-password-1")
    erin = so.authenticate(db, "erin", "erin-password-1")
    judged = before[:2]
    for query_id, term in judged:
        verdicts.record_verdict(db, erin, run, query_id, term, "related", False, None)
    at, _ = opened(db)
    offered = [shown(b.label) for b in expander(at).button if b.key and b.key.startswith("cmp_vd_sample_")]
    assert offered and not {f"{q} · {t}" for q, t in judged} & set(offered)
    assert not set(judged) & set(verdicts.unflagged_sample(db, run, 100, 0))  # the CLI's sample too
