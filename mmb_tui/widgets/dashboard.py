"""Every run in two lines — its row (status, phase, evaluations, compactions, clock with the date) and its
last event — so that an 80×24 terminal shows what all the runs are doing (``o`` on the main screen)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.api import RunView
from engine.events import Event
from mmb_tui.event_render import headline
from mmb_tui.view_format import average_label, parse_clock, phase_label, status_text

LINES_PER_RUN = 2
GAP = "  "


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
        self.virtual_size = Size(self.size.width, len(self._runs) * LINES_PER_RUN)
        self.refresh()

    def select(self, run_id: str) -> None:
        if run_id in self.run_ids:
            self._cursor = self.run_ids.index(run_id)
            self.scroll_to_region(
                Region(0, self._cursor * LINES_PER_RUN, 1, LINES_PER_RUN), animate=False, immediate=True
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
        index = (round(self.scroll_y) + event.y) // LINES_PER_RUN
        if 0 <= index < len(self._runs):
            self.select(self.run_ids[index])
            self.post_message(self.RunHighlighted(self.run_ids[index]))

    # ---- rendering -----------------------------------------------------------------------------

    def _row(self, view: RunView, width: int) -> Text:
        idw = max(len(run_id) for run_id in self.run_ids)
        evals = f"{view.evaluations} · {average_label(view)}" if view.evaluations else "–"
        tail = Text(GAP).join(
            [
                Text(phase_label(view).ljust(5)),
                Text(evals.ljust(8)),
                Text(f"✂{view.agent_compactions}".ljust(3)),
                Text(dated_clock(view.clock)),
            ]
        )
        status_width = max(12, width - idw - len(tail) - 2 * len(GAP))
        status = status_text(view, time.time(), width=status_width)
        status.pad_right(status_width - status.cell_len)
        row = Text(no_wrap=True, overflow="ellipsis", end="")
        row.append(view.run_id.ljust(idw), style="bold")
        row.append(GAP)
        row.append_text(status)
        row.append(GAP)
        row.append_text(tail)
        return row

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
        line_no = round(self.scroll_y) + y
        index, part = divmod(line_no, LINES_PER_RUN)
        if index >= len(self._runs):
            return Strip.blank(width, self.rich_style)
        view, event = self._runs[index]
        text = self._row(view, width) if part == 0 else self._event_line(event)
        console = self.app.console
        options = console.options.update(width=width, no_wrap=True, overflow="ellipsis")
        strip = Strip(console.render_lines(text, options, style=self.rich_style)[0])
        strip = strip.adjust_cell_length(width, self.rich_style)
        if index == self._cursor:
            strip = strip.apply_style(self.get_component_rich_style("dashboard--cursor"))
        return strip

    def on_resize(self) -> None:
        self.virtual_size = Size(self.size.width, len(self._runs) * LINES_PER_RUN)
