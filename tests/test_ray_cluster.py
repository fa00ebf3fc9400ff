"""Runs on a real two-node Ray cluster on this machine (``ray.cluster_utils.Cluster``: a head of 2 CPUs, and a
node of 1 CPU whose environment alone has a model key): a matrix spreads over both nodes by default and packs onto
one with ``executor.placement: "pack"``, each node's runs played by one player process; a run placed on the node
without its key is refused there, naming the node and the key, and plays to its end on the node that has it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from engine_helpers import ROOT, fast, scaled

from engine.config import Config, load_config
from engine.event_summary import summary
from engine.events import ErrorOccurred, Event, TerminationReason
from engine.placement.scheduler import Scheduler
from engine.state import load_state

KEY = "MMB_TEST_CLUSTER_KEY"  # set in the environment of the small node only (and the driver's)


@pytest.fixture(scope="module")
def cluster() -> Iterator[SimpleNamespace]:
    """A head node of 2 CPUs without ``KEY`` and a node of 1 CPU with it, joined by this process."""
    ray = pytest.importorskip("ray")
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    assert KEY not in os.environ
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    small = cluster.add_node(num_cpus=1, env_vars={KEY: "on the small node only"})
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    names = {}
    for node in ray.nodes():
        names[int(node["Resources"]["CPU"])] = f"{node['NodeID'][:6]}@{node['NodeManagerHostname']}"
    try:
        yield SimpleNamespace(ray=ray, head=names[2], small=names[1], cluster=cluster, small_node=small)
    finally:
        ray.shutdown()
        cluster.shutdown()


def _config(
    folder: Path, runs: int, placement: str = "spread", latency: float = 0.02, **models: Any
) -> Config:
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo", dirs_exist_ok=True)
    raw = {
        "models": {"persona": {"model": "scripted/persona", "latency": latency}, **models},
        "persona": {"model": "persona"},
        "executor": {"kind": "ray", "placement": placement},
        "runs": {
            f"r{i}": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}
            for i in range(runs)
        },
    }
    (folder / "config.jsonc").write_text(json.dumps(raw))
    return load_config(folder / "config.jsonc")


class _Seen:
    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.nodes: dict[str, str] = {}
        self.players: dict[str, Any] = {}
        self.errors: list[ErrorOccurred] = []
        self.counts: Counter[str] = Counter()

    def on_event(self, run_id: str, event: Event) -> None:
        self.counts[run_id] += 1
        placed: Any = self.scheduler.slots[run_id].placed
        if placed is not None and placed.node and placed.placement.stage == "playing":
            self.nodes[run_id] = placed.node
            self.players[run_id] = placed.actor
        if isinstance(event, ErrorOccurred):
            self.errors.append(event)


async def _play(config: Config) -> tuple[dict[str, Any], _Seen]:
    scheduler = Scheduler(config, tune=fast)
    seen = _Seen(scheduler)
    scheduler.add_observer(seen)
    for run_id in config.runs:
        await scheduler.start(run_id)
    async with asyncio.timeout(scaled(120)):
        return await scheduler.wait(), seen


@pytest.mark.parametrize(("placement", "spread"), [("spread", True), ("pack", False)])
async def test_a_matrix_spreads_over_the_nodes_by_default_or_packs_onto_one(
    cluster: SimpleNamespace, tmp_path: Path, placement: str, spread: bool
) -> None:
    config = _config(tmp_path, runs=4, placement=placement)
    ended, seen = await _play(config)
    assert ended == {f"r{i}": TerminationReason.FINISHED for i in range(4)}
    per_node = Counter(seen.nodes.values())
    if spread:  # every node at once, by their CPUs: the 2-CPU head takes more
        assert per_node[cluster.head] >= per_node[cluster.small] >= 1, per_node
    else:
        assert len(per_node) == 1, per_node
    players = {run_id: cluster.ray.get(player.where.remote())[1] for run_id, player in seen.players.items()}
    assert len(set(players.values())) == len(per_node)  # one player process per node plays its runs
    for run_id in config.runs:
        state = load_state(config.results_path() / run_id / "state.json")
        assert state is not None and state.finished and len(state.evaluations) == 6


async def test_a_node_without_a_model_key_is_named_and_the_run_plays_on_the_node_that_has_it(
    cluster: SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY, "the driver has every key too")
    keyed = {"model": "scripted/persona", "latency": 0.02, "api_key_env": KEY}
    config = _config(tmp_path, runs=1, keyed=keyed)
    config.runs["r0"].persona = "keyed"
    ended, seen = await _play(config)  # spread tries the 2-CPU head first: it lacks the key

    assert ended == {"r0": TerminationReason.FINISHED}
    assert seen.nodes["r0"] == cluster.small
    lines = [error.message for error in seen.errors]
    assert lines == [
        f"node {cluster.head}: {KEY} (model 'keyed', the persona) is not set in the node's environment: "
        "set it where `ray start` runs"
    ]
    assert summary(seen.errors[0]).endswith(lines[0])  # whole in the ❌ line
    state = load_state(config.results_path() / "r0" / "state.json")
    assert state is not None and state.finished and len(state.evaluations) == 6


async def test_a_lost_node_costs_each_of_its_runs_one_restart_on_the_other_and_no_other_run_any(
    cluster: SimpleNamespace, tmp_path: Path
) -> None:
    """Last in the module: the small node is gone after it."""
    config = _config(tmp_path, runs=4, latency=0.05)
    scheduler = Scheduler(config, tune=fast)
    seen = _Seen(scheduler)
    scheduler.add_observer(seen)
    for run_id in config.runs:
        await scheduler.start(run_id)
    async with asyncio.timeout(scaled(60)):
        while len(seen.nodes) < 4 or min(seen.counts[r] for r in config.runs) < 10:
            await asyncio.sleep(0.05)
    there = sorted(run_id for run_id, node in seen.nodes.items() if node == cluster.small)
    assert there and len(there) < 4  # spread: some on each node
    cluster.cluster.remove_node(cluster.small_node, allow_graceful=False)
    async with asyncio.timeout(scaled(180)):
        ended = await scheduler.wait()

    assert ended == {run_id: TerminationReason.FINISHED for run_id in config.runs}
    restarts = {run_id: scheduler.slots[run_id].placed.restarts for run_id in config.runs}  # type: ignore[union-attr]
    assert restarts == {run_id: int(run_id in there) for run_id in config.runs}
    assert all(seen.nodes[run_id] == cluster.head for run_id in config.runs)  # moved, and played to the end
    said = [e.message for e in seen.errors]
    assert len(said) == len(there) and all(m.startswith("restart 1/3 in 2s: its Ray actor on ") for m in said)
    assert all(cluster.small in m and summary(e).endswith(m) for e, m in zip(seen.errors, said, strict=True))
    for run_id in config.runs:
        state = load_state(config.results_path() / run_id / "state.json")
        assert state is not None and state.finished and len(state.evaluations) == 6
