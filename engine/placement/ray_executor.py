"""Runs placed on a Ray cluster (``executor.kind = "ray"``): each run is an async actor (``RunActor``,
``engine/placement/ray_actor.py``) that plays it with the same engine code in a scratch copy of its folder on the node Ray
chose, and a ``RayRun`` here, the driver, keeps the head's ``results/<run>/`` the one source of truth.

The driver holds the run's lock, ships the run folder (cut back to its last checkpoint) and the benchmark to a
new actor, then pulls: each pull brings what changed in the scratch folder since the last one it wrote
(``engine/placement/sync.py``), the run's view and, at the end, why it ended. The driver writes the files in the
order a local run does, so they are byte for byte a local run's (a run played here can be resumed locally and
the other way round); appends the actor's report entries to ``results/report.md``; then hands the new
transcript events to its observers (the TUI shows them live). Operator commands go to the actor's run. An actor
or node that dies is seen as ``RayActorError``: the run starts again on a new actor from the head's files (the
resume path of a local ``kill -9``), at most ``executor.max_restarts`` times, each after a back-off that doubles
(``restart_delay``), steered away from the node the last one died on (``nodes.py`` ``pick_node``), then ends as
crashed with why, in one line (``crash_cause.py``). A run no node could ever hold is refused at once, naming what
it asks and the largest node; a node that lacks what the run needs (``preflight.py``) is named in one line per
missing thing.

Every ``import ray`` is in this module and ``ray_connect.py``, inside functions.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from contextlib import suppress
from typing import Any

from engine.api import Activity, Observer, RunView
from engine.commands import Command, CommandResult
from engine.config import BuildError, Config
from engine.events import ErrorOccurred, Event, RunStatus, TerminationReason
from engine.placement.crash_cause import crash_cause, never_started
from engine.placement.executor import end_crashed, resources_for
from engine.placement.nodes import node_name, pick_node, refusal, resources_label
from engine.placement.preflight import this_build
from engine.placement.ray_actor import Pulled, RunActor, Started
from engine.placement.ray_connect import (
    cluster_nodes,
    connect,
    node_of_actor,
    prefer_node,
    ray_module,
    where_actor_was,
)
from engine.placement.sync import (
    TRANSCRIPT,
    apply_changes,
    new_events,
    read_tree,
    snapshot_for_resume,
)
from engine.report.writer import REPORT_NAME
from engine.run.lock import RunLock, RunLocked
from engine.state import StateError

log = logging.getLogger(__name__)

STOP_WAIT = 60.0  # seconds a stopping actor gets to end its run and ship its last files
RESTART_FIRST = 2.0  # seconds before the first new actor after a death; doubled for each next one
RESTART_CAP = 60.0  # the longest wait before a new actor


def restart_delay(restart: int) -> float:
    """Seconds before new actor number ``restart`` (from 1): an actor that cannot start on a node fails in
    milliseconds, and restarts without a pause would be used up before anything changed."""
    return float(min(RESTART_CAP, RESTART_FIRST * 2 ** max(restart - 1, 0)))


def _ray() -> Any:
    return ray_module()


_ACTOR: Any = None


def _actor_class() -> Any:
    """``RunActor`` as a Ray actor class (made once: each one is exported to the cluster)."""
    global _ACTOR
    if _ACTOR is None:
        _ACTOR = _ray().remote(RunActor)
    return _ACTOR


async def place_on_ray(
    config: Config, run_id: str, settings: dict[str, Any], front_end: str, fallback: RunView
) -> RayRun:
    """``run_id`` ready to play on Ray, its lock taken here (``BuildError`` when another engine has it)."""
    lock = RunLock(config.results_path() / run_id, front_end)
    try:
        lock.acquire()
    except RunLocked as exc:
        raise BuildError(str(exc)) from None
    try:
        await asyncio.to_thread(connect, config.executor.address)
    except Exception as exc:
        lock.release()
        where = config.executor.address or "a local instance"
        raise BuildError(f"executor: cannot reach Ray ({where}): {exc}") from None
    try:
        problem = refusal(run_id, resources_for(config, run_id), await asyncio.to_thread(cluster_nodes))
    except Exception as exc:  # the cluster's nodes unknown: Ray places it, or says why
        log.warning("run %s: the Ray cluster's nodes could not be read: %s", run_id, exc)
        problem = ""
    if problem:
        lock.release()
        raise BuildError(problem)
    return RayRun(config, run_id, settings, front_end, fallback, lock)


class RayRun:
    """The driver of a run played by a Ray actor: implements ``engine.placement.executor.PlacedRun``."""

    def __init__(
        self,
        config: Config,
        run_id: str,
        settings: dict[str, Any],
        front_end: str,
        fallback: RunView,
        lock: RunLock,
    ) -> None:
        self.config, self.run_id, self.settings, self.front_end = config, run_id, settings, front_end
        self.run_dir = config.results_path() / run_id
        self.lock: RunLock | None = lock
        self.resources = resources_for(config, run_id)
        self.actor: Any = None  # the current actor's handle
        self.node = ""  # the name of the node it plays on (``nodes.node_name``)
        self.node_id = ""
        self._avoid = ""  # the node the last actor died on: the next goes elsewhere if it can
        self.restarts = 0
        self.handed_over = False
        self._observers: list[Observer] = []
        self._view: RunView | None = None
        placing = f"placing on Ray: a node with {resources_label(self.resources)}"
        self._fallback = fallback.model_copy(update={"status": "running", "reason": placing})
        self._acked = 0
        self._events_at: int | None = None  # the head transcript's bytes whose events the observers have had
        self._applying: asyncio.Future[None] | None = None

    @property
    def observers(self) -> list[Observer]:
        return self._observers

    def view(self) -> RunView:
        return (self._view or self._fallback).model_copy(update={"node": self.node})

    async def command(self, command: Command) -> CommandResult:
        if self.actor is None:
            return CommandResult(
                ok=False, message=f"{self.run_id} is being placed on Ray: nothing was changed"
            )
        try:
            result: CommandResult = await self.actor.command.remote(command)
        except _ray().exceptions.RayError as exc:
            why = crash_cause(str(exc))
            return CommandResult(ok=False, message=f"{self.run_id}'s Ray actor did not answer: {why}")
        return result

    def _emit(self, event: Event) -> None:
        """An event of the driver's own (not in the transcript, which the actor writes)."""
        for observer in self._observers:
            try:
                observer.on_event(self.run_id, event)
            except Exception:
                log.exception("observer failed")

    async def run(self) -> TerminationReason:
        try:
            return await self._play()
        except asyncio.CancelledError:
            await asyncio.shield(self._stop())
            raise
        except Exception as exc:  # the driver's own failure: the run stops where the head's files have it
            log.exception("run %s: its Ray driver failed", self.run_id)
            unwritable = isinstance(exc, OSError)  # resumable once there is room, as a local run waits
            reason = f"{type(exc).__name__}: {exc}"
            return self._ended_here("waiting" if unwritable else "crashed", reason)
        finally:
            self._kill()
            if self.lock is not None:
                self.lock.release()

    async def _play(self) -> TerminationReason:
        limit = self.config.executor.max_restarts
        while True:
            try:
                return await self._play_once()
            except _ray().exceptions.RayActorError as exc:
                text = str(exc)
                if not self.node_id:  # it died before it said where: Ray's table says
                    await self._locate(getattr(exc, "actor_id", None))
                self._kill()
                self._avoid = self.node_id
                cause = crash_cause(text) or type(exc).__name__
                what = "could not start" if never_started(text) else "died"
                why = f"its Ray actor on {self.node or 'a node'} {what}: {cause}"
                if self.restarts >= limit:
                    return await self._give_up(f"{why}; no restarts left ({limit})")
                self.restarts += 1
                delay = restart_delay(self.restarts)
                log.warning(
                    "run %s: %s; restart %d of %d in %g s", self.run_id, why, self.restarts, limit, delay
                )
                message = (
                    f"{why}; restarting from its last checkpoint in {delay:g} s ({self.restarts}/{limit})"
                )
                self._emit(ErrorOccurred(message=message, where="engine"))
                base = self._view or self._fallback
                self._view = base.model_copy(update={"reason": f"restarting in {delay:g} s: {cause}"})
                await asyncio.sleep(delay)

    async def _play_once(self) -> TerminationReason:
        options = await self._placement()
        if isinstance(options, str):  # no node can hold it now (one was lost): resumable once one can
            return self._ended_here("waiting", options)
        run_files = await asyncio.to_thread(snapshot_for_resume, self.run_dir)
        size = len(run_files.get(TRANSCRIPT, b""))  # the events after it are new, or played again
        self._events_at = size if self._events_at is None else min(self._events_at, size)
        bench = self.config.benchmark_path(self.config.runs[self.run_id].benchmark)
        bench_files = await asyncio.to_thread(read_tree, bench)
        remote = _actor_class().options(name=f"mmb:{self.run_id}:{uuid.uuid4().hex[:8]}", **options)
        head = await asyncio.to_thread(this_build)  # read once per process
        args = (self.config, self.run_id, self.settings, self.front_end, run_files, bench_files, head)
        self.node = self.node_id = ""
        self.actor = remote.remote(*args)
        self._acked = 0
        started: Started = await self.actor.start.remote()
        self.node_id = str(await self.actor.__ray_call__.remote(node_of_actor))
        self.node = node_name(self.node_id, started.node)
        if started.problem:
            await self._close_actor()
            return self._unfit(started.problem)
        while True:
            pulled = await self._pull()
            if pulled.ended is not None:
                await self._close_actor()
                return pulled.ended

    async def _locate(self, actor_id: str | None) -> None:
        """The node of an actor that died before it said where it plays (from Ray's actor table)."""
        if actor_id is None and self.actor is not None:
            actor_id = self.actor._actor_id.hex()
        if not actor_id:
            return
        try:
            self.node_id = await asyncio.to_thread(where_actor_was, actor_id)
            hosts = {node.node_id: node.host for node in await asyncio.to_thread(cluster_nodes)}
        except Exception as exc:
            log.warning("run %s: where its Ray actor was is unknown: %s", self.run_id, exc)
            return
        self.node = node_name(self.node_id, hosts.get(self.node_id, "")) if self.node_id else ""

    async def _placement(self) -> dict[str, Any] | str:
        """The new actor's Ray options: its resources, and after a failure a soft preference for another
        alive node that can hold it (Ray may not have marked the lost node dead yet); or why no node can."""
        options: dict[str, Any] = {
            "num_cpus": self.resources.get("num_cpus", 0),
            "memory": int(self.resources.get("memory", 0)),
            "max_restarts": 0,  # a new actor is made here, from the head's files
        }
        if not self.restarts:
            return options  # checked when it was placed
        try:
            nodes = await asyncio.to_thread(cluster_nodes)
        except Exception as exc:
            log.warning("run %s: the Ray cluster's nodes could not be read: %s", self.run_id, exc)
            return options
        problem = refusal(self.run_id, self.resources, nodes)
        if problem:
            return problem
        target = pick_node(nodes, self._avoid, self.resources)
        if target:
            options["scheduling_strategy"] = prefer_node(target)
        return options

    def _unfit(self, problem: str) -> TerminationReason:
        """The node lacks what the run needs: one error per missing thing, each naming the node."""
        lines = [f"node {self.node}: {line}" for line in problem.splitlines() if line.strip()]
        for line in lines:
            self._emit(ErrorOccurred(message=line, where="engine"))
        return self._ended_here("error", "; ".join(lines), told=True)

    async def _close_actor(self) -> None:
        """The actor's scratch folder removed (the actor itself is ended by ``run``)."""
        with suppress(_ray().exceptions.RayError):
            await self.actor.close.remote()

    async def _pull(self) -> Pulled:
        """One pull, written here; a cancellation never leaves a shipment half written."""
        pulled: Pulled = await self.actor.pull.remote(self._acked)
        self._applying = asyncio.ensure_future(self._apply(pulled))
        await asyncio.shield(self._applying)
        return pulled

    async def _apply(self, pulled: Pulled) -> None:
        report = self.config.results_path() / REPORT_NAME
        await asyncio.to_thread(apply_changes, self.run_dir, report, pulled.changes)
        self._acked = pulled.seq
        self._view = pulled.view or self._view
        events, self._events_at = new_events(self.run_dir / TRANSCRIPT, self._events_at or 0)
        for event in events:
            self._emit(event)

    async def _stop(self) -> None:
        """Stop the actor's run and write its last files (its report entry among them)."""
        if self.actor is None:
            return
        if self._applying is not None:
            with suppress(Exception):
                await self._applying
        try:
            async with asyncio.timeout(STOP_WAIT):
                await self.actor.stop.remote(self.handed_over)
                while (await self._pull()).ended is None:
                    pass
                await self._close_actor()
        except (TimeoutError, _ray().exceptions.RayError) as exc:
            log.warning("run %s: its Ray actor did not stop cleanly: %s", self.run_id, crash_cause(str(exc)))

    def _kill(self) -> None:
        if self.actor is not None:
            with suppress(Exception):
                _ray().kill(self.actor, no_restart=True)
            self.actor = None

    async def _give_up(self, reason: str) -> TerminationReason:
        """No restarts left: the run ends as crashed, here, from the head's files."""
        if self.lock is not None:
            self.lock.release()  # ``end_crashed`` takes it
            self.lock = None
        try:
            await end_crashed(self.config, self.run_id, reason, self._observers)
        except (BuildError, StateError) as exc:
            log.error("run %s: %s; and it could not be ended as crashed: %s", self.run_id, reason, exc)
            return self._ended_here("crashed", reason)
        return self._ended_here("crashed", reason, told=True)

    def _ended_here(self, status: RunStatus, reason: str, told: bool = False) -> TerminationReason:
        """The run ended by the driver (its actor did not end it): its view says why; so does an error event,
        unless the run's own ending (``told``) said it."""
        if not told:
            self._emit(ErrorOccurred(message=reason, where="engine", fatal=True))
        base = self._view or self._fallback
        self._view = base.model_copy(update={"status": status, "reason": reason, "activity": Activity()})
        waiting = status == "waiting"
        return TerminationReason.WAITING if waiting else TerminationReason.CRASHED
