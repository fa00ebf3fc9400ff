"""The app's CPU while runs play (issue 25, point 2): a viewer's cost follows what it shows.

The real app runs headless (``App.run_test``, 200x50 unless ``--size``, its clock ticking) over a real
``Scheduler``, each frame turned into escape codes as a terminal driver would (``tui_transcript.py``'s
``Frames``). Its CPU is this process's (``time.process_time``: the machine may be busy) over a window of
wall time, as a share of one core; each window also says the events played and the frames painted meanwhile.

(a) attached, nothing shown changes: a run played by another process (``mmb-tui run live --headless``, the
    scripted persona and agent at LATENCY per call, ``max`` played over and over) is attached, and the screen
    shows another run's transcript, zoomed (goal <= 5 % of a core);
(b) four busy local runs: four ``max`` runs played by this process at 200 ms per call, side by side under the
    runs pane (goal <= 25 % of a core, the engine's own work included);
(c) the regression of the issue: the attached run's transcript grown to EVENTS events first (played at zero
    latency, killed, resumed at LATENCY), its column the second of its page, the operator reading an event of
    it; the CPU then, zoomed on it (``z``), and once left (``z`` on and off ten times more): left must come
    back to before, per event played (the owner's pace varies with the machine's load, so a share of a core
    alone compares windows of different work), and the app's tasks stay as many.

    .venv/bin/python bench/viewer_cpu.py [--parts abc] [--latency 0.05] [--seconds 20] [--events 5000]
                                         [--size 200x50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]

from engine_helpers import headless_command  # noqa: E402  (tests/: the command line of a headless run)
from engine_overhead import write_repeated  # noqa: E402  (bench/: max played over and over)
from tui_transcript import Frames  # noqa: E402  (bench/: the frame recorder of the TUI bench)

from engine.config import load_config  # noqa: E402
from engine.placement.scheduler import Scheduler  # noqa: E402
from engine.run.lock import owner_socket  # noqa: E402
from mmb_tui.app import MmbApp, make_app  # noqa: E402
from mmb_tui.screens.main_screen import MainScreen  # noqa: E402
from mmb_tui.transcript.repaint_pace import PACE  # noqa: E402

IDLE_GOAL = 5.0  # % of a core: attached, nothing shown changes
BUSY_GOAL = 25.0  # % of a core: four local runs at 200 ms per call
BUSY_LATENCY = 0.2
ZOOMS = 10  # (c): z pressed on and off this many times more before the last window
LEFT_SLACK = 1.25  # (c): left may cost this many times reading's CPU per event played
EVENTS_PER_MAX = 500  # about, as the scripted models play it


def write_config(folder: Path, latency: float, events: int = 0) -> Path:
    """A config: ``live`` (max repeated: ``events`` and thousands more, attached), ``other`` (demo, never
    started), ``b1``…``b4`` (max)."""
    benchmarks = folder / "benchmarks"
    if not (benchmarks / "long").exists():
        write_repeated(ROOT / "benchmarks" / "max", benchmarks / "long", 8 + events // EVENTS_PER_MAX)
        (benchmarks / "max").symlink_to(ROOT / "benchmarks" / "max")
        (benchmarks / "demo").symlink_to(ROOT / "benchmarks" / "demo")
    runs = {f"b{i}": {"benchmark": "max"} for i in range(1, 5)}  # the first page of four columns …
    runs |= {"other": {"benchmark": "demo"}, "live": {"benchmark": "long"}}  # … the second: live in the 2nd
    raw = {
        "models": {
            "persona": {"model": "scripted/persona", "latency": latency},
            "agent": {"model": "scripted/recall", "latency": latency},
        },
        "persona": {"model": "persona"},
        "runs": {run_id: {**run, "agent": "chatbot", "model": "agent"} for run_id, run in runs.items()},
        "benchmarks_dir": str(benchmarks),
        "results_dir": str(folder / "results"),
    }
    path = folder / "config.jsonc"
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    return path


@contextmanager
def played_elsewhere(config: Path, run_id: str) -> Iterator[subprocess.Popen[bytes]]:
    """``mmb-tui run RUN --headless`` in another process, once its control socket is named in the run's lock;
    stopped at its last checkpoint (SIGTERM) on the way out."""
    command = headless_command(config, run_id)
    owner = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run_dir = config.parent / "results" / run_id
    deadline = time.monotonic() + 60
    while owner_socket(run_dir) is None:
        if owner.poll() is not None or time.monotonic() > deadline:
            raise SystemExit(f"the owner of {run_id} did not start (exit {owner.poll()})")
        time.sleep(0.05)
    try:
        yield owner
    finally:
        if owner.poll() is None:
            owner.send_signal(signal.SIGTERM)
        try:
            owner.wait(timeout=30)
        except subprocess.TimeoutExpired:
            owner.kill()
            owner.wait()


def events_in(config: Path, run_id: str) -> int:
    try:
        with open(config.parent / "results" / run_id / "transcript.jsonl", "rb") as handle:
            return sum(1 for _ in handle)
    except OSError:
        return 0


def grow(folder: Path, events: int) -> None:
    """``live``'s transcript grown to about ``events`` events, played at zero latency and killed (a run at zero
    latency may outrun a SIGTERM; a ``kill -9`` resumes from its last checkpoint all the same)."""
    config = write_config(folder, 0.0, events)
    with played_elsewhere(config, "live") as owner:
        while events_in(config, "live") < events:
            time.sleep(0.05)
        owner.kill()


class Cpu:
    """This process's CPU over a window, as a share of one core."""

    def __init__(self) -> None:
        self.cpu, self.wall = time.process_time(), time.perf_counter()

    def percent(self) -> float:
        return 100 * (time.process_time() - self.cpu) / (time.perf_counter() - self.wall)


