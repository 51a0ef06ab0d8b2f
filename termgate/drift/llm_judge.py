"""`--drift-judge llm`: one chat call per query judging all its false positives.

The answer must be JSON `{"verdicts": [{"term", "drift", "reason"}]}`, validated with
pydantic; an unreadable one is asked again with the REPAIR hint appended, so a retry at
temperature 0 can change the answer. After the last try the query's terms are *unjudged*
with the reason (naming the field that was missing or wrong), never silently drift or
clean. Prompt, raw reply and parsed verdicts are kept in `log` and stored with the run.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Sequence

from pydantic import BaseModel, Field

from .judge import DriftCandidate, DriftVerdict
from ..llm.client import AsyncLLMClient, LLMCallError, LLMConfig, run_in_fresh_loop
from ..llm.prompt_models import reply_parser, tokens_for_items
from ..redact import strip_credentials

__all__ = ["LLMDriftJudge", "TermVerdict", "JudgeAnswer"]

SYSTEM = (
    "You review synonym expansions for a search engine. For each candidate term decide whether it is "
    "DRIFT: unrelated to the query and its domain, so that adding it to the search would retrieve "
    "off-topic results. Related terms (synonyms, abbreviations, broader or narrower terms, closely "
    "associated concepts) are not drift. Answer with JSON only: "
    '{"verdicts": [{"term": "<candidate exactly as given>", "drift": true|false, "reason": "<short why>"}]}'
)


REPAIR = ("Your reply could not be read. Answer again with JSON only, one verdict for every candidate, exactly: "
          '{"verdicts": [{"term": "<candidate exactly as given>", "drift": true or false, "reason": "<short why>"}]}')
"""The repair hint: appended (as a last user message) to the retry of an unreadable reply."""


class TermVerdict(BaseModel):
    """The judge's decision on one term."""

    term: str
    """The candidate term, as given."""
    drift: bool
    """True when the term is unrelated to the query and domain."""
    reason: str = Field(default="", max_length=500)
    """One short sentence."""


class JudgeAnswer(BaseModel):
    """The whole JSON answer for one query."""

    verdicts: list[TermVerdict]
    """One verdict per candidate."""


_parse = reply_parser(JudgeAnswer)
"""A reply (in a Markdown fence or not) -> JudgeAnswer; ValueError naming the field that
is missing or wrong (prompt_models.reply_problem), so the client retries."""


class LLMDriftJudge:
    """Asks a chat model about every false positive of a query in one call."""

    name = "llm"

    def __init__(self, llm: LLMConfig, domain_context: str | None = None, concurrency: int | None = None, sleep=None):
        self.llm = llm
        self.sleep = sleep
        """The async sleep between tries (None: asyncio.sleep); tests record the backoff with it."""
        self.domain_context = domain_context
        self.concurrency = concurrency
        """Calls in flight at once; None: the endpoint's (LLMConfig.calls_in_flight)."""
        self.log: list[dict] = []

    @classmethod
    def from_settings(cls, drift: dict, domain_context: str | None = None, llm: dict | None = None) -> LLMDriftJudge:
        llm = dict(llm or {})
        config = LLMConfig.from_settings(llm, drift.get("model") if drift.get("judge") == "llm" else None,
                                         flag=None, what="the llm drift judge")
        concurrency = drift.get("concurrency")
        return cls(config, domain_context, None if concurrency is None else int(concurrency))

    def config(self) -> dict:
        """The judge as the run records it (stored, shown): the base URL redacted
        (termgate.redact.redact_url)."""
        return self._described(self.llm.shown_url)

    def identity(self) -> dict:
        """The judge as the content hash sees it: the base URL with only its credentials
        taken out, so two endpoints that are shown alike still hash apart."""
        return self._described(strip_credentials(self.llm.base_url))

    def _described(self, base_url: str | None) -> dict:
        return {"judge": "llm", "model": self.llm.model, "base_url": base_url, "prompt": SYSTEM, "repair": REPAIR,
                "max_tokens": self.llm.max_tokens, "domain_context": self.domain_context}

    def _messages(self, group: list[DriftCandidate]) -> list[dict]:
        first = group[0]
        payload = {"query": first.query, "domain": self.domain_context or first.domain,
                   "intent": first.intent, "expected_terms": list(first.expected_terms),
                   "candidates": [c.term for c in group]}
        return [{"role": "system", "content": SYSTEM},
                {"role": "user", "content": json.dumps(payload, ensure_ascii=False)}]

    async def _judge_query(self, client: AsyncLLMClient, group: list[DriftCandidate]) -> dict[str, DriftVerdict]:
        messages = self._messages(group)
        entry = {"query_id": group[0].query_id, "prompt": messages, "reply": None, "verdicts": None, "error": None}
        params = {"temperature": self.llm.temperature, "response_format": {"type": "json_object"},
                  "max_tokens": tokens_for_items(self.llm.max_tokens, len(group))}
        try:
            answer, raw, _ = await client.chat(messages, _parse, params, repair=REPAIR)
        except LLMCallError as exc:
            entry["error"], entry["reply"] = str(exc), exc.reply
            self.log.append(entry)
            return {c.term: DriftVerdict(None, f"llm judge failed: {exc}") for c in group}
        entry["reply"], entry["verdicts"] = raw, answer.model_dump()
        self.log.append(entry)
        by_term = {v.term.strip().casefold(): v for v in answer.verdicts}
        named = ", ".join(repr(v.term[:40]) for v in answer.verdicts[:3]) + (", ..." if len(answer.verdicts) > 3 else "")
        missing = ("llm judge gave no verdict for this term (" + (f"its verdicts name {named})" if named
                                                                   else "its verdicts list is empty)"))
        out = {}
        for c in group:
            v = by_term.get(c.term.casefold())
            out[c.term] = (DriftVerdict(None, missing) if v is None
                           else DriftVerdict(v.drift, f"llm: {v.reason}" if v.reason else "llm judge"))
        return out

    def judge(self, candidates: Sequence[DriftCandidate]) -> list[DriftVerdict]:
        groups: dict[str, list[DriftCandidate]] = defaultdict(list)
        for c in candidates:
            groups[c.query_id].append(c)

        async def all_queries() -> list[dict[str, DriftVerdict]]:
            client = AsyncLLMClient(self.llm, self.concurrency, sleep=self.sleep)  # no cache: always asked
            try:
                return await asyncio.gather(*(self._judge_query(client, g) for g in groups.values()))
            finally:
                await client.aclose()

        results = dict(zip(groups, run_in_fresh_loop(all_queries)))
        return [results[c.query_id][c.term] for c in candidates]
