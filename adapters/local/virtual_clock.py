"""Virtual time for unmodified agent processes (SPEC §7): our own clock library, preloaded.

The agent process is started with ``LD_PRELOAD`` pointing at ``libmmbclock.so``, built from
``adapters/local/virtual_clock.c`` with the system's C compiler on first use (``adapters.local.install.virtual_clock_library``;
``make agents`` builds it too) into ``<agents dir>/virtual-clock-<source hash>/``, and ``MMB_CLOCK_OFFSET_FILE``
pointing at an offset file that holds ``"+<N>s"`` relative to real time. Rewriting that file (atomically) moves
the child's wall clock within 0.1 s (``settle_delay`` is how long the adapter waits after a rewrite before the
agent may look); monotonic clocks, sleeps and timers are left alone.

It replaced libfaketime, whose ``getenv`` on every condition wait crashed threaded agents that set their own
environment (``virtual_clock.c`` says how).
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

from adapters.local.install import virtual_clock_library

OFFSET_ENV = "MMB_CLOCK_OFFSET_FILE"
REREAD = 0.1  # seconds between two reads of the offset file by the child (virtual_clock.c REREAD_NS)
SETTLE_MARGIN = 0.05  # seconds past REREAD before the child surely reads the new offset


def offset_spec(seconds: float) -> str:
    """The offset file's text: a relative offset such as ``+90000s`` or ``-30s``."""
    whole = int(round(seconds))
    return f"{whole:+d}s"


def offset_for(iso: str, now: datetime | None = None) -> float:
    """Seconds from the real local time ``now`` to the naive local datetime ``iso``."""
    try:
        target = datetime.fromisoformat(iso)
    except ValueError:
        raise ValueError(f"not an ISO datetime: {iso!r}") from None
    if target.tzinfo is not None:
        target = target.astimezone().replace(tzinfo=None)
    return (target - (now or datetime.now())).total_seconds()


class VirtualClock:
    """One agent's offset file plus the environment that makes its process read it."""

    def __init__(self, offset_file: Path) -> None:
        self.offset_file = offset_file
        self.offset_seconds = 0.0
        self.owner: tuple[int, int] | None = (
            None  # the agent's uid and gid when not the engine's (a root engine)
        )

    def write_offset(self, seconds: float) -> None:
        """Rewrite the offset file atomically (temp file + ``os.replace``): readers never see half a file."""
        self.offset_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.offset_file.parent, prefix=".faketime-")
        try:
            if self.owner is not None:
                os.fchown(fd, *self.owner)  # the agent reads it (0600, as everything in its folder)
            with os.fdopen(fd, "w") as handle:
                handle.write(offset_spec(seconds) + "\n")
            os.replace(tmp, self.offset_file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.offset_seconds = seconds

    @staticmethod
    def settle_delay() -> float:
        """Seconds after a rewrite of the offset file until every clock read of the child returns the new time."""
        return REREAD + SETTLE_MARGIN

    def set_time(self, iso: str) -> None:
        """Make the child's wall clock read ``iso`` (naive local time) from now on."""
        self.write_offset(offset_for(iso))

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: os.environ) plus the clock library's variables; creates the file if absent."""
        if not self.offset_file.exists():
            self.write_offset(self.offset_seconds)
        env = dict(os.environ if base is None else base)
        preload = str(virtual_clock_library())
        existing = env.get("LD_PRELOAD", "")
        env["LD_PRELOAD"] = f"{preload} {existing}".strip() if existing else preload
        env[OFFSET_ENV] = str(self.offset_file)
        return env
