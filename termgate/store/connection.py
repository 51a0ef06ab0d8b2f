"""Connections, retries on a busy store, and numbered schema migrations."""

from __future__ import annotations

import math
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..environment import setting, setting_source
from ..errors import StoreBusyError, UsageError
from ..sql import duckdb_memory_limit, sql_literal
from .records import adopt_unchained, canonical_account_names
from .schema_record import damaged_record, newer_schema

MIGRATIONS: list[tuple[int, list[str]]] = [
    (1, [
        """CREATE TABLE runs (
            run_id VARCHAR PRIMARY KEY, created_at VARCHAR NOT NULL, name VARCHAR,
            prompt_version VARCHAR, golden_path VARCHAR, generated_path VARCHAR,
            golden_hash VARCHAR, generated_hash VARCHAR, content_hash VARCHAR NOT NULL,
            domains VARCHAR[], high_risk_domains VARCHAR[], domain_context VARCHAR,
            drift_judge VARCHAR, drift_judge_config VARCHAR, author VARCHAR,
            evalcore_version VARCHAR, baseline_id VARCHAR, gate_decision VARCHAR NOT NULL,
            gate_reasons VARCHAR[], total_queries INTEGER, passed INTEGER, failed INTEGER,
            errored INTEGER, aggregate_precision DOUBLE, aggregate_recall DOUBLE,
            aggregate_f1 DOUBLE, mean_term_drift_score DOUBLE, micro_precision DOUBLE,
            micro_recall DOUBLE, micro_f1 DOUBLE, micro_tp BIGINT, micro_fp BIGINT,
            micro_fn BIGINT, regression_detected BOOLEAN, regressed_queries VARCHAR[],
            improved_queries VARCHAR[], added_queries VARCHAR[], removed_queries VARCHAR[],
            delta_summary VARCHAR, golden_set_changed BOOLEAN, mean_f1_delta DOUBLE,
            thresholds VARCHAR, recommendations VARCHAR[])""",
        """CREATE TABLE query_results (
            run_id VARCHAR NOT NULL, position INTEGER NOT NULL, query_id VARCHAR NOT NULL,
            query VARCHAR, domain VARCHAR, critical BOOLEAN, precision DOUBLE, recall DOUBLE,
            f1 DOUBLE, term_drift_score DOUBLE, passed BOOLEAN, failure_reasons VARCHAR[],
            notes VARCHAR[], error VARCHAR, n_generated INTEGER, n_expected INTEGER,
            n_tp INTEGER, n_fp INTEGER, n_fn INTEGER, n_drift INTEGER,
            regression_status VARCHAR, baseline_f1 DOUBLE, generated_terms VARCHAR[],
            generated_weights DOUBLE[], expected_terms VARCHAR[], expected_min_weights DOUBLE[],
            true_positives VARCHAR[], drift_terms VARCHAR[], drift_reasons VARCHAR[], unjudged_terms VARCHAR[])""",
        """CREATE TABLE term_rows (
            run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, term VARCHAR NOT NULL,
            kind VARCHAR NOT NULL, weight DOUBLE, min_weight DOUBLE, drift BOOLEAN,
            unjudged BOOLEAN, reason VARCHAR, gen_pos INTEGER, exp_pos INTEGER)""",
    ]),
]
MIGRATIONS.append((2, [
    """CREATE TABLE embedding_cache (
        model VARCHAR NOT NULL, text VARCHAR NOT NULL, vector FLOAT[] NOT NULL,
        created_at VARCHAR, PRIMARY KEY (model, text))""",
    """CREATE TABLE judge_log (
        run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, judge VARCHAR NOT NULL,
        prompt VARCHAR, reply VARCHAR, verdicts VARCHAR, error VARCHAR)""",
]))
MIGRATIONS.append((3, [
    """CREATE TABLE users (
        name VARCHAR PRIMARY KEY, role VARCHAR NOT NULL, domains VARCHAR[], password_hash VARCHAR NOT NULL,
        disabled BOOLEAN NOT NULL DEFAULT false, created_at VARCHAR)""",
    """CREATE TABLE audit_log (
        seq BIGINT PRIMARY KEY, created_at VARCHAR NOT NULL, kind VARCHAR NOT NULL, actor VARCHAR NOT NULL,
        run_id VARCHAR, content_hash VARCHAR, decision VARCHAR, comment VARCHAR, payload VARCHAR,
        prev_hash VARCHAR NOT NULL, record_hash VARCHAR NOT NULL)""",
]))
MIGRATIONS.append((4, [
    """CREATE TABLE llm_cache (
        key VARCHAR PRIMARY KEY, model VARCHAR, reply VARCHAR NOT NULL, prompt_tokens INTEGER,
        completion_tokens INTEGER, created_at VARCHAR)""",
    """CREATE TABLE harness_outputs (
        run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, prompt VARCHAR, reply VARCHAR, terms VARCHAR[],
        error VARCHAR)""",
    "ALTER TABLE runs ADD COLUMN usage VARCHAR",
]))
MIGRATIONS.append((5, [
    """CREATE TABLE prompt_eval_runs (
        eval_id VARCHAR PRIMARY KEY, created_at VARCHAR NOT NULL, name VARCHAR, dataset_path VARCHAR,
        dataset_hash VARCHAR NOT NULL, prompt_version VARCHAR, model VARCHAR, judge_model VARCHAR,
        pass_threshold DOUBLE, extra_criteria VARCHAR, total_cases INTEGER, scored_cases INTEGER,
        average_score DOUBLE, stdev_score DOUBLE, pass_rate DOUBLE, usage VARCHAR)""",
    """CREATE TABLE prompt_eval_results (
        eval_id VARCHAR NOT NULL, case_index INTEGER NOT NULL, scenario VARCHAR, prompt_inputs VARCHAR,
        solution_criteria VARCHAR, output VARCHAR, score DOUBLE, passed BOOLEAN, reasoning VARCHAR,
        strengths VARCHAR, weaknesses VARCHAR, violated_extra_criteria VARCHAR, error VARCHAR)""",
]))
MIGRATIONS.append((6, ["ALTER TABLE runs ADD COLUMN statistics VARCHAR",
                       "ALTER TABLE query_results ADD COLUMN noise_floor DOUBLE",
                       "ALTER TABLE query_results ADD COLUMN within_noise BOOLEAN"]))
