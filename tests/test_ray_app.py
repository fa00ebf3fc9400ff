"""The app plays runs on Ray: it joins a real local Ray instance itself, under Textual (whose capture of
stdout and stderr once made every run an error: ``file.fileno() is not a valid file descriptor``), and plays,
pauses, steers and shows a run there to its report entry."""

from __future__ import annotations

import faulthandler
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ROOT, fast
from tui_fakes import settle, wait_until

from engine.config import load_config
from engine.placement.scheduler import Scheduler
from engine.transcript import read_events
from mmb_tui.app import make_app
from mmb_tui.screens.confirm_screen import ConfirmScreen
from mmb_tui.view_format import PLACED_MARK
from mmb_tui.widgets.runs_table import RunsTable


@pytest.fixture
def no_ray_yet() -> Iterator[Any]:
    """No Ray in this process until the app joins it, and ``faulthandler`` off as outside pytest (which turns
    it on; Ray's join turns it on by itself, on ``sys.stderr``)."""
    ray = pytest.importorskip("ray")
    if ray.is_initialized():
        ray.shutdown()
    was_on = faulthandler.is_enabled()
    faulthandler.disable()
    try:
        yield ray
    finally:
        ray.shutdown()
        if was_on and not faulthandler.is_enabled():
            faulthandler.enable()


def _config(tmp_path: Path) -> Path:
    raw = {
        "models": {"slow-persona": {"model": "scripted/persona", "latency": 0.2}},
        "persona": {"model": "slow-persona"},
        "executor": {"kind": "ray", "address": "local"},  # a new local instance, whatever else runs here
        "runs": {"r0": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(tmp_path / "results"),
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(raw), encoding="utf-8")
    return path


def _playing(scheduler: Scheduler, transcript: Path) -> bool:
    """The run has played a few events on its actor, or could not start."""
    if scheduler.view("r0").status == "error":
        return True
    return transcript.exists() and len(list(read_events(transcript))) > 3


async def test_the_app_plays_pauses_and_steers_a_run_on_a_ray_instance_it_joined(
    no_ray_yet: Any, tmp_path: Path
) -> None:
    config_path = _config(tmp_path)
    scheduler = Scheduler(load_config(config_path), tune=fast, front_end="tui")
    transcript = tmp_path / "results" / "r0" / "transcript.jsonl"
    app = make_app(scheduler, config_path, clock_frozen=True, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("s")
        await wait_until(pilot, lambda: _playing(scheduler, transcript), timeout=60)
        assert scheduler.view("r0").status != "error", scheduler.view("r0").reason
        assert no_ray_yet.is_initialized() and scheduler.running("r0")
        await pilot.press("p")  # pause, on the actor
        await wait_until(pilot, lambda: scheduler.view("r0").status == "paused", timeout=30)
        await pilot.press("m", *"Tell the garden facts first.", "enter")  # a note to the persona
        await wait_until(
            pilot,
            lambda: any(e.kind == "operator" and e.action == "persona_note" for e in read_events(transcript)),
            timeout=30,
        )
        app.main.refresh_views()
        await settle(pilot)
        node = scheduler.view("r0").node
        assert "@" in node  # the node's id, shortened, with its host
        assert str(app.query_one(RunsTable).get_cell("r0", "status")).startswith(PLACED_MARK)
        await pilot.press("p")  # resume
        await wait_until(pilot, lambda: not scheduler.running("r0"), timeout=120)
        assert scheduler.view("r0").status == "finished", scheduler.view("r0").reason
        await pilot.press("q")
        if isinstance(app.screen, ConfirmScreen):
            await pilot.press("y")
    report = (tmp_path / "results" / "report.md").read_text(encoding="utf-8")
    assert report.count("\n## ") == 0 and "r0: demo @ chatbot" in report and "Check coverage: 6/6" in report
