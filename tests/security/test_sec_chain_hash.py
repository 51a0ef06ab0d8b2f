"""Issue 32 item 5, kept as regression tests: record-hash version 2, which a PostgreSQL
server recomputes and checks (SPEC §4). No database role can append a record that breaks
the chain (the CI role's garbage run header once made every `gate` exit 1 for good); the
dashboard role cannot decide or record a verdict as an account that does not exist; the
doors of earlier schemas are gone; old chains keep verifying under version 1; and on a
store file, a version-2 record whose columns and canonical text disagree is named."""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from termgate import store
from termgate.clock import utc_now
from termgate.cli import main
from termgate.governance import signoff as so
from termgate.store import pg_runs
from termgate.store.records import GENESIS, HASH_VERSION, canonical_text, linked

from conftest import golden_row, write_jsonl

PASSWORD = "correct-horse-battery"
LEGACY = Path(__file__).parent.parent / "data" / "legacy-store-01043a4.duckdb.gz"
LEGACY_HEAD = "15:bdadb7395d273fd5ccb4b6cb07ec171d8cd8863bab137798532968c53a3544cc"
"""tests/test_legacy_stores.py: the chain the last evalcore wrote (hash version 1)."""
HEADER_ARGS = "%s, " * 8 + "%s"
"""termgate_append_run_header's nine arguments."""


