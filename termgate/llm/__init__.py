"""Everything that talks to a model: the one OpenAI-compatible client (`client`), how a
reply is read (`replies`, SPEC §6), the harness that runs the system under test
(`harness`), and prompt evaluation with a model as judge (`prompt_eval`,
`prompt_models`).

Its public names load on first use (PEP 562): importing one module of the package does not
import the others.
"""

from __future__ import annotations

from ..lazy import lazy_exports

_EXPORTS = {
    'LLMConfig': 'client',
    'LLMCallError': 'client',
    'ReplyCache': 'client',
    'AsyncLLMClient': 'client',
    'completion_answer': 'client',
    'request_key': 'client',
    'retry_delay': 'client',
    'run_in_fresh_loop': 'client',
    'HarnessOutput': 'harness',
    'parse_reply': 'harness',
    'parse_json_reply': 'harness',
    'reply_reader': 'harness',
    'terms_from_entries': 'harness',
    'load_prompt': 'harness',
    'prompt_version': 'harness',
    'run_prompt': 'harness',
    'StructuredOutputRefused': 'harness',
    'run_callable': 'harness',
    'load_callable': 'harness',
    'callable_source': 'harness',
    'to_generated': 'harness',
    'PromptEvaluator': 'prompt_eval',
    'ScenarioIdeas': 'prompt_eval',
    'TestCase': 'prompt_eval',
    'Dataset': 'prompt_eval',
    'JudgeVerdict': 'prompt_eval',
    'CaseResult': 'prompt_eval',
    'PromptEvalSummary': 'prompt_eval',
    'PromptEvalResults': 'prompt_eval',
    'DatasetGenerationError': 'prompt_eval',
    'load_dataset': 'prompt_eval',
    'dataset_hash': 'prompt_eval',
    'summarize': 'prompt_eval',
    'cap_score': 'prompt_eval',
    'case_result': 'prompt_eval',
    'judge_messages': 'prompt_eval',
    'EXTRA_CRITERIA_CAP': 'prompt_eval',
    'JUDGE_SYSTEM': 'prompt_eval',
    'read_reply': 'replies',
    'read_json_reply': 'replies',
    'drop_reasoning': 'replies',
    'term_entries': 'replies',
    'RESPONSE_SCHEMA': 'replies',
}
"""name -> the submodule that defines it."""

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
