"""The team store on PostgreSQL: connections by URL, the schema, and numbered migrations,
each in its own transaction under an advisory lock (so two CI runners meeting an empty
database create it once).

The schema is the DuckDB store's, column for column (`tests/test_pg_store.py` compares
them): reads fetch the rows they need into an in-memory DuckDB and run the DuckDB store's SQL
there (store.pg_rows), writes are store.pg_runs and store.pg_rows.insert_rows.

All SQL here is constant text with bound parameters. The password comes from the URL,
PGPASSWORD or a service file (libpq reads them); it is never stored or printed: every
message shows the URL with its credentials blanked (termgate.redact).
"""

from __future__ import annotations

from urllib.parse import urlsplit

from ..errors import UsageError
from ..redact import redact_text, redact_url, url_secrets
from .records import CANONICAL_FIELDS as _CANONICAL_FIELDS, MAX_PAYLOAD_DEPTH
from .schema_record import damaged_record, newer_schema

__all__ = ["is_postgres", "shown", "connect_pg", "migrate_pg", "schema_version_pg", "roles_sql", "PG_MIGRATIONS",
           "PG_SCHEMA_VERSION", "ADVISORY_KEY"]

ADVISORY_KEY = 0x6576616C636F7265
"""pg_advisory_xact_lock key of termgate's migrations ("termgate" in ASCII)."""

# What every door to the audit log does: lock the chain's head and check that the caller linked
# the record onto it (a moved head is SQLSTATE 40001: read it again), then, with the record
# in, move the head onto it.
_LOCK_HEAD = """    SELECT seq, record_hash INTO head_seq, head_hash FROM audit_head WHERE id = 1 FOR UPDATE;
    IF NOT FOUND THEN head_seq := 0; head_hash := repeat('0', 64); END IF;
    IF p_seq <> head_seq + 1 OR p_prev_hash <> head_hash THEN
        RAISE EXCEPTION 'evalcore: the audit chain moved (its head is record %): read it again', head_seq
            USING ERRCODE = '40001';
    END IF;
"""
_MOVE_HEAD = """    INSERT INTO audit_head VALUES (1, p_seq, p_record_hash)
        ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, record_hash = excluded.record_hash;
    RETURN p_seq;
END $fn$"""

_APPEND = """CREATE FUNCTION {name}(p_seq bigint, p_prev_hash text, p_created_at text, p_actor text, p_run_id text,
        p_content_hash text, p_payload text, p_record_hash text{args}) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
DECLARE head_seq bigint := 0; head_hash text := repeat('0', 64);
BEGIN
{lock_head}    IF NOT EXISTS (SELECT 1 FROM runs WHERE run_id = p_run_id AND content_hash = p_content_hash) THEN
        RAISE EXCEPTION 'evalcore: no stored run % with content hash %', p_run_id, p_content_hash;
    END IF;
    {check}
    INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, payload, prev_hash,
                           record_hash)
        VALUES (p_seq, p_created_at, '{kind}', p_actor, p_run_id, p_content_hash, {values}, p_payload, p_prev_hash,
                p_record_hash);
{move_head}"""

