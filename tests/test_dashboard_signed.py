"""The dashboard's service key (issue 33, SPEC §4): every record the dashboard appends for a
signed-in reviewer is signed by its own key, naming the identity it authenticated, and on a
signed store it records nothing without the key the chain registers for it.

The store (built once per backend, copied per test): accounts ada (admin), alice (approver,
medical), carol (approver, the run's author), vic (viewer) and sam (single sign-on approver,
medical); then the trust root (ada's key), the CI's and the dashboard's keys registered by
ada; then carol's medical run evaluated with the CI's key (attested, gate review) and a second
run without it (unattested). The pages run in Streamlit's AppTest; single sign-on seeds
`AppTest.user` with an ID token's claims, as Streamlit fills `st.user` after the provider's
round trip (the real round trip: tests/test_sso.py's provider, at the end)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from streamlit.testing.v1 import AppTest

from termgate import store
from termgate.cli import main
from termgate.dashboard import APP
from termgate.governance import signoff as so
from termgate.governance import trust
from termgate.governance.signatures import authority_of
from termgate.signing import PrivateKey, Signer, signing_as, write_key_file

from conftest import golden_row, write_jsonl
from dashboard_server import ARGS, CHROMIUM, Dashboard, provider_user, start_provider
from test_dashboard import shown

PASSWORDS = {"ada": "ada-password-1", "alice": "alice-password", "carol": "carol-password", "vic": "viewer-password"}
ISSUER = "https://idp.example.com"
SAM = {"is_logged_in": True, "iss": ISSUER, "sub": "sam-sub", "email": "sam@example.com", "email_verified": True}
AUTH = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "termgate",
        "client_secret": "s", "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}


def _signed_store(db: str, folder: Path) -> dict:
    """See the module docstring; returns the run ids and the key files."""
    for name, role, domains in (("ada", "admin", ""), ("alice", "approver", "medical"), ("carol", "approver", ""),
                                ("vic", "viewer", "")):
        so.add_user(db, name, role, PASSWORDS[name], domains)
    so.add_user(db, "sam", "approver", None, "medical", aliases=["sam@example.com"], sso=True)
    root = trust.init_trust(db, so.authenticate(db, "ada", PASSWORDS["ada"]), PASSWORDS["ada"])
    ada = trust.personal_signer(db, "ada", PASSWORDS["ada"])
    keys = {}
    for service in ("ci", "dashboard"):
        key = PrivateKey.generate()
        write_key_file(folder / f"{service}.key", key)
        with signing_as(ada):
            trust.register_key(db, ada, f"service:{service}", key.public)
        keys[service] = str(folder / f"{service}.key")
    golden = write_jsonl(folder / "golden.jsonl", [  # precision 0.8 on m1 (a drift term): gate review
        golden_row("m1", "heart attack", ["mi", "myocardial infarction", "cardiac arrest", "chest pain"],
                   domain="medical", forbidden=["panic attack"]),
        golden_row("m2", "stroke", ["cva", "cerebrovascular accident"], domain="medical")])
    runs = {}
    for name, extra, env in (("attested", [], {"TERMGATE_CI_KEY": keys["ci"]}), ("unattested", ["angina"], {})):
        generated = write_jsonl(folder / f"{name}.jsonl", [
            {"query_id": "m1", "terms": ["mi", "myocardial infarction", "cardiac arrest", "chest pain", "panic attack",
                                         *extra]},
            {"query_id": "m2", "terms": ["cva", "cerebrovascular accident"]}])
        before = set(store.list_runs(db)["run_id"]) if store.exists(db) else set()
        result = CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated), "--db",
                                           db, "--drift-judge", "none", "--author", "carol", "-q"], env=env)
        assert result.exit_code in (1, 3), result.output
        [runs[name]] = set(store.list_runs(db)["run_id"]) - before
    return {"root": root, **runs, **keys}


@pytest.fixture
def signed(request, tmp_path, backend, store_templates, monkeypatch):
    """(the store, what _signed_store returned), the dashboard pointed at it, no key configured."""
    db, made = store_templates.copy(request, backend, "dashboard-signed", _signed_store, tmp_path)
    monkeypatch.setenv("TERMGATE_DB", db)
    monkeypatch.delenv("TERMGATE_DASHBOARD_KEY", raising=False)
    monkeypatch.delenv("TERMGATE_CI_KEY", raising=False)
    from termgate.dashboard import data
    data.clear()
    return db, made


def page(name: str, secrets: dict | None = None, user: dict | None = None, **params) -> AppTest:
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.secrets.update(secrets or {})
    if user is not None:
        at.user = dict(user)
    at.switch_page(f"views/{name}.py")
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def sign_in(at: AppTest, name: str) -> AppTest:
    at.text_input(key="auth_name").input(name)
    at.text_input(key="auth_password").input(PASSWORDS[name])
    next(b for b in at.sidebar.button if b.label == "Sign in").click()
    return at.run()


def approve(at: AppTest, run_id: str, comment: str = "drift term reviewed") -> AppTest:
    """Acknowledge every flagged item, write a comment, click Approve (when it is enabled)."""
    for box in (c for c in at.checkbox if c.key.startswith("so_ack_")):
        box.check()
    at.text_area(key=f"so_comment_{run_id}").input(comment).run()
    if not at.button(key="so_approve").disabled:
        at.button(key="so_approve").click().run()
    return at


def records(db, kind: str) -> list[dict]:
    return [r for r in store.audit_records(db) if r["kind"] == kind]


def check_of(db, record: dict):
    return authority_of(store.audit_records(db)).checks[record["seq"]]


def fingerprint(key_file: str) -> str:
    return json.loads(Path(key_file).read_text())["fingerprint"]


def private_text(key_file: str) -> str:
    return json.loads(Path(key_file).read_text())["private"]


def everything_shown(at: AppTest) -> str:
    """Every text the page and its sidebar show, and the session state's values, as one text."""
    shown_ = []
    for kind in ("markdown", "caption", "error", "warning", "success", "info", "expander", "code", "text",
                 "text_input", "text_area", "button", "checkbox", "selectbox"):
        for element in getattr(at, kind):
            shown_ += [str(getattr(element, "value", "")), str(getattr(element, "label", ""))]
    shown_ += [repr(value) for value in at.session_state.values()]
    return "\n".join(shown_)


