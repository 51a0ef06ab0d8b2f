"""Every dashboard page through Streamlit's AppTest, on a real DuckDB store of the demo data."""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from termgate import comparison, store
from termgate.dashboard import APP as DASHBOARD_APP

ROOT = Path(__file__).resolve().parent.parent
APP = str(DASHBOARD_APP)


@pytest.fixture
def db(demo_store, tmp_path, monkeypatch) -> Path:
    copy = tmp_path / "store.duckdb"
    shutil.copy(demo_store, copy)
    monkeypatch.setenv("TERMGATE_DB", str(copy))
    return copy


def runs_by(db: Path) -> dict[tuple[str, str], str]:
    df = store.runs_overview(db)
    return {(r.name.split()[0], r.prompt_version): r.run_id for r in df.itertuples() if isinstance(r.name, str)}


def shown(markdown: str) -> str:
    """What a visitor reads from Markdown the dashboard escaped with ui.literal."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


def page(name: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(f"views/{name}.py")
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_runs_page_lists_every_run_and_trend(db):
    at = page("runs")
    assert not at.exception
    table = at.dataframe[0].value
    assert len(table) == 9
    assert set(table["gate"]) == {"PASS", "FAIL", "REVIEW"}


def test_runs_page_on_empty_store(tmp_path, monkeypatch):
    monkeypatch.setenv("TERMGATE_DB", str(tmp_path / "none.duckdb"))
    at = page("runs")
    assert not at.exception and "No runs yet" in at.info[0].value


def test_compare_deep_link_and_filters(db):
    ids = runs_by(db)
    run, base = ids[("medical", "v2")], ids[("medical", "v1")]
    at = page("compare", run=run, baseline=base)
    assert not at.exception
    assert at.selectbox(key="cmp_run").value == run and at.selectbox(key="cmp_base").value == base
    rows = at.dataframe[0].value
    assert len(rows) == 48
    assert rows["status"].iloc[0] == "regressed"  # regressions first
    head = comparison.pair_runs(db, run, base).headline()
    at.multiselect(key="cmp_status").set_value(["regressed"]).run()
    filtered = at.dataframe[0].value
    assert len(filtered) == head["regressed"] == 11
    assert set(filtered["status"]) == {"regressed"}
    at.checkbox(key="cmp_critical").check().run()
    critical = at.dataframe[0].value
    assert 0 < len(critical) < 11 and set(critical["critical"]) == {"⚑"}
    at.text_input(key="cmp_text").set_value("no such query").run()
    assert "No query matches" in at.info[0].value


def test_compare_side_by_side_term_diff(db):
    ids = runs_by(db)
    at = page("compare", run=ids[("medical", "v2")], baseline=ids[("medical", "v1")])
    rows = at.dataframe[0].value.set_index("query_id")
    # med-001 in v2: myocardial infarction generated below its min_weight -> lost correct
    assert "myocardial infarction" in rows.loc["med-001", "lost_correct"]
    assert "panic attack" in rows.loc["med-001", "new_drift"]


def test_compare_unknown_id_says_so(db):
    at = page("compare", run="nope-123", baseline="nope-456")
    assert not at.exception
    warnings = " ".join(shown(w.value) for w in at.warning)
    assert "nope-123" in warnings and "nope-456" in warnings


def test_compare_writes_picker_changes_to_url(db):
    ids = runs_by(db)
    at = page("compare", run=ids[("legal", "v2")], baseline=ids[("legal", "v1")])
    at.selectbox(key="cmp_base").set_value(ids[("legal", "v3")]).run()
    assert at.query_params["baseline"] == [ids[("legal", "v3")]] or at.query_params["baseline"] == ids[("legal", "v3")]


def test_query_history_shows_every_run_of_a_query(db):
    at = page("query", query_id="med-001")
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["prompt_version"]) == ["v1", "v2", "v3"]
    assert "panic attack" in table["drift_terms"].iloc[1]


def test_regressions_groups_flagged_items_by_run(db):
    at = page("regressions")
    assert not at.exception
    # v1 baselines have nothing flagged (judge none: no drift); medical/legal v2, v3 and ecommerce v2 do
    assert len(at.expander) == 5
    kinds = set()
    for frame in at.dataframe:
        kinds |= set(frame.value["kind"])
    assert kinds == {"regressed query", "failed critical query", "drift term"}
    at.multiselect(key="reg_kinds").set_value(["failed critical query"]).run()
    only = set()
    for frame in at.dataframe:
        only |= set(frame.value["kind"])
    assert only == {"failed critical query"}


def test_import_page_renders_form(db):
    at = page("import")
    assert not at.exception
    assert at.text_input(key="imp_name") is not None


class Upload:
    """What st.file_uploader hands the page: a name and the bytes."""

    def __init__(self, name: str, content: bytes):
        self.name, self._content = name, content

    def getvalue(self) -> bytes:
        return self._content


@pytest.mark.slow
def test_import_bad_upload_reports_cli_lines_and_records_nothing(db):
    from termgate.dashboard.importer import run_import

    before = len(store.list_runs(db))
    golden = Upload("golden.jsonl", b'{"query_id": "q1", "query": "x", "expected_expansions": [{"term": "a"}]}\n'
                                    b'{"query_id": "q2", "query": 5, "expected_expansions": []}\n')
    result = run_import(golden, Upload("gen.jsonl", b'{"query_id": "q1", "terms": ["a"]}\n'), judge="none",
                        author="carol")
    assert result.run_id is None
    assert len(result.problems) == 1 and result.problems[0].endswith("golden.jsonl:2: query: input should be a valid string (got 5)")
    assert len(store.list_runs(db)) == before


@pytest.mark.slow
def test_import_good_upload_records_a_run(db):
    from termgate.dashboard.importer import run_import

    golden = Upload("golden.jsonl", b'{"query_id": "q1", "query": "sneakers", "context": {"domain": "ecommerce"}, '
                                    b'"expected_expansions": [{"term": "trainers"}]}\n')
    result = run_import(golden, Upload("gen.jsonl", b'{"query_id": "q1", "terms": ["trainers"]}\n'),
                        name="uploaded", judge="none", author="carol")
    assert result.gate == "pass" and result.problems == []
    assert store.get_run(db, result.run_id)["name"] == "uploaded"
    assert store.get_run(db, result.run_id)["author"] == "carol"
    # the golden set is named after the uploaded file, not its temporary copy; or as given
    assert store.get_run(db, result.run_id)["golden_name"] == "golden.jsonl"
    named = run_import(golden, Upload("gen.jsonl", b'{"query_id": "q1", "terms": ["trainers"]}\n'),
                       golden_name=" shoes v2 ", judge="none", author="carol")
    assert store.get_run(db, named.run_id)["golden_name"] == "shoes v2"


def sign_in(at: AppTest, name: str, password: str) -> AppTest:
    """Sign in through the sidebar form, as a visitor does."""
    at.text_input(key="auth_name").input(name)
    at.text_input(key="auth_password").input(password)
    next(b for b in at.sidebar.button if b.label == "Sign in").click()
    return at.run()


def test_signoff_page_acknowledge_then_approve(db):
    from termgate.governance import signoff as so

    so.add_user(db, "alice", "approver", "alice-password", "medical")
    run_id = runs_by(db)[("medical", "v3")]
    at = page("signoff", run=run_id)
    assert not at.exception
    assert "Audit chain" in at.success[0].value and "intact" in at.success[0].value
    sign_in(at, "alice", "wrong-password")
    assert "wrong account name or password" in at.sidebar.error[0].value
    assert at.text_input(key="auth_password").value == ""  # the password does not stay in the session
    time.sleep(1.1)  # one failed try: the next may come after 1 s (SPEC §4)
    sign_in(at, "alice", "alice-password")
    assert any("Signed in as **alice**" in c.value for c in at.sidebar.caption)
    boxes = [c for c in at.checkbox if c.key.startswith("so_ack_")]
    assert len(boxes) == len(so.flagged_items(db, run_id)) > 0
    at.text_area(key=f"so_comment_{run_id}").input("reviewed the drift term").run()
    assert at.button(key="so_approve").disabled  # not every item acknowledged yet
    for box in (c for c in at.checkbox if c.key.startswith("so_ack_")):  # the widgets of the latest run
        box.check()
    at.run()
    assert not at.button(key="so_approve").disabled
    at.button(key="so_approve").click().run()
    assert any("Recorded approve" in s.value for s in at.success)
    assert so.release_state(db, run_id).exit_code == 0


def test_signoff_page_failed_run_never_approvable(db):
    from termgate.governance import signoff as so

    so.add_user(db, "bob", "admin", "bob-password-1")
    run_id = runs_by(db)[("medical", "v2")]
    at = sign_in(page("signoff", run=run_id), "bob", "bob-password-1")
    for box in (c for c in at.checkbox if c.key.startswith("so_ack_")):
        box.check()
    at.text_area(key=f"so_comment_{run_id}").input("<b>no</b>").run()
    assert at.button(key="so_approve").disabled
    assert any("failed its gate" in c.value for c in at.caption)
    at.button(key="so_reject").click().run()
    assert so.release_state(db, run_id).exit_code == 1


def test_signed_off_runs_leave_the_regressions_page(db):
    from termgate.governance import signoff as so

    so.add_user(db, "alice", "approver", "alice-password", "medical")
    run_id = runs_by(db)[("medical", "v3")]
    before = [shown(e.label) for e in page("regressions").expander]
    assert any(run_id in label for label in before)
    so.decide(db, run_id, "alice", "alice-password", "approve", "fine", ack_all=True)
    from termgate.dashboard import data
    data.clear()
    after = [shown(e.label) for e in page("regressions").expander]
    assert not any(run_id in label for label in after)
    runs_table = page("runs").dataframe[0].value.set_index("run_id")
    assert runs_table.loc[run_id, "sign_off"] == "releasable"


def endpoints_config(tmp_path, monkeypatch, **endpoints) -> Path:
    """A termgate.toml with [llm.endpoints.NAME] tables (NAME=(base_url, key_env or None))."""
    lines = ['[drift]\njudge = "none"\n']
    for name, (url, key_env) in endpoints.items():
        lines.append(f'[llm.endpoints.{name}]\nbase_url = "{url}"\nmodel = "sut-{name}"\n'
                     + (f'key_env = "{key_env}"\n' if key_env else ""))
    config = tmp_path / "termgate.toml"
    config.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    return config


@pytest.mark.slow
def test_harness_from_the_dashboard_reports_progress(db, tmp_path, monkeypatch):
    from termgate.dashboard.importer import run_harness
    from llm_server import LoopbackLLM

    server = LoopbackLLM()
    server.default = ("json", ["trainers", "running shoes"])
    endpoints_config(tmp_path, monkeypatch, loop=(server.url, "LOOP_KEY"))
    monkeypatch.setenv("LOOP_KEY", "sk-loop-1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-server-openai")  # must not go to the configured endpoint
    try:
        golden = Upload("golden.jsonl", b"".join(
            b'{"query_id": "q%d", "query": "sneakers %d", "context": {"domain": "ecommerce"}, '
            b'"expected_expansions": [{"term": "trainers"}, {"term": "running shoes"}]}\n' % (i, i) for i in range(12)))
        prompt = Upload("prompt.txt", b"Synonyms for {query} ({domain}), one per line")
        seen = []
        result = run_harness(golden, prompt, endpoint="loop", author="carol", concurrency=3, judge="none",
                             progress=lambda done, total: seen.append((done, total)))
    finally:
        server.close()
    assert result.problems == [] and result.gate == "pass"
    assert seen[-1] == (12, 12) and [d for d, _ in seen] == sorted(d for d, _ in seen)
    assert server.chat_calls == 12
    assert {r["body"]["model"] for r in server.requests} == {"sut-loop"}
    assert {r.get("authorization") for r in server.requests} == {"Bearer sk-loop-1"}
    run = store.get_run(db, result.run_id)
    assert run["prompt_version"].startswith("p-") and run["author"] == "carol"


@pytest.mark.slow
def test_the_dashboards_harness_keeps_the_endpoints_concurrency_unless_given(db, tmp_path, monkeypatch):
    """Issue 35 item 8: an endpoint that answers one request at a time says `concurrency = 1`;
    the Import page's blank concurrency leaves that in force (it used to send 8 always)."""
    import threading
    import time

    from termgate.dashboard.importer import run_harness
    from llm_server import LoopbackLLM

    lock, state = threading.Lock(), {"now": 0, "most": 0}

    def counted(body):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        time.sleep(0.15)
        with lock:
            state["now"] -= 1
        return ("text", "trainers\nrunning shoes\n")

    server = LoopbackLLM()
    server.default = ("callable", counted)
    config = endpoints_config(tmp_path, monkeypatch, loop=(server.url, None))
    config.write_text(config.read_text(encoding="utf-8") + "concurrency = 1\n", encoding="utf-8")
    golden = Upload("golden.jsonl", b"".join(
        b'{"query_id": "q%d", "query": "sneakers %d", "context": {"domain": "ecommerce"}, '
        b'"expected_expansions": [{"term": "trainers"}]}\n' % (i, i) for i in range(4)))
    most = []
    try:
        for given, prompt in ((None, b"Synonyms for {query}"), (4, b"Other words for {query}")):
            state["most"] = 0
            result = run_harness(golden, Upload("prompt.txt", prompt), endpoint="loop", author="carol",
                                 concurrency=given, judge="none")
            assert result.problems == [], result.problems
            most.append(state["most"])
    finally:
        server.close()
    assert most[0] == 1 and most[1] > 1, most


