"""Virtual-time speed: plays a multi-day benchmark with scripted models and prints the virtual time
covered, the wall time and their ratio (target: 14 days in at most 60 s). Prints figures; not a test.

    .venv/bin/python bench/multiday_speed.py [--benchmark multiday] [--pre-wake 0.5] [--poll 0.1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.build import build_run  # noqa: E402
from engine.config import parse_config  # noqa: E402
from engine.models.tokens import warm_up  # noqa: E402


def _benchmark_path(name: str) -> Path:
    for root in (ROOT / "benchmarks", ROOT / "tests" / "benchmarks"):
        if (root / name / "benchmark.json").exists():
            return root / name
    return ROOT / "tests" / "benchmarks" / "days"


async def _play(
    folder: Path, bench: Path, pre_wake: float, poll: float
) -> tuple[datetime, datetime, float, int, str]:
    raw = {
        "persona": {"model": "scripted/persona"},
        "time_master": {"min_sleep_to_skip": 5, "pre_wake_delay": pre_wake, "poll_interval": poll},
        "runs": {"speed": {"benchmark": str(bench), "agent": "chatbot", "model": "scripted/recall"}},
        "results_dir": str(folder / "results"),
    }
    config = parse_config(json.dumps(raw), "bench-config", folder)
    run = build_run(config, "speed")
    start = run.clock.now()
    started = time.perf_counter()
    reason = await run.run()
    return start, run.clock.now(), time.perf_counter() - started, run.state.clock_jumps, reason.value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--benchmark", default="multiday")
    parser.add_argument("--pre-wake", type=float, default=0.5, help="time_master.pre_wake_delay (s)")
    parser.add_argument("--poll", type=float, default=0.1, help="time_master.poll_interval (s)")
    args = parser.parse_args()
    bench = _benchmark_path(args.benchmark)
    warm_up()
    folder = Path(tempfile.mkdtemp(prefix="mmb-multiday-"))
    try:
        start, end, wall, jumps, reason = asyncio.run(_play(folder, bench, args.pre_wake, args.poll))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    covered = (end - start).total_seconds()
    print(
        f"benchmark: {bench.relative_to(ROOT)} ({reason}); time master: pre_wake_delay {args.pre_wake} s, poll_interval {args.poll} s"
    )
    print(
        f"virtual time covered: {covered / 86400:.2f} days ({start:%a %d %b %H:%M} → {end:%a %d %b %H:%M}), {jumps} clock jumps"
    )
    print(
        f"wall time: {wall:.1f} s; speed-up {covered / wall:,.0f}x; "
        f"14 days would take {14 * 86400 / covered * wall:.1f} s (target <= 60 s)"
    )


if __name__ == "__main__":
    main()