# The DuckDB store's schema at its version 10, as one migration: no PostgreSQL store is
# older. Later migrations are numbered as the DuckDB ones are and keep the two in step.
PG_MIGRATIONS: list[tuple[int, list[str]]] = [(10, [
    """CREATE TABLE runs (
        run_id text PRIMARY KEY, created_at text NOT NULL, name text, prompt_version text, golden_path text,
        generated_path text, golden_hash text, generated_hash text, content_hash text NOT NULL, domains text[],
        high_risk_domains text[], domain_context text, drift_judge text, drift_judge_config text, author text,
        evalcore_version text, baseline_id text, gate_decision text NOT NULL, gate_reasons text[],
        total_queries integer, passed integer, failed integer, errored integer, aggregate_precision double precision,
        aggregate_recall double precision, aggregate_f1 double precision, mean_term_drift_score double precision,
        micro_precision double precision, micro_recall double precision, micro_f1 double precision, micro_tp bigint,
        micro_fp bigint, micro_fn bigint, regression_detected boolean, regressed_queries text[],
        improved_queries text[], added_queries text[], removed_queries text[], delta_summary text,
        golden_set_changed boolean, mean_f1_delta double precision, thresholds text, recommendations text[],
        usage text, statistics text)""",
    """CREATE TABLE query_results (
        run_id text NOT NULL, position integer NOT NULL, query_id text NOT NULL, query text, domain text,
        critical boolean, precision double precision, recall double precision, f1 double precision,
        term_drift_score double precision, passed boolean, failure_reasons text[], notes text[], error text,
        n_generated integer, n_expected integer, n_tp integer, n_fp integer, n_fn integer, n_drift integer,
        regression_status text, baseline_f1 double precision, generated_terms text[],
        generated_weights double precision[], expected_terms text[], expected_min_weights double precision[],
        true_positives text[], drift_terms text[], drift_reasons text[], unjudged_terms text[],
        noise_floor double precision, within_noise boolean)""",
    """CREATE TABLE term_rows (
        run_id text NOT NULL, query_id text NOT NULL, term text NOT NULL, kind text NOT NULL,
        weight double precision, min_weight double precision, drift boolean, unjudged boolean, reason text,
        gen_pos integer, exp_pos integer)""",
    """CREATE TABLE embedding_cache (
        model text NOT NULL, text text NOT NULL, vector real[] NOT NULL, created_at text, PRIMARY KEY (model, text))""",
    """CREATE TABLE judge_log (
        run_id text NOT NULL, query_id text NOT NULL, judge text NOT NULL, prompt text, reply text, verdicts text,
        error text)""",
    """CREATE TABLE users (
        name text PRIMARY KEY, role text NOT NULL, domains text[], password_hash text NOT NULL,
        disabled boolean NOT NULL DEFAULT false, created_at text, aliases text[] DEFAULT '{}')""",
    """CREATE TABLE audit_log (
        seq bigint PRIMARY KEY, created_at text NOT NULL, kind text NOT NULL, actor text NOT NULL, run_id text,
        content_hash text, decision text, comment text, payload text, prev_hash text NOT NULL UNIQUE,
        record_hash text NOT NULL)""",
    "CREATE TABLE audit_head (id integer PRIMARY KEY, seq bigint NOT NULL, record_hash text NOT NULL)",
    """CREATE TABLE llm_cache (
        key text PRIMARY KEY, model text, reply text NOT NULL, prompt_tokens integer, completion_tokens integer,
        created_at text)""",
    """CREATE TABLE harness_outputs (
        run_id text NOT NULL, query_id text NOT NULL, prompt text, reply text, terms text[], error text)""",
    """CREATE TABLE prompt_eval_runs (
        eval_id text PRIMARY KEY, created_at text NOT NULL, name text, dataset_path text, dataset_hash text NOT NULL,
        prompt_version text, model text, judge_model text, pass_threshold double precision, extra_criteria text,
        total_cases integer, scored_cases integer, average_score double precision, stdev_score double precision,
        pass_rate double precision, usage text)""",
    """CREATE TABLE prompt_eval_results (
        eval_id text NOT NULL, case_index integer NOT NULL, scenario text, prompt_inputs text,
        solution_criteria text, output text, score double precision, passed boolean, reasoning text,
        strengths text, weaknesses text, violated_extra_criteria text, error text)""",
    "CREATE TABLE signin_failures (name text PRIMARY KEY, failures integer NOT NULL, last_at double precision NOT NULL)",
    """CREATE TABLE golden_files (
        golden_hash text PRIMARY KEY, path text, content text NOT NULL, stored_at text)""",
    # The narrow doors of least privilege: a CI role appends a stored run's header, a
    # dashboard role a sign-off decision, and nothing else reaches the audit log. Each
    # links the record onto the head under a row lock (the caller computed the record's
    # hash over this seq and prev_hash: a moved head is SQLSTATE 40001, read it again);
    # the primary key on seq and the unique prev_hash stop two first appends at once.
    _APPEND.format(lock_head=_LOCK_HEAD, move_head=_MOVE_HEAD, name="evalcore_append_run_header", kind="run",
                   args="", values="NULL, NULL",
                   check="""IF EXISTS (SELECT 1 FROM audit_log WHERE kind = 'run' AND run_id = p_run_id) THEN
        RAISE EXCEPTION 'evalcore: run % has a header already', p_run_id;
    END IF;"""),
    _APPEND.format(lock_head=_LOCK_HEAD, move_head=_MOVE_HEAD, name="evalcore_append_decision", kind="decision",
                   args=", p_decision text, p_comment text", values="p_decision, p_comment",
                   check="""IF p_decision NOT IN ('approve', 'reject') THEN
        RAISE EXCEPTION 'evalcore: a decision is approve or reject, not %', p_decision;
    END IF;"""),
    "REVOKE ALL ON FUNCTION evalcore_append_run_header(bigint, text, text, text, text, text, text, text) FROM PUBLIC",
    "REVOKE ALL ON FUNCTION evalcore_append_decision(bigint, text, text, text, text, text, text, text, text, text) "
    "FROM PUBLIC",
])]

