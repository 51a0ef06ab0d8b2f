"""Shared fixtures: input files in a temporary folder, a fresh store, isolated settings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from types import SimpleNamespace

from termgate.report import query_rows as report_rows
from termgate.config import Settings
from termgate.demo import seed_demo
from termgate.drift.judge import NoDriftJudge
from termgate.evaluation import EvaluationRun, evaluate
from termgate.io import load_generated, load_golden_set
from termgate.models import Thresholds


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def golden_row(qid: str, query: str, expected: list, *, domain: str = "ecommerce", forbidden=None,
               critical: bool = False) -> dict:
    row = {"query_id": qid, "query": query, "context": {"domain": domain},
           "expected_expansions": [e if isinstance(e, dict) else {"term": e} for e in expected]}
    if forbidden:
        row["forbidden_terms"] = forbidden
    if critical:
        row["critical"] = True
    return row


@pytest.fixture(scope="session")
def index_root(tmp_path_factory) -> Path:
    """Where every test's search indexes go (one folder a session: an index is reused while
    its corpus is unchanged), never the developer's cache."""
    return tmp_path_factory.mktemp("indexes")


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch, index_root):
    """No test reads the developer's termgate.toml or store, or writes to their cache."""
    monkeypatch.setenv("TERMGATE_INDEX_DIR", str(index_root))
    monkeypatch.delenv("TERMGATE_CONFIG", raising=False)
    monkeypatch.delenv("TERMGATE_HIGH_RISK_DOMAINS", raising=False)
    monkeypatch.setenv("TERMGATE_DB", str(tmp_path / "default.duckdb"))
    monkeypatch.setenv("TERMGATE_STORE_TIMEOUT", "30")


def query_rows(run: EvaluationRun) -> list[SimpleNamespace]:
    """A run's per-query rows as objects: the report's keys, plus `query`, `generated`
    (term -> weight), `expected` (term -> min_weight, from the scorer's table) and
    `drift_reasons` as term -> reason."""
    mins = [r[0] for r in run.queries.con.execute("SELECT expected_min_weights FROM query_scores ORDER BY position").fetchall()]
    out = []
    for row, min_weights in zip(report_rows(run), mins, strict=True):
        out.append(SimpleNamespace(**{**row, "query": row["original_query"],
                                      "generated": dict(zip(row["generated_terms"], row["weights"])),
                                      "expected": dict(zip(row["expected_terms"], min_weights)),
                                      "drift_reasons": dict(zip(row["drift_terms"], row["drift_reasons"]))}))
    return out


class ScoredRun:
    """An EvaluationRun with its per-query rows read out (`scores`)."""

    def __init__(self, run: EvaluationRun):
        self.run = run
        self.scores = query_rows(run)

    def __getattr__(self, name):
        return getattr(self.run, name)


@pytest.fixture
def score(tmp_path):
    """score(golden_rows, generated_rows, **kw) -> ScoredRun, through the production path:
    files on disk, evaluate(), the one scorer. `errors` (query_id -> reason) hands the
    generated lines over as the harness does, with those items errored."""
    counter = iter(range(10_000))

    def run(golden_rows: list, generated_rows: list, thresholds: Thresholds | None = None,
            baseline=None, judge=None, errors=None) -> ScoredRun:
        n = next(counter)
        golden = write_jsonl(tmp_path / f"g{n}.jsonl", golden_rows)
        generated = write_jsonl(tmp_path / f"c{n}.jsonl", generated_rows)
        if errors:
            ids = load_golden_set(golden).query_ids()
            generated = load_generated(generated, ids).table(errors)
        return ScoredRun(evaluate(golden, generated, thresholds=thresholds or Thresholds(),
                                  drift_judge=judge or NoDriftJudge(), baseline=baseline, settings=Settings(),
                                  author="tester", source="test"))

    return run


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def demo_store(tmp_path_factory, index_root) -> Path:
    folder = tmp_path_factory.mktemp("demo")
    config = folder / "termgate.toml"
    config.write_text('[drift]\njudge = "none"\n', encoding="utf-8")
    with pytest.MonkeyPatch.context() as env:  # a session fixture: the autouse `isolated` has not run yet
        env.setenv("TERMGATE_CONFIG", str(config))
        env.setenv("TERMGATE_INDEX_DIR", str(index_root))
        seed_demo(folder / "demo.duckdb", ROOT / "data" / "demo")
    return folder / "demo.duckdb"


