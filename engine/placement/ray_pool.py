"""The driver's players on a Ray cluster and each run's room there. With ``ray_executor.py`` and ``ray_connect.py``,
the only modules that import Ray, always inside functions.

Players: one ``RunHost`` actor (``ray_host.py``) per node for this process, started when a run is first meant
for that node, while its room is reserved (pinned to the node, asking no resources of its own, at niceness 0 rather than Ray's 15 for batch
workers), shared by the runs placed there (a new one past ``PER_HOST`` runs), and let go ``IDLE`` seconds after its
last run ended, so the next run or matrix finds it warm. One that died is forgotten at once, so the next run there
starts a new one.

Room: each run holds what it asks (``num_cpus``, ``memory``) as a one-bundle placement group on a node it fits
(a label selector names the nodes that can hold it and were not found to lack what it needs), the node the
strategy prefers as a soft target; Ray keeps the books across every driver, so a run waits there for room as an
actor asking those resources would, and the run's player plays it on the node that reservation landed on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from engine.placement.nodes import Node
from engine.placement.ray_connect import cluster_nodes, ray_module
from engine.placement.ray_host import RunHost

log = logging.getLogger(__name__)

PER_HOST = 16  # runs one player process plays at most (one asyncio loop); the next start another on the node
IDLE = 30.0  # seconds a player with no run is kept warm for the next one
# seconds the cluster's node list is used again without asking Ray (a matrix's runs start at once)
NODES_FRESH = 2.0
NODE_ID_LABEL = "ray.io/node-id"  # the label Ray gives every node: its id
# Ray starts its workers at niceness 15 (batch work that must not slow Ray itself); a player plays runs as the
# local engine does, so at 0, as Ray runs its job drivers: at 15, two busy loops beside it made a matrix 3x
# slower than local and its first event half a minute late
NICENESS = "RAY_worker_niceness"

_HOST: Any = None


def host_class() -> Any:
    """``RunHost`` as a Ray actor class (made once: each one is exported to the cluster)."""
    global _HOST
    if _HOST is None:
        _HOST = ray_module().remote(RunHost)
    return _HOST


def lost_player_errors() -> tuple[type[BaseException], ...]:
    """Ray's errors that mean a run's player is gone or never came: its process or node died, it could not be
    scheduled on its node, or one of its calls failed there."""
    exceptions = ray_module().exceptions
    return (exceptions.RayActorError, exceptions.ActorUnschedulableError, exceptions.RayTaskError)


@dataclass(eq=False)
class Host:
    """A player process on a node and the runs (their keys) it plays for this driver."""

    node_id: str
    handle: Any
    runs: set[str] = field(default_factory=set)
    idle_timer: asyncio.TimerHandle | None = None


class Pool:
    """This driver's players, per node, and its runs per node (the strategy reads them)."""

    def __init__(self, job: str) -> None:
        self.job = job  # the Ray job these players belong to (a new ``ray.init`` is a new pool)
        self.hosts: dict[str, list[Host]] = {}
        self.placed: dict[str, int] = {}  # node id → this driver's runs reserved there
        self._nodes: tuple[float, list[Node]] | None = None

    async def nodes(self, fresh: bool = False) -> list[Node]:
        """The cluster's nodes, asked of Ray at most every ``NODES_FRESH`` seconds unless ``fresh``."""
        now = time.monotonic()
        if fresh or self._nodes is None or now - self._nodes[0] > NODES_FRESH:
            self._nodes = (now, await asyncio.to_thread(cluster_nodes))
        return self._nodes[1]

    def host_for(self, node_id: str, key: str) -> Host:
        """The player on ``node_id`` that plays the run ``key`` (started now when none has room)."""
        hosts = self.hosts.setdefault(node_id, [])
        host = min((h for h in hosts if len(h.runs) < PER_HOST), key=lambda h: len(h.runs), default=None)
        if host is None:
            host = Host(node_id, _start_host(node_id))
            hosts.append(host)
        if host.idle_timer is not None:
            host.idle_timer.cancel()
            host.idle_timer = None
        host.runs.add(key)
        return host

    def warm(self, node_id: str) -> None:
        """Start a player on ``node_id`` now if it has none, while the run that will go there waits for its room:
        the player's start (a worker process, Ray's import and the engine's) overlaps the reservation instead of
        following it. One no run takes is ended ``IDLE`` s later, as an idle one is."""
        hosts = self.hosts.setdefault(node_id, [])
        if hosts:
            return
        host = Host(node_id, _start_host(node_id))
        hosts.append(host)
        self._idle_later(host)

    def release(self, host: Host, key: str) -> None:
        """The run ``key`` no longer plays on ``host``; a player left without runs is ended ``IDLE`` s later."""
        host.runs.discard(key)
        if host.runs or host not in self.hosts.get(host.node_id, []):
            return
        self._idle_later(host)

    def _idle_later(self, host: Host) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        host.idle_timer = loop.call_later(IDLE, self._end_idle, host)

    def _end_idle(self, host: Host) -> None:
        if not host.runs:
            self.lost(host)

    def lost(self, host: Host) -> None:
        """Forget (and end) a player: it died, or has been idle too long."""
        hosts = self.hosts.get(host.node_id, [])
        if host in hosts:
            hosts.remove(host)
            with contextlib.suppress(Exception):
                ray_module().kill(host.handle, no_restart=True)

    def hold(self, node_id: str, delta: int) -> None:
        self.placed[node_id] = max(0, self.placed.get(node_id, 0) + delta)


