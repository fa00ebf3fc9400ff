"""A whole folder the agent under test can write in, as the engine must take it: its size, measured without
following a link (``folder_usage``), and its removal, which never follows one (``remove_tree``). Single files
of the folder are ``adapters/local/files/safe_files.py``'s.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from adapters.local.files.safe_files import DIR_FLAGS, open_at

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


# --- removal ----------------------------------------------------------------------------------------------


def remove_tree(path: Path) -> None:
    """Delete ``path`` and everything below it without following a link: names are unlinked folder by
    folder, each folder opened with ``O_NOFOLLOW``; a folder's own folders are moved up before it is emptied,
    so the descriptors held stay two however deep the agent nested them. A link at ``path`` itself is removed,
    not what it names."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return
    top = open_at(path, DIR_FLAGS, path)
    try:
        pending = os.listdir(top)
        while pending:
            _remove_entry(top, pending.pop(), pending)
    finally:
        os.close(top)
    os.rmdir(path)


def _remove_entry(top: int, name: str, pending: list[str]) -> None:
    """Remove ``name`` of the folder ``top``: a file or a link unlinked; a folder's folders moved up into
    ``top`` (queued in ``pending``), its other names unlinked, then the folder itself removed."""
    try:
        info = os.stat(name, dir_fd=top, follow_symlinks=False)
        fd = os.open(name, DIR_FLAGS, dir_fd=top) if stat.S_ISDIR(info.st_mode) else None
    except FileNotFoundError:
        return
    except PermissionError:  # a folder the agent closed (mode 000) and an engine that is not root
        with contextlib.suppress(OSError, NotImplementedError):
            os.chmod(name, 0o700, dir_fd=top, follow_symlinks=False)
        fd = os.open(name, DIR_FLAGS, dir_fd=top)
    except OSError as exc:
        if exc.errno not in (errno.ELOOP, errno.ENOTDIR):  # swapped for a link or a file: unlinked below
            raise
        fd = None
    if fd is None:
        os.unlink(name, dir_fd=top)
        return
    try:
        if stat.S_IMODE(os.fstat(fd).st_mode) & 0o700 != 0o700:  # closed by the agent: opened for its owner
            os.fchmod(fd, 0o700)
        for inner in os.listdir(fd):
            try:
                os.unlink(inner, dir_fd=fd)
            except IsADirectoryError:
                moved = f".mmb-rm-{secrets.token_hex(8)}"
                os.rename(inner, moved, src_dir_fd=fd, dst_dir_fd=top)
                pending.append(moved)
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=top)
