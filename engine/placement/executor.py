"""Where runs are played (``executor`` in config.jsonc): ``local``, on the scheduler's own loop, or ``ray``, each
run an actor on a Ray cluster (``engine/placement/ray_executor.py``, imported only by ``place.py`` when a run goes
there: a local engine never imports Ray). The scheduler holds either kind the same way (``Playable``); a run played elsewhere is a ``PlacedRun``.

What a run asks of a node (Ray packs runs onto nodes by it): its own ``resources`` keys, else
``executor.resources``, else its agent's default (``AGENT_RESOURCES``). An agent's default is what its actor
holds: the engine's worker process (about 0.2 GB) plus the agent's own processes (OpenClaw 1.0–1.3 GB, Hermes
0.1–0.17 GB, Letta Code 0.34 GB while a call runs; the chatbot and the scripted models run inside the worker).
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from engine.api import Observer, RunView
from engine.commands import Command, CommandResult
from engine.config import Config
from engine.events import ErrorOccurred, RunEnded, TerminationReason
from engine.report.writer import REPORT_NAME, append_once, new_entry
from engine.run.build import build_run
from engine.run.lock import RunLock

GB = 1024**3
# the agent's processes (peak measured by bench/agent_footprint.py: openclaw 1.55 GB, hermes 0.17 GB) plus the
# actor's own engine (~0.18 GB, bench/ray_placement.py)
AGENT_RESOURCES: dict[str, dict[str, float]] = {
    "openclaw": {"num_cpus": 1.0, "memory": 1.75 * GB},
    "hermes": {"num_cpus": 0.5, "memory": 0.4 * GB},
    "letta": {"num_cpus": 0.5, "memory": 0.55 * GB},  # a Node process per message, none between
}
DEFAULT_RESOURCES: dict[str, float] = {"num_cpus": 0.1, "memory": 0.25 * GB}  # chatbot, endpoints, scripted


class Playable(Protocol):
    """What the scheduler plays and serves to viewers: a ``Run`` on its own loop, or a ``PlacedRun``."""

    @property
    def run_id(self) -> str: ...
    @property
    def run_dir(self) -> Path: ...
    @property
    def observers(self) -> list[Observer]: ...  # told every event of the run
    @property
    def lock(self) -> RunLock | None: ...  # the run's owner lock, held here while it plays
    async def run(self) -> TerminationReason: ...


class PlacedRun(Playable, Protocol):
    """A run played by another executor for this engine: its view and commands go through here."""

    handed_over: bool  # stopped for another process to play on: no report entry (as ``Run.handed_over``)

    def view(self) -> RunView: ...
    async def command(self, command: Command) -> CommandResult: ...


def resources_for(config: Config, run_id: str) -> dict[str, float]:
    """What run ``run_id`` asks of a node: ``num_cpus`` and ``memory`` (bytes), chosen as the module says."""
    run_cfg = config.runs[run_id]
    chosen = dict(AGENT_RESOURCES.get(run_cfg.agent, DEFAULT_RESOURCES))
    for layer in (config.executor.resources, run_cfg.resources):
        if layer is not None:
            chosen.update(layer.model_dump(exclude_none=True))
    return chosen


async def end_crashed(
    config: Config, run_id: str, reason: str, observers: list[Observer], waiting: bool = False
) -> None:
    """End a run whose player is gone for good as a crashed run ends (``waiting``: as a run left waiting, which
    a start resumes: no node has what it needs now): from its last checkpoint (the transcript cut back to it; a
    fresh run's first one made), an error event, its status with ``reason``, the report entry (saved with the
    checkpoint first, so it is never lost nor doubled) and ``run_ended``. The caller holds no lock on it."""
    run = build_run(config, run_id, front_end="engine")  # the agent is built, never started
    run.observers.extend(observers)
    ending = TerminationReason.WAITING if waiting else TerminationReason.CRASHED
    try:
        await run.recorder.begin(resumed=True)
        run.emit(ErrorOccurred(message=reason, where="engine", fatal=True))
        run.termination = ending
        run.state.reason = reason
        entry = new_entry(run.summary())
        run.state.pending_report, run.state.reported = entry, False
        run.set_status("waiting" if waiting else "crashed", reason)
        run.save()
        await run.recorder.flushed()
        append_once(config.results_path() / REPORT_NAME, entry)
        run.state.pending_report = ""
        run.emit(RunEnded(reason=ending, detail=reason))
        run.save()
    finally:
        await run.recorder.close()
        if run.lock is not None:
            run.lock.release()
