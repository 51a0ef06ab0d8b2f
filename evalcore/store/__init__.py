"""The DuckDB store package: the only module with SQL, always with bound parameters (SPEC §3, §5).

Every operation opens its own connection and closes it: an open DuckDB connection blocks
other processes, so nothing holds one across calls. A busy store is retried for up to
`EVALCORE_STORE_TIMEOUT` seconds (default 30), then StoreBusyError.
"""


from .audit import (AUDIT_COLUMNS, append_audit, audit_head, audit_records, decisions_for, get_user, insert_user,
                    list_users, update_user)
from .connection import MIGRATIONS, SCHEMA_VERSION, connect, ensure_store
from .runs import (drift_terms, find_run_by_content, get_run, judge_log,
                   list_runs, load_baseline, paired_metrics, query_rows, repeat_runs, save_run,
                   term_rows)
from .llm import harness_outputs, load_llm_cache, save_harness_outputs, save_llm_cache, save_usage
from .prompts import (find_dataset_hash, list_prompt_evals, prompt_eval_datasets, prompt_eval_matrix,
                      prompt_eval_results, prompt_eval_scores, prompt_eval_versions, save_prompt_eval)
from .vectors import load_vectors, save_vectors
from .views import (SORTS, STATUSES, CompareFilter, compare_domains, compare_headline, compare_page, compare_points,
                    find_query_ids, flagged_items, metric_trend, query_history, runs_overview)

__all__ = ["MIGRATIONS", "SCHEMA_VERSION", "connect", "ensure_store", "drift_terms",
           "find_run_by_content", "get_run", "judge_log", "list_runs", "load_baseline", "query_rows",
           "save_run", "term_rows", "load_vectors", "save_vectors", "CompareFilter", "compare_domains",
           "compare_headline", "compare_page", "compare_points", "find_query_ids", "flagged_items",
           "metric_trend", "query_history", "runs_overview", "SORTS", "STATUSES", "append_audit",
           "audit_records", "decisions_for", "get_user", "insert_user", "list_users", "update_user",
           "AUDIT_COLUMNS", "audit_head", "harness_outputs", "load_llm_cache", "save_harness_outputs",
           "save_llm_cache", "save_usage", "paired_metrics", "repeat_runs", "find_dataset_hash",
           "list_prompt_evals", "prompt_eval_datasets", "prompt_eval_matrix", "prompt_eval_results",
           "prompt_eval_scores", "prompt_eval_versions", "save_prompt_eval"]
