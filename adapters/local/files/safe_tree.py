"""A whole folder the agent under test can write in, as the engine must take it: its size, measured without
following a link (``folder_usage``), and its removal, which never follows one (``remove_tree``, the engine's:
``engine/run/tree_removal.py``). Single files of the folder are ``adapters/local/files/safe_files.py``'s.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from adapters.local.files.safe_files import DIR_FLAGS
from engine.run.tree_removal import remove_tree as remove_tree  # the adapters' name for it

MAX_DEPTH = 64  # folders nested deeper are not walked (each level holds a descriptor)


@dataclass(frozen=True)
class FolderUsage:
    """What ``folder_usage`` measured: bytes (each file once, the larger of its length and the disk it
    takes), entries seen, and why the walk stopped early ("" when it saw everything)."""

    bytes: int
    entries: int
    stopped: str = ""


def folder_usage(root: Path, max_entries: int = 1_000_000, max_seconds: float = 10.0) -> FolderUsage:
    """The bytes the folder holds, each file counted once (hard links) at the larger of its length and
    its blocks (a sparse file counts its length). Stops early past ``max_entries`` or ``max_seconds``,
    or at folders nested deeper than ``MAX_DEPTH`` (``FolderUsage.stopped`` says why)."""
    try:
        top = os.open(root, DIR_FLAGS)
    except FileNotFoundError:
        return FolderUsage(0, 0)
    return _Walk(max_entries, max_seconds).run(top)


class _Walk:
    """``folder_usage``'s walk: folders opened with ``O_NOFOLLOW`` from their parent's descriptor,
    every other entry only looked at (``lstat``)."""

    def __init__(self, max_entries: int, max_seconds: float) -> None:
        self.max_entries = max_entries
        self.max_seconds = max_seconds
        self.deadline = time.monotonic() + max_seconds
        self.total = self.entries = 0
        self.stopped = ""
        self.seen: set[tuple[int, int]] = set()
        self.stack: list[tuple[int, int]] = []  # (descriptor, depth) of folders still to list

    def run(self, root: int) -> FolderUsage:
        self.stack.append((root, 0))
        try:
            while self.stack and not self.stopped:
                fd, depth = self.stack.pop()
                try:
                    with os.scandir(fd) as listing:
                        for entry in listing:
                            self._count(fd, entry, depth)
                            if self.stopped:
                                break
                finally:
                    os.close(fd)
        finally:
            for fd, _ in self.stack:
                os.close(fd)
        return FolderUsage(self.total, self.entries, self.stopped)

    def _count(self, parent: int, entry: os.DirEntry[str], depth: int) -> None:
        self.entries += 1
        if self.entries > self.max_entries:
            self.stopped = f"over {self.max_entries:,} entries"
        elif self.entries % 1000 == 0 and time.monotonic() > self.deadline:
            self.stopped = f"not measured within {self.max_seconds:g} s"
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:  # gone meanwhile
            return
        if stat.S_ISDIR(info.st_mode):
            if depth >= MAX_DEPTH:
                self.stopped = f"folders nested over {MAX_DEPTH} deep"
                return
            with contextlib.suppress(OSError):  # gone, or swapped for a link meanwhile: not walked
                self.stack.append((os.open(entry.name, DIR_FLAGS, dir_fd=parent), depth + 1))
        elif info.st_nlink > 1:
            if (info.st_dev, info.st_ino) in self.seen:
                return
            self.seen.add((info.st_dev, info.st_ino))
        blocks = info.st_blocks * 512
        self.total += max(blocks, info.st_size) if stat.S_ISREG(info.st_mode) else blocks
