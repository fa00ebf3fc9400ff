"""The run's virtual clock, big enough to read: time in digits, date and weekday, clock jumps marked; on one
line when the pane is short (``-compact``: an 80×24 terminal keeps its rows for the untold facts)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Digits, Static

from engine.events import ClockJumped
from mmb_tui.static_text import show_text
from mmb_tui.view_format import parse_clock, short_clock


class VirtualClock(Vertical):
    """Digits for HH:MM, a line with the weekday and date, a line about clock jumps; compact, the time and the
    date on one line instead of the digits (styled in ``app.tcss``)."""

    def compose(self) -> ComposeResult:
        yield Digits("--:--", id="clock-digits")
        yield Static("", id="clock-date")
        yield Static("", id="clock-line")
        yield Static("", id="clock-jumps")

    def show(self, iso: str, *, real_time: bool, jumps: int, last_jump: ClockJumped | None) -> None:
        """``real_time``: the run is known to play on the wall clock (a view read from a saved state does not
        say whether its benchmark plays in virtual time: it is never labelled so)."""
        moment = parse_clock(iso)
        time = moment.strftime("%H:%M") if moment else "--:--"
        self.query_one("#clock-digits", Digits).update(time)
        date = moment.strftime("%A %d %B %Y") if moment else "no clock yet"
        date += "  (real time)" if real_time else ""
        show_text(self.query_one("#clock-date", Static), date)
        show_text(self.query_one("#clock-line", Static), f"{time}  {date}" if moment else date)
        jumps_line = ""
        if jumps:
            jumps_line = f"⏩ {jumps} clock jump{'s' if jumps > 1 else ''}"
            if last_jump is not None:
                jumps_line += f", last {short_clock(last_jump.from_time)} → {short_clock(last_jump.to_time)}"
        show_text(self.query_one("#clock-jumps", Static), jumps_line)
        self.set_class(bool(jumps), "-jumped")