# The door of a first single sign-on (termgate.governance.sso): the dashboard role binds an identity
# provider's issuer and subject to an account as an alias, and nothing else about accounts.
# Only an `oidc+` alias bound to nobody yet, onto an account with no other subject at that
# issuer, appended to its aliases (the caller sends the full new list, as the chain record's
# account state has it); the record goes onto the chain as _APPEND's do.
_BIND_SSO = """CREATE FUNCTION evalcore_bind_sso(p_seq bigint, p_prev_hash text, p_created_at text, p_actor text,
        p_payload text, p_record_hash text, p_alias text, p_issuer_prefix text, p_aliases text[]) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
DECLARE head_seq bigint := 0; head_hash text := repeat('0', 64); old text[];
BEGIN
""" + _LOCK_HEAD + """    SELECT coalesce(aliases, '{}') INTO old FROM users WHERE name = p_actor AND NOT disabled FOR UPDATE;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'evalcore: no enabled account %', p_actor;
    END IF;
    IF left(p_issuer_prefix, 5) <> 'oidc+' OR left(p_alias, length(p_issuer_prefix)) <> p_issuer_prefix
            OR length(p_alias) = length(p_issuer_prefix) THEN
        RAISE EXCEPTION 'evalcore: % is not an identity provider alias', p_alias;
    END IF;
    IF EXISTS (SELECT 1 FROM users WHERE p_alias = ANY(aliases) OR name = p_alias) THEN
        RAISE EXCEPTION 'evalcore: the identity % is bound already', p_alias;
    END IF;
    IF EXISTS (SELECT 1 FROM unnest(old) a WHERE left(a, length(p_issuer_prefix)) = p_issuer_prefix) THEN
        RAISE EXCEPTION 'evalcore: account % is bound to another subject at this issuer', p_actor;
    END IF;
    IF cardinality(p_aliases) <> cardinality(old) + 1 OR NOT p_aliases @> (old || p_alias)
            OR NOT (old || p_alias) @> p_aliases THEN
        RAISE EXCEPTION 'evalcore: the new aliases must be the old ones and %', p_alias;
    END IF;
    UPDATE users SET aliases = p_aliases WHERE name = p_actor;
    INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, payload, prev_hash,
                           record_hash)
        VALUES (p_seq, p_created_at, 'user_sso_bind', p_actor, NULL, NULL, NULL, NULL, p_payload, p_prev_hash,
                p_record_hash);
""" + _MOVE_HEAD

PG_MIGRATIONS.append((11, [
    # What the reads name: one run's rows without scanning every run's. A run's rows arrive
    # together (one COPY), so a block-range index finds them at a fraction of a B-tree's cost
    # to the writer (a 100k-query run writes about a million term rows); ranges written since
    # the last summary are scanned, and autosummarize keeps that tail short.
    *(f"CREATE INDEX {table}_run ON {table} USING brin ({column}) WITH (pages_per_range = 16, autosummarize = on)"
      for table, column in (("query_results", "run_id"), ("term_rows", "run_id"), ("harness_outputs", "run_id"),
                            ("judge_log", "run_id"), ("prompt_eval_results", "eval_id"))),
    # per-term lexical-resource entries (WordNet), as embedding_cache keeps vectors
    """CREATE TABLE lexicon_cache (
        source text NOT NULL, term text NOT NULL, entry text NOT NULL, created_at text, PRIMARY KEY (source, term))""",
    _BIND_SSO,
    "REVOKE ALL ON FUNCTION evalcore_bind_sso(bigint, text, text, text, text, text, text, text, text[]) FROM PUBLIC",
]))
PG_MIGRATIONS.append((12, [
    "ALTER TABLE runs ADD COLUMN golden_name text",
    "ALTER TABLE runs ADD COLUMN golden_changed_queries text[]",
    "ALTER TABLE query_results ADD COLUMN golden_entry_hash text",
]))
# Verdicts on terms (issue 19 item 1): the dashboard role records them only through this
# door, as it records decisions. Besides the run and its content hash, the record must be a
# label the verdict commands know on a term the run generated for that query, by an enabled
# account that may record verdicts: a rogue dashboard cannot invent one on a term never shown.
PG_MIGRATIONS.append((13, [
    _APPEND.format(lock_head=_LOCK_HEAD, move_head=_MOVE_HEAD, name="evalcore_append_verdict", kind="verdict",
                   args=", p_comment text", values="NULL, p_comment",
                   check="""IF p_payload IS NULL OR p_payload::jsonb ->> 'label' IS NULL
            OR p_payload::jsonb ->> 'label' NOT IN ('synonym', 'related', 'drift')
            OR jsonb_typeof(p_payload::jsonb -> 'forbid') IS DISTINCT FROM 'boolean' THEN
        RAISE EXCEPTION 'evalcore: a verdict is synonym, related or drift (forbid true or false), not %', p_payload;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM term_rows WHERE run_id = p_run_id AND kind IN ('TP', 'FP')
                   AND query_id = p_payload::jsonb ->> 'query_id' AND term = p_payload::jsonb ->> 'term') THEN
        RAISE EXCEPTION 'evalcore: run % did not generate that term for that query', p_run_id;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM users WHERE name = p_actor AND NOT disabled
                   AND role IN ('engineer', 'approver', 'admin')) THEN
        RAISE EXCEPTION 'evalcore: % is not an enabled account that may record verdicts', p_actor;
    END IF;"""),
    "REVOKE ALL ON FUNCTION evalcore_append_verdict(bigint, text, text, text, text, text, text, text, text) FROM PUBLIC",
]))
# Each cache entry's writer (issue 31 item 3, store.cache_writers), filled in by the server:
# the column's default and a trigger on every insert and update set it to session_user
# (which SET ROLE does not change), whatever the client sent. Only `store copy`, as the
# table's owner (who could drop the trigger anyway) and saying so with the setting
# termgate.keep_writer, keeps the writers of the store it copies. Rows stored before keep
# the unknown writer ''. The key gains the writer: one key holds several writers' entries.
_CACHE_WRITER = """CREATE FUNCTION evalcore_cache_writer() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    IF NEW.writer IS NULL OR current_setting('termgate.keep_writer', true) IS DISTINCT FROM 'on'
            OR NOT pg_has_role(session_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'USAGE') THEN
        NEW.writer := session_user;
    END IF;
    RETURN NEW;
END $fn$"""
PG_MIGRATIONS.append((14, [
    _CACHE_WRITER,
    *(statement.format(table=table, key=key) for table, key in (
        ("embedding_cache", "model, text"), ("llm_cache", "key"), ("lexicon_cache", "source, term"))
      for statement in (
          "ALTER TABLE {table} ADD COLUMN writer text NOT NULL DEFAULT ''",
          "ALTER TABLE {table} ALTER COLUMN writer SET DEFAULT session_user",
          "ALTER TABLE {table} DROP CONSTRAINT {table}_pkey",
          "ALTER TABLE {table} ADD PRIMARY KEY ({key}, writer)",
          "CREATE TRIGGER {table}_writer BEFORE INSERT OR UPDATE ON {table} FOR EACH ROW "
          "EXECUTE FUNCTION evalcore_cache_writer()")),
]))

