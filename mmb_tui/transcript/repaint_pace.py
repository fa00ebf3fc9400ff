"""How often a followed transcript repaints under a stream of events: ``FASTEST`` while the process uses
little CPU, slower while it uses more than ``BUDGET`` of a core (a flood of events, a busy engine, a machine
that leaves the process little time): the repaints give way, the keys and the runs do not.

The share is the whole process's (``time.process_time``), measured over windows of ``WINDOW`` seconds of wall
time: above the budget the interval doubles, up to ``SLOWEST``; under half of it, it halves again. One pace
per process (``PACE``), as the CPU it reads is; a test hands a view its own clocks.
"""

from __future__ import annotations

import time
from collections.abc import Callable

BUDGET = 0.5  # of one core
FASTEST = 1 / 20  # seconds between two repaints of a transcript
SLOWEST = 1.0
WINDOW = 1.0  # seconds of wall time a share is measured over


class RepaintPace:
    def __init__(
        self, cpu: Callable[[], float] = time.process_time, wall: Callable[[], float] = time.monotonic
    ) -> None:
        self._cpu, self._wall = cpu, wall
        self._since_cpu, self._since = cpu(), wall()
        self.interval = FASTEST

    def next_interval(self) -> float:
        """The interval between two repaints now: the last window's share of a core decides."""
        now = self._wall()
        if now - self._since >= WINDOW:
            used = self._cpu()
            share = (used - self._since_cpu) / (now - self._since)
            if share > BUDGET:
                self.interval = min(SLOWEST, self.interval * 2)
            elif share < BUDGET / 2:
                self.interval = max(FASTEST, self.interval / 2)
            self._since_cpu, self._since = used, now
        return self.interval


PACE = RepaintPace()
