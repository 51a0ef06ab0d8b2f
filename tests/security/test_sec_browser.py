"""Security, in a real browser (issue 13): markup in every field the dashboard shows never
renders and never makes the browser fetch anything; a configured endpoint's key goes to
that endpoint only; a signed-out visitor cannot run anything; a busy store recovers.

A recording stub on 127.0.0.1 stands for an attacker's host (pixels, links) and for LLM
endpoints (Authorization headers)."""

from __future__ import annotations

import os
import tempfile
import time
import urllib.parse
from pathlib import Path

import pytest

from payloads import build_store, fragments
from stub import CHROMIUM, CHROMIUM_ARGS, RecordingStub, dashboard, settle

pytestmark = [pytest.mark.browser,
              pytest.mark.skipif(not Path(CHROMIUM).exists() and not os.environ.get("CI"),
                                 reason="Debian chromium is not installed (apt-get install chromium)")]

SHOTS = Path(os.environ.get("TERMGATE_SCREENSHOTS") or tempfile.mkdtemp(prefix="termgate-sec-screens-"))

# What the page shows as text: the DOM's text, chart text (SVG) and the values of inputs
# (a selectbox shows its option in an input), with the word joiners ui.literal adds removed.
INSPECT = """(host) => ({
  anchors: [...document.querySelectorAll('a[href]')].map(a => a.href).filter(h => h.includes(host)),
  images: [...document.querySelectorAll('img[src], image')].map(i => i.src || i.getAttribute('href') || '')
          .filter(s => s.includes(host)),
  emphasis: [...document.querySelectorAll('b, strong, em, i')].map(e => e.textContent)
            .filter(t => /\\bbold\\b|\\bstrong\\b|\\beve\\b/.test(t)),
  svgBold: [...document.querySelectorAll('svg text, svg tspan')]
           .filter(e => /bold/.test(e.getAttribute('style') || '') && /\\bbold\\b/.test(e.textContent)).length,
  svgLinks: document.querySelectorAll('svg a').length,
  katex: document.querySelectorAll('.katex, .katex-display, math').length,
  text: (document.body.innerText + '\\n' + [...document.querySelectorAll('svg text')].map(t => t.textContent).join('\\n')
         + '\\n' + [...document.querySelectorAll('input, textarea')].map(i => i.value).join('\\n')).replace(/\\u2060/g, ''),
})"""


@pytest.fixture(scope="module")
def marked_up(tmp_path_factory):
    stub = RecordingStub()
    folder = tmp_path_factory.mktemp("marked-up")
    ids = build_store(folder / "store.duckdb", folder, stub.port)
    try:
        with dashboard(ids["env"]) as url:
            yield url, stub, ids
    finally:
        stub.close()


def visit(page, url: str, wait_for: str | None = None) -> None:
    page.goto(url)
    page.wait_for_selector("h1", timeout=60_000)
    if wait_for:
        page.wait_for_selector(wait_for, timeout=60_000)
    settle(page)


def test_markup_in_data_never_renders_on_any_page(marked_up):
    from playwright.sync_api import sync_playwright

    url, stub, ids = marked_up
    q = urllib.parse.quote
    pages = {
        "runs": (f"{url}/", ".js-plotly-plot"),
        "compare": (f"{url}/compare?run={ids['cand']}&baseline={ids['base']}", ".js-plotly-plot"),
        "compare-unknown": (f"{url}/compare?run={q(fragments(stub.port)[0] + ' ' + fragments(stub.port)[2])}", None),
        "query": (f"{url}/query?query_id={q(ids['qid'])}", ".js-plotly-plot"),
        "regressions": (f"{url}/regressions", '[data-testid="stExpander"]'),
        "signoff": (f"{url}/signoff?run={ids['cand']}", '[data-testid="stCheckbox"]'),
        "import": (f"{url}/import", '[data-testid="stForm"]'),
        "prompts": (f"{url}/prompts", ".js-plotly-plot"),
    }
    problems = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        for name, (address, wait_for) in pages.items():
            visit(page, address, wait_for)
            for expander in page.locator('[data-testid="stExpander"] summary').all():
                expander.click()  # flagged items and tables inside render too
            page.mouse.move(700, 400)  # and a hover over the charts
            settle(page)
            found = page.evaluate(INSPECT, f"127.0.0.1:{stub.port}")
            page.screenshot(path=str(SHOTS / f"sec-{name}.png"), full_page=True)
            for key in ("anchors", "images", "emphasis"):
                if found[key]:
                    problems.append(f"{name}: {key} from data rendered: {found[key][:3]}")
            for key in ("svgBold", "svgLinks", "katex"):
                if found[key]:
                    problems.append(f"{name}: {found[key]} {key} elements from data")
            if name != "import":
                missing = [f for f in fragments(stub.port) if f not in found["text"]]
                if missing:
                    problems.append(f"{name}: not shown literally: {missing}")
        browser.close()
    assert stub.seen() == [], "the browser fetched from the stub (pixel, image or link prefetch)"
    assert problems == []


def _cli(env: dict, *args: str) -> None:
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "termgate", *args], capture_output=True, text=True,
                          env={**os.environ, **env})
    assert proc.returncode == 0, proc.stderr


