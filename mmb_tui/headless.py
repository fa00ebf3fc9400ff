"""``mmb-tui run --headless``: the engine without the UI, printing events with markers and progress."""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import TextIO

from engine.config import Config
from engine.events import MARKERS, Event
from engine.run_parts import TerminationReason
from engine.scheduler import Scheduler

FOLD = 400


def describe(event: Event) -> str:
    """One line (or a few) of text for an event, without its marker."""
    match event.kind:
        case "phase_started":
            return f"phase {event.index + 1}/{event.total} — {event.chapter}: {event.title}"
        case "persona_thinking" | "message_sent" | "agent_replied":
            return event.text
        case "tool_called":
            result = event.result.replace("\n", " ")
            args = ", ".join(f"{k}={v!r}" for k, v in event.arguments.items() if k != "text")
            return f"{event.name}({args}) → {result}"
        case "evaluation_logged":
            attempt = ", 2nd attempt" if event.attempt == 2 else ""
            return f"{event.check_id}: {event.effective:g}/10{attempt} — {event.comment}"
        case "persona_compacted":
            return f"persona context compacted {event.tokens_before} → {event.tokens_after} tokens"
        case "agent_compacted":
            return f"agent compaction in phase {event.phase_index + 1} ({event.tokens_before} → {event.tokens_after}) {event.detail}"
        case "session_switched":
            return "new agent session" + (" (ignored: ignore_session_break)" if event.ignored else "")
        case "clock_jumped":
            return f"clock {event.from_time} → {event.to_time}"
        case "hook_fired":
            return f"{event.hook}: {event.detail}"
        case "error":
            return f"{event.where}: {event.message}"
        case "operator":
            return f"operator {event.action} {event.detail}".strip()
        case "status":
            return f"status {event.status}" + (f" — {event.reason}" if event.reason else "")
        case "run_started":
            return f"{'resumed' if event.resumed else 'started'} {event.benchmark} @ {event.agent}"
        case "run_ended":
            return f"ended: {event.reason}" + (f" — {event.detail}" if event.detail else "")
    return event.kind


def fold(text: str, limit: int = FOLD) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit} chars)"


class HeadlessPrinter:
    def __init__(self, scheduler: Scheduler, out: TextIO | None = None, many: bool = False) -> None:
        self.scheduler = scheduler
        self.out = out or sys.stdout
        self.many = many

    def on_event(self, run_id: str, event: Event) -> None:
        prefix = f"[{run_id}] " if self.many else ""
        self.out.write(f"{prefix}{MARKERS.get(event.kind, '•')} {fold(describe(event))}\n")
        if event.kind in ("phase_started", "evaluation_logged"):
            view = self.scheduler.view(run_id)
            average = f"{view.average:.2f}" if view.average is not None else "—"
            self.out.write(
                f"{prefix}── progress: phase {view.phase_index + 1}/{view.total_phases} · evaluations {view.evaluations} · average {average}\n"
            )
        self.out.flush()


async def run_headless(config: Config, run_ids: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    scheduler = Scheduler(config)
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
            out.write(f"{run_id}: not finished ({result}): {reason}\n")
            code = 1
    return code
