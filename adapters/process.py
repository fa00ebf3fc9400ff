"""Subprocess plumbing shared by the adapters that run a real agent: ports, start, readiness, stop, logs.

Each agent runs in its own process group (``start_new_session``) so a stop takes its children too.
Every live group is also remembered at module level and killed at interpreter exit, so a crash of the
platform never leaves an agent holding a port.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from adapters.base import AdapterError

_LIVE_GROUPS: set[int] = set()


def _kill_live_groups() -> None:
    for pgid in list(_LIVE_GROUPS):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


atexit.register(_kill_live_groups)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def tail(path: Path, lines: int = 20, max_chars: int = 4000) -> str:
    """The last ``lines`` lines of a text file ('' when missing), for error messages."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_chars * 4))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])[-max_chars:]


class AgentProcess:
    """One agent process: started in its own process group, output to a log file, stopped for sure."""

    def __init__(self, label: str, log_path: Path) -> None:
        self.label = label
        self.log_path = log_path
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def exit_code(self) -> int | None:
        return self.popen.poll() if self.popen else None

    def start(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        """Start ``argv``; stdout and stderr are appended to the log file."""
        if self.alive():
            raise AdapterError(f"{self.label} is already running (pid {self.pid})")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            try:
                self.popen = subprocess.Popen(
                    argv,
                    env=env,
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            except OSError as exc:
                raise AdapterError(f"{self.label} did not start: {argv[0]}: {exc.strerror}") from None
        _LIVE_GROUPS.add(self.popen.pid)

    def describe_exit(self) -> str:
        """A one-line reason plus the log tail, for an AdapterError."""
        code = self.exit_code()
        state = f"exited with code {code}" if code is not None else "is running"
        log_tail = tail(self.log_path, 12)
        return (
            f"{self.label} {state}; log {self.log_path}:\n{log_tail}" if log_tail else f"{self.label} {state}"
        )

    async def wait_ready(
        self, probe: Callable[[], Awaitable[bool]], timeout: float, interval: float = 0.25
    ) -> None:
        """Poll ``probe`` until it returns True; AdapterError if the process dies or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                raise AdapterError(f"{self.label} failed to start: {self.describe_exit()}")
            with contextlib.suppress(Exception):
                if await probe():
                    return
            if time.monotonic() > deadline:
                message = f"{self.label} not ready after {timeout:.0f}s: {self.describe_exit()}"
                await self.stop()
                raise AdapterError(message)
            await asyncio.sleep(interval)

    async def stop(self, grace: float = 8.0) -> None:
        """SIGTERM the process group, wait up to ``grace`` seconds, then SIGKILL it."""
        popen = self.popen
        if popen is None:
            return
        pgid = popen.pid
        if popen.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(pgid, signal.SIGTERM)
            deadline = time.monotonic() + grace
            while popen.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        # the group may hold children that outlive the leader
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=5)
        _LIVE_GROUPS.discard(pgid)

    def kill_now(self) -> None:
        """Synchronous SIGKILL of the group (finalizers, where no event loop is available)."""
        if self.popen is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            _LIVE_GROUPS.discard(self.popen.pid)