MIGRATIONS.append((7, [
    # The chain's head, moved in the same transaction as every append: removing the last
    # records (or all of them) no longer looks like an intact, shorter chain.
    "CREATE TABLE audit_head (id INTEGER PRIMARY KEY, seq BIGINT NOT NULL, record_hash VARCHAR NOT NULL)",
    "INSERT INTO audit_head SELECT 1, seq, record_hash FROM audit_log ORDER BY seq DESC LIMIT 1",
]))


MIGRATIONS.append((8, [
    # Accounts carry aliases; failed sign-ins are counted outside the chain; everything
    # stored so far is adopted into the chain by one record (SPEC §4).
    "ALTER TABLE users ADD COLUMN aliases VARCHAR[] DEFAULT []",
    "CREATE TABLE signin_failures (name VARCHAR PRIMARY KEY, failures INTEGER NOT NULL, last_at DOUBLE NOT NULL)",
    canonical_account_names,
    adopt_unchained,
]))
MIGRATIONS.append((9, [
    # the golden file as given, once per revision: the run's pages can show each entry at
    # its line after an upload's temporary folder is gone (SPEC §5: nothing given is lost)
    """CREATE TABLE golden_files (golden_hash VARCHAR PRIMARY KEY, path VARCHAR, content VARCHAR NOT NULL,
        stored_at VARCHAR)""",
]))
MIGRATIONS.append((10, [
    # which termgate applied each migration: an older client meeting a newer store can say
    # which version to install instead of misreading tables it does not know
    "ALTER TABLE schema_migrations ADD COLUMN IF NOT EXISTS evalcore_version VARCHAR",
]))
MIGRATIONS.append((11, [
    # per-term lexical-resource entries (WordNet), as embedding_cache keeps vectors; the
    # PostgreSQL store's migration 11 also adds indexes, which a DuckDB file does not need
    """CREATE TABLE lexicon_cache (source VARCHAR NOT NULL, term VARCHAR NOT NULL, entry VARCHAR NOT NULL,
        created_at VARCHAR, PRIMARY KEY (source, term))""",
]))
MIGRATIONS.append((12, [
    # SPEC §1.1, §2 rule 8: the golden set's name (its revision is golden_hash), each query's
    # golden entry digest, and the queries whose entry changed between two revisions
    "ALTER TABLE runs ADD COLUMN golden_name VARCHAR",
    "ALTER TABLE runs ADD COLUMN golden_changed_queries VARCHAR[]",
    "ALTER TABLE query_results ADD COLUMN golden_entry_hash VARCHAR",
]))
MIGRATIONS.append((13, [
    # nothing to change in a store file: verdicts on terms are audit records (kind verdict);
    # the PostgreSQL store's migration 13 adds the dashboard role's door for them
]))