# ---------------------------------------------------------------- signed by the dashboard, and counted


@pytest.mark.slow
@pytest.mark.parametrize("configured", ["environment", "secrets"])
def test_a_password_approval_is_signed_by_the_dashboard_key_naming_the_account_and_counts(signed, configured,
                                                                                          monkeypatch):
    db, made = signed
    secrets = {}
    if configured == "environment":
        monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", made["dashboard"])  # a path
    else:
        secrets = {"termgate": {"signing_key": Path(made["dashboard"]).read_text()}}  # the key file's text
    assert so.release_state(db, made["attested"]).status == "awaiting sign-off"
    at = sign_in(page("signoff", secrets, run=made["attested"]), "alice")
    assert not at.exception and not at.error
    approve(at, made["attested"])
    assert any("Recorded approve" in s.value for s in at.success), [e.value for e in at.error]
    [decision] = records(db, "decision")
    signature = decision["payload"]["signature"]
    assert signature["key"] == fingerprint(made["dashboard"]) and signature["service"] == "dashboard"
    assert signature["for"] == {"account": "alice"}
    assert check_of(db, decision).status == "signed"
    state = so.release_state(db, made["attested"])
    assert state.status == "releasable" and state.reasons[0] == "approved by alice"
    # the history says how it is signed; the key itself is nowhere on the page or in the session
    assert any("signed by the dashboard's key for alice" in shown(m.value) for m in at.markdown)
    assert private_text(made["dashboard"]) not in everything_shown(at)


@pytest.mark.slow
def test_single_sign_on_binds_and_approves_signed_for_issuer_and_subject(signed, monkeypatch):
    db, made = signed
    monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", made["dashboard"])
    at = page("signoff", {"auth": AUTH}, SAM, run=made["attested"])
    assert not at.exception
    assert any("Signed in as **sam**" in c.value for c in at.sidebar.caption), [e.value for e in at.sidebar.error]
    approve(at, made["attested"], "reviewed through single sign-on")
    assert any("Recorded approve" in s.value for s in at.success), [e.value for e in at.error]
    identity = {"account": "sam", "iss": ISSUER, "sub": "sam-sub"}
    [bind] = records(db, "user_sso_bind")
    [decision] = records(db, "decision")
    for record in (bind, decision):
        assert record["payload"]["signature"]["for"] == identity
        assert record["payload"]["signature"]["key"] == fingerprint(made["dashboard"])
        assert check_of(db, record).status == "signed"
    assert decision["payload"]["sso"] == {"iss": ISSUER, "sub": "sam-sub"}
    assert so.release_state(db, made["attested"]).status == "releasable"
    assert any(f"single sign-on {ISSUER} · sam-sub" in shown(m.value) for m in at.markdown)


