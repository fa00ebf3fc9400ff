"""One run's transcript with a header line: run, status, filter, whether it follows the tail."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from engine.api import RunView
from engine.events import Event
from mmb_tui.event_render import FILTER_LABELS
from mmb_tui.transcript_files import read_tail_events
from mmb_tui.view_format import STATUS_STYLES, phase_label
from mmb_tui.widgets.transcript_view import TranscriptView


class RunColumn(Vertical):
    """Shows one run at a time; ``show_run`` loads its past from the transcript file."""

    def __init__(self, *, max_entries: int = 4000, id: str | None = None) -> None:
        super().__init__(id=id)
        self.run_id: str | None = None
        self._max_entries = max_entries
        self._view: RunView | None = None

    def compose(self) -> ComposeResult:
        yield Static("", classes="run-column-header")
        yield TranscriptView(max_entries=self._max_entries)

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    def on_mount(self) -> None:
        self.watch(self.transcript, "following", self._refresh_header, init=False)
        self.watch(self.transcript, "filter_mode", self._refresh_header, init=False)

    def show_run(self, run_id: str, transcript_path: Path, *, reload: bool = False) -> None:
        """Bind to ``run_id``; load its past events unless already bound (or ``reload``)."""
        if run_id == self.run_id and not reload:
            return
        self.run_id = run_id
        self.transcript.load(read_tail_events(transcript_path, self.transcript.max_entries))
        self._refresh_header()

    def add_event(self, event: Event) -> None:
        self.transcript.append(event)

    def update_view(self, view: RunView | None) -> None:
        if view != self._view:
            self._view = view
            self._refresh_header()

    def _refresh_header(self) -> None:
        header = Text(no_wrap=True, overflow="ellipsis")
        header.append(self.run_id or "—", style="bold")
        view = self._view
        if view is not None:
            header.append(" · ")
            header.append(view.status, style=STATUS_STYLES.get(view.status, ""))
            header.append(f" · phase {phase_label(view)}")
        transcript = self.transcript
        if transcript.filter_mode != "all":
            header.append(f" · {FILTER_LABELS[transcript.filter_mode]}", style="bold reverse")
        if not transcript.following:
            header.append(" · scrolled (End follows)", style="italic")
        self.query_one(".run-column-header", Static).update(header)
