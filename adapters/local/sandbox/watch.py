"""The memory limit of an agent's sandbox (``agent_limits.memory_mb``): a check, from the engine, every second.

A per-process limit cannot hold a Node agent (V8 reserves several GB of writable address space: OpenClaw's
gateway shows 7.7 GB of ``VmData`` with 1.3 GB resident), and a control group is not something every host lets
the engine make. So the engine adds up, every ``INTERVAL`` seconds, the memory the sandbox's processes hold
in RAM — anonymous and shared (``RssAnon`` + ``RssShmem``: heap, stacks, ``memfd``, shared memory; not the
files they map) — over every descendant of its bubblewrap process (a process cannot leave that tree: an orphan
goes to the sandbox's own init). Over the limit, the sandbox is stopped (its init killed, which ends its whole
pid namespace) and the agent's process log says why (``mmb sandbox: …``), so the run waits with that reason.

A check, not a hard bound: an agent allocating faster than the interval can go past the limit for up to one
interval before it is stopped.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

INTERVAL = 1.0  # seconds between two looks
LOG_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
KB_PER_MB = 1024  # /proc/<pid>/status counts in kB


def _status(pid: str) -> tuple[int, int] | None:
    """``(parent pid, RssAnon + RssShmem in kB)`` of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/status").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    parent, held = 0, 0
    for line in text.splitlines():
        name, _, value = line.partition(":")
        if name == "PPid":
            parent = int(value.strip() or 0)
        elif name in ("RssAnon", "RssShmem"):
            held += int(value.split()[0])
    return parent, held


def tree_memory(root: int) -> tuple[int, int]:
    """``(kB held in RAM, processes)`` of ``root`` and every process below it."""
    parents: dict[int, int] = {}
    held: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (found := _status(entry)) is not None:
            parents[int(entry)], held[int(entry)] = found
    children: dict[int, list[int]] = {}
    for pid, parent in parents.items():
        children.setdefault(parent, []).append(pid)
    total, count, todo = 0, 0, [root]
    while todo:
        pid = todo.pop()
        if pid in held:
            total, count = total + held[pid], count + 1
            todo.extend(children.get(pid, ()))
    return total, count


def sandbox_init(bwrap: int) -> int | None:
    """The sandbox's init (bubblewrap's child, pid 1 of its pid namespace): killing it ends the sandbox."""
    with contextlib.suppress(OSError, ValueError):
        children = Path(f"/proc/{bwrap}/task/{bwrap}/children").read_text(encoding="ascii").split()
        return int(children[0]) if children else None
    return None


def note(log: Path, line: str) -> None:
    """Append ``line`` to the agent's process log (never through a link)."""
    with contextlib.suppress(OSError):
        fd = os.open(log, LOG_FLAGS)
        try:
            os.write(fd, f"\n{line}\n".encode())
        finally:
            os.close(fd)


class MemoryWatch:
    """The check of one sandbox started as process ``bwrap``: ``start`` on the running loop, ``stop``."""

    def __init__(self, bwrap: int, limit_mb: int, log: Path, alive: Callable[[], bool]) -> None:
        self.bwrap = bwrap
        self.limit_mb = limit_mb
        self.log = log
        self.alive = alive
        self.stopped_for = ""  # why the sandbox was stopped, once it was
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._watch())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            self._task = None

    async def _watch(self) -> None:
        while self.alive():
            held_kb, count = await asyncio.to_thread(tree_memory, self.bwrap)
            if held_kb > self.limit_mb * KB_PER_MB:
                self.stop_sandbox(held_kb, count)
                return
            await asyncio.sleep(INTERVAL)

    def stop_sandbox(self, held_kb: int, count: int) -> None:
        """Kill the sandbox's init (all its processes go with it) and say why in the agent's log."""
        self.stopped_for = (
            f"mmb sandbox: stopped: its {count} processes held {held_kb // KB_PER_MB:,} MB of memory, over its "
            f"limit agent_limits.memory_mb = {self.limit_mb:,}"
        )
        note(self.log, self.stopped_for)
        target = sandbox_init(self.bwrap)
        with contextlib.suppress(OSError):
            if target is not None:
                os.kill(target, signal.SIGKILL)
            else:
                os.killpg(self.bwrap, signal.SIGKILL)
