"""Edit a fact of a live sheet, or add one: sheet, id or category, text. Dismisses with a command.

The sheet must be one of the run's live sheets; a fact id must exist in it, and picking one fills in its current
text (shown above the field too), so an edit starts from what the persona has now; text the operator typed is
never replaced. Once a save has shown an error, the error line follows the form: the problem left, or none."""

from __future__ import annotations

import re

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, Static

from engine.benchmark.model import Fact
from engine.commands import AddFact, EditFact

_FACT_ID = re.compile(r"^\d+\.\d+$")
_CATEGORY = re.compile(r"^\d+$")


class FactEditorScreen(ModalScreen[EditFact | AddFact | None]):
    """``1.2`` in the id field edits fact 1.2 (text ``—`` deletes it); ``3`` adds a fact to category 3."""

    BINDINGS = [
        Binding("escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Save"),
    ]

    def __init__(
        self,
        run_id: str,
        facts: dict[str, list[Fact]],
        *,
        loaded: list[str] | None = None,
        fact_id: str = "",
        text: str = "",
    ) -> None:
        super().__init__(classes="dialog-screen")
        self.run_id = run_id
        self.facts = facts  # live sheet -> its live facts
        self.sheets = sorted(facts)
        self.default_sheet = next(iter(loaded or []), self.sheets[0] if self.sheets else "")
        self._fact_id = fact_id
        self._text = text
        self._error = ""  # the form's error shown now
        self._filled = (
            text  # the text last filled in from the named fact (the operator's own is never replaced)
        )

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="fact-editor"):
            yield Static(f"Edit or add a fact — [b]{self.run_id}[/b]", classes="dialog-title")
            yield Label("Sheet")
            yield Input(
                self.default_sheet,
                placeholder="family",
                id="fact-sheet",
                suggester=SuggestFromList(self.sheets, case_sensitive=False),
            )
            yield Label("Fact id to edit (1.2) or category number to add to (3)")
            yield Input(self._fact_id, placeholder="1.2", id="fact-id")
            yield Static("", id="fact-current", classes="form-hint")
            yield Label("Text (— deletes the fact)")
            yield Input(self._text, placeholder="Lena's birthday — March 14", id="fact-text")
            yield Static("", id="fact-error", classes="form-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (ctrl+s)", id="save", variant="primary")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#fact-sheet", Input).focus()  # its text is selected: typing replaces it

    def _value(self, field: str) -> str:
        return self.query_one(f"#{field}", Input).value.strip()

    def current(self) -> Fact | None:
        """The fact the sheet and id fields name, if the sheet has it."""
        fact_id = self._value("fact-id")
        return next((f for f in self.facts.get(self._value("fact-sheet"), []) if f.id == fact_id), None)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id in ("fact-sheet", "fact-id"):
            self._show_current()
        if self._error:  # a save showed one: the line says what is wrong now, never a problem fixed since
            problem = self.build_command()
            self._show_error(problem if isinstance(problem, str) else "")

    def _show_current(self) -> None:
        """The named fact's current text above the field, and in it when the field is empty or still holds
        what was filled in: never over what the operator typed."""
        fact = self.current()
        self.query_one("#fact-current", Static).update(
            f"Now: {escape(fact.text)}" if fact is not None else ""
        )
        field = self.query_one("#fact-text", Input)
        if fact is not None and field.value in ("", self._filled):
            self._filled = field.value = fact.text

    def build_command(self) -> EditFact | AddFact | str:
        """The command the form describes, or a one-line error."""
        sheet, fact_id, text = self._value("fact-sheet"), self._value("fact-id"), self._value("fact-text")
        if not sheet:
            return "Name the sheet (e.g. family)."
        if sheet not in self.facts:
            return f"No sheet {sheet!r}; the run has {', '.join(self.sheets) or 'none'}."
        if not (_FACT_ID.match(fact_id) or _CATEGORY.match(fact_id)):
            return "The id must be a fact id like 1.2 (edit) or a category number like 3 (add)."
        if _FACT_ID.match(fact_id) and self.current() is None:
            ids = ", ".join(f.id for f in self.facts[sheet])
            return f"{sheet} has no fact {fact_id} (it has {ids}); a category number adds one."
        if not text:  # the fields in their order: sheet, id, text
            return "Write the fact's text (— deletes it)."
        if _FACT_ID.match(fact_id):
            return EditFact(sheet=sheet, fact_id=fact_id, text=text)
        return AddFact(sheet=sheet, category=int(fact_id), text=text)

    def _show_error(self, text: str) -> None:
        self._error = text
        self.query_one("#fact-error", Static).update(text)

    def action_save(self) -> None:
        command = self.build_command()
        self._show_error(command if isinstance(command, str) else "")
        if not isinstance(command, str):
            self.dismiss(command)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if event.input.id == "fact-text":
            self.action_save()
        else:
            self.focus_next()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_save()
        else:
            self.dismiss(None)

    def action_cancel(self) -> None:
        self.dismiss(None)
