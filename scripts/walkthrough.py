"""The reviewer's walkthrough of issue 17 in a real browser, a numbered screenshot per step.

On a fresh temporary folder: seeds the demo store (`termgate demo`, drift judge none), adds
an SSO approver for medical (`termgate users add alice --sso`), starts a real OpenID Connect
provider on 127.0.0.1 (PyPI `oidc-provider-mock`, as tests/test_sso.py does), evaluates the
demo's medical v2 candidate against its v1 baseline as README's "Evaluate a change" does
(`termgate evaluate`, which prints the dashboard link), starts a real Streamlit server on a
free port whose secrets' `[auth]` points at the provider, then drives Debian's Chromium with
Playwright as a reviewer would:

 1. opens the link `evaluate` printed (Compare, run and baseline named);
 2. filters Status = regressed;
 3. opens the first regressed query side by side (selecting its row);
 4. walks with Next to the last regressed query;
 5. signs in through the identity provider (the sidebar's button, the provider's page);
 6. on Sign-off, finds that the v2 run failed its gate (it can only be rejected) and rejects it;
 7. opens the demo's medical v3 run (gate review), opens its flagged query side by side,
    acknowledges every flagged item and approves, and sees the new state at once, without
    reloading.

Screenshots (viewport 1400x900, PNG) go to docs/walkthrough/NN-name.png; each step checks the
page shows no exception and no "nan". Needs /usr/bin/chromium and the dev extras
(playwright, oidc-provider-mock); never runs `playwright install`.

Usage: .venv/bin/python scripts/walkthrough.py [--out docs/walkthrough] [--keep DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
from dashboard_server import ARGS, CHROMIUM, Dashboard, free_port, provider_user, start_provider  # noqa: E402

VIEWPORT = {"width": 1400, "height": 900}
ACCOUNT, SUBJECT, EMAIL = "alice", "alice-sub", "alice@example.com"
EXE = Path(sys.executable).with_name("termgate")


def termgate(*args: str, env: dict) -> str:
    """Run the CLI; its standard output and error together (evaluate exits 1 on a failed gate)."""
    done = subprocess.run([str(EXE), *args], env=env, capture_output=True, text=True, cwd=ROOT)
    if done.returncode not in (0, 1, 3):
        sys.exit(f"termgate {' '.join(args)} exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return done.stdout + done.stderr


class Shots:
    """Numbered screenshots, each after checking the page shows nothing broken."""

    def __init__(self, page, out: Path):
        self.page, self.out, self.n, self.taken = page, out, 0, []

    def __call__(self, name: str, what: str) -> None:
        page = self.page
        page.wait_for_timeout(600)  # the last delta drawn, the spinner gone
        page.mouse.move(VIEWPORT["width"] - 5, VIEWPORT["height"] - 5)  # no tooltip over the picture
        if page.locator('[data-testid="stException"]').count():
            sys.exit(f"step {name}: the page shows an exception:\n{page.locator('[data-testid=stException]').first.inner_text()}")
        body = page.locator("body").inner_text()
        if re.search(r"\bnan\b|\bNaN\b", body):
            print(f"  warning: step {name} shows 'nan' on the page")
        self.n += 1
        path = self.out / f"{self.n:02d}-{name}.png"
        page.screenshot(path=str(path))
        small(path)
        self.taken.append((path.name, what))
        print(f"  {path.name}: {what}")


def small(path: Path) -> None:
    """The screenshot in 256 colours (a third of the size; text stays sharp: no dithering)."""
    try:
        from PIL import Image  # Streamlit's own dependency
    except ImportError:
        return
    with Image.open(path) as image:
        quantized = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    quantized.save(path, optimize=True)


def to_top(locator) -> None:
    """Scroll so that this element is near the top of the viewport (Streamlit scrolls its main block)."""
    locator.first.evaluate("e => e.scrollIntoView({block: 'start'})")


def pick_run(page, run_id: str) -> None:
    """Sign-off's Run picker: type the run id, take the option."""
    box = page.locator('[data-testid="stSelectbox"]').filter(has_text="Run").first
    box.click()
    page.keyboard.type(run_id)
    page.get_by_role("option").filter(has_text=run_id).first.click()
    page.wait_for_function(f"() => location.search.includes('run={run_id}')", timeout=30_000)
    page.wait_for_timeout(1000)  # the page drawn for that run


def comment_and(page, text: str, button: str) -> None:
    from playwright.sync_api import expect

    comment = page.get_by_label("Comment (required)")
    comment.fill(text)
    comment.press("Control+Enter")  # commit the text area, as a click elsewhere does
    target = page.get_by_role("button", name=button, exact=True)
    expect(target).to_be_enabled(timeout=30_000)
    target.click()