# Each cache entry's writer (issue 31 item 3, store.cache_writers): the key gains the
# writer, so one key can hold several writers' entries. DuckDB cannot change a primary key,
# so each table is made again; rows stored before keep the unknown writer "".
CACHE_TABLES = {
    "embedding_cache": "model VARCHAR NOT NULL, text VARCHAR NOT NULL, vector FLOAT[] NOT NULL, created_at VARCHAR",
    "llm_cache": "key VARCHAR NOT NULL, model VARCHAR, reply VARCHAR NOT NULL, prompt_tokens INTEGER, "
                 "completion_tokens INTEGER, created_at VARCHAR",
    "lexicon_cache": "source VARCHAR NOT NULL, term VARCHAR NOT NULL, entry VARCHAR NOT NULL, created_at VARCHAR",
}
CACHE_KEYS = {"embedding_cache": "model, text", "llm_cache": "key", "lexicon_cache": "source, term"}


def add_cache_writers(con: duckdb.DuckDBPyConnection) -> None:
    """Migration 14 on a store file: a `writer` column in each cache's key (a table that
    has one already, after a hand-deleted schema_migrations row, is left as it is)."""
    for table, columns in CACHE_TABLES.items():
        if _has_column(con, table, "writer"):
            continue
        names = ", ".join(part.split()[0] for part in columns.split(", "))
        con.execute(f"CREATE TABLE {table}_new ({columns}, writer VARCHAR NOT NULL, "
                    f"PRIMARY KEY ({CACHE_KEYS[table]}, writer))")  # constant names
        con.execute(f"INSERT INTO {table}_new SELECT {names}, '' FROM {table}")
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE {table}_new RENAME TO {table}")


MIGRATIONS.append((14, [add_cache_writers]))
MIGRATIONS.append((15, [
    # record-hash version 2 (SPEC §4, store.records.HASH_VERSION): every record appended from
    # now on states its canonical text, which its hash covers; older records stay version 1
    # (NULL). The PostgreSQL store's migration 15 also has the server check each record.
    "ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS hash_version INTEGER",
    "ALTER TABLE audit_log ADD COLUMN IF NOT EXISTS canonical VARCHAR",
]))
MIGRATIONS.append((16, [
    # accounts' signing keys sealed by their passwords (SPEC §4, termgate.signing.seal): kept
    # outside the audit chain, whose records (and the attestations that carry them) hold only
    # the public keys; a sealed key opens only as the public key the chain registered
    "CREATE TABLE IF NOT EXISTS sealed_keys (fingerprint VARCHAR PRIMARY KEY, holder VARCHAR NOT NULL, "
    "sealed VARCHAR NOT NULL, created_at VARCHAR)",
]))
MIGRATIONS.append((17, [
    # the retrieval effect (issue 34): the run's summary (engine, corpus, qrels, means,
    # statistics, each variant's run-file SHA-256) as canonical JSON, and per judged query and
    # variant its metrics and top ids (termgate.retrieval.outcome.ROWS_SCHEMA); both under the
    # chain's digests only when a run has them (store.digest). Like 15 and 16, it tolerates a
    # re-run (a schema_migrations row deleted by hand); the PostgreSQL twin is typed the same
    "ALTER TABLE runs ADD COLUMN IF NOT EXISTS retrieval VARCHAR",
    """CREATE TABLE IF NOT EXISTS retrieval_results (
        run_id VARCHAR NOT NULL, query_id VARCHAR NOT NULL, variant VARCHAR NOT NULL, ndcg DOUBLE, recall DOUBLE,
        mrr DOUBLE, precision DOUBLE, top_ids VARCHAR[], top_grades INTEGER[], top_titles VARCHAR[],
        brought_by VARCHAR[], PRIMARY KEY (run_id, query_id, variant))""",
]))
SCHEMA_VERSION = MIGRATIONS[-1][0]


