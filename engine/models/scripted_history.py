"""How the scripted persona reads its history (it is stateless: every decision comes from the messages).

Owns the tool calls made since a message, with their results (``Call``, ``calls_since``; calls refused by
the echo guard never ran, so they are left out), the body of an agent reply, the current phase's text and
where it starts (``current_phase``), the sheets the system prompt offers (``readable_sheets``), and the
shape of one turn's tool calls (``Step``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from engine.models.base import Message
from engine.models.persona_plan import BACKTICK

_PHASE_HEADER = re.compile(r"^Phase \d+/\d+ \(", re.MULTILINE)
_SHEETS_LINE = re.compile(r"Sheets you can read with facts_read: (.*)\.")

Step = list[tuple[str, dict[str, Any]]]
"""One turn of the persona: its tool calls, each as (name, arguments)."""


@dataclass
class Call:
    """One tool call the persona made, its arguments, and its result (None while it has none)."""

    name: str
    args: dict[str, Any]
    result: str | None


def calls_since(messages: list[Message], start: int) -> list[Call]:
    """The tool calls of ``messages[start:]`` in order, each with its result."""
    results = {m.get("tool_call_id"): m.get("content") or "" for m in messages[start:] if m["role"] == "tool"}
    calls: list[Call] = []
    for message in messages[start:]:
        for call in message.get("tool_calls") or []:
            try:
                args = json.loads(call["function"]["arguments"] or "{}")
            except json.JSONDecodeError:
                continue
            result = results.get(call["id"])
            if result is not None and result.startswith("ERROR: echo guard"):
                continue  # refused by the echo guard: it never ran
            calls.append(Call(call["function"]["name"], args if isinstance(args, dict) else {}, result))
    return calls


def reply_body(result: str | None) -> str:
    """The agent's words in a ``send_message`` result (the header paragraph dropped)."""
    return (result or "").split("\n\n", 1)[-1]


def current_phase(messages: list[Message]) -> tuple[int, str]:
    """The index of the message that started the current phase and the phase's text (``0, ""`` before any)."""
    for index in range(len(messages) - 1, -1, -1):
        content = messages[index].get("content") or ""
        if messages[index]["role"] in ("user", "tool") and isinstance(content, str):
            match = _PHASE_HEADER.search(content)
            if match:
                return index, content[match.start() :]
    return 0, ""


def readable_sheets(messages: list[Message]) -> set[str]:
    """The sheets the system prompt says ``facts_read`` can read."""
    system = messages[0].get("content") or "" if messages else ""
    match = _SHEETS_LINE.search(system)
    return set(BACKTICK.findall(match.group(1))) if match else set()
