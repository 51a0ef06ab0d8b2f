"""The DuckDB store package: the only module with SQL, always with bound parameters (SPEC §3, §5).

Every operation opens its own connection and closes it: an open DuckDB connection blocks
other processes, so nothing holds one across calls. A busy store is retried for up to
`TERMGATE_STORE_TIMEOUT` seconds (default 30), then StoreBusyError.
"""


from .audit import (AUDIT_COLUMNS, GENESIS, account_state, audit_head, audit_records, decisions_for)
from .connection import MIGRATIONS, SCHEMA_VERSION, check_store_path, connect, ensure_store, exists
from .runs import (drift_terms, find_run_by_content, get_run, get_runs, golden_content, golden_entry, golden_names,
                   judge_log, list_runs, load_baseline, stored_golden_name, query_rows, repeat_runs,
                   retrieval_outcome, retrieval_rows, retrieval_table, run_row, term_rows)
from .audit import get_user, list_users, sealed_keys, signin_failures, users_rows
from .backends import (append_audit, claim_signin, clear_signin_failures, put_sealed_key, save_run,
                       write_account)
from .llm import StoredReplies, harness_output_rows, harness_outputs, load_llm_cache, query_replies, save_llm_cache
from .prompts import (find_dataset_hash, list_prompt_evals, prompt_eval_datasets, prompt_eval_matrix,
                      prompt_eval_results, prompt_eval_scores, prompt_eval_versions, save_prompt_eval)
from .lexicon import StoredLexicon, load_lexicon, save_lexicon
from .vectors import StoredVectors, load_vectors, save_vectors
from .views import (TERM_LISTS, StoredPair, comparison_rows, comparison_terms, pass_lists, errored_queries, find_query_ids,
                    flagged_items, metric_trend, query_history, runs_overview)

__all__ = ["sealed_keys", "put_sealed_key", "MIGRATIONS", "SCHEMA_VERSION", "check_store_path", "connect", "ensure_store", "exists", "drift_terms",
           "find_run_by_content", "get_run", "get_runs", "golden_content", "golden_entry", "golden_names", "judge_log", "list_runs", "load_baseline", "stored_golden_name", "query_rows", "retrieval_outcome", "retrieval_rows", "retrieval_table",
           "save_run", "run_row", "term_rows", "load_vectors", "save_vectors", "StoredReplies", "StoredVectors", "StoredLexicon", "load_lexicon", "save_lexicon", "StoredPair", "TERM_LISTS", "comparison_rows", "comparison_terms", "pass_lists",
           "errored_queries", "find_query_ids", "flagged_items",
           "metric_trend", "query_history", "runs_overview", "append_audit",
           "audit_records", "decisions_for", "get_user", "list_users", "users_rows", "write_account", "account_state",
           "GENESIS", "signin_failures", "claim_signin", "clear_signin_failures",
           "AUDIT_COLUMNS", "audit_head", "harness_outputs", "query_replies", "load_llm_cache", "harness_output_rows",
           "save_llm_cache", "repeat_runs", "find_dataset_hash",
           "list_prompt_evals", "prompt_eval_datasets", "prompt_eval_matrix", "prompt_eval_results",
           "prompt_eval_scores", "prompt_eval_versions", "save_prompt_eval"]

