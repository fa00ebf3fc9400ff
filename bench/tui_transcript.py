"""The TUI's latency for one appended event at 10,000 events (issue 13: p95 <= 5 ms CPU), and its memory.

A real app runs headless (``App.run_test``, 120x40) with a fake engine. 10,000 events are appended to one
run's column first; then SAMPLES more, one at a time. A sample is the CPU time (``time.process_time``) from
the engine's call to the observer until the end of the frame that shows the event, or of the last frame
painted within ``SETTLE`` after it (a scrollbar painted on its own would count): the observer call, the
transcript's flush, layout if any, the compositor's repaint and the escape codes a terminal driver would
write (the headless driver writes nothing, so they are made here; only the write itself is left out).
Nothing of the benchmark runs meanwhile: it awaits the frame, no polling (``pilot.pause()`` polls, itself
~4 ms of CPU, so it only runs untimed between samples); whatever the app does meanwhile counts. Appends are
spaced further apart than the transcript's repaint throttle, so each one pays a repaint of its own (under a
flood the throttle folds many events into one repaint). CPU rather than wall time: the machine may be busy.

Memory: peak RSS of the process, then (a second pass under tracemalloc, slower) the traced memory at
checkpoints; it should stop growing once the transcript's bounded window is full.

    .venv/bin/python bench/tui_transcript.py [EVENTS] [SAMPLES]
"""

from __future__ import annotations

import asyncio
import gc
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from rich.console import RenderableType
from textual._compositor import CompositorUpdate
from textual.screen import Screen

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from tui_fakes import FakeEngine, _view, write_config  # noqa: E402

from engine.events import (  # noqa: E402
    AgentReplied,
    EvaluationLogged,
    Event,
    MessageSent,
    PersonaThinking,
    ToolCalled,
)
from mmb_tui.app import MmbApp, make_app  # noqa: E402
from mmb_tui.transcript.repaint_pace import RepaintPace  # noqa: E402
from mmb_tui.widgets.transcript_view import TranscriptView  # noqa: E402

GOAL_P95_MS = 5.0
LOAD_BATCH = 500  # events emitted between two turns of the app's loop while loading
SETTLE = 0.03  # seconds after the frame that shows an event, for frames that follow it


def make_event(i: int) -> Event:
    t = f"2026-08-{19 + i // 4000:02d}T{10 + (i // 3600) % 12:02d}:{(i // 60) % 60:02d}:{i % 60:02d}"
    kind = i % 5
    if kind == 0:
        return MessageSent(
            text=f"Message {i}: " + "a fairly long persona message " * 6 + "\nsecond line", t=t
        )
    if kind == 1:
        return AgentReplied(text=f"Reply {i}: noted.\n" + "details " * 30 + "\nmore\nand more", t=t)
    if kind == 2:
        return ToolCalled(
            name="facts_mark_told", arguments={"sheet": "family", "ids": ["1.1"]}, result="ok", t=t
        )
    if kind == 3:
        return PersonaThinking(text="thinking about the next fact " * 4, t=t)
    return EvaluationLogged(check_id=f"{i}.1", score=7.5, attempt=1, effective=7.5, question="q?", t=t)


def p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 20 else max(values)


def bench_app() -> tuple[FakeEngine, MmbApp]:
    folder = Path(tempfile.mkdtemp())
    engine = FakeEngine(folder / "results", [_view("bench-1", "chatbot", "running", 0, 0, None, "")])
    engine.write_files = False  # measure the app, not the disk
    return engine, make_app(engine, write_config(folder, ["bench-1"]), clock_frozen=True, watch=False)