# Server-checked hashes (issue 32 item 5, SPEC §4): every record appended from schema 15 on is
# hash version 2, SHA-256 over the previous record's hash and a canonical text stored
# verbatim beside the columns (store.records.canonical_text). The server recomputes the
# hash with its own sha256() and checks that the canonical text states exactly the record's
# columns (each a JSON string or null; the payload as its column's text), and that the
# payload is a JSON object (or null) every reader parses (store.records.MAX_PAYLOAD_DEPTH):
# the same checks `audit verify` makes (store.records.canonical_problem), so no role can
# append a record that breaks the chain for everyone after it. A trigger makes them on
# every insert, the owner's direct appends included; the append functions make them again.
# A version-1 record (no canonical text) is taken only from the table's owner copying a
# store (`store copy`, saying so with termgate.legacy_chain). The log is append-only: an
# UPDATE, DELETE or TRUNCATE is refused (its owner could drop the trigger: `audit verify`
# is what catches that).
_RECORD_PROBLEM = """CREATE FUNCTION termgate_record_problem(r audit_log) RETURNS text
    LANGUAGE plpgsql STABLE SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE c jsonb; p jsonb; f text; v text; bare text;
BEGIN
    IF r.hash_version IS DISTINCT FROM 2 THEN
        RETURN 'its hash version is ' || coalesce(r.hash_version::text, 'NULL') || ', not 2';
    END IF;
    BEGIN
        c := r.canonical::jsonb;
        p := r.payload::jsonb;
    EXCEPTION WHEN others THEN
        RETURN 'its canonical text or its payload is not JSON';
    END;
    -- exactly these keys, each once (json, unlike jsonb, keeps a repeated key), each a string or null
    IF c IS NULL OR jsonb_typeof(c) <> 'object' OR NOT c ?& ARRAY[@FIELDS@]
            OR (SELECT count(*) FROM jsonb_object_keys(c)) <> @COUNT@
            OR (SELECT count(*) FROM json_object_keys(r.canonical::json)) <> @COUNT@ THEN
        RETURN 'its canonical text does not state exactly @NAMES@, each once';
    END IF;
    FOREACH f IN ARRAY ARRAY[@FIELDS@] LOOP
        v := CASE f WHEN 'seq' THEN r.seq::text WHEN 'created_at' THEN r.created_at WHEN 'kind' THEN r.kind
                    WHEN 'actor' THEN r.actor WHEN 'run_id' THEN r.run_id WHEN 'content_hash' THEN r.content_hash
                    WHEN 'decision' THEN r.decision WHEN 'comment' THEN r.comment ELSE r.payload END;
        IF ((jsonb_typeof(c -> f) = 'string' AND c ->> f = v) OR (jsonb_typeof(c -> f) = 'null' AND v IS NULL))
                IS NOT TRUE THEN
            RETURN 'its ' || f || ' differs from its canonical text';
        END IF;
    END LOOP;
    -- a payload every reader parses: an object (or null), from its text (a repeated key's
    -- value counts too) nested at most @DEPTH@ deep, with no number of 255 digits or more
    IF p IS NOT NULL THEN
        IF jsonb_typeof(p) NOT IN ('object', 'null') THEN
            RETURN 'its payload is not a JSON object';
        END IF;
        bare := regexp_replace(r.payload, $re$"(\\\\.|[^"\\\\])*"$re$, '', 'g');
        IF bare ~ '[0-9]{255}' THEN
            RETURN 'its payload holds a number of 255 digits or more';
        END IF;
        bare := regexp_replace(bare, '[^][{}]', '', 'g');
        FOR i IN 1..@DEPTH@ LOOP
            EXIT WHEN bare = '';
            bare := regexp_replace(bare, $re$\\[\\]|\\{\\}$re$, '', 'g');
        END LOOP;
        IF bare <> '' THEN
            RETURN 'its payload is nested more than @DEPTH@ deep';
        END IF;
    END IF;
    IF r.record_hash IS DISTINCT FROM encode(sha256(convert_to(r.prev_hash || r.canonical, 'UTF8')), 'hex') THEN
        RETURN 'its record_hash is not SHA-256 of prev_hash and its canonical text';
    END IF;
    RETURN NULL;
END $fn$""" \
    .replace("@FIELDS@", ", ".join(f"'{f}'" for f in _CANONICAL_FIELDS)).replace("@COUNT@", str(len(_CANONICAL_FIELDS))) \
    .replace("@NAMES@", ", ".join(_CANONICAL_FIELDS)).replace("@DEPTH@", str(MAX_PAYLOAD_DEPTH))
