"""Placement's reading of a Ray cluster, without Ray (``engine/placement/nodes.py``, ``crash_cause.py``,
``preflight.py``): nodes named uniquely, a run no node can hold refused naming the largest, a replacement actor
spread over the nodes or packed, steered away from the node its predecessor died on, Ray's text of a death cut to the worker's own error, and what
a node must have before a run is built there."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from engine.config import load_config
from engine.event_summary import SHORT, summary
from engine.events import ErrorOccurred
from engine.placement.crash_cause import crash_cause, never_started, strip_ansi
from engine.placement.nodes import GB, Node, candidates, choose_node, node_name, refusal, short_name
from engine.placement.preflight import Build, needed_keys, preflight, this_build
from engine.placement.ray_connect import route_ray_output

HEAD = Node("aa11" + "0" * 52, "vm", cpus=2, memory=8 * GB)
SMALL = Node("bb22" + "0" * 52, "vm", cpus=1, memory=2 * GB)
BIG = Node("cc33" + "0" * 52, "box", cpus=4, memory=16 * GB)
DEAD = Node("dd44" + "0" * 52, "box", cpus=8, memory=32 * GB, alive=False)
ASK = {"num_cpus": 1.0, "memory": 1.75 * GB}

# Ray's text of an actor whose class failed to import on its node (a dependency missing there), as it came
TEMPORARY_ACTOR = (
    "The actor died because of an error raised in its creation task, \x1b[36mray::RunActor.__init__()\x1b[39m "
    "(pid=9466, ip=192.0.2.2, actor_id=e886, repr=<engine.placement.ray_actor.FunctionActorManager."
    "_create_fake_actor_class.<locals>.TemporaryActor object at 0x7fa65aac9890>)\n"
    '  File "/usr/lib/python3.11/concurrent/futures/_base.py", line 456, in result\n'
    "    return self.__get_result()\n           ^^^^^^^^^^^^^^^^^^^\n"
    "RuntimeError: The actor with name RunActor failed to import on the worker. This may be because needed "
    "library dependencies are not installed in the worker environment:\n\n"
    "\x1b[36mray::RunActor.__init__()\x1b[39m (pid=9466, ip=192.0.2.2)\n"
    "                  ^^^^^^^^^^^^^^^^^^^^^^^^^^^\n"
    "ModuleNotFoundError: No module named 'json5'"
)


def test_a_node_is_named_by_its_short_id_and_its_host() -> None:
    assert HEAD.name == "aa1100@vm" and SMALL.name == "bb2200@vm"  # one host, two names
    assert node_name("ee55ff00", "") == "ee55ff"


def test_a_run_no_alive_node_can_hold_is_refused_naming_what_it_asks_and_the_largest_node() -> None:
    assert refusal("r0", ASK, [HEAD, SMALL]) == ""
    why = refusal("r0", {"num_cpus": 4.0, "memory": 1.75 * GB}, [HEAD, SMALL, DEAD])
    assert why.startswith("executor: no Ray node can hold r0, which asks 4 CPU, 1.75 GB")
    assert "the largest is aa1100@vm with 2 CPU, 8 GB" in why  # the dead one is not counted
    assert "no node of the Ray cluster is alive" in refusal("r0", ASK, [DEAD])


@pytest.mark.parametrize("host", ["vm", "gpu-node-17.cluster.example.org", "h" * 63])
@pytest.mark.parametrize("run_id", ["r0", "study.openclaw-2026.max.r10", "a-long-run-id-" * 8])
def test_a_refusal_is_short_enough_to_be_shown_whole(host: str, run_id: str) -> None:
    node = Node("ab12" + "0" * 52, host, cpus=1, memory=1.2 * GB)
    why = refusal(run_id, {"num_cpus": 4.0, "memory": 900 * GB}, [node])
    assert run_id in why and node.label() in why and "\n" not in why
    event = ErrorOccurred(message=why, where="engine", fatal=True)
    assert summary(event).endswith(why) == (len(why) <= SHORT)  # the ❌ line cuts only what is over SHORT
    if len(run_id) + len(host) <= 60:  # a node name and a run id of usual lengths: whole
        assert len(why) <= SHORT


def test_a_node_is_shown_in_a_table_by_its_shortest_unique_name() -> None:
    twin = Node("aa1177" + "0" * 50, "vm", cpus=2, memory=8 * GB)  # shares the first 4 hex digits with HEAD
    nodes = [HEAD, SMALL, BIG, twin]
    assert short_name(BIG.node_id, nodes) == "box"  # the only node on its host
    assert short_name(SMALL.node_id, nodes) == "bb22@vm"
    assert short_name(HEAD.node_id, nodes) == "aa110@vm" and short_name(twin.node_id, nodes) == "aa117@vm"
    assert short_name(HEAD.node_id, [HEAD]) == "vm"
    assert short_name("ee55ff00", nodes) == "ee55ff"  # a node gone from the list: its short id


def test_runs_spread_over_the_nodes_by_their_cpus_or_pack_onto_the_fullest() -> None:
    fit = candidates([HEAD, SMALL, BIG, DEAD], ASK)
    assert [n.node_id for n in fit] == [HEAD.node_id, SMALL.node_id, BIG.node_id]  # alive, big enough
    placed: dict[str, int] = {}
    order = []
    for _ in range(7):  # a matrix placed one run after the other
        chosen = choose_node(fit, placed)
        placed[chosen] = placed.get(chosen, 0) + 1
        order.append(chosen)
    assert order[:3] == [BIG.node_id, HEAD.node_id, SMALL.node_id]  # every node at once, the largest first
    assert placed == {BIG.node_id: 4, HEAD.node_id: 2, SMALL.node_id: 1}  # then by CPUs
    packed: dict[str, int] = {}
    for _ in range(3):
        chosen = choose_node(fit, packed, "pack")
        packed[chosen] = packed.get(chosen, 0) + 1
    assert packed == {BIG.node_id: 3}  # the largest, then the fullest


def test_a_replacement_goes_to_another_fit_node_than_the_one_its_player_died_on() -> None:
    fit = candidates([HEAD, SMALL, BIG, DEAD], ASK)
    assert choose_node(fit, {}, "spread", avoid=BIG.node_id) == HEAD.node_id
    assert choose_node(fit, {HEAD.node_id: 5}, "spread", avoid=BIG.node_id) == SMALL.node_id
    assert choose_node(fit, {}, "pack", avoid=BIG.node_id) == HEAD.node_id
    assert (
        choose_node([HEAD], {}, "spread", avoid=HEAD.node_id) == HEAD.node_id
    )  # only it: maybe only the player died
    assert choose_node(candidates([HEAD, SMALL], {"num_cpus": 2.0}), {}, avoid=HEAD.node_id) == HEAD.node_id
    assert choose_node([], {}) == ""
    lacking = candidates([HEAD, SMALL, BIG], ASK, unfit={BIG.node_id, HEAD.node_id})
    assert [n.node_id for n in lacking] == [SMALL.node_id]  # nodes found to lack a key are left out


def test_a_death_is_told_by_the_workers_own_error_in_one_clean_line() -> None:
    cause = crash_cause(TEMPORARY_ACTOR)
    assert cause == "ModuleNotFoundError: No module named 'json5' (missing in the node's Python environment)"
    assert never_started(TEMPORARY_ACTOR)
    killed = "The actor is dead because it was killed by `ray.kill`.\n\tclass_name: RunActor"
    assert crash_cause(killed) == "The actor is dead because it was killed by `ray.kill`."
    assert not never_started(killed)
    assert crash_cause("\x1b[33m(raylet)\x1b[0m node lost\n") == "(raylet) node lost"
    assert strip_ansi("\x1b[1m\x1b[36mray::x\x1b[39m\x1b[22m") == "ray::x"


def _config(tmp_path: Path, persona: str = "persona") -> Path:
    raw = {
        "models": {
            "persona": {"model": "scripted/persona"},
            "keyed": {
                "model": "m",
                "base_url": "http://127.0.0.1:9/v1",
                "api_key_env": "MMB_TEST_PERSONA_KEY",
            },
            "judge": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "MMB_TEST_JUDGE_KEY"},
            "agent": {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "MMB_TEST_AGENT_KEY"},
        },
        "persona": {"model": persona},
        "judge": {"model": "judge"},
        "runs": {"r": {"benchmark": "demo", "agent": "chatbot", "model": "agent"}},
    }
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    return tmp_path / "config.jsonc"


def test_the_keys_a_run_needs_are_those_of_every_model_it_names(tmp_path: Path) -> None:
    config = load_config(_config(tmp_path, persona="keyed"))
    assert needed_keys(config, "r") == {
        "MMB_TEST_PERSONA_KEY": "model 'keyed', the persona",
        "MMB_TEST_JUDGE_KEY": "model 'judge', the judge",
        "MMB_TEST_AGENT_KEY": "model 'agent', the agent's model",
    }


def test_a_node_lacking_the_heads_project_the_benchmark_or_a_key_says_each_in_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = load_config(_config(tmp_path))
    monkeypatch.setenv("MMB_TEST_JUDGE_KEY", "k")
    monkeypatch.delenv("MMB_TEST_AGENT_KEY", raising=False)
    bench = tmp_path / "benchmarks" / "demo"
    head = Build(this_build().version, "000000000000")
    problems = [lack.line for lack in preflight(config, "r", head, bench)]
    assert [lack.what for lack in preflight(config, "r", head, bench)] == [
        "the head's project",
        f"the benchmark {bench}",
        "MMB_TEST_AGENT_KEY",
    ]
    assert problems == [
        f"runs {this_build().label()}, the head {head.label()}: install the same on every node",
        f"the benchmark {bench} is not on the node (an absolute path must exist on every node)",
        "MMB_TEST_AGENT_KEY (model 'agent', the agent's model) is not set in the node's environment: "
        "set it where `ray start` runs",
    ]
    bench.mkdir(parents=True)
    monkeypatch.setenv("MMB_TEST_AGENT_KEY", "k")
    assert preflight(config, "r", this_build(), bench) == []


def test_rays_own_lines_go_to_the_log_without_their_colours(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    ray = pytest.importorskip("ray")
    route_ray_output(ray)  # as joining the cluster does
    line = {"lines": ["\x1b[33mA worker died or was killed while executing a task\x1b[0m"], "pid": "raylet"}
    with caplog.at_level(logging.WARNING, logger="ray"):
        ray._private.worker.print_to_stdstream({**line, "is_err": False}, ignore_prefix=False)
    assert capsys.readouterr() == ("", "")
    assert caplog.messages == ["(raylet) A worker died or was killed while executing a task"]
