"""bench_harness: the harness's overhead beside a bare AsyncOpenAI loop making the same calls
with the same concurrency, in the same run (goal ≤ 1.1× the bare loop), against two endpoints:

1. A loopback OpenAI-compatible server that answers after 50 ms (tests/llm_server.py, in a
   process of its own): 1,000 golden queries, concurrency 32 (SPEC §7). Also printed: the
   physical limit (latency × queries ÷ concurrency) and a rerun from the DuckDB cache
   (goal ≤ 1 s, zero calls).
2. A real one: llama.cpp's server with SmolLM2-135M-Instruct (tests/model_server.py, from
   .venv-model: `make model-server`), 100 golden queries from data/demo, the same
   max_tokens for both, at concurrency 1 and 8 — the figures the documented default
   concurrency comes from (issue 35, item 8). termgate makes one try per query here
   (max_tries 1), so both sides make exactly the same calls. termgate streams them (so a
   timed-out call is cancelled at the server); the bare loop is timed both plain, as a
   user's own loop would be, and streamed, which splits termgate's own cost from the
   server's cost of streaming. Skipped, with a line saying why, when .venv-model is absent.

Usage: python bench/bench_harness.py [--queries 1000] [--concurrency 32] [--delay 0.05] [--rounds 5]
           [--model-queries 100] [--model-max-tokens 64] [--model-concurrency 1 8] [--model-threads 2]
           [--model-rounds 1] [--model-no-interrupt] [--skip-scripted] [--skip-model]
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
from termgate.io import GoldenSet, PreparedItem, load_golden_set  # noqa: E402
from termgate.llm.client import AsyncLLMClient, LLMConfig  # noqa: E402

PROMPT = "Expand the {domain} search query into synonyms, one per line.\nQuery: {query}\n"


def golden(n: int) -> GoldenSet:
    items = [PreparedItem(f"q{i}", f"query number {i}", "medical", None, {"term": 0.0}, frozenset(), False)
             for i in range(n)]
    return GoldenSet("bench", items, "x")


async def bare_loop(url: str, prompts: list[str], concurrency: int, stream: bool = False, **params) -> float:
    """The same calls made plainly; `stream`: read as a stream of chunks, as termgate asks for them."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=url, api_key="k", max_retries=0, timeout=600)
    slots = asyncio.Semaphore(concurrency)

    async def one(text: str) -> str:
        async with slots:
            messages = [{"role": "user", "content": text}]
            if not stream:
                reply = await client.chat.completions.create(model="sut", temperature=0.0, messages=messages, **params)
                return reply.choices[0].message.content
            chunks = await client.chat.completions.create(model="sut", temperature=0.0, messages=messages,
                                                          stream=True, **params)
            return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])

    start = time.perf_counter()
    await asyncio.gather(*(one(p) for p in prompts))
    wall = time.perf_counter() - start
    await client.close()
    return wall


async def harness(url: str, items: GoldenSet, concurrency: int, db: Path | None, prompt: str = PROMPT,
                  **config) -> tuple[float, dict, int]:
    client = AsyncLLMClient(LLMConfig(model="sut", base_url=url, **config), concurrency,
                            store.StoredReplies(db) if db else None)
    start = time.perf_counter()
    outputs = (await run_prompt(items, prompt, client))[0]
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


def scripted(args) -> None:
    """The loopback server's figures (part 1)."""
    server, url = endpoint(args.delay)
    items = golden(args.queries)
    prompts = [PROMPT.format(query=i.query, domain=i.domain, intent="") for i in items.items]
    folder = Path(tempfile.mkdtemp(prefix="bench_harness-"))
    try:
        asyncio.run(bare_loop(url, prompts[:64], args.concurrency))  # warm both paths
        bares, streamed, walls = [], [], []
        for i in range(args.rounds):  # interleaved, so a noisy neighbour hits both alike
            bares.append(asyncio.run(bare_loop(url, prompts, args.concurrency)))
            streamed.append(asyncio.run(bare_loop(url, prompts, args.concurrency, stream=True)))
            db = folder / f"cache-{i}.duckdb"
            store.ensure_store(db)
            wall, usage, errored = asyncio.run(harness(url, items, args.concurrency, db))
            walls.append(wall)
        rerun, rerun_usage, _ = asyncio.run(harness(url, items, args.concurrency, db))
        bare, wall, bare_streamed = statistics.median(bares), statistics.median(walls), statistics.median(streamed)
        print(f"bench_harness {args.queries:,} queries, {args.delay * 1000:.0f} ms per answer, concurrency "
              f"{args.concurrency}, endpoint in its own process, median of {args.rounds} interleaved rounds: "
              f"harness {wall:.2f} s ({usage['calls']} calls, {errored} errored, max in flight "
              f"{usage['max_in_flight']}; rounds {', '.join(f'{w:.2f}' for w in walls)}) vs bare AsyncOpenAI loop "
              f"{bare:.2f} s (rounds {', '.join(f'{b:.2f}' for b in bares)}) = {wall / bare:.2f}× [goal ≤ 1.1×]; "
              f"the bare loop streamed, as termgate asks: {bare_streamed:.2f} s (termgate {wall / bare_streamed:.2f}× "
              "that); "
              f"physical limit {args.delay * args.queries / args.concurrency:.2f} s; "
              f"rerun from cache {rerun:.2f} s with {rerun_usage['calls']} calls "
              f"({rerun_usage['cache_hits']} cache hits) [goal ≤ 1 s, 0 calls]")
    finally:
        server.stdin.close()
        server.wait(timeout=10)


