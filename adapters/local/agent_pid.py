"""An agent left running by an earlier start of its run, found and ended: the run's pid file (``agent.pid``)
and the identity of a process (Linux ``/proc``).

The pid file (JSON: pid, process group, the kernel's start time of the process, its command line and the
titles it may give itself) is written when an agent starts (``AgentProcess.start``), in the run's ``adapter``
folder: never where the agent writes, since a record it forged would have the engine end a host process. The
next start of the same run reads it and, if that process is still alive *and* is the same process (same start
time, a matching command line), ends its process group and waits for its port to be free (``end_stale``). A
pid reused by another program is left alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adapters.local.ports import wait_port_free

PID_FILE_LIMIT = 64 * 1024  # bytes of a pid record read at most

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
    # a new file of a random name (never through a link at a known one), renamed over the record
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _settled_cmdline(pid: int, timeout: float = 1.0) -> str | None:
    """``proc_cmdline`` once the kernel fills it in: it reads empty for a moment after exec."""
    deadline = time.monotonic() + timeout
    while not (cmdline := proc_cmdline(pid)) and time.monotonic() < deadline and pid_alive(pid):
        time.sleep(0.005)
    return cmdline or None


def read_pid_file(path: Path) -> dict[str, Any] | None:
    """The record of ``write_pid_file``; None when absent or unreadable (or not a regular file)."""
    try:
        with os.fdopen(
            os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC), "rb"
        ) as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            record = json.loads(handle.read(PID_FILE_LIMIT))
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
