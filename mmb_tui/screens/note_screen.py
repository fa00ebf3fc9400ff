"""Write a note to the persona (when it is stuck); dismisses with the text or ``None``."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static


class NoteScreen(ModalScreen[str | None]):
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, run_id: str) -> None:
        super().__init__(classes="dialog-screen")
        self.run_id = run_id

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(f"Note to the persona of [b]{self.run_id}[/b]", classes="dialog-title")
            yield Static(
                "It reaches the persona before its next turn. Enter sends, Esc cancels.", classes="hint"
            )
            yield Input(
                placeholder="e.g. the agent is waiting for your answer; ask check 20.8 again", id="note"
            )
            yield Static("", id="note-error", classes="form-error")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            self.query_one("#note-error", Static).update("Write something, or Esc to cancel.")
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
