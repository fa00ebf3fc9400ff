"""The runs pane's filter (``/`` in the runs table or the overview): words typed are matched, each, against a
run's id, status, agent and benchmark (case aside); the line says how many runs it lets through, ``k of n
runs``. Enter keeps it and goes back to the runs, Esc clears it."""

from __future__ import annotations

from dataclasses import dataclass

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import Input, Static

from engine.api import RunView

PLACEHOLDER = "filter runs: id, status, agent, benchmark (Enter keeps it, Esc clears it)"


def run_matches(view: RunView, text: str) -> bool:
    """Every word of ``text`` is in the run's id, status, agent or benchmark (an empty filter: every run)."""
    fields = " ".join((view.run_id, view.status, view.agent, view.benchmark)).lower()
    return all(word in fields for word in text.lower().split())


class RunsFilter(Horizontal):
    """Shown while it is edited or holds a filter; tells the screen the text as it is typed (``Changed``) and
    when the operator is done with it (``Done``: Enter, or Esc, which clears it)."""

    BINDINGS = [Binding("escape", "clear", "Clear the filter", show=False)]

    @dataclass
    class Changed(Message):
        text: str

    @dataclass
    class Done(Message):
        """Back to the runs: focus the runs pane."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._count = ""

    def compose(self) -> ComposeResult:
        yield Static("filter /", id="runs-filter-label")
        yield Input(placeholder=PLACEHOLDER, id="runs-filter-input", compact=True)
        yield Static("", id="runs-filter-count")

    @property
    def text(self) -> str:
        return self.query_one(Input).value.strip()

    def open(self) -> None:
        self.display = True
        self.query_one(Input).focus()

    def show_count(self, shown: int, total: int) -> None:
        count = f"{shown} of {total} runs" if self.text else ""
        if count != self._count:  # asked at every refresh of the views: a new text only lays the screen out
            self._count = count
            self.query_one("#runs-filter-count", Static).update(count)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.post_message(self.Changed(event.value.strip()))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.display = bool(self.text)
        self.post_message(self.Done())

    def action_clear(self) -> None:
        self.query_one(Input).value = ""
        self.display = False
        self.post_message(self.Changed(""))
        self.post_message(self.Done())
