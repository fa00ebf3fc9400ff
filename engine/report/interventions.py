"""The operator's interventions and the run's long waits in its report entry (issue 25), read from the transcript:

    📊 Operator: 3 interventions (local time) — pause 10:42 (paused 12m), abort_call 11:05 (the persona model
       call), note 11:20
    📊 Waits over a minute: 2 (local time) — persona model 11:03–11:05 (2m10s, 3 retries after HTTP 429: …),
       agent 11:40–11:52 (12m, failed: no reply from the agent within 600 s, revived)

The transcript is authoritative and complete: a resume cuts it back to the length its checkpoint covers, so an
event from before a kill is in it exactly once, and nothing has to be kept in the state for this. It is
streamed (``read_interventions``): one regular expression per line reads an event's time and kind, and only
the events that start, carry or end a wait or an intervention are parsed (``WAIT_KINDS``).

An intervention is an ``operator`` event; a resume is folded into its pause, which says how long the run was
paused (until the resume, or until the run played again after a kill while paused). A wait is a call that
failed or was cut short, and what followed until the run moved on: it starts where the call began (the event
before its first ``model_retry``, before a non-fatal ``error`` of a model or the agent, or before the operator cut
it short), goes on through retries, back-offs (``status`` waiting, then running), a run that ended waiting for
the operator and its resume, and ends at the next event that is none of these (the call answered), or at the
operator's abort or pause (a pause is timed on the ``Operator:`` line). A ``status`` waiting with no failure
(the persona stuck, a state that cannot be saved) is a wait for the operator. A restart of a run that did not
end waiting (a kill, a stop) ends a wait at the last event before it. Listed are the waits over a minute and
every wait for the operator (a virtual clock stands still while the run is down).

Times are on the run's clock: the machine's local time, or the virtual clock of a virtual-time run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from engine.events import (
    EVENT_ADAPTER,
    ErrorOccurred,
    Event,
    ModelRetried,
    OperatorActed,
    RunEnded,
    RunStarted,
    StatusChanged,
    TerminationReason,
)
from engine.report.grades import one_line

LISTED = 8  # items shown per line; the rest counted
LONG_WAIT = 60.0  # seconds: a wait longer than this is listed
WAIT_KINDS = frozenset({"model_retry", "error", "status", "operator", "run_started", "run_ended"})
"""The kinds read whole; any other event only says that the run moved on (a wait open is over)."""
CALLERS = frozenset({"persona model", "agent", "judge model"})  # an error of one of these starts a wait
LABELS = {"persona_note": "note"}  # an action's name in the entry, where it is not the action itself
_HEAD = re.compile(rb'\{"t":"([^"]*)","n":\d+,"kind":"([a-z_]+)"')
_MODEL = re.compile(r"^model '[^']*': ")  # a model error names its model: the wait's label says which


class Tick(NamedTuple):
    """An event not read whole: when it happened and its kind."""

    t: str
    kind: str


@dataclass
class Intervention:
    """One ``operator`` event (a pause with when it ended)."""

    action: str
    at: str  # the run's clock, ISO
    detail: str = ""
    cut: str = ""  # what it cut short (``CutShort``)
    until: str = ""  # a pause: when the run played on ("" still paused)
    restarted: bool = False  # a pause ended by the run playing again after a kill or a stop


@dataclass
class Wait:
    """A call that failed or was cut short, and what followed until the run moved on."""

    what: str  # "persona model", "judge model", "agent", "agent reply", or "operator" (waiting, no failure)
    start: str  # the run's clock, ISO
    end: str = ""  # "" still waiting when the transcript ends
    retries: int = 0  # the model's own retries (``model_retry``)
    failures: int = 0  # failed calls the run backed off from (``error``)
    reason: str = ""  # the last failure's, or why the run waits
    cut: str = ""  # the operator's action that cut it short
    waiting: bool = False  # the run's status was waiting in it
    for_operator: bool = False  # the run ended waiting for the operator (or waits for them now)
    resumed: str = ""  # when a run that ended waiting played again
    revived: bool = False  # the agent was started again after a back-off
    restarted: bool = False  # ended by a restart (a kill or a stop came first)


@dataclass
class InterventionLog:
    actions: list[Intervention] = field(default_factory=list)
    waits: list[Wait] = field(default_factory=list)


def read_interventions(path: Path) -> InterventionLog:
    """The interventions and waits of the transcript at ``path`` (none when there is none)."""
    return collect(_stream(path))


def _stream(path: Path) -> Iterator[Event | Tick]:
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            head = _HEAD.match(line)
            if head is not None and (kind := head[2].decode()) not in WAIT_KINDS:
                yield Tick(head[1].decode(), kind)
            elif line.strip():
                try:
                    yield EVENT_ADAPTER.validate_json(line)
                except ValueError:  # a torn last line (a kill mid-write)
                    continue


def collect(events: Iterable[Event | Tick]) -> InterventionLog:
    """The interventions and waits of ``events`` in transcript order (module docstring)."""
    found = _Collector()
    for event in events:
        found.add(event)
        found.previous = event.t
    if found.wait is not None and found.wait.waiting:  # the transcript ends as the run waits for the operator
        found.wait.for_operator = True
    return found.log


class _Collector:
    def __init__(self) -> None:
        self.log = InterventionLog()
        self.wait: Wait | None = None  # the wait open
        self.pause: Intervention | None = None  # the pause not yet over
        self.previous = ""  # the time of the event before

    def add(self, event: Event | Tick) -> None:
        if isinstance(event, ModelRetried):
            self._open(event.where).retries += 1
            self._wait().reason = event.reason
        elif isinstance(event, ErrorOccurred):
            if event.fatal:
                self._close(event.t)
            elif event.where in CALLERS:
                wait = self._open(event.where)
                wait.failures += 1
                wait.reason = _MODEL.sub("", event.message.split(" (attempt ")[0])  # the loop's words off
        elif isinstance(event, StatusChanged):
            self._status(event)
        elif isinstance(event, OperatorActed):
            self._operator(event)
        elif isinstance(event, RunEnded):
            if self.wait is not None:
                if event.reason is TerminationReason.WAITING:
                    self.wait.for_operator = True
                else:
                    self._close(event.t)
        elif isinstance(event, RunStarted):
            self._restart(event.t)
        elif event.kind not in WAIT_KINDS:  # the run moved on
            self._close(event.t)

    def _wait(self) -> Wait:
        assert self.wait is not None
        return self.wait

    def _open(self, what: str) -> Wait:
        """The wait open for ``what``, or a new one from the event before (where the call began)."""
        if self.wait is not None and self.wait.what == what:
            return self.wait
        start = self.previous
        self._close(start)
        self.wait = Wait(what=what, start=start)
        self.log.waits.append(self.wait)
        return self.wait

    def _close(self, end: str) -> None:
        if self.wait is not None:
            self.wait.end, self.wait = end, None

    def _status(self, event: StatusChanged) -> None:
        wait = self.wait
        if event.status == "waiting":
            if wait is None:  # waiting with no failure: for the operator
                wait = self.wait = Wait(what="operator", start=event.t, reason=event.reason)
                self.log.waits.append(wait)
            wait.waiting = True
        elif event.status == "running" and wait is not None and wait.waiting and not wait.for_operator:
            wait.revived = wait.what == "agent"  # a back-off over (the agent started again after its own)

    def _operator(self, event: OperatorActed) -> None:
        if event.action == "resume" and self.pause is not None:
            self.pause.until, self.pause = event.t, None
            return
        action = Intervention(action=event.action, at=event.t, detail=event.detail, cut=event.cut)
        self.log.actions.append(action)
        if event.action == "pause":
            self.pause = action
        if event.cut and event.cut != "back-off" and self.wait is None:  # a call cut short: waited since
            self.wait = Wait(what=event.cut, start=self.previous)  # the event before it
            self.log.waits.append(self.wait)
        if (event.cut or event.action == "pause") and self.wait is not None:  # the operator ended the wait
            self.wait.cut = (
                event.action
            )  # (the call goes again at once, or on resume: a pause is timed apart)
            self._close(event.t)

    def _restart(self, at: str) -> None:
        if self.pause is not None:  # killed or stopped while paused: paused until it played again
            self.pause.until, self.pause.restarted, self.pause = at, True, None
        if self.wait is not None:
            if self.wait.for_operator:
                self.wait.resumed = at
            else:  # a kill or a stop ended it: the last event before the restart
                self.wait.restarted = True
                self._close(self.previous)


# ---- the entry's lines ------------------------------------------------------------------------------------


def intervention_lines(log: InterventionLog | None, virtual: bool, now: datetime) -> list[str]:
    """``Operator: …`` and ``Waits over a minute: …`` (none without a log: an entry not made from a run).
    ``virtual``: the run's clock is virtual; ``now``: the run's clock when the entry is written."""
    if log is None:
        return []
    clock = "virtual clock" if virtual else "local time"
    waits = [(w, _seconds(w, now)) for w in log.waits]
    listed = [(w, s) for w, s in waits if s > LONG_WAIT or w.for_operator]
    stamps = [a.at for a in log.actions] + [t for w, _ in listed for t in (w.start, w.end)]
    days = len({stamp[:10] for stamp in stamps if stamp}) > 1
    actions = [_action(a, days) for a in log.actions]
    waited = [_wait(w, s, days, virtual) for w, s in listed]
    return [
        "Operator: " + _counted(actions, "intervention", clock),
        "Waits over a minute: " + _counted(waited, "", clock),
    ]


def _counted(items: list[str], noun: str, clock: str) -> str:
    if not items:
        return "none"
    count = f"{len(items)} {noun}{'s' * (len(items) > 1)}".rstrip() if noun else str(len(items))
    more = f", … and {len(items) - LISTED} more" if len(items) > LISTED else ""
    return f"{count} ({clock}) — " + ", ".join(items[:LISTED]) + more


def _when(stamp: str, days: bool) -> str:
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return "?"
    return f"{moment:%m-%d %H:%M}" if days else f"{moment:%H:%M}"


def _seconds(wait: Wait, now: datetime) -> float:
    try:
        start = datetime.fromisoformat(wait.start)
        end = datetime.fromisoformat(wait.end) if wait.end else now
    except ValueError:
        return 0.0
    return max(0.0, (end - start).total_seconds())


def duration(seconds: float) -> str:
    """``45s``, ``2m10s``, ``12m``, ``3h17m``, ``2d3h``."""
    s = int(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s" if s % 60 else f"{s // 60}m"
    if s < 86400:
        return f"{s // 3600}h{s % 3600 // 60:02d}m" if s % 3600 // 60 else f"{s // 3600}h"
    return f"{s // 86400}d{s % 86400 // 3600}h"


def _action(action: Intervention, days: bool) -> str:
    notes = []
    if action.action == "pause":
        notes.append(_paused(action))
    if action.cut:
        notes.append(_cut_name(action.cut) + (" cut short" if action.action == "pause" else ""))
    elif action.detail.startswith("refused"):
        notes.append("refused")
    elif action.action in ("next_phase", "edit_fact", "add_fact") and action.detail:
        notes.append(one_line(action.detail.splitlines()[0], 48))
    said = f" ({', '.join(notes)})" if notes else ""
    return f"{LABELS.get(action.action, action.action)} {_when(action.at, days)}{said}"


def _paused(pause: Intervention) -> str:
    if not pause.until:
        return "still paused"
    try:
        seconds = (datetime.fromisoformat(pause.until) - datetime.fromisoformat(pause.at)).total_seconds()
    except ValueError:
        seconds = 0.0
    return f"paused {duration(max(0.0, seconds))}" + (", until the restart" if pause.restarted else "")


def _cut_name(cut: str) -> str:
    if cut == "back-off":
        return "the back-off"
    return "the wait for the agent's reply" if cut == "agent reply" else f"the {cut} call"


def _wait(wait: Wait, seconds: float, days: bool, virtual: bool) -> str:
    start = _when(wait.start, days)
    if wait.end:
        end = _when(wait.end, days and wait.end[:10] != wait.start[:10])
        notes = [duration(seconds)]
        span = f"{start}–{end}"
    else:
        notes, span = [f"{duration(seconds)} so far"], f"from {start}"
    if wait.retries:
        plural = "ies" if wait.retries > 1 else "y"
        notes.append(f"{wait.retries} retr{plural} after {one_line(wait.reason, 48)}")
    elif wait.failures:
        notes.append(
            f"failed{f' {wait.failures}×' if wait.failures > 1 else ''}: {one_line(wait.reason, 48)}"
        )
    elif wait.reason:
        notes.append(one_line(wait.reason, 48))
    if wait.revived:
        notes.append("revived")
    if wait.cut:
        notes.append(f"cut short by the operator ({LABELS.get(wait.cut, wait.cut)})")
    operator = wait.what == "operator"
    if wait.resumed:
        down = " (the virtual clock stood still while the run was down)" if virtual else ""
        notes.append(
            f"{'' if operator else 'waited for the operator, '}resumed {_when(wait.resumed, days)}{down}"
        )
    elif wait.for_operator and not operator:
        notes.append("waited for the operator" if wait.end else "waiting for the operator")
    if wait.restarted:
        notes.append("until the run stopped")
    return f"{'for the operator' if operator else wait.what} {span} ({', '.join(notes)})"
