"""``q`` with runs in flight: stop them and quit, detach instead (the runs go on in a background process), or
neither. Dismisses with ``"stop"``, ``"detach"`` or ``""``."""

from __future__ import annotations

from typing import Literal

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

QuitChoice = Literal["stop", "detach", ""]


class QuitScreen(ModalScreen[QuitChoice]):
    BINDINGS = [
        Binding("y", "choose('stop')", "Stop and quit"),
        Binding("d", "choose('detach')", "Detach"),
        Binding("n,escape", "choose('')", "Cancel"),
    ]

    def __init__(self, flying: list[str], detach_text: str) -> None:
        super().__init__(classes="dialog-screen")
        self.flying = flying
        self.detach_text = detach_text

    def compose(self) -> ComposeResult:
        many = len(self.flying) > 1
        question = (
            f"{len(self.flying)} run{'s are' if many else ' is'} in flight: {', '.join(self.flying)}.\n\n"
            f"Stop {'them' if many else 'it'} and quit? The state is saved; s resumes next time.\n"
            f"Or detach (d): {self.detach_text}."
        )
        with Vertical(classes="dialog"):
            yield Static(question, classes="dialog-question", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Stop and quit (y)", id="stop", variant="warning")
                yield Button("Detach (d)", id="detach", variant="success")
                yield Button("Cancel (n)", id="cancel", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#cancel", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_choose("" if event.button.id == "cancel" else str(event.button.id))

    def action_choose(self, choice: str) -> None:
        self.dismiss("stop" if choice == "stop" else "detach" if choice == "detach" else "")
