"""The run's line to the agent under test: delivering a persona message and collecting the replies,
observations, new sessions, reviving a failed agent, and telling it the virtual time."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from adapters.base import AdapterError, Observation
from engine.clock import monotonic
from engine.events import AgentCompacted, AgentReplied, ErrorOccurred, MessageSent, SessionSwitched
from engine.grading import keep_exchange
from engine.state import AgentObservation

if TYPE_CHECKING:
    from engine.run import Run

REPLY_PREFIX = "The assistant replied:"


class AgentChannel:
    def __init__(self, run: Run) -> None:
        self.run = run
        self.adapter = run.adapter
        self.last_activity = monotonic()  # the last reply, for adapters that cannot say they sleep

    async def deliver(self, text: str) -> str:
        """Send one persona message and collect the agent's replies until it is idle or quiet."""
        run, settings = self.run, self.run.settings
        stamp = run.clock.now()
        run.emit(MessageSent(text=text))
        run.state.messages_sent += 1
        try:
            await asyncio.wait_for(self.adapter.send_message(text), settings.agent_reply_timeout)
        except TimeoutError:
            raise AdapterError(f"the agent did not take the message within {settings.agent_reply_timeout:g} s") from None
        replies: list[str] = []
        started = last = monotonic()
        while True:
            new = await self.adapter.get_responses(run.state.agent_seq)
            for message in new:
                run.state.agent_seq = max(run.state.agent_seq, message.seq)
                replies.append(message.text)
                run.emit(AgentReplied(text=message.text, seq=message.seq))
            if new:
                last = self.last_activity = monotonic()
            status = await self.adapter.get_status()
            if status is not None:
                self.record(status.observations)
                if status.state == "sleeping" and (replies or monotonic() - last >= settings.agent_quiet_seconds):
                    break
            elif replies and monotonic() - last >= settings.agent_quiet_seconds:
                break
            if monotonic() - (last if replies else started) > settings.agent_reply_timeout:
                if replies:
                    break
                raise AdapterError(f"no reply from the agent within {settings.agent_reply_timeout:g} s")
            await asyncio.sleep(settings.agent_poll_seconds)
        keep_exchange(run.state, text, replies)
        body = "\n\n".join(replies) if replies else "(no reply)"
        when = f" (sent {stamp:%a %d %b %H:%M})" if run.bench.time_master else ""
        return f"{REPLY_PREFIX}{when}\n\n{body}"

    async def idle(self) -> bool:
        """Whether the agent sleeps: its own word, or no reply activity for a poll interval."""
        status = await self.adapter.get_status()
        if status is not None:
            self.record(status.observations)
            return status.state == "sleeping"
        return monotonic() - self.last_activity >= self.run.settings.time_master_poll

    def record(self, observations: list[Observation]) -> None:
        """Compactions the adapter saw inside the agent: kept for the report, never graded."""
        run = self.run
        for obs in observations:
            if obs.kind != "compaction":
                continue
            run.state.agent_observations.append(AgentObservation(
                phase_index=run.state.phase_index, tokens_before=obs.tokens_before,
                tokens_after=obs.tokens_after, detail=obs.detail,
            ))
            run.emit(AgentCompacted(phase_index=run.state.phase_index, tokens_before=obs.tokens_before,
                                    tokens_after=obs.tokens_after, detail=obs.detail))

    async def new_session(self, by_operator: bool = False) -> bool:
        """The JS ``bench.newSession()`` and the operator's action; whether the agent's session switched."""
        run = self.run
        if run.settings.ignore_session_break and not by_operator:
            run.emit(SessionSwitched(ignored=True))
            return False
        self.adapter.snapshot_memory(f"before-session-phase-{run.state.phase_index + 1}")
        await self.adapter.start_new_conversation()
        run.emit(SessionSwitched(by_operator=by_operator))
        return True

    async def revive(self) -> bool:
        """After an agent failure: stop what is left of it and start it again over its memory."""
        try:
            await self.adapter.close()
            await self.adapter.create_session(self.run.run_id)
            await self.tell_time()
        except AdapterError as exc:
            self.run.emit(ErrorOccurred(message=f"agent did not come back: {exc}", where="agent"))
            return False
        return True

    async def tell_time(self) -> None:
        """Set the agent's clock to the run's, in virtual-time scenarios."""
        if self.run.bench.time_master and self.adapter.supports_virtual_time:
            await self.adapter.set_virtual_time(self.run.clock.iso())