def _refuse_newer(con: duckdb.DuckDBPyConnection, current: int) -> None:
    """UsageError when the store's schema is newer than this termgate knows (SPEC §5: exit 2,
    nothing read or written as if it were older)."""
    if current <= SCHEMA_VERSION:
        return
    try:
        wrote = con.execute("SELECT evalcore_version FROM schema_migrations WHERE evalcore_version IS NOT NULL "
                            "ORDER BY version DESC LIMIT 1").fetchall()
    except duckdb.Error:
        wrote = []
    where = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
    raise newer_schema(where[0][0] if where else "?", current, SCHEMA_VERSION, wrote[0][0] if wrote else None)


def _version() -> str:
    from .. import __version__
    return __version__



def _timeout() -> float:
    """TERMGATE_STORE_TIMEOUT as seconds; anything but a finite number ≥ 0 is a usage error."""
    value = setting("STORE_TIMEOUT", "30")
    try:
        seconds = float(value)
    except ValueError:
        seconds = math.nan
    if not math.isfinite(seconds) or seconds < 0:
        raise UsageError(f"{setting_source('STORE_TIMEOUT')}={value!r}: expected seconds, such as 30")
    return seconds


def _is_lock_error(exc: Exception) -> bool:
    """A lock another process holds, or a connection of this process open on the file in the
    other mode (DuckDB opens a file read-only or writable per process: a dashboard session
    signing in while another session's read is open meets this); both pass."""
    text = str(exc).lower()
    return "lock" in text or "conflicting" in text or "different configuration" in text


def _retry_while_locked(path: str, open_store):
    """open_store() until it succeeds; a lock held by another process is retried for
    TERMGATE_STORE_TIMEOUT seconds, then reported as a busy store."""
    deadline = time.monotonic() + _timeout()
    delay = 0.05
    while True:
        try:
            return open_store()
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            if not _is_lock_error(exc):
                raise UsageError(f"cannot open store {path}: {exc}") from None
            if time.monotonic() >= deadline:
                raise StoreBusyError(f"store busy: {path} is locked by another process "
                                     f"(waited {_timeout():.0f} s); try again") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


