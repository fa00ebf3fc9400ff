"""The one clock a run reads: real time plus an offset (virtual time, SPEC §7).

Everything the engine stamps (transcript events, report times, date templates, time gates) reads
``Clock.now()``. The Time Master moves the clock with ``jump_to``; tests use ``ManualClock``.
"""

from __future__ import annotations

import asyncio
import time
from datetime import datetime, timedelta


class Clock:
    """Wall-clock time shifted by ``offset`` seconds. Naive datetimes in the machine's local time."""

    def __init__(self, offset: float = 0.0) -> None:
        self.offset = offset

    def _real_now(self) -> datetime:
        return datetime.now()

    def now(self) -> datetime:
        return self._real_now() + timedelta(seconds=self.offset)

    def iso(self) -> str:
        return self.now().isoformat(timespec="seconds")

    def start_at(self, moment: datetime) -> None:
        """Make ``now()`` read ``moment`` (used when a run starts at a benchmark's ``start_time``)."""
        self.offset = (moment - self._real_now()).total_seconds()

    def jump_to(self, moment: datetime) -> None:
        """Wind the clock forward to ``moment`` (never backwards)."""
        delta = (moment - self.now()).total_seconds()
        if delta > 0:
            self.offset += delta

    async def sleep(self, seconds: float) -> None:
        """Sleep in real time (virtual time passes at the same rate unless someone jumps)."""
        await asyncio.sleep(max(0.0, seconds))


class ManualClock(Clock):
    """A clock that only moves when told to: deterministic tests and snapshots."""

    def __init__(self, start: datetime | None = None) -> None:
        super().__init__(0.0)
        self._base = start or datetime(2026, 8, 19, 10, 0, 0)

    def _real_now(self) -> datetime:
        return self._base

    def advance(self, seconds: float) -> None:
        self.offset += seconds

    async def sleep(self, seconds: float) -> None:
        self.advance(max(0.0, seconds))
        await asyncio.sleep(0)


def monotonic() -> float:
    """Real elapsed-time measurements (run time in reports) never use the virtual clock."""
    return time.monotonic()
