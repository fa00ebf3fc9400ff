"""The runs filter (issue 35, item 6): ``/`` in the runs pane, words matched against a run's id, status, agent
or benchmark; ``k of n runs``; Enter keeps it, Esc clears it; actions and ``[ ]`` keep to the runs shown."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import Input, Static
from tui_fakes import Scene, settle

from engine.api import RunView
from engine.commands import Pause
from mmb_tui.app import MmbApp
from mmb_tui.widgets.dashboard import Dashboard
from mmb_tui.widgets.runs_filter import RunsFilter, run_matches
from mmb_tui.widgets.runs_table import RunsTable
from mmb_tui.widgets.transcript_view import TranscriptView


def _more_runs(scene: Scene) -> None:
    """Five more runs: other agents, benchmarks and statuses."""
    for run_id, benchmark, agent, status in [
        ("max-hermes", "max", "hermes", "finished"),
        ("max-openclaw", "max", "openclaw", "crashed"),
        ("days-chatbot", "multiday", "chatbot", "idle"),
        ("M.hermes.demo.r1", "demo", "hermes", "idle"),
        ("M.hermes.demo.r2", "demo", "hermes", "running"),
    ]:
        scene.engine.views[run_id] = RunView(run_id=run_id, benchmark=benchmark, agent=agent, status=status)  # type: ignore[arg-type]


def _rows(app: MmbApp) -> list[str]:
    return app.query_one(RunsTable).run_ids


def _count(app: MmbApp) -> str:
    return str(app.query_one("#runs-filter-count", Static).render())


async def _type_filter(pilot: Any, app: MmbApp, text: str) -> None:
    await pilot.press("slash")
    field = app.query_one("#runs-filter-input", Input)
    assert field.has_focus
    field.value = text
    await settle(pilot)
    app.main.refresh_views()
    await pilot.pause()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("herm", ["hermes-1", "max-hermes", "M.hermes.demo.r1", "M.hermes.demo.r2"]),  # by id or agent
        ("MAX", ["max-hermes", "max-openclaw"]),  # by benchmark, whatever the case
        ("multiday", ["days-chatbot"]),
        ("paused", ["openclaw-1"]),  # by status
        ("idle", ["days-chatbot", "M.hermes.demo.r1"]),
        ("hermes demo", ["hermes-1", "M.hermes.demo.r1", "M.hermes.demo.r2"]),  # every word
        ("hermes running", ["M.hermes.demo.r2"]),
        ("crash openclaw", ["max-openclaw"]),
        ("nobody", []),
    ],
)
async def test_slash_in_the_runs_table_filters_the_runs(scene: Scene, text: str, expected: list[str]) -> None:
    _more_runs(scene)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _type_filter(pilot, app, text)
        assert _rows(app) == expected
        assert _count(app) == f"{len(expected)} of 8 runs"
        assert app.main.selected_run == (expected[0] if expected else None)  # never a run out of sight


async def test_enter_keeps_the_filter_and_esc_clears_it(scene: Scene) -> None:
    _more_runs(scene)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _type_filter(pilot, app, "max")
        await pilot.press("enter")
        table = app.query_one(RunsTable)
        assert table.has_focus and app.query_one(RunsFilter).display
        await pilot.press("down", "p")  # an action goes to the run shown under the cursor
        await settle(pilot)
        assert app.main.selected_run == "max-openclaw"
        await pilot.press("escape")  # in the table: clears it
        await settle(pilot)
        assert len(_rows(app)) == 8 and not app.query_one(RunsFilter).display
        assert app.main.selected_run == "max-openclaw"  # the selection stays where it was
        await _type_filter(pilot, app, "chatbot")
        await pilot.press("escape")  # in the field: clears it too, back to the table
        await settle(pilot)
        assert len(_rows(app)) == 8 and table.has_focus and _count(app) == ""


async def test_actions_and_brackets_keep_to_the_runs_shown(scene: Scene) -> None:
    _more_runs(scene)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _type_filter(pilot, app, "running")
        await pilot.press("enter")
        assert _rows(app) == ["chatbot-1", "M.hermes.demo.r2"]
        await pilot.press("right_square_bracket")
        assert app.main.selected_run == "M.hermes.demo.r2"
        await pilot.press("right_square_bracket")  # round to the first shown, not to hermes-1
        assert app.main.selected_run == "chatbot-1"
        await pilot.press("p")
        await settle(pilot)
        assert scene.engine.commands == [("chatbot-1", Pause())]
        app.main.refresh_views()  # chatbot-1 is paused now: the filter lets it go
        await settle(pilot)
        assert _rows(app) == ["M.hermes.demo.r2"] and app.main.selected_run == "M.hermes.demo.r2"
        column = app.main.column_for("M.hermes.demo.r2")
        assert column is not None and column.display


async def test_nothing_matches_and_an_action_says_no_run_is_selected(scene: Scene) -> None:
    app = scene.app()
    toasts: list[str] = []
    async with app.run_test(size=(80, 24)) as pilot:
        app.main.notify = lambda message, **kw: toasts.append(message)  # type: ignore[method-assign]
        await _type_filter(pilot, app, "zzz")
        await pilot.press("enter", "p")
        await settle(pilot)
        assert scene.engine.commands == [] and toasts[-1] == "No run selected."


async def test_slash_in_a_transcript_still_searches_it(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("tab", "slash", *"lena", "enter")
        await settle(pilot)
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        assert view.search_query == "lena" and not app.query_one(RunsFilter).display


async def test_the_overview_shows_the_filtered_runs(scene: Scene) -> None:
    _more_runs(scene)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await _type_filter(pilot, app, "openclaw")
        await pilot.press("enter")
        dashboard = app.query_one(Dashboard)
        assert dashboard.run_ids == ["openclaw-1", "max-openclaw"] and dashboard.has_focus
        assert _count(app) == "2 of 8 runs"


async def test_the_palette_finds_the_runs_filter(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)):
        titles = [str(command.title) for command in app.get_system_commands(app.main)]
        assert any(title.startswith("Filter runs") for title in titles)


def test_a_filter_matches_every_word_in_some_field() -> None:
    view = RunView(run_id="M.hermes.max.r2", benchmark="max", agent="hermes", status="waiting")
    for text in ("", "  ", "r2", "HERMES", "max wait", "hermes max waiting r2"):
        assert run_matches(view, text), text
    for text in ("chatbot", "max paused", "r3"):
        assert not run_matches(view, text), text


def test_snapshot_of_a_filtered_runs_table_80x24(snap_compare: Any, scene: Scene) -> None:
    _more_runs(scene)
    assert snap_compare(scene.app(), terminal_size=(80, 24), press=["slash", *"hermes", "enter"])
