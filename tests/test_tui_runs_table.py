"""The runs table at 80 columns: a long status is cut with an ellipsis in a column of bounded width, never the
columns after it (issue 25, point 6); the glyphs of the TUI's columns have one width everywhere (point 9)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import get_args

import pytest
from rich.cells import cell_len
from tui_fakes import Scene, settle

import mmb_tui
from engine.api import Activity
from engine.events import Event
from mmb_tui import view_format
from mmb_tui.transcript.event_render import TUI_MARKERS, marker
from mmb_tui.widgets.runs_table import STATUS_MIN, RunsTable


def _busy_day(scene: Scene) -> None:
    """Eight runs (the table scrolls), long run ids and statuses, costs."""
    base = scene.engine.views["openclaw-1"]
    for i in range(5):
        run_id = f"multiday-{i}.r12"
        scene.engine.views[run_id] = base.model_copy(
            update={
                "run_id": run_id,
                "status": "paused" if i % 2 else "waiting",
                "reason": "paused by the operator" if i % 2 else "persona model: timed out after 600 s",
                "cost": 12.5,
                "evaluations": 36,
                "average": 3.06,
                "pause_pending": i == 2,
            }
        )


async def test_a_long_status_never_cuts_the_clock_column_at_80_columns(scene: Scene) -> None:
    _busy_day(scene)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(RunsTable)
        await pilot.pause()
        width = table.scrollable_content_region.width
        lines = ["".join(segment.text for segment in table.render_line(y)) for y in range(table.size.height)]
        assert lines[0].rstrip().endswith("Clock")
        for run_id, line in zip(table.run_ids, lines[1:], strict=False):
            view = scene.engine.view(run_id)
            clock = f"{view.clock[8:10]} Aug {view.clock[11:16]}"
            assert line.rstrip().endswith(clock), line
            assert cell_len(line.rstrip()) <= width
        status = str(table.get_cell("multiday-1.r12", "status"))
        assert status.startswith("paused by") and "…" in status  # "paused: paused by …" said once
        assert str(table.get_cell("multiday-2.r12", "status")).rstrip().endswith("⏸")  # the mark is kept
        assert cell_len(status) >= STATUS_MIN


async def test_the_status_column_widens_with_the_room(scene: Scene) -> None:
    _busy_day(scene)
    app = scene.app()
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(pilot)
        table = app.query_one(RunsTable)
        assert str(table.get_cell("multiday-0.r12", "status")).rstrip().endswith("timed out after 600 s")


async def test_a_status_changing_length_moves_no_column(scene: Scene) -> None:
    """A running run's status changes length every second (``running`` → a wait and its age → a reason): the
    columns keep their widths, so the table is not laid out again for it."""
    app = scene.app()
    async with app.run_test(size=(120, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(RunsTable)
        widths = [column.get_render_width(table) for column in table.ordered_columns]
        view = scene.engine.views["chatbot-1"]
        for status, reason in (
            ("waiting", "persona model: timed out after 600 s"),
            ("paused", ""),
            ("running", ""),
        ):
            scene.engine.views["chatbot-1"] = view.model_copy(update={"status": status, "reason": reason})
            app.main.refresh_views()
            await pilot.pause()
            assert status in str(table.get_cell("chatbot-1", "status"))
            assert [column.get_render_width(table) for column in table.ordered_columns] == widths


async def test_an_automatic_back_off_counts_down_in_the_status(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``retrying in 30 s`` is not only in the transcript (issue 25, point 6): the row counts down to the next
    attempt and says why, not "⚠ waiting" as for a run that waits for the operator."""
    now = [1_800_000_000.0]
    monkeypatch.setattr(view_format, "wall_clock", lambda: now[0])
    backing_off = Activity(waiting_for="back-off", since=now[0], ends_at=now[0] + 30)
    view = scene.engine.views["hermes-1"]
    scene.engine.views["hermes-1"] = view.model_copy(
        update={"status": "waiting", "reason": "persona model: HTTP 429: rate limit", "activity": backing_off}
    )
    app = scene.app()
    async with app.run_test(size=(120, 24)) as pilot:
        await settle(pilot)
        table = app.query_one(RunsTable)
        status = str(table.get_cell("hermes-1", "status"))
        assert status.startswith("⏳ retrying in 30s: persona model: HTTP 429") and "⚠" not in status
        now[0] += 25
        app.main.refresh_views()
        await pilot.pause()
        assert str(table.get_cell("hermes-1", "status")).startswith("⏳ retrying in 5s: ")
        now[0] += 6
        app.main.refresh_views()
        await pilot.pause()
        assert str(table.get_cell("hermes-1", "status")).startswith("⏳ retrying now: ")


# ---- glyphs of a width every terminal agrees on (issue 25, point 9) ---------------------------------------

_AMBIGUOUS = ("\ufe0f", "\u200d")  # a variation selector, a zero-width joiner: tmux and Textual disagree


def _string_constants(path: Path) -> list[str]:
    """Every string constant of a module but its docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_no_glyph_the_tui_shows_has_a_variation_selector_or_a_joiner() -> None:
    shown = set(TUI_MARKERS.values())
    modules = sorted(Path(mmb_tui.__file__).parent.rglob("*.py"))
    for path in modules:
        if path.name != "headless.py":  # a stream of lines, no columns
            shown.update(_string_constants(path))
    bad = sorted(text for text in shown if any(char in text for char in _AMBIGUOUS))
    assert not bad, bad


def test_every_marker_is_two_cells_wide() -> None:
    kinds = [event_type.model_fields["kind"].default for event_type in get_args(get_args(Event)[0])]
    assert {kind: cell_len(marker(kind)) for kind in kinds} == dict.fromkeys(kinds, 2)
