"""Scripted in-process test agents: a context that a new session clears and a long-term memory.

Named in test configs as ``fixture_agents:ForgetfulAgent`` (an outside adapter, ``package.module:Class``);
``FlakyAgent``, ``LateAgent``, ``BuggyAgent`` and ``CrashOnceAgent`` fail on purpose, ``ClockAgent`` and
``NoStatusAgent`` follow virtual time, ``HostileAgent`` replies with escape sequences, markup, a lone surrogate and
one huge reply, ``MeasuredAgent`` reports its context's size.
"""

from __future__ import annotations

import asyncio
from typing import ClassVar

from adapters.base import (
    AdapterContext,
    AdapterError,
    AgentAdapter,
    AgentMessage,
    AgentStatus,
    Delivery,
    Observation,
)
from engine.models.base import Message
from engine.models.scripted_recall import answer

SEARCH_WORDS = ("search", "look back", "check your notes")


class ForgetfulAgent(AgentAdapter):
    """Answers from its context by lexical recall; on a search request, from its whole memory.

    ``start_new_conversation`` clears the context (memory stays); every ``compact_every`` messages it
    reports a compaction observation.
    """

    name: ClassVar[str] = "forgetful"
    supports_new_conversation: ClassVar[bool] = True

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.compact_every = int(ctx.options.pop("compact_every", 0))
        if ctx.options:
            raise ValueError(f"unknown key {sorted(ctx.options)[0]!r} for agent forgetful")
        self.context: list[Message] = []
        self.memory: list[Message] = []
        self.replies: list[AgentMessage] = []
        self.sessions = 0
        self.pending: list[Observation] = []
        self.received = 0

    async def create_session(self, name: str) -> None:
        self.sessions += 1

    async def send_message(self, text: str) -> None:
        self.received += 1
        user: Message = {"role": "user", "content": text}
        searching = any(word in text.lower() for word in SEARCH_WORDS)
        reply = answer([*(self.memory if searching else self.context), user])
        self.context += [user, {"role": "assistant", "content": reply}]
        self.memory.append(user)
        self.replies.append(AgentMessage(seq=len(self.replies) + 1, text=reply, time=self.ctx.clock.iso()))
        if self.compact_every and self.received % self.compact_every == 0:
            self.pending.append(
                Observation(tokens_before=1000 * self.received, tokens_after=200, detail="test compaction")
            )

    async def get_responses(self, after_seq: int) -> list[AgentMessage]:
        return [m for m in self.replies if m.seq > after_seq]

    async def destroy_session(self) -> None:
        self.context, self.memory = [], []

    async def start_new_conversation(self) -> None:
        self.context = []

    async def get_status(self) -> AgentStatus:
        observations, self.pending = self.pending, []
        return AgentStatus(state="sleeping", observations=observations)


class FlakyAgent(ForgetfulAgent):
    """Crashes on its 4th message; works again once the engine restarts it."""

    name: ClassVar[str] = "flaky"

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.alive = False

    async def create_session(self, name: str) -> None:
        await super().create_session(name)
        self.alive = True

    async def send_message(self, text: str) -> None:
        if self.received == 3 and self.sessions == 1:
            self.alive = False
        if not self.alive:
            raise AdapterError("flaky: the agent process crashed")
        await super().send_message(text)


class LateAgent(ForgetfulAgent):
    """Its 4th message reaches it but the engine hears nothing (a timeout, a kill): with ``lost: "reply"`` it
    answered (the answer kept in its own session), with ``lost: "store"`` it was killed before answering.
    ``check_delivery`` reads its own session, as the real adapters do."""

    name: ClassVar[str] = "late"

    def __init__(self, ctx: AdapterContext) -> None:
        self.lost = str(ctx.options.pop("lost", "reply"))
        super().__init__(ctx)
        self.session: list[tuple[str, str]] = []  # what the agent itself holds, (role, text)
        self.checked: list[str] = []

    async def send_message(self, text: str) -> None:
        self.session.append(("user", text))
        if self.received == 3 and self.sessions == 1:
            if self.lost == "reply":
                await super().send_message(text)
                self.session.append(("assistant", self.replies[-1].text))
            else:
                self.received += 1
            raise AdapterError("late: no reply within the timeout")
        await super().send_message(text)
        self.session.append(("assistant", self.replies[-1].text))

    async def check_delivery(self, text: str) -> Delivery:
        self.checked.append(text)
        users = [i for i, (role, _) in enumerate(self.session) if role == "user"]
        if not users or self.session[users[-1]][1] != text:
            return "absent"
        return "replied" if users[-1] + 1 < len(self.session) else "unanswered"


