"""Every run in two lines — its row (status, phase, evaluations, compactions, clock with the date) and its
last event — so that an 80×24 terminal shows what all the runs are doing (``o`` on the main screen), under a
line of column titles that stays as the rows scroll."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size, Spacing
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.api import RunView
from engine.events import Event
from mmb_tui.transcript.event_render import headline
from mmb_tui.view_format import average_label, parse_clock, phase_label, status_text

LINES_PER_RUN = 2
HEADER_LINES = 1  # the column titles, fixed above the rows as they scroll
GAP = "  "
TAIL_WIDTHS = (5, 8, 3)  # the phase, evals and compactions cells (the clock closes the row)


def dated_clock(iso: str) -> str:
    """``20 Aug 10:01``: the date with the month, so a virtual week never reads as one day."""
    moment = parse_clock(iso)
    return moment.strftime("%d %b %H:%M") if moment else "–"


class Dashboard(ScrollView, can_focus=True):
    """A cursor over the runs; moving it selects the run on the main screen, Enter opens its transcript."""

    BINDINGS = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("enter", "open", "Open", show=False, tooltip="Open the selected run's transcript"),
    ]

    COMPONENT_CLASSES = {"dashboard--cursor"}  # styled in app.tcss

    @dataclass
    class RunHighlighted(Message):
        run_id: str

    @dataclass
    class RunOpened(Message):
        run_id: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._runs: list[tuple[RunView, Event | None]] = []
        self._cursor = 0

    @property
    def run_ids(self) -> list[str]:
        return [view.run_id for view, _ in self._runs]

    def show(self, views: list[RunView], last_events: Mapping[str, Event | None]) -> None:
        """Show ``views`` with the last event of each run (``None``: none yet)."""
        selected = self.run_ids[self._cursor] if self._cursor < len(self._runs) else None
        self._runs = [(view, last_events.get(view.run_id)) for view in views]
        self._cursor = self.run_ids.index(selected) if selected in self.run_ids else 0
        self._size_content()
        self.refresh()

    def _size_content(self) -> None:
        self.virtual_size = Size(self.size.width, HEADER_LINES + len(self._runs) * LINES_PER_RUN)

    def select(self, run_id: str) -> None:
        if run_id in self.run_ids:
            self._cursor = self.run_ids.index(run_id)
            top = HEADER_LINES + self._cursor * LINES_PER_RUN
            self.scroll_to_region(  # below the header, which covers the first line of the view
                Region(0, top, 1, LINES_PER_RUN),
                spacing=Spacing(HEADER_LINES, 0, 0, 0),
                animate=False,
                immediate=True,
            )
            self.refresh()

    def action_move(self, step: int) -> None:
        if self._runs:
            self.select(self.run_ids[max(0, min(len(self._runs) - 1, self._cursor + step))])
            self.post_message(self.RunHighlighted(self.run_ids[self._cursor]))

    def action_open(self) -> None:
        if self._runs:
            self.post_message(self.RunOpened(self.run_ids[self._cursor]))

    def on_click(self, event: events.Click) -> None:
        index = (round(self.scroll_y) + event.y - HEADER_LINES) // LINES_PER_RUN
        if event.y >= HEADER_LINES and 0 <= index < len(self._runs):
            self.select(self.run_ids[index])
            self.post_message(self.RunHighlighted(self.run_ids[index]))

    # ---- rendering -----------------------------------------------------------------------------

    def _layout(self, width: int) -> tuple[int, int]:
        """The run id's and the status's widths: the status takes what the id and the fixed cells leave."""
        idw = max([len("Run"), *(len(run_id) for run_id in self.run_ids)])
        tail = sum(TAIL_WIDTHS) + len(dated_clock("2026-01-01T00:00")) + len(GAP) * len(TAIL_WIDTHS)
        return idw, max(12, width - idw - tail - 2 * len(GAP))

    def _cells(self, first: Text, status: Text, tail: list[str], width: int) -> Text:
        idw, status_width = self._layout(width)
        status.truncate(status_width, overflow="ellipsis", pad=True)
        row = Text(no_wrap=True, overflow="ellipsis", end="")
        row.append_text(first.copy() if first.cell_len >= idw else first + " " * (idw - first.cell_len))
        row.append(GAP)
        row.append_text(status)
        for cell, cell_width in zip(tail, [*TAIL_WIDTHS, 0], strict=True):
            row.append(GAP + cell.ljust(cell_width))
        return row

    def _row(self, view: RunView, width: int) -> Text:
        evals = f"{view.evaluations} · {average_label(view)}" if view.evaluations else "–"
        tail = [phase_label(view), evals, f"✂{view.agent_compactions}", dated_clock(view.clock)]
        return self._cells(Text(view.run_id, style="bold"), status_text(view, time.time(), None), tail, width)

    def _header(self, width: int) -> Text:
        """The column titles, each over its cells (the second line of a run, its last event, has none)."""
        tail = ["Phase", "Evals", "✂", "Clock"]
        header = self._cells(Text("Run"), Text("Status"), tail, width)
        header.stylize("bold dim")
        return header

    @staticmethod
    def _event_line(event: Event | None) -> Text:
        line = Text("   ", no_wrap=True, overflow="ellipsis", end="")
        if event is None:
            line.append("no events yet", style="dim")
        else:
            line.append_text(headline(event))
        return line

    def render_line(self, y: int) -> Strip:
        width = max(1, self.scrollable_content_region.width)
        if y < HEADER_LINES:  # fixed: the rows scroll under it
            return (
                self._strip(self._header(width), width) if self._runs else Strip.blank(width, self.rich_style)
            )
        line_no = round(self.scroll_y) + y - HEADER_LINES
        index, part = divmod(line_no, LINES_PER_RUN)
        if index >= len(self._runs):
            return Strip.blank(width, self.rich_style)
        view, event = self._runs[index]
        text = self._row(view, width) if part == 0 else self._event_line(event)
        strip = self._strip(text, width)
        if index == self._cursor:
            strip = strip.apply_style(self.get_component_rich_style("dashboard--cursor"))
        return strip

    def _strip(self, text: Text, width: int) -> Strip:
        console = self.app.console
        options = console.options.update(width=width, no_wrap=True, overflow="ellipsis")
        strip = Strip(console.render_lines(text, options, style=self.rich_style)[0])
        return strip.adjust_cell_length(width, self.rich_style)

    def on_resize(self) -> None:
        self._size_content()
