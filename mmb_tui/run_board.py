"""What the main screen knows of the runs besides the engine's views: each run's last event (the dashboard's
second line), its last clock jump (the phase pane), the clock at which it ended here (it stops there), and what
a view read from a saved state leaves out (virtual time, the time of the last event: ``RunBoard.view``)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from pathlib import Path

from engine.api import EngineApi, RunView
from engine.events import ClockJumped, Event
from mmb_tui.transcript.files import read_tail_events
from mmb_tui.view_format import IN_FLIGHT

log = logging.getLogger(__name__)


class RunBoard:
    """Fed every engine event (``record``, cheap); read by the screen at its refresh rate."""

    def __init__(self, engine: EngineApi, transcript_path: Callable[[str], Path]) -> None:
        self.engine = engine
        self.transcript_path = transcript_path
        self.last_jump: dict[str, ClockJumped] = {}
        self._last_event: dict[str, Event | None] = {}
        self._ended_at: dict[str, str] = {}
        self._written: dict[str, float | None] = {}  # when each run's transcript was last written

    def record(self, run_id: str, event: Event) -> None:
        if isinstance(event, ClockJumped):
            self.last_jump[run_id] = event
        elif event.kind == "run_ended":
            self._ended_at[run_id] = event.t
        elif event.kind == "run_started":
            self._ended_at.pop(run_id, None)
        self._last_event[run_id] = event
        self._written.pop(run_id, None)

    def remember_jump(self, run_id: str, events: Iterable[Event]) -> None:
        """The last clock jump among a run's past ``events``, unless one was seen live."""
        if run_id not in self.last_jump:
            jumps = [event for event in events if isinstance(event, ClockJumped)]
            if jumps:
                self.last_jump[run_id] = jumps[-1]

    def view(self, run_id: str) -> RunView | None:
        """The engine's view, with what a view read from a saved state leaves out: the clock where the run
        ended here, virtual time for a run whose clock jumped, the time of its last event (when its
        transcript was last written)."""
        try:
            view = self.engine.view(run_id)
        except Exception:  # a run removed between run_ids() and view()
            log.exception("view(%s) failed", run_id)
            return None
        if view.status in IN_FLIGHT:
            return view
        update: dict[str, object] = {}
        ended = self._ended_at.get(run_id)
        if ended:  # a stopped clock: the engine may read it on
            update["clock"] = ended
        if view.clock_jumps and not view.virtual_time:
            update["virtual_time"] = True
        if view.last_event_at is None:
            written = self._written_at(run_id)
            if written is not None:
                update["last_event_at"] = written
        return view.model_copy(update=update) if update else view

    def _written_at(self, run_id: str) -> float | None:
        """When the run's transcript was last written (read once; an event of the run reads it again)."""
        if run_id not in self._written:
            try:
                self._written[run_id] = self.transcript_path(run_id).stat().st_mtime
            except OSError:
                self._written[run_id] = None
        return self._written[run_id]

    def views(self) -> list[RunView]:
        return [view for view in map(self.view, self.engine.run_ids()) if view is not None]

    def last_events(self, run_ids: Iterable[str]) -> dict[str, Event | None]:
        """The last event of each run: seen live, else the last line of its transcript (read once)."""
        for run_id in run_ids:
            if run_id not in self._last_event:
                tail = read_tail_events(self.transcript_path(run_id), 1)
                self._last_event[run_id] = tail[-1] if tail else None
        return self._last_event
