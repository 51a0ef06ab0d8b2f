"""Issue 31 item 5: a URL's secrets are never printed or stored for display, on every path:
the CLI (a malformed PostgreSQL URL libpq repeats), the stored run and its reports (a base
URL's `?pw=`, `?pass=`, or any parameter not known to be harmless), and the Action's log
(`extra-args`). Cache keys and the content hash never redact: two endpoints shown alike stay
apart there (termgate.redact is the one place for both rules)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from termgate.cli import main
from termgate.drift.llm_judge import LLMDriftJudge
from termgate.evaluation import content_hash
from termgate.llm.client import LLMConfig, request_key
from termgate.models import Thresholds
from termgate.redact import redact_text, redact_url, strip_credentials

from conftest import golden_row, write_jsonl
from llm_server import LoopbackLLM


@pytest.mark.parametrize("url, shown", [
    ("https://host/v1?pw=hunter22", "https://host/v1?pw=***"),
    ("https://host/v1?pass=hunter22&api-version=2024-06-01", "https://host/v1?pass=***&api-version=2024-06-01"),
    ("https://host/v1?password=hunter22", "https://host/v1?password=***"),
    ("https://host/v1?deployment=prod-eu&x=1", "https://host/v1?deployment=***&x=***"),  # unknown: hidden
    ("https://host/v1?sk-bare-key-1234", "https://host/v1?***"),  # a value with no name
    ("https://host/v1#pw=hunter22", "https://host/v1#pw=***"),
    ("postgresql://ci:pw@db/termgate?sslmode=require&connect_timeout=5&application_name=ci",
     "postgresql://***@db/termgate?sslmode=require&connect_timeout=5&application_name=ci"),
    ("postgresql://db/t?options=-c%20statement_timeout%3D1&sslpassword=k3y", "postgresql://db/t?options=-c%20statement_timeout%3D1&sslpassword=***"),
    ("postgresql://db/t?user=ci&password=hunter22", "postgresql://db/t?user=***&password=***"),
    ("postgresql://ci:pw@[::1/db", "postgresql://***"),  # unreadable: everything after the scheme
])
def test_redact_url_hides_every_value_not_known_to_be_harmless(url, shown):
    assert redact_url(url) == shown


def test_a_hash_sees_every_part_of_the_url_but_its_credentials():
    """Two endpoints shown alike (`?deployment=***`) keep apart in the LLM cache and in the
    content hash; a rotated password keeps both (it is taken out, never hashed)."""
    messages, params = [{"role": "user", "content": "q"}], {"temperature": 0.0}
    a, b = "https://h/v1?deployment=eu&pw=one1", "https://h/v1?deployment=us&pw=one1"
    assert redact_url(a) == redact_url(b)
    assert request_key(a, "m", messages, params) != request_key(b, "m", messages, params)
    assert request_key(a, "m", messages, params) == request_key(a.replace("one1", "two2"), "m", messages, params)
    assert strip_credentials(a) == "https://h/v1?deployment=eu&pw=***"

    def run_hash(url: str) -> str:
        judge = LLMDriftJudge(LLMConfig(model="j", base_url=url))
        assert judge.config()["base_url"] == redact_url(url)  # stored and shown redacted
        return content_hash("g", "x", Thresholds(), judge, ["ecommerce"], None)
    assert run_hash(a) != run_hash(b)
    assert run_hash(a) == run_hash(a.replace("one1", "two2"))


def test_the_embedding_caches_model_id_keeps_endpoints_apart_with_no_value_in_the_clear():
    """The model id is a key stored in the clear (embedding_cache.model, the judge's config)."""
    from termgate.drift.embeddings import OpenAIEmbedder

    eu = OpenAIEmbedder("e", "https://u:KEYSECRET1@h/v1?deployment=EUSECRET1&pw=PWSECRET1").model_id
    us = OpenAIEmbedder("e", "https://u:KEYSECRET2@h/v1?deployment=USSECRET1&pw=PWSECRET1").model_id
    assert eu != us and eu.startswith("openai/https://***@h/v1?deployment=***&pw=***#")
    assert not any(s in eu + us for s in ("KEYSECRET", "EUSECRET1", "USSECRET1", "PWSECRET1"))
    rotated = OpenAIEmbedder("e", "https://u:KEYSECRET3@h/v1?deployment=EUSECRET1&pw=PWSECRET3").model_id
    assert rotated == eu  # a new key keeps the cache
    plain = OpenAIEmbedder("e", "http://127.0.0.1:8000/v1?api-version=1").model_id
    assert plain == "openai/http://127.0.0.1:8000/v1?api-version=1/e"  # nothing hidden: as before


@pytest.mark.parametrize("url, secret", [
    ("postgresql://ci:S3cret PW@127.0.0.1:1/db", "S3cret PW"),  # libpq quotes the piece with spaces
    ("postgresql://ci:S3cretPW@[::1/db", "S3cretPW"),  # libpq quotes the whole URL
    ("postgresql://ci:S3cret%zzPW@127.0.0.1:1/db", "S3cret%zzPW"),
    ("postgresql://ci@127.0.0.1:1/db?pass=TopSecret9", "TopSecret9"),
    ("postgresql://ci@127.0.0.1:1/db?pw=TopSecret9", "TopSecret9"),
    ("postgresql://ci@127.0.0.1:1/db?sslmode=disable&password=TopSecret9", "TopSecret9"),
    # libpq ends the user info at the first `@`, Python at the last: it reads host `S3cret2PW@127.0.0.1`
    ("postgresql://ci:Hunter@S3cret2PW@127.0.0.1:1/db", "S3cret2PW"),
    ("postgresql://ci:Hunter@S3cret2PW@h@127.0.0.1:1/db", "S3cret2PW"),
])
def test_a_malformed_or_refused_postgres_url_is_never_printed_with_its_password(url, secret):
    """libpq's message repeats what it could not read, password and all."""
    result = CliRunner().invoke(main, ["store", "info", "--db", url])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: --db postgresql://") and secret not in line and "S3cret" not in line, line
    assert "\\n" not in line  # libpq's trailing newline is not shown as two characters


EXPANSIONS = {"heart attack": ["myocardial infarction"], "flu": ["influenza"]}
SECRETS = ("PWSECRET31", "DEPLOYSECRET31", "JUDGEPASS31")


def _answer(body):
    from termgate.drift import llm_judge

    if body["messages"][0]["content"] == llm_judge.SYSTEM:
        return ("json", {"verdicts": [{"term": t, "drift": False, "reason": "fine"}
                                      for t in json.loads(body["messages"][1]["content"])["candidates"]]})
    prompt = body["messages"][-1]["content"]
    return ("json", next(t for q, t in EXPANSIONS.items() if f"Query: {q}\n" in prompt) + ["extra"])


def _store_text(db: Path) -> str:
    with duckdb.connect(str(db), read_only=True) as con:
        return "\n".join(repr(con.execute(f'SELECT * FROM "{table}"').fetchall())
                         for (table,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall())


@pytest.mark.slow
def test_query_parameter_passwords_are_neither_printed_nor_stored(tmp_path, monkeypatch):
    """`?pw=` and an unknown `?deployment=` in the harness's --base-url, `?pass=` in the llm
    drift judge's [llm] base_url: the calls carry them; the output, the reports and every
    table of the store do not (usage, drift_judge_config)."""
    llm = LoopbackLLM()
    try:
        llm.default = ("callable", _answer)
        monkeypatch.chdir(tmp_path)
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        write_jsonl(tmp_path / "golden.jsonl", [golden_row(f"q{i}", q, t) for i, (q, t) in enumerate(EXPANSIONS.items())])
        (tmp_path / "prompt.txt").write_text("Expand ({domain}).\nQuery: {query}\n", encoding="utf-8")
        (tmp_path / "termgate.toml").write_text(
            f'[llm]\nbackoff = 0.001\nmodel = "judge"\nbase_url = "{llm.url}?pass=JUDGEPASS31"\n', encoding="utf-8")
        monkeypatch.setenv("TERMGATE_CONFIG", str(tmp_path / "termgate.toml"))
        db = tmp_path / "store.duckdb"
        result = CliRunner().invoke(main, [
            "harness", "--golden", "golden.jsonl", "--prompt", "prompt.txt", "--model", "sut",
            "--base-url", f"{llm.url}?pw=PWSECRET31&deployment=DEPLOYSECRET31", "--drift-judge", "llm",
            "--db", str(db), "--json", "r.json", "--html", "r.html"], env={"OPENAI_API_KEY": "k"})
        assert result.exit_code == 1, result.output  # "extra" fails precision: the gate is not what is tested
        assert any("PWSECRET31" in r["path"] for r in llm.requests)  # the endpoint got what it needs
        assert any("JUDGEPASS31" in r["path"] for r in llm.requests)
        report = json.loads(Path("r.json").read_text(encoding="utf-8"))
        assert report["run"]["drift_judge_config"]["base_url"] == f"{llm.url}?pass=***"
        shown = [result.stdout, result.stderr, Path("r.json").read_text(encoding="utf-8"),
                 Path("r.html").read_text(encoding="utf-8"), _store_text(db)]
        assert f"endpoint: {llm.url}?pw=***&deployment=*** (model sut)" in result.stderr
        for secret in SECRETS:
            assert all(secret not in text for text in shown), secret
    finally:
        llm.close()


def test_redact_text_finds_urls_inside_flags():
    text = "termgate evaluate --db postgresql://ci:CIPASS31@db/t '--base-url=https://u:KEY31@h/v1?pw=PW31x'"
    out = redact_text(text)
    assert not any(s in out for s in ("CIPASS31", "KEY31", "PW31x")), out
    assert "postgresql://***@db/t" in out and "--base-url=https://***@h/v1?pw=***" in out


@pytest.mark.parametrize("url", ["POSTGRESQL://ci:S3cretPW9@127.0.0.1:1/db", "Postgres://ci:S3cretPW9@127.0.0.1:1/db",
                                 "postgresql+psycopg://ci:S3cretPW9@127.0.0.1:1/db", "https://h/db?pw=S3cretPW9"])
@pytest.mark.parametrize("args", [["store", "info"], ["runs"], ["evaluate", "--golden", "g.jsonl", "--generated",
                                                               "c.jsonl", "--drift-judge", "none"]])
def test_a_db_url_of_another_scheme_is_refused_redacted_and_creates_nothing(tmp_path, monkeypatch, url, args):
    """`--db POSTGRESQL://ci:PW@host/db` was a DuckDB file path: printed with its password
    (`no store at ...`, `cannot open store ...`), and evaluate made the folder
    `POSTGRESQL:/ci:PW@127.0.0.1:1` on disk."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "g.jsonl").write_text('{"query_id": "q1", "query": "sofa", "expected_expansions": [{"term": "couch"}]}\n')
    (tmp_path / "c.jsonl").write_text('{"query_id": "q1", "terms": ["couch"]}\n')
    result = CliRunner().invoke(main, [*args, "--db", url])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"error: --db {url.split('://')[0]}://") and "not a store" in line, line
    assert "S3cretPW9" not in result.output, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl", "g.jsonl"]


@pytest.mark.parametrize("dsn", ["host=127.0.0.1 port=1 password=S3cretPW9 dbname=tg", "dbname=tg password = S3cretPW9"])
def test_a_libpq_keyword_string_as_db_is_refused_without_its_value(tmp_path, monkeypatch, dsn):
    """`--db 'host=h password=PW dbname=tg'` was a DuckDB file path: `no store at host=h password=PW ...`."""
    monkeypatch.chdir(tmp_path)
    for args in (["runs", "--db", dsn], ["store", "info", "--db", dsn]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, result.output
        (line,) = result.stderr.splitlines()
        assert line.startswith("error: --db: reads as a libpq connection string") and "S3cretPW9" not in line, line
    assert list(tmp_path.iterdir()) == []
