"""Subprocess plumbing shared by the adapters that run a real agent: ports, start, readiness, stop, logs,
and the guarantee that an agent never outlives the run that started it.

How an agent is tied to its run:

- **Its own process group** (``start_new_session``): a stop (``stop``, ``kill_now``, interpreter exit)
  signals the whole group, so the agent's own children go too.
- **Death with the engine** (Linux): the child asks the kernel for ``PR_SET_PDEATHSIG`` (SIGKILL) in a
  ``preexec_fn`` between fork and exec, so a ``kill -9`` or SIGHUP of the engine takes the agent down at once.
  The kernel sends that signal when the *thread* that forked the child ends, not the process: start agents
  from a thread that lives as long as the run (the engine starts them on its asyncio loop thread; never from
  a short-lived worker thread). Only the group leader gets the signal; the agents' helper children notice
  their parent's death on their own, and the pid file below catches anything left.
- **A pid file** (``agent.pid`` in the run's agent folder, JSON: pid, process group, the kernel's start time
  of the process, its command line and the titles it may give itself): the next start of the same run reads
  it and, if that process is still alive *and* is the same process (same start time, a matching command
  line), ends its process group and waits for its port to be free (``end_stale``). A pid reused by another
  program is left alone.
- Every live group is also remembered at module level and killed at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from adapters.base import AdapterError

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
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


# --- ports and logs ---------------------------------------------------------------------------------


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port that is free on ``host`` right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def port_is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether a server could listen on ``host:port`` now (as servers do, with ``SO_REUSEADDR``)."""
    if not 0 < port < 65536:
        return False
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def wait_port_free(port: int, timeout: float, host: str = "127.0.0.1") -> bool:
    """Poll until ``host:port`` is free or ``timeout`` seconds pass; whether it is free."""
    deadline = time.monotonic() + timeout
    while not port_is_free(port, host):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


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


# --- identity of a process (Linux /proc) ------------------------------------------------------------


def proc_start_ticks(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot): with the pid, a unique identity."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields = stat[stat.rfind(")") + 2 :].split()  # after "pid (comm) "; comm may hold spaces
    try:
        return int(fields[19])  # field 22 of proc(5); fields[0] is field 3
    except (IndexError, ValueError):
        return None


def proc_cmdline(pid: int) -> str | None:
    """``/proc/<pid>/cmdline`` as one space-joined line (a title the process set itself included)."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return " ".join(part.decode("utf-8", errors="replace") for part in raw.split(b"\0") if part)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    return stat[stat.rfind(")") + 2 :][:1] in ("Z", "X")


def pid_alive(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def group_alive(pgid: int) -> bool:
    """Whether any live (not zombie) process is in group ``pgid``."""
    if Path("/proc").is_dir():
        return bool(group_members(pgid))
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def group_members(pgid: int) -> list[int]:
    """The live pids whose process group is ``pgid`` (Linux; [] elsewhere)."""
    members = []
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


# --- the pid file -----------------------------------------------------------------------------------


def write_pid_file(
    path: Path, pid: int, argv: Sequence[str], titles: Sequence[str] = (), cwd: Path | None = None
) -> None:
    """Record an agent process in ``path`` (temp file + rename): pid, group, start time, command lines."""
    record = {
        "pid": pid,
        "pgid": pid,
        "start_ticks": proc_start_ticks(pid),
        # what the kernel shows after exec (a script's interpreter first), and what was asked for
        "cmdline": _settled_cmdline(pid) or " ".join(argv),
        "argv": " ".join(argv),
        "titles": list(titles),
        "cwd": str(cwd) if cwd else None,
        "started": time.time(),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(record) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def _settled_cmdline(pid: int, timeout: float = 1.0) -> str | None:
    """``proc_cmdline`` once the kernel fills it in: it reads empty for a moment after exec."""
    deadline = time.monotonic() + timeout
    while not (cmdline := proc_cmdline(pid)) and time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.005)
    return cmdline or None


def read_pid_file(path: Path) -> dict[str, Any] | None:
    """The record of ``write_pid_file``; None when absent or unreadable."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or not isinstance(record.get("pid"), int):
        return None
    return record


def recorded_process_alive(record: dict[str, Any]) -> bool:
    """Whether the process a pid-file record names is alive and really is that process.

    Same pid, same kernel start time (when recorded) and a command line equal to the recorded one (or the
    started one behind its script interpreter), or to one of the titles the agent gives itself (OpenClaw
    renames itself ``openclaw-gateway``). Anything else is a reused pid: another program, never touched.
    """
    pid = int(record["pid"])
    if not pid_alive(pid):
        return False
    ticks = record.get("start_ticks")
    if isinstance(ticks, int) and proc_start_ticks(pid) != ticks:
        return False
    cmdline = proc_cmdline(pid)
    if not cmdline:
        return False
    argv = str(record.get("argv") or "")
    known = {str(record.get("cmdline") or ""), argv} | {str(title) for title in record.get("titles") or []}
    # a script started through its #! line shows its interpreter first: "<python> <script> <args>"
    return cmdline in known - {""} or bool(argv and cmdline.endswith(" " + argv))


def end_stale(pid_file: Path, ports: Sequence[int] = (), timeout: float = 10.0) -> bool:
    """End the agent a previous start of this run left running, if ``pid_file`` names a live one.

    The recorded process group gets SIGTERM, then SIGKILL after a short grace; then the ``ports`` it held
    are waited for (up to ``timeout`` seconds). The pid file is removed. Returns whether a process was ended.
    Blocking (it waits): call it from a worker thread in async code (``AgentProcess.end_stale``).
    """
    record = read_pid_file(pid_file)
    ended = False
    if record is not None and recorded_process_alive(record):
        pgid = int(record.get("pgid") or record["pid"])
        pid = int(record["pid"])
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGTERM)
        deadline = time.monotonic() + min(3.0, timeout)
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
        deadline = time.monotonic() + timeout
        while (pid_alive(pid) or group_alive(pgid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        ended = True
    elif record is not None:
        # the leader is gone (or was never ours); helpers it left in its group still hold the group id,
        # which the kernel does not hand out again while they live: end them if they are ours
        _end_orphaned_group(record)
    for port in ports if ended else ():
        wait_port_free(port, timeout)
    pid_file.unlink(missing_ok=True)
    return ended


def _end_orphaned_group(record: dict[str, Any]) -> None:
    pgid = int(record.get("pgid") or record["pid"])
    if pid_alive(int(record["pid"])):
        return  # the pid lives on as another program: its group is not ours either
    cwd = record.get("cwd")
    members = group_members(pgid)
    if not members or not cwd:
        return
    for pid in members:  # only when every member works inside the agent's folder
        with contextlib.suppress(OSError):
            if not os.readlink(f"/proc/{pid}/cwd").startswith(str(cwd)):
                return
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


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
