"""The pane of configured runs: one row per run of ``config.jsonc``."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

from engine.api import RunView
from mmb_tui.view_format import average_label, compact_clock, phase_label, status_text

_COLUMNS = (
    ("run", "Run"),
    ("status", "Status"),
    ("phase", "Phase"),
    ("evals", "Evals"),
    ("compactions", "✂"),
    ("clock", "Clock"),
)


class RunsTable(DataTable[str | Text]):
    """Status, phase, chapter, evaluations, average, agent compactions and virtual clock of each run."""

    @dataclass
    class RunSelected(Message):
        """The highlighted row changed."""

        run_id: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._run_ids: list[str] = []
        self._shown: dict[str, RunView] = {}

    def on_mount(self) -> None:
        for key, label in _COLUMNS:
            self.add_column(label, key=key)

    @property
    def run_ids(self) -> list[str]:
        return list(self._run_ids)

    @staticmethod
    def _cells(view: RunView) -> dict[str, str | Text]:
        clock = compact_clock(view.clock)
        chapter = view.chapter.removesuffix(".md")
        return {
            "run": Text(view.run_id, style="bold"),
            "status": status_text(view, reason_width=14),
            "phase": f"{phase_label(view)} {chapter}".strip(),
            "evals": f"{view.evaluations} · {average_label(view)}" if view.evaluations else "–",
            "compactions": str(view.agent_compactions),
            "clock": clock,
        }

    def show_views(self, views: list[RunView]) -> None:
        """Update the rows in place; rebuild them only when the set of runs changed."""
        ids = [view.run_id for view in views]
        changed = [view for view in views if self._shown.get(view.run_id) != view]
        self._shown = {view.run_id: view for view in views}
        if ids != self._run_ids:
            selected = self._run_ids[self.cursor_row] if 0 <= self.cursor_row < len(self._run_ids) else None
            self.clear()
            self._run_ids = ids
            for view in views:
                cells = self._cells(view)
                self.add_row(*(cells[key] for key, _ in _COLUMNS), key=view.run_id)
            if selected in ids:
                self.move_cursor(row=ids.index(selected))
            return
        for view in changed:
            for key, value in self._cells(view).items():
                self.update_cell(view.run_id, key, value, update_width=True)

    def select_run(self, run_id: str) -> None:
        if run_id in self._run_ids:
            self.move_cursor(row=self._run_ids.index(run_id))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.RunSelected(event.row_key.value))