class Frames:
    """The frames the app paints (CPU time at the end of each), and an awaitable first frame painted after
    ``ready()`` holds. The headless driver writes nothing: each frame is turned into escape codes here, as a
    terminal driver would, so that part of a repaint is counted too (only the write to the terminal is not).
    """

    def __init__(self, app: MmbApp, ready: Callable[[], bool]) -> None:
        self.cpu: list[float] = []
        self.shown_cpu = self.shown_wall = 0.0
        self.shown = asyncio.Event()
        self._ready = ready
        self._display = app._display
        self._console = app.console
        app._display = self._painted  # type: ignore[method-assign]

    def _painted(self, screen: Screen[object], renderable: RenderableType | None) -> None:
        self._display(screen, renderable)
        if isinstance(renderable, CompositorUpdate):
            renderable.render_segments(self._console)
            self.cpu.append(time.process_time())
            if not self.shown.is_set() and self._ready():
                self.shown_cpu, self.shown_wall = self.cpu[-1], time.perf_counter()
                self.shown.set()

    def clear(self) -> None:
        self.cpu.clear()
        self.shown.clear()

    def wait_for(self, ready: Callable[[], bool]) -> asyncio.Event:
        """The first frame painted after ``ready()`` holds, from now on."""
        self._ready = ready
        self.shown.clear()
        return self.shown


async def latency(total: int, samples: int) -> None:
    engine, app = bench_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        view.pace = RepaintPace(cpu=lambda: 0.0)  # a repaint per append however busy the loading left us
        start = time.perf_counter()
        for i in range(total):
            engine.emit("bench-1", make_event(i))
            if (i + 1) % LOAD_BATCH == 0:
                await pilot.pause()
        await pilot.pause()
        loaded_s = time.perf_counter() - start
        held = len(view.events)
        frames = Frames(app, ready=lambda: view.pending == 0)  # the event is in the view's lines
        cpu_ms: list[float] = []
        frame_counts: list[int] = []
        for i in range(total, total + samples):
            await asyncio.sleep(view.FLUSH_INTERVAL)  # past the throttle: this event repaints on its own
            await pilot.pause()
            event = make_event(i)
            frames.clear()
            start_cpu = time.process_time()
            engine.emit("bench-1", event)
            await asyncio.wait_for(frames.shown.wait(), timeout=5)  # no polling: the loop runs the app
            await asyncio.sleep(SETTLE)  # frames the append set off after that one (a scrollbar) count too
            cpu_ms.append((frames.cpu[-1] - start_cpu) * 1000)
            frame_counts.append(len(frames.cpu))
            await pilot.pause()  # not timed
            assert view.events[-1] is event, "the event was not shown"
        following = view.following
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    verdict = "ok" if p95(cpu_ms) <= GOAL_P95_MS else "MISSED"
    print(f"events appended before:     {total} in {loaded_s:.1f} s wall ({held} held in the window)")
    print(f"single appends measured:    {samples} (app idle between them; following the tail: {following})")
    print(
        f"frames per append:          {statistics.mean(frame_counts):.2f} (mean), {max(frame_counts)} (max)"
    )
    print(f"CPU emit -> frame shown:    median {statistics.median(cpu_ms):.2f} ms, max {max(cpu_ms):.2f} ms")
    print(f"p95 CPU emit -> frame:      {p95(cpu_ms):.2f} ms   (goal p95 <= {GOAL_P95_MS:.0f} ms: {verdict})")
    print(f"peak RSS of the process:    {peak_rss:.0f} MiB")


async def memory(total: int) -> None:
    engine, app = bench_app()
    checkpoints: list[tuple[int, float, int]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        tracemalloc.start()
        for i in range(total):
            engine.emit("bench-1", make_event(i))
            if (i + 1) % LOAD_BATCH == 0:
                await pilot.pause()
            if (i + 1) % 2000 == 0:
                gc.collect()
                current, _peak = tracemalloc.get_traced_memory()
                checkpoints.append((i + 1, current / 2**20, len(list(app.query("*")))))
        _current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        held = len(view.events)
    print(f"peak traced memory:         {peak / 2**20:.1f} MiB (tracemalloc, while appending)")
    for count, mib, widgets in checkpoints:
        print(f"  after {count:>6} events:  {mib:6.1f} MiB traced, {widgets} widgets")
    print(f"events held in the window:  {held} (older ones stay in transcript.jsonl)")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    sample_count = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    asyncio.run(latency(count, sample_count))  # timings without tracemalloc's overhead
    asyncio.run(memory(count))
