"""Single sign-on (issue 17, SPEC §4): an OpenID Connect identity mapped to an account.

End to end: a real OpenID Connect provider (PyPI `oidc-provider-mock`) this test starts on
127.0.0.1, a real Streamlit server whose secrets' `[auth]` section points at it, and
Debian's Chromium driven by Playwright: sign in at the provider, acknowledge and approve a
review run on the Sign-off page, then read the audit chain. The mapping rules themselves
(verified email, binding, four-eyes across aliases, refusals) and the CLI's refusal of an
SSO account run on both store backends without a browser. Screenshots go to
$TERMGATE_SCREENSHOTS (else a temporary folder) as sso-*.png."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate.governance import signoff as so
from termgate.governance import sso
from termgate import store
from termgate.cli import main
from termgate.identity import oidc_alias

from conftest import golden_row, write_jsonl
from dashboard_server import ARGS, CHROMIUM, Dashboard, provider_user, start_provider

ISSUER = "https://idp.example.com"  # the issuer of the tests without a provider

try:
    import oidc_provider_mock
except ImportError:  # the dev extra installs it; CI always has it
    oidc_provider_mock = None

# CI installs Chromium (.ci/run) and the dev extras: only a developer machine without them skips.
_without_browser = pytest.mark.skipif(
    (not Path(CHROMIUM).exists() or oidc_provider_mock is None) and not os.environ.get("CI"),
    reason="needs Debian chromium (apt-get install chromium) and oidc-provider-mock (pip install -e '.[dev]')")


def needs_browser(test):
    """A test in the browser tier, skipped on a machine without Chromium or the provider."""
    return pytest.mark.browser(_without_browser(test))


def claims(sub="alice-sub", email="alice@example.com", verified=True, iss=ISSUER) -> dict:
    return {"iss": iss, "sub": sub, "email": email, "email_verified": verified, "aud": "termgate"}


def _review_store(db: str, folder: Path, author: str = "carol") -> str:
    """alice: an SSO approver for medical (alias alice@example.com, and her Git login
    alice-gh); carol: a local approver; a medical run (gate review) by `author`."""
    runner = CliRunner()
    added = runner.invoke(main, ["users", "add", "alice", "--role", "approver", "--domains", "medical", "--sso",
                                 "--alias", "alice@example.com", "--alias", "alice-gh", "--db", db])
    assert added.exit_code == 0 and "single sign-on" in added.output, added.output
    so.add_user(db, "carol", "approver", "carol-password", aliases=["carol@example.com"])
    golden = write_jsonl(folder / "golden.jsonl", [  # macro precision 0.9, recall 1: review for drift alone
        golden_row("m1", "heart attack", ["mi", "myocardial infarction", "cardiac arrest", "chest pain"],
                   domain="medical", forbidden=["panic attack"]),
        golden_row("m2", "stroke", ["cva", "cerebrovascular accident"], domain="medical")])
    generated = write_jsonl(folder / "gen.jsonl", [
        {"query_id": "m1", "terms": ["mi", "myocardial infarction", "cardiac arrest", "chest pain", "panic attack"]},
        {"query_id": "m2", "terms": ["cva", "cerebrovascular accident"]}])
    result = runner.invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(generated), "--db", db,
                                  "--drift-judge", "none", "--author", author, "-q"])
    assert result.exit_code == 3, result.output
    return store.list_runs(db)["run_id"].iloc[0]


def binds(db) -> list[dict]:
    return [r for r in store.audit_records(db) if r["kind"] == sso.BIND_KIND]


# ---------------------------------------------------------------- the rules, on both backends


@pytest.mark.slow
def test_first_sign_in_binds_the_identity_in_the_chain(backend, tmp_path):
    run_id = _review_store(backend, tmp_path)
    account = sso.sign_in(backend, claims(email="Alice@Example.COM"))  # the email in canonical form
    alias = oidc_alias(ISSUER, "alice-sub")
    assert account.name == "alice" and account.sso and alias in account.aliases
    assert account.via.claims() == {"iss": ISSUER, "sub": "alice-sub"}
    [bind] = binds(backend)
    assert bind["actor"] == "alice" and bind["payload"]["alias"] == alias
    assert bind["payload"]["sso"] == {"iss": ISSUER, "sub": "alice-sub", "email": "alice@example.com"}
    sso.sign_in(backend, claims())  # bound already: nothing more is recorded
    assert len(binds(backend)) == 1
    assert so.verify_chain(backend).ok  # the account table matches the chained state
    record = so.decide_as(backend, run_id, account, "approve", "reviewed via SSO", ack_all=True)
    assert record["payload"]["sso"] == {"iss": ISSUER, "sub": "alice-sub"}
    assert so.release_state(backend, run_id).exit_code == 0


def test_four_eyes_checks_every_alias_of_the_sso_account(backend, tmp_path):
    # CI recorded the author under alice's Git login; she signs in with the provider
    run_id = _review_store(backend, tmp_path, author="alice-gh")
    account = sso.sign_in(backend, claims())
    run = store.get_run(backend, run_id)
    assert any("four-eyes" in b for b in so.approval_blockers(backend, run, account))
    with pytest.raises(so.SignoffRefused, match="four-eyes"):
        so.decide_as(backend, run_id, account, "approve", "mine", ack_all=True)
    # and a run authored under the bound identity itself is hers too
    assert so.is_author({"author": oidc_alias(ISSUER, "alice-sub")}, account)


@pytest.mark.parametrize("given, message", [
    (claims(verified=False), "has not verified the email"),
    (claims(verified=None), "has not verified the email"),
    (claims(verified="false"), "has not verified the email"),
    ({k: v for k, v in claims().items() if k != "email"}, "sent no email"),
    (claims(email="nobody@example.com"), "no termgate account has the email 'nobody@example.com'"),
    (claims(email="al ice@example.com"), "not allowed"),
    ({k: v for k, v in claims().items() if k != "sub"}, "no issuer .iss. or subject .sub."),
], ids=["unverified", "verified-missing", "verified-false-string", "no-email", "unknown-email", "bad-email",
        "no-subject"])
def test_refused_identities_bind_nothing(backend, tmp_path, given, message):
    _review_store(backend, tmp_path)
    with pytest.raises(so.SignoffRefused, match=message):
        sso.sign_in(backend, given)
    assert binds(backend) == []


def test_a_bound_account_refuses_another_subject_and_a_subject_keeps_its_account(backend, tmp_path):
    _review_store(backend, tmp_path)
    sso.sign_in(backend, claims())
    # the email handed to someone else at the same provider: not alice's account
    with pytest.raises(so.SignoffRefused, match="bound to another subject"):
        sso.sign_in(backend, claims(sub="new-hire"))
    # alice's bound identity presenting carol's email: refused, not carol's account
    with pytest.raises(so.SignoffRefused, match="is bound to account 'alice'"):
        sso.sign_in(backend, claims(email="carol@example.com"))
    so.disable_user(backend, "alice")
    with pytest.raises(so.SignoffRefused, match="disabled"):
        sso.sign_in(backend, claims())
    assert len(binds(backend)) == 1


@pytest.mark.slow
def test_sso_accounts_have_no_password(backend, tmp_path):
    run_id = _review_store(backend, tmp_path)
    env = {"TERMGATE_PASSWORD": "any-password-at-all"}
    runner = CliRunner()
    for password_env in (env, {}):  # refused before any password is asked (no terminal here)
        result = runner.invoke(main, ["signoff", run_id, "--approve", "--reviewer", "alice", "--comment", "ok",
                                      "--ack-all", "--db", backend], env=password_env)
        assert result.exit_code == 4, result.output
        assert "signs in through the identity provider" in result.stderr and "dashboard" in result.stderr
    with pytest.raises(so.SignoffRefused, match="signs in through the identity provider"):
        so.authenticate(backend, "alice", "any-password-at-all")  # the dashboard's password form
    assert store.get_user(backend, "alice")["password_hash"] == "sso:"
    passwd = runner.invoke(main, ["users", "passwd", "alice", "--db", backend], env=env)
    assert passwd.exit_code == 2 and "no password" in passwd.stderr
    listing = runner.invoke(main, ["users", "list", "--db", backend]).output.splitlines()
    assert "sign-in" in listing[0]
    assert " sso " in next(line for line in listing if line.startswith("alice"))
    assert " password " in next(line for line in listing if line.startswith("carol"))
    assert [r for r in store.audit_records(backend) if r["kind"] == "decision"] == []


@pytest.mark.slow
def test_store_copy_keeps_sso_accounts_and_bindings(backend, tmp_path):
    _review_store(backend, tmp_path)
    sso.sign_in(backend, claims())
    copy = str(tmp_path / "copy.duckdb")
    result = CliRunner().invoke(main, ["store", "copy", "--from", backend, "--to", copy])
    assert result.exit_code == 0, result.output
    assert so.verify_chain(copy).ok
    assert sso.sign_in(copy, claims()).name == "alice" and len(binds(copy)) == 1
    with pytest.raises(so.SignoffRefused, match="identity provider"):
        so.authenticate(copy, "alice", "any-password-at-all")


def test_the_team_stores_dashboard_role_binds_only_through_its_door(pg, pgdb, tmp_path):
    """PostgreSQL's least-privilege dashboard role binds a first sign-in's identity through
    termgate_bind_sso and nothing else: the chain verifies, the decision carries the
    identity; the function refuses what a rogue dashboard process would try (a non-OIDC
    alias, a second subject at the same issuer, an identity bound already, other columns)."""
    import psycopg

    name = pgdb.rsplit("/", 1)[1]
    run_id = _review_store(pgdb, tmp_path)
    roles = CliRunner().invoke(main, ["store", "roles", "--ci", f"ci_{name}", "--dashboard", f"dash_{name}"])
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(roles.output)
    dash_url = pg.url(name, user=f"dash_{name}")
    account = sso.sign_in(dash_url, claims())
    assert oidc_alias(ISSUER, "alice-sub") in store.get_user(pgdb, "alice")["aliases"] and len(binds(pgdb)) == 1
    record = so.decide_as(dash_url, run_id, account, "approve", "reviewed", ack_all=True)
    assert record["payload"]["sso"] == {"iss": ISSUER, "sub": "alice-sub"} and so.verify_chain(pgdb).ok

    def bind(actor: str, alias: str, prefix: str, aliases: list[str]) -> None:
        with psycopg.connect(dash_url) as conn:
            seq, head = conn.execute("SELECT seq, record_hash FROM audit_head").fetchone()
            conn.execute("SELECT termgate_bind_sso(%s, %s, 'now', %s, '{}', %s, '{}', %s, %s, %s)",
                         [seq + 1, head, actor, "f" * 64, alias, prefix, aliases])

    old = store.get_user(pgdb, "carol")["aliases"] or []
    prefix = oidc_alias(ISSUER, "")
    with pytest.raises(psycopg.errors.RaiseException, match="not an identity provider alias"):
        bind("carol", "alice", "alice", [*old, "alice"])  # another account's name as carol's alias
    with pytest.raises(psycopg.errors.RaiseException, match="bound already"):
        bind("carol", oidc_alias(ISSUER, "alice-sub"), prefix, [*old, oidc_alias(ISSUER, "alice-sub")])
    alice = store.get_user(pgdb, "alice")["aliases"]
    with pytest.raises(psycopg.errors.RaiseException, match="another subject"):
        bind("alice", oidc_alias(ISSUER, "mallory"), prefix, [*alice, oidc_alias(ISSUER, "mallory")])
    with pytest.raises(psycopg.errors.RaiseException, match="the old ones and"):
        bind("carol", oidc_alias(ISSUER, "carol-sub"), prefix, [oidc_alias(ISSUER, "carol-sub"), "alice"])
    with pytest.raises(psycopg.errors.InsufficientPrivilege), psycopg.connect(dash_url) as conn:
        conn.execute("UPDATE users SET role = 'admin' WHERE name = 'carol'")
    assert store.get_user(pgdb, "carol")["aliases"] == old and so.verify_chain(pgdb).ok


# ---------------------------------------------------------------- end to end in a real browser


@pytest.fixture
def provider():
    """oidc-provider-mock on 127.0.0.1 (any client id and secret; users set by its API)."""
    url, stop = start_provider()
    yield url
    stop()


@pytest.fixture
def dashboard(provider, tmp_path):
    """A Streamlit server on a store with alice (SSO) and carol's review run, its secrets'
    [auth] pointing at the provider. Yields (url, db, run_id)."""
    db = str(tmp_path / "store.duckdb")
    run_id = _review_store(db, tmp_path)
    server = Dashboard(db, tmp_path, provider).start()
    yield server.url, db, run_id
    server.stop()


def shots() -> Path:
    folder = Path(os.environ.get("TERMGATE_SCREENSHOTS") or tempfile.mkdtemp(prefix="termgate-screens-"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def sign_in_at_provider(page, url: str, provider: str, sub: str, folder: Path | None = None,
                        start: str = "") -> None:
    """As a person does, on the page at `start` (a path under `url`): the sidebar's button,
    the provider's page, its Authorize button."""
    page.goto(url + start)
    button = page.get_by_role("button", name="Sign in with single sign-on")
    button.wait_for(timeout=60_000)
    if folder is not None:
        page.screenshot(path=str(folder / "sso-start.png"))
    button.click()
    page.wait_for_url(f"{provider}/oauth2/authorize*", timeout=30_000)
    page.get_by_placeholder("sub").fill(sub)
    if folder is not None:
        page.screenshot(path=str(folder / "sso-provider.png"))
    page.get_by_role("button", name="Authorize").click()
    page.wait_for_url(f"{url}/*", timeout=30_000)


