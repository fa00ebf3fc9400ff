"""The operator's screens (issue 12): the dashboard, pages and zoom, search and event numbers in a transcript,
the command palette, start / pause / resume all, the help's legend, dates in the transcript, nothing cut at 80
columns, and the small things (stale transcripts, a stopped clock, logging once, no terminal)."""

from __future__ import annotations

import io
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Footer, Static
from textual.widgets._footer import FooterKey
from tui_fakes import Scene, settle, write_config

from engine.api import RunView
from engine.benchmark.model import Fact
from engine.commands import NextPhase, Pause, Resume
from engine.events import MessageSent, RunEnded, RunStarted, TerminationReason
from mmb_tui.app import MmbApp
from mmb_tui.front_ends.cli import main
from mmb_tui.front_ends.tui_logging import attach_file_log, detach_file_log
from mmb_tui.screens.confirm_screen import ConfirmScreen
from mmb_tui.screens.help_screen import HelpScreen
from mmb_tui.transcript.event_render import TUI_MARKERS
from mmb_tui.widgets.dashboard import Dashboard
from mmb_tui.widgets.phase_pane import PhasePane
from mmb_tui.widgets.run_column import RunColumn


def _add_idle_runs(scene: Scene, count: int) -> None:
    for index in range(count):
        run_id = f"idle-{index}"
        scene.engine.views[run_id] = RunView(run_id=run_id, benchmark="demo", agent="chatbot")


def _column(app: MmbApp, index: int = 0) -> RunColumn:
    return app.query_one(f"#column-{index}", RunColumn)


def _header(app: MmbApp, index: int = 0) -> str:
    return str(_column(app, index).query_one(".run-column-header", Static).render())


def _toasts(app: MmbApp) -> list[tuple[str, str]]:
    return [(str(n.title), str(n.message)) for n in app._notifications]


def _screen_text(app: MmbApp) -> str:
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())


# ---- snapshots ---------------------------------------------------------------------------------------


def test_dashboard_80x24(snap_compare: Any, scene: Scene) -> None:
    assert snap_compare(scene.app(), terminal_size=(80, 24), press=["o"])


def test_search_in_a_transcript_80x24(snap_compare: Any, scene: Scene) -> None:
    assert snap_compare(scene.app(), terminal_size=(80, 24), press=["tab", "slash", *"lena", "enter", "N"])


def test_second_page_of_side_by_side_columns(snap_compare: Any, scene: Scene) -> None:
    _add_idle_runs(scene, 4)
    assert snap_compare(scene.app(), terminal_size=(200, 30), press=["down"] * 4)


# ---- the dashboard, pages and zoom ---------------------------------------------------------------------


