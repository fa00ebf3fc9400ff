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
from typing import Protocol

from engine.api import Activity
from engine.events import ErrorWhere, Event, ModelRetried, WaitingFor
from engine.models.base import ChatModel, ReportsRetries, Retry


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


class RetryRecorder(Protocol):
    """What ``report_retries`` needs of a run's recorder."""

    liveness: Liveness

    def emit(self, event: Event) -> None: ...


def report_retries(model: ChatModel, recorder: RetryRecorder, where: ErrorWhere = "persona model") -> None:
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
