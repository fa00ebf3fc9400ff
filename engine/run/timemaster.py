"""The persona's ``wait`` and the Time Master (SPEC §7).

When the persona sleeps and the agent is idle for at least ``min_sleep_to_skip`` seconds, the clock is
wound to ``pre_wake_delay`` before the wake-up; the agent is told the new time first. Never while the
agent is thinking. A ``wait`` to a time that has already come sleeps nothing and says so.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import date, datetime, timedelta

from engine.agents import AgentAdapter
from engine.events import ClockJumped
from engine.persona.notebook import ToolError
from engine.run.parts import RunSettings
from engine.run.phases import nothing_to_wait_for, now_line, parse_wait_target
from engine.run.recorder import Recorder


class TimeMaster:
    """``phase_day`` gives the current phase's date (its date line) if it has one; ``agent_idle`` asks the
    agent channel whether the agent sleeps."""

    def __init__(
        self,
        recorder: Recorder,
        adapter: AgentAdapter,
        settings: RunSettings,
        virtual_time: bool,
        phase_day: Callable[[], date | None],
        agent_idle: Callable[[], Awaitable[bool]],
    ) -> None:
        self.rec = recorder
        self.adapter = adapter
        self.settings = settings
        self.virtual_time = virtual_time
        self.phase_day = phase_day
        self.agent_idle = agent_idle

    def can_jump(self) -> bool:
        return self.virtual_time and self.adapter.supports_virtual_time

    async def wait(self, until: str) -> str:
        rec = self.rec
        if not self.virtual_time:
            raise ToolError("wait is only available in virtual-time scenarios; this one runs in real time")
        clock, settings = rec.clock, self.settings
        try:
            wanted = parse_wait_target(until, clock.now(), self.phase_day())
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        if not wanted.ahead:
            return nothing_to_wait_for(wanted, clock.now())
        target = wanted.until
        with rec.liveness.waiting("virtual sleep", until=target.isoformat(timespec="seconds")):
            while clock.now() < target:
                if not await self._jump(target):
                    left = (target - clock.now()).total_seconds()  # idle() may have taken a while
                    await clock.sleep(min(settings.time_master_poll, max(left, 0.0)))  # never oversleep
        return f"You woke up. {now_line(clock.now())}"

    async def _jump(self, target: datetime) -> bool:
        """Wind the clock to just before ``target`` if the agent sleeps and the wait is long enough."""
        rec, clock, settings = self.rec, self.rec.clock, self.settings
        remaining = (target - clock.now()).total_seconds()
        if not self.can_jump() or remaining < settings.time_master_min_sleep or not await self.agent_idle():
            return False
        moment = target - timedelta(seconds=settings.time_master_pre_wake)
        before = clock.now()
        if moment <= before:
            return False
        await self.adapter.set_virtual_time(moment.isoformat(timespec="seconds"))
        clock.jump_to(moment)
        rec.state.clock_jumps += 1
        rec.emit(ClockJumped(from_time=before.isoformat(timespec="seconds"), to_time=clock.iso()))
        rec.save()
        return True
