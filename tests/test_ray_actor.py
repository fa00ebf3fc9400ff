"""The player's side of a Ray run without Ray (``engine/ray_actor.py``): the agent's pinned install happens on
the node before its run is built, and an install that fails is the reason the run cannot start there."""

from __future__ import annotations

import json
from pathlib import Path

import fixture_agents
from engine_helpers import ROOT

from engine.config import load_config
from engine.ray_actor import RunActor, install_agent


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
