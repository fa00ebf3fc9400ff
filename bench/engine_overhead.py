"""Engine overhead with scripted models that sleep a fixed latency per call. Prints figures; not a test.

1. one run: wall time / sum of model latencies (target <= 1.02 at 200 ms per call)
2. 50 runs at once vs one run: wall-time ratio (target <= 1.2)
3. time to save state at event 200 vs event 20,000 (target ratio <= 1.5)

    .venv/bin/python bench/engine_overhead.py [--latency 0.2] [--runs 50] [--benchmark demo]
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

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.build import build_run  # noqa: E402
from engine.config import parse_config  # noqa: E402
from engine.events import PersonaThinking  # noqa: E402
from engine.models.tokens import warm_up  # noqa: E402
from engine.run_parts import RunSettings  # noqa: E402
from engine.scheduler import Scheduler  # noqa: E402


def _config(folder: Path, benchmark: str, latency: float, runs: int):  # type: ignore[no-untyped-def]
    raw = {
        "models": {
            "persona": {"model": "scripted/persona", "latency": latency},
            "agent": {"model": "scripted/recall", "latency": latency},
        },
        "persona": {"model": "persona"},
        "runs": {
            f"r{i}": {"benchmark": benchmark, "agent": "chatbot", "model": "agent"} for i in range(runs)
        },
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(folder / "results"),
    }
    return parse_config(json.dumps(raw), "bench-config", folder)


def _tune(settings: RunSettings) -> None:
    settings.agent_poll_seconds = 0.001


async def _play(folder: Path, benchmark: str, latency: float, runs: int) -> tuple[float, int]:
    config = _config(folder, benchmark, latency, runs)
    scheduler = Scheduler(config, tune=_tune)
    started = time.perf_counter()
    for run_id in config.runs:
        await scheduler.start(run_id)
    await scheduler.wait()
    wall = time.perf_counter() - started
    calls = 0
    for slot in scheduler.slots.values():
        assert slot.run is not None and slot.run.state.finished, slot.run and slot.run.state.reason
        calls += sum(v["calls"] for v in slot.run.meter.as_dict().values())
    return wall, calls // runs


def _save_times(folder: Path, benchmark: str) -> tuple[float, float]:
    config = _config(folder, benchmark, 0.0, 1)
    run = build_run(config, "r0")
    samples: dict[int, list[float]] = {200: [], 20000: []}
    for n in range(1, 20001):
        run.emit(PersonaThinking(text=f"thinking {n} " + "x" * 200))
        if n in samples:
            for _ in range(30):  # fsync times are noisy: take the median of many saves
                started = time.perf_counter()
                run.save()
                samples[n].append(time.perf_counter() - started)
    run.recorder.transcript.close()
    return statistics.median(samples[200]), statistics.median(samples[20000])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--benchmark", default="demo")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mmb-bench-"))
    started = time.perf_counter()
    warm_up()
    print(
        f"tokenizer loaded before timing (a one-time cost per process): {time.perf_counter() - started:.2f} s"
    )
    try:
        one_wall, calls = asyncio.run(_play(folder / "one", args.benchmark, args.latency, 1))
        latency_sum = calls * args.latency
        print(
            f"one run: {calls} model calls, wall {one_wall:.2f} s, latency sum {latency_sum:.2f} s, "
            f"ratio {one_wall / latency_sum:.3f} (target <= 1.02)"
        )
        many_wall, _ = asyncio.run(_play(folder / "many", args.benchmark, args.latency, args.runs))
        print(
            f"{args.runs} runs at once: wall {many_wall:.2f} s vs one run {one_wall:.2f} s, "
            f"ratio {many_wall / one_wall:.3f} (target <= 1.2)"
        )
        early, late = _save_times(folder / "save", args.benchmark)
        print(
            f"state save: event 200 {early * 1000:.2f} ms, event 20,000 {late * 1000:.2f} ms, "
            f"ratio {late / early:.2f} (target <= 1.5)"
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