REAL_PROMPT = "List 5 search synonyms for the {domain} query, one per line.\nQuery: {query}\n"


def demo_queries(n: int) -> GoldenSet:
    """`n` golden queries from data/demo, the domains taken in turn."""
    sets = [load_golden_set(ROOT / "data" / "demo" / d / "golden.jsonl").items for d in ("ecommerce", "legal", "medical")]
    turns = [item for row in zip(*sets) for item in row]
    return GoldenSet("bench-real", turns[:n], "x")


def real_server(args) -> None:
    """SmolLM2 behind llama.cpp's server (part 2): termgate beside the bare loop, per concurrency."""
    from model_server import ModelServer, missing

    reason = missing()
    if reason:
        print(f"bench_harness real server: skipped: {reason}")
        return
    items = demo_queries(args.model_queries)
    prompts = [REAL_PROMPT.format(query=i.query, domain=i.domain or "", intent="") for i in items.items]
    params = {"max_tokens": args.model_max_tokens}
    config = {"max_tokens": args.model_max_tokens, "max_tries": 1, "timeout": 600.0}
    extra = ("--interrupt_requests", "False") if args.model_no_interrupt else ()
    with ModelServer(threads=args.model_threads, extra=extra) as server:
        asyncio.run(bare_loop(server.url, prompts[:4], 1, **params))  # load the model's pages, warm both paths
        asyncio.run(harness(server.url, GoldenSet("warm", items.items[:4], "x"), 1, None, REAL_PROMPT, **config))
        figures = {c: ([], [], [], []) for c in args.model_concurrency}
        for _ in range(args.model_rounds):
            for c in args.model_concurrency:  # interleaved: a noisy neighbour hits all three alike
                bares, streamed, walls, runs = figures[c]
                bares.append(asyncio.run(bare_loop(server.url, prompts, c, **params)))
                streamed.append(asyncio.run(bare_loop(server.url, prompts, c, stream=True, **params)))
                wall, usage, errored = asyncio.run(harness(server.url, items, c, None, REAL_PROMPT, **config))
                walls.append(wall)
                runs.append((usage, errored))
    for c, (bares, streamed, walls, runs) in figures.items():
        bare, stream, wall = statistics.median(bares), statistics.median(streamed), statistics.median(walls)
        usage, errored = runs[-1]
        print(f"bench_harness real server (llama.cpp, SmolLM2-135M-Instruct Q4_1, {args.model_threads} threads, "
              f"interrupt_requests {not args.model_no_interrupt}): {len(items.items)} queries, max_tokens "
              f"{args.model_max_tokens}, concurrency {c}, median of {args.model_rounds}: harness {wall:.2f} s "
              f"({usage['calls']} calls, {errored} errored, max in flight {usage['max_in_flight']}) vs bare "
              f"AsyncOpenAI loop {bare:.2f} s = {wall / bare:.2f}× [goal ≤ 1.1×]; the bare loop streamed, as "
              f"termgate asks: {stream:.2f} s (termgate {wall / stream:.2f}× that); "
              f"{len(items.items) / wall:.2f} queries/s through termgate")
    if len(figures) > 1:
        walls = {c: statistics.median(f[2]) for c, f in figures.items()}
        low, high = min(walls), max(walls)
        print(f"bench_harness real server: through termgate, concurrency {high} takes {walls[high] / walls[low]:.2f}× "
              f"the time of concurrency {low} ({walls[high]:.2f} s vs {walls[low]:.2f} s)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--model-queries", type=int, default=100)
    parser.add_argument("--model-max-tokens", type=int, default=64)
    parser.add_argument("--model-concurrency", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--model-threads", type=int, default=2)
    parser.add_argument("--model-rounds", type=int, default=1)
    parser.add_argument("--model-no-interrupt", action="store_true",
                        help="Start the server with --interrupt_requests False (by default it ends a streamed "
                             "answer early whenever another request waits).")
    parser.add_argument("--skip-scripted", action="store_true", help="Leave out the loopback server's figures.")
    parser.add_argument("--skip-model", action="store_true", help="Leave out the real server's figures.")
    args = parser.parse_args()
    if not args.skip_scripted:
        scripted(args)
    if not args.skip_model:
        real_server(args)


if __name__ == "__main__":
    main()
