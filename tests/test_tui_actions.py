"""Pilot tests: every operator action driven from the keyboard, asserted on the engine and transcript."""

from __future__ import annotations

from typing import Any

from textual.widgets import Input, Static
from tui_fakes import Scene, settle

from engine.commands import AbortCall, AddFact, EditFact, NewSession, NextPhase, Pause, PersonaNote, Resume
from engine.events import AgentReplied, ErrorOccurred, MessageSent
from mmb_tui.screens.confirm_screen import ConfirmScreen
from mmb_tui.screens.fact_editor_screen import FactEditorScreen
from mmb_tui.screens.main_screen import MainScreen
from mmb_tui.screens.quit_screen import QuitScreen
from mmb_tui.widgets.runs_table import RunsTable
from mmb_tui.widgets.transcript_view import TranscriptView


def _operator_actions(scene: Scene, run_id: str) -> list[str]:
    return [str(e["action"]) for e in scene.engine.transcript_events(run_id) if e["kind"] == "operator"]


async def test_pause_and_resume_send_commands_recorded_in_the_transcript(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("p")
        assert scene.engine.commands[-1] == ("chatbot-1", Pause())
        assert scene.engine.view("chatbot-1").status == "paused"
        await pilot.press("p")
        assert scene.engine.commands[-1] == ("chatbot-1", Resume())
        assert _operator_actions(scene, "chatbot-1") == ["pause", "resume"]
        await settle(pilot)
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        assert [e.kind for e in view.events[-4:]] == ["operator", "status", "operator", "status"]
        app.main.refresh_views()
        assert "running" in str(app.query_one(RunsTable).get_cell("chatbot-1", "status"))


async def test_start_and_restart_with_confirmation(scene: Scene) -> None:
    scene.engine.set_status("hermes-1", "idle")
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down")  # hermes-1
        assert app.main.selected_run == "hermes-1"
        await pilot.press("s")
        await pilot.pause()
        assert scene.engine.started == ["hermes-1"]
        await pilot.press("R")
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("n")
        assert scene.engine.restarted == []
        await pilot.press("R", "y")
        await pilot.pause()
        assert scene.engine.restarted == ["hermes-1"]
        await settle(pilot)
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        assert [e.kind for e in view.events] == ["status"]  # the old transcript is gone


async def test_next_phase_shows_gates_and_overrides_only_after_confirmation(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n")
        screen = app.screen
        assert isinstance(screen, ConfirmScreen) and "untold facts of family" in screen.question
        await pilot.press("escape")
        assert scene.engine.commands == []
        await pilot.press("n", "y")
        assert scene.engine.commands == [("chatbot-1", NextPhase(force=True))]
        # no gates any more: the next step goes without asking
        await pilot.press("n")
        assert scene.engine.commands[-1] == ("chatbot-1", NextPhase(force=False))
        assert _operator_actions(scene, "chatbot-1") == ["next_phase", "next_phase"]


async def test_fact_editor_edits_and_adds_facts(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e")
        assert isinstance(app.screen, FactEditorScreen)
        await pilot.press(*"family", "tab", *"2.4", "tab")
        await pilot.press(*"Tom is allergic to nuts", "enter")
        assert scene.engine.commands[-1] == (
            "chatbot-1",
            EditFact(sheet="family", fact_id="2.4", text="Tom is allergic to nuts"),
        )
        await pilot.press("e", "tab", *"3", "tab", *"Drives a bike", "ctrl+s")
        assert scene.engine.commands[-1] == (
            "chatbot-1",
            AddFact(sheet="car", category=3, text="Drives a bike"),
        )
        # a bad id is refused in the form, nothing is sent
        await pilot.press("e", "tab", *"x.y", "tab", *"text", "ctrl+s")
        assert isinstance(app.screen, FactEditorScreen)
        assert len(scene.engine.commands) == 2
        await pilot.press("escape")
        assert _operator_actions(scene, "chatbot-1") == ["edit_fact", "add_fact"]


async def test_new_session_asks_and_note_reaches_the_persona(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("N", "y")
        assert scene.engine.commands[-1] == ("chatbot-1", NewSession())
        await pilot.press("m", *"ask 3.3 again", "enter")
        assert scene.engine.commands[-1] == ("chatbot-1", PersonaNote(text="ask 3.3 again"))
        assert _operator_actions(scene, "chatbot-1") == ["new_session", "persona_note"]


async def test_a_sends_abort_call_to_the_selected_run_and_toasts_what_became_of_it(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "a")  # hermes-1
        await pilot.pause()
        assert scene.engine.commands == [("hermes-1", AbortCall())]
        assert _operator_actions(scene, "hermes-1") == ["abort_call"]
        scene.engine.refusals["abort_call"] = "the run waits for no model or agent call"
        await pilot.press("up", "a")
        await pilot.pause()
        assert scene.engine.commands[-1] == ("chatbot-1", AbortCall())
        toasts = [(n.title, n.message, n.severity) for n in app._notifications]
        assert ("hermes-1: Abort call", "abort_call applied", "information") in toasts
        refused = ("chatbot-1: Abort call refused", "the run waits for no model or agent call", "error")
        assert refused in toasts
        await pilot.press("r", "a")  # another screen: the key is the main screen's only
        await pilot.pause()
        assert len(scene.engine.commands) == 2


async def test_quitting_mid_run_asks_then_stops_all(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("q")
        assert isinstance(app.screen, QuitScreen)
        await pilot.press("n")
        assert scene.engine.stop_all_calls == 0 and isinstance(app.screen, MainScreen)
        await pilot.press("q", "y")
        await pilot.pause()
        await pilot.pause()
    assert scene.engine.stop_all_calls == 1
    assert not app.is_running


async def test_live_events_follow_the_tail_only_at_the_bottom(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        for i in range(40):
            scene.engine.emit("chatbot-1", MessageSent(text=f"message {i}"))
        await settle(pilot)
        assert view.following and view.scroll_y == view.max_scroll_y > 0
        view.focus()
        await pilot.press("pageup")
        assert not view.following
        position = view.scroll_y
        scene.engine.emit("chatbot-1", AgentReplied(text="a late reply"))
        await settle(pilot)
        assert view.scroll_y == position and view.events[-1].kind == "agent_replied"
        await pilot.press("end")
        assert view.following and view.scroll_y == view.max_scroll_y
        await pilot.press("up")  # a cursor on an event holds the view too
        assert not view.following
        scene.engine.emit("chatbot-1", AgentReplied(text="another"))
        await settle(pilot)
        assert view.scroll_y < view.max_scroll_y
        await pilot.press("end")
        assert view.following and view.scroll_y == view.max_scroll_y


async def test_filters_and_folding(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        scene.engine.emit("chatbot-1", ErrorOccurred(message="boom", where="agent"))
        await settle(pilot)
        shown = view.virtual_size.height
        await pilot.press("f")
        assert view.filter_mode == "messages" and view.virtual_size.height < shown
        await pilot.press("f")
        assert view.filter_mode == "evaluations" and view.virtual_size.height == 3  # a date line, two lines
        view.focus()
        await pilot.press("up", "enter")
        assert view.cursor_event is not None and view.cursor_event.kind == "evaluation_logged"
        assert view.virtual_size.height > 3  # the evaluation unfolded
        await pilot.press("f")
        assert view.filter_mode == "errors" and view.virtual_size.height == 3


async def test_report_answer_opens_the_transcript_at_the_evaluation(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("r", *["down"] * 5, "o")
        assert isinstance(app.screen, MainScreen)
        assert app.main.selected_run == "openclaw-1"
        view = app.query_one("#column-0 TranscriptView", TranscriptView)
        event = view.cursor_event
        assert event is not None and event.kind == "evaluation_logged" and event.check_id == "3.2"
        assert view.has_focus


async def test_split_view_shows_each_run_in_its_own_column(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(200, 50)) as pilot:
        columns = [c for c in app.main.query("RunColumn") if c.display]
        assert [c.run_id for c in columns] == ["chatbot-1", "hermes-1", "openclaw-1"]  # type: ignore[attr-defined]
        scene.engine.emit("hermes-1", MessageSent(text="only for hermes"))
        await settle(pilot)
        lasts = [c.query_one(TranscriptView).events[-1] for c in columns]
        assert [getattr(e, "text", "") == "only for hermes" for e in lasts] == [False, True, False]
    async with scene.app().run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert len([c for c in pilot.app.query("RunColumn") if c.display]) == 1


async def test_t_switches_between_dark_and_light_themes(scene: Scene) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        first = app.theme
        await pilot.press("t")
        assert app.theme != first and app.theme in ("textual-light", "textual-dark")
        await pilot.press("t")
        assert app.theme == ("textual-dark" if first == "textual-dark" else app.theme)


async def test_a_refused_command_is_an_error_toast_with_the_engines_reason(scene: Scene) -> None:
    scene.engine.refusals["edit_fact"] = "the run has finished: there is no live sheet"
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e", *"family", "tab", *"2.4", "tab", *"Tom is allergic to nuts", "enter")
        await pilot.pause()
        toasts = [(n.title, n.message, n.severity) for n in app._notifications]
        assert (
            "chatbot-1: Edit fact refused",
            "the run has finished: there is no live sheet",
            "error",
        ) in toasts
        assert not any("sent" in message for _, message, _ in toasts)


async def test_the_fact_editor_shows_and_fills_in_the_current_text_and_refuses_unknown_ids(
    scene: Scene,
) -> None:
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("e", *"family", "tab", *"2.4")
        screen = app.screen
        assert isinstance(screen, FactEditorScreen)
        assert screen.query_one("#fact-text", Input).value == "Tom is allergic to peanuts"
        await pilot.press("backspace", "9", "tab", "ctrl+s")
        assert "family has no fact 2.9" in str(screen.query_one("#fact-error", Static).render())
        assert scene.engine.commands == []


def test_snapshot_of_the_error_toast_of_a_refused_edit(snap_compare: Any, scene: Scene) -> None:
    scene.engine.refusals["edit_fact"] = "the run has finished: there is no live sheet"
    edit = ["e", *"family", "tab", *"2.4", "tab", *"Tom is allergic to nuts", "enter"]
    assert snap_compare(scene.app(), terminal_size=(80, 24), press=edit)


async def test_p_on_a_waiting_run_with_a_pause_pending_pauses_it_in_one_press(scene: Scene) -> None:
    view = scene.engine.views["hermes-1"]
    scene.engine.views["hermes-1"] = view.model_copy(update={"pause_pending": True})  # waiting, backing off
    app = scene.app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("down", "p")
        await settle(pilot)
        assert scene.engine.commands == [("hermes-1", Pause())]
        assert scene.engine.view("hermes-1").status == "paused"
        await pilot.press("p")  # and the next press resumes it
        assert scene.engine.commands[-1] == ("hermes-1", Resume())
