"""A Ray cluster's ordinary failures read well and cost little (``engine/placement/ray_executor.py``): an actor
that cannot start on its node names the worker's own error in one clean line, and its restarts back off; a run
no node can hold is refused at once, naming what it asks and the largest node; a node that lacks what the run
needs (the head's project, a model key) is named with each missing thing. On a real local Ray instance."""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ROOT, fast, scaled

from engine.config import Config, load_config
from engine.events import Event, TerminationReason
from engine.placement import ray_executor
from engine.placement.preflight import Build
from engine.placement.ray_actor import RunActor
from engine.placement.scheduler import Scheduler


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    """One local Ray instance of 2 CPUs for the module's tests."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


class ActorOfAModuleTheNodeLacks(RunActor):
    """``RunActor`` from a module no Ray worker can import (this test file is not on a worker's path), as
    ``engine.placement.ray_actor`` is on a node without the project's dependencies: Ray's ``TemporaryActor``."""


def _config(folder: Path, **run: Any) -> Config:
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo", dirs_exist_ok=True)
    models = run.pop("models", {})
    raw = {
        "models": {"persona": {"model": "scripted/persona"}, **models},
        "persona": {"model": "persona"},
        "executor": {"kind": "ray", "max_restarts": 2},
        "runs": {"r0": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall", **run}},
    }
    (folder / "config.jsonc").write_text(json.dumps(raw))
    return load_config(folder / "config.jsonc")


class _Errors:
    def __init__(self) -> None:
        self.seen: list[tuple[float, str]] = []

    def on_event(self, run_id: str, event: Event) -> None:
        if event.kind == "error":
            self.seen.append((time.monotonic(), event.message))


async def test_an_actor_that_cannot_start_names_its_cause_in_one_line_and_its_restarts_back_off(
    ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_executor, "_ACTOR", ray.remote(ActorOfAModuleTheNodeLacks))
    monkeypatch.setattr(ray_executor, "RESTART_FIRST", 0.5)
    config = _config(tmp_path)
    scheduler = Scheduler(config, tune=fast)
    errors = _Errors()
    scheduler.add_observer(errors)
    await scheduler.start("r0")
    async with asyncio.timeout(scaled(60)):
        assert await scheduler.wait() == {"r0": TerminationReason.CRASHED}

    node = ray.nodes()[0]
    name = f"{node['NodeID'][:6]}@{node['NodeManagerHostname']}"
    cause = (
        f"its Ray actor on {name} could not start: ModuleNotFoundError: No module named 'test_ray_failures'"
    )
    view = scheduler.view("r0")
    assert view.status == "crashed"
    assert view.reason.startswith(cause) and view.reason.endswith("; no restarts left (2)")
    assert "\n" not in view.reason and "\x1b" not in view.reason and "TemporaryActor" not in view.reason
    restarts = [(at, m) for at, m in errors.seen if "restarting" in m]
    assert [m.split("in ")[-1] for _, m in restarts] == ["0.5 s (1/2)", "1 s (2/2)"]
    assert all(cause in m and "\x1b" not in m and "\n" not in m for _, m in errors.seen)
    last = errors.seen[-1][0]
    assert restarts[1][0] - restarts[0][0] >= 0.5 and last - restarts[1][0] >= 1.0  # backed off


def test_the_restart_delay_doubles_up_to_its_cap() -> None:
    delays = [ray_executor.restart_delay(n) for n in range(1, 9)]
    assert delays == [2, 4, 8, 16, 32, 60, 60, 60]


@pytest.mark.parametrize(
    ("resources", "asked"),
    [({"num_cpus": 4}, "4 CPU, 0.25 GB"), ({"memory": "900 GB"}, "0.1 CPU, 900 GB")],
)
async def test_a_run_no_node_can_hold_is_refused_at_once_naming_the_largest_node(
    ray: Any, tmp_path: Path, resources: dict[str, Any], asked: str
) -> None:
    config = _config(tmp_path, resources=resources)
    scheduler = Scheduler(config, tune=fast)
    started = time.monotonic()
    await scheduler.start("r0")
    assert time.monotonic() - started < scaled(10)
    view = scheduler.view("r0")
    assert view.status == "error" and not scheduler.running("r0")
    assert f"r0 asks {asked}" in view.reason
    node = ray.nodes()[0]
    name = f"{node['NodeID'][:6]}@{node['NodeManagerHostname']}"
    assert f"the largest node is {name} with 2 CPU, " in view.reason


async def test_a_node_without_the_heads_project_or_a_model_key_is_named_with_each(
    ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "MMB_TEST_NODE_KEY"}
    config = _config(tmp_path, persona="keyed", models={"keyed": model})
    monkeypatch.setenv("MMB_TEST_NODE_KEY", "set on the head only")  # the node's workers started without it
    monkeypatch.setattr(ray_executor, "this_build", lambda: Build("0.0.1", "0123456789ab"))
    scheduler = Scheduler(config, tune=fast)
    errors = _Errors()
    scheduler.add_observer(errors)
    await scheduler.start("r0")
    async with asyncio.timeout(scaled(60)):
        assert await scheduler.wait() == {"r0": TerminationReason.CRASHED}
    node = scheduler.slots["r0"].placed.node  # type: ignore[union-attr]
    lines = [m for _, m in errors.seen]
    assert len(lines) == 2 and all(line.startswith(f"node {node}: ") for line in lines)
    assert "the head MarathonMemBench 0.0.1 (code 0123456789ab): install the same on every node" in lines[0]
    assert "MMB_TEST_NODE_KEY (model 'keyed', the persona) is not set in the node's environment" in lines[1]
    view = scheduler.view("r0")
    assert view.status == "error" and view.reason == "; ".join(lines)