@pytest.mark.slow
def test_the_team_stores_dashboard_role_records_signed(request, tmp_path, pg, store_templates, monkeypatch):
    """Through PostgreSQL's least-privilege dashboard role (its door for the first binding,
    termgate_bind_sso, included) the records go in signed, and count."""
    import psycopg

    from termgate.dashboard import service_key
    from termgate.governance import sso

    db, made = store_templates.copy(request, "postgresql://like", "dashboard-signed", _signed_store, tmp_path)
    name = db.rsplit("/", 1)[1]
    roles = CliRunner().invoke(main, ["store", "roles", "--ci", f"ci_{name}", "--dashboard", f"dash_{name}"])
    with psycopg.connect(db, autocommit=True) as owner:
        owner.execute(roles.output)
    dash = pg.url(name, user=f"dash_{name}")
    monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", made["dashboard"])
    claims = {k: v for k, v in SAM.items() if k != "is_logged_in"}
    account = sso.sign_in(dash, claims, signing=lambda identity: service_key.signed_for(dash, identity))
    with service_key.signed_as(dash, account):
        so.decide_as(dash, made["attested"], account, "approve", "reviewed", ack_all=True)
    for kind in ("user_sso_bind", "decision"):
        [record] = records(db, kind)
        assert record["payload"]["signature"]["for"] == {"account": "sam", "iss": ISSUER, "sub": "sam-sub"}
        assert check_of(db, record).status == "signed"
    assert so.release_state(db, made["attested"]).status == "releasable"


# ---------------------------------------------------------------- no key, or not the registered one


def _other_key(tmp_path) -> str:
    path = tmp_path / "other.key"
    write_key_file(path, PrivateKey.generate())
    return str(path)


@pytest.mark.slow
@pytest.mark.parametrize("key", ["none", "another", "not a key"])
def test_without_the_registered_key_the_dashboard_refuses_and_appends_nothing(signed, key, tmp_path, monkeypatch):
    db, made = signed
    if key == "another":
        monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", _other_key(tmp_path))
    elif key == "not a key":
        monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", '{"kind": "something else", "private": "c2VjcmV0"}')
    before = len(store.audit_records(db))
    at = sign_in(page("signoff", run=made["attested"]), "alice")
    assert not at.exception
    said = shown(" ".join(e.value for e in at.error))
    assert "Nothing can be recorded here" in said
    assert {"none": "has no signing key registered in the store", "another": "is not the one registered in the store",
            "not a key": "cannot be read"}[key] in said
    if key != "not a key":
        assert "termgate keys register --service dashboard --key-file FILE --admin NAME" in said
    assert "c2VjcmV0" not in everything_shown(at)  # what the variable holds is never shown
    approve(at, made["attested"])
    assert at.button(key="so_approve").disabled and at.button(key="so_reject").disabled
    # single sign-on's first binding is refused too, with the reason in the sidebar
    sso_page = page("signoff", {"auth": AUTH}, SAM, run=made["attested"])
    assert any(("registered in the store" in shown(e.value) or "cannot be read" in shown(e.value))
               and shown(e.value).startswith("Not signed in: this dashboard") for e in sso_page.sidebar.error)
    assert not any("Signed in as" in c.value for c in sso_page.sidebar.caption)
    assert len(store.audit_records(db)) == before
    assert so.release_state(db, made["attested"]).status == "awaiting sign-off"


@pytest.mark.slow
def test_the_refusal_holds_when_the_form_was_drawn_before_the_key_was_replaced(signed, tmp_path, monkeypatch):
    """The page's notice is a courtesy: recording checks the key again (signed_for)."""
    db, made = signed
    monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", made["dashboard"])
    at = sign_in(page("signoff", run=made["attested"]), "alice")
    for box in (c for c in at.checkbox if c.key.startswith("so_ack_")):
        box.check()
    at.text_area(key=f"so_comment_{made['attested']}").input("fine").run()
    assert not at.button(key="so_approve").disabled
    monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", _other_key(tmp_path))
    before = len(store.audit_records(db))
    at.button(key="so_approve").click().run()
    assert any("is not the one registered in the store" in shown(e.value) for e in at.error)
    assert len(store.audit_records(db)) == before


