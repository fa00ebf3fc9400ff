"""Phases as the persona sees them: rendering, gates, and parsing of ``wait`` targets."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from engine.benchmark.model import Benchmark, Phase
from engine.benchmark.templates import render_templates
from engine.grading.contract import directive_problems
from engine.persona.notebook import Notebook
from engine.state import RunState

FINISHED_TEXT = "The scenario is complete: there are no more phases. Thank you."
SESSION_SWITCH_NOTE = (
    "the assistant has just started a new conversation. It no longer sees anything of your chat so far; "
    "it keeps only what it stored in its long-term memory. Talk to it as you would after a break."
)
SESSION_KEPT_NOTE = (
    "the assistant has just started a new conversation, but this assistant keeps its whole chat history "
    "across conversations: it still sees everything of your chat so far. Talk to it as you would after a break."
)


def session_switch_note(clears_context: bool) -> str:
    """What the persona is told of a new agent session, true for the agent at hand: whether the switch clears
    the agent's context is the adapter's ``supports_new_conversation`` (``chatbot``: it does not)."""
    return SESSION_SWITCH_NOTE if clears_context else SESSION_KEPT_NOTE


def render_phase(
    phase: Phase, total: int, start: date, vars_: dict[str, object], phase_has_directives: bool = False
) -> str:
    """The phase plan handed to the persona: body with templates rendered, plus what the gates need."""
    lines = [
        f"Phase {phase.index + 1}/{total} ({phase.chapter}: {phase.title})",
        "",
        render_templates(phase.body.strip(), start),
    ]
    required = required_sheets(vars_)
    if required:
        lines += ["", "Before next_phase: tell every fact of " + ", ".join(f"`{s}`" for s in required) + "."]
    if checks_required(vars_) and phase.checks:
        lines += ["", "Before next_phase: ask and grade every check of this phase."]
    if phase_has_directives:
        lines += [
            "",
            "Before next_phase: carry out every Edit/Add line exactly as written, tell each change, "
            "then facts_mark_told.",
        ]
    return "\n".join(lines)


def required_sheets(vars_: dict[str, object]) -> list[str]:
    value = vars_.get("require_all_facts")
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(v) for v in value]
    return []


def checks_required(vars_: dict[str, object]) -> bool:
    """A phase's checks gate next_phase unless its js block sets ``vars.require_all_checks = false``."""
    return vars_.get("require_all_checks", True) is not False


def gate_problems(state: RunState, bench: Benchmark, now: datetime) -> list[str]:
    """What next_phase is waiting for; empty when the phase may end."""
    phase = bench.phases[min(state.phase_index, len(bench.phases) - 1)]
    problems: list[str] = directive_problems(state, bench)
    notebook = Notebook(state)
    for sheet_name in required_sheets(state.phase_vars):
        if sheet_name not in state.sheets:
            continue
        untold = [f.id for f in notebook.untold(sheet_name)]
        if untold:
            problems.append(
                f"untold facts in `{sheet_name}`: {', '.join(untold)} (tell them, then facts_mark_told)"
            )
    if checks_required(state.phase_vars):
        ungraded = [c.id for c in phase.checks if c.id not in state.evaluations]
        if ungraded:
            problems.append(f"ungraded checks: {', '.join(ungraded)} (ask each alone, then log_evaluation)")
    if bench.time_gate:
        anchor = phase.last_anchor()
        if anchor is not None and now < anchor:
            problems.append(
                f"it is {now:%a %d %b %H:%M}; this phase lasts until {anchor:%a %d %b %H:%M} "
                f"(use wait until {anchor:%H:%M})"
            )
    return problems


# ---- time: what ``wait`` means and how the persona is told the time --------------------------------

WAIT_FORMS = (
    "use HH:MM (that time today if still ahead, or on the phase's day when its date is ahead), "
    "YYYY-MM-DD HH:MM, or ISO YYYY-MM-DDTHH:MM[:SS]"
)
_TIME = re.compile(r"^(\d{1,2}):(\d{2})$")
_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{1,2}):(\d{2})(?::(\d{2}))?$")


@dataclass(frozen=True)
class WaitTarget:
    """Where a ``wait`` ends. ``ahead`` False: the asked time has already come, ``until`` is ``now``."""

    until: datetime
    asked: str  # the asked time, normalised: "20:00", "2026-03-02 21:00"
    ahead: bool


def parse_wait_target(until: str, now: datetime, phase_day: date | None = None) -> WaitTarget:
    """Read a ``wait`` target against ``now`` and the current phase's date (its date line, if any).

    ``HH:MM`` in a dated phase is that time on the phase's day: ahead, it is waited for; already come
    (the current minute, earlier on the phase's day, or the phase's day is over) it means now. Without a
    date line it is the next occurrence, where the current minute counts as now. ``YYYY-MM-DD HH:MM`` and
    ISO ``YYYY-MM-DDTHH:MM[:SS]``: that moment, or now when it is not ahead. Raises ``ValueError``
    naming the accepted forms.
    """
    text = until.strip()
    if match := _TIME.match(text):
        hour, minute = int(match.group(1)), int(match.group(2))
        if hour > 23 or minute > 59:
            raise ValueError(f"{until!r} is not a time of day: {WAIT_FORMS}")
        asked, at = f"{hour:02d}:{minute:02d}", time(hour, minute)
        if phase_day is not None:
            target = datetime.combine(phase_day, at)
        else:
            target = datetime.combine(now.date(), at)
            if target < now.replace(second=0, microsecond=0):  # earlier than the current minute: tomorrow
                target += timedelta(days=1)
        return WaitTarget(target, asked, True) if target > now else WaitTarget(now, asked, False)
    if match := _DATETIME.match(text):
        try:
            year, month, day, hour, minute, second = (int(g or 0) for g in match.groups())
            target = datetime(year, month, day, hour, minute, second)
        except ValueError:
            raise ValueError(f"{until!r} is not a valid date and time: {WAIT_FORMS}") from None
        asked = f"{target:%Y-%m-%d %H:%M}" + (f":{target:%S}" if target.second else "")
        return WaitTarget(target, asked, True) if target > now else WaitTarget(now, asked, False)
    raise ValueError(f"cannot read {until!r}: {WAIT_FORMS}")


def now_line(now: datetime) -> str:
    """The current virtual time as the persona is told it: "It is now Sunday 1 March 2026, 20:00." """
    return f"It is now {now:%A} {now.day} {now:%B %Y, %H:%M}."


def nothing_to_wait_for(target: WaitTarget, now: datetime) -> str:
    """The ``wait`` result when the asked time has already come: nothing is slept."""
    return f"Nothing to wait for: {target.asked} has already come. {now_line(now)} Carry on with your phase."
