"""Commands to every run at once (``S`` start all, ``P`` pause or resume all): which runs they concern, and
one line with the counts of what the engine did."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine

from textual.widget import Widget

from engine.api import EngineApi, RunView
from engine.commands import Command, CommandResult, Pause, Resume

log = logging.getLogger(__name__)
QUEUED_NOTICE_AFTER = 0.5  # seconds: commands not all applied by then are shown as queued


def startable(views: list[RunView]) -> list[str]:
    """Runs that ``S`` starts: idle (never started, or stopped: resumed from their state) or crashed, played
    by no other process."""
    return [v.run_id for v in views if v.status in ("idle", "crashed") and not v.owner]


def is_pausable(view: RunView) -> bool:
    """``p`` pauses it: it plays (running), counts down to its next attempt after a failure (waiting, in a
    back-off: it retries by itself), or has a pause pending."""
    backing_off = view.status == "waiting" and view.activity.waiting_for == "back-off"
    return view.status == "running" or backing_off or (view.status == "waiting" and view.pause_pending)


def pausable(views: list[RunView]) -> list[str]:
    return [v.run_id for v in views if is_pausable(v)]


def resumable(views: list[RunView]) -> list[str]:
    """Runs that wait for the operator: paused, or waiting with no retry of their own under way."""
    return [v.run_id for v in views if v.status in ("paused", "waiting") and not is_pausable(v)]


def _counts(done: list[str], failed: dict[str, str], verb: str) -> str:
    line = f"{len(done)} {verb}" + (f": {', '.join(done)}" if done else "")
    if failed:
        refused = "; ".join(f"{run_id}: {why}" for run_id, why in failed.items())
        line += f" · {len(failed)} refused ({refused})"
    return line


async def start_all(engine: EngineApi, run_ids: list[str]) -> tuple[str, bool]:
    """Start (or resume) each run; the counts, and whether every one started."""
    done: list[str] = []
    failed: dict[str, str] = {}
    for run_id in run_ids:
        try:
            await engine.start(run_id)
        except Exception as exc:
            log.exception("start %s failed", run_id)
            failed[run_id] = str(exc)
        else:
            done.append(run_id)
    return _counts(done, failed, "started"), not failed


async def command_all(engine: EngineApi, run_ids: list[str], command: Command, verb: str) -> tuple[str, bool]:
    """Send ``command`` to each run at once and wait until each applied or refused it; the counts, and
    whether every one applied it."""
    results = await asyncio.gather(
        *(engine.command(run_id, command) for run_id in run_ids), return_exceptions=True
    )
    done: list[str] = []
    failed: dict[str, str] = {}
    for run_id, result in zip(run_ids, results, strict=True):
        if isinstance(result, CommandResult) and result.ok:
            done.append(run_id)
        else:
            failed[run_id] = result.message if isinstance(result, CommandResult) else str(result)
    return _counts(done, failed, verb), not failed


def pause_or_resume_all(
    engine: EngineApi, views: list[RunView]
) -> tuple[str, Coroutine[None, None, tuple[str, bool]] | None]:
    """``P``: pause every running run (and every one counting down to its retry); when none plays, resume
    every paused or waiting one. The title of the toast and the work, or why there is none."""
    if running := pausable(views):
        return "Pause all", command_all(engine, running, Pause(), "paused")
    if stopped := resumable(views):
        return "Resume all", command_all(engine, stopped, Resume(), "resumed")
    return "No run is running, paused or waiting.", None


async def reported(widget: Widget, what: str, work: Coroutine[None, None, tuple[str, bool]]) -> None:
    """Do ``work`` and say what came of it in one toast (and "queued" first when it takes a persona turn)."""
    task = asyncio.ensure_future(work)
    done, _ = await asyncio.wait({task}, timeout=QUEUED_NOTICE_AFTER)
    if not done:
        widget.notify("each run applies it when its persona's current turn ends", title=f"{what}: queued")
    line, ok = await task
    widget.notify(line, title=what, severity="information" if ok else "warning")
