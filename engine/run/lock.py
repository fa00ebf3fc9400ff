"""One owner per run: an OS lock in ``results/<run>/`` taken before anything of the run is written.

The lock is ``flock`` on ``results/<run>/run.lock``, so it dies with its process: a run whose owner was
killed is taken over by the next engine with nothing to clean. The file says who owns it (pid, host, start
time, which front end), for the one-line error a second engine gives and for the TUI's runs table, and
where its control socket is (``socket``, ``engine/placement/remote.py``), for a viewer in another process.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

LOCK_NAME = "run.lock"


class RunLocked(Exception):
    """The run is played by another engine: the message names the owner."""


def _describe(info: dict[str, object]) -> str:
    return (
        f"pid {info.get('pid', '?')} on {info.get('host', '?')} ({info.get('front_end', '?')}, "
        f"since {info.get('started', '?')})"
    )


class RunLock:
    """Held for a run's whole life by the engine that plays it."""

    def __init__(self, run_dir: Path, front_end: str) -> None:
        self.path = run_dir / LOCK_NAME
        self.front_end = front_end
        self._handle: IO[str] | None = None
        self._info: dict[str, object] = {}

    def acquire(self) -> None:
        """Take the lock or raise ``RunLocked`` naming its owner."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunLocked(
                f"run {self.path.parent.name} is being played by {owner_of(self.path.parent) or 'another engine'}"
            ) from None
        self._info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
            "front_end": self.front_end,
        }
        self._handle = handle
        self._write()

    def announce(self, **more: str) -> None:
        """Add to what the lock file says of the owner (the control socket's path)."""
        self._info.update(more)
        self._write()

    def _write(self) -> None:
        if self._handle is not None:
            self._handle.seek(0)
            self._handle.truncate()
            self._handle.write(json.dumps(self._info))
            self._handle.flush()

    def release(self) -> None:
        if self._handle is not None:
            try:
                fcntl.flock(self._handle, fcntl.LOCK_UN)
            finally:
                self._handle.close()
                self._handle = None

    @property
    def held(self) -> bool:
        return self._handle is not None


def owner_of(run_dir: Path) -> str:
    """Who holds the run's lock, described in one line; empty when nobody does (or the run never ran).

    Only meaningful for a run this process does not play itself (its own lock would count as taken).
    """
    info = owner_info(run_dir)
    if info is None:
        return ""
    return _describe(info) if info else "another engine"


def owner_socket(run_dir: Path) -> Path | None:
    """The control socket of the process that holds the run's lock, if it has one here (``engine/placement/remote.py``);
    an owner on another host (a shared results folder) is only shown."""
    info = owner_info(run_dir) or {}
    path = info.get("socket")
    if not isinstance(path, str) or not path or info.get("host") != socket.gethostname():
        return None
    return Path(path)


def owner_info(run_dir: Path) -> dict[str, object] | None:
    """What the lock file says of its holder (``{}`` when unreadable); ``None`` when nobody holds it."""
    path = run_dir / LOCK_NAME
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115
    except OSError:
        return None
    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            try:
                info = json.loads(handle.read() or "{}")
            except ValueError:  # being rewritten
                return {}
            return info if isinstance(info, dict) else {}
        fcntl.flock(handle, fcntl.LOCK_UN)
        return None
