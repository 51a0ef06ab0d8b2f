"""Security of the dashboard without a browser (issue 13): data shown literally on every
page (AppTest reads the Markdown each element is given), endpoints configured by name with
validated settings, keys that reach only their own endpoint, and work that only a signed-in
engineer, approver or admin may start."""

from __future__ import annotations

import os
import re
import subprocess
from types import SimpleNamespace
import sys
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from payloads import build_store, fragments
from stub import ROOT, RecordingStub

from termgate.dashboard.ui import chart_text, literal
from termgate.errors import InputError
from termgate.dashboard import APP as DASHBOARD_APP

APP = str(DASHBOARD_APP)
PORT = 9  # the discard port: nothing may ever be fetched from it


def shown(markdown: str) -> str:
    """What a reader sees of Markdown escaped by ui.literal."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "")


# ---------------------------------------------------------------- the one helper


@pytest.mark.parametrize("text", [
    "![px](http://127.0.0.1:9/pixel.png)", "[link](http://127.0.0.1:9/x)", "<b>bold</b>", "$x^2$", "$$x$$",
    "**strong**", "_em_", "`code`", "# heading", "> quote", "1. item", "- item", "| a | b |", ":smile:",
    ":red[red]", ":material/home:", "http://127.0.0.1:9/auto", "www.example.com", "eve@127.0.0.1", "a\\*b",
    "&amp; &lt;b&gt;", "~~strike~~", "<!-- c -->", "[ref]: http://127.0.0.1:9/r", "plain text, 1.5",
])
def test_literal_escapes_every_markdown_metacharacter_and_reads_back(text):
    out = literal(text)
    assert shown(out) == text
    # nothing special is left unescaped: every ASCII punctuation character has its backslash
    assert not re.search(r"(?<!\\)[!-/:-@\[-`{-~]", re.sub(r"\\[!-/:-@\[-`{-~]", "", out))
    assert not re.search(r"(?i)https?:|www\.|@[\w-]", out.replace("\\", ""))  # no autolink trigger


def test_literal_folds_line_breaks_and_takes_any_value():
    assert literal("a\n\n# b\r\nc") == "a \\# b c"
    assert literal(None) == "" and literal(3) == "3"


def test_chart_text_escapes_what_plotly_renders():
    assert chart_text('<a href="x">l</a> <b>b</b> <br> & "q"') == '&lt;a href="x"&gt;l&lt;/a&gt; &lt;b&gt;b&lt;/b&gt; &lt;br&gt; &amp; "q"'


# ---------------------------------------------------------------- every page, every Markdown element


@pytest.fixture
def marked_up(tmp_path, monkeypatch):
    ids = build_store(tmp_path / "store.duckdb", tmp_path, PORT)
    for key, value in ids["env"].items():
        monkeypatch.setenv(key, value)
    from termgate.dashboard import data
    data.clear()
    return ids


def page(name: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page(f"views/{name}.py")
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def markdown_values(at: AppTest) -> list[str]:
    """Every string AppTest shows was handed to Streamlit as Markdown: text elements,
    alerts, and the labels of expanders, checkboxes, buttons, tabs and metrics."""
    out = []
    for kind in ("markdown", "caption", "success", "error", "warning", "info", "title", "subheader"):
        out += [e.value for e in getattr(at, kind)]
    for kind in ("expander", "checkbox", "button", "tabs", "metric", "selectbox", "multiselect", "text_input"):
        out += [e.label for e in getattr(at, kind)]
    return out


PAGES = {"runs": {}, "compare": {"run": "cand", "baseline": "base"}, "compare-unknown": None, "query": {"query_id": "qid"},
         "regressions": {}, "signoff": {"run": "cand"}, "import": {}, "prompts": {}}


@pytest.mark.parametrize("name", list(PAGES))
def test_markup_from_data_reaches_markdown_only_escaped(marked_up, name):
    if name == "compare-unknown":
        at = page("compare", run=" ".join(fragments(PORT)))
    else:
        at = page(name, **{k: marked_up[v] for k, v in PAGES[name].items()})
    assert not at.exception
    values = markdown_values(at)
    unescaped = [re.sub(r"\\[!-/:-@\[-`{-~]", "", v) for v in values]  # what Markdown would still act on
    raw = [v for v in unescaped for f in ("![px](", "[link](", "<b>", "<img", "$x^2$", "**strong**", "_eve_", "http:")
           if f in v]
    assert raw == []  # only ever as ui.literal(...)
    if name != "import":  # Import shows no stored text outside its pickers
        text = "\n".join(shown(v) for v in values) + "\n" + "\n".join(str(o) for s in at.selectbox
                                                                       for o in [s.format_func(s.value)] if s.value)
        assert [f for f in fragments(PORT) if f not in text] == []


def test_signoff_history_comment_and_reviewer_are_text(marked_up):
    at = page("signoff", run=marked_up["cand"])
    comments = [t.value for t in at.text]
    assert any(c.startswith("comment ![px](") for c in comments)  # st.text: literal by construction
    assert any("by carol" in shown(m.value) for m in at.markdown)


# ---------------------------------------------------------------- endpoints by name


def write_config(tmp_path: Path, text: str, monkeypatch) -> Path:
    config = tmp_path / "termgate.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("TERMGATE_CONFIG", str(config))
    return config


@pytest.mark.parametrize("table, line, field, message", [  # line: within the table; 0 is its [header]
    ('base_url = "http://h/v1"\nmodel = "m"\ncolour = "red"\n', 3, "llm.endpoints.e.colour", "unknown key"),
    ('base_url = "http://h/v1"\nmodel = 5\n', 2, "llm.endpoints.e.model", "non-empty string"),
    ('model = "m"\n', 0, "llm.endpoints.e.base_url", "required"),
    ('base_url = "http://user:sk-1@h/v1"\nmodel = "m"\n', 1, "llm.endpoints.e.base_url", "without user"),
    ('base_url = "http://h/v1?api-key=sk-1"\nmodel = "m"\n', 1, "llm.endpoints.e.base_url", "without user"),
    ('base_url = "ftp://h"\nmodel = "m"\n', 1, "llm.endpoints.e.base_url", "http(s) URL"),
    ('base_url = "http://h/v1"\nmodel = "m"\nkey_env = "not a name"\n', 3, "llm.endpoints.e.key_env", "environment"),
])
def test_endpoint_settings_are_validated(tmp_path, monkeypatch, table, line, field, message):
    from termgate.config import load_settings

    config = write_config(tmp_path, f'[llm]\nmodel = "x"\n\n[llm.endpoints.e]\n{table}', monkeypatch)
    with pytest.raises(InputError) as caught:
        load_settings()
    problem = caught.value.problems[0]
    assert (problem.file, problem.line - 4, problem.field) == (str(config), line, field) and message in problem.message


def test_endpoints_are_read_by_name(tmp_path, monkeypatch):
    from termgate.config import Endpoint, load_settings

    write_config(tmp_path, '[llm]\nmodel = "x"\n[llm.endpoints.local]\nbase_url = "http://127.0.0.1:8000/v1"\n'
                           'model = "llama"\nkey_env = "LOCAL_KEY"\n', monkeypatch)
    settings = load_settings()
    assert settings.endpoints == {"local": Endpoint("local", "http://127.0.0.1:8000/v1", "llama", "LOCAL_KEY")}
    assert settings.llm == {"model": "x"}  # the endpoints are not [llm] options


def test_harness_child_environment_carries_only_its_endpoints_key(tmp_path, monkeypatch):
    from termgate.dashboard.importer import child_env
    from termgate.config import load_settings

    write_config(tmp_path, '[llm.endpoints.a]\nbase_url = "http://a/v1"\nmodel = "m"\nkey_env = "A_KEY"\n'
                           '[llm.endpoints.b]\nbase_url = "http://b/v1"\nmodel = "m"\nkey_env = "B_KEY"\n', monkeypatch)
    for name, value in {"A_KEY": "sk-a", "B_KEY": "sk-b", "OPENAI_API_KEY": "sk-o", "OPENAI_BASE_URL": "http://o",
                        "TERMGATE_PASSWORD": "pw", "EVALCORE_PASSWORD": "old-pw", "GITHUB_TOKEN": "gh",
                        "AWS_SECRET_ACCESS_KEY": "aws"}.items():
        monkeypatch.setenv(name, value)
    settings = load_settings()
    env = child_env(settings.endpoints["a"], settings)
    assert env["A_KEY"] == "sk-a"
    assert not {"B_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "TERMGATE_PASSWORD", "GITHUB_TOKEN",
                "AWS_SECRET_ACCESS_KEY"} & set(env)
    assert "sk-b" not in env.values() and "sk-o" not in env.values()
    evaluate_env = child_env(None, settings)  # evaluate calls no endpoint of the dashboard's
    assert not {"A_KEY", "B_KEY", "TERMGATE_PASSWORD", "EVALCORE_PASSWORD"} & set(evaluate_env)  # the old name too
    assert "old-pw" not in evaluate_env.values() and "old-pw" not in env.values()


def test_the_child_finds_the_store_by_environment_never_on_its_command_line(tmp_path, monkeypatch):
    from termgate.dashboard import importer
    from termgate.config import load_settings

    write_config(tmp_path, '[llm.endpoints.a]\nbase_url = "http://a/v1"\nmodel = "m"\nkey_env = "A_KEY"\n', monkeypatch)
    url = "postgresql://dash:S3CRETPW@db.internal/termgate"
    monkeypatch.setenv("TERMGATE_DB", url)
    monkeypatch.setenv("PGPASSWORD", "pg-secret")
    settings = load_settings()
    for env in (importer.child_env(settings.endpoints["a"], settings), importer.child_env(None, settings)):
        assert env["TERMGATE_DB"] == url and env["PGPASSWORD"] == "pg-secret"  # the store's own credential
    seen = []
    monkeypatch.setattr(importer.subprocess, "run", lambda cmd, **kw: seen.append(cmd) or subprocess.CompletedProcess(
        cmd, 2, "", "stopped"))
    upload = lambda name, data: SimpleNamespace(name=name, getvalue=lambda: data)  # noqa: E731
    importer.run_import(upload("g.jsonl", b'{"query_id": "q", "query": "x", "expected_expansions": [{"term": "y"}]}'),
                        upload("c.jsonl", b'{"query_id": "q", "terms": ["y"]}'), author="ann")
    assert seen and "S3CRETPW" not in " ".join(seen[0]) and "--db" not in seen[0]


def _harness(tmp_path, env: dict, *args: str) -> subprocess.CompletedProcess:
    golden = tmp_path / "g.jsonl"
    golden.write_text('{"query_id": "q1", "query": "sneakers", "expected_expansions": [{"term": "trainers"}]}\n')
    (tmp_path / "p.txt").write_text("Synonyms for {query}")
    return subprocess.run([sys.executable, "-m", "termgate", "harness", "--golden", str(golden), "--prompt",
                           str(tmp_path / "p.txt"), "--no-store", "--drift-judge", "none", "-q", *args],
                          capture_output=True, text=True, env={**os.environ, **env})


@pytest.mark.slow
def test_harness_endpoint_sends_its_key_to_its_url_only(tmp_path, monkeypatch):
    mine, elsewhere = RecordingStub('["trainers"]'), RecordingStub('["trainers"]')
    try:
        config = write_config(tmp_path, f'[llm]\nbase_url = "{elsewhere.url}/v1"\nmodel = "x"\n'
                                        f'[llm.endpoints.mine]\nbase_url = "{mine.url}/v1"\nmodel = "mine-model"\n'
                                        'key_env = "MINE_KEY"\n', monkeypatch)
        env = {"TERMGATE_CONFIG": str(config), "MINE_KEY": "sk-mine", "OPENAI_API_KEY": "sk-openai",
               "OPENAI_BASE_URL": f"{elsewhere.url}/v1"}
        done = _harness(tmp_path, env, "--endpoint", "mine")
        assert done.returncode == 0, done.stderr
        assert mine.seen() == [("POST", "/v1/chat/completions", "Bearer sk-mine")]
        assert elsewhere.seen() == []
        no_key = _harness(tmp_path, {**env, "MINE_KEY": ""}, "--endpoint", "mine")
        assert no_key.returncode == 2 and "$MINE_KEY" in no_key.stderr and "sk-" not in no_key.stderr
        unknown = _harness(tmp_path, env, "--endpoint", "theirs")
        assert unknown.returncode == 2 and "unknown endpoint 'theirs'" in unknown.stderr
        both = _harness(tmp_path, env, "--endpoint", "mine", "--base-url", f"{elsewhere.url}/v1")
        assert both.returncode == 2 and "--endpoint" in both.stderr
        assert len(mine.seen()) == 1 and elsewhere.seen() == []  # refusals call nothing
    finally:
        mine.close()
        elsewhere.close()


@pytest.mark.slow
def test_keyless_endpoint_gets_no_key_at_all(tmp_path, monkeypatch):
    local = RecordingStub('["trainers"]')
    try:
        config = write_config(tmp_path, f'[llm.endpoints.local]\nbase_url = "{local.url}/v1"\nmodel = "m"\n',
                              monkeypatch)
        done = _harness(tmp_path, {"TERMGATE_CONFIG": str(config), "OPENAI_API_KEY": "sk-openai"},
                        "--endpoint", "local")
        assert done.returncode == 0, done.stderr
        assert [auth for _, _, auth in local.seen()] and all("sk-openai" not in (a or "") for _, _, a in local.seen())
    finally:
        local.close()


# ---------------------------------------------------------------- who may run


def sign_in(at: AppTest, name: str, password: str) -> AppTest:
    at.text_input(key="auth_name").input(name)
    at.text_input(key="auth_password").input(password)
    next(b for b in at.sidebar.button if b.label == "Sign in").click()
    return at.run()


def test_signed_out_visitor_cannot_run(marked_up):
    at = page("import")
    assert any("Sign in" in i.value for i in at.info)
    assert all(b.disabled for b in at.button if b.label in ("Evaluate", "Run harness"))


def test_a_demoted_account_is_refused_when_it_presses_run(marked_up, monkeypatch):
    from termgate.governance import signoff as so

    import termgate.dashboard.importer as importer  # the page imports run_import from here on every run
    monkeypatch.setattr(importer, "run_import", lambda *a, **k: pytest.fail("work started for a viewer"))
    db = os.environ["TERMGATE_DB"]
    so.add_user(db, "erin", "engineer", "erin-password-1")
    at = sign_in(page("import"), "erin", "erin-password-1")
    evaluate = next(b for b in at.button if b.label == "Evaluate")
    assert not evaluate.disabled
    so.set_role(db, "erin", "viewer")  # between the page's render and the click
    evaluate.click()
    at.run()
    assert not at.exception  # run_import was never called
    assert any("is a viewer" in shown(i.value) for i in at.info)  # the account is read again on the click's run
    assert next(b for b in at.button if b.label == "Evaluate").disabled


def test_an_account_disabled_after_sign_in_loses_its_rights_at_once(marked_up):
    from termgate.governance import signoff as so

    so.add_user(os.environ["TERMGATE_DB"], "erin", "engineer", "erin-password-1")
    at = sign_in(page("import"), "erin", "erin-password-1")
    assert not next(b for b in at.button if b.label == "Evaluate").disabled
    so.disable_user(os.environ["TERMGATE_DB"], "erin")
    at.run()
    assert next(b for b in at.button if b.label == "Evaluate").disabled
    assert any("disabled" in shown(e.value) for e in at.sidebar.error)
