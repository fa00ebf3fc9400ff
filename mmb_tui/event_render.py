"""How one transcript event looks: a folded form (a few cropped lines) and an expanded form (wrapped).

Pure functions over ``engine.events``: no widgets here, so the transcript view, the benchmark and the tests
share them. Folded heights do not depend on the terminal width, which lets the transcript compute its
virtual height without wrapping thousands of texts.
"""

from __future__ import annotations

import json
from typing import Literal

from rich.text import Text

from engine.events import MARKERS, Event

FilterMode = Literal["all", "messages", "evaluations", "errors"]
FILTER_MODES: tuple[FilterMode, ...] = ("all", "messages", "evaluations", "errors")
FILTER_LABELS: dict[FilterMode, str] = {
    "all": "all events",
    "messages": "messages only",
    "evaluations": "evaluations only",
    "errors": "errors only",
}

FOLDED_BODY_LINES = 2  # messages and thinking show their first lines folded
SHORT = 160  # characters of a tool result shown folded

_STYLES: dict[str, str] = {
    "phase_started": "bold",
    "persona_thinking": "italic dim",
    "tool_called": "",
    "message_sent": "",
    "agent_replied": "",
    "error": "bold red",
    "hook_fired": "yellow",
    "operator": "bold magenta",
    "status": "dim",
    "run_started": "dim",
    "run_ended": "bold",
    "clock_jumped": "cyan",
    "session_switched": "cyan",
    "persona_compacted": "cyan",
    "agent_compacted": "cyan",
}


def passes(event: Event, mode: FilterMode) -> bool:
    """Whether ``event`` is shown under the filter ``mode``."""
    if mode == "all":
        return True
    if mode == "messages":
        return event.kind in ("message_sent", "agent_replied")
    if mode == "evaluations":
        return event.kind == "evaluation_logged"
    return event.kind == "error" or (event.kind == "tool_called" and event.error)


def score_style(score: float) -> str:
    if score >= 9.95:
        return "bold green"
    if score >= 5:
        return "bold yellow"
    return "bold red"


def _time_of(event: Event) -> str:
    # "2026-08-19T10:03:05" -> "10:03"
    return event.t[11:16] if len(event.t) >= 16 else "     "


