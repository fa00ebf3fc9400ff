"""Virtual time for unmodified agent processes, through libfaketime (SPEC §7).

The agent process is started with ``LD_PRELOAD`` pointing at the ``libfaketime.so.1`` shipped by the PyPI
package ``libfaketime`` and ``FAKETIME_TIMESTAMP_FILE`` pointing at an offset file that holds ``"+<N>s"``
relative to real time. Rewriting that file (atomically) moves the child's clock on its next read:
``FAKETIME_NO_CACHE=1`` makes every ``time()`` re-read it. Monotonic clocks are left alone
(``FAKETIME_DONT_FAKE_MONOTONIC=1``), else ``time.sleep`` and event-loop timers misbehave on a jump.
"""

from __future__ import annotations

import os
import tempfile
from datetime import datetime
from pathlib import Path

from adapters.base import AdapterError


def library_path() -> Path:
    """The ``libfaketime.so.1`` bundled with the ``libfaketime`` package; AdapterError when missing."""
    try:
        import libfaketime
    except ImportError:
        raise AdapterError(
            "virtual time needs the Python package 'libfaketime' (pip install libfaketime)"
        ) from None
    path = Path(libfaketime.__file__).parent / "vendor" / "libfaketime" / "src" / "libfaketime.so.1"
    if not path.is_file():
        raise AdapterError(f"libfaketime library not found at {path}")
    return path


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


class FakeTime:
    """One agent's offset file plus the environment that makes its process read it."""

    def __init__(self, offset_file: Path) -> None:
        self.offset_file = offset_file
        self.offset_seconds = 0.0

    def write_offset(self, seconds: float) -> None:
        """Rewrite the offset file atomically (temp file + ``os.replace``): readers never see half a file."""
        self.offset_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.offset_file.parent, prefix=".faketime-")
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(offset_spec(seconds) + "\n")
            os.replace(tmp, self.offset_file)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        self.offset_seconds = seconds

    def set_time(self, iso: str) -> None:
        """Make the child's wall clock read ``iso`` (naive local time) from now on."""
        self.write_offset(offset_for(iso))

    def env(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """``base`` (default: os.environ) plus the libfaketime variables; creates the file if absent."""
        if not self.offset_file.exists():
            self.write_offset(self.offset_seconds)
        env = dict(os.environ if base is None else base)
        env.pop("FAKETIME", None)
        preload = str(library_path())
        existing = env.get("LD_PRELOAD", "")
        env["LD_PRELOAD"] = f"{preload} {existing}".strip() if existing else preload
        env["FAKETIME_TIMESTAMP_FILE"] = str(self.offset_file)
        env["FAKETIME_NO_CACHE"] = "1"
        env["FAKETIME_DONT_FAKE_MONOTONIC"] = "1"
        return env
