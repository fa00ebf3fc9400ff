"""What a run placed on Ray costs (issue 15): per run, the start time (placed → its first event at the head:
the actor's worker process, the engine's import, the build, the agent's start) and the peak RSS of the actor's
worker process (the engine, the persona model and, for the chatbot, the agent's model), on a local Ray
instance; for the README's table. Not a test.

    .venv/bin/python bench/ray_placement.py [--runs 4] [--agent chatbot] [--model scripted/recall]
                                            [--benchmark max]

A real agent (``--agent openclaw``) runs in processes of its own: their memory is not counted here.

With ``--against-local`` (issue 27) it plays one group of ``--runs`` repeats (default 8) of ``--benchmark``
against the chatbot, every model call ``--latency`` seconds (default 0.05), first on the local executor and then
on a Ray instance the engine starts itself, and prints the fixed cost of Ray (joining it, then the first event
at the head) and the wall time of both beside the goal (Ray ≤ 1.3× local).
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


GOAL = 1.3  # Ray's wall time for the group, as a multiple of the local executor's


async def play_group(config_path: Path) -> tuple[float, float, float, dict[str, Any]]:
    """Every run of the config to its end: wall time, the first start (for Ray: joining it), the first event
    at the head (both from the first start), and how each ended."""
    scheduler = Scheduler(load_config(config_path))
    first = FirstEvents()
    scheduler.add_observer(first)
    run_ids = scheduler.run_ids()
    began = time.monotonic()
    await scheduler.start(run_ids[0])
    joined = time.monotonic() - began
    for run_id in run_ids[1:]:
        await scheduler.start(run_id)
    ended = await scheduler.wait()
    wall = time.monotonic() - began
    return wall, joined, min(first.at.values(), default=began) - began, ended


def write_group(folder: Path, args: argparse.Namespace, kind: str) -> Path:
    shutil.copytree(ROOT / "benchmarks" / args.benchmark, folder / "benchmarks" / args.benchmark)
    slow = {"latency": args.latency}
    raw = {
        "models": {
            "persona": {"model": "scripted/persona", **slow},
            "agent": {"model": "scripted/recall", **slow},
        },
        "persona": {"model": "persona"},
        "executor": {"kind": kind, **({"address": "local"} if kind == "ray" else {})},
        "runs": {
            "g": {"benchmark": args.benchmark, "agent": "chatbot", "model": "agent", "repeats": args.runs}
        },
    }
    (folder / "config.jsonc").write_text(json.dumps(raw))
    return folder / "config.jsonc"


def against_local(args: argparse.Namespace, folder: Path) -> None:
    what = f"{args.runs} runs of {args.benchmark} @ chatbot, {args.latency * 1000:.0f} ms per model call"
    local = asyncio.run(play_group(write_group(folder / "local", args, "local")))
    placed = asyncio.run(play_group(write_group(folder / "ray", args, "ray")))
    ray.shutdown()
    for name, (wall, joined, first_event, ended) in (("local", local), ("ray", placed)):
        finished = sum(1 for reason in ended.values() if str(reason) == "finished")
        print(
            f"{name:>5}: {wall:6.1f} s · first start {joined:4.1f} s · first event {first_event:4.1f} s"
            f" · finished {finished}/{len(ended)}"
        )
    ratio = placed[0] / local[0]
    print(f"{what}:")
    print(f"  fixed cost of Ray: join {placed[1]:.1f} s, first event {placed[2]:.1f} s after the first start")
    print(f"  wall time on Ray / local: {ratio:.2f} (goal ≤ {GOAL}: {'met' if ratio <= GOAL else 'NOT met'})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--agent", default="chatbot")
    parser.add_argument("--model", default="scripted/recall")
    parser.add_argument("--benchmark", default="max")
    parser.add_argument(
        "--against-local", action="store_true", help="a group on Ray against the local executor"
    )
    parser.add_argument(
        "--latency", type=float, default=0.05, help="seconds per model call (--against-local)"
    )
    args = parser.parse_args()
    if args.against_local:
        args.runs = args.runs or 8
        with tempfile.TemporaryDirectory(prefix="mmb-ray-bench-") as folder:
            against_local(args, Path(folder))
        return
    args.runs = args.runs or 4
    began = time.monotonic()
    ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
    print(f"Ray started in {time.monotonic() - began:.1f} s")
    with tempfile.TemporaryDirectory(prefix="mmb-ray-bench-") as folder:
        asyncio.run(measure(args, Path(folder)))
    ray.shutdown()


if __name__ == "__main__":
    main()
