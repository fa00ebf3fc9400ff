"""Typed operator commands: how a front end steers a run (never by reaching into engine internals).

Commands are queued on a run and applied between persona turns; each one is recorded in the transcript
as an ``OperatorActed`` event. Two act at once: ``Resume``, and ``AbortCall``, which cuts the model or agent
call the run waits for short (it is made again now) or its back-off after a failure; a ``Pause`` also cuts
the call in flight, so it never waits behind a hung call (the cut call is made again on resume).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from engine.events import WaitingFor


class Pause(BaseModel):
    kind: Literal["pause"] = "pause"


class Resume(BaseModel):
    kind: Literal["resume"] = "resume"


class NextPhase(BaseModel):
    kind: Literal["next_phase"] = "next_phase"
    force: bool = False  # override the gates (require_all_facts, require_all_checks, time gate)


class EditFact(BaseModel):
    kind: Literal["edit_fact"] = "edit_fact"
    sheet: str
    fact_id: str
    text: str


class AddFact(BaseModel):
    kind: Literal["add_fact"] = "add_fact"
    sheet: str
    category: int
    text: str


class NewSession(BaseModel):
    kind: Literal["new_session"] = "new_session"


class PersonaNote(BaseModel):
    kind: Literal["persona_note"] = "persona_note"
    text: str


class AbortCall(BaseModel):
    """Cut short the call the run waits for (persona model, judge model, the agent's reply) and make it again
    now, or the back-off before the next attempt after a failure ("retry now")."""

    kind: Literal["abort_call"] = "abort_call"


Command = Annotated[
    Pause | Resume | NextPhase | EditFact | AddFact | NewSession | PersonaNote | AbortCall,
    Field(discriminator="kind"),
]

Interruption = Literal["abort", "pause"]
"""Why the operator cut a call short: to make it again now (``AbortCall``), or to pause (``Pause``)."""


class CallInterrupted(Exception):
    """Raised where a call was awaited when the operator cut it short (``engine/run/liveness.py``): the
    call's wait (``"persona model"``, ``"agent reply"``, ``"judge model"``), why, and after how long."""

    def __init__(self, what: WaitingFor, why: Interruption, seconds: float) -> None:
        super().__init__(f"{what}: cut short by the operator after {seconds:.0f} s ({why})")
        self.what: WaitingFor = what
        self.why: Interruption = why
        self.seconds = seconds


class CommandResult(BaseModel):
    """What became of a command, in the engine's words: done (``ok``) or refused, and why."""

    ok: bool
    message: str
