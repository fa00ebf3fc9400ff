"""The player's side of a Ray run without Ray (``engine/placement/ray_actor.py``): the agent's pinned install happens on
the node before its run is built, an install that fails is the reason the run cannot start there, and the
scratch folders of actors that died do not pile up on the node."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import fixture_agents
import pytest
from engine_helpers import ROOT

from engine.config import load_config
from engine.placement.ray_actor import RunActor, install_agent, remove_abandoned, take_scratch


def _actor(tmp_path: Path, agent: str) -> RunActor:
    raw = {
        "runs": {
            "r": {"benchmark": str(ROOT / "benchmarks" / "demo"), "agent": agent, "model": "scripted/recall"}
        }
    }
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    return RunActor(load_config(tmp_path / "config.jsonc"), "r", {}, "test", {}, {})


async def test_an_agent_that_cannot_be_installed_on_the_node_is_why_its_run_does_not_start(
    tmp_path: Path,
) -> None:
    fixture_agents.UninstallableAgent.installs = 0
    actor = _actor(tmp_path, "fixture_agents:UninstallableAgent")
    try:
        started = await actor.start()
    finally:
        actor.close()
    assert started.problem == "npm i openclaw@2026.9.6 failed: no network"
    assert fixture_agents.UninstallableAgent.installs == 1 and actor.run is None


async def test_an_agent_that_needs_no_install_starts(tmp_path: Path) -> None:
    actor = _actor(tmp_path, "chatbot")
    try:
        started = await actor.start()
        assert started.problem == "" and actor.run is not None
        await actor.stop()
    finally:
        actor.close()


def test_an_unknown_agent_is_left_to_the_build_to_report() -> None:
    install_agent("no_such_module:NoAgent")  # no exception: build_run names the key


def test_the_scratch_folders_of_actors_that_died_are_removed_when_another_starts_on_the_node(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # this node's temp folder
    living, living_lease = take_scratch("run/1")
    dead, dead_lease = take_scratch("run/1")
    (dead / "results" / "r").mkdir(parents=True)
    (dead / "results" / "r" / "transcript.jsonl").write_text("{}\n")
    dead_lease.close()  # its process died: the lock is gone with it
    unrelated = tmp_path / "mmb-run-not-an-actor"  # no lease: not an actor's, left alone
    unrelated.mkdir()
    assert living.name.startswith("mmb-run-run_1-") and living != dead
    fresh, fresh_lease = take_scratch("other")
    assert not dead.exists()
    assert living.exists() and fresh.exists() and unrelated.exists()
    assert remove_abandoned(tmp_path) == []
    living_lease.close()
    fresh_lease.close()
    assert sorted(remove_abandoned(tmp_path)) == sorted([living, fresh])


def test_an_actor_leaves_no_scratch_folder_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "node"))
    (tmp_path / "node").mkdir()
    actor = _actor(tmp_path, "chatbot")
    assert actor.scratch.parent == tmp_path / "node" and actor.scratch.is_dir()
    actor.close()
    assert list((tmp_path / "node").iterdir()) == []
