"""Every key binding, grouped: the footer shows the common ones, this shows all."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

HelpSection = tuple[str, list[tuple[str, str]]]


class HelpScreen(ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark,f1", "close", "Close")]

    def __init__(self, sections: list[HelpSection]) -> None:
        super().__init__(classes="dialog-screen")
        self.sections = sections

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="help"):
            yield Static("MarathonMemBench — keys", classes="dialog-title")
            for title, rows in self.sections:
                table = Table.grid(padding=(0, 2))
                table.add_column(min_width=12, style="bold")
                table.add_column()
                for key, description in rows:
                    table.add_row(key, description)
                yield Static(Text(title, style="bold underline"), classes="help-section-title")
                yield Static(table)
            yield Static(
                "Commands reach a run between persona turns and are recorded in its transcript. "
                "Esc closes this screen.",
                classes="hint",
            )

    def action_close(self) -> None:
        self.dismiss(None)
