"""``mmb-tui run --headless``: the engine without the UI, printing events with markers and progress.

Everything printed is safe for the terminal: agent and model text comes through ``summary`` (control
characters and escape sequences shown escaped, ``engine/sanitize.py``), and so does the reason a run stopped.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TextIO

from engine.config import Config
from engine.event_summary import summary
from engine.events import MARKERS, Event, TerminationReason
from engine.placement.scheduler import Scheduler
from engine.sanitize import printable

FOLD = 400


def fold(text: str, limit: int = FOLD) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit} chars)"


class HeadlessPrinter:
    def __init__(self, scheduler: Scheduler, out: TextIO | None = None, many: bool = False) -> None:
        self.scheduler = scheduler
        self.out = out or sys.stdout
        self.many = many
        self._said: dict[str, str] = {}  # per run: the reason printed last (an error is printed once)

    def on_event(self, run_id: str, event: Event) -> None:
        prefix = f"[{run_id}] " if self.many else ""
        event = self._without_repeats(run_id, event)
        self.out.write(f"{prefix}{MARKERS.get(event.kind, '•')} {fold(summary(event, full=True))}\n")
        if event.kind in ("phase_started", "evaluation_logged"):
            view = self.scheduler.view(run_id)
            average = f"{view.average:.2f}" if view.average is not None else "—"
            self.out.write(
                f"{prefix}── progress: phase {view.phase_index + 1}/{view.total_phases} · evaluations {view.evaluations} · average {average}\n"
            )
        self.out.flush()

    def _without_repeats(self, run_id: str, event: Event) -> Event:
        """A status or end event whose reason repeats the error just printed is shown without it."""
        said = self._said.get(run_id, "")
        if event.kind == "error":
            self._said[run_id] = event.message
        elif event.kind == "status" and event.reason:
            if said and said.startswith(event.reason.split(": ", 1)[-1]):
                return event.model_copy(update={"reason": ""})
            self._said[run_id] = event.reason
        elif event.kind == "run_ended" and event.detail and event.detail.split(": ", 1)[-1] in said:
            return event.model_copy(update={"detail": ""})
        return event


async def run_headless(config: Config, run_ids: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    scheduler = Scheduler(config, front_end="headless")
    scheduler.add_observer(HeadlessPrinter(scheduler, out, many=len(run_ids) > 1))
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    def _stop() -> None:
        stopping.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, _stop)
        except (NotImplementedError, RuntimeError):
            pass
    for run_id in run_ids:
        await scheduler.start(run_id)
    waiter = asyncio.ensure_future(scheduler.wait(run_ids))
    stopper = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    if not waiter.done():
        out.write("stopping: state saved, run again to resume\n")
        await scheduler.stop_all()
        await waiter
        stopper.cancel()
        return 130
    stopper.cancel()
    results = waiter.result()
    code = 0
    for run_id, result in results.items():
        if result != TerminationReason.FINISHED:
            reason = scheduler.view(run_id).reason or str(result)
            out.write(printable(f"{run_id}: not finished ({result}): {reason}", newlines=False) + "\n")
            code = 1
    return code
