"""Phases as the persona sees them: rendering, gates, and parsing of ``wait`` targets."""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from engine.benchmark.model import Phase
from engine.benchmark.templates import render_templates
from engine.persona.notebook import Notebook
from engine.state import RunState

FINISHED_TEXT = "The scenario is complete: there are no more phases. Thank you."


def render_phase(phase: Phase, total: int, start: date, vars_: dict[str, object]) -> str:
    """The phase plan handed to the persona: body with templates rendered, plus what the gates need."""
    lines = [f"Phase {phase.index + 1}/{total} ({phase.chapter}: {phase.title})", "", render_templates(phase.body.strip(), start)]
    required = required_sheets(vars_)
    if required:
        lines += ["", "Before next_phase: tell every fact of " + ", ".join(f"`{s}`" for s in required) + "."]
    if vars_.get("require_all_checks") and phase.checks:
        lines += ["", "Before next_phase: ask and grade every check of this phase."]
    return "\n".join(lines)


def required_sheets(vars_: dict[str, object]) -> list[str]:
    value = vars_.get("require_all_facts")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def gate_problems(state: RunState, phase: Phase, time_gate: bool, now: datetime) -> list[str]:
    """What next_phase is waiting for; empty when the phase may end."""
    problems: list[str] = []
    notebook = Notebook(state)
    for sheet_name in required_sheets(state.phase_vars):
        if sheet_name not in state.sheets:
            continue
        untold = [f.id for f in notebook.untold(sheet_name)]
        if untold:
            problems.append(f"untold facts in `{sheet_name}`: {', '.join(untold)} (tell them, then facts_mark_told)")
    if state.phase_vars.get("require_all_checks"):
        ungraded = [c.id for c in phase.checks if c.id not in state.evaluations]
        if ungraded:
            problems.append(f"ungraded checks: {', '.join(ungraded)} (ask them, then log_evaluation)")
    if time_gate:
        anchor = phase.last_anchor()
        if anchor is not None and now < anchor:
            problems.append(
                f"it is {now:%a %d %b %H:%M}; this phase lasts until {anchor:%a %d %b %H:%M} "
                f"(use wait until {anchor:%H:%M})"
            )
    return problems


_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")


def parse_wait_target(until: str, now: datetime, phase_day: date | None = None) -> datetime:
    """``HH:MM`` or ``YYYY-MM-DD HH:MM`` / ISO.

    A time of day means the next occurrence, except in a phase whose date line is still ahead: then it
    is that time on the phase's day (the date line fixes the phase's date).
    """
    text = until.strip()
    match = _TIME.match(text)
    if match:
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour > 23 or minute > 59:
            raise ValueError(f"not a time of day: {until!r}")
        if phase_day is not None and phase_day > now.date():
            return datetime.combine(phase_day, time(hour, minute))
        target = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
        return target if target >= now else target + timedelta(days=1)
    try:
        return datetime.fromisoformat(text.replace("T", " "))
    except ValueError:
        raise ValueError(f"cannot read {until!r}: use HH:MM or YYYY-MM-DD HH:MM") from None
