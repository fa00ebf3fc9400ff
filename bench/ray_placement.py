"""What a run placed on Ray costs (issue 15): per run, the start time (placed → its first event at the head:
the actor's worker process, the engine's import, the build, the agent's start) and the peak RSS of the actor's
worker process (the engine, the persona model and, for the chatbot, the agent's model), on a local Ray
instance; for the README's table. Not a test.

    .venv/bin/python bench/ray_placement.py [--runs 4] [--agent chatbot] [--model scripted/recall]
                                            [--benchmark max]

A real agent (``--agent openclaw``) runs in processes of its own: their memory is not counted here.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import ray  # noqa: E402

from engine.config import load_config  # noqa: E402
from engine.events import Event  # noqa: E402
from engine.placement.scheduler import Scheduler  # noqa: E402


class FirstEvents:
    def __init__(self) -> None:
        self.at: dict[str, float] = {}

    def on_event(self, run_id: str, event: Event) -> None:
        self.at.setdefault(run_id, time.monotonic())


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident set (``VmHWM``), in MB; 0 once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


async def measure(args: argparse.Namespace, folder: Path) -> None:
    shutil.copytree(ROOT / "benchmarks" / args.benchmark, folder / "benchmarks" / args.benchmark)
    run = {"benchmark": args.benchmark, "agent": args.agent, "model": args.model}
    raw = {"executor": {"kind": "ray"}, "runs": {f"r{i}": run for i in range(args.runs)}}
    (folder / "config.jsonc").write_text(json.dumps(raw))
    scheduler = Scheduler(load_config(folder / "config.jsonc"))
    first = FirstEvents()
    scheduler.add_observer(first)
    placed_at: dict[str, float] = {}
    for run_id in scheduler.run_ids():
        placed_at[run_id] = time.monotonic()
        await scheduler.start(run_id)
    pids: dict[str, int] = {}
    peaks: dict[str, float] = {}
    waiter = asyncio.ensure_future(scheduler.wait())
    while not waiter.done():
        for run_id, slot in scheduler.slots.items():
            actor: Any = getattr(slot.placed, "actor", None)
            if run_id not in pids and actor is not None and run_id in first.at:
                pids[run_id] = await actor.__ray_call__.remote(lambda self: __import__("os").getpid())
            if run_id in pids:
                peaks[run_id] = max(peaks.get(run_id, 0.0), peak_rss_mb(pids[run_id]))
        await asyncio.sleep(0.1)
    print(f"{args.runs} runs of {args.benchmark} @ {args.agent} ({args.model}) on a local Ray instance:")
    for run_id in scheduler.run_ids():
        start = first.at[run_id] - placed_at[run_id]
        peak = f"{peaks[run_id]:.0f} MB" if peaks.get(run_id) else "– (ended before a look)"
        print(f"  {run_id}: start {start:.1f} s · peak RSS {peak} · {waiter.result()[run_id]}")
    starts = [first.at[r] - placed_at[r] for r in scheduler.run_ids()]
    print(
        f"start: median {statistics.median(starts):.1f} s · peak RSS: max {max(peaks.values(), default=0):.0f} MB"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--agent", default="chatbot")
    parser.add_argument("--model", default="scripted/recall")
    parser.add_argument("--benchmark", default="max")
    args = parser.parse_args()
    began = time.monotonic()
    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    print(f"Ray started in {time.monotonic() - began:.1f} s")
    with tempfile.TemporaryDirectory(prefix="mmb-ray-bench-") as folder:
        asyncio.run(measure(args, Path(folder)))
    ray.shutdown()


if __name__ == "__main__":
    main()