def _one_line(text: str, limit: int = SHORT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _args(arguments: dict[str, object]) -> str:
    parts = []
    for key, value in arguments.items():
        shown = value if isinstance(value, int | float) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={_one_line(str(shown), 40)}")
    return ", ".join(parts)


def headline(event: Event) -> Text:
    """The first line of an event: time, marker, a one-line summary (cropped by the view)."""
    marker = MARKERS.get(event.kind, "•")
    line = Text(no_wrap=True, overflow="ellipsis", end="")
    line.append(_time_of(event), style="dim")
    line.append(f" {marker} ")
    style = _STYLES.get(event.kind, "")
    if event.kind == "phase_started":
        line.append(f"Phase {event.index + 1}/{event.total} · {event.chapter} · {event.title}", style=style)
    elif event.kind in ("persona_thinking", "message_sent", "agent_replied"):
        first = event.text.strip().splitlines()[0] if event.text.strip() else ""
        line.append(first, style=style)
    elif event.kind == "tool_called":
        line.append(event.name, style="bold red" if event.error else "bold")
        line.append(f"({_args(event.arguments)})", style="dim")
        if event.result:
            line.append(" → ")
            line.append(_one_line(event.result), style="red" if event.error else "")
    elif event.kind == "evaluation_logged":
        attempt = ", 2nd attempt" if event.attempt >= 2 else ""
        line.append(f"[{event.effective:g}/10{attempt}]", style=score_style(event.effective))
        line.append(f" ({event.check_id}) ")
        line.append(_one_line(event.question or event.comment))
    elif event.kind == "persona_compacted":
        estimate = " (estimated)" if event.estimated else ""
        line.append(
            f"persona context compacted {event.tokens_before} → {event.tokens_after} tokens{estimate}",
            style=style,
        )
    elif event.kind == "agent_compacted":
        sizes = ""
        if event.tokens_before is not None:
            sizes = f" {event.tokens_before} → {event.tokens_after} tokens"
        line.append(f"agent compaction in phase {event.phase_index + 1}{sizes} {event.detail}", style=style)
    elif event.kind == "session_switched":
        how = " (ignored by this run)" if event.ignored else ""
        who = " by the operator" if event.by_operator else ""
        line.append(f"new agent session{who}{how}", style=style)
    elif event.kind == "clock_jumped":
        line.append(f"clock jumped {event.from_time.replace('T', ' ')} → {event.to_time.replace('T', ' ')}")
    elif event.kind == "hook_fired":
        line.append(f"{event.hook.replace('_', ' ')}: {_one_line(event.detail)}", style=style)
    elif event.kind == "error":
        where = f"[{event.where}] " if event.where else ""
        fatal = "fatal: " if event.fatal else ""
        line.append(f"{fatal}{where}{_one_line(event.message)}", style=style)
    elif event.kind == "operator":
        line.append(f"operator: {event.action} {_one_line(event.detail)}", style=style)
    elif event.kind == "status":
        reason = f" — {event.reason}" if event.reason else ""
        line.append(f"{event.status}{reason}", style=style)
    elif event.kind == "run_started":
        line.append(f"run {'resumed' if event.resumed else 'started'}: {event.benchmark} @ {event.agent}")
    elif event.kind == "run_ended":
        line.append(f"run ended: {event.reason} {event.detail}", style=style)
    return line


def body(event: Event) -> str:
    """The full text behind the headline ("" when the headline says everything)."""
    if event.kind == "phase_started":
        return event.text
    if event.kind in ("persona_thinking", "message_sent", "agent_replied"):
        lines = event.text.strip().splitlines()
        return "\n".join(lines[1:])
    if event.kind == "tool_called":
        args = json.dumps(event.arguments, ensure_ascii=False, indent=1)
        return f"arguments: {args}\nresult: {event.result}"
    if event.kind == "evaluation_logged":
        return (
            f"question: {event.question}\nexpected: {event.expected}\ngot: {event.answer}\n"
            f"comment: {event.comment}\nscore {event.score:g}, attempt {event.attempt}, "
            f"counts {event.effective:g}" + (f"\ntypes: {', '.join(event.types)}" if event.types else "")
        )
    if event.kind == "error":
        return event.message if len(event.message) > SHORT else ""
    if event.kind in ("hook_fired", "operator"):
        return event.detail if len(event.detail) > SHORT else ""
    return ""


def folded_lines(event: Event) -> list[Text]:
    """The folded form: the headline plus, for messages, their next lines (each cropped, never wrapped)."""
    lines = [headline(event)]
    rest = body(event)
    if not rest:
        return lines
    if event.kind in ("persona_thinking", "message_sent", "agent_replied"):
        extra = [ln for ln in rest.splitlines() if ln.strip()]
        for source in extra[:FOLDED_BODY_LINES]:
            lines.append(Text("        " + source, no_wrap=True, overflow="ellipsis", end=""))
        hidden = len(extra) - FOLDED_BODY_LINES
        if hidden > 0:
            lines[-1].append(f"  ▸ +{hidden} lines", style="dim")
            return lines
    lines[0].append("  ▸", style="dim")
    return lines


def expanded_parts(event: Event) -> tuple[Text, Text | None]:
    """The expanded form: a wrapping headline and the full body (indented by the view), if any."""
    head = headline(event)
    head.no_wrap = False
    head.overflow = "fold"
    head.end = "\n"
    rest = body(event)
    if not rest:
        return head, None
    return head, Text(rest, style="italic" if event.kind == "persona_thinking" else "")