async def test_dashboard_shows_each_run_with_its_last_event_and_selects_runs(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("o")
        await settle(pilot)
        dashboard = app.query_one(Dashboard)
        assert dashboard.has_focus and dashboard.size.height == 7  # column titles, three runs of two lines
        text = _screen_text(app)
        assert text.count("Morning! Tom turns 6") >= 3  # each run's last event
        assert "20 Aug 10:01" in text  # the clock with the month
        scene.engine.emit("hermes-1", MessageSent(text="a fresh message from hermes"))
        await settle(pilot)
        app.main.refresh_views()
        await pilot.pause()
        assert "a fresh message from hermes" in _screen_text(app)
        await pilot.press("down")
        assert app.main.selected_run == "hermes-1"
        await pilot.press("enter")
        await pilot.pause()
        assert _column(app).transcript.has_focus and _column(app).run_id == "hermes-1"
        await pilot.press("o")
        assert not dashboard.display


async def test_side_by_side_columns_are_paged_with_an_indicator_and_zoom(scene: Scene) -> None:
    _add_idle_runs(scene, 4)  # seven runs: pages of four at 200 columns
    app = scene.app()
    async with app.run_test(size=(200, 40)) as pilot:
        pager = app.query_one("#pager", Static)
        assert pager.display and "page 1/2 · runs 1–4 of 7" in str(pager.render())
        await pilot.press(*["right_square_bracket"] * 4)  # the fifth run
        assert app.main.selected_run == "idle-1"
        assert "page 2/2 · runs 5–7 of 7" in str(pager.render())
        assert [c.run_id for c in app.main.query(RunColumn) if c.display] == ["idle-1", "idle-2", "idle-3"]
        await pilot.press("z")
        assert [c.run_id for c in app.main.query(RunColumn) if c.display] == ["idle-1"]
        assert "run 5/7, zoomed" in str(pager.render())
        assert not app.query_one("#runs").display
        await pilot.press("z")
        assert app.query_one("#runs").display and "page 2/2" in str(pager.render())


# ---- search and event numbers --------------------------------------------------------------------------


async def test_search_steps_through_matches_and_then_gives_n_back_to_the_screen(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("tab", "slash", *"birthday", "enter")  # in the runs pane, / filters the runs
        view = _column(app).transcript
        assert view.has_focus and view.search_query == "birthday"
        first = view.cursor_event
        assert first is not None and "birthday" in first.model_dump_json().lower()
        position, count = map(int, view.match_label.split("/"))
        assert "/birthday" in _header(app) and position == count == 6  # the nearest above the tail: the last
        await pilot.press("N")
        assert view.match_label == "5/6" and view.cursor_event is not first
        await pilot.press("n", "n")
        assert view.match_label == "1/6"  # wrapped around
        assert scene.engine.commands == []  # n was the search's
        await pilot.press("escape")
        assert view.search_query == "" and "/birthday" not in _header(app)
        await pilot.press("n")  # the screen's next phase again: gated, so it asks
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await pilot.press("slash", *"no such words", "enter")
        assert view.match_label == "no match" and any("No match" in m for _, m in _toasts(app))


async def test_go_to_an_event_in_the_loaded_window(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("g", "5", "enter")
        event = _column(app).transcript.cursor_event
        assert event is not None and event.n == 5 and event.kind == "message_sent"
        await pilot.press("colon", *"999", "enter")
        assert any("no event #999" in m for _, m in _toasts(app))


async def test_show_event_loads_the_events_around_an_old_one_and_end_returns_to_the_tail(
    scene: Scene,
) -> None:
    for index in range(60):
        scene.engine.emit("hermes-1", MessageSent(text=f"message {index}"))
    app = scene.app()
    app.main.max_entries = 20  # hermes-1 has 75 events: the window holds its last 20
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.main.show_event("hermes-1", 10)
        await pilot.pause()
        view = _column(app).transcript
        assert app.main.selected_run == "hermes-1" and view.has_focus
        assert view.cursor_event is not None and view.cursor_event.n == 10
        assert view.detached and view.span == (1, 20)
        assert "#1–#20, not the tail" in _header(app)
        scene.engine.emit("hermes-1", MessageSent(text="live while looking back"))
        await settle(pilot)
        assert view.span == (1, 20)  # the window takes no live event
        await pilot.press("end")
        await settle(pilot)
        assert not view.detached and view.following and view.span == (57, 76)
        last = view.events[-1]
        assert isinstance(last, MessageSent) and "live while" in last.text
        assert not app.main.show_event("hermes-1", 500)
        assert not app.main.show_event("nobody", 1)


# ---- the command palette -------------------------------------------------------------------------------


async def test_the_command_palette_offers_every_action_of_the_app_and_the_screen(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        commands = list(app.get_system_commands(app.screen))
        titles = [command.title for command in commands]
        for binding in [*app.BINDINGS, *app.main.BINDINGS]:
            description = binding.description  # type: ignore[union-attr]
            if description == "Clear the runs filter":  # offered only while a filter is on
                continue
            assert any(title.startswith(description) for title in titles), description
        assert len([t for t in titles if t.startswith("Quit")]) == 1  # ours, which asks (Textual's does not)
        await pilot.press("ctrl+p", *"zoom")
        await pilot.pause(0.5)
        await pilot.press("enter")
        await pilot.pause()
        assert app.main.zoomed


# ---- every run at once ---------------------------------------------------------------------------------


async def test_start_all_asks_then_starts_every_idle_or_crashed_run(scene: Scene) -> None:
    _add_idle_runs(scene, 2)
    scene.engine.set_status("hermes-1", "crashed", "a bug")
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("S")
        screen = app.screen
        assert isinstance(screen, ConfirmScreen) and "hermes-1, idle-0, idle-1" in screen.question
        await pilot.press("escape")
        assert scene.engine.started == []
        await pilot.press("S", "y")
        await pilot.pause(0.1)
        assert scene.engine.started == ["hermes-1", "idle-0", "idle-1"]
        assert ("Start all", "3 started: hermes-1, idle-0, idle-1") in _toasts(app)


async def test_pause_all_then_resume_all_with_the_counts_in_one_toast(scene: Scene) -> None:
    scene.engine.refusals["resume"] = "the agent is gone"
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("P")
        await pilot.pause(0.1)
        assert scene.engine.commands == [("chatbot-1", Pause())]
        assert ("Pause all", "1 paused: chatbot-1") in _toasts(app)
        await pilot.press("P")  # none runs now: resume the paused and the waiting
        await pilot.pause(0.1)
        assert sorted(run_id for run_id, c in scene.engine.commands if c == Resume()) == [
            "chatbot-1",
            "hermes-1",
            "openclaw-1",
        ]
        title, message = _toasts(app)[-1]
        assert title == "Resume all" and message.startswith("0 resumed · 3 refused")
        assert "the agent is gone" in message
        assert NextPhase() not in [c for _, c in scene.engine.commands]


# ---- help, dates, 80 columns -----------------------------------------------------------------------------


async def test_help_has_a_legend_of_markers_statuses_and_glyphs(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(110, 120)) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        shown = _screen_text(app)
        for marker in set(TUI_MARKERS.values()):
            assert marker in shown, marker
        for words in ("Legend", "Statuses", "waiting", "✂ column", "▸", "── Thu 20 Aug ──"):
            assert words in shown, words


async def test_the_transcript_shows_the_date_when_the_day_changes(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 40)) as pilot:
        await settle(pilot)
        lines = [line.strip() for line in _screen_text(app).splitlines()]
        assert "── Wed 19 Aug 2026 ──" in lines and "── Thu 20 Aug 2026 ──" in lines
        assert lines.index("── Thu 20 Aug 2026 ──") + 1 == next(
            i for i, line in enumerate(lines) if "clock jumped" in line
        )


@pytest.mark.parametrize("focus_transcript", [False, True])
async def test_nothing_in_the_footer_is_cut_at_80_columns(scene: Scene, focus_transcript: bool) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        if focus_transcript:
            await pilot.press("tab", "slash", *"lena", "enter")  # the search's keys join the footer
        await pilot.pause()
        footer = app.main.query_one(Footer)
        keys = list(footer.query(FooterKey))
        assert {key.key for key in keys} >= {"r", "question_mark", "q"}
        assert all(key.region.right <= 80 for key in keys)
        assert footer.virtual_size.width <= 80


async def test_the_status_line_says_why_a_run_waits_in_full_at_80_columns(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down")
        await pilot.pause()
        assert "waiting: 429 from model; retry in 8 s" in _header(app)


# ---- the small things -----------------------------------------------------------------------------------


async def test_a_never_started_run_shows_an_empty_transcript_not_the_previous_one(scene: Scene) -> None:
    _add_idle_runs(scene, 1)
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("down", "down", "down")
        await settle(pilot)
        assert app.main.selected_run == "idle-0"
        view = _column(app).transcript
        assert view.events == []
        assert all(not view.render_line(y).text.strip() for y in range(view.size.height))
        assert "Morning" not in _screen_text(app)


async def test_the_clock_of_a_run_stops_when_it_ends(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        scene.engine.emit("chatbot-1", RunEnded(reason=TerminationReason.FINISHED, t="2026-08-20T10:05:00"))
        view = scene.engine.views["chatbot-1"]
        scene.engine.views["chatbot-1"] = view.model_copy(
            update={"status": "finished", "clock": "2026-08-20T10:09:00"}  # a clock that reads on
        )
        await pilot.pause()
        shown = app.main.board.view("chatbot-1")
        assert shown is not None and shown.clock == "2026-08-20T10:05:00"


async def test_the_phase_pane_says_all_facts_told(scene: Scene) -> None:
    view = scene.engine.views["chatbot-1"]
    scene.engine.views["chatbot-1"] = view.model_copy(
        update={
            "untold": {"family": []},
            "loaded_sheets": ["family"],
            "facts": {"family": [Fact(id="1.1", text="Lena")]},
        }
    )
    app = scene.app()
    async with app.run_test(size=(100, 48)) as pilot:
        await pilot.press("v")
        untold = str(app.query_one(PhasePane).query_one("#phase-untold", Static).render())
        assert "all facts of the loaded sheets told" in untold and "no sheet loaded yet" not in untold


def test_the_log_file_gets_each_line_once_when_the_command_line_set_it_up(tmp_path: Path) -> None:
    path = tmp_path / "mmb-tui.log"
    root = logging.getLogger()
    cli_handler = logging.FileHandler(path, encoding="utf-8")  # what `logging.basicConfig(filename=...)` adds
    root.addHandler(cli_handler)
    try:
        attach_file_log(path)
        logging.getLogger("httpx").warning("HTTP Request: POST http://127.0.0.1/v1/chat/completions")
        detach_file_log()
        assert cli_handler in root.handlers  # not ours to remove
    finally:
        root.removeHandler(cli_handler)
        cli_handler.close()
    assert path.read_text(encoding="utf-8").count("HTTP Request") == 1


def test_the_app_without_a_terminal_says_to_use_headless(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = write_config(tmp_path, ["demo-1"])
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    root = logging.getLogger()
    handlers = list(root.handlers)
    try:
        assert main(["--config", str(config), "run", "demo-1"]) == 2
    finally:
        for handler in root.handlers[:]:
            if handler not in handlers:  # the command line's log file
                root.removeHandler(handler)
                handler.close()
    assert "--headless" in capsys.readouterr().err


async def test_a_resume_cuts_the_shown_events_back_to_its_checkpoint_and_shows_the_replay(
    scene: Scene,
) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        view = _column(app).transcript
        last = view.events[-1].n
        kept = [e.n for e in view.events if e.n <= last - 4]
        scene.engine._n["chatbot-1"] = last - 4  # the checkpoint: the file was cut back after event last-4
        scene.engine.emit("chatbot-1", RunStarted(run_id="chatbot-1", benchmark="b", agent="a", resumed=True))
        scene.engine.emit("chatbot-1", MessageSent(text="said again after the resume"))
        await settle(pilot)
        assert [e.n for e in view.events] == [*kept, last - 3, last - 2]
        assert (
            view.events[-1].kind == "message_sent" and view.events[-1].text == "said again after the resume"
        )
        assert "said again after the resume" in _screen_text(app)
