"""How much of the persona's input a provider's prefix cache could serve, and what that does to the bill
(issue 26), for the README's cost table. A benchmark is played with the persona model behind
``serve-scripted`` (an OpenAI-compatible endpoint in this process), which reports usage as a
prefix-caching provider would: per request, the prefix shared with the previous request of the model is
cached. It prints the share of input tokens served from the cache over the run and at its worst call (the
first request aside: nothing precedes it), and the persona's cost at two price sets, cached input priced
and not. Offline; the agent is ``chatbot`` on ``scripted/recall``. Not a test.

    .venv/bin/python bench/prompt_cache.py [BENCHMARK ...]      # default: max multiday
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.config import Price, load_config  # noqa: E402
from engine.models.base import Usage  # noqa: E402
from engine.models.server import served_usage, start_server  # noqa: E402
from engine.placement.scheduler import Scheduler  # noqa: E402
from engine.report.prices import cost, usd  # noqa: E402

GOAL = 0.98  # of the persona's input served from the cache on ``max``
# two price sets, USD per million tokens, as two providers listed them in late 2026 (examples, not quotes)
PRICE_SETS = {
    "DeepSeek-like": Price(input=0.27, cached_input=0.07, output=1.10),
    "gpt-4o-mini-like": Price(input=0.15, cached_input=0.075, output=0.60),
}


async def play(benchmark: str, folder: Path) -> tuple[list[Usage], str, float]:
    """The usage of every persona request of one run of ``benchmark``, how it ended, its wall time."""
    runner, port = await start_server("127.0.0.1", 0)
    try:
        raw = {
            "models": {"served": {"model": "scripted/persona", "base_url": f"http://127.0.0.1:{port}/v1"}},
            "runs": {"r": {"benchmark": benchmark, "agent": "chatbot", "persona": "served"}},
            "benchmarks_dir": str(ROOT / "benchmarks"),
            "results_dir": str(folder / "results"),
        }
        (folder / "config.jsonc").write_text(json.dumps(raw), encoding="utf-8")
        scheduler = Scheduler(load_config(folder / "config.jsonc"))
        started = time.monotonic()
        await scheduler.start("r")
        ended = await scheduler.wait(["r"])
        return served_usage(runner), str(ended["r"]), time.monotonic() - started
    finally:
        await runner.cleanup()


def report(benchmark: str, served: list[Usage], ended: str, seconds: float) -> None:
    prompt = sum(u.prompt_tokens for u in served)
    cached = sum(u.cached_tokens for u in served)
    worst = min((u.cached_tokens / u.prompt_tokens for u in served[1:] if u.prompt_tokens), default=0.0)
    share = cached / prompt if prompt else 0.0
    goal = f" (goal ≥ {GOAL:.0%})" if benchmark == "max" else ""
    print(f"{benchmark}: {len(served)} persona requests, {prompt:,} input tokens ({ended}, {seconds:.0f} s)")
    print(f"  served from the cache: {share:.1%} of the input{goal}; worst call {worst:.1%}")
    totals = {
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "completion_tokens": sum(u.completion_tokens for u in served),
    }
    for name, price in PRICE_SETS.items():
        billed, uncached = cost(totals, price), cost({**totals, "cached_tokens": 0}, price)
        print(f"  {name}: persona {usd(billed)} with cached input priced, {usd(uncached)} without")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("benchmarks", nargs="*", default=["max", "multiday"])
    args = parser.parse_args()
    for benchmark in args.benchmarks:
        with tempfile.TemporaryDirectory(prefix=f"mmb-cache-{benchmark}-") as tmp:
            report(benchmark, *asyncio.run(play(benchmark, Path(tmp))))


if __name__ == "__main__":
    main()
