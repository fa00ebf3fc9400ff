"""Virtual-time speed: plays a multi-day benchmark with scripted models and the Time Master settings of the
shipped ``config.jsonc`` (``time_master``), and prints the virtual time covered, the wall time and their
ratio beside the goal (14 days in at most 60 s). Prints figures; not a test.

    .venv/bin/python bench/multiday_speed.py [--benchmark multiday] [--pre-wake S] [--poll S]
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

from engine.config import TimeMasterConfig, load_config, parse_config  # noqa: E402
from engine.models.tokens import warm_up  # noqa: E402
from engine.run.build import build_run  # noqa: E402


def _benchmark_path(name: str) -> Path:
    for root in (ROOT / "benchmarks", ROOT / "tests" / "benchmarks"):
        if (root / name / "benchmark.json").exists():
            return root / name
    return ROOT / "tests" / "benchmarks" / "days"


GOAL_SECONDS = 60.0  # for 14 days of virtual time


async def _play(
    folder: Path, bench: Path, time_master: TimeMasterConfig
) -> tuple[datetime, datetime, float, int, str]:
    raw = {
        "persona": {"model": "scripted/persona"},
        "time_master": time_master.model_dump(),
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
    parser.add_argument(
        "--pre-wake", type=float, help="time_master.pre_wake_delay (s); default: config.jsonc's"
    )
    parser.add_argument("--poll", type=float, help="time_master.poll_interval (s); default: config.jsonc's")
    args = parser.parse_args()
    time_master = load_config(ROOT / "config.jsonc").time_master
    if args.pre_wake is not None:
        time_master.pre_wake_delay = args.pre_wake
    if args.poll is not None:
        time_master.poll_interval = args.poll
    bench = _benchmark_path(args.benchmark)
    warm_up()
    folder = Path(tempfile.mkdtemp(prefix="mmb-multiday-"))
    try:
        start, end, wall, jumps, reason = asyncio.run(_play(folder, bench, time_master))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    covered = (end - start).total_seconds()
    shipped = "config.jsonc" if args.pre_wake is None and args.poll is None else "config.jsonc, overridden"
    print(
        f"benchmark: {bench.relative_to(ROOT)} ({reason}); time master ({shipped}): min_sleep_to_skip "
        f"{time_master.min_sleep_to_skip:g} s, pre_wake_delay {time_master.pre_wake_delay:g} s, "
        f"poll_interval {time_master.poll_interval:g} s"
    )
    print(
        f"virtual time covered: {covered / 86400:.2f} days ({start:%a %d %b %H:%M} → {end:%a %d %b %H:%M}), {jumps} clock jumps"
    )
    fortnight = 14 * 86400 / covered * wall
    verdict = "met" if fortnight <= GOAL_SECONDS else "NOT met"
    print(
        f"wall time: {wall:.1f} s; speed-up {covered / wall:,.0f}x; "
        f"14 days would take {fortnight:.1f} s (goal <= {GOAL_SECONDS:g} s: {verdict})"
    )


if __name__ == "__main__":
    main()
