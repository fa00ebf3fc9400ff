"""The two model-agnostic persona hooks (SPEC §4): if a model never misbehaves, they never fire."""

from __future__ import annotations

import re
from difflib import SequenceMatcher

from engine.models.base import Completion

PLAIN_TEXT_ERROR = (
    "ERROR: plain text does not reach the assistant and nobody reads it. To talk to the assistant, call "
    "the send_message tool; to move on, call next_phase."
)

EMPTY_ERROR = "ERROR: your answer was empty. Carry on with your phase: call a tool (send_message, next_phase, …)."


def echo_error(why: str) -> str:
    """The echo guard's answer: the model wrote the assistant's side; nothing was sent or done."""
    return (
        f"ERROR: echo guard — {why}. Nothing was sent and no tool ran. Never write the assistant's replies or "
        "repeat them: the assistant's reply only ever comes back as the result of send_message. Send your own "
        "next message (or call the tool you meant) again."
    )


_ROLE_LABEL = re.compile(r"^\s*(?:\*\*)?(?:assistant|agent|ai|bot|🤖)(?:\*\*)?\s*[:>]", re.IGNORECASE | re.MULTILINE)


def is_plain_text(completion: Completion) -> bool:
    """The model wrote prose instead of calling a tool (reasoning alone does not count)."""
    return not completion.tool_calls and bool((completion.content or "").strip())


def imitates_agent(completion: Completion, recent_replies: list[str]) -> str | None:
    """Why the output looks like an invented incoming agent message, or None.

    Fires when the model's own text carries an assistant role label, or reproduces one of the agent's
    recent replies nearly verbatim (the model "received" a reply that it wrote itself).
    """
    texts = [completion.content or ""]
    for call in completion.tool_calls:
        if call.name == "send_message":
            texts.append(call.arguments)
    for text in texts:
        if _ROLE_LABEL.search(text):
            return "the output carries an assistant role label"
        for reply in recent_replies:
            if len(reply) >= 40 and len(text) >= 40:
                matcher = SequenceMatcher(None, reply, text)
                if reply in text or (matcher.quick_ratio() > 0.9 and matcher.ratio() > 0.9):
                    return "the output repeats an agent reply"
    return None


class SlipStreak:
    """Consecutive persona turns that did nothing (echo, empty, plain text): enough in a row, it is stuck."""

    def __init__(self) -> None:
        self.kinds: list[str] = []

    def add(self, kind: str) -> None:
        self.kinds.append(kind)

    def clear(self) -> None:
        self.kinds.clear()

    def stuck_reason(self, limit: int) -> str:
        if len(self.kinds) < limit:
            return ""
        return f"persona stuck ({len(self.kinds)} turns in a row without a valid tool call: {', '.join(sorted(set(self.kinds)))})"
