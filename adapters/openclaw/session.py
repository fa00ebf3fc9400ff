"""OpenClaw's session as ``chat.history`` gives it, read for ``check_delivery``: user messages and final
replies, without the tool steps of a turn and without OpenClaw's own notes to itself."""

from __future__ import annotations

from typing import Any

# OpenClaw writes its own notes into the session as user messages, e.g. after a gateway restart:
# "[System] Your previous turn was interrupted by a gateway restart … Continue from the existing transcript"
OWN_NOTE = "[System]"


def session_of(messages: list[Any]) -> list[tuple[str, str]]:
    """``chat.history`` messages as ``(role, text)``: user messages and final replies (an assistant
    message's text parts; tool calls and results left out, and OpenClaw's own notes to itself)."""
    session: list[tuple[str, str]] = []
    for message in messages:
        if not isinstance(message, dict) or message.get("role") not in ("user", "assistant"):
            continue
        content = message.get("content")
        if isinstance(content, list):
            if any(isinstance(part, dict) and part.get("type") == "toolCall" for part in content):
                continue  # a step of the turn, not its reply
            content = "".join(
                str(part.get("text", ""))
                for part in content
                if isinstance(part, dict) and part.get("type") == "text"
            )
        if not isinstance(content, str):
            continue
        if message["role"] == "user" and content.startswith(OWN_NOTE):
            continue  # OpenClaw's own note (a restart's recovery turn), not a message of ours
        session.append((str(message["role"]), content))
    return session