def walk(page, shots: Shots, link: str, url: str, provider: str, v2: str, v3: str) -> None:
    from playwright.sync_api import expect

    # 1. the link evaluate printed
    page.goto(link)
    page.wait_for_selector(".js-plotly-plot", timeout=90_000)
    expect(page.get_by_text("48 queries match")).to_be_visible(timeout=60_000)
    expect(page.get_by_text("Baseline: named in the link.")).to_be_visible()
    shots("compare-deep-link", "Compare opened from the link `evaluate` printed: the v2 candidate against its "
                               "v1 baseline, headline deltas, status counts, intervals")

    # 2. Status = regressed, as a user picks it
    page.locator('[data-testid="stMultiSelect"]').first.click()
    page.keyboard.type("regressed")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(page.get_by_text("11 queries match")).to_be_visible(timeout=30_000)
    to_top(page.locator('[data-testid="stMultiSelect"]'))
    shots("compare-regressed", "Status filter = regressed: 11 queries match, the table with the term diff "
                               "(lost correct, new wrong, new drift)")

    # 3. the first regressed query side by side: select its row
    grid = page.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)  # the first row's selection cell
    expect(page.get_by_text("query 1 of 11 in the filtered list")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("Golden entry").first).to_be_visible()
    to_top(page.get_by_text("query 1 of 11 in the filtered list"))
    shots("first-regressed-side-by-side", "the first regressed query side by side: baseline left, candidate "
                                          "right, terms as chips with symbols, golden entry, P/R/F1, why it fails")
    assert "&query=" in page.url

    # 4. Next to the last
    for position in range(2, 12):
        page.get_by_role("button", name="Next").click()
        expect(page.get_by_text(f"query {position} of 11 in the filtered list")).to_be_visible(timeout=30_000)
    expect(page.get_by_role("button", name="Next")).to_be_disabled()
    to_top(page.get_by_text("query 11 of 11 in the filtered list"))
    shots("last-regressed-side-by-side", "Next ten times: the last regressed query (11 of 11), Next disabled, "
                                         "the URL naming the query")

    # 5. sign in through the identity provider
    began = page.url
    button = page.get_by_role("button", name="Sign in with single sign-on")
    expect(button).to_be_visible()
    button.click()
    page.wait_for_url(f"{provider}/oauth2/authorize*", timeout=30_000)
    page.get_by_placeholder("sub").fill(SUBJECT)
    shots("identity-provider", "the identity provider's sign-in page (oidc-provider-mock), subject filled in")
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{url}/*", timeout=30_000)
    expect(page.get_by_text(f"Signed in as {ACCOUNT}")).to_be_visible(timeout=60_000)
    expect(page.get_by_text(f"through single sign-on as {EMAIL.split('@')[0]}@")).to_be_visible()
    # back on the query the sign-in began on (the provider returns to the root; the dashboard
    # returns the reviewer to the page, its filters being the old session's)
    expect(page).to_have_url(began, timeout=60_000)
    expect(page.get_by_role("button", name="Next")).to_be_visible(timeout=60_000)
    shots("signed-in", "back on the query the sign-in began on, signed in as alice (approver; medical) through "
                       "single sign-on")

    # 6. Sign-off: the v2 run failed its gate, so it can only be rejected
    page.locator('[data-testid="stSidebarNav"] a', has_text="Sign-off").click()
    expect(page.get_by_role("heading", name="Sign-off")).to_be_visible(timeout=30_000)
    pick_run(page, v2)
    expect(page.get_by_text("This run failed its gate: it can be rejected but never approved.")).to_be_visible(
        timeout=30_000)
    to_top(page.locator('[data-testid="stSelectbox"]').filter(has_text="Run"))
    shots("signoff-failed-run", "Sign-off on the v2 run: failed its gate, so it can be rejected but never "
                                "approved; its flagged queries to open side by side")
    comment_and(page, "11 regressed queries and 2 failed critical ones against v1: rejected; v3 fixes them",
                "Reject")
    expect(page.get_by_text("Recorded reject")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("not releasable").first).to_be_visible()
    expect(page.get_by_label("Comment (required)")).to_have_value("")
    to_top(page.get_by_role("heading", name="Sign-off"))
    shots("signoff-rejected", "Reject recorded, at once: the notice with its audit record, the chain's count one "
                              "up, the comment box empty; the run stays not releasable")

    # 7. the v3 run (gate review): acknowledge every flagged item, approve
    pick_run(page, v3)
    flagged = page.get_by_text(re.compile(r"^\d+ flagged items?$"))
    expect(flagged).to_be_visible(timeout=30_000)
    count = int(flagged.inner_text().split()[0])
    expect(page.get_by_text("awaiting sign-off").first).to_be_visible()
    to_top(page.get_by_role("heading", name="Flagged queries side by side"))
    shots("signoff-review-run", f"Sign-off on the v3 run (gate review, awaiting sign-off): {count} flagged "
                                "item(s), Approve disabled until each is acknowledged")
    grid = page.locator('[data-testid="stDataFrame"]').first
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 14, box["y"] + 35 + 17)  # the first flagged query's selection cell
    expect(page.get_by_text("query 1 of 1 in this run's flagged queries")).to_be_visible(timeout=30_000)
    to_top(page.get_by_role("heading", name="Flagged queries side by side"))
    shots("signoff-flagged-side-by-side", "the flagged query opened side by side on Sign-off: the drift chip "
                                          "with its reason in words, against the v1 baseline")
    boxes = page.locator('[data-testid="stCheckbox"]').filter(has_text="[")
    for i in range(count):
        boxes.nth(i).locator("label").click()
        expect(boxes.nth(i).get_by_role("checkbox")).to_be_checked(timeout=30_000)
    comment = page.get_by_label("Comment (required)")
    comment.fill("drift term reviewed: diabetes insipidus is flagged as forbidden; accepted for release")
    comment.press("Control+Enter")
    expect(page.get_by_role("button", name="Approve", exact=True)).to_be_enabled(timeout=30_000)
    to_top(page.get_by_text(re.compile(r"^\d+ flagged items")))
    shots("signoff-acknowledged", "every flagged item acknowledged and a comment written: Approve enabled")
    page.get_by_role("button", name="Approve", exact=True).click()
    expect(page.get_by_text("Recorded approve")).to_be_visible(timeout=30_000)
    expect(page.get_by_text("approved by alice")).to_be_visible()
    expect(page.get_by_label("Comment (required)")).to_have_value("")
    to_top(page.get_by_role("heading", name="Sign-off"))
    shots("signoff-approved", "Approve recorded: the notice, the new state (releasable) and the chain's record "
                              "count, at once, without a reload")
    to_top(page.get_by_role("heading", name="Decisions on this run"))
    shots("signoff-decisions", "the decision just recorded, listed under Decisions on this run, with its JSON "
                               "and HTML records")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(ROOT / "docs" / "walkthrough"))
    parser.add_argument("--keep", help="use (and keep) this folder instead of a temporary one")
    args = parser.parse_args()
    if not Path(CHROMIUM).exists():
        sys.exit(f"{CHROMIUM} is missing (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("[0-9][0-9]-*.png"):
        old.unlink()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="termgate-walkthrough-"))
    if args.keep and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / "store.duckdb"
    config = folder / "termgate.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, TERMGATE_CONFIG=str(config), TERMGATE_DASHBOARD_URL=url)
    env.pop("TERMGATE_DB", None)
    provider, stop_provider = start_provider()
    server, failed = None, True
    try:
        print(f"walkthrough in {folder}")
        termgate("demo", "--db", str(db), "--data", str(ROOT / "data" / "demo"), env=env)
        print(termgate("users", "add", ACCOUNT, "--role", "approver", "--domains", "medical", "--sso",
                       "--alias", EMAIL, "--db", str(db), env=env).strip())
        from termgate import store

        ids = {(r.name, r.prompt_version): r.run_id for r in store.runs_overview(db).itertuples()}
        v1, v3 = ids[("medical demo", "v1")], ids[("medical demo", "v3")]
        demo = ROOT / "data" / "demo" / "medical"
        printed = termgate("evaluate", "--golden", str(demo / "golden.jsonl"), "--generated",
                           str(demo / "v2-candidate.jsonl"), "--baseline", v1, "--db", str(db), "--drift-judge",
                           "none", "--name", "medical v2 (CI)", "--prompt-version", "v2", "--author", "ci-pipeline",
                           env=env)
        link = re.search(r"^dashboard: (\S+)$", printed, re.M).group(1)
        v2 = re.search(r"run=([^&]+)", link).group(1)
        print(f"evaluate printed: {link}")
        provider_user(provider, SUBJECT, {"email": EMAIL, "email_verified": True, "name": "Alice"})
        try:
            server = Dashboard(db, folder, provider, port, env).start()
        except RuntimeError as exc:
            sys.exit(str(exc))
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport=VIEWPORT)
            shots = Shots(page, out)
            try:
                walk(page, shots, link, url, provider, v2, v3)
            except Exception:
                page.screenshot(path=str(folder / "failed.png"))
                print(f"failed; the page at that moment: {folder / 'failed.png'}; server log: "
                      f"{folder / 'streamlit.log'}", file=sys.stderr)
                raise
            browser.close()
        from termgate.governance import signoff as so

        decisions = [(r["decision"], r["actor"], r["run_id"], r["payload"].get("sso"))
                     for r in store.audit_records(db) if r["kind"] == "decision"]
        print(f"audit chain: {so.verify_chain(db).message}; decisions: {decisions}")
        print(f"release of v3: {so.release_state(db, v3).status}")
        failed = False
    finally:
        if server is not None:
            server.stop()
        stop_provider()
        if not args.keep and not failed:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
