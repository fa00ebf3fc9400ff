"""Many runs on one asyncio loop: start, resume, restart, stop, commands, and read models for front ends."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.api import Observer, RunView
from engine.benchmark.model import Benchmark
from engine.benchmark.named import load_run_benchmark
from engine.clock import Clock
from engine.commands import Command, CommandResult, Resume
from engine.comparison.summary import write_group_summaries
from engine.config import BuildError, Config
from engine.events import ErrorOccurred, Event, TerminationReason
from engine.judge.role import lead_of
from engine.placement.executor import PlacedRun, Playable
from engine.placement.place import place_run
from engine.placement.remote import ControlServer, RemoteRun, socket_path
from engine.report.prices import role_prices, total_cost
from engine.report.tally import current_grades, run_score
from engine.run.build import build_run, check_run
from engine.run.lock import RunLock, RunLocked, owner_of, owner_socket
from engine.run.loop import Run
from engine.run.parts import RunSettings
from engine.run.tree_removal import remove_tree_quietly
from engine.run.view import check_views, run_view
from engine.state import RunState, StateError, atomic_write, checkpoint_json, load_state

log = logging.getLogger(__name__)

OWNED_KEEP = 5.0  # seconds: a run played elsewhere, its own view not at hand: its state read this seldom


def _save_stopped(run_dir: Path, front_end: str) -> None:
    """A run stopped here: its last checkpoint, as it stands, says so (``idle``, "stopped") where it said
    ``running``; written under the run's lock, taken again for it (a process that took the run meanwhile is
    left alone). A run left ``waiting`` keeps its reason."""
    path = run_dir / "state.json"
    lock = RunLock(run_dir, front_end)
    try:
        if not path.exists():  # stopped before its first checkpoint
            return
        lock.acquire()
    except (RunLocked, OSError):
        return
    try:
        state = RunState.model_validate_json(path.read_text(encoding="utf-8"))
        if state.status in ("running", "paused"):
            stopped = state.model_copy(update={"status": "idle", "reason": "stopped"})
            atomic_write(path, checkpoint_json(stopped))
    except (OSError, ValueError) as exc:  # a damaged checkpoint, a full disk: only the status is not saved
        log.warning("run %s: its stopped status was not saved: %s", run_dir.name, exc)
    finally:
        lock.release()


@dataclass
class _Slot:
    run: Run | None = None
    task: asyncio.Task[TerminationReason] | None = None
    error: str = ""  # why it could not be built
    stored_view: tuple[int, RunView] | None = None  # (state.json mtime, view) of a run not in memory
    stored_at: float = 0.0  # when ``stored_view`` was read (monotonic)
    remote: RemoteRun | None = None  # attached to the process that plays it (``engine/placement/remote.py``)
    placed: PlacedRun | None = None  # played for this engine by another executor (``executor.py``)


class Scheduler:
    """Implements ``engine.api.EngineApi``."""

    def __init__(
        self,
        config: Config,
        clock_factory: Callable[[], Clock] | None = None,
        tune: Callable[[RunSettings], None] | None = None,
        front_end: str = "engine",
    ) -> None:
        self.config = config
        self.clock_factory = clock_factory
        self.tune = tune
        self.front_end = front_end  # named in the run lock: "tui", "headless", …
        self.observers: list[Observer] = []
        self.slots: dict[str, _Slot] = {run_id: _Slot() for run_id in config.runs}
        self._summaries = asyncio.Lock()  # group summaries are written one at a time
        self.check_configs()

    def check_configs(self) -> None:
        """Check every run that is not playing (benchmark, agent, models, adapter keys): a bad one shows
        as ``error`` with the reason at once, not when it is started."""
        for run_id, slot in self.slots.items():
            if not self.running(run_id) and run_id in self.config.runs:
                slot.error = check_run(self.config, run_id)

    # ---- EngineApi -----------------------------------------------------------------------------

    def run_ids(self) -> list[str]:
        return list(self.slots)

    def add_observer(self, observer: Observer) -> None:
        self.observers.append(observer)

    def on_event(self, run_id: str, event: Event) -> None:
        for observer in self.observers:
            try:
                observer.on_event(run_id, event)
            except Exception:
                log.exception("observer failed")

    def running(self, run_id: str) -> bool:
        task = self.slots[run_id].task
        return task is not None and not task.done()

    async def start(self, run_id: str) -> None:
        """Start the run, or resume it from its state.json. A no-op while it runs, here or elsewhere (a run
        another process plays is watched instead)."""
        slot = self.slots[run_id]
        if self.running(run_id):
            return
        owner = owner_of(self.config.results_path() / run_id)
        if owner:
            self._remote(run_id)
            message = f"run {run_id} is being played by {owner}: watched from here, not started"
            self.on_event(run_id, ErrorOccurred(message=message, where="engine"))
            return
        try:
            run: Playable
            if self.config.executor.kind == "local":
                run = slot.run = build_run(self.config, run_id, self.clock_factory, self.tune, self.front_end)
                slot.placed = None
            else:  # ``slot.placed`` plays it; viewed and commanded through it
                run = await place_run(self.config, run_id, self.tune, self.front_end, self.view(run_id))
                slot.run, slot.placed = None, run
        except (BuildError, StateError) as exc:
            slot.error = str(exc)
            self.on_event(run_id, ErrorOccurred(message=str(exc), where="engine", fatal=True))
            return
        slot.error = ""
        run.observers.append(self)
        server = await self._serve(run_id, run)
        slot.task = asyncio.create_task(self._play(run, server), name=f"run:{run_id}")

    async def _serve(self, run_id: str, run: Playable) -> ControlServer | None:
        """The run's control server, for viewers in other processes; named in the run's lock."""
        server = ControlServer(
            socket_path(run.run_dir),
            lambda: self.view(run_id),
            lambda command: self.command(run_id, command),
            run.run_dir / "transcript.jsonl",
        )
        try:
            await server.start()
        except OSError as exc:  # the run plays on, watched from here only
            log.warning("run %s: no control socket at %s: %s", run_id, server.path, exc)
            return None
        run.observers.append(server)
        if run.lock is not None:
            run.lock.announce(socket=str(server.path))
        return server

    async def _play(self, run: Playable, server: ControlServer | None) -> TerminationReason:
        stopped = False
        try:
            reason = await run.run()
        except asyncio.CancelledError:  # stopped: by the operator, Ctrl-C, SIGTERM, a hang-up
            stopped = True
            raise
        finally:
            if server is not None:
                await server.close()
            if stopped and isinstance(run, Run) and not run.handed_over:  # not one played on elsewhere
                _save_stopped(run.run_dir, self.front_end)
        if reason is TerminationReason.FINISHED:
            await self._summarise(run.run_id)
        return reason

    async def _summarise(self, run_id: str) -> None:
        """The summary entry of each group of repeats whose last run has just finished (``engine/comparison/summary.py``);
        one at a time, so runs ending together write it once."""
        async with self._summaries:
            try:
                await asyncio.to_thread(write_group_summaries, self.config, run_id)
            except Exception:  # a summary never fails the run
                log.exception("group summary after %s failed", run_id)

    def _remote(self, run_id: str) -> RemoteRun | None:
        """The attachment to the process that plays ``run_id``, made on first sight (and again a second after
        a lost one); ``None`` while that process cannot be reached."""
        slot, run_dir = self.slots[run_id], self.config.results_path() / run_id
        old = slot.remote
        if old is not None and (old.alive or time.monotonic() - old.ended_at < 1):
            return old
        path = owner_socket(run_dir)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # a view asked outside the loop
            return None
        if path is None:
            return None
        since = old.ended_size if old is not None else None  # what was written since the last one ended
        slot.remote = RemoteRun(run_id, path, run_dir / "transcript.jsonl", self.on_event, since)
        return slot.remote

    async def restart(self, run_id: str) -> None:
        """Delete ``results/<id>`` and start from scratch (never a run another process plays)."""
        if owner_of(self.config.results_path() / run_id):
            return
        await self.stop(run_id)
        remove_tree_quietly(self.config.results_path() / run_id)  # links the agent left: never followed
        self.slots[run_id] = _Slot()
        await self.start(run_id)

    async def command(self, run_id: str, command: Command) -> CommandResult:
        """Apply ``command`` to a run and say what became of it (waits until the run has applied it: at the
        end of the persona's current turn). A resume of a run that is not playing starts it again."""
        played = self.slots[run_id].run or self.slots[run_id].placed
        if played is not None and self.running(run_id):
            return await played.command(command)
        view = self.view(run_id)
        if view.owner:
            remote = self._remote(run_id)
            if remote is None:
                return CommandResult(ok=False, message=f"{run_id} is played by {view.owner}, out of reach")
            return await remote.command(command)
        if isinstance(command, Resume) and view.status != "finished":
            await self.start(run_id)
            if not self.running(run_id):
                return CommandResult(ok=False, message=self.slots[run_id].error or "it did not start")
            return CommandResult(ok=True, message="resumed from its last checkpoint")
        why = "has finished" if view.status == "finished" else f"is not playing ({view.status})"
        return CommandResult(ok=False, message=f"{run_id} {why}: nothing was changed")

    async def stop(self, run_id: str) -> None:
        """Stop the run played here, or stop watching the one played elsewhere (which plays on)."""
        remote, self.slots[run_id].remote = self.slots[run_id].remote, None
        if remote is not None:
            await remote.aclose()
        task = self.slots[run_id].task
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                pass

    async def hand_over(self, run_ids: list[str]) -> list[str]:
        """Stop the runs played here at their last checkpoint, with no report entry, for another process to
        play them on (``d`` in the app); returns those it stopped."""
        played = {run_id: self.slots[run_id].run or self.slots[run_id].placed for run_id in run_ids}
        stopped = [run_id for run_id in run_ids if self.running(run_id) and played[run_id]]
        for run_id in stopped:
            run = played[run_id]
            if run is not None:
                run.handed_over = True
        await asyncio.gather(*(self.stop(run_id) for run_id in stopped))
        return stopped

    async def stop_all(self) -> None:
        await asyncio.gather(*(self.stop(run_id) for run_id in self.slots))

    def relabel(self, front_end: str) -> None:
        """From now on this engine is ``front_end`` (an app gone headless on a hang-up): the locks of the runs
        it plays say so at once, and the runs it starts later."""
        self.front_end = front_end
        for run_id, slot in self.slots.items():
            played = slot.run or slot.placed
            if played is not None and played.lock is not None and self.running(run_id):
                played.lock.relabel(front_end)

    async def wait(self, run_ids: list[str] | None = None) -> dict[str, TerminationReason | str]:
        """Wait for runs to end; a run that could not be built reports its error."""
        results: dict[str, TerminationReason | str] = {}
        for run_id in run_ids or list(self.slots):
            slot = self.slots[run_id]
            if slot.task is None:
                results[run_id] = slot.error or "not started"
                continue
            try:
                results[run_id] = await slot.task
            except asyncio.CancelledError:
                results[run_id] = TerminationReason.STOPPED
        return results

    async def reload(self, config: Config) -> None:
        """Pick up an edited config.jsonc or benchmark folder without stopping anything.

        New runs appear; running runs keep their settings but take the edited benchmark, so phases
        that have not started yet are played as edited. A benchmark that no longer validates is not
        taken: its run goes on with the version it has, and ``BuildError`` says why.
        """
        self.config = config
        for run_id in config.runs:
            self.slots.setdefault(run_id, _Slot())
        for run_id in list(self.slots):
            if run_id not in config.runs and not self.running(run_id):
                del self.slots[run_id]
        refused: list[str] = []
        for run_id, slot in self.slots.items():
            slot.stored_view = None  # the benchmark may have changed
            if slot.run is None or not self.running(run_id) or run_id not in config.runs:
                continue
            try:
                bench = load_run_benchmark(config, run_id)
            except BuildError as exc:
                refused.append(f"{exc}; run {run_id} goes on with the benchmark as it was")
                continue
            if len(bench.phases) > slot.run.state.phase_index:
                slot.run.bench = bench
        self.check_configs()
        if refused:
            raise BuildError(refused[0])

    # ---- read model ----------------------------------------------------------------------------

    def view(self, run_id: str) -> RunView:
        slot = self.slots[run_id]
        run_cfg = self.config.runs.get(run_id)
        base = RunView(
            run_id=run_id,
            benchmark=run_cfg.benchmark if run_cfg else "",
            agent=run_cfg.agent if run_cfg else "",
        )
        running = self.running(run_id)
        owner = "" if running else owner_of(self.config.results_path() / run_id)
        if owner:  # another engine plays it: as it says, or running (not here) while it cannot be reached
            remote = self._remote(run_id)
            if remote is not None and remote.alive and remote.view is not None:
                reason = remote.view.reason or f"played by {owner}"
                return remote.view.model_copy(update={"owner": owner, "reason": reason})
            view = run_view(slot.run, running=False) if slot.run else self._stored(run_id, base, OWNED_KEEP)
            return view.model_copy(
                update={"status": "running", "reason": f"played by {owner}", "owner": owner}
            )
        if slot.placed is not None:
            return slot.placed.view()
        if slot.run is not None:
            return run_view(slot.run, running=running)
        if slot.error:
            return base.model_copy(update={"status": "error", "reason": slot.error})
        return self._stored(run_id, base)

    def _stored(self, run_id: str, base: RunView, keep: float = 0.0) -> RunView:
        """Its saved state's view, read again when ``state.json`` changed (front ends ask several times a second)
        and the one read is ``keep`` seconds old (the owner of a run saves at every turn; its journal grows)."""
        slot = self.slots[run_id]
        path = self.config.results_path() / run_id / "state.json"
        try:
            stamp = path.stat().st_mtime_ns
        except OSError:
            return base
        stored, now = slot.stored_view, time.monotonic()
        if stored is None or (stored[0] != stamp and now - slot.stored_at >= keep):
            slot.stored_view, slot.stored_at = (stamp, self._stored_view(run_id, base)), now
            stored = slot.stored_view
        return stored[1]

    def _stored_view(self, run_id: str, base: RunView) -> RunView:
        """The view of a run known only from its state.json (stopped, finished, or never started here)."""
        try:
            state = load_state(self.config.results_path() / run_id / "state.json")
        except StateError as exc:
            return base.model_copy(update={"status": "crashed", "reason": str(exc)})
        if state is None:
            return base
        try:
            bench: Benchmark | None = load_run_benchmark(self.config, run_id)
        except BuildError:
            bench = None
        total = len(bench.phases) if bench is not None else state.phases_started
        phase = bench.phases[state.phase_index] if bench and state.phase_index < len(bench.phases) else None
        waiting = state.status == "waiting" and not state.finished  # left waiting: say why
        return base.model_copy(
            update={
                "status": "finished" if state.finished else "waiting" if waiting else "idle",
                "reason": "" if state.finished else state.reason if waiting else "stopped; start to resume",
                "chapter": phase.chapter if phase else "",
                "phase_title": phase.title if phase else "",
                "phase_text": state.phase_text,
                "checks": check_views(phase.checks, state.evaluations) if phase else [],
                "loaded_sheets": list(state.loaded_sheets),
                "phase_index": state.phase_index,
                "total_phases": total,
                "evaluations": len(state.evaluations),
                "average": run_score(
                    [c.id for c in bench.checks()] if bench is not None else None,
                    state.evaluations,
                    current_grades(state.evaluations.values(), state.judge_grades),
                    lead_of(self.config),
                    state.finished,
                ),
                "agent_compactions": len(state.agent_observations),
                "clock": state.clock_now,
                "clock_jumps": state.clock_jumps,
                "cost": total_cost(state.usage, role_prices(self.config, self.config.runs.get(run_id))),
            }
        )
