"""The main screen: runs pane, transcripts (split view when wide), phase pane and operator actions."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from engine.api import EngineApi, RunView
from engine.commands import Command, NewSession, NextPhase, Pause, PersonaNote, Resume
from engine.events import ClockJumped, Event
from mmb_tui.screens.confirm_screen import ConfirmScreen
from mmb_tui.screens.fact_editor_screen import FactEditorScreen
from mmb_tui.screens.note_screen import NoteScreen
from mmb_tui.screens.report_screen import AnswerRef, ReportScreen
from mmb_tui.widgets.phase_pane import PhasePane
from mmb_tui.widgets.run_column import RunColumn
from mmb_tui.widgets.runs_table import RunsTable

log = logging.getLogger(__name__)
QUEUED_NOTICE_AFTER = 0.5  # seconds: a command not applied by then is shown as queued

WIDE = 160  # columns from which transcripts go side by side
MIN_COLUMN = 48  # narrowest transcript column in the split view
MAX_COLUMNS = 4
VIEW_REFRESH = 0.25  # seconds: the runs table and phase pane repaint at most at 4 Hz
CLOCK_TICK = 1.0


class MainScreen(Screen[None]):
    BINDINGS = [
        Binding("s", "start", "Start"),
        Binding("p", "pause_resume", "Pause/Resume"),
        Binding("n", "next_phase", "Next phase"),
        Binding("e", "edit_fact", "Fact"),
        Binding("m", "note", "Note"),
        Binding("f", "cycle_filter", "Filter"),
        Binding("v", "toggle_phase", "Phase"),
        Binding("r", "reports", "Reports"),
        Binding("N", "new_session", "New session", show=False),
        Binding("R", "restart", "Restart", show=False),
        Binding("left_square_bracket", "step_run(-1)", "Previous run", show=False),
        Binding("right_square_bracket", "step_run(1)", "Next run", show=False),
    ]

    selected_run: reactive[str | None] = reactive(None)
    show_phase: reactive[bool] = reactive(False)

    def __init__(self, engine: EngineApi, results_dir: Path, *, clock_frozen: bool = False) -> None:
        super().__init__()
        self.engine = engine
        self.results_dir = results_dir
        self.clock_frozen = clock_frozen
        self.max_entries = 4000
        self._dirty = True
        self._last_jump: dict[str, ClockJumped] = {}
        self._column_cache: list[RunColumn] = []

    def compose(self) -> ComposeResult:
        yield Static("", id="banner")
        yield RunsTable(id="runs")
        with Horizontal(id="work"):
            with Horizontal(id="columns"):
                for index in range(MAX_COLUMNS):
                    yield RunColumn(max_entries=self.max_entries, id=f"column-{index}")
            yield PhasePane(id="phase")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.refresh_views()
        ids = self.engine.run_ids()
        if ids and self.selected_run is None:
            self.selected_run = ids[0]
        self.set_interval(VIEW_REFRESH, self._tick, name="views")
        if not self.clock_frozen:
            self.set_interval(CLOCK_TICK, self.mark_dirty, name="clock")
        self.query_one(RunsTable).focus()

    # ---- engine events and the read model ------------------------------------------------------

    def engine_event(self, run_id: str, event: Event) -> None:
        """Called by the app's observer for every event of every run (must be cheap)."""
        if isinstance(event, ClockJumped):
            self._last_jump[run_id] = event
        for column in self._columns():
            if column.display and column.run_id == run_id:
                column.add_event(event)
        self._dirty = True

    def mark_dirty(self) -> None:
        self._dirty = True

    def _tick(self) -> None:
        if self._dirty:
            self.refresh_views()

    def _views(self) -> list[RunView]:
        views = []
        for run_id in self.engine.run_ids():
            try:
                views.append(self.engine.view(run_id))
            except Exception:  # a run removed between run_ids() and view()
                log.exception("view(%s) failed", run_id)
        return views

    def refresh_views(self) -> None:
        self._dirty = False
        views = self._views()
        by_id = {view.run_id: view for view in views}
        self.query_one(RunsTable).show_views(views)
        if self.selected_run not in by_id:
            self.selected_run = views[0].run_id if views else None
        for column in self._columns():
            if column.display and column.run_id:
                column.update_view(by_id.get(column.run_id))
        selected = by_id.get(self.selected_run) if self.selected_run else None
        self.query_one(PhasePane).show(selected, self._last_jump.get(self.selected_run or ""))

    def selected_view(self) -> RunView | None:
        return self._view_or_none(self.selected_run) if self.selected_run is not None else None

    # ---- layout ---------------------------------------------------------------------------------

    def _columns(self) -> list[RunColumn]:
        if not self._column_cache:  # fixed set, composed once; engine_event runs per event
            self._column_cache = list(self.query(RunColumn))
        return self._column_cache

    def transcript_path(self, run_id: str) -> Path:
        return self.results_dir / run_id / "transcript.jsonl"

    def column_for(self, run_id: str) -> RunColumn | None:
        return next((c for c in self._columns() if c.display and c.run_id == run_id), None)

    def on_resize(self) -> None:
        self._layout()

    def watch_selected_run(self) -> None:
        if not self.is_mounted or not self.query(PhasePane):
            return
        if self.selected_run is not None:
            self.query_one(RunsTable).select_run(self.selected_run)
        self._layout()
        self.refresh_views()

    def watch_show_phase(self) -> None:
        self._layout()

    def _layout(self) -> None:
        if not self.is_mounted or not self.query(RunColumn):
            return
        wide = self.size.width >= WIDE
        self.set_class(wide, "-wide")
        self.set_class(not wide, "-narrow")
        self.set_class(self.show_phase, "-show-phase")
        ids = self.engine.run_ids()
        shown: list[str] = []
        if self.selected_run in ids:
            count = 1
            if wide:
                room = self.size.width - (50 if self.show_phase else 0)
                count = max(1, min(MAX_COLUMNS, len(ids), room // MIN_COLUMN))
            first = (ids.index(self.selected_run) // count) * count
            shown = ids[first : first + count]
        for index, column in enumerate(self._columns()):
            if index < len(shown):
                run_id = shown[index]
                column.display = True
                if column.run_id != run_id:
                    column.show_run(run_id, self.transcript_path(run_id))
                    self._remember_last_jump(run_id, column)
                column.set_class(run_id == self.selected_run and len(shown) > 1, "-selected")
                column.update_view(self._view_or_none(run_id))
            else:
                column.display = False
                column.run_id = None  # reloaded from the file when shown again
        self._dirty = True

    def _remember_last_jump(self, run_id: str, column: RunColumn) -> None:
        if run_id not in self._last_jump:
            jumps = [e for e in column.transcript.events if isinstance(e, ClockJumped)]
            if jumps:
                self._last_jump[run_id] = jumps[-1]

    def _view_or_none(self, run_id: str) -> RunView | None:
        try:
            return self.engine.view(run_id)
        except Exception:
            log.exception("view(%s) failed", run_id)
            return None

    def on_runs_table_run_selected(self, message: RunsTable.RunSelected) -> None:
        self.selected_run = message.run_id

    def action_step_run(self, step: int) -> None:
        ids = self.engine.run_ids()
        if ids and self.selected_run in ids:
            self.selected_run = ids[(ids.index(self.selected_run) + step) % len(ids)]

    def action_toggle_phase(self) -> None:
        self.show_phase = not self.show_phase

    def action_cycle_filter(self) -> None:
        column = self.column_for(self.selected_run or "")
        if column is not None:
            column.transcript.action_cycle_filter()

    # ---- config errors ---------------------------------------------------------------------------

    def show_banner(self, text: str) -> None:
        banner = self.query_one("#banner", Static)
        banner.update(text)
        banner.set_class(bool(text), "-visible")

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
        self.app.run_worker(self.engine.start(view.run_id), name=f"start {view.run_id}", exit_on_error=False)
        self.notify(f"Starting {view.run_id}…" if view.status == "idle" else f"Resuming {view.run_id}…")
        self._dirty = True

    def action_pause_resume(self) -> None:
        view = self._need_run()
        if view is None:
            return
        if view.status in ("paused", "waiting"):  # a waiting run is resumed from its checkpoint
            self.send(view.run_id, Resume(), "Resume")
        elif view.status == "running":
            self.send(view.run_id, Pause(), "Pause")
        else:
            self.notify(
                f"{view.run_id} is {view.status}: nothing to pause (s starts it).", severity="warning"
            )

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
            f"The next phase of [b]{view.run_id}[/b] is gated:\n{listed}\n\nOverride the gates and move on?",
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
        self.app.push_screen(FactEditorScreen(view.run_id, view.facts, loaded=sorted(view.untold)), edited)

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

    def action_reports(self) -> None:
        self.app.push_screen(ReportScreen(self.results_dir / "report.md"), self._open_answer)

    def _open_answer(self, ref: AnswerRef | None) -> None:
        if ref is not None:
            self.open_evaluation(*ref)

    def open_evaluation(self, run_id: str, check_id: str) -> None:
        """Show ``run_id``'s transcript scrolled to its latest evaluation of ``check_id``."""
        if run_id not in self.engine.run_ids():
            self.notify(f"{run_id} is not in the config any more.", severity="warning")
            return
        self.selected_run = run_id
        self.show_phase = False
        column = self.column_for(run_id)
        if column is None:
            return
        column.show_run(run_id, self.transcript_path(run_id), reload=True)
        found = column.transcript.jump_to(
            lambda event: event.kind == "evaluation_logged" and event.check_id == check_id
        )
        column.transcript.focus()
        if not found:
            self.notify(
                f"No evaluation of {check_id} in the last {column.transcript.max_entries} events of {run_id}.",
                severity="warning",
            )
