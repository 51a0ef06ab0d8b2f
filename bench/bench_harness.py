"""bench_harness: 1,000 golden queries against a loopback OpenAI-compatible server that
answers after 50 ms, concurrency 32 (SPEC §7).

Prints, measured in the same run: the harness's wall time (prompt filling, calls with
retries and caching, reply parsing) beside a bare AsyncOpenAI loop making the same calls
with the same concurrency (goal ≤ 1.1× the bare loop; the physical limit is the
endpoint's latency × queries ÷ concurrency, printed too), and a rerun from the DuckDB cache
(goal ≤ 1 s, zero calls).

Usage: python bench/bench_harness.py [--queries 1000] [--concurrency 32] [--delay 0.05] [--rounds 5]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # the loopback server the tests use

from termgate import store  # noqa: E402
from termgate.llm.harness import run_prompt  # noqa: E402
from termgate.io import GoldenSet, PreparedItem  # noqa: E402
from termgate.llm.client import AsyncLLMClient, LLMConfig  # noqa: E402

PROMPT = "Expand the {domain} search query into synonyms, one per line.\nQuery: {query}\n"


def golden(n: int) -> GoldenSet:
    items = [PreparedItem(f"q{i}", f"query number {i}", "medical", None, {"term": 0.0}, frozenset(), False)
             for i in range(n)]
    return GoldenSet("bench", items, "x")


async def bare_loop(url: str, prompts: list[str], concurrency: int) -> float:
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="k", max_retries=0)
    slots = asyncio.Semaphore(concurrency)

    async def one(text: str) -> str:
        async with slots:
            reply = await client.chat.completions.create(model="sut", temperature=0.0,
                                                         messages=[{"role": "user", "content": text}])
            return reply.choices[0].message.content

    start = time.perf_counter()
    await asyncio.gather(*(one(p) for p in prompts))
    wall = time.perf_counter() - start
    await client.close()
    return wall


async def harness(url: str, items: GoldenSet, concurrency: int, db: Path) -> tuple[float, dict, int]:
    client = AsyncLLMClient(LLMConfig(model="sut", base_url=url), concurrency, store.StoredReplies(db) if db else None)
    start = time.perf_counter()
    outputs = (await run_prompt(items, PROMPT, client))[0]
    await client.aclose()
    wall = time.perf_counter() - start
    return wall, {**client.usage(), "max_in_flight": client.max_in_flight}, sum(1 for o in outputs if o.error)


SERVER = """
import sys, time
sys.path.insert(0, {tests!r})
from llm_server import LoopbackLLM
server = LoopbackLLM()
server.delay = {delay!r}
server.default = ("text", "myocardial infarction\\nMI\\nacute coronary syndrome")
print(server.url, flush=True)
sys.stdin.read()
"""


def endpoint(delay: float) -> tuple[subprocess.Popen, str]:
    """The loopback endpoint in a process of its own, as a real endpoint is: its work does
    not share this process's interpreter lock with the client being measured."""
    code = SERVER.format(tests=str(ROOT / "tests"), delay=delay)
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, proc.stdout.readline().strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    server, url = endpoint(args.delay)
    items = golden(args.queries)
    prompts = [PROMPT.format(query=i.query, domain=i.domain, intent="") for i in items.items]
    folder = Path(tempfile.mkdtemp(prefix="bench_harness-"))
    try:
        asyncio.run(bare_loop(url, prompts[:64], args.concurrency))  # warm both paths
        bares, walls = [], []
        for i in range(args.rounds):  # interleaved, so a noisy neighbour hits both alike
            bares.append(asyncio.run(bare_loop(url, prompts, args.concurrency)))
            db = folder / f"cache-{i}.duckdb"
            store.ensure_store(db)
            wall, usage, errored = asyncio.run(harness(url, items, args.concurrency, db))
            walls.append(wall)
        rerun, rerun_usage, _ = asyncio.run(harness(url, items, args.concurrency, db))
        bare, wall = statistics.median(bares), statistics.median(walls)
        print(f"bench_harness {args.queries:,} queries, {args.delay * 1000:.0f} ms per answer, concurrency "
              f"{args.concurrency}, endpoint in its own process, median of {args.rounds} interleaved rounds: "
              f"harness {wall:.2f} s ({usage['calls']} calls, {errored} errored, max in flight "
              f"{usage['max_in_flight']}; rounds {', '.join(f'{w:.2f}' for w in walls)}) vs bare AsyncOpenAI loop "
              f"{bare:.2f} s (rounds {', '.join(f'{b:.2f}' for b in bares)}) = {wall / bare:.2f}× [goal ≤ 1.1×]; "
              f"physical limit {args.delay * args.queries / args.concurrency:.2f} s; "
              f"rerun from cache {rerun:.2f} s with {rerun_usage['calls']} calls "
              f"({rerun_usage['cache_hits']} cache hits) [goal ≤ 1 s, 0 calls]")
    finally:
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
