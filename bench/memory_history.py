"""The memory history's cost (issue 33): a ``max`` run played by an agent whose memory is files and grows all
run long (``scripted/agent?plan=save``: every statement saved with the agent's own tools), then

1. the bytes the history stores (``results/<run>/memory/``: its index and blobs) against the size of the final
   memory folder (goal <= 2x);
2. the time of one snapshot, reading the agent's files and keeping what changed (``MemoryKeeper.take``),
   median and p95 over the run (goal < 50 ms), and how many snapshots were kept.

Played with the in-process agents of the tests that keep their memory as Hermes does (``NotebookAgent``:
entries of MEMORY.md and USER.md) and as OpenClaw does (``WorkspaceAgent``: MEMORY.md rewritten whole), or a
real agent (``--agent hermes``) on the same plan. Not a test.

    .venv/bin/python bench/memory_history.py [--agent notebook,workspace] [--benchmark max]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from engine.autopsy.history import MemoryHistory  # noqa: E402
from engine.config import parse_config  # noqa: E402
from engine.run.build import build_run  # noqa: E402
from engine.run.memory_keeper import MemoryKeeper  # noqa: E402
from engine.run.parts import RunSettings  # noqa: E402

BYTES_GOAL, SNAPSHOT_GOAL_MS = 2.0, 50.0
AGENTS = {"notebook": "memory_agents:NotebookAgent", "workspace": "memory_agents:WorkspaceAgent"}


def _tune(settings: RunSettings) -> None:
    settings.agent_poll_seconds = 0.001
    settings.agent_quiet_seconds = 0.05


async def _play(folder: Path, agent: str, benchmark: str) -> tuple[int, int, list[float], int]:
    """(bytes stored, final memory bytes, snapshot times in ms, snapshots kept) of one run."""
    raw = {
        "persona": {"model": "scripted/persona"},
        "runs": {
            "r": {
                "benchmark": benchmark,
                "agent": AGENTS.get(agent, agent),
                "model": "scripted/agent?plan=save",
            }
        },
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(folder / "results"),
    }
    config = parse_config(json.dumps(raw), "bench-config", folder)
    timings: list[float] = []
    take = MemoryKeeper.take

    async def timed(keeper: MemoryKeeper, kind: str) -> None:  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        await take(keeper, kind)  # type: ignore[arg-type]
        timings.append((time.perf_counter() - started) * 1000)

    MemoryKeeper.take = timed  # type: ignore[assignment,method-assign]
    try:
        run = build_run(config, "r", tune=_tune)
        await run.run()
    finally:
        MemoryKeeper.take = take  # type: ignore[method-assign]
    history = MemoryHistory(config.results_path() / "r")
    final = history.snapshots()[-1]
    memory = sum(len((history.text(final, name) or "").encode()) for name in final.files)
    return history.stored_bytes(), memory, timings, len(history.snapshots())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agent", default="notebook,workspace", help="notebook, workspace, hermes, openclaw")
    parser.add_argument("--benchmark", default="max")
    args = parser.parse_args()
    print(f"memory history of a {args.benchmark} run, every statement saved (scripted/agent?plan=save)")
    print(
        f"{'agent':<10} {'memory':>9} {'stored':>9} {'ratio':>6} (goal <= {BYTES_GOAL:g}x)  "
        f"{'snapshots':>9} {'median':>8} {'p95':>8} {'max':>8} (goal < {SNAPSHOT_GOAL_MS:g} ms)"
    )
    for agent in args.agent.split(","):
        with tempfile.TemporaryDirectory(prefix="mmb-bench-memory-") as scratch:
            stored, memory, times, kept = asyncio.run(_play(Path(scratch), agent.strip(), args.benchmark))
        times.sort()
        p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
        ratio = stored / memory if memory else float("inf")
        print(
            f"{agent:<10} {memory:>9,} {stored:>9,} {ratio:>5.2f}x {'ok' if ratio <= BYTES_GOAL else 'MISSED':>14}  "
            f"{kept:>9} {statistics.median(times):>6.1f}ms {p95:>6.1f}ms {times[-1]:>6.1f}ms "
            f"{'ok' if p95 < SNAPSHOT_GOAL_MS else 'MISSED'} ({len(times)} taken)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