@pytest.fixture
def db(tmp_path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture(scope="session")
def model_server():
    """The real llama.cpp server serving SmolLM2 (tests/model_server.py), one a session,
    started by the first test that asks for it. Without its venv the test skips with the
    reason, except in CI (`CI=true`), where it fails: a missing install step is red."""
    import os

    from model_server import ModelServer, missing

    reason = missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with ModelServer() as server:
        yield server


# ---------------------------------------------------------------- both backends (issue 15, item 8)

NO_POSTGRES = "PostgreSQL binaries are not installed (apt-get install postgresql; .ci/run installs them)"


@pytest.fixture(scope="session")
def pg():
    """One PostgreSQL server for the session, started by the first test that needs it
    (a DuckDB-only run never starts one) and stopped at the end."""
    from pg_server import PostgresServer, binaries

    if binaries() is None:
        pytest.skip(NO_POSTGRES)
    server = PostgresServer().start()
    yield server
    server.stop()


@pytest.fixture
def pgdb(pg) -> str:
    """The URL of a new, empty database (about 0.1 s)."""
    return pg.url(pg.create_database())


@pytest.fixture(params=["duckdb", "postgresql"])
def backend(request, tmp_path) -> str:
    """A new, empty store on each backend: a DuckDB file's path, or a PostgreSQL URL. A test
    taking it proves its guarantee on both (SPEC §3: "with the same behaviour")."""
    if request.param == "duckdb":
        return str(tmp_path / "store.duckdb")
    return request.getfixturevalue("pgdb")


class StoreTemplates:
    """Stores built once per session and backend, handed to each test as a copy of its own
    (a file copied; a PostgreSQL database made with CREATE DATABASE … TEMPLATE), so a fixture
    that adds slow-hashed accounts and scores a run pays for it once, not per test."""

    def __init__(self, folder: Path):
        self._folder = folder
        self._built: dict[tuple[str, str], tuple[str, object]] = {}

    def copy(self, request, like: str, name: str, build, dest: Path) -> tuple[str, object]:
        """(a copy of store `name` on the backend of `like` (a `backend` value), what
        build(store, folder) returned when it made the store; `folder` is its own, for the
        input files it writes); a file copy goes into `dest`."""
        from termgate.store.postgres import is_postgres

        kind = "postgresql" if is_postgres(like) else "duckdb"
        pg = request.getfixturevalue("pg") if kind == "postgresql" else None
        if (kind, name) not in self._built:
            source = pg.create_database() if pg else str(self._folder / f"{name}.duckdb")
            folder = self._folder / f"{name}-{kind}"
            folder.mkdir()
            self._built[kind, name] = source, build(pg.url(source) if pg else source, folder)
        source, made = self._built[kind, name]
        if pg:
            return pg.url(pg.create_database(template=source)), made
        target = dest / f"{name}.duckdb"
        shutil.copy(source, target)
        return str(target), made


@pytest.fixture(scope="session")
def store_templates(tmp_path_factory) -> StoreTemplates:
    return StoreTemplates(tmp_path_factory.mktemp("templates"))


def run_sql(db, *statements) -> None:
    """Edit a store behind termgate's back, as a person with the file or psql would: each
    statement is SQL or (SQL, params) with `?` placeholders, committed together."""
    from termgate.store.postgres import is_postgres

    pairs = [(s, ()) if isinstance(s, str) else s for s in statements]
    if is_postgres(db):
        import psycopg

        with psycopg.connect(str(db)) as conn:  # committed on leaving the block
            if any("audit_log" in sql for sql, _ in pairs):  # past its append-only trigger, as a superuser can
                conn.execute("SET session_replication_role = replica")
            for sql, params in pairs:
                conn.execute(sql.replace("?", "%s"), list(params))
        return
    import duckdb

    with duckdb.connect(str(db)) as con:
        for sql, params in pairs:
            con.execute(sql, list(params))


POSTGRES_FIXTURES = {"pg", "pgdb"}


def _page_helpers(module) -> set[str]:
    """Names of a test module's functions and fixtures that run a dashboard page (AppTest)."""
    import inspect

    found = set()
    for name, value in vars(module).items():
        function = getattr(value, "__wrapped__", value)  # a fixture's own function
        if inspect.isfunction(function) and function.__module__ == module.__name__:
            try:
                if "AppTest" in inspect.getsource(function):
                    found.add(name)
            except OSError:
                continue
    return found


def pytest_collection_modifyitems(config, items):
    """Markers a test earns by what it uses, so nobody has to remember them: `postgres` for
    `pg`, `pgdb` or the postgresql side of `backend`; `dashboard` for a test that runs a
    page in Streamlit's AppTest, itself or through a helper or fixture of its module. The
    other tiers (browser, model, install) are marked in their modules."""
    import inspect
    import re

    helpers: dict[str, set[str]] = {}
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        names = set(getattr(item, "fixturenames", ()))
        if POSTGRES_FIXTURES & names or any(isinstance(v, str) and v == "postgresql" for v in params.values()):
            item.add_marker(pytest.mark.postgres)
        module = getattr(item, "module", None)
        if module is None:
            continue
        if module.__name__ not in helpers:
            helpers[module.__name__] = _page_helpers(module)
        own = helpers[module.__name__]
        source = inspect.getsource(item.function)
        if own & names or any(re.search(rf"\b{re.escape(h)}\(", source) for h in own) or "AppTest" in source:
            item.add_marker(pytest.mark.dashboard)
