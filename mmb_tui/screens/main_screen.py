"""The main screen: the views of ``RunsScreen`` (runs pane or dashboard, transcripts, phase pane) and the
operator's actions on one run or on all, with every key binding."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from pathlib import Path

from textual.binding import Binding

from engine.api import RunView
from engine.commands import AbortCall, Command, NewSession, NextPhase, Pause, PersonaNote, Resume
from mmb_tui.screens.bulk_actions import is_pausable, pause_or_resume_all, reported, start_all, startable
from mmb_tui.screens.compare_screen import CompareScreen
from mmb_tui.screens.confirm_screen import ConfirmScreen
from mmb_tui.screens.fact_editor_screen import FactEditorScreen
from mmb_tui.screens.note_screen import NoteScreen
from mmb_tui.screens.report_screen import AnswerRef, ReportScreen
from mmb_tui.screens.runs_screen import RunsScreen
from mmb_tui.widgets.runs_filter import RunsFilter

log = logging.getLogger(__name__)
QUEUED_NOTICE_AFTER = 0.5  # seconds: a command not applied by then is shown as queued


class MainScreen(RunsScreen):
    config_path = Path("config.jsonc")  # the app's config file (set by the app): what ``c`` compares
    report_filter = ""  # the report browser's filter, as the operator last typed it
    BINDINGS = [
        Binding("s", "start", "Start", tooltip="Start the selected run, or resume it from its state"),
        Binding("p", "pause_resume", "Pause", tooltip="Pause the selected run, or resume it"),
        Binding(
            "a",
            "abort_call",
            "Abort",
            tooltip="Cut short the selected run's model or agent call (or its back-off) and retry it now",
        ),
        Binding("n", "next_phase", "Next", tooltip="Step the selected run to the next phase"),
        Binding("e", "edit_fact", "Fact", tooltip="Edit a fact of a live sheet, or add one"),
        Binding("m", "note", "Note", show=False, tooltip="Send the persona a note"),
        Binding("v", "toggle_phase", "Phase", tooltip="Phase text, checks, untold facts, clock"),
        Binding("o", "toggle_overview", "Board", tooltip="Overview: every run, its row and its last event"),
        Binding("r", "reports", "Report", tooltip="Browse the report and its imperfect answers"),
        Binding("c", "compare", "Compare", show=False, tooltip="Runs, repeats and matrices side by side"),
        Binding(
            "f",
            "cycle_filter",
            "Filter",
            show=False,
            tooltip="All, messages, evaluations, errors, agent actions",
        ),
        Binding(
            "A",
            "toggle_actions",
            "Agent actions",
            show=False,
            tooltip="The agent's own tool calls (memory writes, reads, commands) in the transcript, or all",
        ),
        Binding(
            "slash",
            "search",
            "Search",
            show=False,
            tooltip="Search the selected transcript; in the runs pane, filter the runs",
        ),
        Binding("g,colon", "go_to_event", "Go to event", show=False, tooltip="Go to event number N"),
        Binding("z", "zoom", "Zoom", show=False, tooltip="The selected transcript alone, or all"),
        Binding("S", "start_all", "Start all", show=False, tooltip="Start every idle or crashed run"),
        Binding("P", "pause_resume_all", "Pause/resume all", show=False, tooltip="Pause all, or resume all"),
        Binding("N", "new_session", "New session", show=False, tooltip="Switch the agent to a new session"),
        Binding("R", "restart", "Restart", show=False, tooltip="Restart the selected run from scratch"),
        Binding("escape", "clear_run_filter", "Clear the runs filter", show=False),
        Binding("left_square_bracket", "step_run(-1)", "Previous run", show=False),
        Binding("right_square_bracket", "step_run(1)", "Next run", show=False),
    ]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return bool(self.run_filter) if action == "clear_run_filter" else True

    def action_clear_run_filter(self) -> None:
        self.query_one(RunsFilter).action_clear()

    # ---- every run at once -------------------------------------------------------------------------

    def action_start_all(self) -> None:
        run_ids = startable(self.board.views())
        if not run_ids:
            self.notify("No idle or crashed run to start.", severity="warning")
            return
        self._confirm(
            f"Start {len(run_ids)} run(s): [b]{', '.join(run_ids)}[/b]?\n\n"
            "Stopped runs resume from their state.",
            lambda: self._bulk("Start all", start_all(self.engine, run_ids)),
            yes="Start all",
        )

    def action_pause_resume_all(self) -> None:
        what, work = pause_or_resume_all(self.engine, self.board.views())
        if work is None:
            self.notify(what, severity="warning")
        else:
            self._bulk(what, work)

    def _bulk(self, what: str, work: Coroutine[None, None, tuple[str, bool]]) -> None:
        self.app.run_worker(reported(self, what, work), name=what, exit_on_error=False)
        self._dirty = True

    # ---- operator actions --------------------------------------------------------------------------

    def _need_run(self) -> RunView | None:
        view = self.selected_view()
        if view is None:
            self.notify("No run selected.", severity="warning")
        return view

    def send(self, run_id: str, command: Command, what: str) -> None:
        """Send ``command``; the toast says what the engine did with it (an error toast with its reason when
        refused), and "queued" first when the run applies it only after the persona's current turn."""
        self.app.run_worker(
            self._send(run_id, command, what), name=f"{command.kind} {run_id}", exit_on_error=False
        )

    async def _send(self, run_id: str, command: Command, what: str) -> None:
        task = asyncio.ensure_future(self.engine.command(run_id, command))
        done, _ = await asyncio.wait({task}, timeout=QUEUED_NOTICE_AFTER)
        if not done:
            self.notify(f"{what}: queued, applied when the persona's current turn ends", title=run_id)
        try:
            result = await task
        except Exception as exc:
            log.exception("command %s to %s failed", command.kind, run_id)
            self.notify(f"{exc}", title=f"{run_id}: {what} failed", severity="error")
            return
        if result.ok:
            self.notify(result.message, title=f"{run_id}: {what}")
        else:
            self.notify(result.message, title=f"{run_id}: {what} refused", severity="error")
        self._dirty = True

    def _confirm(self, question: str, then: Callable[[], None], *, yes: str = "Yes") -> None:
        def answered(ok: bool | None) -> None:
            if ok:
                then()

        self.app.push_screen(ConfirmScreen(question, yes=yes), answered)

    def action_start(self) -> None:
        view = self._need_run()
        if view is None:
            return
        if view.owner:
            self.notify(
                f"{view.run_id} is played by {view.owner}: it cannot be started here.", severity="warning"
            )
            return
        if view.status in ("running", "paused"):
            self.notify(f"{view.run_id} is already {view.status}.", severity="warning")
            return
        if view.status == "finished" and view.phase_index + 1 >= view.total_phases:
            self.notify(
                f"{view.run_id} has finished (phase {view.phase_index + 1}/{view.total_phases}): "
                "append chapters to continue it, or R to restart it from scratch.",
                severity="warning",
            )
            return
        self.app.run_worker(self.engine.start(view.run_id), name=f"start {view.run_id}", exit_on_error=False)
        self.notify(f"Starting {view.run_id}…" if view.status == "idle" else f"Resuming {view.run_id}…")
        self._dirty = True

    def action_pause_resume(self) -> None:
        view = self._need_run()
        if view is None:
            return
        if is_pausable(view):
            # a run counting down to its retry (status waiting) plays on by itself: it is paused, as a
            # running run is; a Resume would be refused ("not paused") and the retry made all the same. With
            # a pause pending, the pause now: a Resume would only take it back
            self.send(view.run_id, Pause(), "Pause")
        elif view.status in ("paused", "waiting"):
            self.send(view.run_id, Resume(), "Resume")  # a waiting run is resumed from its checkpoint
        else:
            self.notify(
                f"{view.run_id} is {view.status}: nothing to pause (s starts it).", severity="warning"
            )

    def action_abort_call(self) -> None:
        """Cut short the call the selected run waits for (a model, the agent's reply) or its back-off after a
        failure: the engine tries it again now (``AbortCall``)."""
        view = self._need_run()
        if view is not None:
            self.send(view.run_id, AbortCall(), "Abort call")

    def action_restart(self) -> None:
        view = self._need_run()
        if view is None:
            return
        run_id = view.run_id

        def restart() -> None:
            column = self.column_for(run_id)
            if column is not None:
                column.transcript.clear()
            self.app.run_worker(self.engine.restart(run_id), name=f"restart {run_id}", exit_on_error=False)
            self.notify(f"Restarting {run_id} from scratch…")

        self._confirm(
            f"Restart [b]{run_id}[/b] from scratch?\n\nIts results folder (state and transcript) is deleted; "
            "the report keeps its past entries.",
            restart,
            yes="Restart",
        )

    def action_next_phase(self) -> None:
        view = self._need_run()
        if view is None:
            return
        gates = [gate for gate in view.gates if gate]
        if not gates:
            self.send(view.run_id, NextPhase(), "Next phase")
            return
        listed = "\n".join(f"  • {gate}" for gate in gates)
        self._confirm(
            f"The next phase of [b]{view.run_id}[/b] is gated:\n{listed}\n\n"
            f"Override the gates of [b]{view.run_id}[/b] and move on?",
            lambda: self.send(view.run_id, NextPhase(force=True), "Next phase (gates overridden)"),
            yes="Override",
        )

    def action_edit_fact(self) -> None:
        view = self._need_run()
        if view is None:
            return

        def edited(command: Command | None) -> None:
            if command is not None:
                self.send(view.run_id, command, "Edit fact" if command.kind == "edit_fact" else "Add fact")

        if view.status == "finished":
            self.notify(f"{view.run_id} has finished: there is no live sheet to edit.", severity="warning")
            return
        if not view.facts:
            self.notify(f"{view.run_id} has not started: it has no live sheet yet.", severity="warning")
            return
        self.app.push_screen(
            FactEditorScreen(
                view.run_id, view.facts, loaded=[n for n in sorted(view.untold) if view.untold[n]]
            ),
            edited,
        )

    def action_new_session(self) -> None:
        view = self._need_run()
        if view is None:
            return
        effect = (
            "Its context is cleared; its long-term memory is kept."
            if view.agent_sessions
            else f"{view.agent} has no sessions: its context stays as it is; the persona is told of a new "
            "session all the same."
        )
        self._confirm(
            f"Switch the agent of [b]{view.run_id}[/b] to a new session?\n\n{effect}",
            lambda: self.send(view.run_id, NewSession(), "New session"),
        )

    def action_note(self) -> None:
        view = self._need_run()
        if view is None:
            return

        def written(text: str | None) -> None:
            if text:
                self.send(view.run_id, PersonaNote(text=text), "Note")

        self.app.push_screen(NoteScreen(view.run_id), written)

    def action_compare(self) -> None:
        self.app.push_screen(CompareScreen(self.config_path))

    def action_reports(self) -> None:
        screen = ReportScreen(self.results_dir / "report.md", self.report_filter, self.engine.run_ids())

        def closed(ref: AnswerRef | None) -> None:
            self.report_filter = screen.filter_text  # kept while the app lives
            self._open_answer(ref)

        self.app.push_screen(screen, closed)

    def _open_answer(self, ref: AnswerRef | None) -> None:
        if ref is not None:
            self.open_evaluation(ref.run_id, ref.check_id, ref.event_n)

    def open_evaluation(self, run_id: str, check_id: str, event_n: int | None = None) -> None:
        """Show ``run_id``'s transcript at its evaluation of ``check_id``: event ``event_n`` (loading the events
        around it when it is older than the loaded tail), or without a number the latest such evaluation."""
        if run_id not in self.engine.run_ids():
            self.notify(f"{run_id} is not in the config any more.", severity="warning")
            return
        self.selected_run = run_id
        self.show_phase = False
        column = self.column_for(run_id)
        if column is None:
            return
        column.show_run(run_id, self.transcript_path(run_id), reload=True)
        transcript = column.transcript
        transcript.focus()
        if event_n is None:  # an entry written before event numbers
            if not transcript.jump_to(lambda e: e.kind == "evaluation_logged" and e.check_id == check_id):
                self.notify(
                    f"No evaluation of {check_id} in the last {transcript.max_entries} events of {run_id}.",
                    severity="warning",
                )
            return
        landed = transcript.cursor_event if column.go_to_event(event_n) else None
        if landed is None or landed.kind != "evaluation_logged" or landed.check_id != check_id:
            self.notify(
                f"{run_id}'s transcript no longer holds event #{event_n} as its evaluation of {check_id}.",
                severity="warning",
            )
        elif transcript.detached:
            first, last = transcript.span
            self.notify(
                f"Event #{event_n} is older than the loaded tail: showing #{first}–#{last} (End: the tail)."
            )
