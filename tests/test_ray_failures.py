"""A Ray cluster's ordinary failures read well and cost little (``engine/placement/ray_executor.py``): an actor
that cannot start on its node names the worker's own error in one clean line, and its restarts back off; a run
no node can hold is refused at once, naming what it asks and the largest node; a node that lacks what the run
needs (the head's project, a model key) is named with each missing thing. On a real local Ray instance."""

from __future__ import annotations

import asyncio
import json
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ROOT, fast, scaled

from engine.api import Activity
from engine.commands import Pause
from engine.config import Config, load_config
from engine.event_summary import summary
from engine.events import ErrorOccurred, Event, StatusChanged, TerminationReason
from engine.placement import ray_executor, ray_pool
from engine.placement.preflight import Build
from engine.placement.ray_host import RunHost
from engine.placement.scheduler import Scheduler
from engine.placement.status import placement_text
from engine.state import load_state
from mmb_tui.front_ends.cli import main


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    """One local Ray instance of 2 CPUs for the module's tests."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


class PlayerOfAModuleTheNodeLacks(RunHost):
    """``RunHost`` from a module no Ray worker can import (this test file is not on a worker's path), as
    ``engine.placement.ray_host`` is on a node without the project's dependencies: Ray's ``TemporaryActor``."""


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
        self.events: list[ErrorOccurred] = []

    def on_event(self, run_id: str, event: Event) -> None:
        if event.kind == "error":
            self.seen.append((time.monotonic(), event.message))
            self.events.append(event)


async def test_an_actor_that_cannot_start_names_its_cause_in_one_line_and_its_restarts_back_off(
    ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_pool, "_HOST", ray.remote(PlayerOfAModuleTheNodeLacks))
    monkeypatch.setattr(ray_executor, "RESTART_FIRST", 1.0)
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
    restarts = [(at, m) for at, m in errors.seen if m.startswith("restart ")]
    assert [m.split(": ")[0] for _, m in restarts] == ["restart 1/2 in 1s", "restart 2/2 in 2s"]
    assert all(cause in m and "\x1b" not in m and "\n" not in m for _, m in errors.seen)
    assert all(summary(e).endswith(e.message) for e in errors.events)  # whole: nothing cut
    last = errors.seen[-1][0]
    assert restarts[1][0] - restarts[0][0] >= 1.0 and last - restarts[1][0] >= 2.0  # backed off


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
    errors = _Errors()
    scheduler.add_observer(errors)
    started = time.monotonic()
    await scheduler.start("r0")
    assert time.monotonic() - started < scaled(10)
    view = scheduler.view("r0")
    assert view.status == "error" and not scheduler.running("r0")
    assert f"r0, which asks {asked}" in view.reason
    node = ray.nodes()[0]
    name = f"{node['NodeID'][:6]}@{node['NodeManagerHostname']}"
    assert f"the largest is {name} with 2 CPU, " in view.reason
    assert all(summary(e).endswith(e.message) for e in errors.events) and errors.events  # the ❌ line: whole


async def test_a_node_without_the_heads_project_or_a_model_key_is_named_with_each_and_the_run_waits(
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
        assert await scheduler.wait() == {"r0": TerminationReason.WAITING}
    node = scheduler.slots["r0"].placed.node  # type: ignore[union-attr]
    lines = [m for _, m in errors.seen]
    assert len(lines) == 3 and all(line.startswith(f"node {node}: ") for line in lines[:2])
    assert "the head MarathonMemBench 0.0.1 (code 0123456789ab): install the same on every node" in lines[0]
    assert "MMB_TEST_NODE_KEY (model 'keyed', the persona) is not set in the node's environment" in lines[1]
    assert lines[2] == f"no Ray node has what r0 needs: MMB_TEST_NODE_KEY, the head's project (not on {node})"
    assert all(summary(e).endswith(e.message) for e in errors.events)  # each ❌ line whole
    view = scheduler.view("r0")
    assert view.status == "waiting" and view.reason == lines[2]
    state = load_state(config.results_path() / "r0" / "state.json")  # nothing ends without its record
    assert state is not None and state.status == "waiting" and state.reason == lines[2]
    assert "r0: demo @ chatbot" in (config.results_path() / "report.md").read_text()


def _two_runs(folder: Path, cpus: float) -> Config:
    """Two runs that each ask the whole node (``cpus``), the persona slow enough that they play a while."""
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo", dirs_exist_ok=True)
    run = {
        "benchmark": "demo",
        "agent": "chatbot",
        "model": "scripted/recall",
        "resources": {"num_cpus": cpus},
    }
    raw = {
        "models": {"persona": {"model": "scripted/persona", "latency": 0.05}},
        "persona": {"model": "persona"},
        "executor": {"kind": "ray"},
        "runs": {"r0": run, "r1": run},
    }
    (folder / "config.jsonc").write_text(json.dumps(raw))
    return load_config(folder / "config.jsonc")


class _Said:
    """What the driver told the observers: each run's events, and its status lines (the headless output)."""

    def __init__(self) -> None:
        self.events: dict[str, list[Event]] = {}

    def on_event(self, run_id: str, event: Event) -> None:
        self.events.setdefault(run_id, []).append(event)

    def count(self, run_id: str) -> int:
        return len(self.events.get(run_id, []))

    def said(self, run_id: str, kind: str) -> list[str]:
        found = [e for e in self.events.get(run_id, []) if e.kind == kind]
        return [e.reason if isinstance(e, StatusChanged) else getattr(e, "message", "") for e in found]


async def _until(condition: Any, what: str) -> None:
    async with asyncio.timeout(scaled(60)):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_restart_that_waits_for_room_says_so_and_shows_no_stale_wait(
    ray: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ray_executor, "RESTART_FIRST", 1.0)
    config = _two_runs(tmp_path, cpus=2)  # the node's 2 CPUs: one run at a time
    scheduler = Scheduler(config, tune=fast)
    said = _Said()
    scheduler.add_observer(said)
    await scheduler.start("r0")
    await _until(lambda: said.count("r0") >= 10, "r0 to play")
    placed: Any = scheduler.slots["r0"].placed
    ray.kill(placed.actor)  # its player dies; the node lives
    await _until(lambda: scheduler.view("r0").placement.stage == "restarting", "r0's restart")
    view = scheduler.view("r0")
    assert view.status == "running" and view.activity == Activity()  # no wait of the dead player shown
    assert view.reason == placement_text(view, time.time())
    assert view.reason.startswith("restart 1/3 in ") and "its Ray actor on " in view.reason
    await scheduler.start("r1")  # takes the node while r0 backs off
    await _until(lambda: said.count("r1") >= 5, "r1 to play")

    def waits_for_room() -> bool:
        return scheduler.view("r0").placement.detail.startswith("waiting for room")

    await _until(waits_for_room, "r0 to wait for room")
    view = scheduler.view("r0")
    expected = "restart 1/3: placing on Ray: waiting for room for 2 CPU, 0.25 GB"
    assert (view.status, view.reason, view.activity) == ("running", expected, Activity())
    assert placement_text(view, time.time()) == expected  # the header's line and the reason: one text
    assert (
        placement_text(view, time.time(), short=True)
        == "restart 1/3: placing: waiting for room for 2 CPU, 0.25 GB"
    )
    assert expected in said.said("r0", "status")  # the headless output says the same
    assert (
        await scheduler.command("r0", Pause())
    ).message == "r0 is being placed on Ray: nothing was changed"
    await scheduler.stop("r1")  # room again: r0 is placed and plays to its end
    async with asyncio.timeout(scaled(120)):
        assert (await scheduler.wait(["r0"]))["r0"] == TerminationReason.FINISHED
    assert placed.restarts == 1 and scheduler.view("r0").placement.stage == "playing"


def test_a_headless_run_on_ray_stopped_by_sigterm_says_nothing_of_rays_own_on_the_terminal(
    ray: Any, tmp_path: Path
) -> None:
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    address = ray.get_runtime_context().gcs_address  # this module's instance: joined as a second driver
    raw = {
        "models": {"persona": {"model": "scripted/persona", "latency": 0.2}},
        "persona": {"model": "persona"},
        "executor": {"kind": "ray", "address": address},
        "runs": {"r0": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
    }
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    out, err = tmp_path / "out", tmp_path / "err"
    command = [sys.executable, "-m", "mmb_tui.front_ends.cli", "--config", str(tmp_path / "config.jsonc")]
    with out.open("wb") as stdout, err.open("wb") as stderr:
        process = subprocess.Popen(
            [*command, "run", "r0", "--headless"],
            cwd=ROOT,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + scaled(120)
        while out.read_text().count("\n") < 12:  # it plays on its node
            assert process.poll() is None and time.monotonic() < deadline, err.read_text()
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=scaled(120)) == 130
    finally:
        process.kill()
        process.wait()
    output, noise = out.read_text(), err.read_text()
    assert "── plays on Ray node " in output and output.rstrip().endswith(
        "stopping: state saved, run again to resume"
    )
    assert noise == "", noise  # no "*** SIGTERM received", no stack of Ray's C++ handler, no Ray warning
    assert "SIGTERM" in (tmp_path / "results" / "mmb-tui.log").read_text()


def test_a_refusal_is_whole_in_the_headless_output(
    ray: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _config(tmp_path, resources={"num_cpus": 64})
    assert main(["--config", str(tmp_path / "config.jsonc"), "run", "r0", "--headless"]) == 1
    out = capsys.readouterr().out
    node = ray.nodes()[0]
    name = f"{node['NodeID'][:6]}@{node['NodeManagerHostname']}"
    refusal = (
        f"executor: no Ray node can hold r0, which asks 64 CPU, 0.25 GB; the largest is {name} with 2 CPU, "
    )
    error_line = next(line for line in out.splitlines() if line.startswith("❌"))
    assert refusal in error_line and error_line.endswith("(lower `resources` or add a larger node)")


async def test_a_runs_player_starts_while_the_run_waits_for_its_room(ray: Any, tmp_path: Path) -> None:
    # issue 36: the player's start (a worker, Ray's import and the engine's) overlaps the reservation
    from ray.util.placement_group import placement_group, remove_placement_group

    players = ray_pool.pool()
    for hosts in list(players.hosts.values()):
        for host in list(hosts):
            players.lost(host)  # no warm player left by an earlier test
    players.hosts.clear()
    taken = placement_group([{"CPU": 2}])  # another driver holds the node's 2 CPUs
    await taken.ready()
    scheduler = Scheduler(_two_runs(tmp_path, cpus=2), tune=fast)
    await scheduler.start("r0")
    try:
        await _until(lambda: bool(players.hosts) and all(players.hosts.values()), "r0's player")
        [(node_id, [host])] = players.hosts.items()
        assert not host.runs and await host.handle.playing.remote() == 0  # up, and no run yet: r0 waits
        assert scheduler.view("r0").placement.stage == "placing"
        remove_placement_group(taken)
        async with asyncio.timeout(scaled(120)):
            assert (await scheduler.wait(["r0"]))["r0"] == TerminationReason.FINISHED
        assert players.hosts[node_id] == [host]  # the run played on the player started for it
    finally:
        remove_placement_group(taken)
        await scheduler.stop("r0")
