"""What one run of each agent costs the machine that plays it, for the README's "Many machines" table (issue
15): the time from the run's start to the agent's first reply (the agent's start, its session, the first
message) and the peak memory of the agent's own processes (its process group, from the run's pid file,
summed ``VmRSS`` sampled every 0.2 s while the run plays). Offline: the agent talks to the scripted agent
model on the ``demo`` benchmark. The real agents must be installed (``make agents``). Not a test.

    .venv/bin/python bench/agent_footprint.py [AGENT ...] [--benchmark demo]
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

from adapters.local.agent import OWN_DIR, PID_FILE  # noqa: E402
from adapters.local.agent_pid import read_pid_file  # noqa: E402
from engine.config import load_config  # noqa: E402
from engine.events import Event  # noqa: E402
from engine.placement.scheduler import Scheduler  # noqa: E402

SAMPLE = 0.2  # seconds between two looks at the agent's memory


def group_rss_mb(pgid: int) -> float:
    """The resident memory of every process in process group ``pgid``, in MB."""
    total_kb = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text(encoding="utf-8", errors="replace")
            if int(fields[fields.rfind(")") + 2 :].split()[2]) != pgid:  # field 5 of proc(5): pgrp
                continue
            status = (stat.parent / "status").read_text(encoding="utf-8")
        except (OSError, ValueError, IndexError):
            continue
        total_kb += next(
            (int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:")), 0
        )
    return total_kb / 1024


class FirstReply:
    def __init__(self) -> None:
        self.at: float | None = None

    def on_event(self, run_id: str, event: Event) -> None:
        if event.kind == "agent_replied" and self.at is None:
            self.at = time.monotonic()


async def measure(agent: str, benchmark: str, folder: Path) -> tuple[float | None, float, str]:
    """(seconds to the first reply, peak MB of the agent's processes, how the run ended)."""
    raw = {
        "runs": {"r": {"benchmark": benchmark, "agent": agent, "model": "scripted/agent"}},
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(folder / "results"),
    }
    (folder / "config.jsonc").write_text(json.dumps(raw), encoding="utf-8")
    scheduler = Scheduler(load_config(folder / "config.jsonc"))
    first = FirstReply()
    scheduler.add_observer(first)
    pid_file = folder / "results" / "r" / OWN_DIR / PID_FILE
    started = time.monotonic()
    await scheduler.start("r")
    peak = 0.0
    while scheduler.running("r"):
        record = read_pid_file(pid_file)
        if record is not None:
            peak = max(peak, group_rss_mb(int(record["pgid"])))
        await asyncio.sleep(SAMPLE)
    ended = await scheduler.wait(["r"])
    reply = first.at - started if first.at is not None else None
    return reply, peak, str(ended["r"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("agents", nargs="*", default=["chatbot", "hermes", "openclaw"])
    parser.add_argument("--benchmark", default="demo")
    args = parser.parse_args()
    print(f"one run each of {args.benchmark!r} on the scripted agent model; agent memory = its process group")
    for agent in args.agents:
        with tempfile.TemporaryDirectory(prefix=f"mmb-footprint-{agent}-") as tmp:
            reply, peak, ended = asyncio.run(measure(agent, args.benchmark, Path(tmp)))
        first = f"{reply:6.1f} s" if reply is not None else "  none"
        memory = f"{peak:7.0f} MB" if peak else "  in the engine's process"
        print(f"{agent:10}  start → first reply {first}   peak agent memory {memory}   ({ended})")


if __name__ == "__main__":
    main()
