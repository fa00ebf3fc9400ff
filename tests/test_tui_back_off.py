"""``p`` and ``P`` on a run counting down to its retry (issue 35, item 5): the back-off is paused, never
"resumed" (refused: the run is not paused) while the retry goes ahead; a second ``p`` resumes it. Against the
real scheduler with a scripted persona whose first call fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from engine_helpers import FORGETFUL, events, fast, kinds, make_config
from tui_fakes import Scene, settle, wait_until

from engine.api import Activity
from engine.commands import Pause, Resume
from engine.placement.scheduler import Scheduler
from engine.run.parts import RunSettings
from mmb_tui.app import make_app
from mmb_tui.screens.bulk_actions import pausable, resumable


def slow_back_off(settings: RunSettings) -> None:
    fast(settings)
    settings.fault_backoff = 100.0  # "retrying in 100 s": only the operator ends it in a test


@pytest.mark.parametrize("faults", ["1:500", "1:429"])
async def test_p_on_a_back_off_pauses_it_and_a_second_p_resumes(tmp_path: Path, faults: str) -> None:
    persona = f"scripted/persona?faults={faults}"
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": persona}})
    scheduler = Scheduler(config, tune=slow_back_off)
    app = make_app(scheduler, tmp_path / "config.jsonc", clock_frozen=True, watch=False)
    toasts: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.notify = lambda message, **kw: toasts.append(f"{kw.get('title', '')}: {message}")  # type: ignore[method-assign]
        await pilot.press("s")
        await wait_until(pilot, lambda: scheduler.view("r").activity.waiting_for == "back-off")
        assert scheduler.view("r").status == "waiting"
        app.main.refresh_views()
        await pilot.press("p")
        await wait_until(pilot, lambda: scheduler.view("r").status == "paused")
        await settle(pilot)
        assert not any("refused" in toast for toast in toasts), toasts
        assert len(kinds(events(config, "r"), "error")) == 1  # no retry behind the pause
        operator = [(e.action, e.cut) for e in kinds(events(config, "r"), "operator")]
        assert operator == [("pause", "back-off")]
        app.main.refresh_views()
        await pilot.press("p")  # the second press resumes it: the retry is made now
        await wait_until(pilot, lambda: scheduler.view("r").evaluations >= 1)
        assert [e.action for e in kinds(events(config, "r"), "operator")] == ["pause", "resume"]
        await scheduler.stop_all()


async def test_P_pauses_a_back_off_with_the_running_runs_and_never_resumes_it(scene: Scene) -> None:
    view = scene.engine.views["hermes-1"]
    backing_off = Activity(waiting_for="back-off", since=1.0, ends_at=101.0)
    scene.engine.views["hermes-1"] = view.model_copy(update={"activity": backing_off})
    views = [scene.engine.view(run_id) for run_id in scene.engine.run_ids()]
    assert pausable(views) == ["chatbot-1", "hermes-1"]  # it plays: counting down to its next attempt
    assert resumable(views) == ["openclaw-1"]
    scene.engine.views["chatbot-1"] = scene.engine.views["chatbot-1"].model_copy(update={"status": "paused"})
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("P")
        await settle(pilot)
        assert scene.engine.commands == [("hermes-1", Pause())]  # none runs but it: it is paused, not resumed


async def test_p_on_a_run_waiting_for_the_operator_still_resumes_it(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "p")  # hermes-1 waits for the operator: no back-off under way
        await settle(pilot)
        assert scene.engine.commands == [("hermes-1", Resume())]