def test_harness_key_goes_only_to_its_endpoint_and_only_for_an_account_that_may_run(tmp_path):
    from playwright.sync_api import expect, sync_playwright

    from termgate import store

    good, other = RecordingStub(), RecordingStub()  # a configured endpoint; the server's own [llm] host
    config = tmp_path / "termgate.toml"
    config.write_text(f'[drift]\njudge = "none"\n[llm]\nbase_url = "{other.url}/v1"\n'
                      f'[llm.endpoints.good]\nbase_url = "{good.url}/v1"\nmodel = "good-model"\nkey_env = "GOOD_KEY"\n'
                      f'[llm.endpoints.other]\nbase_url = "{other.url}/v1"\nmodel = "m"\nkey_env = "OTHER_KEY"\n',
                      encoding="utf-8")
    db = tmp_path / "store.duckdb"
    env = {"TERMGATE_CONFIG": str(config), "TERMGATE_DB": str(db)}
    _cli({**env, "TERMGATE_PASSWORD": "victor-password"}, "users", "add", "victor", "--role", "viewer")
    _cli({**env, "TERMGATE_PASSWORD": "erin-password-1"}, "users", "add", "erin", "--role", "engineer")
    golden = tmp_path / "golden.jsonl"
    golden.write_text("".join(f'{{"query_id": "q{i}", "query": "sneakers {i}", "expected_expansions": '
                              f'[{{"term": "trainers"}}, {{"term": "running shoes"}}]}}\n' for i in range(3)))
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("Synonyms for {query}")
    secrets = {"GOOD_KEY": "sk-good-123", "OTHER_KEY": "sk-other-456", "OPENAI_API_KEY": "sk-server-openai-789",
               "OPENAI_BASE_URL": f"{other.url}/v1"}
    try:
        with dashboard({**env, **secrets}) as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            visit(page, f"{url}/import", '[data-testid="stForm"]')
            expect(page.get_by_text("Sign in (in the sidebar)")).to_be_visible()
            expect(page.get_by_role("button", name="Evaluate")).to_be_disabled()
            page.get_by_role("tab", name="Run a prompt (harness)").click()
            expect(page.get_by_role("button", name="Run harness")).to_be_disabled()
            expect(page.get_by_text("http", exact=False).filter(has_text=good.url)).to_have_count(0)  # no URL shown

            def sign_in(name: str, password: str) -> None:
                sidebar = page.locator('[data-testid="stSidebar"]')
                sidebar.get_by_label("Account", exact=True).fill(name)
                sidebar.get_by_label("Password", exact=True).fill(password)
                sidebar.get_by_role("button", name="Sign in").click()
                expect(sidebar.get_by_text(f"Signed in as {name}")).to_be_visible(timeout=30_000)
                settle(page)

            sign_in("victor", "victor-password")
            page.get_by_role("tab", name="Run a prompt (harness)").click()
            expect(page.get_by_text("is a viewer")).to_be_visible()
            expect(page.get_by_role("button", name="Run harness")).to_be_disabled()
            page.get_by_role("button", name="Sign out").click()
            settle(page)
            sign_in("erin", "erin-password-1")
            page.get_by_role("tab", name="Run a prompt (harness)").click()
            panel = page.get_by_role("tabpanel").filter(has=page.get_by_role("button", name="Run harness"))
            uploads = panel.locator('input[type="file"]')
            uploads.nth(0).set_input_files(str(golden))
            uploads.nth(1).set_input_files(str(prompt))
            expect(panel.get_by_text("prompt.txt")).to_be_visible(timeout=30_000)
            panel.get_by_role("button", name="Run harness").click()
            expect(page.get_by_text("Recorded run")).to_be_visible(timeout=120_000)
            page.screenshot(path=str(SHOTS / "sec-import-harness.png"), full_page=True)
            browser.close()
    finally:
        good.close()
        other.close()
    calls = good.seen()
    assert len(calls) == 3 and {c[0:2] for c in calls} == {("POST", "/v1/chat/completions")}
    assert {c[2] for c in calls} == {"Bearer sk-good-123"}  # its own key, on every call
    assert other.seen() == []  # the server's other hosts got nothing
    run = store.runs_overview(db).iloc[0]
    assert run["author"] == "erin"


def test_busy_store_says_so_and_recovers_without_a_reload(tmp_path):
    import subprocess
    import sys

    from playwright.sync_api import expect, sync_playwright

    config = tmp_path / "termgate.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    db = tmp_path / "store.duckdb"
    env = {"TERMGATE_CONFIG": str(config), "TERMGATE_DB": str(db)}
    (tmp_path / "g.jsonl").write_text('{"query_id": "q1", "query": "x", "expected_expansions": [{"term": "a"}]}\n')
    (tmp_path / "c.jsonl").write_text('{"query_id": "q1", "terms": ["a"]}\n')
    _cli(env, "evaluate", "--golden", str(tmp_path / "g.jsonl"), "--generated", str(tmp_path / "c.jsonl"),
         "--db", str(db), "--drift-judge", "none", "--name", "first run", "-q")
    with dashboard(env) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        code = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(8)"
        holder = subprocess.Popen([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True)
        try:
            assert holder.stdout.readline().strip() == "held"
            page.goto(url)
            expect(page.get_by_text("Store busy: another process")).to_be_visible(timeout=20_000)
            assert page.get_by_text("Traceback").count() == 0 and page.locator('[data-testid="stException"]').count() == 0
            page.screenshot(path=str(SHOTS / "sec-busy.png"))
        finally:
            holder.wait(timeout=30)
        expect(page.locator('[data-testid="stDataFrame"]')).to_be_visible(timeout=30_000)  # no reload
        expect(page.get_by_text("Store busy: another process")).to_have_count(0)
        page.screenshot(path=str(SHOTS / "sec-busy-recovered.png"))
        browser.close()
