"""The report browser after the operator's day III (issue 35, item 5): the lower pane follows a new filter, and
an entry of a run restarted since never opens the new play's transcript at the old entry's event number."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from test_report_screen import cursor_on, entry, labels, open_reports, toasts, write_report
from textual.widgets import Input, Static
from tui_fakes import Scene, settle

from engine.state import RunState, atomic_write, checkpoint_json
from mmb_tui.app import MmbApp
from mmb_tui.screens.main_screen import MainScreen
from mmb_tui.screens.report_screen import ReportScreen


def detail(screen: ReportScreen) -> str:
    return str(screen.query_one("#report-detail-text", Static).render())


async def apply_filter(pilot: object, screen: ReportScreen, text: str) -> None:
    await pilot.press("slash")  # type: ignore[attr-defined]
    screen.query_one("#report-filter", Input).value = text
    await pilot.press("enter")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]


THREE = (
    entry("2026-08-19 10:00", "chatbot-1", 9, [("3.1", 5, "[RECALL]", 11)], types="RECALL 9.00 (4)"),
    entry("2026-08-19 10:10", "hermes-1", 6, [("3.1", 0, "[RECALL]", 11), ("3.2", 5, "[AGG] [NEG]", 12)]),
    entry("2026-08-19 10:20", "openclaw-1", 4, [("3.2", 2.5, "[AGG]", 12)], types="AGG 2.50 (1)"),
)


@pytest.mark.parametrize(
    ("wanted", "first"),
    [
        ("run:chatbot", "chatbot-1"),
        ("score:5-10", "hermes-1"),
        ("type:RECALL", "hermes-1"),
        ("", "openclaw-1"),
    ],
)
async def test_a_new_filter_shows_its_first_entry_in_the_lower_pane(
    scene: Scene, wanted: str, first: str
) -> None:
    write_report(scene, *THREE)
    app = scene.app()
    async with app.run_test(size=(120, 34)) as pilot:
        screen = await open_reports(app, pilot)
        await cursor_on(pilot, screen, "openclaw-1", "3.2")  # an answer in the lower pane
        assert detail(screen).startswith("openclaw-1 · check 3.2")
        await apply_filter(pilot, screen, "run:nobody")
        assert "openclaw-1" not in detail(screen) and "No entry matches run nobody" in detail(screen)
        await apply_filter(pilot, screen, wanted)
        assert screen.shown[0].run_id == first
        assert f"— {first}: demo @ chatbot\n" in detail(screen)  # its first entry, not what was there before


def write_state(results: Path, run_id: str, entry_ids: list[str]) -> None:
    """``run_id``'s state as the play on disk saved it, with the ids of the report entries it wrote."""
    state = RunState(
        run_id=run_id,
        benchmark="demo",
        agent="chatbot",
        start_date=date(2026, 8, 19),
        report_entries=entry_ids,
    )
    atomic_write(results / run_id / "state.json", checkpoint_json(state))


async def open_answer(app: MmbApp, pilot: object, run_id: str, check_id: str) -> ReportScreen:
    screen = await open_reports(app, pilot)  # type: ignore[arg-type]
    await cursor_on(pilot, screen, run_id, check_id)  # type: ignore[arg-type]
    await pilot.press("o")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    return screen


@pytest.mark.parametrize("new_play", [[], ["ffff0000ffff"], ["ffff0000ffff", "eeee1111eeee"]])
async def test_an_entry_of_a_play_restarted_since_is_not_opened_in_the_new_play(
    scene: Scene, new_play: list[str]
) -> None:
    """hermes-1 was restarted after its entry: its transcript is the new play's, whose event #12 is an evaluation
    of 3.2 as well (a scripted run plays the same). The state names the entries its play wrote: not this one."""
    write_report(
        scene, entry("2026-08-19 10:10", "hermes-1", 6, [("3.2", 5, "[AGG]", 12)], entry_id="aaaa1111bbbb")
    )
    write_state(scene.results, "hermes-1", new_play)
    app = scene.app()
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await open_answer(app, pilot, "hermes-1", "3.2")
        assert app.screen is screen  # stays: nothing opened
        assert "hermes-1 was restarted since this entry" in toasts(app)[-1], toasts(app)
        assert "transcript gone" in labels(screen)[0]
        assert "restarted since this entry" in detail(screen)


async def test_an_entry_of_the_play_on_disk_and_its_regrade_open_at_their_event(scene: Scene) -> None:
    ours = entry("2026-08-19 10:10", "hermes-1", 6, [("3.2", 5, "[AGG]", 12)], entry_id="aaaa1111bbbb")
    write_report(scene, ours)
    write_state(scene.results, "hermes-1", ["9999aaaa9999", "aaaa1111bbbb"])
    app = scene.app()
    async with app.run_test(size=(140, 30)) as pilot:
        await open_answer(app, pilot, "hermes-1", "3.2")
        assert isinstance(app.screen, MainScreen) and app.main.selected_run == "hermes-1"
        column = app.main.column_for("hermes-1")
        assert column is not None and column.transcript.cursor_event is not None
        assert column.transcript.cursor_event.n == 12


async def test_a_regrade_belongs_to_the_play_of_the_entry_before_it(scene: Scene) -> None:
    old = entry("2026-08-19 10:10", "hermes-1", 6, [("3.1", 0, "[RECALL]", 11)], entry_id="aaaa1111bbbb")
    regrade = entry("2026-08-19 10:30", "hermes-1", 5, [("3.2", 5, "[AGG]", 12)], entry_id="cccc2222dddd")
    regrade = regrade.replace(
        "hermes-1: demo @ chatbot",
        "hermes-1: demo @ chatbot · regrade by judge-x of the entry of 2026-08-19 10:10",
    )
    write_report(scene, old, regrade)
    write_state(scene.results, "hermes-1", ["ffff0000ffff"])  # restarted since both
    app = scene.app()
    async with app.run_test(size=(140, 30)) as pilot:
        screen = await open_answer(app, pilot, "hermes-1", "3.2")
        assert app.screen is screen and "restarted since this entry" in toasts(app)[-1]


async def test_without_a_state_the_event_itself_is_checked_as_before(scene: Scene) -> None:
    write_report(
        scene, entry("2026-08-19 10:10", "hermes-1", 6, [("3.2", 5, "[AGG]", 12)], entry_id="aaaa1111bbbb")
    )
    app = scene.app()
    async with app.run_test(size=(140, 30)) as pilot:
        await open_answer(app, pilot, "hermes-1", "3.2")  # no state.json (played elsewhere, or none yet)
        assert isinstance(app.screen, MainScreen) and app.main.selected_run == "hermes-1"