_CHECK_INSERT = """CREATE FUNCTION termgate_audit_log_insert() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
DECLARE problem text;
BEGIN
    IF coalesce(NEW.hash_version, 1) = 1 AND current_setting('termgate.legacy_chain', true) IS NOT DISTINCT FROM 'on'
            AND NEW.canonical IS NULL
            AND pg_has_role(session_user, (SELECT relowner FROM pg_class WHERE oid = TG_RELID), 'USAGE') THEN
        RETURN NEW;  -- a version-1 record of a store being copied by the table's owner
    END IF;
    problem := public.termgate_record_problem(NEW);
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'termgate: audit record % refused: %', NEW.seq, problem USING ERRCODE = '23514';
    END IF;
    RETURN NEW;
END $fn$"""
_APPEND_ONLY = """CREATE FUNCTION termgate_audit_log_append_only() RETURNS trigger
    LANGUAGE plpgsql SET search_path = pg_catalog, pg_temp AS $fn$
BEGIN
    RAISE EXCEPTION 'termgate: the audit log is append-only: % refused', TG_OP USING ERRCODE = '42501';
END $fn$"""
_MOVE_HEAD_CHECKED = """    problem := termgate_record_problem(rec);
    IF problem IS NOT NULL THEN
        RAISE EXCEPTION 'termgate: audit record % refused: %', p_seq, problem USING ERRCODE = '23514';
    END IF;
""" + _MOVE_HEAD
_LOCK_HEAD_2 = _LOCK_HEAD.replace("'evalcore: ", "'termgate: ")
_APPEND_2 = """CREATE FUNCTION {name}(p_seq bigint, p_prev_hash text, p_created_at text, p_actor text, p_run_id text,
        p_content_hash text, p_payload text, p_record_hash text, p_canonical text{args}) RETURNS bigint
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_temp AS $fn$
DECLARE head_seq bigint := 0; head_hash text := repeat('0', 64); rec audit_log; problem text;
BEGIN
{lock_head}    IF NOT EXISTS (SELECT 1 FROM runs WHERE run_id = p_run_id AND content_hash = p_content_hash) THEN
        RAISE EXCEPTION 'termgate: no stored run % with content hash %', p_run_id, p_content_hash;
    END IF;
    {check}
    INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, payload, prev_hash,
                           record_hash, hash_version, canonical)
        VALUES (p_seq, p_created_at, '{kind}', p_actor, p_run_id, p_content_hash, {values}, p_payload, p_prev_hash,
                p_record_hash, 2, p_canonical) RETURNING * INTO rec;
{move_head}"""
_DOORS = {  # old name and argument types (schema 10-14) -> new name and argument types (schema 15)
    ("evalcore_append_run_header", "bigint, text, text, text, text, text, text, text"):
        ("termgate_append_run_header", "bigint, text, text, text, text, text, text, text, text"),
    ("evalcore_append_decision", "bigint, text, text, text, text, text, text, text, text, text"):
        ("termgate_append_decision", "bigint, text, text, text, text, text, text, text, text, text, text"),
    ("evalcore_append_verdict", "bigint, text, text, text, text, text, text, text, text"):
        ("termgate_append_verdict", "bigint, text, text, text, text, text, text, text, text, text"),
    ("evalcore_bind_sso", "bigint, text, text, text, text, text, text, text, text[]"):
        ("termgate_bind_sso", "bigint, text, text, text, text, text, text, text, text, text[]"),
}
"""The SECURITY DEFINER doors: each new one takes the record's canonical text after its hash."""
_DECISION_BY = """IF p_decision NOT IN ('approve', 'reject') THEN
        RAISE EXCEPTION 'termgate: a decision is approve or reject, not %', p_decision;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM users WHERE name = p_actor AND NOT disabled
                   AND role = ANY (CASE p_decision WHEN 'approve' THEN ARRAY['approver', 'admin']
                                   ELSE ARRAY['engineer', 'approver', 'admin'] END)) THEN
        RAISE EXCEPTION 'termgate: % is not an enabled account that may % a run', p_actor, p_decision;
    END IF;"""
_VERDICT_CHECK = """IF p_payload IS NULL OR p_payload::jsonb ->> 'label' IS NULL
            OR p_payload::jsonb ->> 'label' NOT IN ('synonym', 'related', 'drift')
            OR jsonb_typeof(p_payload::jsonb -> 'forbid') IS DISTINCT FROM 'boolean' THEN
        RAISE EXCEPTION 'termgate: a verdict is synonym, related or drift (forbid true or false), not %', p_payload;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM term_rows WHERE run_id = p_run_id AND kind IN ('TP', 'FP')
                   AND query_id = p_payload::jsonb ->> 'query_id' AND term = p_payload::jsonb ->> 'term') THEN
        RAISE EXCEPTION 'termgate: run % did not generate that term for that query', p_run_id;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM users WHERE name = p_actor AND NOT disabled
                   AND role IN ('engineer', 'approver', 'admin')) THEN
        RAISE EXCEPTION 'termgate: % is not an enabled account that may record verdicts', p_actor;
    END IF;"""
