"""Append 10,000 transcript events to a running app (headless) and print how it copes.

Prints the 95th-percentile time to process an event (the observer call: routing and queuing) and to
repaint (a coalesced flush of the queued events into the virtual list, then a screen refresh), the peak
memory (tracemalloc), memory at checkpoints (it should stop growing once the bounded window is full),
and the widget count (constant: no widget per event).

    .venv/bin/python bench/tui_transcript.py [EVENTS]
"""

from __future__ import annotations

import asyncio
import gc
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

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
from mmb_tui.app import make_app  # noqa: E402
from mmb_tui.widgets.transcript_view import TranscriptView  # noqa: E402

BATCH = 50  # events between two turns of the app's loop (a busy engine)


def make_event(i: int) -> Event:
    t = f"2026-08-19T{10 + (i // 3600) % 12:02d}:{(i // 60) % 60:02d}:{i % 60:02d}"
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


async def main(total: int, *, trace: bool) -> None:
    folder = Path(tempfile.mkdtemp())
    engine = FakeEngine(folder / "results", [_view("bench-1", "chatbot", "running", 0, 0, None, "")])
    engine.write_files = False  # measure the app, not the disk
    app = make_app(engine, write_config(folder, ["bench-1"]), clock_frozen=True, watch=False)
    observer_ms: list[float] = []
    flush_ms: list[float] = []
    checkpoints: list[tuple[int, float, int]] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        if trace:
            tracemalloc.start()
        for i in range(total):
            event = make_event(i)
            start = time.perf_counter()
            engine.emit("bench-1", event)
            observer_ms.append((time.perf_counter() - start) * 1000)
            if (i + 1) % BATCH == 0:
                start = time.perf_counter()
                view.flush()
                await pilot.pause()  # the app repaints
                flush_ms.append((time.perf_counter() - start) * 1000)
            if trace and (i + 1) % 2000 == 0:
                gc.collect()
                current, _peak = tracemalloc.get_traced_memory()
                checkpoints.append((i + 1, current / 2**20, len(list(app.query("*")))))
        _current, peak = tracemalloc.get_traced_memory() if trace else (0, 0)
        tracemalloc.stop()
        held = len(view.events)
    if trace:
        print(f"peak traced memory:         {peak / 2**20:.1f} MiB")
        for count, mib, widgets in checkpoints:
            print(f"  after {count:>6} events:  {mib:6.1f} MiB traced, {widgets} widgets")
        print(f"events held in the window:  {held} (older ones stay in transcript.jsonl)")
        return
    per_event = [f / BATCH for f in flush_ms]
    print(f"events appended:            {total}")
    print(f"p95 observer call:          {p95(observer_ms):.3f} ms per event")
    print(f"p95 repaint ({BATCH} events):    {p95(flush_ms):.2f} ms  ({p95(per_event):.3f} ms per event)")
    print(f"p95 time to process event:  {p95(observer_ms) + p95(per_event):.3f} ms (target <= 20 ms)")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    asyncio.run(main(count, trace=False))  # timings without tracemalloc's overhead
    asyncio.run(main(count, trace=True))  # then memory
