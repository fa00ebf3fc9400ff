"""The slips the scripted persona plays on purpose (``scripted/persona?slips=a,b``), for tests of contracts.

Owns the slip names (``SLIPS``, checked by ``check_slips``) and the slips that reshape a whole step: the
check left unasked (``skipped_check``, until a gate names it) and the echo of the agent's last reply
(``EchoSlip``, the one slip that remembers: the guard drops the echo's whole cycle). The slips inside one
action (grading ahead, attempt 2 first, skipping an edit or a retell) are played where that action is decided,
in ``scripted_persona.py``.
"""

from __future__ import annotations

import re

from engine.models.base import Message
from engine.models.persona_plan import Action
from engine.models.scripted_history import Call, Step, reply_body

SLIPS = ("grade_ahead", "attempt2_first", "skip_edit", "skip_retell", "echo", "skip_check")
"""Slips a real persona model makes, played on purpose by ``scripted/persona?slips=a,b`` (tests of the
contracts that must refuse or record them): grade a check before asking it, log attempt 2 with no attempt 1,
tell an Edit without ``facts_edit``, mark an edit told without telling it, echo the agent's last reply, leave
a phase's first check unasked. After a refusal it does what the error says, as a model should."""

_ECHO_MIN_CHARS = 40  # a shorter reply is not worth echoing


def check_slips(slips: frozenset[str]) -> None:
    """Refuse an unknown slip name, naming the known ones."""
    unknown = sorted(slips - set(SLIPS))
    if unknown:
        raise ValueError(f"unknown slip {unknown[0]!r} (known: {', '.join(SLIPS)})")


def skipped_check(slips: frozenset[str], plan: list[Action]) -> str | None:
    """``skip_check``: the id of the phase's first check, left unasked; None without the slip."""
    if "skip_check" not in slips:
        return None
    return next((a.args["id"] for a in plan if a.kind == "check"), None)


def gate_named(calls: list[Call], check_id: str | None) -> bool:
    """Whether a ``next_phase`` error has named ``check_id`` among the ungraded checks."""
    return any(
        c.name == "next_phase"
        and c.result
        and "ungraded checks" in c.result
        and re.search(rf"\b{re.escape(check_id or '')}\b", c.result)
        for c in calls
    )


class EchoSlip:
    """``echo``: in each phase, the first message sent after an agent reply long enough to echo repeats that
    reply instead (the guard refuses it).

    The echo guard drops the whole cycle, so the next call sees the very context the echo was written at: a
    pure function of it would echo again until the run stopped as "persona stuck". So this slip, alone of the
    model's decisions, remembers something besides the history: the phases it has echoed in (by the text that
    started them), until the message it replaced is sent and the history says it. A model made again after a
    kill in between echoes again, as the run replays the dropped cycle from its checkpoint before it."""

    def __init__(self, slips: frozenset[str]) -> None:
        self.on = "echo" in slips
        self._echoed: set[str] = set()

    def apply(self, step: Step, messages: list[Message], start: int) -> Step:
        """``step``, or the echo that replaces it."""
        due = _echo_due(messages, start) if self.on and step[0][0] == "send_message" else None
        phase = str(messages[start].get("content") or "") if start < len(messages) else ""
        if due is None or phase in self._echoed:
            return step
        self._echoed.add(phase)
        return [("send_message", {"text": due})]


def _echo_due(messages: list[Message], start: int) -> str | None:
    """The agent's last reply, when it is long enough to echo and no message of this phase was sent after
    such a reply (that send is where the echo was played); else None."""
    last: str | None = None
    for index, message in enumerate(messages):
        content = str(message.get("content") or "")
        if message["role"] == "tool" and content.startswith("The assistant replied"):
            last = reply_body(content)
        elif index >= start and any(
            c["function"]["name"] == "send_message" for c in message.get("tool_calls") or []
        ):
            if last is not None and len(last) >= _ECHO_MIN_CHARS:
                return None
    return last if last is not None and len(last) >= _ECHO_MIN_CHARS else None
