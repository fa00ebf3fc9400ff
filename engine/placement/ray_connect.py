"""The driver's line to Ray: joining the cluster (once per process, from any front end) and the cluster's nodes
as ``engine/placement/nodes.py`` reads them. With ``ray_executor.py`` and ``ray_pool.py``, the only modules that
import Ray, always inside functions.

Ray is joined where no front end can break it: ``ray.init`` turns on ``faulthandler`` on ``sys.stderr`` unless
it is on already, and under the app ``sys.stderr`` is Textual's capture, whose ``fileno()`` is -1, so the join
failed with ``file.fileno() is not a valid file descriptor``. It is turned on here first, on the process's own
stderr (where Python's own fatal-error report goes). Ray's own words (its loggers, and the ``(raylet)`` lines
it prints from the cluster's error channel, with colour codes) go to the engine's log, never to a terminal the
app or the headless runner writes on; Ray's C++ failure signal handler, whose stack dump of a stop's SIGTERM
went to the terminal, is left out of the driver.
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
        _no_failure_signal_handler(ray)
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


def _no_failure_signal_handler(ray: Any) -> None:
    """The driver's stop signals are the front end's (a stopped headless run saves its runs and exits 130): Ray's
    C++ failure signal handler would print its stack dump of a SIGTERM on the terminal first. It is left out of
    the driver (read when ``ray.init`` starts the driver's core worker); ``faulthandler`` still reports a real
    crash, and the nodes' workers keep theirs (their output is in Ray's logs)."""
    constants = getattr(getattr(ray, "_private", None), "ray_constants", None)
    if constants is not None and hasattr(constants, "RAY_DISABLE_FAILURE_SIGNAL_HANDLER"):
        constants.RAY_DISABLE_FAILURE_SIGNAL_HANDLER = True


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
