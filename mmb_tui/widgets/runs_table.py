"""The pane of configured runs: one row per run of ``config.jsonc``."""

from __future__ import annotations

from dataclasses import dataclass

from rich.cells import cell_len
from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from engine.api import RunView
from mmb_tui import view_format
from mmb_tui.view_format import (
    age_label,
    average_label,
    compact_clock,
    compact_usd,
    phase_label,
    status_text,
)

_COLUMNS = (
    ("run", "Run"),
    ("status", "Status"),
    ("last", "Last"),
    ("phase", "Phase"),
    ("evals", "Evals"),
    ("compactions", "✂"),
    ("clock", "Clock"),
)
STATUS_WIDTH = 56  # cells of the status column at most (the run's header shows the whole reason) …
STATUS_MIN = 10  # … and at least: it takes the room the other columns leave, so they keep theirs


def _width(cell: str | Text) -> int:
    return cell.cell_len if isinstance(cell, Text) else cell_len(cell)


class RunsTable(DataTable[str | Text]):
    """Status (what a running run waits for and for how long, why a run waits), the age of its last event,
    phase, evaluations, average, agent compactions and virtual clock of each run; ages follow the screen's
    refresh. The selected run is the screen's, a run id (``select_run``): the cursor follows it through every
    rebuild; only the operator's own moves and clicks select another (``RunSelected``)."""

    @dataclass
    class RunSelected(Message):
        """The operator moved the cursor to another run (a key or a click; never a rebuild or a refresh)."""

        run_id: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._run_ids: list[str] = []
        self._selected: str | None = None  # the screen's selected run: the cursor follows it
        self._shown: dict[str, dict[str, str | Text]] = {}
        self._views: list[RunView] = []

    def on_mount(self) -> None:
        for key, label in _COLUMNS:
            self.add_column(label, key=key)

    @property
    def run_ids(self) -> list[str]:
        return list(self._run_ids)

    @staticmethod
    def _cells(view: RunView, now: float) -> dict[str, str | Text]:
        """Every cell but the status."""
        evals = f"{view.evaluations} · {average_label(view)}" if view.evaluations else "–"
        if view.cost is not None:
            evals += f" · {compact_usd(view.cost)}"
        return {
            "run": Text(view.run_id, style="bold"),
            "last": age_label(now - view.last_event_at) if view.last_event_at is not None else "–",
            "phase": phase_label(view),
            "evals": evals,
            "compactions": str(view.agent_compactions),
            "clock": compact_clock(view.clock),
        }

    def _status_width(self, rows: list[dict[str, str | Text]]) -> int:
        """The room the other columns leave (each as wide as its widest cell), within the bounds."""
        pad = 2 * self.cell_padding
        others = sum(
            pad + max([cell_len(label), *(_width(row[key]) for row in rows)])  # no rows: a filter left none
            for key, label in _COLUMNS
            if key != "status"
        )
        room = self.scrollable_content_region.width - others - pad
        return max(STATUS_MIN, min(STATUS_WIDTH, room))

    def show_views(self, views: list[RunView]) -> None:
        """Update the cells that changed (ages change with time); rebuild the rows only when the set of runs
        changed. The status column is as wide as the others leave room for, whatever its cells say (a long
        status is cut with an ellipsis, never the columns after it; a status changing length moves nothing)."""
        self._views = views
        now = view_format.wall_clock()
        ids = [view.run_id for view in views]
        cells = {view.run_id: self._cells(view, now) for view in views}
        width = self._status_width(list(cells.values()))
        for view in views:
            status = status_text(view, now, width)
            status.pad_right(width - status.cell_len)  # a steady column: a new status is no new layout
            cells[view.run_id]["status"] = status
        shown, self._shown = self._shown, cells
        if ids != self._run_ids:
            self.clear()
            self._run_ids = ids
            for run_id in ids:
                self.add_row(*(cells[run_id][key] for key, _ in _COLUMNS), key=run_id)
            if self._selected in ids:
                self.move_cursor(row=ids.index(self._selected))
            return
        for run_id, row in cells.items():
            before = shown.get(run_id, {})
            for key, value in row.items():
                if before.get(key) != value:
                    self.update_cell(run_id, key, value, update_width=True)

    def on_resize(self) -> None:
        if self._views:
            self.show_views(self._views)

    # ---- the selection: the screen's run id; the cursor follows it --------------------------------

    def select_run(self, run_id: str) -> None:
        """Put the cursor on ``run_id``'s row (the screen selected it); no message."""
        self._selected = run_id
        if run_id in self._run_ids:
            self.move_cursor(row=self._run_ids.index(run_id))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        # Posted for every cursor move, the table's own too (a rebuild highlights row 0, then the cursor goes
        # back to the selected row): it never selects. Before, two of them in the queue made the screen and
        # the table move each other back and forth for ever.
        event.stop()

    def _operator_moved(self) -> None:
        run_id = self._run_ids[self.cursor_row] if 0 <= self.cursor_row < len(self._run_ids) else None
        if run_id is not None and run_id != self._selected:
            self._selected = run_id
            self.post_message(self.RunSelected(run_id))

    def action_cursor_up(self) -> None:
        super().action_cursor_up()
        self._operator_moved()

    def action_cursor_down(self) -> None:
        super().action_cursor_down()
        self._operator_moved()

    def action_page_up(self) -> None:
        super().action_page_up()
        self._operator_moved()

    def action_page_down(self) -> None:
        super().action_page_down()
        self._operator_moved()

    def action_scroll_top(self) -> None:
        super().action_scroll_top()
        self._operator_moved()

    def action_scroll_bottom(self) -> None:
        super().action_scroll_bottom()
        self._operator_moved()

    def on_click(self) -> None:
        self.call_next(self._operator_moved)  # after DataTable's own handler has moved the cursor
