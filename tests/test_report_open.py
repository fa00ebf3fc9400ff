"""``o`` from the report browser opens the entry's own run at exactly its answer (issue 25, point 5): with two
runs whose entries both hold imperfect answers, under a busy loop (a rebuild of the runs table and a refresh
as the browser closes: before the selection became a run id, that sent the operator to another run's tail, or
to the right run's tail with no cursor at the grade), and never another run's tail for a run the app does not
show."""

from __future__ import annotations

from typing import Any

import pytest
from test_report_screen import cursor_on, entry, open_reports, toasts, write_report
from textual.screen import Screen
from tui_fakes import Scene, settle

from engine.events import MessageSent
from mmb_tui.app import MmbApp
from mmb_tui.screens.main_screen import MainScreen
from mmb_tui.screens.report_screen import ReportScreen
from mmb_tui.widgets.transcript_view import TranscriptView

ROW_0 = "chatbot-1"  # the row a rebuild of the runs table highlights


@pytest.fixture
def busy(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every dialog closing is followed at once by a rebuild of the runs table (a run's cost appears or goes)
    and a refresh, as on a loaded machine with runs playing."""
    original_dismiss = Screen.dismiss

    def dismiss(self: Screen[Any], result: Any = None) -> Any:
        done = original_dismiss(self, result)
        view = scene.engine.views[ROW_0]
        scene.engine.views[ROW_0] = view.model_copy(update={"cost": None if view.cost is not None else 0.25})
        app = self.app
        assert isinstance(app, MmbApp)
        app.main.refresh_views()
        return done

    monkeypatch.setattr(Screen, "dismiss", dismiss)


async def test_o_opens_the_entrys_own_run_at_its_answer_under_a_busy_loop(scene: Scene, busy: None) -> None:
    for i in range(3):  # both runs play on: their tails are not their answers
        for run_id in ("hermes-1", "openclaw-1"):
            scene.engine.emit(run_id, MessageSent(text=f"later {i}"))
    write_report(
        scene,
        entry("2026-08-19 10:00", "hermes-1", 6, [("3.2", 5, "[AGG]", 12)]),
        entry("2026-08-19 10:10", "openclaw-1", 6, [("3.1", 5, "[RECALL]", 11), ("3.2", 5, "[AGG]", 12)]),
    )
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        for run_id, check_id, number in [
            ("hermes-1", "3.2", 12),
            ("openclaw-1", "3.1", 11),
            ("hermes-1", "3.2", 12),
            ("openclaw-1", "3.2", 12),
        ]:
            screen = await open_reports(app, pilot)
            await cursor_on(pilot, screen, run_id, check_id)
            await pilot.press("o")
            for _ in range(10):  # the loop runs a while before anything is looked at
                await pilot.pause(0.01)
            await settle(pilot)
            assert isinstance(app.screen, MainScreen) and app.main.selected_run == run_id, toasts(app)
            column = app.main.column_for(run_id)
            assert column is not None and column.run_id == run_id
            view = column.query_one(TranscriptView)
            event = view.cursor_event
            assert event is not None and (event.kind, event.n) == ("evaluation_logged", number)
            assert event.check_id == check_id and view.has_focus  # type: ignore[union-attr]


async def test_o_on_a_run_the_app_does_not_show_says_so_and_stays(scene: Scene) -> None:
    # ``max`` played from another config into the same results folder: its transcript is there
    (scene.results / "max").mkdir()
    (scene.results / "max" / "transcript.jsonl").write_bytes(
        (scene.results / "hermes-1" / "transcript.jsonl").read_bytes()
    )
    write_report(
        scene,
        entry("2026-08-19 10:00", "hermes-1", 6, [("3.2", 5, "[AGG]", 12)]),
        entry("2026-08-19 10:10", "max", 6, [("3.2", 5, "[AGG]", 12)]),
    )
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down")  # hermes-1
        await settle(pilot)
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "max", "3.2")
        await pilot.press("o")
        await settle(pilot)
        assert isinstance(app.screen, ReportScreen)  # not hermes-1's tail behind a toast
        assert "max is not a run of this app's config" in toasts(app)[-1]
        assert app.main.selected_run == "hermes-1"