_STATES_ACCOUNT = """    IF (p_payload::jsonb -> 'account') IS DISTINCT FROM (SELECT jsonb_build_object(
            'name', name, 'role', role, 'disabled', disabled,
            'domains', to_jsonb(ARRAY(SELECT d FROM unnest(coalesce(domains, '{}')) d ORDER BY d COLLATE "C")),
            'aliases', to_jsonb(ARRAY(SELECT a FROM unnest(coalesce(aliases, '{}')) a ORDER BY a COLLATE "C")),
            'password', encode(sha256(convert_to(password_hash, 'UTF8')), 'hex')) FROM users WHERE name = p_actor) THEN
        RAISE EXCEPTION 'termgate: the record must state account % as it now is (store.records.account_state)',
            p_actor;
    END IF;
"""
"""termgate_bind_sso's record states the account after the change exactly as `audit verify`
compares it with the account table (a wrong state would break the chain for everyone)."""
_BIND_SSO_2 = (_BIND_SSO.replace("evalcore_bind_sso(", "termgate_bind_sso(")
               .replace("p_record_hash text, p_alias", "p_record_hash text, p_canonical text, p_alias")
               .replace("old text[];", "old text[]; rec audit_log; problem text;")
               .replace("'evalcore: ", "'termgate: ")
               .replace("    UPDATE users SET aliases = p_aliases WHERE name = p_actor;\n",
                        "    UPDATE users SET aliases = p_aliases WHERE name = p_actor;\n" + _STATES_ACCOUNT)
               .replace("""    INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, payload, prev_hash,
                           record_hash)
        VALUES (p_seq, p_created_at, 'user_sso_bind', p_actor, NULL, NULL, NULL, NULL, p_payload, p_prev_hash,
                p_record_hash);
""", """    INSERT INTO audit_log (seq, created_at, kind, actor, run_id, content_hash, decision, comment, payload, prev_hash,
                           record_hash, hash_version, canonical)
        VALUES (p_seq, p_created_at, 'user_sso_bind', p_actor, NULL, NULL, NULL, NULL, p_payload, p_prev_hash,
                p_record_hash, 2, p_canonical) RETURNING * INTO rec;
""").replace(_MOVE_HEAD, _MOVE_HEAD_CHECKED))
# Whoever held EXECUTE on an old door gets it on the new one (a deployment keeps working
# after `termgate store migrate`, with no new grant), then the old doors are dropped.
_CARRY_GRANTS = """DO $do$
DECLARE g record;
BEGIN
    FOR g IN SELECT f.new, a.grantee::regrole AS grantee
             FROM (VALUES {pairs}) AS f(old, new), pg_proc p, aclexplode(p.proacl) a
             WHERE p.oid = to_regprocedure(f.old) AND a.privilege_type = 'EXECUTE' AND a.grantee <> 0
                   AND a.grantee <> p.proowner LOOP
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %s', g.new, g.grantee);
    END LOOP;
END $do$""".format(pairs=", ".join(f"('{old}({old_args})', '{new}({new_args})')"
                                    for (old, old_args), (new, new_args) in _DOORS.items()))
PG_MIGRATIONS.append((15, [
    "ALTER TABLE audit_log ADD COLUMN hash_version integer",
    "ALTER TABLE audit_log ADD COLUMN canonical text",
    _RECORD_PROBLEM,
    _CHECK_INSERT,
    _APPEND_ONLY,
    "CREATE TRIGGER audit_log_checked BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION termgate_audit_log_insert()",
    "CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log FOR EACH STATEMENT "
    "EXECUTE FUNCTION termgate_audit_log_append_only()",
    _APPEND_2.format(lock_head=_LOCK_HEAD_2, move_head=_MOVE_HEAD_CHECKED, name="termgate_append_run_header",
                     kind="run", args="", values="NULL, NULL",
                     check="""IF EXISTS (SELECT 1 FROM audit_log WHERE kind = 'run' AND run_id = p_run_id) THEN
        RAISE EXCEPTION 'termgate: run % has a header already', p_run_id;
    END IF;"""),
    _APPEND_2.format(lock_head=_LOCK_HEAD_2, move_head=_MOVE_HEAD_CHECKED, name="termgate_append_decision",
                     kind="decision", args=", p_decision text, p_comment text", values="p_decision, p_comment",
                     check=_DECISION_BY),
    _APPEND_2.format(lock_head=_LOCK_HEAD_2, move_head=_MOVE_HEAD_CHECKED, name="termgate_append_verdict",
                     kind="verdict", args=", p_comment text", values="NULL, p_comment", check=_VERDICT_CHECK),
    _BIND_SSO_2,
    *(f"REVOKE ALL ON FUNCTION {new}({args}) FROM PUBLIC" for new, args in _DOORS.values()),
    _CARRY_GRANTS,
    *(f"DROP FUNCTION IF EXISTS {old}({args})" for old, args in _DOORS),
]))
PG_MIGRATIONS.append((16, [
    "CREATE TABLE sealed_keys (fingerprint text PRIMARY KEY, holder text NOT NULL, sealed text NOT NULL, "
    "created_at text)",
    # whoever reads the account table reads the sealed keys (a reviewer signing from the CLI
    # through the dashboard's role opens its own); nobody but the owner writes them
    """DO $do$
DECLARE g record;
BEGIN
    FOR g IN SELECT DISTINCT a.grantee::regrole AS grantee
             FROM pg_class c, aclexplode(c.relacl) a
             WHERE c.oid = 'users'::regclass AND a.privilege_type = 'SELECT' AND a.grantee <> 0
                   AND a.grantee <> c.relowner LOOP
        EXECUTE format('GRANT SELECT ON sealed_keys TO %s', g.grantee);
    END LOOP;
END $do$""",
]))
PG_MIGRATIONS.append((17, [
    # the retrieval effect (issue 34), as the DuckDB store's migration 17
    "ALTER TABLE runs ADD COLUMN retrieval text",
    """CREATE TABLE retrieval_results (
        run_id text NOT NULL, query_id text NOT NULL, variant text NOT NULL, ndcg double precision,
        recall double precision, mrr double precision, precision double precision, top_ids text[],
        top_grades integer[], top_titles text[], brought_by text[], PRIMARY KEY (run_id, query_id, variant))""",
    # a run's retrieval rows are its per-query rows: whoever may read or add those (the roles
    # of `termgate store roles`, granted before this table was) may do the same here, and no
    # more (the dashboard role reads, the CI role reads and adds; neither changes a stored row)
    """DO $do$
DECLARE g record;
BEGIN
    FOR g IN SELECT DISTINCT a.privilege_type AS privilege, a.grantee::regrole AS grantee, a.is_grantable
             FROM pg_class c, aclexplode(c.relacl) a
             WHERE c.oid = 'query_results'::regclass AND a.grantee <> 0 AND a.grantee <> c.relowner LOOP
        EXECUTE format('GRANT %s ON retrieval_results TO %s%s', g.privilege, g.grantee,
                       CASE WHEN g.is_grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
END $do$""",
]))
PG_SCHEMA_VERSION = PG_MIGRATIONS[-1][0]


