"""Typed events: the one vocabulary of everything a run does.

The same objects are appended to ``transcript.jsonl``, printed by the headless runner, rendered by the TUI
and read back by reports and tests. Each has a ``kind`` tag; ``Event`` is the discriminated union.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter

RunStatus = Literal["idle", "running", "paused", "waiting", "finished", "crashed", "error"]
"""A run's status, everywhere: state, events, read models, screens ("error": its config cannot start it)."""

ErrorWhere = Literal["persona model", "agent", "js", "engine", "judge model"]
"""Where an error came from."""

OperatorAction = Literal[
    "pause", "resume", "next_phase", "edit_fact", "add_fact", "new_session", "persona_note", "abort_call"
]
"""What an operator did: one per command kind (``engine/commands.py``)."""

WaitingFor = Literal["", "persona model", "agent reply", "virtual sleep", "judge model", "back-off"]
"""What a playing run waits for now (``engine/run/liveness.py``; ``back-off``: the wait before the next attempt
after a failure, ``OperatorDesk.back_off``); "" while it works between those waits."""

CutShort = Literal["", "persona model", "agent reply", "judge model", "back-off"]
"""What an operator's ``abort_call`` or ``pause`` cut short: a call the run waited for, or the back-off after a
failure; "" nothing."""


ActionKind = Literal["memory write", "memory read", "file write", "file read", "command", "search", "other"]
"""What one of the agent's own tool calls did (``AgentActed``), for its marker and the report's counts."""
# characters of an action's summary kept in its event (a whole file written is not repeated)
ACTION_TEXT = 300


class TerminationReason(enum.StrEnum):
    """Why a run's loop ended."""

    FINISHED = "finished"
    STOPPED = "stopped"  # cancelled by the operator or Ctrl-C; resumable
    WAITING = "waiting"  # a fault outlived its retries, or the persona is stuck; resumable
    CRASHED = "crashed"  # a bug: reported, resumable after the fix


class _Event(BaseModel):
    t: str = ""  # virtual time (ISO, seconds) when it happened; stamped by the run
    n: int = 0  # position in the transcript, stamped by the run


class RunStarted(_Event):
    """▶️ a run (re)started."""

    kind: Literal["run_started"] = "run_started"
    run_id: str
    benchmark: str  # the benchmark's name
    agent: str  # the adapter's name
    resumed: bool = False  # continued from state.json


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
    name: str  # the tool
    arguments: dict[str, Any] = Field(default_factory=dict)  # as the model gave them (parsed JSON)
    result: str = ""  # what the model got back
    error: bool = False  # the call was refused: result starts with "ERROR:"


Redelivery = Literal["", "collected", "duplicated", "possibly_duplicated"]


class MessageSent(_Event):
    """👤 a persona message delivered to the agent."""

    kind: Literal["message_sent"] = "message_sent"
    text: str  # exactly what the agent received
    # a message in flight at a kill or a timeout, checked with the agent before it went again:
    # "" a first send (or it never arrived); "collected" it had arrived and was answered: not sent again;
    # "duplicated" it had arrived unanswered: sent again, it is twice in the agent's session;
    # "possibly_duplicated" the agent cannot say: sent again
    redelivery: Redelivery = ""


class AgentReplied(_Event):
    """🤖 one reply message of the agent."""

    kind: Literal["agent_replied"] = "agent_replied"
    text: str
    seq: int = 0  # the adapter's reply sequence number (from 1)


class EvaluationLogged(_Event):
    """📊 a grade; the run's state keeps the latest per check (this same record)."""

    kind: Literal["evaluation_logged"] = "evaluation_logged"
    check_id: str
    score: float  # as given by the persona, 0-10
    attempt: int  # 1, or 2 after a search request (counts half)
    effective: float  # after the attempt-2 factor
    question: str = ""  # the check's question, templates rendered
    expected: str = ""  # the check's correct answer, templates rendered
    answer: str = ""  # the persona's summary of the agent's answer
    comment: str = ""  # the persona's comment
    types: list[str] = Field(default_factory=list)  # check types (RECALL, AGG, …)
    phase_index: int = 0  # 0-based phase it was graded in
    replies: list[str] = Field(default_factory=list)  # the agent's verbatim replies to the question
    persona_fault: str = (
        ""  # non-empty: the grade's premise failed (a persona slip); left out of the agent's score
    )
    replaces: str = ""  # a regrade: the grade it replaces, e.g. "10/10, attempt 1 (#57)"
    premise: list[str] = Field(
        default_factory=list
    )  # what the premise check looked for in the transcript (values, facts); empty: nothing to check


