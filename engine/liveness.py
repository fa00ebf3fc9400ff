"""What a playing run waits for, and since when: the persona model (attempt k of n after a retry), the
agent's reply, a virtual sleep; and when it last recorded an event.

The run's ``RunRecorder`` holds one ``Liveness``: it stamps every event, and the run and its collaborators
say what they wait for with ``waiting(...)`` around each wait. Front ends read it as ``RunView.activity`` and
``RunView.last_event_at`` (wall-clock epoch seconds, so a front end shows "for how long" at any moment).
A model that retries on its own (``engine/models/openai_model.py``) reports each retry through
``report_retries``: a ``model_retry`` transcript event, and the attempt in the activity.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict

from engine.events import ErrorWhere, ModelRetried, WaitingFor
from engine.models.base import ChatModel, ReportsRetries, Retry

if TYPE_CHECKING:
    from engine.recorder import Recorder


class Activity(BaseModel):
    """What a run waits for now, since when (wall clock, epoch seconds) and how it goes."""

    model_config = ConfigDict(frozen=True)

    waiting_for: WaitingFor = ""  # "" while the run works between waits (or is not playing)
    since: float | None = None  # when the wait began (a retried call: its first attempt)
    until: str = ""  # a virtual sleep: the virtual time it wakes at (ISO)
    attempt: int = 0  # a retried call: the attempt under way (2 or more) …
    attempts: int = 0  # … of this many
    reason: str = ""  # why the previous attempt failed


class Liveness:
    """A run's current ``activity`` and the wall-clock time of its last event."""

    def __init__(self, wall: Callable[[], float] = time.time) -> None:
        self.activity = Activity()
        self.last_event_at: float | None = None
        self._wall = wall

    def stamp(self) -> None:
        """An event was recorded now."""
        self.last_event_at = self._wall()

    @contextmanager
    def waiting(self, what: WaitingFor, until: str = "") -> Iterator[None]:
        """The run waits for ``what`` inside the block; the activity before it comes back after."""
        before = self.activity
        self.activity = Activity(waiting_for=what, since=self._wall(), until=until)
        try:
            yield
        finally:
            self.activity = before

    def retrying(self, retry: Retry) -> None:
        """The call waited on is tried again: attempt k of n, and why (its start stays the wait's start)."""
        update = {"attempt": retry.attempt, "attempts": retry.attempts, "reason": retry.reason}
        self.activity = self.activity.model_copy(update=update)


def report_retries(model: ChatModel, recorder: Recorder, where: ErrorWhere = "persona model") -> None:
    """Have ``model`` (if it retries on its own) record each retry as a ``model_retry`` event and in the
    run's activity."""
    if not isinstance(model, ReportsRetries):
        return

    def on_retry(retry: Retry) -> None:
        recorder.liveness.retrying(retry)
        delay = round(retry.delay, 3)
        attempt, of, reason = retry.attempt, retry.attempts, retry.reason
        recorder.emit(ModelRetried(where=where, attempt=attempt, of=of, delay=delay, reason=reason))

    model.on_retry = on_retry