@pytest.mark.slow
def test_import_uploads_live_in_a_private_folder_removed_afterwards(db, monkeypatch):
    import stat

    from termgate.dashboard import importer

    folders = []
    real = importer.private_folder

    def spy():
        manager = real()
        folder = manager.__enter__()
        folders.append((folder, stat.S_IMODE(folder.stat().st_mode)))

        class Wrapped:
            def __enter__(self):
                return folder

            def __exit__(self, *exc):
                return manager.__exit__(*exc)
        return Wrapped()

    monkeypatch.setattr(importer, "private_folder", spy)
    good = Upload("golden.jsonl", b'{"query_id": "q1", "query": "x", "expected_expansions": [{"term": "a"}]}\n')
    ok = importer.run_import(good, Upload("gen.jsonl", b'{"query_id": "q1", "terms": ["a"]}\n'), judge="none",
                             author="carol")
    bad = importer.run_import(Upload("golden.jsonl", b"{not json\n"), Upload("gen.jsonl", b""), judge="none",
                              author="carol")
    assert ok.run_id and bad.problems
    assert len(folders) == 2
    for folder, mode in folders:
        assert mode == 0o700 and not folder.exists()
    assert not (db.parent / "uploads").exists()


def test_harness_tab_without_endpoints_explains_how_to_configure(db):
    at = page("import")
    assert not at.exception
    assert any("No endpoint is configured" in i.value for i in at.info)
    assert not any(s.key == "har_endpoint" for s in at.selectbox)
    assert not [t for t in at.text_input if t.key == "har_url"]  # no free-text URL, ever


