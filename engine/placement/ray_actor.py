"""The player's side of a run placed on Ray (``engine/placement/ray_executor.py`` is the driver's): ``RunActor`` plays one
run with the same engine code (``build_run`` and ``Run``) in a scratch copy of its folder on the node Ray placed
it on, and answers the driver's pulls with what changed there (``engine/placement/sync.py``), the run's view and, at
the end, why it ended. Before the run is built, the node is checked for what it needs (``preflight.py``: the
head's project, the benchmark, the model keys). A node's player process (``ray_host.py`` ``RunHost``, the Ray
actor) holds one ``RunActor`` per run it plays; nothing here imports Ray.
"""

from __future__ import annotations

import asyncio
import fcntl
import socket
import tempfile
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from engine.agents import AdapterError, UnknownAdapter, resolve
from engine.api import RunView
from engine.commands import Command, CommandResult
from engine.config import BuildError, Config
from engine.events import Event, TerminationReason
from engine.placement.preflight import Build, preflight
from engine.placement.sync import Changes, FolderWatcher, write_tree
from engine.report.writer import REPORT_NAME
from engine.run.build import build_run
from engine.run.parts import RunSettings
from engine.run.tree_removal import remove_tree_quietly
from engine.run.view import run_view
from engine.state import StateError

PULL_WAIT = 2.0  # seconds a pull waits for something to ship
POLL = 0.25  # seconds between looks at the folder when no event came (a checkpoint lands without one)
COALESCE = 0.05  # a burst of events costs one shipment
# a shipment at most this often while the run plays: each costs a look at the folder, the run's view and a call
# (at 50 ms a model call, one per event cost the players and the driver 2.6 times the runs' own CPU)
SHIP_EVERY = 0.25
SCRATCH_PREFIX = "mmb-run-"  # the actors' scratch folders in a node's temp folder
MAKING_PREFIX = ".mmb-new-"  # a scratch folder until its lease is held (never taken for an abandoned one)
LEASE = ".mmb-actor.lease"  # in a scratch folder, locked by its actor while it lives


@dataclass
class Pulled:
    """One pull: shipment ``seq`` of the actor's folder, the run's view, and why it ended (once it has)."""

    seq: int
    changes: Changes
    view: RunView | None  # None: as in the last shipment, which reached the driver
    ended: TerminationReason | None


@dataclass
class Started:
    """An actor's answer to ``start``: the node it plays on (its host name), or why the run could not be built
    there: what the node lacks (``preflight.py``, a line each in ``problem``, their short names in ``lacks``:
    another node may have it), else the run's own problem (its state, its config: the same on every node)."""

    node: str
    problem: str = ""
    lacks: list[str] = field(default_factory=list)


_INSTALLED: set[str] = set()  # the agents this process has seen installed: not checked again for the next run


def install_agent(name: str) -> None:
    """The agent's pinned install on this node, once: its adapter's ``install`` (idempotent) under a lock, so
    players starting together on one node install it once, and not looked at again by this process once it
    succeeded (a node's player plays many runs). An unknown name is left to ``build_run`` to report."""
    if name in _INSTALLED:
        return
    try:
        adapter = resolve(name)
    except UnknownAdapter:
        return
    lock = Path(tempfile.gettempdir()) / "mmb-agent-install.lock"
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            adapter.install()
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    _INSTALLED.add(name)


def take_scratch(run_id: str) -> tuple[Path, IO[str]]:
    """A new scratch folder for ``run_id`` in this node's temp folder, and the open lease file whose lock says
    an actor plays there (released when its process dies, however it dies). The folders of actors that died
    (Ray replaced them, or the node ran out of memory) are removed first. A folder gets its name only once its
    lease is held, so a folder being made is never taken for an abandoned one."""
    parent = Path(tempfile.gettempdir())
    remove_abandoned(parent)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in run_id)
    making = Path(tempfile.mkdtemp(prefix=MAKING_PREFIX, dir=parent))
    lease = open(making / LEASE, "a")  # noqa: SIM115 - held for the actor's life
    fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
    scratch = parent / f"{SCRATCH_PREFIX}{safe}-{making.name.removeprefix(MAKING_PREFIX)}"
    making.rename(scratch)
    return scratch, lease


