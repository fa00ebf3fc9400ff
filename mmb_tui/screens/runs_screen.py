"""What the main screen shows: the runs pane (or a two-line dashboard), the transcripts (side by side when
wide, paged, zoomable; search, event numbers) and the phase pane, kept up to date with the engine. ``/`` in the
runs pane filters the runs (``RunsFilter``): the table, the overview, the columns and ``[ ]`` keep to them, and
a run filtered out is never the selected one (an action never goes to a run out of sight).
``MainScreen`` adds the operator's actions."""

from __future__ import annotations

import logging
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import Footer, Static

from engine.api import EngineApi, RunView
from engine.events import Event
from mmb_tui.run_board import RunBoard
from mmb_tui.transcript.front_compositor import FrontCompositor
from mmb_tui.widgets.dashboard import Dashboard
from mmb_tui.widgets.phase_pane import PhasePane
from mmb_tui.widgets.run_column import RunColumn
from mmb_tui.widgets.run_columns import MAX_COLUMNS, RunColumns
from mmb_tui.widgets.runs_filter import RunsFilter, run_matches
from mmb_tui.widgets.runs_table import RunsTable

log = logging.getLogger(__name__)

WIDE = 160  # columns from which transcripts go side by side
MIN_COLUMN = 48  # narrowest transcript column in the split view
PHASE_PANE = 50  # its width in app.tcss
VIEW_REFRESH = 0.25  # seconds: the runs table and phase pane repaint at most at 4 Hz
CLOCK_TICK = 1.0