class BuggyAgent(ForgetfulAgent):
    """An adapter with a bug: an unexpected exception on its 6th message (the run crashes)."""

    name: ClassVar[str] = "buggy"

    async def send_message(self, text: str) -> None:
        if self.received == 5:
            raise RuntimeError("adapter bug")
        await super().send_message(text)


class CrashOnceAgent(ForgetfulAgent):
    """An adapter bug on its 6th message, once per run (a file in the run's folder remembers it): the run
    crashes, and resumed it plays to its end."""

    name: ClassVar[str] = "crash-once"

    async def send_message(self, text: str) -> None:
        crashed = self.ctx.run_dir / "agent" / "crashed-once"
        if self.received == 5 and not crashed.exists():
            crashed.parent.mkdir(parents=True, exist_ok=True)
            crashed.touch()
            raise RuntimeError("adapter bug")
        await super().send_message(text)


class MeasuredAgent(ForgetfulAgent):
    """Reports its context's size, ``TOKENS_PER_MESSAGE`` per message in it (a new session empties it), as a
    real agent reports the input tokens of its last model call."""

    name: ClassVar[str] = "measured"
    TOKENS_PER_MESSAGE: ClassVar[int] = 1250

    async def get_status(self) -> AgentStatus:
        status = await super().get_status()
        status.context_tokens = self.TOKENS_PER_MESSAGE * len(self.context) or None
        return status


class ClockAgent(ForgetfulAgent):
    """Follows virtual time and records when it was told the time and when it was polled."""

    name: ClassVar[str] = "clock-agent"
    supports_virtual_time: ClassVar[bool] = True
    log: ClassVar[list[tuple[str, str, str]]] = []  # (what, virtual now when called, argument)
    think_polls: ClassVar[int] = 0  # report "thinking" on this many polls first

    def __init__(self, ctx: AdapterContext) -> None:
        super().__init__(ctx)
        self.polls = 0

    async def set_virtual_time(self, iso: str) -> None:
        self.log.append(("set", self.ctx.clock.iso(), iso))

    async def get_status(self) -> AgentStatus:
        self.polls += 1
        thinking = self.polls <= self.think_polls
        self.log.append(("status", self.ctx.clock.iso(), "thinking" if thinking else "sleeping"))
        return AgentStatus(state="thinking" if thinking else "sleeping")


class NoStatusAgent(ClockAgent):
    """Reports no status: the engine falls back on reply activity."""

    async def get_status(self) -> None:  # type: ignore[override]
        return None


HOSTILE_TAIL = (
    " \x1b[2J\x1b[H\x1b]0;pwned title\x07\x1b]52;c;aGVsbG8=\x07\x9b31m\x90evil\x9c"
    " [bold]markup[/bold] \ud800 lone\n## 2026-01-01 00:00 UTC — evil: fake @ entry\n📊 Score: 10.00/10"
)
"""What ``HostileAgent`` appends to every reply: escape sequences, C1 controls, Rich markup, a lone
surrogate and a line that looks like a report entry's header."""
HUGE_REPLY_CHARS = 600_000


class HostileAgent(ForgetfulAgent):
    """Replies as ``ForgetfulAgent`` with hostile text appended; its ``huge_at``-th reply is 600,000 characters."""

    name: ClassVar[str] = "hostile"

    def __init__(self, ctx: AdapterContext) -> None:
        self.huge_at = int(ctx.options.pop("huge_at", 2))  # 0: no huge reply
        self.surrogate = bool(
            ctx.options.pop("surrogate", True)
        )  # False: the tail without its lone surrogate
        super().__init__(ctx)

    async def send_message(self, text: str) -> None:
        await super().send_message(text)
        last = self.replies[-1]
        tail = HOSTILE_TAIL if self.surrogate else HOSTILE_TAIL.replace("\ud800", "")
        body = last.text + tail
        if last.seq == self.huge_at:
            body += " " + "x" * (HUGE_REPLY_CHARS - len(body) - 1)
        self.replies[-1] = last.model_copy(update={"text": body})


class UninstallableAgent(ForgetfulAgent):
    """An agent whose install fails on this machine (as a pinned installer without network would)."""

    name = "uninstallable"
    installs = 0

    @classmethod
    def install(cls) -> None:
        cls.installs += 1
        raise AdapterError("npm i openclaw@2026.9.6 failed: no network")


class SlowToTakeAgent(ForgetfulAgent):
    """Takes each message a little longer than the engine's (tuned) default allows, within its own
    ``reply_timeout``: the engine waits for what the adapter's settings allow."""

    name: ClassVar[str] = "slow_to_take"
    reply_timeout: ClassVar[float | None] = 5.0

    async def send_message(self, text: str) -> None:
        await asyncio.sleep(0.05)
        await super().send_message(text)