@dataclass
class Window:
    """What a measured window cost: the app's CPU as a share of one core, and the events played meanwhile."""

    percent: float
    seconds: float
    played: int

    def ms_per_event(self) -> float:
        """The app's CPU per event played, in milliseconds (the whole window's CPU, its fixed part included)."""
        return 10 * self.percent * self.seconds / max(1, self.played)


@dataclass
class Bench:
    folder: Path
    latency: float  # seconds per model call of the attached run
    seconds: float  # wall time of each measured window
    size: tuple[int, int]

    def viewer(self, config: Path) -> tuple[Scheduler, MmbApp]:
        scheduler = Scheduler(load_config(config), front_end="tui")
        return scheduler, make_app(scheduler, config, watch=False)

    async def window(self, app: MmbApp, config: Path, what: str, run_ids: list[str]) -> Window:
        """The app's CPU over a window of wall time in which the bench does nothing but wait; what was played
        and painted meanwhile is said."""
        frames = Frames(app, ready=lambda: False)
        played = sum(events_in(config, run_id) for run_id in run_ids)
        cpu = Cpu()
        await asyncio.sleep(self.seconds)
        percent = cpu.percent()
        played = sum(events_in(config, run_id) for run_id in run_ids) - played
        print(
            f"    {what}: {percent:5.1f} % of a core; {played / self.seconds:.0f} events a second played, "
            f"{len(frames.cpu) / self.seconds:.1f} frames a second painted (a transcript's at most every "
            f"{PACE.interval * 1000:.0f} ms)",
            flush=True,
        )
        return Window(percent, self.seconds, played)


def main_screen(app: MmbApp) -> MainScreen:
    assert isinstance(app.screen, MainScreen)
    return app.screen


async def attached_idle(bench: Bench) -> float:
    """(a): ``live`` attached and playing; ``other``'s transcript shown, zoomed."""
    config = write_config(bench.folder, bench.latency)
    with played_elsewhere(config, "live"):
        scheduler, app = bench.viewer(config)
        async with app.run_test(size=bench.size) as pilot:
            main_screen(app).selected_run = "other"
            await pilot.press("z")
            await asyncio.sleep(2)  # attached, settled
            window = await bench.window(app, config, "other run zoomed", ["live"])
        await scheduler.stop_all()
    return window.percent


