"""Typed events: the one vocabulary of everything a run does.

The same objects are appended to ``transcript.jsonl``, printed by the headless runner, rendered by the TUI
and read back by reports and tests. Each has a ``kind`` tag; ``Event`` is the discriminated union.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter


class _Event(BaseModel):
    t: str = ""  # virtual time (ISO, seconds) when it happened; stamped by the run
    n: int = 0  # position in the transcript, stamped by the run


class RunStarted(_Event):
    kind: Literal["run_started"] = "run_started"
    run_id: str
    benchmark: str
    agent: str
    resumed: bool = False


class PhaseStarted(_Event):
    """⚙️ the phase plan handed to the persona (templates rendered)."""

    kind: Literal["phase_started"] = "phase_started"
    index: int  # 0-based over the whole benchmark
    total: int
    chapter: str
    title: str
    text: str


class PersonaThinking(_Event):
    """💡 the persona's own words that were not a message (content or provider reasoning)."""

    kind: Literal["persona_thinking"] = "persona_thinking"
    text: str


class ToolCalled(_Event):
    """🔧 a persona tool call and its result."""

    kind: Literal["tool_called"] = "tool_called"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str = ""
    error: bool = False


class MessageSent(_Event):
    """👤 a persona message delivered to the agent."""

    kind: Literal["message_sent"] = "message_sent"
    text: str


class AgentReplied(_Event):
    """🤖 one reply message of the agent."""

    kind: Literal["agent_replied"] = "agent_replied"
    text: str
    seq: int = 0


class EvaluationLogged(_Event):
    kind: Literal["evaluation_logged"] = "evaluation_logged"
    check_id: str
    score: float  # as given by the persona, 0-10
    attempt: int
    effective: float  # after the attempt-2 factor
    question: str = ""
    expected: str = ""
    answer: str = ""
    comment: str = ""
    types: list[str] = Field(default_factory=list)
    phase_index: int = 0
    replies: list[str] = Field(default_factory=list)  # the agent's verbatim replies to the question
    persona_fault: str = ""  # non-empty: the grade's premise failed (a persona slip); left out of the agent's score
    replaces: str = ""  # a regrade: the grade it replaces, e.g. "10/10, attempt 1 (#57)"


class PersonaCompacted(_Event):
    kind: Literal["persona_compacted"] = "persona_compacted"
    tokens_before: int
    tokens_after: int
    estimated: bool = False


class AgentCompacted(_Event):
    """An observation reported by the adapter's get_status (it does not affect grades)."""

    kind: Literal["agent_compacted"] = "agent_compacted"
    phase_index: int
    tokens_before: int | None = None
    tokens_after: int | None = None
    detail: str = ""


class SessionSwitched(_Event):
    kind: Literal["session_switched"] = "session_switched"
    ignored: bool = False  # true in runs with ignore_session_break
    by_operator: bool = False


class ClockJumped(_Event):
    kind: Literal["clock_jumped"] = "clock_jumped"
    from_time: str
    to_time: str


class HookFired(_Event):
    kind: Literal["hook_fired"] = "hook_fired"
    hook: Literal["plain_text_guard", "echo_guard"]
    detail: str = ""


class ErrorOccurred(_Event):
    kind: Literal["error"] = "error"
    message: str
    where: str = ""  # persona, agent, model, js, engine
    fatal: bool = False


class OperatorActed(_Event):
    kind: Literal["operator"] = "operator"
    action: str
    detail: str = ""


class StatusChanged(_Event):
    kind: Literal["status"] = "status"
    status: Literal["idle", "running", "paused", "waiting", "finished", "crashed"]
    reason: str = ""


class RunEnded(_Event):
    kind: Literal["run_ended"] = "run_ended"
    reason: str  # a TerminationReason value
    detail: str = ""


Event = Annotated[
    RunStarted
    | PhaseStarted
    | PersonaThinking
    | ToolCalled
    | MessageSent
    | AgentReplied
    | EvaluationLogged
    | PersonaCompacted
    | AgentCompacted
    | SessionSwitched
    | ClockJumped
    | HookFired
    | ErrorOccurred
    | OperatorActed
    | StatusChanged
    | RunEnded,
    Field(discriminator="kind"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(line: str) -> Event:
    return EVENT_ADAPTER.validate_json(line)


MARKERS: dict[str, str] = {
    "phase_started": "⚙️",
    "persona_thinking": "💡",
    "tool_called": "🔧",
    "message_sent": "👤",
    "agent_replied": "🤖",
    "evaluation_logged": "📊",
    "persona_compacted": "✂️",
    "agent_compacted": "✂️",
    "session_switched": "🔄",
    "clock_jumped": "⏩",
    "hook_fired": "🪝",
    "error": "❌",
    "operator": "🧑‍✈️",
    "status": "•",
    "run_started": "▶️",
    "run_ended": "⏹️",
}
