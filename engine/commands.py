"""Typed operator commands: how a front end steers a run (never by reaching into engine internals).

Commands are queued on a run and applied between persona turns; each one is recorded in the transcript
as an ``OperatorActed`` event.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field


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


Command = Annotated[
    Pause | Resume | NextPhase | EditFact | AddFact | NewSession | PersonaNote,
    Field(discriminator="kind"),
]


class CommandResult(BaseModel):
    """What became of a command, in the engine's words: done (``ok``) or refused, and why."""

    ok: bool
    message: str