OLDEST_SERVER = 140000
"""PostgreSQL 14: string_to_table (store.pg_rows.golden_lines_pg); 13 is past its end of life."""


def is_postgres(db: object) -> bool:
    """Whether a --db value names a PostgreSQL database (SPEC §3): postgresql:// or postgres://."""
    return str(db).startswith(("postgresql://", "postgres://"))


def shown(url: str) -> str:
    """The URL as it may be printed: the password (and any key in it) blanked."""
    return redact_url(url) or url


def _libpq_says(url: str, exc: Exception) -> str:
    """libpq's message on one line, with whatever of the URL it repeats blanked: a malformed
    URL's message quotes the piece it could not read, password and all
    (`unexpected spaces found in "pass word"`), or the whole URL."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    try:  # a role name alone is no secret, and blanking it would blank `postgres` in paths too
        role = urlsplit(url).username if urlsplit(url).password is None else None
    except ValueError:
        role = None
    return redact_text(text, [url, *(s for s in url_secrets(url) if s != role)]) or text


def connect_pg(url: str):
    """A psycopg connection (not autocommit); UsageError naming the cause when the server
    cannot be reached or refuses us (SPEC §5: exit 2)."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - a dependency of termgate
        raise UsageError("--db is a PostgreSQL URL but psycopg is not installed: pip install 'psycopg[binary]'")
    # libpq takes postgres:// as well; connect_timeout keeps an unreachable host from hanging CI
    try:
        return psycopg.connect(url, connect_timeout=10)
    except psycopg.OperationalError as exc:
        raise UsageError(f"--db {shown(url)}: cannot connect to PostgreSQL: {_libpq_says(url, exc)}") from None
    except psycopg.ProgrammingError as exc:  # a malformed URL
        raise UsageError(f"--db {shown(url)}: not a PostgreSQL URL libpq accepts: {_libpq_says(url, exc)}") from None


def _current(cur) -> int | None:
    """The schema version, or None when the database holds no termgate schema."""
    cur.execute("SELECT to_regclass('schema_migrations') IS NOT NULL")
    if not cur.fetchone()[0]:
        return None
    cur.execute("SELECT coalesce(max(version), 0) FROM schema_migrations")
    return cur.fetchone()[0]


def _refuse_newer(cur, url: str, current: int) -> None:
    if current <= PG_SCHEMA_VERSION:
        return
    cur.execute("SELECT evalcore_version FROM schema_migrations WHERE evalcore_version IS NOT NULL "
                "ORDER BY version DESC LIMIT 1")
    row = cur.fetchone()
    raise newer_schema(shown(url), current, PG_SCHEMA_VERSION, row[0] if row else None)


def schema_version_pg(url: str) -> tuple[int | None, str | None]:
    """(schema version or None, the termgate version that applied the last migration)."""
    with connect_pg(url) as conn, conn.cursor() as cur:
        current = _current(cur)
        if current is None:
            return None, None
        cur.execute("SELECT evalcore_version FROM schema_migrations ORDER BY version DESC LIMIT 1")
        row = cur.fetchone()
        return current, row[0] if row else None


