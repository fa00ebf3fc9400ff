"""The phase pane's clock and the runs table of a fresh app over runs played before (issue 25, points 10 and
11): a finished multi-day run is never said to play in real time, and its last event has an age."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

from engine_helpers import FORGETFUL, make_config, play, scaled
from textual.widgets import Static
from tui_fakes import Scene, settle

from engine.benchmark.named import load_run_benchmark
from engine.placement.scheduler import Scheduler
from engine.run.parts import RunSettings
from engine.state import load_state
from mmb_tui.app import make_app
from mmb_tui.widgets.phase_pane import PhasePane
from mmb_tui.widgets.runs_table import RunsTable
from mmb_tui.widgets.virtual_clock import VirtualClock


def quick(settings: RunSettings) -> None:
    settings.time_master_min_sleep = 5
    settings.time_master_pre_wake = 0.05
    settings.time_master_poll = 0.01
    settings.agent_quiet_seconds = 0.05
    settings.agent_poll_seconds = 0.001
    settings.fault_backoff = 0.01


async def test_a_finished_multiday_run_loaded_by_a_fresh_app(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"d": {"benchmark": "days", "agent": "chatbot"}})
    run = await play(config, "d", tune=quick)
    assert run.state.finished and run.state.clock_jumps
    scheduler = Scheduler(config, tune=quick)
    stored = scheduler.view("d")  # read from state.json: it does not say virtual time, nor the last event
    assert stored.status == "finished" and not stored.virtual_time and stored.last_event_at is None
    app = make_app(scheduler, tmp_path / "config.jsonc", clock_frozen=True, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("v")
        await settle(pilot)
        clock = app.query_one(VirtualClock)
        line = str(clock.query_one("#clock-line", Static).render())
        assert re.match(r"\d\d:\d\d  \w+day \d\d March 2026$", line), line  # no "(real time)"
        assert clock.has_class("-compact")
        last = str(app.query_one(RunsTable).get_cell("d", "last"))
        assert re.fullmatch(r"\d+[smhd]", last), last


async def test_the_clock_is_compact_only_when_the_pane_is_short(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 48)) as pilot:
        await pilot.press("v")
        await settle(pilot)
        assert not app.query_one(VirtualClock).has_class("-compact")
        assert app.query_one(PhasePane).size.height >= 30


async def test_a_finished_run_shows_its_last_phases_checks_graded_in_a_fresh_app(tmp_path: Path) -> None:
    """A run the app did not play shows its phase's checks read from its state (issue 35, item 5), never
    "Checks (0/0 graded)"; one stopped midway shows the checks of the phase it stopped in, as they were."""
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = await play(config, "r", tune=quick)
    assert run.state.finished
    scheduler = Scheduler(config, tune=quick)
    stored = scheduler.view("r")
    assert [c.check.id for c in stored.checks] == ["2.1", "2.2", "2.3", "2.4"]
    assert all(c.graded for c in stored.checks)
    assert [c.score for c in stored.checks] == [
        run.state.evaluations[c.check.id].effective for c in stored.checks
    ]
    app = make_app(scheduler, tmp_path / "config.jsonc", clock_frozen=True, watch=False)
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("v")
        await settle(pilot)
        checks = str(app.query_one("#phase-checks", Static).render())
        assert checks.startswith("Checks (4/4 graded)"), checks
        assert "2.3 [VOID] What is Rex's microchip number?" in checks


async def test_a_stopped_run_shows_the_checks_of_the_phase_it_stopped_in(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    scheduler = Scheduler(config, tune=quick)
    await scheduler.start("r")
    try:
        async with asyncio.timeout(scaled(20)):  # stopped once a check of its phase is graded
            while not any(c.graded for c in scheduler.view("r").checks):
                await asyncio.sleep(0.005)
    finally:
        await scheduler.stop_all()
    state = load_state(config.results_path() / "r" / "state.json")
    assert state is not None and not state.finished
    phase = load_run_benchmark(config, "r").phases[state.phase_index]
    stopped = Scheduler(config, tune=quick).view("r")
    assert stopped.status == "idle"
    assert [(c.check.id, c.graded) for c in stopped.checks] == [
        (c.id, c.id in state.evaluations) for c in phase.checks
    ]
    assert any(c.graded for c in stopped.checks)