@pytest.mark.slow
def test_on_a_store_without_a_trust_root_the_dashboard_records_unsigned_as_before(tmp_path, monkeypatch):
    from termgate.dashboard import service_key

    db = str(tmp_path / "plain.duckdb")
    so.add_user(db, "alice", "approver", PASSWORDS["alice"])
    monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", _other_key(tmp_path))  # configured, but nothing is signed yet
    account = so.authenticate(db, "alice", PASSWORDS["alice"])
    with service_key.signed_as(db, account) as signer:
        assert signer is None
        so.set_aliases(db, "alice", add=["alice-gh"])
    assert "signature" not in store.audit_records(db)[-1]["payload"]
    assert service_key.refusal(None, None) is None


# ---------------------------------------------------------------- what the dashboard key cannot do


@pytest.mark.slow
def test_the_dashboard_key_cannot_make_an_account_change_count(signed, monkeypatch):
    """Someone holding the dashboard's key and the database makes viewer vic an admin, signed
    for admin ada: the record is named as failing, vic stays a viewer in the chain, and his
    approval through the dashboard (which reads the account table) does not count."""
    db, made = signed
    dashboard = Signer(PrivateKey.from_raw(__import__("base64").b64decode(private_text(made["dashboard"]))),
                       service="dashboard", identity={"account": "ada"})
    with signing_as(dashboard):
        store.write_account(db, "vic", {"role": "admin"},
                            {"created_at": "2026-01-01T00:00:00Z", "kind": "user_set_role", "actor": "ada",
                             "payload": {}})
    chain = so.verify_chain(db)
    [forged] = [r for r in store.audit_records(db) if r["kind"] == "user_set_role"]
    assert chain.ok
    assert any(line.startswith(f"record {forged['seq']} (user_set_role by ada)")
               and "the dashboard key may not sign user_set_role records" in line for line in chain.failing)
    authority = authority_of(chain.log)
    assert authority.final["vic"]["role"] == "viewer" and authority.states[forged["seq"]] is None

    monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", made["dashboard"])
    at = sign_in(page("signoff", run=made["attested"]), "vic")
    failing = [e for e in at.expander if "whose signature fails" in e.label]
    assert failing and "may not sign user_set_role records" in shown(" ".join(m.value for m in failing[0].markdown))
    approve(at, made["attested"], "I am an admin now")
    [decision] = records(db, "decision")
    assert decision["actor"] == "vic" and check_of(db, decision).status == "signed"
    assert so.release_state(db, made["attested"]).status == "awaiting sign-off"


# ---------------------------------------------------------------- what the Sign-off page shows


@pytest.mark.slow
def test_the_signoff_page_shows_an_unattested_run_the_trust_root_and_failing_records(signed):
    db, made = signed
    at = page("signoff", run=made["unattested"])
    assert not at.exception
    assert any(f"signed records from trust root {made['root']}" in shown(c.value) for c in at.caption)
    assert any("no trust root is pinned" in shown(w.value) for w in at.warning)
    assert any(shown(m.value).startswith(f"**unattested** — run {made['unattested']}'s header") for m in at.markdown)
    assert any("is unattested: it is never releasable" in shown(w.value) for w in at.warning)
    [failing] = [e for e in at.expander if "whose signature fails" in e.label]
    assert "1 record whose signature fails" in failing.label
    assert "(run by carol): unsigned" in shown(failing.markdown[0].value)


# ---------------------------------------------------------------- verdicts, and what the dashboard hands on


