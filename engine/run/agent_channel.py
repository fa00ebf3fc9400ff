"""The run's line to the agent under test: delivering a persona message and collecting the replies,
observations, new sessions, reviving a failed agent, and telling it the virtual time."""

from __future__ import annotations

import asyncio
from datetime import date

from engine.agents import AdapterError, AgentAdapter, AgentStatus, Delivery
from engine.clock import monotonic
from engine.commands import CallInterrupted
from engine.events import (
    AgentCompacted,
    AgentReplied,
    ErrorOccurred,
    MessageSent,
    Redelivery,
    SessionSwitched,
)
from engine.grading.contract import keep_exchange
from engine.grading.premises import log_sent
from engine.run.memory_keeper import MemoryKeeper
from engine.run.parts import RunSettings
from engine.run.recorder import ChannelRecorder
from engine.sanitize import shorten_reply, valid_text
from engine.state import ContextReading

REPLY_PREFIX = "The assistant replied:"
REPLY_MARGIN = 30.0  # seconds the engine waits beyond the longest reply an adapter's own settings allow
REDELIVERY: dict[Delivery, Redelivery] = {
    "replied": "collected",
    "unanswered": "duplicated",
    "unknown": "possibly_duplicated",
    "absent": "",
}


class AgentChannel:
    def __init__(
        self,
        recorder: ChannelRecorder,
        adapter: AgentAdapter,
        settings: RunSettings,
        run_id: str,
        virtual_time: bool,
        memory: MemoryKeeper,
    ) -> None:
        self.rec = recorder
        self.memory = memory  # the agent's memory history and its own actions (engine/run/memory_keeper.py)
        self.adapter = adapter
        self.settings = settings
        self.run_id = run_id
        self.virtual_time = virtual_time  # the benchmark runs on virtual time (its Time Master is on)
        self.last_activity = monotonic()  # the last reply, for adapters that cannot say they sleep

    def reply_timeout(self) -> float:
        """How long one reply may take: the engine's default, or longer when the adapter's own settings allow
        a longer reply (a reply_timeout run key, the retries of the model playing the agent)."""
        own, default = self.adapter.reply_timeout, self.settings.agent_reply_timeout
        return default if own is None else max(default, own + REPLY_MARGIN)

    async def deliver(self, text: str, in_flight: bool = False) -> str:
        """Send one persona message and collect the agent's replies until it is idle or quiet.

        ``in_flight``: the message may already have reached the agent (it was being sent when the engine
        was killed or the agent failed); the agent is asked first (``check_delivery``) and a message it
        already answered is not sent again; one sent again where it may now be twice is marked so. A wait the
        operator cuts short (``CallInterrupted``) ends with the replies in hand, or raises without any."""
        settings = self.settings
        stamp = self.rec.clock.now()
        replies: list[str] = []
        try:
            await self._exchange(text, in_flight, stamp.date(), replies)
        except CallInterrupted:
            if not replies:  # the message goes again when the step is made again (checked with the agent)
                raise
        keep_exchange(self.rec.state, text, replies)
        await self.memory.actions()  # what the agent did for this message, then its memory if that changed
        await self.memory.take("message")
        # the persona gets each reply shortened to the limit (marked); the transcript keeps them whole
        body = (
            "\n\n".join(shorten_reply(r, settings.max_reply_chars) for r in replies)
            if replies
            else "(no reply)"
        )
        when = f" (sent {stamp:%a %d %b %H:%M})" if self.virtual_time else ""
        return f"{REPLY_PREFIX}{when}\n\n{body}"

    async def _exchange(self, text: str, in_flight: bool, day: date, replies: list[str]) -> None:
        """``deliver``'s wait: the message sent (unless the agent has it), its replies added to ``replies``."""
        rec = self.rec
        with rec.liveness.waiting("agent reply"):
            delivery = await self.adapter.check_delivery(text) if in_flight else "absent"
            redelivery = REDELIVERY[delivery]
            sent = MessageSent(text=text, redelivery=redelivery)
            rec.emit(sent)  # stamps its transcript number
            rec.state.messages_sent += 1
            log_sent(rec.state, sent.n, text, day)
            if redelivery != "collected":
                if not self.adapter.checkpointed:  # a resume must know every message sent before this one
                    await rec.flushed()
                try:
                    await asyncio.wait_for(self.adapter.send_message(text), self.reply_timeout())
                except TimeoutError:
                    raise AdapterError(
                        f"the agent did not take the message within {self.reply_timeout():g} s"
                    ) from None
            await self._collect(replies)

    async def _collect(self, replies: list[str]) -> None:
        """The agent's replies to the message just sent, added to ``replies``: until it sleeps or falls quiet
        after replying."""
        rec, settings = self.rec, self.settings
        started = last = monotonic()
        while True:
            new = await self.adapter.get_responses(rec.state.agent_seq)
            for message in new:
                rec.state.agent_seq = max(rec.state.agent_seq, message.seq)
                reply = valid_text(message.text)  # a lone surrogate would break every file and request
                replies.append(reply)
                rec.emit(AgentReplied(text=reply, seq=message.seq))  # whole: the transcript keeps it all
            if new:
                last = self.last_activity = monotonic()
            status = await self.adapter.get_status()
            if status is not None:
                if self.record(status):
                    await self.memory.take("compaction")
                if status.state == "sleeping" and (
                    replies or monotonic() - last >= settings.agent_quiet_seconds
                ):
                    break
            elif replies and monotonic() - last >= settings.agent_quiet_seconds:
                break
            if monotonic() - (last if replies else started) > self.reply_timeout():
                if replies:
                    break
                raise AdapterError(f"no reply from the agent within {self.reply_timeout():g} s")
            await asyncio.sleep(settings.agent_poll_seconds)

    async def idle(self) -> bool:
        """Whether the agent sleeps: its own word, or no reply activity for a poll interval."""
        status = await self.adapter.get_status()
        if status is not None:
            if self.record(status):
                await self.memory.take("compaction")
            return status.state == "sleeping"
        return monotonic() - self.last_activity >= self.settings.time_master_poll

    def record(self, status: AgentStatus) -> bool:
        """What the adapter saw inside the agent, kept for the report, never graded: its compactions, and
        its context sizes (each observation's in order, then the size it reports now); whether it compacted."""
        rec = self.rec
        compacted = False
        for obs in status.observations:
            for size in (obs.tokens_before, obs.tokens_after):
                self._context_size(size)
            if obs.kind != "compaction":
                continue
            event = AgentCompacted(
                phase_index=rec.state.phase_index,
                tokens_before=obs.tokens_before,
                tokens_after=obs.tokens_after,
                detail=obs.detail,
            )
            rec.emit(event)
            rec.state.agent_observations.append(event)
            compacted = True
        self._context_size(status.context_tokens)
        return compacted

    def _context_size(self, tokens: int | None) -> None:
        """A size of the agent's context, kept when it differs from the last one kept (the series is a step
        function: the size at any moment is the last reading before it)."""
        state = self.rec.state
        if not tokens or tokens < 0 or (state.agent_context and state.agent_context[-1].tokens == tokens):
            return
        reading = ContextReading(n=state.transcript_events, phase=state.phase_index, tokens=tokens)
        state.agent_context.append(reading)

    async def new_session(self, by_operator: bool = False) -> bool:
        """The JS ``bench.newSession()`` and the operator's action; whether the agent's session switched."""
        rec = self.rec
        if self.settings.ignore_session_break and not by_operator:
            rec.emit(SessionSwitched(ignored=True))
            return False
        await self.memory.take("session")  # the memory the new session starts from
        await self.adapter.start_new_conversation()
        rec.emit(SessionSwitched(by_operator=by_operator))
        return True

    async def revive(self) -> bool:
        """After an agent failure: stop what is left of it and start it again over its memory."""
        try:
            await self.adapter.close()
            await self.adapter.create_session(self.run_id)
            await self.tell_time()
        except AdapterError as exc:
            self.rec.emit(ErrorOccurred(message=f"agent did not come back: {exc}", where="agent"))
            return False
        return True

    async def tell_time(self) -> None:
        """Set the agent's clock to the run's, in virtual-time scenarios."""
        if self.virtual_time and self.adapter.supports_virtual_time:
            await self.adapter.set_virtual_time(self.rec.clock.iso())
