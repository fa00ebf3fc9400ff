"""Runs placed on a Ray cluster (``engine/placement/ray_executor.py``) end as the same runs played locally: the same
evaluations, report entries and files; an actor killed mid-run is replaced and its run ends the same, with no
event twice; the head's files resume locally; Ray stays out of a local engine. One local Ray instance serves
the whole module."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ROOT, fast
from textual.widgets import Static
from tui_fakes import Scene, settle

from engine.commands import Pause, Resume
from engine.config import Config, ConfigError, ResourcesConfig, load_config, parse_config
from engine.events import Event, TerminationReason
from engine.placement.executor import DEFAULT_RESOURCES, GB, resources_for
from engine.placement.scheduler import Scheduler
from engine.state import load_state
from engine.transcript import read_events
from mmb_tui.front_ends.cli import main
from mmb_tui.view_format import PLACED_MARK
from mmb_tui.widgets.run_column import RunColumn
from mmb_tui.widgets.runs_table import RunsTable


@pytest.fixture(scope="module")
def ray() -> Iterator[Any]:
    """One local Ray instance for the module's tests (Ray is in the dev extra)."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


def _config(
    folder: Path, runs: int = 1, kind: str = "local", latency: float = 0.0, **executor: Any
) -> Config:
    """The demo benchmark against the chatbot on the scripted recall, ``runs`` times; ``latency`` slows the
    persona so that a run is still playing while a test acts on it."""
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo", dirs_exist_ok=True)
    raw = {
        "models": {"persona": {"model": "scripted/persona", "latency": latency}},
        "persona": {"model": "persona"},
        "executor": {"kind": kind, **executor},
        "runs": {
            f"r{i}": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}
            for i in range(runs)
        },
    }
    (folder / "config.jsonc").write_text(json.dumps(raw))
    return load_config(folder / "config.jsonc")


async def _play(config: Config, observer: Any = None) -> dict[str, TerminationReason | str]:
    scheduler = Scheduler(config, tune=fast)
    if observer is not None:
        scheduler.add_observer(observer)
    for run_id in config.runs:
        await scheduler.start(run_id)
    return await scheduler.wait()


def _evaluations(config: Config, run_id: str) -> list[tuple[str, float, int, str]]:
    state = load_state(config.results_path() / run_id / "state.json")
    assert state is not None
    return sorted((e.check_id, e.score, e.attempt, e.answer) for e in state.evaluations.values())


def _entries(config: Config, keep_positions: bool = True) -> dict[str, list[str]]:
    """Each run's report entries, without what differs from one playing to the next: the date, the wall-clock
    run time, the entry's id, the operator's interventions (a test pauses one of the two), the input a prefix
    cache served (a replaced player's scripted persona starts with an empty cache) and, after a resume,
    transcript positions."""
    entries: dict[str, list[str]] = {}
    for chunk in (config.results_path() / "report.md").read_text().split("\n## "):
        lines = chunk.removeprefix("## ").strip().splitlines()
        run_id = lines[0].split(" — ")[1].split(":")[0]
        kept = [
            re.sub(r" \(\d+ cached\)", "", line)
            for line in lines[1:]
            if not line.startswith(("📊 Run time", "📊 Entry:", "📊 Operator:"))
        ]
        if not keep_positions:
            kept = [re.sub(r" \[transcript #\d+\]", "", line) for line in kept]
        entries.setdefault(run_id, []).append("\n".join([lines[0].split(" — ")[1], *kept]))
    return entries


def _without_time(events: list[Event]) -> list[dict[str, Any]]:
    return [event.model_dump(exclude={"t"}) for event in events]


class _Events:
    def __init__(self) -> None:
        self.events: list[tuple[str, Event]] = []

    def on_event(self, run_id: str, event: Event) -> None:
        self.events.append((run_id, event))

    def count(self, run_id: str) -> int:
        return sum(1 for r, _ in self.events if r == run_id)