@pytest.mark.slow
def test_a_verdict_recorded_in_the_dashboard_is_signed_for_its_engineer(demo_store, tmp_path, monkeypatch):
    import shutil

    from termgate.dashboard import data
    from test_verdict_view import expander, fill
    from test_side_by_side import runs_by

    db = tmp_path / "store.duckdb"
    shutil.copy(demo_store, db)
    monkeypatch.setenv("TERMGATE_DB", str(db))
    data.clear()
    so.add_user(db, "ada", "admin", PASSWORDS["ada"])
    so.add_user(db, "erin", "engineer", "erin-password-1")
    trust.init_trust(str(db), so.authenticate(db, "ada", PASSWORDS["ada"]), PASSWORDS["ada"])
    ada, key = trust.personal_signer(db, "ada", PASSWORDS["ada"]), PrivateKey.generate()
    with signing_as(ada):
        trust.register_key(db, ada, "service:dashboard", key.public)
    write_key_file(tmp_path / "dashboard.key", key)
    monkeypatch.setenv("TERMGATE_DASHBOARD_KEY", str(tmp_path / "dashboard.key"))
    ids = runs_by(db)
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    at = page("compare", run=run, baseline=base, query="med-001")
    at.text_input(key="auth_name").input("erin")
    at.text_input(key="auth_password").input("erin-password-1")
    next(b for b in at.sidebar.button if b.label == "Sign in").click()
    at.run()
    at.session_state["cmp_vd_open"] = True
    at.run()
    term = expander(at).selectbox[0].options[0].split(" · ")[0]
    fill(at, term, "synonym", "a synonym")
    at.run()
    assert not at.exception
    [verdict] = records(db, "verdict")
    assert verdict["payload"]["signature"]["for"] == {"account": "erin"}
    assert check_of(db, verdict).status == "signed"


def test_the_evaluate_child_never_gets_the_dashboard_key(monkeypatch):
    from termgate.dashboard.importer import child_env

    for name in ("TERMGATE_DASHBOARD_KEY", "EVALCORE_DASHBOARD_KEY", "TERMGATE_CI_KEY", "TERMGATE_KEY_FILE"):
        monkeypatch.setenv(name, "/etc/termgate/some.key")
    env = child_env()
    assert not {"TERMGATE_DASHBOARD_KEY", "EVALCORE_DASHBOARD_KEY", "TERMGATE_CI_KEY", "TERMGATE_KEY_FILE"} & set(env)


# ---------------------------------------------------------------- a real browser, and a real identity provider