def remove_abandoned(parent: Path) -> list[Path]:
    """Remove the scratch folders under ``parent`` whose lease no live actor holds; return them."""
    removed = []
    for folder in parent.glob(f"{SCRATCH_PREFIX}*"):
        try:
            lease = open(folder / LEASE)  # noqa: SIM115 - closed below
        except OSError:  # not an actor's folder (no lease), or not ours to open
            continue
        with lease:
            try:
                fcntl.flock(lease, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # its actor lives
            remove_tree_quietly(folder)
            removed.append(folder)
    return removed


class RunActor:
    """Plays one run on a Ray node, in a scratch folder made from the head's files (held by the node's ``RunHost``)."""

    def __init__(
        self,
        config: Config,
        run_id: str,
        settings: dict[str, Any],
        front_end: str,
        run_files: dict[str, bytes],
        bench_files: dict[str, bytes],
        head: Build | None = None,
    ) -> None:
        self.scratch, self._lease = take_scratch(run_id)
        self.head = head  # the driver's project, which this node's must be
        here = {"base_dir": self.scratch, "results_dir": "results", "benchmarks_dir": "benchmarks"}
        self.config = config.model_copy(update=here)
        self.bench_dir = bench_dir = self.config.benchmark_path(config.runs[run_id].benchmark)
        if bench_dir.is_relative_to(self.scratch):  # an absolute benchmark path must exist on the node
            write_tree(bench_dir, bench_files)
        self.run_dir = self.config.results_path() / run_id
        write_tree(self.run_dir, run_files)
        self.run_id, self.settings, self.front_end = run_id, settings, front_end
        self.watcher = FolderWatcher(self.run_dir, self.config.results_path() / REPORT_NAME)
        self.run: Any = None  # the engine's ``Run`` once started
        self.task: asyncio.Task[TerminationReason] | None = None
        self.changed = asyncio.Event()
        self.stopping = False  # asked to stop (maybe before it started)
        self._sent: tuple[int, RunView | None] = (0, None)  # the last pull's number and view
        self._shipped_at = float("-inf")  # when the last shipment left (the loop's clock)

    def _tune(self, settings: RunSettings) -> None:
        for key, value in self.settings.items():
            setattr(settings, key, value)

    async def start(self) -> Started:
        node = socket.gethostname()
        if self.stopping:
            return Started(node, f"{self.run_id} was stopped before it started")
        lacks = preflight(self.config, self.run_id, self.head, self.bench_dir)
        if lacks:
            return Started(node, "\n".join(lack.line for lack in lacks), [lack.what for lack in lacks])
        agent = self.config.runs[self.run_id].agent
        try:
            await asyncio.to_thread(install_agent, agent)
        except AdapterError as exc:  # this node cannot have it (no network, no compiler): another may
            return Started(node, str(exc), [f"the {agent} install"])
        try:
            self.run = build_run(self.config, self.run_id, tune=self._tune, front_end=self.front_end)
        except (AdapterError, BuildError, StateError) as exc:
            return Started(node, str(exc))
        self.run.observers.append(self)
        self.task = asyncio.create_task(self.run.run(), name=f"run:{self.run_id}")
        return Started(node)

    def on_event(self, run_id: str, event: Event) -> None:
        self.changed.set()

    def _ended(self) -> TerminationReason | None:
        if self.task is None:
            return TerminationReason.STOPPED if self.stopping else None
        if not self.task.done():
            return None
        return TerminationReason.STOPPED if self.task.cancelled() else self.task.result()

    async def pull(self, acked: int) -> Pulled:
        """What changed since shipment ``acked`` reached the head; waits up to ``PULL_WAIT`` for something."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PULL_WAIT
        early = self._shipped_at + SHIP_EVERY - loop.time()
        if early > 0 and self._ended() is None:
            await self._quiet(early)  # what comes meanwhile goes in this shipment
        while True:
            ended = self._ended()  # before the look, so that the last look sees the run's last files
            seq, changes = self.watcher.changes(acked)
            if changes or ended is not None or loop.time() >= deadline:
                view = run_view(self.run, running=ended is None) if self.run is not None else None
                same = view == self._sent[1] and acked == self._sent[0]  # and the last pull arrived
                self._sent, self._shipped_at = (seq, view), loop.time()
                return Pulled(seq, changes, None if same else view, ended)
            with suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), POLL)
            self.changed.clear()
            await asyncio.sleep(COALESCE)

    async def _quiet(self, seconds: float) -> None:
        """Wait ``seconds``, or less if the run ends meanwhile (its last files go at once)."""
        if self.task is None:
            await asyncio.sleep(seconds)
        else:  # never raises: however the run ended, the pull says it
            await asyncio.wait({self.task}, timeout=seconds)

    async def command(self, command: Command) -> CommandResult:
        if self.task is None or self.task.done():
            return CommandResult(ok=False, message=f"{self.run_id} is not playing: nothing was changed")
        return await self.run.command(command)

    async def stop(self, handed_over: bool = False) -> None:
        """Stop the run at its last checkpoint (with its report entry unless it is handed over to another
        process), as a local stop does."""
        self.stopping = True
        if self.task is not None and not self.task.done():
            self.run.handed_over = handed_over
            self.task.cancel()
            with suppress(asyncio.CancelledError):
                await self.task

    def close(self) -> None:
        remove_tree_quietly(self.scratch)
        self._lease.close()
