"""The run's virtual clock, big enough to read: time in digits, date and weekday, clock jumps marked."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Digits, Static

from engine.events import ClockJumped
from mmb_tui.view_format import parse_clock, short_clock


class VirtualClock(Vertical):
    """Digits for HH:MM, a line with the weekday and date, a line about clock jumps."""

    def compose(self) -> ComposeResult:
        yield Digits("--:--", id="clock-digits")
        yield Static("", id="clock-date")
        yield Static("", id="clock-jumps")

    def show(self, iso: str, *, virtual: bool, jumps: int, last_jump: ClockJumped | None) -> None:
        moment = parse_clock(iso)
        self.query_one("#clock-digits", Digits).update(moment.strftime("%H:%M") if moment else "--:--")
        date = moment.strftime("%A %d %B %Y") if moment else "no clock yet"
        self.query_one("#clock-date", Static).update(date + ("" if virtual else "  (real time)"))
        jumps_line = ""
        if jumps:
            jumps_line = f"⏩ {jumps} clock jump{'s' if jumps > 1 else ''}"
            if last_jump is not None:
                jumps_line += f", last {short_clock(last_jump.from_time)} → {short_clock(last_jump.to_time)}"
        self.query_one("#clock-jumps", Static).update(jumps_line)
        self.set_class(bool(jumps), "-jumped")
