"""One summary per event, for every front end: the headless printer prints it, the TUI styles its parts.

``summary_parts`` cuts an event's one-line summary into parts tagged with a role (plain, name, args,
error, score, note); a front end maps roles to its own look. ``summary`` is the plain text. Both are safe to
print: control characters and escape sequences in agent or model text are shown escaped (``engine/sanitize.py``).
"""

from __future__ import annotations

import json
from typing import Literal

from engine.events import ErrorOccurred, Event
from engine.models.judges import PASS_SCORE
from engine.sanitize import printable

Role = Literal["plain", "name", "args", "error", "score", "note"]
Part = tuple[str, Role]
SHORT = 160  # characters of a tool result or a comment in a summary


def one_line(text: str, limit: int = SHORT) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _args(arguments: dict[str, object]) -> str:
    parts = []
    for key, value in arguments.items():
        shown = value if isinstance(value, int | float) else json.dumps(value, ensure_ascii=False)
        parts.append(f"{key}={one_line(str(shown), 40)}")
    return ", ".join(parts)


REDELIVERY_NOTES = {
    "collected": "had arrived: reply collected, not sent again",
    "duplicated": "sent again: twice in the agent's session",
    "possibly_duplicated": "sent again: possibly twice",
}


def summary_parts(event: Event) -> list[Part]:
    """The event's one-line summary as tagged parts (messages: their first line), control characters escaped."""
    return [(printable(text, newlines=False), role) for text, role in _raw_parts(event)]


def _raw_parts(event: Event) -> list[Part]:
    match event.kind:
        case "phase_started":
            return [(f"Phase {event.index + 1}/{event.total} · {event.chapter} · {event.title}", "plain")]
        case "message_sent" if event.redelivery:
            text = event.text.strip()
            note = REDELIVERY_NOTES[event.redelivery]
            return [(f"[{note}] ", "error"), (text.splitlines()[0] if text else "", "plain")]
        case "persona_thinking" | "message_sent" | "agent_replied":
            text = event.text.strip()
            return [(text.splitlines()[0] if text else "", "plain")]
        case "tool_called":
            parts: list[Part] = [
                (event.name, "error" if event.error else "name"),
                (f"({_args(event.arguments)})", "args"),
            ]
            if event.result:
                parts += [(" → ", "plain"), (one_line(event.result), "error" if event.error else "plain")]
            return parts
        case "evaluation_logged":
            attempt = ", 2nd attempt" if event.attempt >= 2 else ""
            grade: list[Part] = [
                (f"[{event.effective:g}/10{attempt}]", "score"),
                (f" ({event.check_id}) ", "plain"),
                (one_line(event.question or event.comment), "plain"),
            ]
            return grade + ([(" ⚠ persona fault", "error")] if event.persona_fault else [])
        case "judge_graded":
            head: list[Part] = [(f" ({event.check_id}) judge {event.judge}", "plain")]
            if event.score is None:
                return [("[no grade]", "error"), *head, (f": {one_line(event.error)}", "error")]
            persona = event.persona_score
            versus = f" · persona {persona:g}/10" if persona is not None else ""
            judged: list[Part] = [(f"[{event.score:g}/10]", "score"), *head, (versus, "plain")]
            if persona is not None and (persona >= PASS_SCORE) != (event.score >= PASS_SCORE):
                judged.append((" ≠ disagrees", "error"))
            return judged + ([(f" — {one_line(event.comment)}", "plain")] if event.comment else [])
        case "persona_compacted":
            estimate = " (estimated)" if event.estimated else ""
            return [
                (
                    f"persona context compacted {event.tokens_before} → {event.tokens_after} tokens{estimate}",
                    "plain",
                )
            ]
        case "agent_compacted":
            sizes = (
                f" {event.tokens_before} → {event.tokens_after} tokens"
                if event.tokens_before is not None
                else ""
            )
            return [(f"agent compaction in phase {event.phase_index + 1}{sizes} {event.detail}", "plain")]
        case "agent_action":
            acted: list[Part] = [(f"agent {event.action}: ", "plain"), (event.tool, "name")]
            if event.target:
                acted.append((f" {event.target}", "args"))
            if event.summary:
                acted.append((f" — {one_line(event.summary)}", "plain"))
            return acted + ([(f" ✗ {one_line(event.error)}", "error")] if event.error else [])
        case "session_switched":
            how = " (ignored by this run)" if event.ignored else ""
            who = " by the operator" if event.by_operator else ""
            return [(f"new agent session{who}{how}", "plain")]
        case "clock_jumped":
            return [
                (
                    f"clock jumped {event.from_time.replace('T', ' ')} → {event.to_time.replace('T', ' ')}",
                    "plain",
                )
            ]
        case "hook_fired":
            return [(f"{event.hook.replace('_', ' ')}: {one_line(event.detail)}", "plain")]
        case "model_retry":
            when = f"in {event.delay:.3g} s" if event.delay else "now"
            retry = f"{event.where}: attempt {event.attempt}/{event.of} {when} after {one_line(event.reason)}"
            return [(retry, "plain")]
        case "error":
            where = f"[{event.where}] " if event.where else ""
            fatal = "fatal: " if event.fatal else ""
            return [(f"{fatal}{where}{one_line(event.message)}", "plain")]
        case "operator":
            return [(f"operator: {event.action} {one_line(event.detail)}", "plain")]
        case "status":
            reason = f" — {event.reason}" if event.reason else ""
            return [(f"{event.status}{reason}", "plain")]
        case "run_started":
            return [
                (
                    f"run {'resumed' if event.resumed else 'started'}: {event.benchmark} @ {event.agent}",
                    "plain",
                )
            ]
        case "run_ended":
            detail = f" — {event.detail}" if event.detail and event.detail != event.reason.value else ""
            return [(f"run ended: {event.reason.value}{detail}", "plain")]


def summary(event: Event, full: bool = False) -> str:
    """The event's one-line summary as plain text; ``full``: a message's or thought's whole text (its lines
    kept), an error's whole line. Control characters and escape sequences are shown escaped either way."""
    if full and event.kind in ("persona_thinking", "message_sent", "agent_replied"):
        return printable(event.text.strip())
    if full and isinstance(event, ErrorOccurred):  # an error whole: a long path must not push its cause out
        where = f"[{event.where}] " if event.where else ""
        return printable(f"{'fatal: ' if event.fatal else ''}{where}{' '.join(event.message.split())}")
    return "".join(text for text, _ in summary_parts(event))
