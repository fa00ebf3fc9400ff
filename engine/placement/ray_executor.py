"""Runs placed on a Ray cluster (``executor.kind = "ray"``): each run is played by its node's player process
(``RunHost``, ``engine/placement/ray_host.py``: one per node for this driver, ``ray_pool.py``) with the same engine
code in a scratch copy of its folder, and a ``RayRun`` here, the driver, keeps the head's ``results/<run>/`` the
one source of truth.

The driver holds the run's lock, picks a node that can hold the run (``executor.placement``: ``spread`` or
``pack``, ``nodes.py``), holds the run's room there (a placement group: a run waits for room as an actor asking its
resources would), ships the run folder (cut back to its last checkpoint) and the benchmark to the node's player,
then pulls: each pull brings what changed in the scratch folder since the last one it wrote
(``engine/placement/sync.py``), the run's view and, at the end, why it ended. The driver writes the files in the
order a local run does, so they are byte for byte a local run's (a run played here can be resumed locally and
the other way round); appends the player's report entries to ``results/report.md``; then hands the new
transcript events to its observers (the TUI shows them live). Operator commands go to the player. A player or
node that dies is seen as a failed call: the run starts again on a new player from the head's files (the resume
path of a local ``kill -9``), at most ``executor.max_restarts`` times, each after a back-off that doubles
(``restart_delay``), steered away from the node the last one died on, then ends as crashed with why, in one line
(``crash_cause.py``) and a report entry. A run no node could ever hold is refused at once, naming what it asks
and the largest node; a node that lacks what the run needs (``preflight.py``: a model key, the head's project) is
named in one line per missing thing and the run goes to another node; when none has it, the run ends waiting
with why and a report entry. Where the run stands (placing, restarting, playing) is its view's ``Placement``,
said in one line by ``status.py``.

Every ``import ray`` is in this module, ``ray_pool.py`` and ``ray_connect.py``, inside functions.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from contextlib import suppress
from typing import Any

from engine.api import Activity, Observer, Placement, RunView
from engine.commands import Command, CommandResult
from engine.config import BuildError, Config
from engine.event_summary import SHORT
from engine.events import ErrorOccurred, Event, RunStatus, StatusChanged, TerminationReason
from engine.placement.crash_cause import clip, crash_cause, never_started, strip_ansi
from engine.placement.executor import end_crashed, resources_for
from engine.placement.nodes import (
    Node,
    candidates,
    choose_node,
    node_name,
    refusal,
    resources_label,
    short_name,
)
from engine.placement.preflight import this_build
from engine.placement.ray_actor import Pulled, Started
from engine.placement.ray_connect import connect, ray_module
from engine.placement.ray_pool import Host, Reservation, lost_player_errors, pool
from engine.placement.status import placement_text
from engine.placement.sync import TRANSCRIPT, apply_changes, new_events, read_tree, snapshot_for_resume
from engine.report.writer import REPORT_NAME
from engine.run.lock import RunLock, RunLocked
from engine.state import StateError

log = logging.getLogger(__name__)

STOP_WAIT = 60.0  # seconds a stopping player gets to end its run and ship its last files
RESTART_FIRST = 2.0  # seconds before the first new player after a death; doubled for each next one
RESTART_CAP = 60.0  # the longest wait before a new player
ROOM_QUIET = 1.0  # seconds a run waits for room before its status says so
ROOM_LOOK = 10.0  # seconds between looks at the cluster while a run waits for room (a node may be lost)


def restart_delay(restart: int) -> float:
    """Seconds before new player number ``restart`` (from 1): a player that cannot start on a node fails in
    milliseconds, and restarts without a pause would be used up before anything changed."""
    return float(min(RESTART_CAP, RESTART_FIRST * 2 ** max(restart - 1, 0)))


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
    resources = resources_for(config, run_id)
    try:
        nodes = await pool().nodes()
        problem = refusal(run_id, resources, nodes)
    except Exception as exc:  # the cluster's nodes unknown: Ray places it, or says why
        log.warning("run %s: the Ray cluster's nodes could not be read: %s", run_id, exc)
        nodes, problem = [], ""
    if problem:
        lock.release()
        raise BuildError(problem)
    # the player it will likely use starts now, while its files are read
    if fit := candidates(nodes, resources, {}):
        pool().warm(choose_node(fit, pool().placed, config.executor.placement, ""))
    return RayRun(config, run_id, settings, front_end, fallback, lock)


class RayRun:
    """The driver of a run played on a Ray node: implements ``engine.placement.executor.PlacedRun``."""

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
        self.actor: Any = None  # the player (its node's ``RunHost``) that plays it now
        self.host: Host | None = None
        self.key = ""  # the run's name on that player (one per placement)
        self.room: Reservation | None = None
        self.node = self.node_id = ""  # the node it plays on: its name (``nodes.node_name``) and id
        self._avoid = ""  # the node the last player died on: the next goes elsewhere if it can
        self._unfit: dict[str, list[str]] = {}  # node id → what it lacks for this run (``Started.lacks``)
        self.restarts = 0
        self.handed_over = False
        self._observers: list[Observer] = []
        self._view: RunView | None = None
        self._fallback = fallback.model_copy(update={"status": "running", "reason": ""})
        self.placement = Placement(
            stage="placing", detail=f"choosing a node for {resources_label(self.resources)}"
        )
        self._acked = 0
        self._events_at: int | None = None  # the head transcript's bytes whose events the observers have had
        self._applying: asyncio.Future[None] | None = None

    @property
    def observers(self) -> list[Observer]:
        return self._observers

    def view(self) -> RunView:
        """The run as its player last said, and where it stands on Ray; while it is placed or restarted, that
        (``status.py``) is its reason, and nothing it waited for before is shown as if it still did."""
        base = (self._view or self._fallback).model_copy(
            update={"node": self.node, "placement": self.placement}
        )
        if self.placement.stage not in ("placing", "restarting"):
            return base
        reason = placement_text(base, time.time())
        return base.model_copy(update={"status": "running", "reason": reason, "activity": Activity()})

    def _stage(self, stage: str, detail: str = "", say: bool = False, **more: Any) -> None:
        """Where the run stands on Ray now; ``say``: told to the observers too (the headless output)."""
        keep = {"restart": self.restarts, "restarts": self.config.executor.max_restarts}
        self.placement = Placement.model_validate(
            {**keep, "stage": stage, "detail": detail, "node_short": self.placement.node_short, **more}
        )
        if say:
            self._emit(StatusChanged(status="running", reason=placement_text(self.view(), time.time())))

    async def command(self, command: Command) -> CommandResult:
        if self.actor is None or self.placement.stage != "playing":
            return CommandResult(
                ok=False, message=f"{self.run_id} is being placed on Ray: nothing was changed"
            )
        try:
            result: CommandResult = await self.actor.command.remote(self.key, command)
        except ray_module().exceptions.RayError as exc:
            why = crash_cause(str(exc))
            return CommandResult(ok=False, message=f"{self.run_id}'s Ray player did not answer: {why}")
        return result

    def _emit(self, event: Event) -> None:
        """An event of the driver's own (not in the transcript, which the player writes)."""
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
            return await self._end_here(
                "waiting" if unwritable else "crashed", f"{type(exc).__name__}: {exc}"
            )
        finally:
            self._leave()
            if self.lock is not None:
                self.lock.release()

    async def _play(self) -> TerminationReason:
        limit = self.config.executor.max_restarts
        lost = lost_player_errors()
        while True:
            try:
                return await self._play_once()
            except lost as exc:
                text = str(exc)
                if self.host is not None and not isinstance(exc, ray_module().exceptions.RayTaskError):
                    pool().lost(self.host)  # its process is gone: the next run there starts a new one
                self._leave()
                self._avoid = self.node_id
                cause = crash_cause(text) or type(exc).__name__
                what = "could not start" if never_started(text) else "died"
                why = f"its Ray actor on {self.node or 'a node'} {what}: {cause}"
                log.debug("run %s: Ray said: %s", self.run_id, strip_ansi(text))
                if self.restarts >= limit:
                    tail = f"; no restarts left ({limit})"
                    return await self._end_here("crashed", clip(why, SHORT - len(tail)) + tail)
                self.restarts += 1
                delay = restart_delay(self.restarts)
                log.warning(
                    "run %s: %s; restart %d of %d in %g s", self.run_id, why, self.restarts, limit, delay
                )
                now = time.time()
                self._stage("restarting", why, resume_at=now + delay)
                said = placement_text(self.view(), now)  # "restart 1/3 in 2s: its Ray actor on … died: …"
                self._emit(ErrorOccurred(message=clip(said, SHORT), where="engine"))
                await asyncio.sleep(delay)
                self._stage("placing", "choosing a node" + (f" other than {self.node}" if self.node else ""))

    async def _play_once(self) -> TerminationReason:
        run_files = await asyncio.to_thread(snapshot_for_resume, self.run_dir)
        size = len(run_files.get(TRANSCRIPT, b""))  # the events after it are new, or played again
        self._events_at = size if self._events_at is None else min(self._events_at, size)
        bench = self.config.benchmark_path(self.config.runs[self.run_id].benchmark)
        bench_files = await asyncio.to_thread(read_tree, bench)
        while True:
            ended = await self._reserve()
            if ended is not None:
                return ended
            self._acked = 0
            self.host = pool().host_for(self.node_id, self.key)
            self.actor = self.host.handle
            head = await asyncio.to_thread(this_build)  # read once per process
            args = (self.config, self.run_id, self.settings, self.front_end, run_files, bench_files, head)
            started: Started = await self.actor.open.remote(self.key, *args)
            if not started.problem:
                break
            if not started.lacks:  # the run's own problem (its state, its config): the same on every node
                return await self._unbuildable(started.problem)
            self._unfit[self.node_id] = started.lacks
            for line in started.problem.splitlines():
                log.warning("run %s: node %s: %s", self.run_id, self.node, line)
                self._emit(ErrorOccurred(message=f"node {self.node}: {line}", where="engine"))
            self._leave()
        self._stage("playing")
        self._view = self._view.model_copy(update={"activity": Activity()}) if self._view else None
        while True:
            pulled = await self._pull()
            if pulled.ended is not None:
                await self._close_player()
                return pulled.ended

    async def _reserve(self) -> TerminationReason | None:
        """Room for the run on a node that can hold it and has what it needs (the strategy's choice, away from
        the node the last player died on), waited for as long as it takes; or how the run ends when no node
        can hold it or every one that could lacks something."""
        players = pool()
        while True:
            nodes = await players.nodes(fresh=bool(self.restarts or self._unfit))
            problem = refusal(self.run_id, self.resources, nodes)
            if problem:  # no node can hold it now (one was lost): resumable once one can
                return await self._end_here("waiting", problem)
            fit = candidates(nodes, self.resources, self._unfit)
            if not fit:
                return await self._end_here("waiting", self._lacking(nodes))
            target = choose_node(fit, players.placed, self.config.executor.placement, self._avoid)
            self.key = f"{self.run_id}:{uuid.uuid4().hex[:8]}"
            players.warm(target)  # its player starts while the room is reserved
            self.room = room = Reservation(self.resources, [node.node_id for node in fit], target)
            # counted where it is meant to go while it waits (``_leave`` takes it back)
            players.hold(target, 1)
            ready = await room.ready(ROOM_QUIET)
            if not ready:
                self._stage("placing", f"waiting for room for {resources_label(self.resources)}", say=True)
            while not ready:
                ready = await room.ready(ROOM_LOOK)
                if not ready and refusal(self.run_id, self.resources, await players.nodes(fresh=True)):
                    break  # the node it waited for is lost and none other can hold it
            if not ready:
                self._leave()
                continue
            if room.node_id != target:  # Ray found room elsewhere among the fit nodes
                players.hold(target, -1)
                players.hold(room.node_id, 1)
            if room.node_id not in {node.node_id for node in nodes}:
                nodes = await players.nodes(fresh=True)
            self.node_id = room.node_id
            self.node = node_name(
                self.node_id, next((n.host for n in nodes if n.node_id == self.node_id), "")
            )
            self._stage("placing", f"starting on {self.node}", node_short=short_name(self.node_id, nodes))
            return None

    def _lacking(self, nodes: list[Node]) -> str:
        """Why no node can play the run: what the nodes that could hold it lack, in one line."""
        names = {node.node_id: node.name for node in nodes}
        things = sorted({what for lacks in self._unfit.values() for what in lacks})
        where = ", ".join(names.get(node_id, node_id[:6]) for node_id in self._unfit)
        said = f"no Ray node has what {self.run_id} needs: {', '.join(things)} (not on {where})"
        return clip(said, SHORT)

    def _leave(self) -> None:
        """The run no longer plays on its player (its key let go there, ended if the player still has it) nor
        holds its room."""
        if self.host is not None:
            if self.key in self.host.runs:
                with suppress(Exception):
                    self.actor.close.remote(self.key)
            pool().release(self.host, self.key)
            self.host = None
        if self.room is not None:
            if self.room.node_id:
                pool().hold(self.room.node_id, -1)
            self.room.remove()
            self.room = None
        self.actor = None

    async def _close_player(self) -> None:
        """The run's player let go of it (its scratch folder removed)."""
        with suppress(ray_module().exceptions.RayError):
            await self.actor.close.remote(self.key)
        if self.host is not None:
            self.host.runs.discard(self.key)

    async def _pull(self) -> Pulled:
        """One pull, written here; a cancellation never leaves a shipment half written."""
        pulled: Pulled = await self.actor.pull.remote(self.key, self._acked)
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
        """Stop the player's run and write its last files (its report entry among them)."""
        if self.actor is None or self.placement.stage != "playing":
            return
        if self._applying is not None:
            with suppress(Exception):
                await self._applying
        try:
            async with asyncio.timeout(STOP_WAIT):
                await self.actor.stop.remote(self.key, self.handed_over)
                while (await self._pull()).ended is None:
                    pass
                await self._close_player()
        except (TimeoutError, ray_module().exceptions.RayError) as exc:
            log.warning("run %s: its Ray player did not stop cleanly: %s", self.run_id, crash_cause(str(exc)))

    async def _unbuildable(self, problem: str) -> TerminationReason:
        """The run cannot be built from its files (its state, its config): an error, as a local start's."""
        self._leave()
        for line in problem.splitlines():
            self._emit(ErrorOccurred(message=line, where="engine", fatal=True))
        return self._ended_view("error", "; ".join(problem.splitlines()))

    async def _end_here(self, status: RunStatus, reason: str) -> TerminationReason:
        """The run ended by the driver (its player did not end it), as a run ends: from the head's files, with
        an error event, its status, a report entry and ``run_ended`` (``executor.end_crashed``)."""
        log.warning("run %s: %s: %s", self.run_id, status, reason)
        self._leave()
        if self.lock is not None:
            self.lock.release()  # ``end_crashed`` takes it
            self.lock = None
        try:
            await end_crashed(self.config, self.run_id, reason, self._observers, waiting=status == "waiting")
        except (BuildError, StateError, OSError) as exc:
            log.error("run %s: %s; and it could not be ended here: %s", self.run_id, reason, exc)
            self._emit(ErrorOccurred(message=reason, where="engine", fatal=True))
        return self._ended_view(status, reason)

    def _ended_view(self, status: RunStatus, reason: str) -> TerminationReason:
        self._stage("")
        base = self._view or self._fallback
        self._view = base.model_copy(update={"status": status, "reason": reason, "activity": Activity()})
        return TerminationReason.WAITING if status == "waiting" else TerminationReason.CRASHED
