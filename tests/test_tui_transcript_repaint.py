"""The transcript's cheap repaints (``mmb_tui/widgets/tail_scroll_view.py``) paint what a full repaint paints.

After each append the screen as painted is compared with the screen once the view and its scrollbar are
repainted from scratch. How fast an append is, is measured by ``bench/tui_transcript.py``, not here.
"""

from __future__ import annotations

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from tui_fakes import Scene

from engine.events import AgentReplied, Event, MessageSent, PersonaThinking, ToolCalled
from mmb_tui.widgets.transcript_view import TranscriptView


def _event(i: int) -> Event:
    t = f"2026-08-{19 + i // 25:02d}T{10 + i % 12:02d}:00:00"  # a new day every 25 events: date lines
    kinds: list[Event] = [
        MessageSent(text=f"message {i}\nits second line", t=t),
        AgentReplied(text=f"reply {i}: " + "noted " * 30, t=t),
        ToolCalled(name="facts_mark_told", arguments={"ids": [f"{i}.1"]}, result="ok", t=t),
        PersonaThinking(text=f"thinking {i}", t=t),
    ]
    return kinds[i % len(kinds)]


async def _painted_as_from_scratch(pilot: Pilot[None], view: TranscriptView) -> bool:
    painted = pilot.app.export_screenshot()
    view.refresh()
    if view.show_vertical_scrollbar:
        view.vertical_scrollbar.refresh()
    await pilot.pause()
    return painted == pilot.app.export_screenshot()


def _scrollbar_in_step(view: TranscriptView) -> bool:
    bar = view.vertical_scrollbar
    return (
        bar.position == bar.validate_position(view.scroll_y)
        and bar.window_virtual_size == view.virtual_size.height
    )


async def test_appends_to_a_followed_tail_paint_what_a_full_repaint_paints(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        view.max_entries = 40  # the window is trimmed along the way
        view.clear()
        await pilot.pause()
        for i in range(70):
            scene.engine.emit("chatbot-1", _event(i))
            view.flush()
            await pilot.pause()
            assert await _painted_as_from_scratch(pilot, view), f"after event {i}"
        assert view.following and view.scroll_y == view.max_scroll_y
        assert view.show_vertical_scrollbar and _scrollbar_in_step(view)
        view.filter_mode = "messages"
        await pilot.pause()
        for i in range(70, 80):  # half of them hidden by the filter
            scene.engine.emit("chatbot-1", _event(i))
            view.flush()
            await pilot.pause()
            assert await _painted_as_from_scratch(pilot, view), f"after event {i}, filtered"


async def test_appends_below_a_reader_keep_the_view_still_and_paint_what_a_full_repaint_paints(
    scene: Scene,
) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        for i in range(40):
            scene.engine.emit("chatbot-1", _event(i))
        view.flush()
        view.focus()
        await pilot.press("up", "up", "up")
        reading, top = view.cursor_event, view.scroll_y
        for i in range(40, 60):
            scene.engine.emit("chatbot-1", _event(i))
            view.flush()
            await pilot.pause()
            assert await _painted_as_from_scratch(pilot, view), f"after event {i}"
        assert (view.cursor_event, view.scroll_y, view.following) == (reading, top, False)
        assert _scrollbar_in_step(view)


async def test_an_append_to_a_long_transcript_asks_for_no_layout(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        for i in range(61):  # the scrollbar appears, then an append takes its width into account
            scene.engine.emit("chatbot-1", _event(i))
            if i in (59, 60):
                view.flush()
                await pilot.pause()
        layouts: list[bool] = []
        refresh = view.refresh

        def counted(
            *regions: Region, repaint: bool = True, layout: bool = False, recompose: bool = False
        ) -> TranscriptView:
            layouts.append(layout)
            return refresh(*regions, repaint=repaint, layout=layout, recompose=recompose)

        monkeypatch.setattr(view, "refresh", counted)
        for i in range(61, 80):
            last = scene.engine.emit("chatbot-1", _event(i))
            view.flush()
            await pilot.pause()
            assert view.events[-1] is last and view.following
        assert layouts and not any(layouts)  # repainted each time, never laid out
