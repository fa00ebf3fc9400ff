"""How the scripted persona answers a ``next_phase`` gate error: by doing what the error names.

Owns the reading of the gates' messages (an Edit not held, a fact to delete, an Add missing, a change not
told, ungraded checks, untold facts, a ``wait`` to make) and the step each one calls for. Telling a sheet
and grading a check are the persona's own steps, handed in as ``tell`` and ``check``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from engine.models.persona_plan import Action
from engine.models.scripted_history import Call, Step

_GATE_EDIT = re.compile(
    r"`([\w-]+)` (\d+\.\d+) does not hold the directed text: .*?exactly this text: «(.*?)»"
)
_GATE_ADD = re.compile(r"`([\w-]+)` category (\d+) lacks the fact to add: .*?exactly this text: «(.*?)»")
_GATE_DELETE = re.compile(r"`([\w-]+)` (\d+\.\d+) must be deleted")
_GATE_UNTOLD_CHANGE = re.compile(r"`([\w-]+)` (\d+\.\d+) was changed but not told")
_GATE_UNGRADED = re.compile(r"ungraded checks: ([\d., ]+)")
_GATE_UNTOLD = re.compile(r"untold facts in `([\w-]+)`")
_GATE_WAIT = re.compile(r"use wait until (\d{1,2}:\d{2})")

CheckStep = Callable[[str, str, str, list[Call]], Step | None]
"""The persona's next step for a check: (check id, question, correct answer, calls) → step or None."""
TellStep = Callable[[str, list[Call]], Step | None]
"""The persona's next step to tell a sheet: (sheet, calls) → step or None."""


def answer_gate(
    error: str, calls: list[Call], plan: list[Action], check: CheckStep, tell: TellStep
) -> Step | None:
    """The step that answers a gate's ``error``; None when it names nothing the persona can do."""
    for sheet, fact_id, text in _GATE_EDIT.findall(error):
        return [
            ("facts_edit", {"sheet": sheet, "id": fact_id, "text": text}),
            ("send_message", {"text": f"Update: {text}"}),
            ("facts_mark_told", {"sheet": sheet, "ids": [fact_id]}),
        ]
    for sheet, fact_id in _GATE_DELETE.findall(error):
        return [("facts_edit", {"sheet": sheet, "id": fact_id, "text": "—"})]
    for sheet, category, text in _GATE_ADD.findall(error):
        return [
            ("facts_add", {"sheet": sheet, "category": int(category), "text": text}),
            ("send_message", {"text": f"Also: {text}"}),
        ]
    for sheet, fact_id in _GATE_UNTOLD_CHANGE.findall(error):
        return [
            ("send_message", {"text": f"Update: {_changed_text(plan, sheet, fact_id)}"}),
            ("facts_mark_told", {"sheet": sheet, "ids": [fact_id]}),
        ]
    if m := _GATE_UNGRADED.search(error):
        wanted = {i.strip() for i in m.group(1).split(",")}
        for action in plan:
            if action.kind == "check" and action.args["id"] in wanted:
                step = check(action.args["id"], action.args["q"], action.args["a"], calls)
                if step:
                    return step
    for sheet in _GATE_UNTOLD.findall(error):
        step = tell(sheet, calls)
        if step:
            return step
    if m := _GATE_WAIT.search(error):
        return [("wait", {"until": m.group(1)})]
    return None


def _changed_text(plan: list[Action], sheet: str, fact_id: str) -> str:
    """The text the phase changed ``sheet``'s ``fact_id`` to: its Edit, else the sheet's first Add, else ""."""
    edited = next(
        (
            a.args["text"]
            for a in plan
            if a.kind == "edit" and a.args["sheet"] == sheet and a.args["id"] == fact_id
        ),
        None,
    )
    if edited is not None:
        return edited
    return next((a.args["text"] for a in plan if a.kind == "add" and a.args["sheet"] == sheet), "")
