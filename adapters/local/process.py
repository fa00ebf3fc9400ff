"""Subprocess plumbing shared by the adapters that run a real agent: start, readiness, stop, logs, and the
guarantee that an agent never outlives the run that started it.

How an agent is tied to its run:

- **Its own process group** (``start_new_session``): a stop (``stop``, ``kill_now``, interpreter exit)
  signals the whole group, so the agent's own children go too.
- **Death with the engine** (Linux): the child asks the kernel for ``PR_SET_PDEATHSIG`` (SIGKILL) in a
  ``preexec_fn`` between fork and exec, so a ``kill -9`` or SIGHUP of the engine takes the agent down at once.
  The kernel sends that signal when the *thread* that forked the child ends, not the process: start agents
  from a thread that lives as long as the run (the engine starts them on its asyncio loop thread; never from
  a short-lived worker thread). Only the group leader gets the signal; the agents' helper children notice
  their parent's death on their own, and the pid file below catches anything left.
- **A pid file** (``agent.pid`` in the run's ``adapter`` folder, ``adapters/local/agent_pid.py``): the next start of
  the same run ends the agent an earlier start left running, if the pid still names that very process
  (``end_stale``). A pid reused by another program is left alone.
- **Its log and pid file out of its reach**: the agent's stdout and stderr are appended to ``process.log``
  beside the pid file, in a folder the sandbox hides (never the agent's own, where it could plant a link the
  engine would write through, or a pid record naming a host process for the engine to end); both are opened
  without following a link all the same (``O_NOFOLLOW``).
- Every live group is also remembered at module level and killed at interpreter exit.
- **A sandbox** (``adapters/local/sandbox/policy.py``): the group leader is then bubblewrap; a stop's SIGTERM goes to the
  agent's processes, not to it (``terminate``), and bubblewrap's ``--die-with-parent`` ends the sandbox with the
  engine.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from adapters.base import AdapterError
from adapters.local.agent_pid import end_stale, group_members, read_pid_file, write_pid_file
from adapters.local.sandbox.policy import is_sandbox_process

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
LOG_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
DEATH_SIGNAL = signal.SIGKILL
_LIVE_GROUPS: set[int] = set()


def _load_prctl() -> Any:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()  # looked up once here: nothing is imported or resolved between fork and exec


def _kill_live_groups() -> None:
    for pgid in list(_LIVE_GROUPS):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


atexit.register(_kill_live_groups)


def die_with_parent(parent_pid: int) -> Callable[[], None]:
    """A ``preexec_fn``: the child gets ``DEATH_SIGNAL`` when its parent (the forking thread) dies.

    If the parent is already gone when the child gets here (it died between fork and ``prctl``), the child
    kills itself rather than run as an orphan.
    """
    prctl = _PRCTL

    def setup() -> None:
        if prctl is not None:
            prctl(PR_SET_PDEATHSIG, int(DEATH_SIGNAL), 0, 0, 0)
        if os.getppid() != parent_pid:
            os.kill(os.getpid(), signal.SIGKILL)

    return setup


def tail(path: Path, lines: int = 20, max_chars: int = 4000) -> str:
    """The last ``lines`` lines of a text file ('' when missing, or not a regular file), for error messages."""
    try:
        with os.fdopen(
            os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb"
        ) as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return ""
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_chars * 4))
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])[-max_chars:]


def terminate(pgid: int) -> None:
    """SIGTERM to the group ``pgid``: the agent saves its work and exits. In a sandbox the signal goes to the
    agent's processes only, never to bubblewrap itself, which would end the sandbox (and the agent) at once;
    bubblewrap exits when the agent does."""
    if not is_sandbox_process(pgid):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGTERM)
        return
    for pid in group_members(pgid):
        if not is_sandbox_process(pid):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGTERM)


# --- one agent process ------------------------------------------------------------------------------


class AgentProcess:
    """One agent process: in its own process group, tied to the engine's life, logged, stopped for sure."""

    def __init__(self, label: str, log_path: Path, pid_file: Path | None = None) -> None:
        self.label = label
        self.log_path = log_path
        self.pid_file = pid_file
        self.popen: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.popen else None

    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def exit_code(self) -> int | None:
        return self.popen.poll() if self.popen else None

    async def end_stale(self, ports: Sequence[int] = (), timeout: float = 10.0) -> bool:
        """End this run's agent left running by an earlier start (see ``end_stale``, run in a worker thread:
        it waits); whether there was one. Never touches this object's own live process."""
        if self.pid_file is None or self.alive():
            return False
        return await asyncio.to_thread(end_stale, self.pid_file, ports, timeout)

    def start(self, argv: list[str], env: dict[str, str], cwd: Path, titles: Sequence[str] = ()) -> None:
        """Start ``argv`` (stdout and stderr appended to the log file) and record it in the pid file.

        ``titles``: command lines the process may give itself (``process.title``), for ``end_stale``.
        """
        if self.alive():
            raise AdapterError(f"{self.label} is already running (pid {self.pid})")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        try:
            log_fd = os.open(self.log_path, LOG_FLAGS, 0o600)
        except OSError as exc:
            raise AdapterError(f"{self.label} did not start: {self.log_path}: {exc.strerror}") from None
        with os.fdopen(log_fd, "ab") as log:
            try:
                self.popen = subprocess.Popen(
                    argv,
                    env=env,
                    cwd=cwd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=die_with_parent(os.getpid()),
                )
            except (OSError, subprocess.SubprocessError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) else str(exc)
                raise AdapterError(f"{self.label} did not start: {argv[0]}: {reason}") from None
        _LIVE_GROUPS.add(self.popen.pid)
        if self.pid_file is not None:
            write_pid_file(self.pid_file, self.popen.pid, argv, titles, cwd)

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
        """SIGTERM the process group, wait up to ``grace`` seconds, then SIGKILL it; remove the pid file."""
        popen = self.popen
        if popen is None:
            return
        pgid = popen.pid
        if popen.poll() is None:
            terminate(pgid)
            deadline = time.monotonic() + grace
            while popen.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.1)
        # the group may hold children that outlive the leader
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=5)
        _LIVE_GROUPS.discard(pgid)
        self._forget_pid_file(pgid)

    def kill_now(self) -> None:
        """Synchronous SIGKILL of the group (finalizers, where no event loop is available)."""
        if self.popen is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.popen.pid, signal.SIGKILL)
            _LIVE_GROUPS.discard(self.popen.pid)
            self._forget_pid_file(self.popen.pid)

    def _forget_pid_file(self, pid: int) -> None:
        if self.pid_file is None:
            return
        record = read_pid_file(self.pid_file)
        if record is not None and record.get("pid") == pid:
            self.pid_file.unlink(missing_ok=True)
