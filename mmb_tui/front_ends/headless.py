"""``mmb-tui run --headless``: the engine without the UI, printing events with markers and progress.

The markers are the TUI's (``TUI_MARKERS``, an agent's action by what it did: ``ACTION_MARKERS``; one code
point each, never a variation selector or a joiner, which terminals and tmux draw at different widths), so a
line reads the same in both.

Everything printed is safe for the terminal: agent and model text comes through ``summary`` (control
characters and escape sequences shown escaped, ``engine/sanitize.py``), and so does the reason a run stopped.
Ctrl-C, SIGTERM and a hang-up (SIGHUP: a closed tmux session, an SSH drop) all stop the runs the same clean
way: each at its last checkpoint, its status saved as stopped, its control socket removed, exit 130. Output
that can no longer be written (the terminal went away) is dropped, never a reason to stop; a log file that
cannot be written is said once. A run placed on Ray says on which node it plays (``── plays on Ray node …``),
again when a new actor plays it elsewhere; Ray's own lines go to the log file (``engine/placement/ray_connect.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import os
import signal
import sys
from typing import TextIO

from engine.config import Config
from engine.event_summary import summary
from engine.events import Event, TerminationReason
from engine.placement.scheduler import Scheduler
from engine.sanitize import printable
from mmb_tui.front_ends.tui_logging import watch_log_failures
from mmb_tui.transcript.event_render import event_marker

FOLD = 400
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  # each stops the runs as Ctrl-C does
STOPPED_EXIT = 130  # as for Ctrl-C, whichever of them it was
GONE = {errno.EIO, errno.EPIPE, errno.EBADF, errno.ENXIO, errno.ENOTTY}  # the output will never come back

log = logging.getLogger(__name__)


class Output:
    """Where the runner prints: once it is gone (a terminal that hung up, a closed pipe) this and every later
    line are dropped and the file descriptor is pointed at /dev/null, so that nothing (not even the exit's
    flush) fails on it; a line a full disk refuses (the output of ``run --detach`` is a file) is only dropped."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.gone = False
        self.dropped = 0  # lines not printed

    def write(self, text: str) -> None:
        if self.gone:
            self.dropped += 1
            return
        try:
            self.out.write(text)
            self.out.flush()
        except (OSError, ValueError) as exc:
            self.dropped += 1
            if isinstance(exc, OSError) and exc.errno not in GONE:
                return
            self.gone = True
            log.warning("the output cannot be written (%s): printing stops, the runs go on", exc)
            self._let_go()

    def _let_go(self) -> None:
        with contextlib.suppress(Exception):
            fd = self.out.fileno()
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)


def fold(text: str, limit: int = FOLD) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + f"… (+{len(text) - limit} chars)"


class HeadlessPrinter:
    """An observer of the scheduler: each event as one marked line, a progress line at each phase and grade."""

    def __init__(self, scheduler: Scheduler, out: TextIO | None = None, many: bool = False) -> None:
        self.scheduler = scheduler
        self.out = Output(out or sys.stdout)
        self.many = many
        self._said: dict[str, str] = {}  # per run: the reason printed last (an error is printed once)
        self._nodes: dict[str, str] = {}  # per run placed on Ray: the node last said

    def on_event(self, run_id: str, event: Event) -> None:
        prefix = f"[{run_id}] " if self.many else ""
        event = self._without_repeats(run_id, event)
        self._where(run_id, prefix)
        said = summary(event, full=True)
        shown = said if event.kind == "error" else fold(said)  # an error whole, however long its paths
        self.out.write(f"{prefix}{event_marker(event).rstrip()} {shown}\n")
        if event.kind in ("phase_started", "evaluation_logged"):
            view = self.scheduler.view(run_id)
            average = f"{view.average:.2f}" if view.average is not None else "—"
            self.out.write(
                f"{prefix}── progress: phase {view.phase_index + 1}/{view.total_phases} · evaluations {view.evaluations} · average {average}\n"
            )

    def _where(self, run_id: str, prefix: str) -> None:
        """Where a run placed on Ray plays, said when it is first known and again when it moves."""
        config = getattr(self.scheduler, "config", None)  # a printer of events alone has no scheduler
        if config is None or config.executor.kind == "local":
            return
        node = self.scheduler.view(run_id).node
        if node and node != self._nodes.get(run_id):
            self._nodes[run_id] = node
            self.out.write(f"{prefix}── plays on Ray node {printable(node, newlines=False)}\n")

    def note(self, text: str) -> None:
        """A word about the runner itself (its log cannot be written), not about a run."""
        self.out.write(f"⚠ {printable(text, newlines=False)}\n")

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
    """Play ``run_ids`` to their ends (exit 0 when all finished, else 1), or until a stop signal (130)."""
    printer = HeadlessPrinter(Scheduler(config, front_end="headless"), out, many=len(run_ids) > 1)
    scheduler = printer.scheduler
    scheduler.add_observer(printer)
    loop = asyncio.get_running_loop()
    stopping = asyncio.Event()

    def stop(sig: signal.Signals) -> None:
        if not stopping.is_set():
            log.warning("%s: stopping the runs at their last checkpoint", sig.name)
        stopping.set()

    handled = []
    for sig in STOP_SIGNALS:
        try:
            loop.add_signal_handler(sig, stop, sig)
            handled.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, not Unix
            pass
    unwatch = watch_log_failures(lambda text: loop.call_soon_threadsafe(printer.note, text))
    try:
        return await _play(scheduler, printer, run_ids, stopping)
    finally:
        unwatch()
        for sig in handled:
            loop.remove_signal_handler(sig)


async def _play(
    scheduler: Scheduler, printer: HeadlessPrinter, run_ids: list[str], stopping: asyncio.Event
) -> int:
    for run_id in run_ids:
        await scheduler.start(run_id)
    waiter = asyncio.ensure_future(scheduler.wait(run_ids))
    stopper = asyncio.ensure_future(stopping.wait())
    await asyncio.wait({waiter, stopper}, return_when=asyncio.FIRST_COMPLETED)
    stopper.cancel()
    if not waiter.done():
        await scheduler.stop_all()
        await waiter
        printer.out.write("stopping: state saved, run again to resume\n")
        return STOPPED_EXIT
    code = 0
    for run_id, result in waiter.result().items():
        if result != TerminationReason.FINISHED:
            reason = scheduler.view(run_id).reason or str(result)
            started = isinstance(result, TerminationReason)  # else the error that kept it from being built
            said = f"not finished ({result}): {reason}" if started else f"not started: {reason}"
            printer.out.write(printable(f"{run_id}: {said}", newlines=False) + "\n")
            code = 1
    return code
