"""How reliable the persona was and when the agent's context was cleared, counted while a run plays (issue 21).

``PersonaRecord`` is a few counters kept in ``state.json`` (bounded, not journaled): the persona's refused tool
calls by tool name, the hooks' refusals (plain-text guard, echo guard, empty completions), the grades that replaced
an earlier grade of their check (regrades apart from the attempt 2s that replaced their attempt 1), and the new
sessions of the agent with whether each cleared its context. ``PersonaTally`` counts them from the run's own events as they are recorded: it is an observer of its
run, called inside ``RunRecorder.emit`` right after the event is appended, so the counts and the transcript
always describe the same moment. A checkpoint saves both; a kill loses the events after it and their counts
together, and the replay counts them again, exactly once. The persona's model calls are the persona role's
``calls`` in the token usage (saved the same way). The report's lines: ``engine/report/trust.py``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Protocol

from pydantic import BaseModel, Field

from engine.agents import AgentAdapter
from engine.events import ErrorOccurred, EvaluationLogged, Event, HookFired, SessionSwitched, ToolCalled

# distinct refused tool names kept (a model may call any name): the calls of later ones count as "other"
MAX_TOOL_NAMES = 12
MAX_SESSIONS = 16  # the latest new sessions kept (their total is counted apart)
OTHER = "other"
# the attempt of the grade a regrade replaces, in ``EvaluationLogged.replaces``: "10/10, attempt 1 (#57)"
_REPLACED_ATTEMPT = re.compile(r"\battempt (\d)")
EMPTY = "empty"  # the guards' key of an empty completion (refused by the hooks, not a guard)
EMPTY_COMPLETION = "the persona model returned an empty completion"  # the hooks' error for an empty turn


class SessionMark(BaseModel):
    """One new session of the agent: where it came, and whether it cleared the agent's context."""

    n: int  # the ``session_switched`` event's transcript number
    phase_index: int  # 0-based phase it came in (a benchmark's ``bench.newSession()``: the phase it starts)
    by_operator: bool = False
    ignored: bool = False  # ``ignore_session_break``: no new session was started
    clears: bool = True  # the adapter's new session clears the agent's context (``chatbot``'s does not)


class PersonaRecord(BaseModel):
    """The counts of a run's persona slips and the agent's new sessions (``RunState.persona_record``)."""

    since: int = Field(default=0, ge=0)  # the transcript number counting began at (0: the whole run)
    refused: dict[str, int] = Field(default_factory=dict)  # tool name -> refused calls
    # turns the hooks refused, by hook: "plain_text_guard", "echo_guard", "empty" (an empty completion)
    guards: dict[str, int] = Field(default_factory=dict)
    replaced: int = Field(default=0, ge=0)  # regrades: grades that replaced one of their check (not 1 -> 2)
    # attempt 2s that replaced their check's attempt 1 (1 -> 2); a record saved before they were counted (state
    # version 2) gets them from the run's grades when it is read (``count_second_attempts``)
    second_attempts: int = Field(default=0, ge=0)
    sessions: list[SessionMark] = Field(default_factory=list)  # the latest ``MAX_SESSIONS``
    sessions_total: int = Field(default=0, ge=0)

    def note(self, event: Event, phase_index: int, clears: bool) -> None:
        """Count ``event`` (``phase_index``: the run's current phase; ``clears``: the adapter's new session
        clears its context)."""
        if isinstance(event, ToolCalled) and event.error:
            name = event.name if event.name in self.refused or len(self.refused) < MAX_TOOL_NAMES else OTHER
            self.refused[name] = self.refused.get(name, 0) + 1
        elif isinstance(event, HookFired):
            self._guard(event.hook)
        elif isinstance(event, ErrorOccurred) and event.message.startswith(EMPTY_COMPLETION):
            self._guard(EMPTY)
        elif isinstance(event, EvaluationLogged) and event.replaces:
            if not second_attempt(event):
                self.replaced += 1
            else:
                self.second_attempts += 1
        elif isinstance(event, SessionSwitched):
            mark = SessionMark(
                n=event.n,
                phase_index=phase_index,
                by_operator=event.by_operator,
                ignored=event.ignored,
                clears=clears,
            )
            self.sessions = [*self.sessions, mark][-MAX_SESSIONS:]
            self.sessions_total += 1

    def _guard(self, kind: str) -> None:
        self.guards[kind] = self.guards.get(kind, 0) + 1

    @property
    def refused_total(self) -> int:
        return sum(self.refused.values())

    @property
    def replaced_total(self) -> int:
        """Every grade that replaced an earlier grade of its check (attempt 2s counted when they were)."""
        return self.replaced + self.second_attempts

    def count_second_attempts(self, grades: Iterable[EvaluationLogged]) -> None:
        """Count the attempt 2s of a record saved before they were counted, from the run's latest grades: an
        attempt 2 is final in its check's one phase, so each check whose grade is an attempt 2 had exactly one
        attempt 2 replace its attempt 1 (those before ``since`` left out, as the record's other counts)."""
        self.second_attempts = sum(1 for e in grades if e.attempt == 2 and e.n >= self.since)

    @property
    def guards_total(self) -> int:
        return sum(n for kind, n in self.guards.items() if kind != EMPTY)


def second_attempt(e: EvaluationLogged) -> bool:
    """An attempt 2 that replaces its check's attempt 1: the grading rules' own course, not a regrade."""
    previous = _REPLACED_ATTEMPT.search(e.replaces)
    return e.attempt == 2 and previous is not None and previous.group(1) == "1"


class _Counted(Protocol):
    """What the tally reads and writes of the run's state (``engine/state.py`` ``RunState``)."""

    persona_record: PersonaRecord | None
    phase_index: int


class PersonaTally:
    """An observer of one run that counts its events into ``state.persona_record`` as they are recorded.

    A state without a record (a run started before these counts) gets one at the first event, marked with the
    transcript number it began at; a fresh run's begins at 0."""

    def __init__(self, state: _Counted, clears: bool) -> None:
        self.state = state
        self.clears = clears

    def on_event(self, run_id: str, event: Event) -> None:
        record = self.state.persona_record
        if record is None:
            record = self.state.persona_record = PersonaRecord(since=event.n)
        record.note(event, self.state.phase_index, self.clears)


def tally(state: _Counted, adapter: AgentAdapter) -> PersonaTally:
    """The counting observer of a run over ``state`` with ``adapter`` as its agent (``Run`` registers it): a
    new session clears the agent's context when the adapter ``supports_new_conversation`` (``chatbot``'s
    keeps its whole history)."""
    return PersonaTally(state, adapter.supports_new_conversation)
