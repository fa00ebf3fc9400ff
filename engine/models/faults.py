"""Fault plans for the scripted models: ``scripted/persona?faults=3:429,5:plain_text,7:echo``.

Call numbers are 1-based and counted per model instance (per model-name string in the server).
Transport faults (``429``, ``500``, ``hang``, and the malformed 200s ``bad_json`` — a body that is not JSON —
and ``no_choices`` — JSON without ``choices``) only exist over HTTP and are applied by ``server.py``;
content faults (``bad_args``, ``empty``, ``plain_text``, ``echo``) change the model's real answer and are
applied here by ``FaultyModel``, in process or behind the server.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, cast, get_args
from urllib.parse import parse_qs

from engine.models.base import ChatModel, Completion, Message, ModelError, ToolCall, ToolSchema

FaultKind = Literal["429", "500", "hang", "bad_json", "no_choices", "bad_args", "empty", "plain_text", "echo"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
TRANSPORT_FAULTS: frozenset[FaultKind] = frozenset({"429", "500", "hang", "bad_json", "no_choices"})
CONTENT_FAULTS: frozenset[FaultKind] = frozenset({"bad_args", "empty", "plain_text", "echo"})

SEND_MESSAGE = "send_message"
ECHO_FALLBACK = "Sure, noted everything."
PLAIN_PROSE = "I think that covers it for now. Let me know what you think."

Sleep = Callable[[float], Awaitable[None]]


@dataclass(frozen=True)
class ScriptedName:
    """A scripted model name split into its base name and its options."""

    base: str
    faults: dict[int, FaultKind] = field(default_factory=dict)
    reasoning: bool = False  # ``?reasoning=1``: attach a reasoning text (served as ``reasoning_content``)
    slips: frozenset[str] = frozenset()  # ``?slips=echo,skip_edit``: scripted/persona plays these slips


def _parse_faults(name: str, text: str) -> dict[int, FaultKind]:
    faults: dict[int, FaultKind] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        call, sep, kind = item.partition(":")
        if not sep or not call.strip().isdigit() or int(call) < 1 or kind.strip() not in FAULT_KINDS:
            raise ModelError(
                f"model {name!r}: bad fault {item!r}: expected CALL:KIND with CALL >= 1 and KIND one of "
                f"{', '.join(FAULT_KINDS)}"
            )
        if int(call) in faults:
            raise ModelError(f"model {name!r}: call {int(call)} has two faults")
        faults[int(call)] = cast(FaultKind, kind.strip())
    return faults


def parse_scripted_name(name: str) -> ScriptedName:
    """Split ``base?faults=...&reasoning=1``; a bad option is a ModelError naming it."""
    base, _, query = name.partition("?")
    options = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(options) - {"faults", "reasoning", "slips"})
    if unknown:
        raise ModelError(f"model {name!r}: unknown option {unknown[0]!r} (known: faults, reasoning, slips)")
    faults = _parse_faults(name, ",".join(options.get("faults", [])))
    reasoning = options.get("reasoning", ["0"])[-1].lower() in ("1", "true", "yes", "on")
    slips = frozenset(s.strip() for s in ",".join(options.get("slips", [])).split(",") if s.strip())
    return ScriptedName(base=base, faults=faults, reasoning=reasoning, slips=slips)


def _send_message_text(call: ToolCall) -> str | None:
    try:
        args = json.loads(call.arguments)
    except ValueError:
        return None
    if isinstance(args, dict):
        if isinstance(args.get("text"), str):
            return str(args["text"])
        strings = [value for value in args.values() if isinstance(value, str)]
        return strings[0] if strings else None
    return None


def _last_agent_reply(messages: list[Message]) -> str | None:
    """The content of the latest tool result answering a ``send_message`` call."""
    send_ids = {
        call.get("id")
        for message in messages
        if message.get("role") == "assistant"
        for call in message.get("tool_calls") or []
        if call.get("function", {}).get("name") == SEND_MESSAGE
    }
    for message in reversed(messages):
        if message.get("role") == "tool" and message.get("tool_call_id") in send_ids:
            content = message.get("content")
            text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
            return text.strip()[:500] or None
    return None


def _break_json(arguments: str) -> str:
    return arguments[:-1] if arguments.endswith("}") else arguments + "{"


def apply_content_fault(kind: FaultKind, completion: Completion, messages: list[Message]) -> Completion:
    """The real ``completion`` spoiled by a content fault (transport kinds leave it unchanged)."""
    if kind == "empty":
        return completion.model_copy(update={"content": None, "tool_calls": []})
    if kind == "bad_args":
        broken = [c.model_copy(update={"arguments": _break_json(c.arguments)}) for c in completion.tool_calls]
        return completion.model_copy(update={"tool_calls": broken})
    if kind == "plain_text":
        texts = [_send_message_text(c) for c in completion.tool_calls if c.name == SEND_MESSAGE]
        text = next((t for t in texts if t), None) or completion.content or PLAIN_PROSE
        return completion.model_copy(update={"content": text, "tool_calls": []})
    if kind == "echo":
        imitation = f"Assistant: {_last_agent_reply(messages) or ECHO_FALLBACK}"
        return completion.model_copy(update={"content": imitation})
    return completion


class FaultyModel:
    """Wraps a (scripted) ChatModel: counts calls, sleeps ``latency`` and applies the planned faults.

    In process only content faults apply; a transport fault's call is counted and answered normally.
    The server uses ``next_fault`` and ``answer`` separately to serve transport faults itself.
    """

    def __init__(
        self,
        inner: ChatModel,
        name: str | None = None,
        faults: dict[int, FaultKind] | None = None,
        *,
        reasoning: bool = False,
        latency: float = 0.0,
        sleep: Sleep = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.inner = inner
        self.name = name or inner.name
        self.faults = dict(faults or {})
        self.reasoning = reasoning
        self.latency = latency
        self.calls = 0
        self._sleep = sleep
        self._clock = clock

    def next_fault(self) -> FaultKind | None:
        """Count a call and return its planned fault, if any."""
        self.calls += 1
        return self.faults.get(self.calls)

    async def answer(
        self, kind: FaultKind | None, messages: list[Message], tools: list[ToolSchema] | None = None
    ) -> Completion:
        """The inner model's answer for a call already counted, spoiled by ``kind`` if it is a content fault;
        with ``latency``, given that long after the call began (a deadline: the answer's own work is part of
        the latency, as with a real model, not added to it)."""
        deadline = self._clock() + self.latency
        completion = await self.inner.complete(messages, tools)
        if self.reasoning and not completion.reasoning:
            completion = completion.model_copy(
                update={"reasoning": f"(scripted reasoning, call {self.calls}) answering the last message"}
            )
        if kind is not None and kind in CONTENT_FAULTS:
            completion = apply_content_fault(kind, completion, messages)
        if self.latency > 0:
            await self._sleep(max(0.0, deadline - self._clock()))
        return completion

    async def complete(self, messages: list[Message], tools: list[ToolSchema] | None = None) -> Completion:
        """Count the call and answer it (content faults applied, transport faults ignored)."""
        kind = self.next_fault()
        return await self.answer(kind, messages, tools)
