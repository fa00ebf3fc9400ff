"""What a dialog keeps and forgets (issue 25, point 11): the report browser opens with its list focused (the
arrows work at once, the hidden filter field never takes the keys) and keeps its filter while the app lives;
the fact editor's error goes once the form is right."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input, Static, Tree
from tui_fakes import Scene, settle

from engine.commands import EditFact
from mmb_tui.screens.fact_editor_screen import FactEditorScreen
from mmb_tui.screens.main_screen import MainScreen
from mmb_tui.screens.report_screen import ReportScreen


async def test_the_report_browser_opens_with_its_list_focused(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    focused: list[str | None] = []
    original = Input._on_focus

    def on_focus(self: Input, event: Any) -> None:
        focused.append(self.id)
        original(self, event)

    monkeypatch.setattr(Input, "_on_focus", on_focus)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("tab", "r")  # from a transcript, too
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReportScreen)
        tree = screen.query_one(Tree)
        assert tree.has_focus and focused == []  # the hidden filter field never had the keys
        await pilot.press("down", "down")
        assert tree.cursor_line == 2


async def test_the_report_browser_keeps_its_filter_while_the_app_lives(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("r", "slash", *"run:openclaw", "enter")
        first = app.screen
        assert isinstance(first, ReportScreen) and [e.run_id for e in first.shown] == ["openclaw-1"]
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)
        await pilot.press("r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReportScreen) and screen is not first
        assert [e.run_id for e in screen.shown] == ["openclaw-1"]
        field = screen.query_one("#report-filter", Input)
        assert field.display and field.value == "run:openclaw" and screen.query_one(Tree).has_focus
        assert "1 shown" in str(screen.query_one("#report-header", Static).render())
        await pilot.press("slash")  # an empty filter shows all, and is kept too
        field.value = ""
        await pilot.press("enter", "escape", "r")
        await settle(pilot)
        third = app.screen
        assert isinstance(third, ReportScreen) and len(third.shown) == 2


async def test_the_fact_editors_error_goes_once_the_form_is_right(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e", *"family", "tab", *"2.9", "tab", *"Tom is allergic to nuts", "ctrl+s")
        screen = app.screen
        assert isinstance(screen, FactEditorScreen)
        error = screen.query_one("#fact-error", Static)
        assert "family has no fact 2.9" in str(error.render())
        screen.query_one("#fact-id", Input).value = "2.4"  # the fix
        await pilot.pause()
        assert str(error.render()) == ""  # gone with the fix, before any save
        screen.query_one("#fact-text", Input).value = "Tom is allergic to nuts"
        await pilot.press("ctrl+s")
        assert scene.engine.commands == [
            ("chatbot-1", EditFact(sheet="family", fact_id="2.4", text="Tom is allergic to nuts"))
        ]


async def _editor(pilot: Any, app: Any) -> FactEditorScreen:
    await pilot.press("e")
    screen = app.screen
    assert isinstance(screen, FactEditorScreen)
    return screen


def _error(screen: FactEditorScreen) -> str:
    return str(screen.query_one("#fact-error", Static).render())


@pytest.mark.parametrize(
    ("sheet", "fact_id", "stale", "fix"),
    [
        ("famly", "2.4", "No sheet 'famly'", ("fact-sheet", "family")),
        ("family", "2.9", "family has no fact 2.9", ("fact-id", "2.4")),
        ("family", "x", "The id must be", ("fact-id", "7")),
        ("", "2.4", "Name the sheet", ("fact-sheet", "car")),
    ],
)
async def test_the_fact_editors_error_never_outlives_its_fix_while_another_problem_remains(
    scene: Scene, sheet: str, fact_id: str, stale: str, fix: tuple[str, str]
) -> None:
    """Issue 35, item 5: a fix of the field the error names takes the error away though the form is not right
    yet (the text still empty); what is shown is the problem left, never the one fixed."""
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _editor(pilot, app)
        screen.query_one("#fact-sheet", Input).value = sheet
        screen.query_one("#fact-id", Input).value = fact_id
        screen.query_one("#fact-text", Input).value = ""
        await pilot.press("ctrl+s")
        assert stale in _error(screen)
        field, value = fix
        screen.query_one(f"#{field}", Input).value = value
        await pilot.pause()
        assert stale not in _error(screen)
        left = screen.build_command()  # a fact named now has its text filled in: the form may be right
        # the problem left, as a save would say it, or none
        assert _error(screen) == (left if isinstance(left, str) else "")


async def test_typed_text_is_kept_when_the_id_becomes_a_fact(scene: Scene) -> None:
    """The current text fills an empty field, or one still holding what was filled in; never the operator's."""
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _editor(pilot, app)
        text = screen.query_one("#fact-text", Input)
        fact_id = screen.query_one("#fact-id", Input)
        screen.query_one("#fact-sheet", Input).value = "family"
        fact_id.focus()
        await pilot.press(*"2.", "tab", *"Tom is allergic to tree nuts", "shift+tab", "end", "4")
        assert fact_id.value == "2.4"
        assert text.value == "Tom is allergic to tree nuts"  # typed before the id was whole: kept
        text.value = ""
        fact_id.value = "2.3"
        await pilot.pause()
        assert text.value == "Mia takes piano lessons on Thursdays"  # empty: filled in
        fact_id.value = "2.4"
        await pilot.pause()
        assert text.value == "Tom is allergic to peanuts"  # still what was filled in: follows the id
        await pilot.press("tab", "end", *" (and tree nuts)")
        fact_id.value = "2.3"
        await pilot.pause()
        assert text.value == "Tom is allergic to peanuts (and tree nuts)"  # edited by hand: kept
        assert "Now: Mia takes piano lessons" in str(screen.query_one("#fact-current", Static).render())