class JudgeGraded(_Event):
    """⚖️ the judge's own grade of an answer the persona graded (a second opinion).

    From the same question, correct answer and verbatim replies; the run's state keeps the latest per check
    (this same record)."""

    kind: Literal["judge_graded"] = "judge_graded"
    check_id: str
    evaluation_n: int  # the transcript number of the persona's grade (``evaluation_logged``) it judges
    judge: str  # the judge's name: a model of config.jsonc, or scripted/judge
    score: float | None = None  # 0-10 as the judge gave it (before the attempt-2 factor); None: ``error``
    comment: str = ""
    error: str = ""  # why the judge gave no grade (a failed call, a reply that could not be read)
    persona_score: float | None = None  # the persona's score of the same answer, for the side-by-side view


class PersonaCompacted(_Event):
    """✂️ the persona's context was cut at a phase boundary."""

    kind: Literal["persona_compacted"] = "persona_compacted"
    tokens_before: int
    tokens_after: int
    estimated: bool = False  # counted with the offline estimate, not tiktoken


class AgentCompacted(_Event):
    """An observation reported by the adapter's get_status (it does not affect grades)."""

    kind: Literal["agent_compacted"] = "agent_compacted"
    phase_index: int  # 0-based phase the agent compacted in
    tokens_before: int | None = None  # the agent's context size, where it reports one
    tokens_after: int | None = None
    detail: str = ""  # the adapter's words


class AgentActed(_Event):
    """🧰 a tool call the agent under test made, read from its own records (a memory write, a read, a command)."""

    kind: Literal["agent_action"] = "agent_action"
    tool: str  # the agent's own name of the tool
    action: ActionKind = "other"  # what it did: memory write, memory read, file write, command, …
    target: str = ""  # the memory file (or path) it wrote or read
    summary: str = ""  # what it did, cut to ACTION_TEXT characters
    error: str = ""  # the tool's own failure, when it reported one
    phase_index: int = 0  # 0-based phase it happened in


class SessionSwitched(_Event):
    """🔄 the agent started a new conversation (long-term memory kept)."""

    kind: Literal["session_switched"] = "session_switched"
    ignored: bool = False  # true in runs with ignore_session_break
    by_operator: bool = False


class ClockJumped(_Event):
    """⏩ the Time Master wound the virtual clock forward."""

    kind: Literal["clock_jumped"] = "clock_jumped"
    from_time: str  # ISO
    to_time: str  # ISO


class HookFired(_Event):
    """🪝 a persona hook refused a turn (nothing reached the agent)."""

    kind: Literal["hook_fired"] = "hook_fired"
    hook: Literal["plain_text_guard", "echo_guard"]
    detail: str = ""  # why


class ModelRetried(_Event):
    """🔁 a model call failed and is tried again (a 429, a 5xx, a timeout, a malformed answer)."""

    kind: Literal["model_retry"] = "model_retry"
    where: ErrorWhere = "persona model"
    attempt: int  # the attempt about to be made: 2 after the first failed
    of: int  # attempts in all
    delay: float  # seconds before it (the server's Retry-After, or the backoff)
    reason: str  # why the last attempt failed


class ErrorOccurred(_Event):
    """❌ something failed; ``fatal`` ended the run."""

    kind: Literal["error"] = "error"
    message: str
    where: ErrorWhere = "engine"
    fatal: bool = False


class OperatorActed(_Event):
    """🧑‍✈️ an operator command was applied (or refused: ``detail`` says so)."""

    kind: Literal["operator"] = "operator"
    action: OperatorAction
    detail: str = ""
    cut: CutShort = ""  # an abort_call or a pause: what it cut short (the report times the call it ended)


class StatusChanged(_Event):
    """• the run's status changed."""

    kind: Literal["status"] = "status"
    status: RunStatus
    reason: str = ""  # why waiting / paused / crashed


class RunEnded(_Event):
    """⏹️ the run's loop ended."""

    kind: Literal["run_ended"] = "run_ended"
    reason: TerminationReason
    detail: str = ""  # the status reason at the end
    # the run's tokens so far per role (persona, agent, judge): prompt (cached included), cached, completion
    tokens: dict[str, dict[str, int]] = Field(default_factory=dict)


Event = Annotated[
    RunStarted
    | PhaseStarted
    | PersonaThinking
    | ToolCalled
    | MessageSent
    | AgentReplied
    | EvaluationLogged
    | JudgeGraded
    | PersonaCompacted
    | AgentCompacted
    | AgentActed
    | SessionSwitched
    | ClockJumped
    | HookFired
    | ModelRetried
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
    "judge_graded": "⚖️",
    "persona_compacted": "✂️",
    "agent_compacted": "✂️",
    "agent_action": "🧰",
    "session_switched": "🔄",
    "clock_jumped": "⏩",
    "hook_fired": "🪝",
    "model_retry": "🔁",
    "error": "❌",
    "operator": "🧑‍✈️",
    "status": "•",
    "run_started": "▶️",
    "run_ended": "⏹️",
}