async def _until(condition: Any, timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def test_ten_runs_on_ray_end_as_the_same_runs_played_locally(ray: Any, tmp_path: Path) -> None:
    local = _config(tmp_path / "local", runs=10)
    placed = _config(tmp_path / "ray", runs=10, kind="ray")
    assert await _play(local) == {f"r{i}": TerminationReason.FINISHED for i in range(10)}
    seen = _Events()
    assert await _play(placed, seen) == {f"r{i}": TerminationReason.FINISHED for i in range(10)}

    assert _entries(placed) == _entries(local)
    for run_id in local.runs:
        assert _evaluations(placed, run_id) == _evaluations(local, run_id)
        here, there = local.results_path() / run_id, placed.results_path() / run_id
        ray_events = list(read_events(there / "transcript.jsonl"))
        assert _without_time(ray_events) == _without_time(list(read_events(here / "transcript.jsonl")))
        assert (there / "agent" / "chatbot.jsonl").read_bytes() == (
            here / "agent" / "chatbot.jsonl"
        ).read_bytes()
        assert sorted(p.name for p in there.iterdir()) == sorted(p.name for p in here.iterdir())
        assert [e for r, e in seen.events if r == run_id] == ray_events  # the observers had each event, once


async def _start(config: Config) -> tuple[Scheduler, _Events]:
    """A scheduler over ``config`` that has started ``r0``, and the events its observers see."""
    scheduler = Scheduler(config, tune=fast)
    seen = _Events()
    scheduler.add_observer(seen)
    await scheduler.start("r0")
    return scheduler, seen


async def test_a_killed_actor_is_replaced_and_its_run_ends_the_same_without_an_event_twice(
    ray: Any,
    tmp_path: Path,
) -> None:
    local = _config(tmp_path / "local", latency=0.03)  # the same config but for where it plays
    await _play(local)
    config = _config(tmp_path / "ray", kind="ray", latency=0.03)
    scheduler, seen = await _start(config)
    await _until(lambda: seen.count("r0") >= 10)
    assert (await scheduler.command("r0", Pause())).ok  # operator commands reach the actor
    await _until(lambda: scheduler.view("r0").status == "paused")
    assert scheduler.view("r0").node  # the node it plays on
    assert (await scheduler.command("r0", Resume())).ok
    await _until(lambda: seen.count("r0") >= 40)
    placed = scheduler.slots["r0"].placed
    assert placed is not None
    ray.kill(placed.actor)

    assert await scheduler.wait() == {"r0": TerminationReason.FINISHED}
    assert placed.restarts == 1
    restarts = [e for _, e in seen.events if e.kind == "error" and e.message.startswith("restart ")]
    assert len(restarts) == 1 and restarts[0].message.startswith("restart 1/3 in 2s: its Ray actor on ")
    assert _evaluations(config, "r0") == _evaluations(local, "r0")
    assert _entries(config, keep_positions=False) == _entries(local, keep_positions=False)
    events = list(read_events(config.results_path() / "r0" / "transcript.jsonl"))
    assert [e.n for e in events] == list(range(len(events)))  # none written twice, none lost
    local_events = list(read_events(local.results_path() / "r0" / "transcript.jsonl"))
    for kind in ("message_sent", "agent_replied", "evaluation_logged", "phase_started"):
        assert len([e for e in events if e.kind == kind]) == len([e for e in local_events if e.kind == kind])


async def test_with_no_restarts_left_the_run_ends_crashed_with_why(ray: Any, tmp_path: Path) -> None:
    config = _config(tmp_path, kind="ray", latency=0.03, max_restarts=0)
    scheduler, seen = await _start(config)
    await _until(lambda: seen.count("r0") >= 20)
    ray.kill(scheduler.slots["r0"].placed.actor)

    assert await scheduler.wait() == {"r0": TerminationReason.CRASHED}
    view = scheduler.view("r0")
    assert view.status == "crashed" and "died" in view.reason and "no restarts left" in view.reason
    state = load_state(config.results_path() / "r0" / "state.json")
    assert state is not None and state.status == "crashed" and state.reason == view.reason
    report = (config.results_path() / "report.md").read_text()
    assert report.count("\n## ") == 0 and "r0: demo @ chatbot" in report and "crashed" in report
    events = list(read_events(config.results_path() / "r0" / "transcript.jsonl"))
    assert [e.n for e in events] == list(range(len(events)))
    assert events[-1].kind == "run_ended" and events[-1].reason == TerminationReason.CRASHED


async def test_a_run_stopped_on_ray_resumes_locally_to_the_same_end(ray: Any, tmp_path: Path) -> None:
    local = _config(tmp_path / "local", latency=0.03)  # the same config but for where it plays
    await _play(local)
    config = _config(tmp_path / "ray", kind="ray", latency=0.03)
    scheduler, seen = await _start(config)
    await _until(lambda: seen.count("r0") >= 30)
    await scheduler.stop("r0")
    assert await scheduler.wait() == {"r0": TerminationReason.STOPPED}
    assert not (config.results_path() / "report.md").exists()  # a stop is a pause: no entry

    resumed = _config(tmp_path / "ray", latency=0.03)  # the same folder, the local executor
    assert await _play(resumed) == {"r0": TerminationReason.FINISHED}
    assert _evaluations(resumed, "r0") == _evaluations(local, "r0")
    assert _entries(resumed, keep_positions=False)["r0"] == _entries(local, keep_positions=False)["r0"]


def test_the_command_line_plays_a_run_on_ray_offline(
    ray: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, kind="ray")
    assert main(["--config", str(tmp_path / "config.jsonc"), "run", "r0", "--headless"]) == 0
    out = capsys.readouterr().out
    assert "progress: phase 5/5" in out and "\x1b" not in out and "(raylet)" not in out
    node = ray.nodes()[0]
    assert out.count(f"── plays on Ray node {node['NodeID'][:6]}@{node['NodeManagerHostname']}\n") == 1
    assert "Check coverage: 6/6" in (config.results_path() / "report.md").read_text()


def test_a_matrix_plays_on_ray_from_the_command_line_with_its_summary_entries(
    ray: Any, tmp_path: Path
) -> None:
    shutil.copytree(ROOT / "benchmarks" / "demo", tmp_path / "benchmarks" / "demo")
    agents = [
        "chatbot",
        {"name": "short", "agent": "chatbot", "model": "scripted/recall", "max_reply_chars": 200},
    ]
    raw = {
        "executor": {"kind": "ray"},  # no address: the local instance (started by this module's fixture)
        "matrices": {"study": {"agents": agents, "benchmarks": ["demo"], "repeats": 2}},
    }
    (tmp_path / "config.jsonc").write_text(json.dumps(raw))
    assert main(["--config", str(tmp_path / "config.jsonc"), "run", "--matrix", "study", "--headless"]) == 0
    config = load_config(tmp_path / "config.jsonc")
    runs = config.groups["study"].runs
    assert len(runs) == 4 and all(load_state(config.results_path() / r / "state.json") for r in runs)
    for run_id in runs:
        state = load_state(config.results_path() / run_id / "state.json")
        assert state is not None and state.finished and len(state.evaluations) == 6
    report = (config.results_path() / "report.md").read_text()
    assert report.count("Summary of 2 runs:") == 2  # one per agent x benchmark cell


def test_resources_come_from_the_run_then_the_executor_then_the_agent(tmp_path: Path) -> None:
    config = _config(tmp_path, runs=2, kind="ray", resources={"num_cpus": 0.5})
    config.runs["r1"].resources = ResourcesConfig.model_validate({"memory": "1.5 GB"})
    assert resources_for(config, "r0") == {"num_cpus": 0.5, "memory": DEFAULT_RESOURCES["memory"]}
    assert resources_for(config, "r1") == {"num_cpus": 0.5, "memory": 1.5 * GB}
    config.runs["r0"].agent = "openclaw"
    assert resources_for(config, "r0")["memory"] == 1.75 * GB
    config.runs["r0"].agent = "letta"  # every agent the project ships has its own default
    assert resources_for(config, "r0")["memory"] == 0.55 * GB
    assert ResourcesConfig.model_validate({"memory": "300 mb"}).memory == 300 * 1024 * 1024
    assert ResourcesConfig.model_validate({"memory": 1000}).memory == 1000


@pytest.mark.parametrize(
    ("raw", "where"),
    [
        ('{"executor": {"kind": "slurm"}}', "executor.kind"),
        ('{"executor": {"max_restarts": -1}}', "executor.max_restarts"),
        (
            '{"runs": {"r": {"benchmark": "demo", "agent": "chatbot", "resources": {"memory": "lots"}}}}',
            "runs.r.resources.memory",
        ),
    ],
)
def test_executor_keys_are_checked_with_their_path(raw: str, where: str) -> None:
    with pytest.raises(ConfigError, match=f"config.jsonc: {re.escape(where)}: "):
        parse_config(raw, "config.jsonc")


def test_a_local_engine_never_imports_ray(tmp_path: Path) -> None:
    _config(tmp_path)
    probe = (
        "import asyncio, sys\n"
        "from engine.config import load_config\n"
        "from engine.placement.scheduler import Scheduler\n"
        f"config = load_config({str(tmp_path / 'config.jsonc')!r})\n"
        "async def play():\n"
        "    scheduler = Scheduler(config)\n"
        "    await scheduler.start('r0')\n"
        "    return await scheduler.wait()\n"
        "print(asyncio.run(play())['r0'], 'ray' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120, check=True
    )
    assert result.stdout.split() == ["finished", "False"]


async def test_the_runs_table_and_the_transcript_header_show_the_node(scene: Scene) -> None:
    run_id = next(iter(scene.engine.views))
    scene.engine.views[run_id] = scene.engine.views[run_id].model_copy(update={"node": "10.0.0.7"})
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        column = app.query_one("#column-0", RunColumn)
        assert column.run_id == run_id
        header = str(column.query_one(".run-column-header", Static).render())
        assert f"{PLACED_MARK} " in header and "on 10.0.0.7" in header
        table = app.query_one(RunsTable)
        assert str(table.get_cell(run_id, "status")).startswith(PLACED_MARK)
        others = [r for r in scene.engine.views if r != run_id]
        assert all(PLACED_MARK not in str(table.get_cell(r, "status")) for r in others)