class RunsScreen(Screen[None]):
    """The views and the navigation; the key bindings are ``MainScreen``'s."""

    AUTO_FOCUS = "#runs"  # the runs table, never the hidden filter field above it

    selected_run: reactive[str | None] = reactive(None)
    show_phase: reactive[bool] = reactive(False)
    overview: reactive[bool] = reactive(False)  # the dashboard instead of the runs table
    zoomed: reactive[bool] = reactive(False)  # the selected run's transcript alone
    run_filter: reactive[str] = reactive("")  # the runs pane's filter (``/`` there): the runs shown

    def __init__(self, engine: EngineApi, results_dir: Path, *, clock_frozen: bool = False) -> None:
        super().__init__()
        self._compositor = FrontCompositor()  # a transcript's repaint renders only what shows
        self.engine = engine
        self.results_dir = results_dir
        self.clock_frozen = clock_frozen
        self.max_entries = 4000
        self._dirty = True
        self.board = RunBoard(engine, self.transcript_path)
        self._shown_ids: list[str] = []  # the runs the filter lets through, as last laid out

    def compose(self) -> ComposeResult:
        yield Static("", id="banner")
        yield RunsFilter(id="runs-filter")
        yield RunsTable(id="runs")
        yield Dashboard(id="dashboard")
        yield Static("", id="pager")
        with Horizontal(id="work"):
            self.transcripts = RunColumns(max_entries=self.max_entries, id="transcripts")
            yield self.transcripts
            yield PhasePane(id="phase")
        yield Footer(compact=True, show_command_palette=False)

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
        self.board.record(run_id, event)
        self.transcripts.add_event(run_id, event)
        self._dirty = True

    def mark_dirty(self) -> None:
        self._dirty = True

    def _tick(self) -> None:
        if self._dirty:
            self.refresh_views()

    def refresh_views(self) -> None:
        """Show the engine's views in the panes on the screen. A hidden pane is left as it is (an update lays
        the screen out again, for nothing while it does not show); it is updated when it comes into view."""
        self._dirty = False
        every = self.board.views()
        views = [view for view in every if run_matches(view, self.run_filter)]
        by_id = {view.run_id: view for view in views}
        self.query_one(RunsFilter).show_count(len(views), len(every))
        if not self.zoomed:
            if self.overview:
                self.query_one(Dashboard).show(views, self.board.last_events(by_id))
            else:
                self.query_one(RunsTable).show_views(views)
        if self.selected_run not in by_id:  # filtered out: an action never goes to a run out of sight
            self.selected_run = views[0].run_id if views else None
        if list(by_id) != self._shown_ids:  # a filtered run changed status: the columns follow
            self._layout()
        self.transcripts.update_views(by_id)
        if self.show_phase:
            selected = by_id.get(self.selected_run) if self.selected_run else None
            self.query_one(PhasePane).show(selected, self.board.last_jump.get(self.selected_run or ""))

    def selected_view(self) -> RunView | None:
        return self.board.view(self.selected_run) if self.selected_run is not None else None

    # ---- layout ---------------------------------------------------------------------------------

    def transcript_path(self, run_id: str) -> Path:
        return self.results_dir / run_id / "transcript.jsonl"

    def column_for(self, run_id: str) -> RunColumn | None:
        return self.transcripts.column_for(run_id)

    def on_resize(self) -> None:
        self._layout()

    def watch_selected_run(self) -> None:
        if not self.is_mounted or not self.query(PhasePane):
            return
        if self.selected_run is not None:
            self.query_one(RunsTable).select_run(self.selected_run)
            self.query_one(Dashboard).select(self.selected_run)
        self._layout()
        self.refresh_views()

    def watch_show_phase(self) -> None:
        self._layout()
        if self.is_mounted and self.show_phase:
            self.refresh_views()  # the pane was left as it was while hidden

    def watch_zoomed(self) -> None:
        self._layout()
        if self.is_mounted and not self.zoomed:
            self.refresh_views()  # the runs table (or the dashboard) was left as it was while hidden

    def watch_overview(self, overview: bool) -> None:
        self._layout()
        if not self.is_mounted:
            return
        self.refresh_views()
        table, dashboard = self.query_one(RunsTable), self.query_one(Dashboard)
        if overview and (table.has_focus or self.focused is None):
            dashboard.focus()
        elif not overview and dashboard.has_focus:
            table.focus()
        if overview and self.selected_run is not None:
            dashboard.select(self.selected_run)

    def _layout(self) -> None:
        if not self.is_mounted or not self.query(RunColumns):
            return
        wide = self.size.width >= WIDE
        self.set_class(wide, "-wide")
        self.set_class(not wide, "-narrow")
        self.set_class(self.show_phase, "-show-phase")
        self.set_class(self.overview, "-overview")
        self.set_class(self.zoomed, "-zoomed")
        ids = self._shown_ids = self.shown_ids()
        count = 1
        if wide and not self.zoomed:
            room = self.size.width - (PHASE_PANE if self.show_phase else 0)
            count = max(1, min(MAX_COLUMNS, len(ids), room // MIN_COLUMN))
        columns = self.transcripts
        for run_id in columns.show_runs(
            ids, self.selected_run, count, self.zoomed, self.transcript_path, self.board.view
        ):
            self.board.remember_jump(run_id, columns.events_of(run_id))
        pager = self.query_one("#pager", Static)
        pager.update(columns.page_text)
        pager.display = bool(columns.page_text)
        self._dirty = True

    def shown_ids(self) -> list[str]:
        """The runs the filter lets through, in the config's order (every run without a filter)."""
        if not self.run_filter:
            return self.engine.run_ids()
        return [view.run_id for view in self.board.views() if run_matches(view, self.run_filter)]

    def watch_run_filter(self) -> None:
        self._layout()
        if self.is_mounted:
            self.refresh_views()

    def on_runs_filter_changed(self, message: RunsFilter.Changed) -> None:
        self.run_filter = message.text

    def on_runs_filter_done(self, message: RunsFilter.Done) -> None:
        pane = self.query_one(Dashboard) if self.overview else self.query_one(RunsTable)
        pane.focus()

    def runs_pane_focused(self) -> bool:
        """The runs table or the overview has the focus (``/`` filters the runs there, searches elsewhere)."""
        return self.focused is None or isinstance(self.focused, RunsTable | Dashboard)

    def open_run_filter(self) -> None:
        self.zoomed = False
        self.query_one(RunsFilter).open()

    def on_runs_table_run_selected(self, message: RunsTable.RunSelected) -> None:
        self.selected_run = message.run_id

    def on_dashboard_run_highlighted(self, message: Dashboard.RunHighlighted) -> None:
        self.selected_run = message.run_id

    def on_dashboard_run_opened(self, message: Dashboard.RunOpened) -> None:
        self.selected_run = message.run_id
        self.show_phase = False
        column = self.column_for(message.run_id)
        if column is not None:
            column.transcript.focus()

    def action_step_run(self, step: int) -> None:
        ids = self.shown_ids()
        if ids and self.selected_run in ids:
            self.selected_run = ids[(ids.index(self.selected_run) + step) % len(ids)]

    def action_toggle_phase(self) -> None:
        self.show_phase = not self.show_phase

    def action_toggle_overview(self) -> None:
        self.overview = not self.overview

    def action_zoom(self) -> None:
        self.zoomed = not self.zoomed

    # ---- the selected transcript: filter, search, event numbers -------------------------------------

    def _selected_column(self) -> RunColumn | None:
        """The selected run's column, brought into view (a narrow screen shows the phase pane instead)."""
        self.show_phase = False
        return self.column_for(self.selected_run or "")

    def action_cycle_filter(self) -> None:
        column = self.column_for(self.selected_run or "")
        if column is not None:
            column.transcript.action_cycle_filter()

    def action_toggle_actions(self) -> None:
        column = self.column_for(self.selected_run or "")
        if column is not None:
            column.transcript.action_toggle_actions()

    def action_search(self) -> None:
        if self.runs_pane_focused() and not self.zoomed:
            self.open_run_filter()
            return
        column = self._selected_column()
        if column is not None:
            column.ask("search")

    def action_go_to_event(self) -> None:
        column = self._selected_column()
        if column is not None:
            column.ask("event")

    def show_event(self, run_id: str, n: int) -> bool:
        """Select ``run_id`` and put its transcript's cursor on event ``n`` (loading the events around it
        from the file when it is outside the loaded window); ``False``, with a warning, when there is none."""
        if run_id not in self.engine.run_ids():
            self.notify(f"{run_id} is not in the config any more.", severity="warning")
            return False
        self.selected_run = run_id
        column = self._selected_column()
        if column is None:
            return False
        found = column.go_to_event(n)
        column.transcript.focus()
        if not found:
            self.notify(f"{run_id}'s transcript has no event #{n}.", severity="warning")
        return found

    # ---- config errors ---------------------------------------------------------------------------

    def show_banner(self, text: str) -> None:
        banner = self.query_one("#banner", Static)
        banner.update(text)
        banner.set_class(bool(text), "-visible")
