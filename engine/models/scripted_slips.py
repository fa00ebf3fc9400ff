"""The slips the scripted persona plays on purpose (``scripted/persona?slips=a,b``), for tests of contracts.

Owns the slip names (``SLIPS``, checked by ``check_slips``) and the slips that reshape a whole step: the
check left unasked (``skipped_check``, until a gate names it) and the echo of the agent's last reply
(``maybe_echo``). The slips inside one action (grading ahead, attempt 2 first, skipping an edit or a retell)
are played where that action is decided, in ``scripted_persona.py``.
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


def maybe_echo(slips: frozenset[str], step: Step, messages: list[Message], start: int) -> Step:
    """``echo``: the first message of a phase repeats the agent's last reply (the guard refuses it)."""
    if "echo" not in slips or step[0][0] != "send_message":
        return step
    if any(str(m.get("content") or "").startswith("ERROR: echo guard") for m in messages[start:]):
        return step
    last = next(
        (
            reply_body(m.get("content"))
            for m in reversed(messages)
            if m["role"] == "tool" and str(m.get("content") or "").startswith("The assistant replied")
        ),
        None,
    )
    if not last or len(last) < _ECHO_MIN_CHARS:
        return step
    return [("send_message", {"text": last})]
