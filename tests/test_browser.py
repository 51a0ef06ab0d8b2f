"""One real-browser test: a Streamlit server this test starts, Debian's Chromium driven by
Playwright, the Compare page on the demo data, a filter applied, a screenshot saved
outside the repository ($TERMGATE_SCREENSHOTS, else a temporary folder)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from termgate import store

from dashboard_server import ARGS, CHROMIUM, Dashboard

# CI installs Chromium (.ci/run); only a developer machine without it may skip this test.
pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("CI"),
                                 reason="Debian chromium is not installed (apt-get install chromium)")]


@pytest.fixture
def server(demo_store, tmp_path):
    db = tmp_path / "store.duckdb"
    shutil.copy(demo_store, db)
    dashboard = Dashboard(db, tmp_path).start()
    yield dashboard.url, db
    dashboard.stop()


def test_compare_page_in_a_real_browser(server):
    from playwright.sync_api import expect, sync_playwright

    url, db = server
    ids = {(r.name.split()[0], r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    shots = Path(os.environ.get("TERMGATE_SCREENSHOTS") or tempfile.mkdtemp(prefix="termgate-screens-"))
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/compare?run={run}&baseline={base}")
        page.wait_for_selector(".js-plotly-plot", timeout=60_000)
        expect(page.get_by_text("48 queries match")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("11 regressed").first).to_be_visible()
        page.screenshot(path=str(shots / "compare.png"), full_page=False)
        # apply a filter the way a user does: open the Status multiselect and pick "regressed"
        page.locator('[data-testid="stMultiSelect"]').first.click()
        page.keyboard.type("regressed")
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        expect(page.get_by_text("11 queries match")).to_be_visible(timeout=30_000)
        page.wait_for_selector(".js-plotly-plot")
        page.get_by_text("11 queries match").scroll_into_view_if_needed()
        page.screenshot(path=str(shots / "compare-filtered.png"), full_page=True)
        assert f"run={run}" in page.url and f"baseline={base}" in page.url
        browser.close()
    assert (shots / "compare.png").stat().st_size > 10_000


def test_compare_opens_a_query_side_by_side_and_walks_with_next(server):
    """Select a row of Compare's table: the query opens side by side, its terms as chips; Next
    opens the following query of the list and the URL names it (screenshot: side_by_side.png)."""
    from playwright.sync_api import expect, sync_playwright

    from termgate import comparison

    url, db = server
    ids = {(r.name.split()[0], r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    first, second = comparison.pair_runs(db, run, base).page(comparison.CompareFilter(), 0, 2)[0]["query_id"]
    shots = Path(os.environ.get("TERMGATE_SCREENSHOTS") or tempfile.mkdtemp(prefix="termgate-screens-"))
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"{url}/compare?run={run}&baseline={base}")
        expect(page.get_by_text("48 queries match")).to_be_visible(timeout=60_000)
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)  # the first row's selection cell
        expect(page.get_by_text("query 1 of 48 in the filtered list")).to_be_visible(timeout=30_000)
        assert page.url.endswith(f"&query={first}")
        chips = page.locator('[data-testid="stMarkdownContainer"] span', has_text="✓")
        expect(chips.first).to_be_visible()
        expect(page.get_by_text("Golden entry").first).to_be_visible()
        page.get_by_role("button", name="Next").click()
        expect(page.get_by_text("query 2 of 48 in the filtered list")).to_be_visible(timeout=30_000)
        expect(page.get_by_text(f"{second} ·").first).to_be_visible()
        page.wait_for_function(f"() => location.search.endsWith('query={second}')", timeout=10_000)
        page.get_by_text("Golden entry").first.scroll_into_view_if_needed()
        page.mouse.move(1270, 790)  # no tooltip over the picture
        page.screenshot(path=str(shots / "side_by_side.png"))
        browser.close()


def _screens() -> Path:
    shots = Path(os.environ.get("TERMGATE_SCREENSHOTS") or tempfile.mkdtemp(prefix="termgate-screens-"))
    shots.mkdir(parents=True, exist_ok=True)
    return shots


def test_the_runs_table_shows_f1_and_drift_at_1500_px(server):
    """At 1500 px the Runs table shows F1 and drift without a horizontal scroll (issue 31 item
    15; screenshot: runs-1500.png). st.dataframe draws on a canvas; its accessible table holds
    only the columns in view, so a column is in view when its header is there and so is a later one."""
    from playwright.sync_api import sync_playwright

    url, _ = server
    shots = _screens()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1500, "height": 900})
        page.goto(url)
        grid = page.locator('[data-testid="stDataFrame"]').first
        grid.locator("[role=gridcell]").first.wait_for(state="attached", timeout=60_000)
        page.wait_for_timeout(500)  # the canvas paints after the accessible table
        page.screenshot(path=str(shots / "runs-1500.png"))
        heads = grid.locator("[role=columnheader]")
        shown = {heads.nth(i).text_content(): int(heads.nth(i).get_attribute("aria-colindex"))
                 for i in range(heads.count())}
        browser.close()
    last = max(shown.values())
    assert "F1" in shown and "drift" in shown, shown
    assert shown["F1"] < last and shown["drift"] < last, shown  # neither is the column cut at the edge


@pytest.mark.parametrize("view", ["regressions", "signoff", "compare"])
def test_next_keeps_the_address_on_the_query_shown_and_the_copied_link_opens_it(server, view):
    """Next opens the following query and the address bar names it: a link copied from it
    opens the query that was on screen (issue 31 item 15). Read from location.href, what the
    address bar holds; Playwright's page.url may lag a pushState until it next waits."""
    from playwright.sync_api import expect, sync_playwright

    url, db = server
    ids = {(r.name.split()[0], r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}
    run = ids[("medical", "v3" if view == "signoff" else "v2")]
    start = f"{url}/{view}?run={run}" + (f"&baseline={ids[('medical', 'v1')]}" if view == "compare" else "")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(start + "&query=med-001")
        heading = page.locator('[data-testid="stMarkdownContainer"] h4').first
        expect(heading).to_contain_text("med-001 ·", timeout=60_000)
        for step in range(3):
            following = page.get_by_role("button", name="Next").first
            if step and following.is_disabled():  # the last of a short list
                break
            before = heading.text_content()
            following.click()
            expect(heading).not_to_have_text(before, timeout=30_000)
            shown = heading.text_content().split(" · ")[0]
            page.wait_for_function(f"() => new URLSearchParams(location.search).get('query') === {shown!r}",
                                   timeout=10_000)
        copied = page.evaluate("location.href")
        other = browser.new_page(viewport={"width": 1280, "height": 800})
        other.goto(copied)
        expect(other.locator('[data-testid="stMarkdownContainer"] h4').first).to_contain_text(f"{shown} ·",
                                                                                            timeout=60_000)
        browser.close()


def test_a_password_sign_in_lasts_across_a_deep_link_until_sign_out(server):
    """Issue 31 item 11: sign in with a password, open a link to a query in a new page of
    the same browser: still signed in, through an HttpOnly cookie scripts cannot read and no
    URL carries; Sign out ends it, and the same link asks for sign-in again."""
    from playwright.sync_api import expect, sync_playwright

    from termgate.dashboard import sessions
    from termgate.governance import signoff as so

    url, db = server
    so.add_user(db, "erin", "engineer", "erin-password-1")
    ids = {(r.name.split()[0], r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}
    link = f"{url}/compare?run={ids[('medical', 'v2')]}&baseline={ids[('medical', 'v1')]}&query=med-001"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        urls: list[str] = []
        context.on("request", lambda request: urls.append(request.url))
        context.on("websocket", lambda socket: urls.append(socket.url))
        page = context.new_page()
        page.goto(f"{url}/")
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_label("Account", exact=True).fill("erin")
        sidebar.get_by_label("Password", exact=True).fill("erin-password-1")
        sidebar.get_by_role("button", name="Sign in").click()
        expect(sidebar.get_by_text("Signed in as")).to_be_visible(timeout=30_000)
        cookie = None
        for _ in range(100):  # the page hands its one-time code to the server, which sets the cookie
            cookie = next((c for c in context.cookies() if c["name"] == sessions.COOKIE), None)
            if cookie:
                break
            page.wait_for_timeout(100)
        assert cookie is not None and cookie["httpOnly"] and cookie["sameSite"] == "Strict" and cookie["path"] == "/"
        assert sessions.COOKIE not in page.evaluate("document.cookie")  # no script can read it

        deep = context.new_page()
        deep.goto(link)
        expect(deep.get_by_text("query 1 of").or_(deep.get_by_text("med-001").first).first).to_be_visible(
            timeout=60_000)
        expect(deep.locator('[data-testid="stSidebar"]').get_by_text("Signed in as")).to_be_visible(timeout=30_000)
        deep.reload()
        deep_sidebar = deep.locator('[data-testid="stSidebar"]')
        expect(deep_sidebar.get_by_text("Signed in as")).to_be_visible(timeout=60_000)
        deep_sidebar.get_by_role("button", name="Sign out").click()
        expect(deep_sidebar.get_by_role("button", name="Sign in")).to_be_visible(timeout=30_000)
        for _ in range(100):  # the page asks the server to delete the cookie, too
            if not [c for c in context.cookies() if c["name"] == sessions.COOKIE]:
                break
            deep.wait_for_timeout(100)
        assert not [c for c in context.cookies() if c["name"] == sessions.COOKIE]
        context.add_cookies([dict(cookie)])  # a copy kept from before: the server ended its session

        again = context.new_page()
        again.goto(link)
        again_sidebar = again.locator('[data-testid="stSidebar"]')
        expect(again_sidebar.get_by_role("button", name="Sign in")).to_be_visible(timeout=60_000)
        expect(again_sidebar.get_by_text("Signed in as")).to_have_count(0)
        browser.close()
    assert urls and not [u for u in urls if cookie["value"] in u]
    assert not [u for u in urls if sessions.ROUTE in u and "?" in u]  # the code went in a body, not a URL


def test_a_double_click_on_record_verdict_records_the_choice_once(server):
    """Issue 31 item 2 in a real browser: choose a verdict that is not the form's default,
    double-click Record verdict: the store holds one verdict record, the one chosen."""
    from playwright.sync_api import expect, sync_playwright

    from termgate.governance import signoff as so
    from termgate.governance import verdicts

    url, db = server
    so.add_user(db, "erin", "engineer", "erin-password-1")
    ids = {(r.name.split()[0], r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}
    run = ids[("medical", "v2")]
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{url}/compare?run={run}&baseline={ids[('medical', 'v1')]}&query=med-001")
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_label("Account", exact=True).fill("erin")
        sidebar.get_by_label("Password", exact=True).fill("erin-password-1")
        sidebar.get_by_role("button", name="Sign in").click()
        expect(sidebar.get_by_text("Signed in as")).to_be_visible(timeout=60_000)
        page.get_by_text("Verdicts on this query's terms").click()
        form = page.locator('[data-testid="stForm"]').filter(has_text="Record verdict")
        expect(form).to_be_visible(timeout=30_000)
        form.locator('[data-testid="stSelectbox"]').click()
        options = page.get_by_role("option")
        expect(options.first).to_be_visible()
        chosen = options.last.inner_text().split(" · ")[0]
        options.last.click()
        form.get_by_text("related — not drift, not a synonym").click()
        form.get_by_label("Comment").fill("a sibling concept, not drift")
        form.get_by_label("Comment").press("Tab")
        form.get_by_role("button", name="Record verdict").dblclick()
        expect(page.get_by_text("Recorded verdict").first).to_be_visible(timeout=30_000)
        expect(page.get_by_test_id("stStatusWidget")).to_have_count(0, timeout=30_000)  # every run is over
        browser.close()
    records = [r for r in store.audit_records(db, run) if r["kind"] == verdicts.KIND]
    assert len(records) == 1, records
    [v] = verdicts.list_verdicts(db, [run])
    assert (v.term, v.label, v.comment) == (chosen, "related", "a sibling concept, not drift")


def test_a_query_side_by_side_shows_its_retrieved_documents_in_a_real_browser(tmp_path):
    """Issue 34 item 7: a regressed query's top documents, the baseline's beside the
    candidate's, with relevance marks, the relevant documents lost and the term that
    brought the others in (screenshots: side_by_side_retrieval.png, and Compare's overview
    with the retrieval deltas, compare_retrieval.png)."""
    from playwright.sync_api import expect, sync_playwright

    from retrieval_world import record

    db, ids = record(tmp_path)
    dashboard = Dashboard(db, tmp_path).start()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.goto(f"{dashboard.url}/compare?run={ids['flooded']}&baseline={ids['right']}&query=q1")
            heading = page.get_by_text("Retrieval · top 10 documents against the baseline")
            expect(heading).to_be_visible(timeout=60_000)
            expect(page.get_by_text("Relevant lost (10)")).to_be_visible()
            expect(page.get_by_text("'tennis racket' brought")).to_be_visible()
            grids = page.locator('[data-testid="stDataFrame"]')
            expect(grids).to_have_count(2)
            for grid in (grids.nth(0), grids.nth(1)):  # the canvas paints after its accessible table
                grid.locator("[role=gridcell]").first.wait_for(state="attached", timeout=30_000)
            candidate = grids.nth(1).locator("[role=columnheader]")
            assert "brought in by" in [candidate.nth(i).text_content() for i in range(candidate.count())]
            heading.scroll_into_view_if_needed()
            page.wait_for_timeout(500)
            page.mouse.move(1270, 990)  # no tooltip over the picture
            page.screenshot(path=str(_screens() / "side_by_side_retrieval.png"))
            page.goto(f"{dashboard.url}/compare?run={ids['flooded']}&baseline={ids['right']}")
            expect(page.get_by_text("the candidate against the baseline")).to_be_visible(timeout=60_000)
            page.wait_for_selector(".js-plotly-plot")
            page.screenshot(path=str(_screens() / "compare_retrieval.png"), full_page=True)
            browser.close()
    finally:
        dashboard.stop()
