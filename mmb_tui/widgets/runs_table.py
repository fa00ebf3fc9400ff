"""The pane of configured runs: one row per run of ``config.jsonc``."""

from __future__ import annotations

from dataclasses import dataclass

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
STATUS_WIDTH = 26  # cells of the status column: the whole table fits 80 columns
COST_WIDTH = 7  # " · $.12" after the evaluations, when a run has a cost: the status column gives it up


class RunsTable(DataTable[str | Text]):
    """Status (what a running run waits for and for how long, why a run waits), the age of its last event,
    phase, evaluations, average, agent compactions and virtual clock of each run; ages follow the screen's
    refresh."""

    @dataclass
    class RunSelected(Message):
        """The highlighted row changed."""

        run_id: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._run_ids: list[str] = []
        self._shown: dict[str, dict[str, str | Text]] = {}
        self._priced = False  # some run has a cost: the status column is narrower

    def on_mount(self) -> None:
        for key, label in _COLUMNS:
            self.add_column(label, key=key)

    @property
    def run_ids(self) -> list[str]:
        return list(self._run_ids)

    @staticmethod
    def _cells(view: RunView, now: float, priced: bool = False) -> dict[str, str | Text]:
        evals = f"{view.evaluations} · {average_label(view)}" if view.evaluations else "–"
        if view.cost is not None:
            evals += f" · {compact_usd(view.cost)}"
        return {
            "run": Text(view.run_id, style="bold"),
            "status": status_text(view, now, STATUS_WIDTH - COST_WIDTH if priced else STATUS_WIDTH),
            "last": age_label(now - view.last_event_at) if view.last_event_at is not None else "–",
            "phase": phase_label(view),
            "evals": evals,
            "compactions": str(view.agent_compactions),
            "clock": compact_clock(view.clock),
        }

    def show_views(self, views: list[RunView]) -> None:
        """Update the cells that changed (ages change with time); rebuild the rows only when the set of runs
        changed."""
        now = view_format.wall_clock()
        ids = [view.run_id for view in views]
        priced = any(view.cost is not None for view in views)
        cells = {view.run_id: self._cells(view, now, priced) for view in views}
        shown, self._shown = self._shown, cells
        if ids != self._run_ids or priced != self._priced:
            selected = self._run_ids[self.cursor_row] if 0 <= self.cursor_row < len(self._run_ids) else None
            self.clear()
            if priced != self._priced:  # the widths follow the new cells
                self._priced = priced
                for column in self.columns.values():
                    column.content_width = column.label.cell_len
            self._run_ids = ids
            for run_id in ids:
                self.add_row(*(cells[run_id][key] for key, _ in _COLUMNS), key=run_id)
            if selected in ids:
                self.move_cursor(row=ids.index(selected))
            return
        for run_id, row in cells.items():
            before = shown.get(run_id, {})
            for key, value in row.items():
                if before.get(key) != value:
                    self.update_cell(run_id, key, value, update_width=True)

    def select_run(self, run_id: str) -> None:
        if run_id in self._run_ids:
            self.move_cursor(row=self._run_ids.index(run_id))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.RunSelected(event.row_key.value))
