"""Fault plans for the scripted models: ``scripted/persona?faults=3:429,5:plain_text,7:echo``.

Call numbers are 1-based and counted per model instance (per model-name string in the server).
Transport faults (``429``, ``500``, ``hang``, and the malformed 200s ``bad_json`` — a body that is not JSON —
and ``no_choices`` — JSON without ``choices``) are served here once (``FaultyModel.transport``): behind
``server.py`` as the HTTP response, in process as the ``ModelError`` the openai wrapper gives for that
response (``HTTP 429: …``, ``malformed response: …``), so the run's retry path plays them; ``hang`` never
answers in process until the call is cancelled (the operator's ``AbortCall`` or ``Pause``), and for
``hang_seconds`` behind the server. Content faults (``bad_args``, ``empty``, ``plain_text``, ``echo``) change
the model's real answer, in process or behind the server.
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
from engine.models.scripted_memory import PLANS

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
    # ``?plan=save,twice``: scripted/agent's memory faults (``scripted_memory.py``)
    plan: frozenset[str] = frozenset()
    # ``?reply_tokens=600``: scripted/agent's replies padded to about that many tokens (``scripted_padding.py``)
    reply_tokens: int = 0


MAX_REPLY_TOKENS = 20000


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


def scripted_name_problem(name: str) -> str:
    """What is wrong with the options of the scripted model name ``name`` ("" when nothing): a config check."""
    if not name.partition("?")[0].startswith("scripted/"):
        return ""
    try:
        parse_scripted_name(name)
    except ModelError as exc:
        return str(exc).removeprefix(f"model {name!r}: ")
    return ""


def parse_scripted_name(name: str) -> ScriptedName:
    """Split ``base?faults=...&reasoning=1``; a bad option is a ModelError naming it."""
    base, _, query = name.partition("?")
    options = parse_qs(query, keep_blank_values=True)
    unknown = sorted(set(options) - {"faults", "reasoning", "slips", "plan", "reply_tokens"})
    if unknown:
        raise ModelError(
            f"model {name!r}: unknown option {unknown[0]!r} (known: faults, reasoning, slips, plan, reply_tokens)"
        )
    faults = _parse_faults(name, ",".join(options.get("faults", [])))
    reasoning = options.get("reasoning", ["0"])[-1].lower() in ("1", "true", "yes", "on")
    slips = frozenset(s.strip() for s in ",".join(options.get("slips", [])).split(",") if s.strip())
    plan = frozenset(s.strip() for s in ",".join(options.get("plan", [])).split(",") if s.strip())
    if plan - PLANS:
        raise ModelError(
            f"model {name!r}: unknown plan {sorted(plan - PLANS)[0]!r} (known: {', '.join(PLANS)})"
        )
    reply_tokens = _reply_tokens(name, options.get("reply_tokens", []))
    return ScriptedName(
        base=base, faults=faults, reasoning=reasoning, slips=slips, plan=plan, reply_tokens=reply_tokens
    )


def _reply_tokens(name: str, given: list[str]) -> int:
    """``reply_tokens``: a whole number of tokens, 0 (unpadded) to ``MAX_REPLY_TOKENS``, given once."""
    if not given:
        return 0
    text = given[-1].strip()
    if len(given) > 1 or not text.isdigit() or int(text) > MAX_REPLY_TOKENS:
        raise ModelError(
            f"model {name!r}: bad reply_tokens {'&'.join(given)!r}: expected one whole number of tokens "
            f"from 0 to {MAX_REPLY_TOKENS}"
        )
    return int(text)


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


@dataclass(frozen=True)
class TransportFault:
    """A transport fault as the wire has it (the server sends it) and as the openai wrapper reads it (a call
    in process fails with ``reason``)."""

    status: int
    body: str  # the response body, JSON or (``bad_json``) not
    reason: str  # the one-line reason ``openai_model.py`` gives for this response
    headers: dict[str, str] = field(default_factory=dict)


def _error_body(message: str, kind: str, code: str | None = None) -> str:
    return json.dumps({"error": {"message": message, "type": kind, "param": None, "code": code}})


def transport_fault(kind: FaultKind, call: int) -> TransportFault:
    """The response of transport fault ``kind`` at call number ``call`` (a hang's, once it ends)."""
    if kind == "429":
        message = f"scripted rate limit (call {call})"
        body = _error_body(message, "rate_limit_error", "rate_limit_exceeded")
        return TransportFault(429, body, f"HTTP 429: {message}", {"Retry-After": "1"})
    if kind == "500":
        message = f"scripted server error (call {call})"
        return TransportFault(500, _error_body(message, "server_error"), f"HTTP 500: {message}")
    if kind == "hang":
        message = f"scripted hang ended (call {call})"
        return TransportFault(504, _error_body(message, "server_error"), f"HTTP 504: {message}")
    if kind == "bad_json":  # a 200 that says JSON and is not (a proxy's page cut short, say)
        body = '{"id": "chatcmpl-broken", "choices": [{"mess'
        return TransportFault(200, body, "malformed response: the body is not JSON")
    if kind == "no_choices":  # a 200 with JSON of the wrong shape
        body = json.dumps({"object": "chat.completion", "error": f"scripted no choices (call {call})"})
        return TransportFault(200, body, "malformed response: no choices")
    raise ValueError(f"{kind!r} is not a transport fault")


class FaultyModel:
    """Wraps a (scripted) ChatModel: counts calls, sleeps ``latency`` and applies the planned faults.

    ``complete`` (in process) applies every fault: a transport fault is the ``ModelError`` its response
    gives the openai wrapper, after a hang that lasts until the call is cancelled. The server uses
    ``next_fault``, ``transport`` and ``answer`` separately, with ``hang_seconds`` set.
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
        self.hang_seconds: float | None = None  # how long a hang lasts; None: until the call is cancelled
        self.calls = 0
        self._sleep = sleep
        self._clock = clock

    def next_fault(self) -> FaultKind | None:
        """Count a call and return its planned fault, if any."""
        self.calls += 1
        return self.faults.get(self.calls)

    async def transport(self, kind: FaultKind) -> TransportFault:
        """Transport fault ``kind`` of the call just counted: a hang waits first (``hang_seconds``, or until
        the call is cancelled)."""
        if kind == "hang":
            if self.hang_seconds is None:
                await asyncio.Event().wait()  # never set: only a cancellation ends it
            else:
                await self._sleep(self.hang_seconds)
        return transport_fault(kind, self.calls)

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
        """Count the call and answer it, or fail it as its transport fault would fail a provider's call."""
        kind = self.next_fault()
        if kind is not None and kind in TRANSPORT_FAULTS:
            fault = await self.transport(kind)
            raise ModelError(f"model {self.name!r}: {fault.reason}")
        return await self.answer(kind, messages, tools)