@needs_browser
def test_sign_in_through_the_provider_and_approve_in_a_real_browser(provider, dashboard):
    from playwright.sync_api import expect, sync_playwright

    url, db, run_id = dashboard
    provider_user(provider, "alice-sub", {"email": "alice@example.com", "email_verified": True, "name": "Alice"})
    folder = shots()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        # signed in from the Sign-off page, the reviewer is back on it (the provider returns to the root)
        sign_in_at_provider(page, url, provider, "alice-sub", folder, start=f"/signoff?run={run_id}")
        expect(page.get_by_text("Signed in as alice")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("(approver; medical) through single sign-on as alice@")).to_be_visible()
        expect(page).to_have_url(f"{url}/signoff?run={run_id}", timeout=30_000)
        page.screenshot(path=str(folder / "sso-signin.png"))

        # the drift term, and the golden revision nobody approved (a high-risk run; issue 19 item 3)
        expect(page.get_by_text("2 flagged items", exact=True)).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Signed in as alice")).to_be_visible()
        for i in range(2):
            page.locator('[data-testid="stCheckbox"] label').nth(i).click()
            expect(page.locator('[data-testid="stCheckbox"] input').nth(i)).to_be_checked(timeout=30_000)
        comment = page.get_by_label("Comment (required)")
        comment.fill("drift term reviewed: panic attack is forbidden and flagged")
        comment.press("Control+Enter")  # commit the text area, as a click elsewhere does
        approve = page.get_by_role("button", name="Approve")
        expect(approve).to_be_enabled(timeout=30_000)
        approve.click()
        expect(page.get_by_text("Recorded approve")).to_be_visible(timeout=30_000)
        page.screenshot(path=str(folder / "sso-approved.png"), full_page=True)
        browser.close()

    issuer = provider  # oidc-provider-mock's issuer is the URL it is reached at
    [decision] = [r for r in store.audit_records(db) if r["kind"] == "decision"]
    assert decision["actor"] == "alice" and decision["decision"] == "approve"
    assert decision["payload"]["sso"] == {"iss": issuer, "sub": "alice-sub"}
    [bind] = binds(db)
    assert bind["payload"]["sso"] == {"iss": issuer, "sub": "alice-sub", "email": "alice@example.com"}
    assert oidc_alias(issuer, "alice-sub") in store.get_user(db, "alice")["aliases"]
    assert so.verify_chain(db).ok and so.release_state(db, run_id).exit_code == 0
    assert (folder / "sso-signin.png").stat().st_size > 10_000


@needs_browser
def test_an_unverified_email_is_refused_in_a_real_browser(provider, dashboard):
    from playwright.sync_api import expect, sync_playwright

    url, db, _ = dashboard
    provider_user(provider, "mallory-sub", {"email": "alice@example.com", "email_verified": False})
    folder = shots()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        sign_in_at_provider(page, url, provider, "mallory-sub")
        expect(page.get_by_text("has not verified the email")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("Signed in as")).to_have_count(0)
        page.screenshot(path=str(folder / "sso-unverified.png"))
        # signing out ends the provider's session and comes back to the sign-in button
        page.get_by_role("button", name="Sign out of single sign-on").click()
        page.wait_for_url(f"{provider}/oauth2/end_session*", timeout=30_000)
        page.get_by_role("button", name="End session").click()
        expect(page.get_by_role("button", name="Sign in with single sign-on")).to_be_visible(timeout=30_000)
        expect(page.get_by_text("has not verified the email")).to_have_count(0)
        browser.close()
    assert binds(db) == [] and all(not a.startswith("oidc+") for a in store.get_user(db, "alice")["aliases"])