def store_write_error(path, exc: Exception) -> UsageError:
    """A failed write to the store as one line naming its cause (SPEC §5: a full disk is
    exit 2 with the cause, and nothing half-written: the transaction rolled back)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if "no space left" in text.lower() or "disk is full" in text.lower() or "enospc" in text.lower():
        return UsageError(f"cannot write the store {path}: no space left on device; nothing was stored")
    return UsageError(f"cannot write the store {path}: {text}; nothing was stored")


WRITE_ROW_GROUP = 32_768
"""Rows per row group the scorer writes (DuckDB's default is 122,880; an ATTACH
option for this session's appends, not a property of the file). A 100k-query run then
fills several row groups, which DuckDB compresses on every core while inserting, rather
than one row group compressed on one thread at commit (0.7 s; docs/performance.md)."""


def attach(con: duckdb.DuckDBPyConnection, path: str, alias: str) -> None:
    """ATTACH the store file for writing to another DuckDB database (the scorer's)."""
    _retry_while_locked(path, lambda: con.execute(
        f"ATTACH {sql_literal(path)} AS {alias} (ROW_GROUP_SIZE {WRITE_ROW_GROUP})"))


def _open(path: str, read_only: bool) -> duckdb.DuckDBPyConnection:
    return _retry_while_locked(path, lambda: duckdb.connect(path, read_only=read_only))


def migrate(con: duckdb.DuckDBPyConnection) -> None:
    if not _has_table(con, "schema_migrations") and con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE database_name = current_database()").fetchall()[0][0]:
        where = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()").fetchall()
        raise UsageError(f"--db {where[0][0] if where else '?'}: a DuckDB file but not a termgate store "
                         "(no schema_migrations); nothing was written to it")
    con.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at VARCHAR)")
    current = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchall()[0][0]
    _refuse_newer(con, current)
    for version, statements in MIGRATIONS:
        if version <= current:
            continue
        con.execute("BEGIN TRANSACTION")
        try:
            for step in statements:  # SQL, or a function of the connection (same transaction)
                step(con) if callable(step) else con.execute(step)
        except duckdb.CatalogException as exc:
            con.execute("ROLLBACK")
            if "already exists" not in str(exc):
                raise
            where = con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()")
            raise damaged_record(where.fetchall()[0][0], current, version, exc) from None
        if _has_column(con, "schema_migrations", "evalcore_version"):
            con.execute("INSERT INTO schema_migrations (version, applied_at, evalcore_version) "
                        "VALUES (?, CAST(current_timestamp AS VARCHAR), ?)", [version, _version()])
        else:
            con.execute("INSERT INTO schema_migrations (version, applied_at) "
                        "VALUES (?, CAST(current_timestamp AS VARCHAR))", [version])
        con.execute("COMMIT")


def shown_db(db_path: str | Path) -> str:
    """The --db value as a message may show it: a PostgreSQL URL with its password blanked
    (never printed, SPEC §5), a file path as given."""
    from .postgres import is_postgres, shown

    return shown(str(db_path)) if is_postgres(db_path) else str(db_path)


_OTHER_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")
_KEYWORD_DSN = re.compile(r"(?:^|\s)(?:password|passfile|host|hostaddr|dbname|user|port|service)\s*=", re.IGNORECASE)


def refuse_other_urls(db_path: str | Path) -> None:
    """UsageError for a --db that reads as a URL but not as a PostgreSQL one
    (`POSTGRESQL://ci:PW@host/db`, `postgresql+psycopg://...`, `https://...`), or as a libpq
    keyword string (`host=h password=PW`): it is no file path to create folders for or to
    print, password and all; a URL is shown redacted, a keyword string not at all (SPEC §5)."""
    from ..redact import redact_url
    from .postgres import is_postgres

    path = str(db_path)
    if _KEYWORD_DSN.search(path):
        raise UsageError("--db: reads as a libpq connection string (host=... password=...), which termgate does not "
                         "take; give postgresql://user@host/db (the password from PGPASSWORD or a service file). "
                         "Its value is not shown: it may hold a password")
    head = _OTHER_URL.match(path)
    if head and not is_postgres(path):
        shown = head.group(0) + (redact_url(path) or path)[head.end():]  # the scheme as typed
        raise UsageError(f"--db {shown}: not a store: give a DuckDB file path, or a PostgreSQL URL "
                         "beginning postgresql:// or postgres:// (in lower case)")


def exists(db_path: str | Path) -> bool:
    """Whether there is a store to read: a PostgreSQL URL always (a new database is
    initialised on first use), a file path when the file is there."""
    from .postgres import is_postgres

    refuse_other_urls(db_path)
    return is_postgres(db_path) or Path(str(db_path)).exists()


@contextmanager
def connect(db_path: str | Path, write: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A short-lived connection to a store file; a writer creates and migrates it when
    needed. (Readers of either backend go through store.reading.connect.)"""
    path = str(db_path)
    from .postgres import is_postgres

    if is_postgres(path):
        from ..errors import TermgateError
        raise TermgateError("internal: a PostgreSQL store is read through store.reading.connect with the rows "
                            "named, and written through store.backends")
    refuse_other_urls(path)
    if not write and not Path(path).exists():
        raise UsageError(f"no store at {path}: run `termgate evaluate` first or pass --db")
    _check_file(path)
    if write:
        make_folder(path)
    con = _open(path, read_only=not write)
    try:
        # DuckDB's default buffer pool is 80% of RAM; writers here stream Arrow chunks and
        # need little, so cap it to keep `evaluate`'s peak memory predictable.
        con.execute(f"SET memory_limit = '{duckdb_memory_limit('1GB')}'")
        if write:
            migrate(con)
        else:
            version = con.execute(
                "SELECT max(version) FROM schema_migrations").fetchall()[0][0] if _has_table(con, "schema_migrations") else 0
            _refuse_newer(con, version or 0)
            if (version or 0) < SCHEMA_VERSION:
                con.close()
                con = _open(path, read_only=False)
                migrate(con)
        yield con
    finally:
        con.close()


def _has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    return bool(con.execute("SELECT count(*) FROM duckdb_columns() WHERE table_name = ? AND column_name = ? "
                            "AND database_name = current_database()", [table, column]).fetchall()[0][0])


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether this database holds the table (duckdb_tables() answers in a fraction of the
    time information_schema takes, and every connection asks)."""
    return bool(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ? "
                            "AND database_name = current_database()", [name]).fetchall()[0][0])




DUCKDB_MAGIC = b"DUCK"
"""DuckDB's file header carries this at offset 8."""


def make_folder(path: str | Path) -> None:
    """Make the store file's missing folders; UsageError (one line) when that is refused."""
    folder = Path(str(path)).parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--db {path}: cannot make its folder {folder} ({exc.strerror}); nothing was stored") from None


def _check_folder(path: str) -> None:
    """UsageError unless a new store can be made at `path`: its nearest existing folder is a
    folder this process may write in (the missing ones are made), found before any work."""
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.exists(folder) and os.path.dirname(folder) != folder:
        if os.path.lexists(folder):  # a dangling link
            break
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):
        raise UsageError(f"--db {path}: {folder} is not a folder, so no store can be made there")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--db {path}: cannot make a store in {folder} (not writable)")


