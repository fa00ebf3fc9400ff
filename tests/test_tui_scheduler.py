"""The TUI over the real Scheduler with scripted models: operator actions reach a live run."""

from __future__ import annotations

import json
from pathlib import Path

from engine_helpers import fast
from tui_fakes import settle, wait_until

from engine.clock import ManualClock
from engine.config import load_config
from engine.placement.scheduler import Scheduler
from engine.placement.selection import select_runs
from engine.transcript import read_events
from mmb_tui.app import make_app
from mmb_tui.screens.confirm_screen import ConfirmScreen
from mmb_tui.screens.quit_screen import QuitScreen
from mmb_tui.widgets.runs_table import RunsTable
from mmb_tui.widgets.transcript_view import TranscriptView

ROOT = Path(__file__).resolve().parent.parent


def _config(tmp_path: Path) -> Path:
    raw = {
        # a little latency per persona call, so the operator can act while the run is in flight
        "models": {"slow-persona": {"model": "scripted/persona", "latency": 0.1}},
        "persona": {"model": "slow-persona"},
        "runs": {"demo-1": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
        "benchmarks_dir": str(ROOT / "benchmarks"),
        "results_dir": str(tmp_path / "results"),
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(raw, indent=2), encoding="utf-8")
    return path


def _operator_actions(path: Path) -> list[str]:
    return [e.action for e in read_events(path) if e.kind == "operator"]


async def test_operator_actions_drive_a_real_run(tmp_path: Path) -> None:
    config_path = _config(tmp_path)
    scheduler = Scheduler(load_config(config_path), clock_factory=ManualClock, tune=fast)
    transcript = tmp_path / "results" / "demo-1" / "transcript.jsonl"
    app = make_app(scheduler, config_path, clock_frozen=True, watch=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("s")
        await wait_until(pilot, lambda: scheduler.slots["demo-1"].task is not None)
        assert scheduler.running("demo-1")
        await pilot.press("p")  # pause before the persona's next turn
        await wait_until(pilot, lambda: scheduler.view("demo-1").status == "paused")

        await pilot.press("m", *"Tell the garden facts first.", "enter")
        await pilot.press("e", *"profile", "tab", *"1.2", "tab", *"Works as a nurse in York", "enter")
        await pilot.press("e", *"garden", "tab", *"1", "tab", *"Shares the plot with Nia", "ctrl+s")
        await pilot.press("N", "y")
        await pilot.press("n")
        if isinstance(app.screen, ConfirmScreen):  # the demo's first phase is gated on the garden sheet
            await pilot.press("y")
        expected = ["pause", "persona_note", "edit_fact", "add_fact", "new_session", "next_phase"]
        await wait_until(pilot, lambda: _operator_actions(transcript)[: len(expected)] == expected)

        await pilot.press("p")  # resume
        await wait_until(pilot, lambda: "resume" in _operator_actions(transcript))
        await settle(pilot)
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        assert [e.action for e in view.events if e.kind == "operator"][:7] == [*expected, "resume"]
        app.main.refresh_views()
        assert app.query_one(RunsTable).run_ids == ["demo-1"]

        await pilot.press("q")
        if isinstance(app.screen, ConfirmScreen):
            await pilot.press("y")
        await wait_until(pilot, lambda: not scheduler.running("demo-1"))
    assert not app.is_running
    assert (tmp_path / "results" / "demo-1" / "state.json").exists()


async def test_quitting_mid_run_then_the_next_app_resumes_it(tmp_path: Path) -> None:
    config_path = _config(tmp_path)
    transcript = tmp_path / "results" / "demo-1" / "transcript.jsonl"
    scheduler = Scheduler(load_config(config_path), tune=fast)
    app = make_app(scheduler, config_path, clock_frozen=True, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        await wait_until(
            pilot,
            lambda: scheduler.view("demo-1").evaluations == 0 and scheduler.view("demo-1").phase_index >= 1,
        )
        await pilot.press("q")
        assert isinstance(app.screen, QuitScreen)  # runs in flight: it asks first
        await pilot.press("y")
        await wait_until(pilot, lambda: not scheduler.running("demo-1"))
    stopped_at = json.loads((tmp_path / "results" / "demo-1" / "state.json").read_text())
    assert not stopped_at["finished"] and stopped_at["phases_started"] >= 2

    scheduler = Scheduler(load_config(config_path), tune=fast)
    app = make_app(scheduler, config_path, clock_frozen=True, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("s")
        await wait_until(pilot, lambda: scheduler.view("demo-1").status == "finished", timeout=60)
    started = [e for e in read_events(transcript) if e.kind == "run_started"]
    assert [e.resumed for e in started] == [False, True]
    assert "Check coverage: 6/6" in (tmp_path / "results" / "report.md").read_text()


async def test_a_reload_keeps_the_repeats_the_command_line_asked_for(tmp_path: Path) -> None:
    config_path = _config(tmp_path)
    config, run_ids = select_runs(config_path, ["demo-1"], repeats=3)
    assert run_ids == ["demo-1.r1", "demo-1.r2", "demo-1.r3"]
    scheduler = Scheduler(config, tune=fast)
    app = make_app(scheduler, config_path, clock_frozen=True, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        assert await app.reload_config()  # as after an edit of config.jsonc
        await settle(pilot)
        assert scheduler.run_ids() == run_ids
        assert app.query_one(RunsTable).run_ids == run_ids
