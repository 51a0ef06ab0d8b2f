"""Issue 33: with only a database credential no one can make a run releasable.

A signed store (trust root by admin ada; approver carol with a key sealed by her password;
the CI's key registered for service:ci; two medical review runs evaluated with
TERMGATE_CI_KEY, carol's approval on one of them) is attacked holding one credential at a
time: the file of a DuckDB store, the owner of a PostgreSQL store, and the CI and dashboard
roles of `termgate store roles`. Whatever the credential lets into the chain carries no
authority: the other run stays unreleasable, `gate` says so and `audit verify` names the
record (or the server refuses it, or the chain breaks). A store rewritten whole is refused
when its trust root is pinned, and warned about when it is not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from termgate import store
from termgate.cli import main
from termgate.clock import utc_now
from termgate.errors import TermgateError
from termgate.governance import signoff as so
from termgate.governance import trust
from termgate.signing import PrivateKey, Signer, signing_as, write_key_file
from termgate.store.postgres import is_postgres, roles_sql

from conftest import golden_row, write_jsonl

pytestmark = pytest.mark.slow

PW = "correct-horse-battery"
CI_ROLE, DASH_ROLE = "sec_signed_ci", "sec_signed_dash"


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env, catch_exceptions=False)


def _inputs(folder: Path) -> dict[str, Path]:
    rows = [golden_row("m1", "heart attack", ["mi", "myocardial infarction"], domain="medical"),
            golden_row("m2", "stroke", ["cva", "brain attack"], domain="medical")]
    return {"golden": write_jsonl(folder / "golden.jsonl", rows),
            "other_golden": write_jsonl(folder / "golden-other.jsonl", rows[:1]),
            "other_generated": write_jsonl(folder / "gen-other.jsonl",
                                           [{"query_id": "m1", "terms": ["mi", "myocardial infarction"]}]),
            "generated": write_jsonl(folder / "gen.jsonl", [{"query_id": "m1", "terms": ["mi", "myocardial infarction"]},
                                                            {"query_id": "m2", "terms": ["cva", "brain attack"]}])}


def evaluate(db, golden, generated, env=None):
    return cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
               "--author", "erin", "--json", Path(golden).parent / "r.json", "-q", env=env)


def _role_url(db: str, role: str) -> str:
    head, _, tail = db.rpartition("@")
    return head.rsplit("//", 1)[0] + f"//{role}@{tail}"


def _grant_roles(db: str) -> None:
    import psycopg

    with psycopg.connect(db, autocommit=True) as owner:
        for role in (CI_ROLE, DASH_ROLE):  # roles belong to the server: made once, granted per database
            owner.execute(f"DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN "
                          f"CREATE ROLE {role} LOGIN; END IF; END $$")
        owner.execute(roles_sql(CI_ROLE, DASH_ROLE, grants_only=True))


def _signed_store(db: str, folder: Path) -> dict:
    """The store every attack starts from (see the module); on PostgreSQL the runs are stored
    by the CI role and carol decides through the dashboard role, as a deployment would."""
    files = _inputs(folder)
    ada = so.add_user(db, "ada", "admin", PW)
    root = trust.init_trust(db, ada, PW)
    admin = trust.personal_signer(db, "ada", PW)
    with signing_as(admin):
        so.add_user(db, "carol", "approver", PW, domains="medical")
        so.add_user(db, "erin", "engineer", PW)
    ci_key = PrivateKey.generate()
    write_key_file(folder / "ci.key", ci_key)
    trust.register_key(db, admin, "service:ci", ci_key.public)
    pg = is_postgres(db)
    if pg:
        _grant_roles(db)
    ci_db, dash_db = (_role_url(db, CI_ROLE), _role_url(db, DASH_ROLE)) if pg else (db, db)
    env = {"TERMGATE_CI_KEY": str(folder / "ci.key"), "GITHUB_ACTOR": "octo-ci"}
    runs = {}
    for name, golden, generated in (("other", files["other_golden"], files["other_generated"]),
                                    ("target", files["golden"], files["generated"])):
        result = evaluate(ci_db, golden, generated, env=env)
        assert result.exit_code == 3, result.output  # medical is high-risk: review, awaiting sign-off
        runs[name] = json.loads((folder / "r.json").read_text())["evaluation_id"]
    with signing_as(trust.personal_signer(db, "carol", PW)):
        so.decide_as(dash_db, runs["other"], so.authenticate(dash_db, "carol", PW), "approve", "checked",
                     ack_all=True)
    return {"root": root, "runs": runs, "folder": str(folder), "ci_key": str(folder / "ci.key")}


def clean_environment(tmp_path, monkeypatch) -> None:
    """A working folder with an empty config, and none of the signing variables set."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TERMGATE_CONFIG", str(tmp_path / "none.toml"))
    (tmp_path / "none.toml").write_text("", encoding="utf-8")
    for name in ("TERMGATE_CI_KEY", "TERMGATE_TRUST_ROOT", "TERMGATE_KEY_FILE", "GITHUB_ACTOR"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def signed(request, backend, store_templates, tmp_path, monkeypatch):
    clean_environment(tmp_path, monkeypatch)
    db, made = store_templates.copy(request, backend, "signed-33", _signed_store, tmp_path)
    return db, made


def credential_url(db: str, credential: str) -> str:
    return {"dashboard": lambda: _role_url(db, DASH_ROLE), "ci": lambda: _role_url(db, CI_ROLE)}.get(
        credential, lambda: db)()


def gate(db, run_id, *extra, env=None):
    return cli("gate", run_id, "--db", db, *extra, env=env)


def assert_not_releasable(db, made, run_id=None):
    run_id = run_id or made["runs"]["target"]
    for pin in ((), ("--trust-root", made["root"])):
        result = gate(db, run_id, *pin)
        assert result.exit_code != 0, (pin, result.output)
    return result


def assert_named(db, seq: int, why: str):
    """`audit verify` and `gate` name the record and why it carries no authority."""
    verify = cli("audit", "verify", "--db", db)
    assert verify.exit_code == 0, verify.output  # forged, not broken: it simply carries nothing
    line = next((x for x in verify.output.splitlines() if x.startswith(f"record {seq} (")), None)
    assert line is not None and why in line and "carries no authority" in line, verify.output
    assert any(x.startswith(f"record {seq} (") for x in so.verify_chain(db).failing)


def append(db, kind: str, actor: str, *, signer=None, run_id=None, content_hash=None, decision=None,
           payload=None, comment="lgtm"):
    """Append a record as the credential's holder would: the stored record, or None when the
    server refuses it (a role without that door)."""
    record = {"created_at": utc_now(), "kind": kind, "actor": actor, "run_id": run_id, "content_hash": content_hash,
              "decision": decision, "comment": comment, "payload": dict(payload or {})}
    if signer is not None:
        record["signer"] = signer
    try:
        return store.append_audit(db, record)
    except TermgateError as exc:
        assert is_postgres(db), exc  # a DuckDB file takes anything its holder writes
        return None


def decision_for(db, run_id: str) -> tuple[dict, str]:
    """(the payload a real approval carries, the run's content hash)."""
    run = store.get_run(db, run_id)
    return {"role": "approver", "gate": "review", "domains": ["medical"], "acknowledged": []}, run["content_hash"]


ATTACKERS = [pytest.param((kind, credential), id=f"{kind}-{credential}",
                          marks=[pytest.mark.postgres] if kind == "postgresql" else [])
             for kind, credential in (("duckdb", "file"), ("postgresql", "owner"), ("postgresql", "dashboard"),
                                      ("postgresql", "ci"))]


@pytest.fixture(params=ATTACKERS)
def attack(request, tmp_path, monkeypatch, store_templates):
    """(the store as its honest readers see it, what the fixture made, the attacker's URL
    or file, the credential's name)."""
    kind, credential = request.param
    like = str(tmp_path / "x.duckdb") if kind == "duckdb" else "postgresql://template"
    clean_environment(tmp_path, monkeypatch)
    db, made = store_templates.copy(request, like, "signed-33", _signed_store, tmp_path)
    return db, made, credential_url(db, credential), credential


# ---------------------------------------------------------------- the legitimate flow


def test_the_ci_key_signs_the_run_and_carols_own_key_releases_it(signed):
    db, made = signed
    target = made["runs"]["target"]
    header = next(r for r in store.audit_records(db) if r["kind"] == "run" and r["run_id"] == target)
    signature = header["payload"]["signature"]
    assert signature["service"] == "ci" and signature["for"] == {"actor": "octo-ci"}
    assert gate(db, made["runs"]["other"], "--trust-root", made["root"]).exit_code == 0  # approved in the fixture
    awaiting = gate(db, target, "--trust-root", made["root"])
    assert awaiting.exit_code == 3 and "medical: 0 of 1 approvals" in awaiting.output
    dash = _role_url(db, DASH_ROLE) if is_postgres(db) else db
    with signing_as(trust.personal_signer(db, "carol", PW)):
        so.decide_as(dash, target, so.authenticate(dash, "carol", PW), "approve", "checked", ack_all=True)
    released = gate(db, target, "--trust-root", made["root"])
    assert released.exit_code == 0, released.output
    assert f"signed records from trust root {made['root']}" in released.output
    verify = cli("audit", "verify", "--db", db)
    assert verify.exit_code == 0 and "carries no authority" not in verify.output, verify.output


def test_gate_names_the_pin_a_store_is_held_to(signed, monkeypatch, tmp_path):
    db, made = signed
    target, other = made["runs"]["target"], made["runs"]["other"]
    unpinned = gate(db, other)
    assert unpinned.exit_code == 0 and "warning: no trust root is pinned" in unpinned.output
    stranger = PrivateKey.generate().fingerprint
    for pinned in (lambda: gate(db, other, "--trust-root", stranger),
                   lambda: gate(db, other, env={"TERMGATE_TRUST_ROOT": stranger})):
        result = pinned()
        assert result.exit_code == 1 and f"but {stranger} is pinned" in result.output, result.output
        assert f"its trust root is {made['root']}" in result.output
    (tmp_path / "pinned.toml").write_text(f'[trust]\nroot = "{stranger}"\n', encoding="utf-8")
    config = gate(db, other, env={"TERMGATE_CONFIG": str(tmp_path / "pinned.toml")})
    assert config.exit_code == 1 and f"but {stranger} is pinned" in config.output
    right = gate(db, other, "--wait", "--timeout", "1", "--interval", "1", "--trust-root", made["root"])
    assert right.exit_code == 0 and "warning: no trust root is pinned" not in right.output, right.output
    waited = gate(db, target, "--wait", "--timeout", "1", "--interval", "1", "--trust-root", stranger)
    assert waited.exit_code == 1 and f"but {stranger} is pinned" in waited.output  # not a wait on the wrong store
    bad = gate(db, other, "--trust-root", "ed25519:short")
    assert bad.exit_code == 2 and "--trust-root: 'ed25519:short' is not a key fingerprint" in bad.output


def test_a_bad_ci_key_is_one_line_and_exit_2_before_anything_is_stored(signed, tmp_path):
    db, made = signed
    files = _inputs(tmp_path)
    stranger = PrivateKey.generate()
    write_key_file(tmp_path / "stranger.key", stranger)
    (tmp_path / "garbage.key").write_text("not a key\n", encoding="utf-8")
    before = (len(store.list_runs(db)), len(store.audit_records(db)))
    for value, says in ((str(tmp_path / "garbage.key"), "garbage.key: not a termgate key file"),
                        ("{\"kind\": \"termgate-ed25519-key\"}", "TERMGATE_CI_KEY: not a termgate key file"),
                        (str(tmp_path / "stranger.key"), f"TERMGATE_CI_KEY: key {stranger.fingerprint} is not the "
                                                          "store's CI key")):
        for command in ("evaluate", "harness"):
            args = (["--generated", files["generated"]] if command == "evaluate"
                    else ["--callable", "expand_fake:expand"])
            (tmp_path / "expand_fake.py").write_text("def expand(query, context):\n    return ['mi']\n")
            result = cli(command, "--golden", files["golden"], *args, "--db", db, "--drift-judge", "none",
                         "--author", "erin", "-q", env={"TERMGATE_CI_KEY": value})
            assert result.exit_code == 2, (command, result.output)
            lines = [x for x in result.output.splitlines() if x.strip()]
            assert len(lines) == 1 and says in lines[0] and "Traceback" not in result.output, (command, lines)
            assert '"private"' not in result.output
    assert (len(store.list_runs(db)), len(store.audit_records(db))) == before


# ---------------------------------------------------------------- decisions forged with a credential


def test_an_unsigned_decision_as_carol_carries_no_authority(attack):
    db, made, url, credential = attack
    target = made["runs"]["target"]
    try:
        record = so.decide_as(url, target, so.current_account(db, "carol"), "approve", "lgtm", ack_all=True)
    except TermgateError as exc:  # the CI role has no door for decisions
        assert credential == "ci" and "may not" in str(exc), exc
        record = None
    assert_not_releasable(db, made)
    if record is not None:
        assert_named(db, record["seq"], "unsigned")


def test_a_decision_signed_by_a_fresh_key_carries_no_authority(attack):
    db, made, url, credential = attack
    payload, content = decision_for(db, made["runs"]["target"])
    fresh = PrivateKey.generate()
    for signer, why in ((Signer(fresh, holder="carol"), "a key the chain never registered"),
                        (Signer(fresh, service="dashboard", identity={"account": "carol"}),
                         "a key the chain never registered")):
        record = append(url, "decision", "carol", signer=signer, run_id=made["runs"]["target"],
                        content_hash=content, decision="approve", payload=payload)
        assert (record is None) == (credential == "ci")
        assert_not_releasable(db, made)
        if record is not None:
            assert_named(db, record["seq"], why)


def test_a_signature_copied_from_carols_real_decision_does_not_verify(attack):
    db, made, url, credential = attack
    real = next(r for r in store.audit_records(db) if r["kind"] == "decision" and r["actor"] == "carol")
    assert real["run_id"] == made["runs"]["other"]
    payload, content = decision_for(db, made["runs"]["target"])
    payload = dict(real["payload"], signature=real["payload"]["signature"])  # her very payload and signature
    payload.pop("extends", None)
    record = append(url, "decision", "carol", run_id=made["runs"]["target"], content_hash=content,
                    decision="approve", payload=payload, comment=real["comment"])
    assert (record is None) == (credential == "ci")
    assert_not_releasable(db, made)
    if record is not None:
        assert_named(db, record["seq"], "its signature does not verify")


def test_a_key_of_ones_own_registered_for_carol_carries_no_authority(attack):
    db, made, url, credential = attack
    mine = PrivateKey.generate()
    payload = {"holder": "carol", "public": mine.public, "fingerprint": mine.fingerprint}
    for signer, why in ((None, "unsigned"), (Signer(mine, holder="ada"), "a key the chain never registered")):
        record = append(url, "key_register", "ada", signer=signer, payload=payload)
        if credential in ("ci", "dashboard"):
            assert record is None  # no door for key records: the owner's alone
            continue
        assert_named(db, record["seq"], why)
    decision, content = decision_for(db, made["runs"]["target"])
    record = append(url, "decision", "carol", signer=Signer(mine, holder="carol"), run_id=made["runs"]["target"],
                    content_hash=content, decision="approve", payload=decision)
    assert_not_releasable(db, made)
    if record is not None:
        assert_named(db, record["seq"], "a key the chain never registered")


def test_a_second_trust_root_carries_no_authority(attack):
    db, made, url, credential = attack
    mine = PrivateKey.generate()
    record = append(url, "trust_root", "ada", signer=Signer(mine, holder="ada"), payload={"key": {"public": mine.public}})
    if credential in ("ci", "dashboard"):
        assert record is None
        return
    assert_named(db, record["seq"], "a second trust root")
    decision, content = decision_for(db, made["runs"]["target"])
    forged = append(url, "decision", "ada", signer=Signer(mine, holder="ada"), run_id=made["runs"]["target"],
                    content_hash=content, decision="approve", payload=decision)
    assert_named(db, forged["seq"], "a key the chain never registered")
    assert_not_releasable(db, made)
    pinned = gate(db, made["runs"]["target"], "--trust-root", made["root"])
    assert f"trust root {made['root']}" in pinned.output  # the store's root is still the first one


def test_making_oneself_an_approver_carries_no_authority(attack):
    db, made, url, credential = attack
    mine = PrivateKey.generate()
    account = {"name": "mallory", "role": "approver", "domains": [], "aliases": [], "password_hash": "x",
               "disabled": False, "created_at": utc_now()}
    try:
        added = store.write_account(url, "mallory", account, {"created_at": utc_now(), "kind": "user_add",
                                                              "actor": "ada", "payload": {"key": {"public": mine.public}}},
                                    new=True)
        raised = store.write_account(url, "erin", {"role": "approver"}, {
            "created_at": utc_now(), "kind": "user_set_role", "actor": "ada", "payload": {}})
    except TermgateError as exc:
        assert credential in ("ci", "dashboard") and "accounts stay with the store's owner" in str(exc), exc
        assert_not_releasable(db, made)
        return
    assert_named(db, added["seq"], "unsigned")
    assert_named(db, raised["seq"], "unsigned")
    decision, content = decision_for(db, made["runs"]["target"])
    for actor in ("mallory", "erin"):
        forged = append(url, "decision", actor, signer=Signer(mine, holder=actor), run_id=made["runs"]["target"],
                        content_hash=content, decision="approve", payload=decision)
        if forged is not None:  # the server may refuse a decision by an account it does not know as approver
            assert_named(db, forged["seq"], "a key the chain never registered")
    assert_not_releasable(db, made)


def test_a_second_adoption_breaks_the_chain(attack):
    db, made, url, credential = attack
    record = append(url, "adopt", "ada", payload={"accounts": [{"name": "mallory", "role": "admin", "domains": [],
                                                                "aliases": [], "disabled": False, "password": "x"}]})
    if record is None:
        assert credential in ("ci", "dashboard")
        return
    result = assert_not_releasable(db, made)
    assert "a second adoption" in result.output
    assert cli("audit", "verify", "--db", db).exit_code == 1


# ---------------------------------------------------------------- runs the CI key did not sign


def test_a_run_stored_without_the_ci_key_is_unattested(attack, tmp_path):
    db, made, url, credential = attack
    easy = write_jsonl(tmp_path / "golden-easy.jsonl", [golden_row("e1", "sofa", ["couch"], domain="furniture")])
    generated = write_jsonl(tmp_path / "gen-easy.jsonl", [{"query_id": "e1", "terms": ["couch"]}])
    result = evaluate(url, easy, generated)  # a passing gate needs no sign-off: only the signature stands between
    if credential == "dashboard":
        assert result.exit_code == 2 and "may not" in result.output  # the dashboard stores no runs
        return
    assert result.exit_code == 1 and "unattested" in result.output, result.output
    run_id = json.loads((tmp_path / "r.json").read_text())["evaluation_id"]
    assert_not_releasable(db, made, run_id)
    header = next(r for r in store.audit_records(db) if r["kind"] == "run" and r["run_id"] == run_id)
    assert_named(db, header["seq"], "unsigned")
    # a key of one's own as the CI's: refused before anything is stored
    mine = PrivateKey.generate()
    write_key_file(tmp_path / "mine.key", mine)
    refused = evaluate(url, easy, generated, env={"TERMGATE_CI_KEY": str(tmp_path / "mine.key")})
    assert refused.exit_code == 2 and "is not the store's CI key" in refused.output


def test_a_header_signed_by_another_key_or_replaced_unsigned_is_unattested(attack):
    db, made, url, credential = attack
    target = made["runs"]["target"]
    header = next(r for r in store.audit_records(db) if r["kind"] == "run" and r["run_id"] == target)
    payload = {k: v for k, v in header["payload"].items() if k != "signature"}
    mine = PrivateKey.generate()
    for signer, why in ((None, "unsigned"), (Signer(mine, service="ci", identity={"actor": "octo-ci"}),
                                             "a key the chain never registered")):
        record = append(url, "run", header["actor"], signer=signer, run_id=target,
                        content_hash=header["content_hash"], payload=payload, comment=None)
        if record is None:  # the CI role's door takes one header per run; the dashboard has none
            assert credential in ("ci", "dashboard")
            continue
        result = assert_not_releasable(db, made)
        assert "unattested" in result.output and why in result.output, result.output
        assert_named(db, record["seq"], why)


# ---------------------------------------------------------------- a store rewritten whole


@pytest.mark.parametrize("own_root", [False, True], ids=["unsigned", "own-root"])
def test_a_store_rewritten_whole_is_refused_when_pinned_and_warned_about_when_not(request, backend, tmp_path,
                                                                                   monkeypatch, store_templates,
                                                                                   own_root):
    """The file's (or the database owner's) holder builds the store again from nothing:
    forged accounts with passwords they know, the same run, their own approval. Nothing in
    the store can tell; the pinned trust root does."""
    clean_environment(tmp_path, monkeypatch)
    _, made = store_templates.copy(request, backend, "signed-33", _signed_store, tmp_path)  # the team's store
    forged = str(tmp_path / "forged.duckdb")
    if is_postgres(backend):
        pg = request.getfixturevalue("pg")
        forged = pg.url(pg.create_database())
    files = _inputs(tmp_path)
    ada = so.add_user(forged, "ada", "admin", "mallorys-password")
    env = {}
    if own_root:
        trust.init_trust(forged, ada, "mallorys-password")
        admin = trust.personal_signer(forged, "ada", "mallorys-password")
        ci = PrivateKey.generate()
        write_key_file(tmp_path / "forged-ci.key", ci)
        trust.register_key(forged, admin, "service:ci", ci.public)
        env = {"TERMGATE_CI_KEY": str(tmp_path / "forged-ci.key")}
        with signing_as(admin):
            so.add_user(forged, "carol", "approver", "mallorys-password", domains="medical")
    else:
        so.add_user(forged, "carol", "approver", "mallorys-password", domains="medical")
    assert evaluate(forged, files["golden"], files["generated"], env=env).exit_code == 3
    run_id = json.loads((tmp_path / "r.json").read_text())["evaluation_id"]
    carol = so.authenticate(forged, "carol", "mallorys-password")
    if own_root:
        with signing_as(trust.personal_signer(forged, "carol", "mallorys-password")):
            so.decide_as(forged, run_id, carol, "approve", "lgtm", ack_all=True)
    else:
        so.decide_as(forged, run_id, carol, "approve", "lgtm", ack_all=True)
    unpinned = gate(forged, run_id)
    assert unpinned.exit_code == 0  # nothing inside a store rewritten whole can tell…
    warning = ("warning: no trust root is pinned" if own_root
               else "signatures: none — the store has no trust root, so nothing in it is attested")
    assert warning in unpinned.output, unpinned.output  # …so the output says what was not checked
    for pinned in (gate(forged, run_id, "--trust-root", made["root"]),
                   gate(forged, run_id, env={"TERMGATE_TRUST_ROOT": made["root"]})):
        assert pinned.exit_code == 1, pinned.output
        assert f"the store is not the one pinned" in pinned.output and f"but {made['root']} is pinned" in pinned.output
    verify = cli("audit", "verify", "--db", forged, env={"TERMGATE_TRUST_ROOT": made["root"]})
    assert verify.exit_code == 1 and made["root"] in verify.output


# ---------------------------------------------------------------- store copy keeps every signature


@pytest.mark.postgres
def test_store_copy_keeps_the_trust_root_and_the_runs_attested_both_ways(request, pg, tmp_path, monkeypatch,
                                                                          store_templates):
    """A signed DuckDB store → an empty PostgreSQL database → a new DuckDB file, and a signed
    PostgreSQL store → a new DuckDB file: each copy verifies under the same pin, its runs
    stay attested, carol's approval still counts, and a new one can be signed on it."""
    clean_environment(tmp_path, monkeypatch)
    duck, made = store_templates.copy(request, str(tmp_path / "x.duckdb"), "signed-33", _signed_store, tmp_path)
    team, team_made = store_templates.copy(request, "postgresql://template", "signed-33", _signed_store, tmp_path)
    to_pg, back = pg.url(pg.create_database()), tmp_path / "back.duckdb"
    hops = [(duck, to_pg, made), (to_pg, back, made), (team, tmp_path / "from-team.duckdb", team_made)]
    for source, target, facts in hops:
        copied = cli("store", "copy", "--from", source, "--to", target)
        assert copied.exit_code == 0, copied.output
        verify = cli("audit", "verify", "--db", target, "--expect-head",
                     cli("audit", "verify", "--db", source).output.split("audit head: ")[1].split()[0],
                     env={"TERMGATE_TRUST_ROOT": facts["root"]})
        assert verify.exit_code == 0 and "carries no authority" not in verify.output, verify.output
        assert f"signed records from trust root {facts['root']}" in verify.output
        runs = facts["runs"]
        assert gate(target, runs["other"], "--trust-root", facts["root"]).exit_code == 0  # carol's approval counts
        awaiting = gate(target, runs["target"], "--trust-root", facts["root"])
        assert awaiting.exit_code == 3 and "unattested" not in awaiting.output, awaiting.output
    with signing_as(trust.personal_signer(str(back), "carol", PW)):
        so.decide_as(str(back), made["runs"]["target"], so.authenticate(str(back), "carol", PW), "approve", "ok",
                     ack_all=True)
    assert gate(back, made["runs"]["target"], "--trust-root", made["root"]).exit_code == 0
