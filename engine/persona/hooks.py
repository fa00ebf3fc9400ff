"""The two model-agnostic persona hooks (SPEC §4): if a model never misbehaves, they never fire.

Nothing a hook refuses reaches the agent. An echo (the model wrote the agent's side) is dropped with its whole
cycle, the seed's way: the model's next call sees the context as it was before that turn, and only the
transcript shows the hook. A plain-text turn is dropped with a short note in its place; an empty one is
answered with an error. The run counts such turns in a row (``SlipStreak``): a model that writes the same
echo again and again, as a deterministic one would, ends as "persona stuck" after ``stuck_after`` of them.
"""

from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from difflib import SequenceMatcher

from engine.events import ErrorOccurred, Event, HookFired, PersonaThinking
from engine.models.base import Completion, Message

PLAIN_TEXT_NOTE = (
    "[Platform note: your last turn was plain text. It did not reach the assistant, nobody read it, and it was "
    "dropped. To talk to the assistant, call the send_message tool; to move on, call next_phase.]"
)

EMPTY_ERROR = (
    "ERROR: your answer was empty. Carry on with your phase: call a tool (send_message, next_phase, …)."
)


_ROLE_LABEL = re.compile(
    r"^\s*(?:\*\*)?(?:assistant|agent|ai|bot|🤖)(?:\*\*)?\s*[:>]", re.IGNORECASE | re.MULTILINE
)


def is_plain_text(completion: Completion) -> bool:
    """The model wrote prose instead of calling a tool (reasoning alone does not count)."""
    return not completion.tool_calls and bool((completion.content or "").strip())


_EDGES = string.whitespace + string.punctuation + "“”‘’«»…–—"


def normalised(text: str) -> str:
    """``text`` as an echo is compared: case folded, runs of whitespace one space, and the punctuation,
    quotes and markup around it dropped (``'  "Noted."'`` and ``noted`` are the same)."""
    return " ".join(text.casefold().split()).strip(_EDGES)


def _texts(completion: Completion) -> list[str]:
    """What the model wrote: its content and the text of each of its ``send_message`` calls."""
    texts = [completion.content or ""]
    for call in completion.tool_calls:
        if call.name != "send_message":
            continue
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            args = None
        text = args.get("text") if isinstance(args, dict) else None
        texts.append(text if isinstance(text, str) else call.arguments)
    return texts


def imitates_agent(completion: Completion, recent_replies: list[str]) -> str | None:
    """Why the output looks like an invented incoming agent message, or None.

    Fires when the model's own text carries an assistant role label, is one of the agent's recent replies
    exactly (once normalised: however short, ``Noted.`` for ``Noted.``), or reproduces a long one nearly
    verbatim (the model "received" a reply that it wrote itself). A short text that merely shares words
    with a reply (``Noted, thanks!`` after ``Noted.``) is no echo.
    """
    replies = [(reply, normalised(reply)) for reply in recent_replies]
    for text in _texts(completion):
        if _ROLE_LABEL.search(text):
            return "the output carries an assistant role label"
        plain = normalised(text)
        for reply, reply_plain in replies:
            if plain and plain == reply_plain:
                return "the output repeats an agent reply"
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


@dataclass
class Refusal:
    """A persona turn a hook refused: what to record, what the model is told (nothing for an echo: its whole
    cycle is dropped from the context), which slip it was."""

    slip: str
    events: list[Event] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)


def refuse(
    completion: Completion, recent_replies: list[str], echo_guard: bool, plain_text_guard: bool
) -> Refusal | None:
    """The hooks' verdict on a completion: None when it may go on (tool calls, or plain text without the guard)."""
    content = (completion.content or "").strip()
    echo = imitates_agent(completion, recent_replies) if echo_guard else None
    if (
        echo
    ):  # the seed's way: the cycle is ignored entirely, the model's next call sees the context as before
        return Refusal(
            slip=f"echo: {echo}",
            events=[
                HookFired(hook="echo_guard", detail=f"{echo}; nothing was sent or done, the turn was dropped")
            ],
        )
    if completion.tool_calls:
        return None
    if not content:
        return Refusal(
            slip="empty completion",
            events=[
                ErrorOccurred(message="the persona model returned an empty completion", where="persona model")
            ],
            messages=[{"role": "user", "content": EMPTY_ERROR}],
        )
    if not plain_text_guard:
        return None
    return Refusal(
        slip="plain text instead of a tool call",
        events=[
            PersonaThinking(text=content),
            HookFired(hook="plain_text_guard", detail="plain text instead of send_message"),
        ],
        # the hallucinated turn is dropped from the context (the seed's way); the transcript keeps it as
        # thinking, and a short note stands in its place so that the model learns why
        messages=[{"role": "user", "content": PLAIN_TEXT_NOTE}],
    )