def migrate_pg(url: str, create: bool = True) -> tuple[int, list[int]]:
    """Apply pending migrations, each in its own transaction under the advisory lock;
    (version now, versions applied). A database without termgate's schema is initialised
    when `create` and the role may create tables; else UsageError saying who can."""
    import psycopg

    from .. import __version__

    applied: list[int] = []
    with connect_pg(url) as conn:
        if conn.info.server_version < OLDEST_SERVER:
            raise UsageError(f"--db {shown(url)}: PostgreSQL {conn.info.server_version // 10000} is too old for the "
                             f"team store; use PostgreSQL {OLDEST_SERVER // 10000} or later")
        for version, statements in PG_MIGRATIONS:
            with conn.transaction(), conn.cursor() as cur:
                cur.execute("SELECT pg_advisory_xact_lock(%s)", [ADVISORY_KEY])
                current = _current(cur)
                if current is not None:
                    _refuse_newer(cur, url, current)
                    if version <= current:
                        continue
                elif not create:
                    raise UsageError(f"--db {shown(url)}: not a termgate store: run `termgate store init` as its owner")
                try:
                    if current is None:
                        cur.execute("CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at text, "
                                    "evalcore_version text)")
                    for statement in statements:
                        cur.execute(statement)
                    cur.execute("INSERT INTO schema_migrations VALUES (%s, to_char(now() AT TIME ZONE 'UTC', "
                                "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), %s)", [version, __version__])
                except (psycopg.errors.DuplicateTable, psycopg.errors.DuplicateObject,
                        psycopg.errors.DuplicateFunction, psycopg.errors.DuplicateColumn) as exc:
                    raise damaged_record(shown(url), current or 0, version, exc) from None
                except psycopg.errors.InsufficientPrivilege:
                    if current is not None:
                        raise UsageError(f"--db {shown(url)}: the store's schema is version {current}, this termgate "
                                         f"needs {PG_SCHEMA_VERSION}: run `termgate store migrate` as its owner "
                                         "(this role may not change the schema)") from None
                    raise UsageError(f"--db {shown(url)}: not a termgate store: run `termgate store init` as its "
                                     "owner (this role may not create tables)") from None
                applied.append(version)
        with conn.cursor() as cur:
            return _current(cur) or 0, applied


ROLES_SQL = """-- termgate least privilege, after `termgate store init` (docs/deploy.md)
-- {ci}: stores runs, their rows and the caches; appends a run's header only through
-- termgate_append_run_header; no write on audit_log, audit_head, users or decisions.
-- {dashboard}: reads everything; records sign-offs only through termgate_append_decision,
-- verdicts on terms only through termgate_append_verdict, and counts sign-in tries (signin_failures); binds an identity provider's subject to an account at its first
-- single sign-on only through termgate_bind_sso. Accounts stay with the owner (`termgate users`
-- as the owner). The server checks every record's hash (schema 15), whoever appends it.
-- as a superuser, or a role with CREATEROLE (the database's owner has not): the roles
CREATE ROLE {ci} LOGIN;
CREATE ROLE {dashboard} LOGIN;
-- as the database's owner (`termgate store roles --grants` prints this part only)
GRANT USAGE ON SCHEMA public TO {ci}, {dashboard};
GRANT SELECT ON ALL TABLES IN SCHEMA public TO {ci}, {dashboard};
GRANT INSERT ON runs, query_results, term_rows, retrieval_results, harness_outputs, judge_log, golden_files
    TO {ci};
GRANT INSERT, UPDATE ON llm_cache, embedding_cache, lexicon_cache TO {ci};
GRANT INSERT ON prompt_eval_runs, prompt_eval_results TO {ci};
GRANT EXECUTE ON FUNCTION termgate_append_run_header(bigint, text, text, text, text, text, text, text, text) TO {ci};
GRANT INSERT, UPDATE, DELETE ON signin_failures TO {dashboard};
GRANT EXECUTE ON FUNCTION termgate_append_decision(bigint, text, text, text, text, text, text, text, text, text, text)
    TO {dashboard};
GRANT EXECUTE ON FUNCTION termgate_bind_sso(bigint, text, text, text, text, text, text, text, text, text[])
    TO {dashboard};
GRANT EXECUTE ON FUNCTION termgate_append_verdict(bigint, text, text, text, text, text, text, text, text, text)
    TO {dashboard};
-- each role signs in with a password (createuser --pwprompt, or psql's \\password as the superuser) or a certificate
"""


def roles_sql(ci: str = "evalcore_ci", dashboard: str = "evalcore_dashboard", grants_only: bool = False) -> str:
    """The SQL that creates the CI and dashboard roles with least privilege (docs/deploy.md).
    Creating a role needs a superuser or CREATEROLE, the grants the tables' owner:
    `grants_only` leaves out the first part (the roles made with `createuser`, say)."""
    from ..identity import canonical_name

    for name in (ci, dashboard):
        if canonical_name(name, "role name") != name or not name.replace("_", "").isalnum():
            raise UsageError(f"role name {name!r}: use lower-case letters, digits and _ only")
    sql = ROLES_SQL.format(ci=ci, dashboard=dashboard)
    if grants_only:
        sql = "".join(line for line in sql.splitlines(keepends=True)
                      if not line.startswith(("CREATE ROLE ", "-- as a superuser")))
    return sql