def test_import_needs_an_account_that_may_run(db, tmp_path, monkeypatch):
    from termgate.governance import signoff as so

    endpoints_config(tmp_path, monkeypatch, loop=("http://127.0.0.1:9/v1", None))
    so.add_user(db, "victor", "viewer", "victor-password")
    so.add_user(db, "erin", "engineer", "erin-password")
    at = page("import")
    assert any("Sign in" in i.value for i in at.info)
    buttons = {b.label: b for b in at.button if b.label in ("Evaluate", "Run harness")}
    assert set(buttons) == {"Evaluate", "Run harness"} and all(b.disabled for b in buttons.values())
    at = sign_in(at, "victor", "victor-password")
    assert any("viewer" in i.value for i in at.info)
    assert all(b.disabled for b in at.button if b.label in ("Evaluate", "Run harness"))
    at = sign_in(page("import"), "erin", "erin-password")
    assert not any(b.disabled for b in at.button if b.label in ("Evaluate", "Run harness"))
    assert at.selectbox(key="har_endpoint").options == ["loop · sut-loop"]


def test_compare_pair_with_added_and_removed_queries(db, tmp_path):
    from termgate.cli import main
    from click.testing import CliRunner

    golden = tmp_path / "g.jsonl"
    golden.write_text("".join(json.dumps({"query_id": f"n{i}", "query": f"new {i}", "context": {"domain": "ecommerce"},
                                          "expected_expansions": [{"term": "x"}]}) + "\n" for i in range(3)))
    gen = tmp_path / "c.jsonl"
    gen.write_text("".join(json.dumps({"query_id": f"n{i}", "terms": ["x"]}) + "\n" for i in range(3)))
    CliRunner().invoke(main, ["evaluate", "--golden", str(golden), "--generated", str(gen), "--db", str(db),
                              "--drift-judge", "none", "-q"])
    new_run = store.list_runs(db)["run_id"].iloc[0]
    at = page("compare", run=new_run, baseline=runs_by(db)[("medical", "v1")])
    assert not at.exception
    rows = at.dataframe[0].value
    assert {"added", "removed"} <= set(rows["status"])
    same = page("compare", run=new_run, baseline=new_run)
    assert not same.exception and any("same run" in w.value for w in same.warning)


def hold_store(db: Path, seconds: float):
    """Another process that opens the store for writing and keeps it for `seconds`."""
    import subprocess
    import sys

    code = ("import duckdb, sys, time; con = duckdb.connect(sys.argv[1]); print('held', flush=True); "
            "time.sleep(float(sys.argv[2])); con.close()")
    proc = subprocess.Popen([sys.executable, "-c", code, str(db), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_busy_store_says_so_then_recovers_by_itself(db):
    from termgate.dashboard import data

    data.clear()
    holder = hold_store(db, 5)
    try:
        started = time.monotonic()
        at = page("runs")
        waited = time.monotonic() - started
    finally:
        holder.wait(timeout=30)
    assert not at.exception
    assert waited >= 4  # it kept retrying while the lock was held ...
    assert len(at.dataframe[0].value) == 9  # ... and shows the page once the store is free, without a reload
