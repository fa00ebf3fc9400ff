"""The selected run is a run id the screen owns: a rebuild of the runs table, a refresh or a dialog closing
never moves it; only the operator's own cursor moves and clicks do (issue 25, point 1).

A rebuild of the table (the first priced usage of a run arriving, a reload) highlights its row 0; before the fix
that highlight and the cursor's move back to the selected row chased each other for ever, so the key after a
dialog hit whichever run the chase had reached. ``busy`` forces such a rebuild and a refresh right after every
dialog closes, and lets the loop run before the next key, as on a loaded machine."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from rich.text import Text
from textual.pilot import Pilot
from textual.screen import Screen
from tui_fakes import Scene, settle

from engine.commands import EditFact, NewSession, NextPhase, PersonaNote, Resume
from mmb_tui.app import MmbApp
from mmb_tui.screens.confirm_screen import ConfirmScreen
from mmb_tui.screens.note_screen import NoteScreen
from mmb_tui.screens.runs_screen import RunsScreen
from mmb_tui.widgets.runs_table import RunsTable

ROW_0 = "chatbot-1"  # the row a rebuild highlights
CHOSEN = "openclaw-1"  # the run the operator selected: the third row


@pytest.fixture
def busy(scene: Scene, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every dialog closing is followed at once by a rebuild of the runs table (a run's cost appears or goes)
    and a refresh; returns every run the screen selected, in order."""
    selected: list[str] = []
    original_dismiss = Screen.dismiss
    original_watch = RunsScreen.watch_selected_run

    def dismiss(self: Screen[Any], result: Any = None) -> Any:
        done = original_dismiss(self, result)
        view = scene.engine.views[ROW_0]
        cost = None if view.cost is not None else 0.25
        scene.engine.views[ROW_0] = view.model_copy(update={"cost": cost})
        app = self.app
        assert isinstance(app, MmbApp)
        app.main.refresh_views()
        return done

    def watch_selected_run(self: RunsScreen) -> None:
        selected.append(str(self.selected_run))
        original_watch(self)

    monkeypatch.setattr(Screen, "dismiss", dismiss)
    monkeypatch.setattr(RunsScreen, "watch_selected_run", watch_selected_run)
    return selected


async def _choose(pilot: Pilot[None], selected: list[str]) -> None:
    await pilot.press("down", "down")
    await settle(pilot)
    app = pilot.app
    assert isinstance(app, MmbApp) and app.main.selected_run == CHOSEN
    selected.clear()


async def _busy_loop(pilot: Pilot[None]) -> None:
    """Let the loop run a while between the dialog closing and the next key (a loaded machine's pause)."""
    for _ in range(10):
        await pilot.pause(0.01)


def _asks_to_restart(app: MmbApp) -> bool:
    screen = app.screen
    return isinstance(screen, ConfirmScreen) and f"Restart {CHOSEN} from scratch?" in plain(screen.question)


def plain(markup: str) -> str:
    return Text.from_markup(markup).plain


def _note_for_chosen(app: MmbApp) -> bool:
    return isinstance(app.screen, NoteScreen) and app.screen.run_id == CHOSEN


DIALOGS: dict[str, tuple[list[str], list[str]]] = {
    # name: (the keys that open and close the dialog, the next key)
    "gate override y": (["n", "y"], ["m"]),
    "fact editor esc": (["e", "escape"], ["m"]),
    "fact editor ctrl+s": (
        ["e", *"family", "tab", *"2.4", "tab", *"Tom is allergic to nuts", "ctrl+s"],
        ["R"],
    ),
    "new session y": (["N", "y"], ["R"]),
    "note enter": (["m", *"ask 3.3 again", "enter"], ["p"]),
    "help esc": (["question_mark", "escape"], ["p"]),
}


@pytest.mark.parametrize("dialog", list(DIALOGS))
async def test_closing_a_dialog_leaves_the_selection_where_it_was(
    scene: Scene, busy: list[str], dialog: str
) -> None:
    view = scene.engine.views[CHOSEN]
    scene.engine.views[CHOSEN] = view.model_copy(update={"gates": ["untold facts of family: 2.3, 2.4"]})
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _choose(pilot, busy)
        keys, next_key = DIALOGS[dialog]
        await pilot.press(*keys)
        await _busy_loop(pilot)
        await pilot.press(*next_key)
        await settle(pilot)
        assert set(busy) <= {CHOSEN}, f"the selection moved: {busy[:6]}"
        table = app.query_one(RunsTable)
        assert table.run_ids[table.cursor_row] == CHOSEN
        sent = {run_id for run_id, _ in scene.engine.commands}
        assert sent <= {CHOSEN}
        checks: dict[str, Callable[[MmbApp], bool]] = {
            "m": _note_for_chosen,
            "R": _asks_to_restart,
            "p": lambda _: scene.engine.commands[-1] == (CHOSEN, Resume()),
        }
        assert checks[next_key[0]](app), (dialog, app.screen, scene.engine.commands)
        expected = {
            "gate override y": NextPhase(force=True),
            "fact editor ctrl+s": EditFact(sheet="family", fact_id="2.4", text="Tom is allergic to nuts"),
            "new session y": NewSession(),
            "note enter": PersonaNote(text="ask 3.3 again"),
        }.get(dialog)
        if expected is not None:
            assert (CHOSEN, expected) in scene.engine.commands


async def test_a_rebuild_that_moves_the_row_keeps_the_run_and_puts_the_cursor_on_it(
    scene: Scene, busy: list[str]
) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down")  # hermes-1, row 1
        await settle(pilot)
        busy.clear()
        # a reload puts a new run first: hermes-1 is now row 2
        scene.engine.views = {
            "new-1": scene.engine.views["chatbot-1"].model_copy(update={"run_id": "new-1"})
        } | (scene.engine.views)
        app.main.refresh_views()
        await _busy_loop(pilot)
        table = app.query_one(RunsTable)
        assert busy == [] and app.main.selected_run == "hermes-1"
        assert table.run_ids[table.cursor_row] == "hermes-1" == table.run_ids[2]
        await pilot.press("down")  # the operator's own move selects
        await settle(pilot)
        assert app.main.selected_run == "openclaw-1"


async def test_a_click_on_a_row_selects_its_run(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.click(RunsTable, offset=(2, 3))  # the header, then rows 0, 1, 2
        await settle(pilot)
        assert app.main.selected_run == "openclaw-1"


@pytest.mark.parametrize(
    ("key", "question"),
    [
        ("R", f"Restart {CHOSEN} from scratch?"),
        ("N", f"Switch the agent of {CHOSEN} to a new session?"),
        ("n", f"Override the gates of {CHOSEN} and move on?"),
    ],
)
async def test_a_destructive_confirm_names_the_run(scene: Scene, key: str, question: str) -> None:
    view = scene.engine.views[CHOSEN]
    scene.engine.views[CHOSEN] = view.model_copy(update={"gates": ["untold facts of family: 2.3, 2.4"]})
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "down", key)
        screen = app.screen
        assert isinstance(screen, ConfirmScreen) and question in plain(screen.question)
