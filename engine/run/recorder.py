"""A run's record: every event to the transcript and the observers, every change saved as a checkpoint
(``state.json`` and the journal of what only grows, ``engine/run/checkpoint.py``).

``Recorder`` is the port the run's collaborators (agent channel, time master, operator desk) are handed:
they emit events, save, set the status and say what they wait for (``liveness``) through it, and never see
the run itself.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from engine.api import Observer
from engine.clock import Clock, monotonic
from engine.events import Event, RunStatus, StatusChanged
from engine.run.checkpoint import Journal, StateWriter
from engine.run.liveness import Liveness
from engine.run.lock import private_umask
from engine.sanitize import printable
from engine.state import RunState, StateSaveError
from engine.transcript import Transcript

log = logging.getLogger(__name__)


class Recorder(Protocol):
    """What a run's collaborator may do with its record."""

    state: RunState
    clock: Clock
    liveness: Liveness

    def emit(self, event: Event) -> None: ...
    def save(self) -> None: ...
    def set_status(self, status: RunStatus, reason: str = "") -> None: ...


class ChannelRecorder(Recorder, Protocol):
    """What the agent channel needs besides: to wait for the last checkpoint before a message goes out."""

    async def flushed(self) -> None: ...


class RunRecorder:
    """Owns a run's transcript, state writer and observers.

    ``before_save`` fills the parts of the state that live elsewhere (the adapter's export, token usage)
    right before each checkpoint.
    """

    def __init__(
        self,
        run_id: str,
        run_dir: Path,
        state: RunState,
        clock: Clock,
        observers: list[Observer],
        before_save: Callable[[RunState], None] | None = None,
    ) -> None:
        self.run_id = run_id
        self.state = state
        self.clock = clock
        self.observers = observers
        private_umask()  # its files 0600, its folders 0700, however it was built (engine/run/lock.py)
        self.transcript = Transcript(run_dir / "transcript.jsonl")
        self.journal = Journal(run_dir)
        self.writer = StateWriter(run_dir / "state.json", self.journal)
        self._before_save = before_save
        self._session_started = monotonic()
        self.liveness = Liveness()  # what the run waits for; stamped with every event

    def emit(self, event: Event) -> None:
        """Stamp ``event`` (virtual time, transcript number), append it, tell every observer."""
        event.t = self.clock.iso()
        event.n = self.state.transcript_events
        self.state.transcript_events += 1
        self.transcript.append(event)
        self.journal.note(event)
        self.liveness.stamp()
        for observer in self.observers:
            try:
                observer.on_event(self.run_id, event)
            except Exception:  # an observer must never break a run
                log.exception("observer failed")

    async def begin(self, resumed: bool) -> None:
        """Cut the transcript back to the checkpoint's length; a fresh run gets its first checkpoint on disk
        before its first event, so that a kill from then on always leaves one to resume from."""
        self.transcript.rollback(self.state.transcript_bytes)
        if not resumed:
            self.save()
            await self.flushed()

    def save(self) -> None:
        """A checkpoint of the state as it is now (written off the loop, latest wins)."""
        now = monotonic()
        self.state.run_seconds += now - self._session_started
        self._session_started = now
        self.state.clock_offset = self.clock.offset
        self.state.clock_now = self.clock.iso()
        if self._before_save is not None:
            self._before_save(self.state)
        self.state.transcript_bytes = self.transcript.size
        self.state.transcript_sha256 = self.transcript.digest()
        try:
            self.journal.record(self.state)
        except OSError as exc:  # nothing names what could not be appended: the run stops as for state.json
            self.writer.failure = f"{self.journal.path}: {exc.strerror or exc}"
            return
        self.writer.save(self.state)

    def set_status(self, status: RunStatus, reason: str = "") -> None:
        reason = printable(reason, newlines=False)  # a reason may quote the agent: data, never control
        if (self.state.status, self.state.reason) != (status, reason):
            self.state.status, self.state.reason = status, reason
            self.emit(StatusChanged(status=status, reason=reason))

    async def flushed(self) -> None:
        """Wait until the last checkpoint is on disk; a failure stays in ``writer.failure`` for the run loop."""
        with contextlib.suppress(StateSaveError):
            await self.writer.flush()

    async def close(self) -> None:
        """Flush the last checkpoint and close the transcript and the journal."""
        try:
            await self.writer.flush()
        finally:
            self.close_files()

    def close_files(self) -> None:
        self.transcript.close()
        self.journal.close()