def _shots() -> Path:
    folder = Path(os.environ.get("TERMGATE_SCREENSHOTS") or tempfile.mkdtemp(prefix="termgate-screens-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


try:
    import oidc_provider_mock
except ImportError:  # the dev extra installs it; CI always has it
    oidc_provider_mock = None

# CI installs Chromium (.ci/run) and the dev extras: only a developer machine without them skips.
_no_chromium = not Path(CHROMIUM).exists() and not os.environ.get("CI")
needs_provider = pytest.mark.skipif(oidc_provider_mock is None and not os.environ.get("CI"),
                                    reason="needs oidc-provider-mock (pip install -e '.[dev]')")


@pytest.fixture
def signed_duckdb(request, tmp_path, store_templates):
    db, made = store_templates.copy(request, str(tmp_path / "like.duckdb"), "dashboard-signed", _signed_store,
                                    tmp_path)
    return db, made


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(_no_chromium, reason="Debian chromium is not installed (apt-get install chromium)")
def test_approve_with_the_dashboard_key_in_a_real_browser(signed_duckdb, tmp_path):
    """Password sign-in, the key in the server's environment: the Sign-off page says how the
    chain is signed, lists the failing record and the unattested run; the approval is signed
    for alice and counts (screenshots: signed-signoff.png, signed-approved.png, signed-unattested.png)."""
    from playwright.sync_api import expect, sync_playwright

    db, made = signed_duckdb
    server = Dashboard(db, tmp_path, env=dict(os.environ, TERMGATE_DASHBOARD_KEY=made["dashboard"])).start()
    shots = _shots()
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(f"{server.url}/signoff?run={made['attested']}")
            sidebar = page.locator('[data-testid="stSidebar"]')
            sidebar.get_by_label("Account", exact=True).fill("alice")
            sidebar.get_by_label("Password", exact=True).fill(PASSWORDS["alice"])
            sidebar.get_by_role("button", name="Sign in").click()
            expect(sidebar.get_by_text("Signed in as")).to_be_visible(timeout=30_000)
            expect(page.get_by_text(f"signed records from trust root {made['root']}")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("1 record whose signature fails")).to_be_visible()
            expect(page.get_by_text("2 flagged items", exact=True)).to_be_visible(timeout=30_000)
            page.get_by_text("1 record whose signature fails").click()  # open the list
            expect(page.get_by_text("(run by carol): unsigned")).to_be_visible()
            expect(page.get_by_text("No decisions recorded for this run yet.")).to_be_visible(timeout=30_000)
            page.screenshot(path=str(shots / "signed-signoff.png"), full_page=True)
            for i in range(2):
                page.locator('[data-testid="stCheckbox"] label').nth(i).click()
                expect(page.locator('[data-testid="stCheckbox"] input').nth(i)).to_be_checked(timeout=30_000)
            comment = page.get_by_label("Comment (required)")
            comment.fill("drift term reviewed")
            comment.press("Control+Enter")
            approve = page.get_by_role("button", name="Approve")
            expect(approve).to_be_enabled(timeout=30_000)
            approve.click()
            expect(page.get_by_text("Recorded approve")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("signed by the dashboard's key for alice")).to_be_visible()
            page.screenshot(path=str(shots / "signed-approved.png"), full_page=True)
            page.goto(f"{server.url}/signoff?run={made['unattested']}")
            expect(page.get_by_text("is unattested: it is never releasable")).to_be_visible(timeout=60_000)
            expect(page.get_by_text("No decisions recorded for this run yet.")).to_be_visible(timeout=30_000)
            page.screenshot(path=str(shots / "signed-unattested.png"), full_page=True)
            browser.close()
    finally:
        server.stop()
    [decision] = records(db, "decision")
    assert decision["payload"]["signature"]["for"] == {"account": "alice"}
    assert so.release_state(db, made["attested"]).status == "releasable"
    assert private_text(made["dashboard"]) not in server.log_path.read_text()
    assert (shots / "signed-signoff.png").stat().st_size > 10_000


@pytest.mark.slow
@pytest.mark.browser
@pytest.mark.skipif(_no_chromium, reason="Debian chromium is not installed (apt-get install chromium)")
@needs_provider
def test_single_sign_on_through_a_real_provider_signs_for_issuer_and_subject(signed_duckdb, tmp_path):
    """The key in the server's Streamlit secrets ([termgate] signing_key, a path); sam signs in
    at the provider: the first binding and the approval are signed for the provider's issuer
    and sam's subject, and the approval counts (screenshot: signed-sso.png)."""
    from playwright.sync_api import expect, sync_playwright

    from test_sso import sign_in_at_provider

    db, made = signed_duckdb
    provider, stop = start_provider()
    server = None
    try:
        provider_user(provider, "sam-sub", {"email": "sam@example.com", "email_verified": True, "name": "Sam"})
        server = Dashboard(db, tmp_path, provider,
                           secrets=f'\n[termgate]\nsigning_key = "{made["dashboard"]}"\n').start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            sign_in_at_provider(page, server.url, provider, "sam-sub", start=f"/signoff?run={made['attested']}")
            expect(page.get_by_text("Signed in as sam")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("2 flagged items", exact=True)).to_be_visible(timeout=30_000)
            for i in range(2):
                page.locator('[data-testid="stCheckbox"] label').nth(i).click()
                expect(page.locator('[data-testid="stCheckbox"] input').nth(i)).to_be_checked(timeout=30_000)
            comment = page.get_by_label("Comment (required)")
            comment.fill("reviewed through single sign-on")
            comment.press("Control+Enter")
            approve = page.get_by_role("button", name="Approve")
            expect(approve).to_be_enabled(timeout=30_000)
            approve.click()
            expect(page.get_by_text("Recorded approve")).to_be_visible(timeout=30_000)
            expect(page.get_by_text("signed by the dashboard's key for sam, single sign-on")).to_be_visible()
            page.screenshot(path=str(_shots() / "signed-sso.png"), full_page=True)
            browser.close()
    finally:
        if server is not None:
            server.stop()
        stop()
    identity = {"account": "sam", "iss": provider, "sub": "sam-sub"}  # the mock's issuer: its URL
    [bind] = records(db, "user_sso_bind")
    [decision] = records(db, "decision")
    for record in (bind, decision):
        assert record["payload"]["signature"]["for"] == identity and check_of(db, record).status == "signed"
    assert so.release_state(db, made["attested"]).status == "releasable"


def test_the_import_page_says_an_imported_run_is_unattested_on_a_signed_store(signed, backend):
    db, made = signed
    at = page("import")
    assert not at.exception
    assert any("imported here is **unattested**" in w.value for w in at.warning), [w.value for w in at.warning]


def test_the_import_page_warns_of_nothing_on_a_store_with_no_trust_root(tmp_path, monkeypatch):
    db = str(tmp_path / "plain.duckdb")
    so.add_user(db, "erin", "engineer", PASSWORDS["carol"])
    monkeypatch.setenv("TERMGATE_DB", db)
    from termgate.dashboard import data
    data.clear()
    at = page("import")
    assert not at.exception and not any("unattested" in w.value for w in at.warning)