def cli(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def _inputs(folder: Path, tag: str = "") -> tuple[Path, Path]:
    """A medical run (review: high-risk, nothing else wrong); `tag` makes its content new."""
    golden = write_jsonl(folder / f"golden{tag}.jsonl", [
        golden_row("m1", "heart attack" + tag, ["mi", "myocardial infarction"], domain="medical"),
        golden_row("m2", "stroke", ["cva"], domain="medical")])
    generated = write_jsonl(folder / f"gen{tag}.jsonl", [
        {"query_id": "m1", "terms": ["mi", "myocardial infarction"]}, {"query_id": "m2", "terms": ["cva"]}])
    return golden, generated


def _evaluate(db, folder: Path, tag: str = ""):
    golden, generated = _inputs(folder, tag)
    return cli("evaluate", "--golden", golden, "--generated", generated, "--db", db, "--drift-judge", "none",
               "--author", "ci-bot", "-q")


@pytest.fixture
def team(pg, pgdb, tmp_path, monkeypatch):
    """A team store with least-privilege roles, accounts the owner added (carol approver, erin
    engineer, vic viewer, dave approver disabled) and one run the CI role stored:
    (owner URL, CI URL, dashboard URL, run id)."""
    import psycopg

    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    name = pgdb.rsplit("/", 1)[1]
    assert cli("store", "init", "--db", pgdb).exit_code == 0
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(cli("store", "roles", "--ci", f"ci_{name}", "--dashboard", f"dash_{name}").output)
    for user, role in (("carol", "approver"), ("erin", "engineer"), ("vic", "viewer"), ("dave", "approver")):
        so.add_user(pgdb, user, role, PASSWORD, domains=["medical"] if role == "approver" else None)
    so.disable_user(pgdb, "dave")
    ci, dash = pg.url(name, user=f"ci_{name}"), pg.url(name, user=f"dash_{name}")
    assert _evaluate(ci, tmp_path).exit_code == 3
    return pgdb, ci, dash, store.list_runs(pgdb)["run_id"].iloc[0]


def _head(conn) -> tuple[int, str]:
    row = conn.execute("SELECT seq, record_hash FROM audit_head WHERE id = 1").fetchone()
    return (row[0] + 1, row[1]) if row else (1, GENESIS)


def _record(conn, kind="run", actor="ci-bot", run_id="r-x", content_hash="c-x", decision=None, payload=None):
    """A version-2 record linked onto the head, as an honest client computes it."""
    seq, prev = _head(conn)
    return linked({"created_at": "2026-12-03T00:00:00Z", "kind": kind, "actor": actor, "run_id": run_id,
                   "content_hash": content_hash, "decision": decision, "comment": "ok" if decision else None,
                   "payload": {"x": 1} if payload is None else payload}, seq, prev)


def _header_args(rec: dict, **sent) -> list:
    """termgate_append_run_header's arguments for `rec`, with some replaced by what is `sent`."""
    args = {"seq": rec["seq"], "prev_hash": rec["prev_hash"], "created_at": rec["created_at"], "actor": rec["actor"],
            "run_id": rec["run_id"], "content_hash": rec["content_hash"],
            "payload": json.dumps(rec["payload"], sort_keys=True), "record_hash": rec["record_hash"],
            "canonical": rec["canonical"]}
    return list({**args, **sent}.values())


def _rehashed(rec: dict, canonical: str) -> str:
    """The hash an attacker computes over a canonical text of its own choosing."""
    return hashlib.sha256((rec["prev_hash"] + canonical).encode()).hexdigest()


def _garbage(conn) -> dict[str, list]:
    """Run headers the CI role might send for run r-x, each refused: name -> arguments."""
    rec = _record(conn)
    other = dict(json.loads(rec["canonical"]), actor="carol")  # the text says carol, the column ci-bot
    other_text = json.dumps(other, sort_keys=True)
    deep = {"x": json.loads("[" * 40 + "]" * 40)}
    deep_rec = _record(conn, payload=deep)
    listed = linked(dict(rec, payload=[1, 2]), rec["seq"], rec["prev_hash"])
    return {
        "garbage hash": _header_args(rec, record_hash="f" * 64),
        "hash over another prev": _header_args(rec, record_hash=_rehashed(dict(rec, prev_hash="0" * 64), rec["canonical"])),
        "canonical names another actor": _header_args(rec, canonical=other_text, record_hash=_rehashed(rec, other_text)),
        "payload column differs": _header_args(rec, payload='{"x": 2}'),
        "canonical not JSON": _header_args(rec, canonical="not json", record_hash=_rehashed(rec, "not json")),
        "canonical missing a field": _header_args(
            rec, canonical=json.dumps({k: v for k, v in json.loads(rec["canonical"]).items() if k != "comment"}),
            record_hash=_rehashed(rec, json.dumps({k: v for k, v in json.loads(rec["canonical"]).items()
                                                   if k != "comment"}))),
        "seq as a number": _header_args(rec, canonical=json.dumps(dict(json.loads(rec["canonical"]), seq=rec["seq"])),
                                        record_hash=_rehashed(rec, json.dumps(dict(json.loads(rec["canonical"]),
                                                                                   seq=rec["seq"])))),
        "payload not an object": _header_args(listed, payload="[1, 2]"),
        "payload nested too deep": _header_args(deep_rec),
        # what PostgreSQL's jsonb reads but Python's json does not: a key given twice (jsonb
        # keeps the last), its first value nested past Python's recursion limit, or a number
        # past its 4300 digits
        "canonical repeats a key": _sent(rec, canonical='{"seq":' + "[" * 3000 + "]" * 3000 + "," + rec["canonical"][1:]),
        "payload repeats a key": _sent(rec, payload='{"x": ' + "[" * 3000 + "]" * 3000 + ', "x": 1}'),
        "payload holds a huge number": _sent(rec, payload='{"x": ' + "7" * 5000 + "}"),
    }


def _sent(rec: dict, canonical: str | None = None, payload: str | None = None) -> list:
    """Arguments whose payload text (stated in the canonical text too) or canonical text is
    the attacker's own, with a hash that matches it."""
    if canonical is None:
        canonical = json.dumps(dict(json.loads(rec["canonical"]), payload=payload), sort_keys=True,
                               separators=(",", ":"))
    sent = {"canonical": canonical, "record_hash": _rehashed(rec, canonical)}
    return _header_args(rec, **sent, **({"payload": payload} if payload is not None else {}))


@pytest.mark.slow
def test_the_ci_role_cannot_append_a_run_header_that_breaks_the_chain(team, tmp_path):
    import psycopg

    owner, ci, _, run_id = team
    with psycopg.connect(ci) as conn:  # the attacker's own SQL, in one transaction rolled back at the end
        conn.execute("INSERT INTO runs (run_id, created_at, content_hash, gate_decision) "
                     "VALUES ('r-x', 't', 'c-x', 'pass')")
        for why, args in _garbage(conn).items():
            with pytest.raises(psycopg.errors.CheckViolation, match="refused"), conn.transaction():
                conn.execute(f"SELECT termgate_append_run_header({HEADER_ARGS})", args)
            assert why
        honest = _record(conn)  # the door stays open to an honest record
        with conn.transaction():
            assert conn.execute(f"SELECT termgate_append_run_header({HEADER_ARGS})",
                                _header_args(honest)).fetchone() == (honest["seq"],)
        conn.rollback()
    # a CI client sending a garbage hash through termgate itself: refused whole, nothing stored
    before = len(store.list_runs(owner))
    real = pg_runs.linked
    for spoil in (lambda r: dict(r, record_hash="0" * 64), lambda r: dict(r, actor="carol")):
        pg_runs.linked = lambda *a, spoil=spoil: spoil(real(*a))
        try:
            refused = _evaluate(ci, tmp_path, "-2")
            assert refused.exit_code == 2 and "refused" in refused.output and "nothing was stored" in refused.output
        finally:
            pg_runs.linked = real
    assert len(store.list_runs(owner)) == before
    verify = cli("audit", "verify", "--db", ci)
    assert verify.exit_code == 0 and "audit chain intact: 6 records" in verify.output, verify.output
    assert cli("gate", run_id, "--db", ci).exit_code == 3  # awaiting sign-off, not a broken chain
    assert _evaluate(ci, tmp_path, "-3").exit_code == 3  # and the next run goes on the chain, version 2
    last = store.audit_records(owner)[-1]
    assert last["kind"] == "run" and last["hash_version"] == HASH_VERSION and last["canonical"] == canonical_text(last)


@pytest.mark.slow
def test_not_even_the_owner_appends_an_unchecked_record_or_edits_one(team):
    """The trigger checks the owner's direct appends too, and refuses UPDATE, DELETE and
    TRUNCATE (the owner could drop it: `audit verify` is what catches that, as on a file)."""
    import psycopg

    owner, *_ = team
    with psycopg.connect(owner) as conn:
        rec = _record(conn, kind="note", actor="admin", run_id=None, content_hash=None)
        values = [rec[c] if c != "payload" else json.dumps(rec["payload"], sort_keys=True) for c in store.AUDIT_COLUMNS]
        insert = f"INSERT INTO audit_log ({', '.join(store.AUDIT_COLUMNS)}) VALUES ({', '.join(['%s'] * 13)})"
        for bad in ({"record_hash": "f" * 64}, {"comment": "not what the text says"},
                    {"hash_version": None, "canonical": None}, {"hash_version": 1}):
            row = [bad.get(c, v) for c, v in zip(store.AUDIT_COLUMNS, values)]
            with pytest.raises(psycopg.errors.CheckViolation), conn.transaction():
                conn.execute(insert, row)
        for sql in ("UPDATE audit_log SET comment = 'edited'", "DELETE FROM audit_log WHERE seq = 1",
                    "TRUNCATE audit_log"):
            with pytest.raises(psycopg.errors.InsufficientPrivilege, match="append-only"), conn.transaction():
                conn.execute(sql)
    assert cli("audit", "verify", "--db", owner).exit_code == 0


@pytest.mark.slow
def test_what_the_server_accepts_audit_verify_accepts(team):
    """The server compares texts; `audit verify` must pass whatever it accepted, or an
    accepted record would break the chain again: a canonical text in another key order,
    with spaces and raw non-ASCII, and a payload not in Python's spelling."""
    import psycopg

    owner, *_ = team
    with psycopg.connect(owner) as conn:
        seq, prev = _head(conn)
        payload = '{"z":[1,2.50,true],"a":"Zoë"}'
        fields = {"seq": str(seq), "payload": payload, "kind": "note", "actor": "Zoë", "created_at": "t",
                  "run_id": None, "content_hash": None, "decision": None, "comment": "é \u2028 \\ \""}
        canonical = json.dumps(fields, ensure_ascii=False, indent=1)
        conn.execute("INSERT INTO audit_log VALUES (%s, 't', 'note', 'Zoë', NULL, NULL, NULL, %s, %s, %s, %s, 2, %s)",
                     [seq, fields["comment"], payload, prev, hashlib.sha256((prev + canonical).encode()).hexdigest(),
                      canonical])
        conn.execute("UPDATE audit_head SET seq = %s, record_hash = (SELECT record_hash FROM audit_log WHERE seq = %s)",
                     [seq, seq])
    verify = cli("audit", "verify", "--db", owner)
    assert verify.exit_code == 0, verify.output


@pytest.mark.slow
def test_the_dashboard_role_cannot_decide_or_record_a_verdict_as_no_account(team):
    import psycopg

    _, _, dash, run_id = team
    content = store.get_run(dash, run_id)["content_hash"]
    decide = "SELECT termgate_append_decision(" + "%s, " * 10 + "%s)"
    verdict = "SELECT termgate_append_verdict(" + "%s, " * 9 + "%s)"
    with psycopg.connect(dash) as conn:
        def door_args(actor, decision=None, payload=None):
            rec = _record(conn, "decision" if decision else "verdict", actor, run_id, content, decision, payload)
            return [*_header_args(rec), *([decision] if decision else []), rec["comment"]]

        for actor, decision in (("mallory", "approve"), ("mallory", "reject"), ("erin", "approve"),
                                ("vic", "reject"), ("dave", "approve"), ("dave", "reject")):
            with pytest.raises(psycopg.errors.RaiseException, match="not an enabled account that may"), \
                    conn.transaction():
                conn.execute(decide, door_args(actor, decision))
        term = {"query_id": "m1", "term": "mi", "label": "drift", "forbid": False}
        for actor in ("mallory", "vic", "dave"):
            with pytest.raises(psycopg.errors.RaiseException, match="not an enabled account that may"), \
                    conn.transaction():
                conn.execute(verdict, door_args(actor, payload=term))
        for actor, decision in (("carol", "approve"), ("erin", "reject")):  # accounts that may: taken
            with conn.transaction():
                conn.execute(decide, door_args(actor, decision))
        with conn.transaction():
            conn.execute(verdict, door_args("erin", payload=term))
    decisions = [(r["actor"], r["decision"]) for r in store.audit_records(dash) if r["kind"] == "decision"]
    assert decisions == [("carol", "approve"), ("erin", "reject")]
    assert cli("audit", "verify", "--db", dash).exit_code == 0


OLD_DOORS = {"evalcore_append_run_header": "bigint, text, text, text, text, text, text, text",
             "evalcore_append_decision": "bigint, text, text, text, text, text, text, text, text, text",
             "evalcore_append_verdict": "bigint, text, text, text, text, text, text, text, text",
             "evalcore_bind_sso": "bigint, text, text, text, text, text, text, text, text[]"}


@pytest.mark.slow
def test_the_doors_of_earlier_schemas_are_gone_and_their_grants_carried_over(pg, pgdb, monkeypatch):
    """A store deployed at schema 14, its roles granted the evalcore_* doors, migrated: the
    old doors are gone, and each role may execute exactly the SECURITY DEFINER functions
    it needs, by their new names (no new grant needed)."""
    import psycopg

    from termgate.store import postgres

    name = pgdb.rsplit("/", 1)[1]
    ci, dash = f"ci_{name}", f"dash_{name}"
    with monkeypatch.context() as m:
        m.setattr(postgres, "PG_MIGRATIONS", [v for v in postgres.PG_MIGRATIONS if v[0] < 15])
        assert postgres.migrate_pg(pgdb)[0] == 14
    with psycopg.connect(pgdb, autocommit=True) as owner:
        owner.execute(f"CREATE ROLE {ci} LOGIN; CREATE ROLE {dash} LOGIN")
        owner.execute(f"GRANT EXECUTE ON FUNCTION evalcore_append_run_header({OLD_DOORS['evalcore_append_run_header']}) "
                      f"TO {ci}")
        for door in ("evalcore_append_decision", "evalcore_append_verdict", "evalcore_bind_sso"):
            owner.execute(f"GRANT EXECUTE ON FUNCTION {door}({OLD_DOORS[door]}) TO {dash}")
    assert cli("store", "migrate", "--db", pgdb).exit_code == 0
    with psycopg.connect(pgdb, autocommit=True) as owner:
        for door, args in OLD_DOORS.items():
            assert owner.execute("SELECT to_regprocedure(%s)", [f"{door}({args})"]).fetchone() == (None,)

        def doors(role):
            return {r[0] for r in owner.execute(
                "SELECT proname FROM pg_proc WHERE prosecdef AND has_function_privilege(%s, oid, 'EXECUTE')",
                [role]).fetchall()}

        assert doors(ci) == {"termgate_append_run_header"}
        assert doors(dash) == {"termgate_append_decision", "termgate_append_verdict", "termgate_bind_sso"}
    with psycopg.connect(pg.url(name, user=ci), autocommit=True) as conn, \
            pytest.raises(psycopg.errors.UndefinedFunction):
        conn.execute("SELECT evalcore_append_run_header(1, 'p', 't', 'a', 'r', 'c', '{}', 'h')")
    # what `store roles` prints grants the same, on a fresh store
    fresh = pg.url(pg.create_database())
    assert cli("store", "init", "--db", fresh).exit_code == 0
    roles = cli("store", "roles", "--grants", "--ci", ci, "--dashboard", dash).output
    assert "evalcore_append" not in roles and "evalcore_bind" not in roles
    with psycopg.connect(fresh, autocommit=True) as owner:
        owner.execute(roles)
        assert {r[0] for r in owner.execute(
            "SELECT proname FROM pg_proc WHERE prosecdef AND has_function_privilege(%s, oid, 'EXECUTE')",
            [ci]).fetchall()} == {"termgate_append_run_header"}


def _legacy(folder: Path) -> Path:
    db = folder / "legacy.duckdb"
    with gzip.open(LEGACY) as src, db.open("wb") as dst:
        shutil.copyfileobj(src, dst)
    return db


@pytest.mark.slow
@pytest.mark.parametrize("where", ["duckdb", "postgresql"])
def test_an_old_chain_still_verifies_and_what_follows_it_is_version_2(where, tmp_path, request, monkeypatch):
    """The last evalcore's store (hash version 1 throughout), opened by this termgate or
    copied into a team store: it verifies with its old head, and the next record is v2."""
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    db = _legacy(tmp_path)
    if where == "postgresql":
        target = request.getfixturevalue("pgdb")
        assert cli("store", "copy", "--from", db, "--to", target).exit_code == 0
        db = target
    verify = cli("audit", "verify", "--db", db, "--expect-head", LEGACY_HEAD)
    assert verify.exit_code == 0, verify.output
    assert {r["hash_version"] for r in store.audit_records(db)} == {None}
    so.add_user(db, "frank", "approver", PASSWORD)
    assert _evaluate(db, tmp_path).exit_code == 3
    new = store.audit_records(db)[15:]
    assert [r["kind"] for r in new] == ["user_add", "run"] and {r["hash_version"] for r in new} == {HASH_VERSION}
    verify = cli("audit", "verify", "--db", db, "--expect-head", LEGACY_HEAD)
    assert verify.exit_code == 0 and "intact: 17 records" in verify.output, verify.output


EDITS = {
    "column edited": ("UPDATE audit_log SET comment = 'rubber stamp' WHERE seq = ?", "comment differs"),
    "payload edited": ("UPDATE audit_log SET payload = replace(payload, 'medical', 'ecommerce') WHERE seq = ?",
                       "payload differs"),
    "canonical edited": ("UPDATE audit_log SET canonical = replace(canonical, '\"approve\"', '\"reject\"') "
                         "WHERE seq = ?", "does not match its hash"),
    "canonical edited and rehashed": (
        "UPDATE audit_log SET canonical = replace(canonical, '\"approve\"', '\"reject\"'), record_hash = "
        "sha256(prev_hash || replace(canonical, '\"approve\"', '\"reject\"')) WHERE seq = ?", "decision differs"),
    "downgraded to version 1": ("UPDATE audit_log SET hash_version = NULL, canonical = NULL WHERE seq = ?",
                                "does not match its hash"),
    "unknown version": ("UPDATE audit_log SET hash_version = 3 WHERE seq = ?", "hash version 3"),
}


@pytest.mark.slow
@pytest.mark.parametrize("edit", list(EDITS))
def test_a_version_2_record_edited_in_a_store_file_is_named(edit, tmp_path, monkeypatch):
    monkeypatch.setenv("TERMGATE_PASSWORD", PASSWORD)
    db = tmp_path / "s.duckdb"
    so.add_user(db, "carol", "approver", PASSWORD, domains=["medical"])
    assert _evaluate(db, tmp_path).exit_code == 3
    run_id = store.list_runs(db)["run_id"].iloc[0]
    assert cli("signoff", run_id, "--approve", "--reviewer", "carol", "--comment", "checked", "--ack-all",
               "--db", db).exit_code == 0
    decision = store.audit_records(db)[-1]
    assert decision["kind"] == "decision" and decision["hash_version"] == HASH_VERSION
    assert cli("audit", "verify", "--db", db).exit_code == 0
    exported = json.loads(cli("audit", "export", decision["seq"], "--db", db).output)  # checkable by anyone
    assert hashlib.sha256((exported["prev_hash"] + exported["canonical"]).encode()).hexdigest() == \
        exported["record_hash"]
    sql, named = EDITS[edit]
    with duckdb.connect(str(db)) as con:
        con.execute(sql, [decision["seq"]])
    verify = cli("audit", "verify", "--db", db)
    assert verify.exit_code == 1 and f"record {decision['seq']}" in verify.output and named in verify.output, \
        verify.output
    assert cli("gate", run_id, "--db", db).exit_code == 1


def test_a_store_file_with_an_edited_record_is_not_copied_into_a_team_store(pgdb, tmp_path):
    """`store copy` into PostgreSQL meets the server's check: a version-2 record edited in
    the source file is named, exit 2, and nothing is written."""
    db = tmp_path / "s.duckdb"
    store.append_audit(db, {"created_at": "t", "kind": "note", "actor": "admin", "run_id": None,
                            "content_hash": None, "decision": None, "comment": "as written", "payload": {}})
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE audit_log SET comment = 'edited'")
    copied = cli("store", "copy", "--from", db, "--to", pgdb)
    assert copied.exit_code == 2 and "audit record 1 refused: its comment differs" in copied.output, copied.output
    assert store.audit_records(pgdb) == []


@pytest.mark.slow
def test_the_dashboard_role_cannot_bind_a_sign_on_with_a_false_account_state(team):
    """termgate_bind_sso's record states the account after the change; a state that is not
    the account table's (a raised role) would make `audit verify` fail for everyone."""
    import psycopg

    from termgate.identity import oidc_alias, oidc_issuer_prefix
    from termgate.store.records import account_state

    owner, _, dash, _ = team
    issuer = "https://idp.example"
    alias = oidc_alias(issuer, "carol-sub")
    row = store.get_user(owner, "carol")
    aliases = sorted([*(row["aliases"] or []), alias])
    bind = "SELECT termgate_bind_sso(" + "%s, " * 9 + "%s)"
    with psycopg.connect(dash) as conn:
        for state in (dict(account_state(dict(row, aliases=aliases)), role="admin"),
                      account_state(dict(row, aliases=aliases)) | {"extra": 1}, None):
            seq, prev = _head(conn)
            rec = linked({"created_at": "t", "kind": "user_sso_bind", "actor": "carol", "run_id": None,
                          "content_hash": None, "decision": None, "comment": None,
                          "payload": {"alias": alias, "account": state}}, seq, prev)
            with pytest.raises(psycopg.errors.RaiseException, match="as it now is"), conn.transaction():
                conn.execute(bind, [seq, prev, "t", "carol", json.dumps(rec["payload"], sort_keys=True),
                                    rec["record_hash"], rec["canonical"], alias, oidc_issuer_prefix(issuer), aliases])
        seq, prev = _head(conn)  # the true state is taken
        rec = linked({"created_at": "t", "kind": "user_sso_bind", "actor": "carol", "run_id": None,
                      "content_hash": None, "decision": None, "comment": None,
                      "payload": {"alias": alias, "account": account_state(dict(row, aliases=aliases))}}, seq, prev)
        with conn.transaction():
            conn.execute(bind, [seq, prev, "t", "carol", json.dumps(rec["payload"], sort_keys=True),
                                rec["record_hash"], rec["canonical"], alias, oidc_issuer_prefix(issuer), aliases])
    assert cli("audit", "verify", "--db", owner).exit_code == 0


@pytest.mark.slow
def test_a_doors_refusal_reaches_the_caller_as_one_line_not_a_database_traceback(team):
    """A decision the server refuses (an account that may not take it) is a TermgateError
    naming the store and the server's reason, through termgate's own append path."""
    from termgate.errors import TermgateError

    _, _, dash, run_id = team
    run = store.get_run(dash, run_id)
    before = len(store.audit_records(dash))
    with pytest.raises(TermgateError, match=r"the store refused it: termgate: mallory is not an enabled account "
                                            r"that may approve a run; nothing was stored") as caught:
        store.append_audit(dash, {"created_at": utc_now(), "kind": "decision", "actor": "mallory", "run_id": run_id,
                                  "content_hash": run["content_hash"], "decision": "approve", "comment": "forged",
                                  "payload": {}})
    assert "\n" not in str(caught.value) and "psycopg" not in str(caught.value)
    assert len(store.audit_records(dash)) == before