async def busy_local(bench: Bench) -> float:
    """(b): four local runs of ``max`` at 200 ms per call, side by side (the runs pane above them)."""
    config = write_config(bench.folder, BUSY_LATENCY)
    scheduler, app = bench.viewer(config)
    runs = [f"b{i}" for i in range(1, 5)]
    async with app.run_test(size=bench.size) as pilot:
        for run_id in runs:
            await scheduler.start(run_id)
        main_screen(app).selected_run = "b1"
        await pilot.pause()
        await asyncio.sleep(2)
        percent = (await bench.window(app, config, "four runs shown", runs)).percent
        await scheduler.stop_all()
    return percent


async def zoomed_and_left(bench: Bench) -> tuple[Window, Window, Window, int, str]:
    """(c): ``live`` grown large and attached, its column the second of its page, the operator reading an event
    of it (the view still, not following the tail): CPU then, zoomed on it, and once left (and ``ZOOMS`` more
    times on and off); the app's tasks before and after."""
    config = write_config(bench.folder, bench.latency)
    with played_elsewhere(config, "live"):
        scheduler, app = bench.viewer(config)
        async with app.run_test(size=bench.size) as pilot:
            screen = main_screen(app)
            screen.selected_run = "live"
            await pilot.pause()
            await asyncio.sleep(2)
            column = screen.column_for("live")
            assert column is not None
            column.transcript.focus()
            await pilot.press("up", "up")  # reading an event
            tasks = len(asyncio.all_tasks())
            before = await bench.window(app, config, "reading it", ["live"])
            await pilot.press("z")
            zoomed = await bench.window(app, config, "zoomed on it", ["live"])
            for _ in range(ZOOMS):
                await pilot.press("z", "z")
            await pilot.press("z")
            await pilot.pause()
            after = await bench.window(app, config, "left", ["live"])
            tasks_after = len(asyncio.all_tasks())
            size = events_in(config, "live")
        await scheduler.stop_all()
    return before, zoomed, after, size, f"{tasks} → {tasks_after}"


def verdict(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--parts", default="abc")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model call, attached run")
    parser.add_argument("--seconds", type=float, default=20.0, help="wall time of each measured window")
    parser.add_argument("--events", type=int, default=5000, help="(c): the attached transcript's size")
    parser.add_argument("--size", default="200x50", help="the terminal, COLUMNSxROWS")
    args = parser.parse_args()
    columns, rows = (int(n) for n in args.size.split("x"))
    load = os.getloadavg()[0]
    print(f"{os.cpu_count()} cores, load average {load:.1f}; the app at {args.size}; CPU of one core")

    def bench(folder: str) -> Bench:
        return Bench(Path(folder), args.latency, args.seconds, (columns, rows))

    if "a" in args.parts:
        print(f"(a) a run played by another process at {args.latency * 1000:.0f} ms per call, attached:")
        with tempfile.TemporaryDirectory() as folder:
            idle = asyncio.run(attached_idle(bench(folder)))
        print(
            f"(a) attached, nothing shown changes: {idle:.1f} %  (goal <= {IDLE_GOAL:.0f} %: {verdict(idle <= IDLE_GOAL)})"
        )
    if "b" in args.parts:
        print(f"(b) four local runs of max at {BUSY_LATENCY * 1000:.0f} ms per call:")
        with tempfile.TemporaryDirectory() as folder:
            busy = asyncio.run(busy_local(bench(folder)))
        print(
            f"(b) four busy local runs: {busy:.1f} %  (goal <= {BUSY_GOAL:.0f} %: {verdict(busy <= BUSY_GOAL)})"
        )
    if "c" in args.parts:
        print(f"(c) the attached run grown to {args.events:,} events first, then z on it and off:")
        with tempfile.TemporaryDirectory() as folder:
            grow(Path(folder), args.events)
            before, zoomed, after, size, tasks = asyncio.run(zoomed_and_left(bench(folder)))
        ok = after.ms_per_event() <= LEFT_SLACK * before.ms_per_event()
        print(
            f"(c) attached run of {size:,} events: read {before.percent:.1f} %, zoomed {zoomed.percent:.1f} %, "
            f"left {after.percent:.1f} %; per event played: read {before.ms_per_event():.2f} ms, zoomed "
            f"{zoomed.ms_per_event():.2f} ms, left {after.ms_per_event():.2f} ms  (left <= {LEFT_SLACK:g} x read "
            f"per event: {verdict(ok)}); the app's tasks {tasks}"
        )


if __name__ == "__main__":
    main()
