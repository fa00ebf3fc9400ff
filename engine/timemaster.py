"""The persona's ``wait`` and the Time Master (SPEC §7).

When the persona sleeps and the agent is idle for at least ``min_sleep_to_skip`` seconds, the clock is
wound to ``pre_wake_delay`` before the wake-up; the agent is told the new time first. Never while the
agent is thinking. A ``wait`` to a time that has already come sleeps nothing and says so.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from engine.events import ClockJumped
from engine.persona.notebook import ToolError
from engine.phases import nothing_to_wait_for, now_line, parse_wait_target

if TYPE_CHECKING:
    from engine.run import Run


class TimeMaster:
    def __init__(self, run: Run) -> None:
        self.run = run

    def can_jump(self) -> bool:
        return self.run.bench.time_master and self.run.adapter.supports_virtual_time

    async def wait(self, until: str) -> str:
        run = self.run
        if not run.bench.time_master:
            raise ToolError("wait is only available in virtual-time scenarios; this one runs in real time")
        clock, settings = run.clock, run.settings
        try:
            wanted = parse_wait_target(until, clock.now(), run.current_phase().date)
        except ValueError as exc:
            raise ToolError(str(exc)) from None
        if not wanted.ahead:
            return nothing_to_wait_for(wanted, clock.now())
        target = wanted.until
        while clock.now() < target:
            remaining = (target - clock.now()).total_seconds()
            if self.can_jump() and remaining >= settings.time_master_min_sleep and await run.agent.idle():
                moment = target - timedelta(seconds=settings.time_master_pre_wake)
                before = clock.now()
                if moment > before:
                    await run.adapter.set_virtual_time(moment.isoformat(timespec="seconds"))
                    clock.jump_to(moment)
                    run.state.clock_jumps += 1
                    run.emit(ClockJumped(from_time=before.isoformat(timespec="seconds"), to_time=clock.iso()))
                    run.save()
                    continue
            left = (target - clock.now()).total_seconds()  # idle() may have taken a while: never oversleep
            await clock.sleep(min(settings.time_master_poll, max(left, 0.0)))
        return f"You woke up. {now_line(clock.now())}"