_POOL: Pool | None = None


def pool() -> Pool:
    """This process's pool for the Ray job it has joined."""
    global _POOL
    context = ray_module().get_runtime_context()
    # a new ``ray.init`` in this process (a new local instance) may number its job as the last one did
    job = f"{context.get_job_id()}@{context.get_node_id()}"
    if _POOL is None or _POOL.job != job:
        _POOL = Pool(job)
    return _POOL


def _start_host(node_id: str) -> Any:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return (
        host_class()
        .options(
            name=f"mmb-player:{uuid.uuid4().hex[:8]}",
            num_cpus=0,
            max_restarts=0,  # a run whose player died is started again by its driver, from the head's files
            max_concurrency=4 * PER_HOST + 8,  # each run's pull waits there while its run plays
            runtime_env={"env_vars": {NICENESS: "0"}},
            scheduling_strategy=NodeAffinitySchedulingStrategy(node_id=node_id, soft=False),
        )
        .remote()
    )


def bundle(resources: dict[str, float]) -> dict[str, float]:
    """What a run asks, as a placement group's bundle (Ray refuses an empty one: then no reservation)."""
    wanted = {"CPU": resources.get("num_cpus", 0.0), "memory": float(int(resources.get("memory", 0.0)))}
    return {name: amount for name, amount in wanted.items() if amount > 0}


class Reservation:
    """A run's room on one node: a placement group of one bundle, removed when the run leaves the node."""

    def __init__(self, resources: dict[str, float], allowed: list[str], target: str) -> None:
        from ray.util.placement_group import placement_group

        self.node_id = target
        self.group: Any = None
        wanted = bundle(resources)
        if wanted:
            self.group = placement_group(
                [wanted],
                strategy="STRICT_PACK",
                bundle_label_selector=[{NODE_ID_LABEL: f"in({','.join(allowed)})"}],
                _soft_target_node_id=target or None,
            )

    async def ready(self, timeout: float) -> bool:
        """Whether the room is held (after waiting up to ``timeout`` seconds); ``node_id`` says where."""
        if self.group is None:
            return True
        try:
            await asyncio.wait_for(asyncio.shield(self.group.ready()), timeout)
        except TimeoutError:
            return False
        from ray.util.placement_group import placement_group_table

        table = await asyncio.to_thread(placement_group_table, self.group)
        self.node_id = str((table.get("bundles_to_node_id") or {}).get(0, "")) or self.node_id
        return True

    def remove(self) -> None:
        if self.group is not None:
            from ray.util.placement_group import remove_placement_group

            with contextlib.suppress(Exception):
                remove_placement_group(self.group)
            self.group = None