def _check_file(path: str) -> None:
    """UsageError unless `path` is absent, or a regular file with DuckDB's header (so a
    FIFO never hangs a command and a JSON file is never opened as a store)."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UsageError(f"--db {path}: cannot use it ({exc.strerror})") from None
    if not stat.S_ISREG(st.st_mode):
        raise UsageError(f"--db {path}: not a regular file; give a DuckDB store file (or postgresql://...)")
    if st.st_size == 0:
        raise UsageError(f"--db {path}: an empty file, not a termgate store; remove it or give another path")
    with open(path, "rb") as handle:
        head = handle.read(16)
    if head[8:12] != DUCKDB_MAGIC:
        raise UsageError(f"--db {path}: not a termgate store (not a DuckDB file); nothing was written to it")


def schema_version(db_path: str | Path) -> tuple[int | None, str | None]:
    """(schema version, the termgate version that applied the last migration) of a store
    file, read without migrating it; (None, None) when there is no file."""
    path = str(db_path)
    refuse_other_urls(path)
    if not os.path.exists(path):
        return None, None
    check_store_path(path)
    con = _open(path, read_only=True)
    try:
        version = con.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchall()[0][0]
        by = con.execute("SELECT evalcore_version FROM schema_migrations WHERE evalcore_version IS NOT NULL "
                         "ORDER BY version DESC LIMIT 1").fetchall() if _has_column(
                             con, "schema_migrations", "evalcore_version") else []
    finally:
        con.close()
    return version, by[0][0] if by else None


def check_store_path(db_path: str | Path) -> None:
    """UsageError unless `db_path` is absent (a new store) or a termgate store: a DuckDB
    file holding termgate's schema_migrations (SPEC §5). Reads the header, then opens the
    file read-only (a busy store is waited for, as everywhere). A PostgreSQL store is
    reached, and initialised on first use when this role may create tables."""
    path = str(db_path)
    from .postgres import is_postgres, migrate_pg

    if is_postgres(path):
        migrate_pg(path)
        return
    refuse_other_urls(path)
    if not os.path.exists(path):
        _check_folder(path)
        return
    _check_file(path)
    con = _open(path, read_only=True)
    try:
        if not _has_table(con, "schema_migrations"):
            raise UsageError(f"--db {path}: a DuckDB file but not a termgate store (no schema_migrations); "
                             "nothing was written to it")
    finally:
        con.close()


def ensure_store(db_path: str | Path) -> None:
    """Create the store (a file, or termgate's schema in a PostgreSQL database) and apply
    pending migrations."""
    from .postgres import is_postgres, migrate_pg

    if is_postgres(db_path):
        migrate_pg(str(db_path))
        return
    with connect(db_path, write=True):
        pass
