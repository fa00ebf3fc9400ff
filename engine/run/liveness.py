"""What a playing run waits for, and since when: the persona model (attempt k of n after a retry), the
agent's reply, a virtual sleep, the back-off after a failure (with its end); and when it last recorded an event.

The run's ``RunRecorder`` holds one ``Liveness``: it stamps every event, and the run and its collaborators
say what they wait for with ``waiting(...)`` around each wait. Front ends read it as ``RunView.activity`` and
``RunView.last_event_at`` (wall-clock epoch seconds, so a front end shows "for how long" at any moment).
A model that retries on its own (``engine/models/openai_model.py``) reports each retry through
``report_retries``: a ``model_retry`` transcript event, and the attempt in the activity.

A wait for a call (``CALLS``) can be cut short by the operator (``interrupt``: ``AbortCall``, ``Pause``): the
task waiting is cancelled, the way ``asyncio.timeout`` does it, and ``CallInterrupted`` is raised where the
call was awaited; a cancellation of the task by anyone else (a stop) goes on as one. While a pause is on its
way (``pausing``) a call about to start is cut short at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from engine.api import Activity
from engine.commands import CallInterrupted, Interruption
from engine.events import ErrorWhere, Event, ModelRetried, WaitingFor
from engine.models.base import ChatModel, ReportsRetries, Retry

CALLS: frozenset[WaitingFor] = frozenset({"persona model", "agent reply", "judge model"})
"""The waits the operator can cut short: a call to a model, the wait for the agent's reply."""


@dataclass
class _Call:
    """A call waited on: by which task, since when (monotonic), and whether the operator cut it short."""

    what: WaitingFor
    task: asyncio.Task[Any]
    started: float
    cancelling: int  # the task's pending cancellations when the wait began (``asyncio.timeout``'s rule)
    why: Interruption | None = None
    cancelled: bool = False


class Liveness:
    """A run's current ``activity`` and the wall-clock time of its last event."""

    def __init__(self, wall: Callable[[], float] = time.time) -> None:
        self.activity = Activity()
        self.last_event_at: float | None = None
        self.pausing = False  # a pause is on its way: a call about to start is cut short at once
        self._wall = wall
        self._calls: list[_Call] = []  # the calls waited on now, the innermost last

    def stamp(self) -> None:
        """An event was recorded now."""
        self.last_event_at = self._wall()

    @contextmanager
    def waiting(self, what: WaitingFor, until: str = "", ends_in: float | None = None) -> Iterator[None]:
        """The run waits for ``what`` inside the block; the activity before it comes back after. A call
        (``CALLS``) the operator cuts short raises ``CallInterrupted`` out of the block. ``ends_in``: a wait
        of known length (a back-off), in seconds: its end is in the activity (``ends_at``)."""
        task = asyncio.current_task() if what in CALLS else None
        if task is not None and self.pausing:
            raise CallInterrupted(what, "pause", 0.0)
        call = _Call(what, task, time.monotonic(), task.cancelling()) if task is not None else None
        before = self.activity
        now = self._wall()
        ends_at = now + ends_in if ends_in is not None else None
        self.activity = Activity(waiting_for=what, since=now, until=until, ends_at=ends_at)
        if call is not None:
            self._calls.append(call)
        try:
            yield
        except BaseException:
            if call is None or not call.cancelled or call.why is None:
                raise
            if call.task.uncancel() > call.cancelling:  # cancelled by someone else too (a stop): theirs
                raise
            raise CallInterrupted(what, call.why, time.monotonic() - call.started) from None
        else:
            if call is not None and call.cancelled:  # the call had ended: the cut was swallowed on its way
                call.task.uncancel()
        finally:
            self.activity = before
            if call is not None:
                self._calls.remove(call)

    def interrupt(self, why: Interruption) -> WaitingFor:
        """Cut short the call waited on now (the innermost): it raises ``CallInterrupted`` where it was
        awaited, as soon as its task is back at that wait. What was cut ("" when no call is waited on)."""
        if not self._calls:
            return ""
        call = self._calls[-1]
        if call.why is None:
            call.why = why
            asyncio.get_running_loop().call_soon(self._cut, call)  # never inside the task's own step
        return call.what

    def _cut(self, call: _Call) -> None:
        if call in self._calls and not call.cancelled:  # still waited on
            call.cancelled = True
            call.task.cancel(f"{call.what}: cut short by the operator ({call.why})")

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
