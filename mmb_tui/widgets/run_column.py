"""One run's transcript with a status line above it (run, status and why — a long reason whole, on more lines —,
phase, filter, search, whether it follows the tail) and a prompt below it for a search or an event number."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Static

from engine.api import RunView
from engine.events import Event
from mmb_tui import view_format
from mmb_tui.static_text import show_text
from mmb_tui.transcript.event_render import FILTER_LABELS
from mmb_tui.transcript.files import read_tail_events
from mmb_tui.transcript.seek import events_around
from mmb_tui.view_format import phase_label, status_text
from mmb_tui.widgets.transcript_view import TranscriptView

Prompt = Literal["search", "event"]


class RunColumn(Vertical):
    """Shows one run at a time; ``show_run`` loads its past from the transcript file."""

    BINDINGS = [Binding("escape", "close_prompt", "Cancel", show=False)]

    def __init__(self, *, max_entries: int = 4000, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_id: str | None = None
        self._max_entries = max_entries
        self._view: RunView | None = None
        self._header = Text()
        self._path: Path | None = None
        self._prompt: Prompt | None = None

    def compose(self) -> ComposeResult:
        yield Static("", classes="run-column-header")
        yield TranscriptView(max_entries=self._max_entries)
        yield Input(classes="run-column-prompt", compact=True)

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    def on_mount(self) -> None:
        for attribute in ("following", "filter_mode", "search_query", "match_label", "detached"):
            self.watch(self.transcript, attribute, self._refresh_header, init=False)

    def show_run(self, run_id: str, transcript_path: Path, *, reload: bool = False) -> None:
        """Bind to ``run_id``; load its past events unless already bound (or ``reload``)."""
        if run_id == self.run_id and not reload:
            return
        if run_id != self.run_id:
            self.transcript.action_clear_search()
        self.run_id = run_id
        self._path = transcript_path
        self.transcript.load(read_tail_events(transcript_path, self.transcript.max_entries))
        self._refresh_header()

    def add_event(self, event: Event) -> None:
        self.transcript.append(event)

    def update_view(self, view: RunView | None) -> None:
        waiting = view is not None and view.activity.since is not None  # a call, a sleep, a back-off
        if view != self._view or waiting:  # what a run waits for ages by the second
            self._view = view
            self._refresh_header()

    # ---- event numbers and the live tail ---------------------------------------------------------

    def go_to_event(self, n: int) -> bool:
        """Put the cursor on event ``n`` (expanded); outside the loaded window, load the events around it from
        the file first (that window takes no live events until End)."""
        transcript = self.transcript
        transcript.flush()
        first, last = transcript.span
        if not first <= n <= last and self._path is not None:
            events, at_end = events_around(self._path, n, transcript.max_entries)
            if not any(event.n == n for event in events):
                return False
            transcript.load(events, detached=not at_end)
        return transcript.jump_to(lambda event: event.n == n)

    def on_transcript_view_tail_wanted(self, message: TranscriptView.TailWanted) -> None:
        message.stop()
        if self.run_id is not None and self._path is not None:
            self.show_run(self.run_id, self._path, reload=True)
            self.transcript.action_follow()

    # ---- the prompt: a search or an event number ----------------------------------------------------

    def ask(self, prompt: Prompt) -> None:
        """Open the prompt under the transcript: ``search`` for text, ``event`` for an event number."""
        self._prompt = prompt
        field = self.query_one(Input)
        field.value = ""
        if prompt == "search":
            field.type = "text"
            field.placeholder = "search this transcript (Enter finds, then n / N; Esc cancels)"
            field.value = self.transcript.search_query
        else:
            field.type = "integer"
            first, last = self.transcript.span
            held = f"#{first}–#{last} loaded" if last else "nothing loaded"
            field.placeholder = f"go to event number ({held}; Esc cancels)"
        field.display = True
        field.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self._prompt is not None if action == "close_prompt" else True

    def action_close_prompt(self) -> None:
        self._prompt = None
        self.query_one(Input).display = False
        self.transcript.focus()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        prompt, value = self._prompt, message.value.strip()
        self.action_close_prompt()
        if prompt == "search":
            if value and not self.transcript.search(value):
                self.notify(
                    f"No match for {value!r} in the loaded events of {self.run_id}.", severity="warning"
                )
            elif not value:
                self.transcript.action_clear_search()
        elif prompt == "event" and value:
            number = int(value) if value.isdigit() else 0
            if not self.go_to_event(number):
                self.notify(f"{self.run_id}'s transcript has no event #{value}.", severity="warning")

    # ---- the status line ------------------------------------------------------------------------

    def _refresh_header(self) -> None:
        header = Text()
        header.append(self.run_id or "—", style="bold")
        view = self._view
        if view is not None:
            header.append(" · ")
            # whole: the runs table cuts a long reason to its column; here it wraps onto more lines
            header.append_text(status_text(view, view_format.wall_clock(), None, every_reason=True))
            header.append(f" · phase {phase_label(view)}")
            if view.node:
                header.append(f" · on {view.node}")
        transcript = self.transcript
        if transcript.filter_mode != "all":
            header.append(f" · {FILTER_LABELS[transcript.filter_mode]}", style="bold reverse")
        if transcript.search_query:
            found = f" {transcript.match_label}" if transcript.match_label else ""
            header.append(f" · /{transcript.search_query}{found} (n N, Esc)", style="bold")
        if transcript.detached:
            first, last = transcript.span
            header.append(f" · #{first}–#{last}, not the tail (End loads it)", style="bold italic")
        elif not transcript.following:
            header.append(" · scrolled (End follows)", style="italic")
        if header != self._header:  # only a new text is painted
            self._header = header
            show_text(self.query_one(".run-column-header", Static), header)
