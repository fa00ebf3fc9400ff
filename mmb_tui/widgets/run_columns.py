"""The transcripts area: a column per shown run (side by side when wide, paged by the selected run, or one
zoomed), and the line saying which page or run is shown (``page_text``; the screen shows it above the area).
The columns are its direct children: each container level above a transcript is composited again on every
repaint of a scrolled transcript (``bench/tui_transcript.py``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from textual.app import ComposeResult
from textual.containers import Horizontal

from engine.api import RunView
from engine.events import Event
from mmb_tui.widgets.run_column import RunColumn

MAX_COLUMNS = 4


class RunColumns(Horizontal):
    """A fixed set of ``MAX_COLUMNS`` columns, composed once; ``show_runs`` binds them to runs."""

    def __init__(self, *, max_entries: int = 4000, id: str | None = None) -> None:
        super().__init__(id=id)
        self._max_entries = max_entries
        self._cache: list[RunColumn] = []
        self.page_text = ""  # which page or run is shown; "" when every run is

    def compose(self) -> ComposeResult:
        for index in range(MAX_COLUMNS):
            yield RunColumn(max_entries=self._max_entries, id=f"column-{index}")

    @property
    def columns(self) -> list[RunColumn]:
        if not self._cache:  # engine events reach this once per event: no query each time
            self._cache = list(self.query(RunColumn))
        return self._cache

    def column_for(self, run_id: str) -> RunColumn | None:
        return next((c for c in self.columns if c.display and c.run_id == run_id), None)

    def events_of(self, run_id: str) -> list[Event]:
        column = self.column_for(run_id)
        return column.transcript.events if column is not None else []

    def add_event(self, run_id: str, event: Event) -> None:
        for column in self.columns:
            if column.display and column.run_id == run_id:
                column.add_event(event)

    def update_views(self, by_id: dict[str, RunView]) -> None:
        for column in self.columns:
            if column.display and column.run_id:
                column.update_view(by_id.get(column.run_id))

    def show_runs(
        self,
        ids: list[str],
        selected: str | None,
        count: int,
        zoomed: bool,
        path_for: Callable[[str], Path],
        view_for: Callable[[str], RunView | None],
    ) -> list[str]:
        """Show the page of ``count`` runs that holds ``selected``; return the runs newly bound. Zoomed, the
        selected run keeps the column that shows it (its place in the transcript, read or followed, and nothing
        read again from the file); so it does on the way back to its page."""
        shown: list[str] = []
        if selected in ids:
            first = (ids.index(selected) // count) * count
            shown = ids[first : first + count]
        places: list[str | None] = [*shown, *[None] * (len(self.columns) - len(shown))]
        showing = [c.run_id if c.display else None for c in self.columns]
        if zoomed and shown and shown[0] in showing:
            places = [run_id if run_id == shown[0] else None for run_id in showing]
        bound = []
        for column, run_id in zip(self.columns, places, strict=True):
            if run_id is not None:
                column.display = True
                if column.run_id != run_id:
                    column.show_run(run_id, path_for(run_id))
                    bound.append(run_id)
                column.set_class(run_id == selected and len(shown) > 1, "-selected")
                column.update_view(view_for(run_id))
            else:
                column.display = False
                column.run_id = None  # reloaded from the file when shown again
        self._show_page(ids, shown, count, zoomed=zoomed)
        return bound

    def _show_page(self, ids: list[str], shown: list[str], count: int, *, zoomed: bool) -> None:
        pages = -(-len(ids) // count) if ids else 0
        text = ""
        if zoomed and shown:
            text = f"run {ids.index(shown[0]) + 1}/{len(ids)}, zoomed · [ ] other runs · z all runs"
        elif count > 1 and pages > 1 and shown:
            first = ids.index(shown[0]) + 1
            text = (
                f"page {(first - 1) // count + 1}/{pages} · runs {first}–{first + len(shown) - 1} of "
                f"{len(ids)} · [ ] move the selection · z zooms on one"
            )
        self.page_text = text
