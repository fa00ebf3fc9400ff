"""The driver's line to Ray: joining the cluster (once per process, from any front end), the cluster's nodes as
``engine/placement/nodes.py`` reads them, and the node an actor plays on. With ``ray_executor.py``, the only
modules that import Ray, always inside functions.

Ray is joined where no front end can break it: ``ray.init`` turns on ``faulthandler`` on ``sys.stderr`` unless
it is on already, and under the app ``sys.stderr`` is Textual's capture, whose ``fileno()`` is -1, so the join
failed with ``file.fileno() is not a valid file descriptor``. It is turned on here first, on the process's own
stderr (where Python's own fatal-error report goes). Ray's own words (its loggers, and the ``(raylet)`` lines
it prints from the cluster's error channel, with colour codes) go to the engine's log, never to a terminal the
app or the headless runner writes on.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import sys
import threading
from typing import IO, Any

from engine.placement.crash_cause import strip_ansi
from engine.placement.nodes import Node

log = logging.getLogger(__name__)

_INIT = threading.Lock()
_fault_file: IO[str] | None = None  # kept open while faulthandler writes to it


def ray_module() -> Any:
    import ray

    return ray


def connect(address: str | None) -> None:
    """Join the cluster at ``address`` or start a local instance (``None`` or ``"local"``), once per process."""
    ray = ray_module()
    with _INIT:
        if ray.is_initialized():
            return
        route_ray_output(ray)
        _fault_handler_on_a_real_file()
        local = {"include_dashboard": False} if address in (None, "local") else {}
        ray.init(address=address, log_to_driver=False, configure_logging=False, **local)


def _fault_handler_on_a_real_file() -> None:
    """``faulthandler`` on, on a real file descriptor (the process's stderr, else /dev/null), so that Ray's
    join leaves it as it is whatever ``sys.stderr`` is at that moment."""
    global _fault_file
    if faulthandler.is_enabled():
        return
    stream = sys.__stderr__
    try:
        if stream is None:
            raise ValueError("no stderr")
        os.fstat(stream.fileno())
    except (OSError, ValueError):  # detached, or closed
        _fault_file = stream = open(os.devnull, "w")  # noqa: SIM115 - held while faulthandler is on
    faulthandler.enable(file=stream, all_threads=False)


def route_ray_output(ray: Any) -> None:
    """Ray's log lines to the engine's log; the lines it prints from the cluster's error channel (``(raylet)``
    warnings, a dead worker's traceback) too, their colour codes stripped."""
    ray_log = logging.getLogger("ray")  # Ray writes to stderr by itself
    ray_log.handlers.clear()
    ray_log.propagate = True
    worker = getattr(getattr(ray, "_private", None), "worker", None)
    if worker is not None and hasattr(worker, "print_to_stdstream"):
        worker.print_to_stdstream = _to_log


def _to_log(data: dict[str, Any], ignore_prefix: bool = False) -> None:
    """What Ray would print on the driver's stdout or stderr, to the log."""
    source = data.get("actor_name") or data.get("task_name") or data.get("pid") or "ray"
    for line in data.get("lines") or []:
        text = strip_ansi(str(line)).rstrip()
        if text:
            logging.getLogger("ray").warning("(%s) %s", source, text)


def cluster_nodes() -> list[Node]:
    """The cluster's nodes as Ray's control store has them (dead ones marked so)."""
    nodes = []
    for raw in ray_module().nodes():
        resources = raw.get("Resources") or {}
        nodes.append(
            Node(
                node_id=str(raw.get("NodeID", "")),
                host=str(raw.get("NodeManagerHostname") or raw.get("NodeManagerAddress") or ""),
                cpus=float(resources.get("CPU", 0.0)),
                memory=float(resources.get("memory", 0.0)),
                alive=bool(raw.get("Alive", raw.get("alive", False))),
            )
        )
    return nodes


def where_actor_was(actor_id: str) -> str:
    """The id of the node a (dead) actor was placed on, as Ray's control store keeps it; "" when unknown."""
    try:
        entry = ray_module()._private.state.actors(actor_id)
        return str((entry.get("Address") or {}).get("NodeID") or "")
    except Exception:  # an internal table: its shape may change with Ray
        return ""


def node_of_actor(actor_self: object) -> str:
    """Run inside an actor (``__ray_call__``): the id of the node it plays on."""
    return str(ray_module().get_runtime_context().get_node_id())


def prefer_node(node_id: str) -> Any:
    """Ray's scheduling strategy for "on node ``node_id`` if it is alive and can hold it, else anywhere"."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node_id=node_id, soft=True)
