"""Engine overhead with scripted models that sleep a fixed latency per call. Prints each figure beside its
goal (issue 13); not a test.

1. one run of ``max`` at 200 ms per model call: wall time / sum of the model latencies (goal <= 1.015)
2. 50 runs of ``max`` at once vs one run: wall-time ratio (goal <= 1.2)
3. the state save of a real long run (``max`` played over and over as one benchmark, at zero latency) at
   event ~200 and event ~20,000: a save on the loop (the journal's append, ``state.json`` serialised) as
   played, then both checkpoints resumed side by side and saved in turn, each save timed with its fsync'd
   writes (the journal synced, ``state.json`` written atomically) (goal: event 20,000 / event 200 <= 1.5)

    .venv/bin/python bench/engine_overhead.py [--latency 0.2] [--runs 50] [--benchmark max]
                                              [--events 20000] [--parts 123] [--rounds 100]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from engine.config import Config, parse_config  # noqa: E402
from engine.models.tokens import warm_up  # noqa: E402
from engine.placement.scheduler import Scheduler  # noqa: E402
from engine.run.build import build_run  # noqa: E402
from engine.run.parts import RunSettings  # noqa: E402

WALL_GOAL, MANY_GOAL, SAVE_GOAL = 1.015, 1.2, 1.5
EARLY = 200  # the events around which a save is timed early in the run
WINDOW = 300  # events per window


def _config(folder: Path, benchmark: str, latency: float, runs: int, benchmarks: Path) -> Config:
    raw = {
        "models": {
            "persona": {"model": "scripted/persona", "latency": latency},
            "agent": {"model": "scripted/recall", "latency": latency},
        },
        "persona": {"model": "persona"},
        "runs": {
            f"r{i}": {"benchmark": benchmark, "agent": "chatbot", "model": "agent"} for i in range(runs)
        },
        "benchmarks_dir": str(benchmarks),
        "results_dir": str(folder / "results"),
    }
    return parse_config(json.dumps(raw), "bench-config", folder)


def _tune(settings: RunSettings) -> None:
    settings.agent_poll_seconds = 0.001


async def _play(folder: Path, benchmark: str, latency: float, runs: int) -> tuple[float, int]:
    config = _config(folder, benchmark, latency, runs, ROOT / "benchmarks")
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


def write_repeated(source: Path, target: Path, times: int) -> None:
    """``source`` played ``times`` over as one benchmark: its chapters again, with new check ids (and KEY.md
    entries for them), on the same sheets: a run of it grows as a long run does."""
    shutil.copytree(source, target)
    meta = json.loads((source / "benchmark.json").read_text(encoding="utf-8"))
    chapters, count = [], len(meta["chapters"])
    head, *entries = (source / "KEY.md").read_text(encoding="utf-8").split("\n## ")
    key = [head]
    check_id = re.compile(r"^(❓ |## |sum: )(\d+)\.", re.MULTILINE)
    for repeat in range(times):

        def shifted(text: str, offset: int = repeat * count) -> str:
            return check_id.sub(lambda m: f"{m[1]}{int(m[2]) + offset}.", text)

        for number, name in enumerate(meta["chapters"], 1):
            chapter = f"chapter{number + repeat * count}.md"
            (target / chapter).write_text(
                shifted((source / name).read_text(encoding="utf-8")), encoding="utf-8"
            )
            chapters.append(chapter)
        key += [shifted("## " + entry)[3:] for entry in entries]
    (target / "KEY.md").write_text("\n## ".join(key), encoding="utf-8")
    (target / "benchmark.json").write_text(json.dumps({**meta, "chapters": chapters}), encoding="utf-8")


class _SaveTimes:
    """Times every save of the long run on the loop, in a window of events after each point."""

    def __init__(self, late: int) -> None:
        self.windows = {EARLY: (EARLY, EARLY + WINDOW), late: (late, late + WINDOW)}
        self.saves: dict[int, list[float]] = {point: [] for point in self.windows}
        self.copies: dict[int, Path] = {}  # the run's folder as it was at the end of each window

    def point(self, events: int) -> int | None:
        return next((p for p, (lo, hi) in self.windows.items() if lo <= events < hi), None)


async def _long_run(folder: Path, benchmark: str, late: int) -> _SaveTimes:
    """Plays ``benchmark`` repeated to event ``late`` + a window, timing its saves; copies its folder at the
    end of each window (its checkpoint on disk) for ``_interleaved``."""
    events = late + WINDOW
    times = events // 450 + 3  # max: ~760 events the first time, ~500 each time again
    write_repeated(ROOT / "benchmarks" / benchmark, folder / "benchmarks" / "long", times)
    run = build_run(_config(folder, "long", 0.0, 1, folder / "benchmarks"), "r0", tune=_tune)
    measured = _SaveTimes(late)
    save = run.recorder.save

    def timed_save() -> None:
        point = measured.point(run.state.transcript_events)
        started = time.perf_counter()
        save()
        if point is not None:
            measured.saves[point].append(time.perf_counter() - started)

    run.recorder.save = timed_save  # type: ignore[method-assign]
    step = run._step  # noqa: SLF001 - the unit the run is played in

    async def step_until_done() -> None:
        await step()
        for point, (_, high) in measured.windows.items():
            if point not in measured.copies and run.state.transcript_events >= high:
                run.save()
                await run.recorder.writer.flush()
                measured.copies[point] = copy = folder / f"at-{point}"
                shutil.copytree(run.run_dir, copy / "results" / "r0", ignore=shutil.ignore_patterns("*.lock"))
        if run.state.transcript_events >= events:
            raise asyncio.CancelledError  # ends the run as stopped, its state saved

    run._step = step_until_done  # type: ignore[method-assign]  # noqa: SLF001
    try:
        await run.run()
    except asyncio.CancelledError:
        pass
    if len(measured.copies) < 2:
        raise SystemExit(f"the long run ended at event {run.state.transcript_events} ({run.state.reason})")
    return measured


async def _interleaved(
    measured: _SaveTimes, rounds: int
) -> dict[int, tuple[list[float], list[float], int, int]]:
    """The real save path of both checkpoints, resumed side by side and timed in turn (so that the disk's
    and the machine's other load falls on both alike): each round appends a turn's messages (the last two of
    the context, copied), saves (on the loop), and waits for the fsync'd writes (the journal synced,
    ``state.json`` written atomically). Per point: save times, write times, state.json and journal bytes."""
    runs = {}
    for point, copy in measured.copies.items():
        run = build_run(_config(copy, "long", 0.0, 1, copy.parent / "benchmarks"), "r0", tune=_tune)
        run.save()  # a session's first save starts a new journal generation: not timed
        await run.recorder.writer.flush()
        runs[point] = run
    times: dict[int, tuple[list[float], list[float]]] = {point: ([], []) for point in runs}
    for _ in range(rounds):
        for point, run in runs.items():
            for message in run.state.persona_messages[-2:]:
                run.append_message(dict(message))
            started = time.perf_counter()
            run.save()
            saved = time.perf_counter()
            await run.recorder.writer.flush()
            times[point][0].append(saved - started)
            times[point][1].append(time.perf_counter() - saved)
    result = {}
    for point, run in runs.items():
        state_bytes = (run.run_dir / "state.json").stat().st_size
        result[point] = (*times[point], state_bytes, run.state.journal_bytes)
        await run.recorder.close()
        if run.lock is not None:
            run.lock.release()
    return result


def _ms(values: list[float]) -> float:
    return statistics.median(values) * 1000 if values else float("nan")


def _report_saves(measured: _SaveTimes, late: int, rounds: int) -> None:
    played = {point: _ms(measured.saves[point]) for point in (EARLY, late)}
    print(
        f"  as played: a save on the loop {played[EARLY]:.3f} ms at event ~{EARLY} "
        f"(median of {len(measured.saves[EARLY])}), {played[late]:.3f} ms at event ~{late:,} "
        f"(median of {len(measured.saves[late])}): ratio {played[late] / played[EARLY]:.2f}"
    )
    figures = asyncio.run(_interleaved(measured, rounds))
    rows = {}
    for point in (EARLY, late):
        saves, writes, state_bytes, journal_bytes = figures[point]
        rows[point] = (_ms(saves), _ms(saves) + _ms(writes))
        print(
            f"  event ~{point:,} resumed, {rounds} saves in turn with the other: state.json "
            f"{state_bytes / 1024:.1f} KB, journal {journal_bytes / 1024:.0f} KB; on the loop "
            f"{_ms(saves):.3f} ms, fsync'd writes {_ms(writes):.2f} ms (medians)"
        )
    loop_ratio = rows[late][0] / rows[EARLY][0]
    total_ratio = rows[late][1] / rows[EARLY][1]
    verdict = "met" if max(loop_ratio, total_ratio) <= SAVE_GOAL else "NOT met"
    print(
        f"state save event {late:,} / event {EARLY}: on the loop {loop_ratio:.2f}, serialise + fsync'd "
        f"writes {total_ratio:.2f} (goal <= {SAVE_GOAL}: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--benchmark", default="max")
    parser.add_argument("--events", type=int, default=20000, help="the late point of part 3")
    parser.add_argument("--parts", default="123", help="which parts to run, e.g. 3")
    parser.add_argument("--rounds", type=int, default=100, help="saves timed at each point of part 3")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="mmb-bench-"))
    started = time.perf_counter()
    warm_up()
    print(
        f"tokenizer loaded before timing (a one-time cost per process): {time.perf_counter() - started:.2f} s"
    )
    try:
        one_wall = 0.0
        if "1" in args.parts or "2" in args.parts:
            one_wall, calls = asyncio.run(_play(folder / "one", args.benchmark, args.latency, 1))
            latency_sum = calls * args.latency
            ratio = one_wall / latency_sum
            print(
                f"one run of {args.benchmark} at {args.latency * 1000:g} ms per call: {calls} model calls, "
                f"wall {one_wall:.2f} s, latency sum {latency_sum:.2f} s, ratio {ratio:.3f} "
                f"(goal <= {WALL_GOAL}: {'met' if ratio <= WALL_GOAL else 'NOT met'})"
            )
        if "2" in args.parts:
            many_wall, _ = asyncio.run(_play(folder / "many", args.benchmark, args.latency, args.runs))
            ratio = many_wall / one_wall
            print(
                f"{args.runs} runs at once: wall {many_wall:.2f} s vs one run {one_wall:.2f} s, ratio "
                f"{ratio:.3f} (goal <= {MANY_GOAL}: {'met' if ratio <= MANY_GOAL else 'NOT met'})"
            )
        if "3" in args.parts:
            late = args.events
            print(
                f"state saves of one long run ({args.benchmark} repeated, zero latency) to event {late + WINDOW:,}:"
            )
            measured = asyncio.run(_long_run(folder / "save", args.benchmark, late))
            _report_saves(measured, late, args.rounds)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
