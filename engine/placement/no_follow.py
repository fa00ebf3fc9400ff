"""A run folder the agent under test writes in, touched by the Ray mirror without following anything planted
there: ``engine/placement/watcher.py`` lists and reads it on the node, ``engine/placement/sync.py`` writes and
reads the head's copy.

The agent may replace any file or folder of its ``agent/`` folder by a symbolic link at any moment on the node,
and a run played locally before may have left links in the head's copy; the engine runs with its user's rights
(root on a server). So every path below the folder is reached one name at a time from the folder's own
descriptor (``O_DIRECTORY|O_NOFOLLOW``, then ``openat`` of each name with ``O_NOFOLLOW``): a link anywhere on the
way, even one swapped in after the folder was listed, is refused by the very open that would follow it.

- **Read**: only a regular file (opened non-blocking, so a FIFO never holds the engine); a link, a folder on the
  way that is a link, anything else is "not there" (``FileNotFoundError``): the node ships nothing of it.
- **Written** (the head, ``make``): folders on the way are made, and a link or a file where the node has a folder
  is unlinked and a real folder made in its place; a file is replaced by a new file (``O_EXCL``) renamed over its
  name, or appended to after a link or a special file at its name is unlinked and a file shared with another
  name (a hard link) copied apart: the head mirrors the node, where those paths are real, and nothing is ever
  written through what was planted.
- **Removed**: ``unlink``/``rmdir`` of names, never of what they point to.

A ``PinnedFolder`` keeps the descriptors of the folders it walked (``KEPT`` at most) for one look or one shipment
only, closed at its end: nothing is kept that the agent could change between two.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path, PurePosixPath
from types import TracebackType
from typing import BinaryIO

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
NEW_FLAGS = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
APPEND_FLAGS = os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
NOT_THERE = frozenset({errno.ENOENT, errno.ELOOP, errno.ENOTDIR, errno.ENXIO})  # gone, a link, a socket
KEPT = 64  # folder descriptors held at once (a deep tree is walked again from its nearest kept folder)
ATTEMPTS = 5  # a name that changes while it is replaced is tried again this many times


def parts_of(relative: str) -> tuple[str, ...]:
    """The names of a path inside a folder, refusing one that leaves it (absolute, ``..``, empty)."""
    path = PurePosixPath(relative)
    if not path.parts or path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{relative!r}: not a path inside the run folder")
    return path.parts


class PinnedFolder:
    """``root`` held by its descriptor, every path below it walked without following a link (module doc).
    ``make``: the head's copy (folders made, links in the way replaced); ``follow_root``: ``root`` itself may be
    a link the user made (a benchmark folder), never anything below it."""

    def __init__(self, root: Path, *, make: bool = False, follow_root: bool = False) -> None:
        self.root = root
        self.make = make
        self._kept: OrderedDict[tuple[str, ...], int] = OrderedDict()
        self._root = self._open_root(follow_root)

    def _open_root(self, follow: bool) -> int | None:
        if self.make:
            self.root.mkdir(parents=True, exist_ok=True)  # the engine's own path, as a local run makes it
        try:
            return os.open(self.root, DIR_FLAGS & ~os.O_NOFOLLOW if follow else DIR_FLAGS)
        except FileNotFoundError:
            return None  # read as empty
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            raise NotADirectoryError(
                f"{self.root}: a symbolic link or a file, not a folder (the Ray mirror never follows a link)"
            ) from None

    def close(self) -> None:
        for fd in self._kept.values():
            os.close(fd)
        self._kept.clear()
        if self._root is not None:
            os.close(self._root)
            self._root = None

    def __enter__(self) -> PinnedFolder:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- walking ------------------------------------------------------------------------------------------

    def _folder(self, parts: tuple[str, ...], make: bool = False) -> int | None:
        """The descriptor of the folder ``parts`` (valid until the next walk), None where it is not a folder
        (a link, a file, missing); with ``make`` (the head's writes) it is made a folder instead."""
        if self._root is None:
            return None
        start, fd = 0, self._root
        for cut in range(len(parts), 0, -1):  # from the nearest folder already walked
            kept = self._kept.get(parts[:cut])
            if kept is not None:
                self._kept.move_to_end(parts[:cut])
                start, fd = cut, kept
                break
        for index in range(start, len(parts)):
            inner = self._step(fd, parts[index], make and self.make)
            if inner is None:
                return None
            self._keep(parts[: index + 1], inner)
            fd = inner
        return fd

    def _step(self, parent: int, name: str, make: bool) -> int | None:
        for _ in range(ATTEMPTS):
            try:
                return os.open(name, DIR_FLAGS, dir_fd=parent)
            except OSError as exc:
                if exc.errno not in NOT_THERE:
                    raise
                if not make:
                    return None
                missing = exc.errno == errno.ENOENT
            with contextlib.suppress(FileNotFoundError, FileExistsError):  # changed meanwhile: tried again
                if not missing:  # a link or a file where the node has a folder: the name, never its target
                    os.unlink(name, dir_fd=parent)
                os.mkdir(name, dir_fd=parent)
        raise OSError(errno.EAGAIN, f"{self.root}: {name!r} kept changing while it was made a folder")

    def _keep(self, parts: tuple[str, ...], fd: int) -> None:
        self._kept[parts] = fd
        while len(self._kept) > KEPT:  # the least recently walked (never the one just kept)
            os.close(self._kept.popitem(last=False)[1])

    def _forget(self, parts: tuple[str, ...]) -> None:
        fd = self._kept.pop(parts, None)
        if fd is not None:
            os.close(fd)

    def parent(self, relative: str, make: bool = False) -> tuple[int, str]:
        """The descriptor of the folder ``relative`` is in (valid until the next walk) and its name; raises
        ``FileNotFoundError`` when a folder on the way is not one, unless ``make`` on the head made it one."""
        parts = parts_of(relative)
        fd = self._folder(parts[:-1], make)
        if fd is None:
            raise FileNotFoundError(errno.ENOENT, "not a folder on the way", str(self.root / relative))
        return fd, parts[-1]

    # -- reading ------------------------------------------------------------------------------------------

    def files(self, skipped: Callable[[str], bool]) -> dict[str, os.stat_result]:
        """Every regular file below the folder by its relative POSIX path, with its stat (``lstat``), but the
        ``skipped`` ones; a folder that is a link is not entered."""
        found: dict[str, os.stat_result] = {}
        stack: list[tuple[str, ...]] = [()]
        while stack:
            parts = stack.pop()
            fd = self._folder(parts)
            if fd is None:
                continue
            prefix = "".join(part + "/" for part in parts)
            with os.scandir(fd) as listing:
                entries = list(listing)
            for entry in entries:  # their stat is an ``fstatat`` in ``fd``, without following
                relative = prefix + entry.name
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((*parts, entry.name))
                    elif entry.is_file(follow_symlinks=False) and not skipped(relative):
                        found[relative] = entry.stat(follow_symlinks=False)
                except FileNotFoundError:  # removed meanwhile
                    continue
        return found

    def open(self, relative: str) -> BinaryIO:
        """``relative`` opened for reading; ``FileNotFoundError`` unless it is a regular file reached without
        following a link."""
        folder, name = self.parent(relative)
        handle = regular(folder, name)
        if handle is None:
            raise FileNotFoundError(errno.ENOENT, "not a regular file", str(self.root / relative))
        return handle

    def read(self, relative: str) -> bytes:
        with self.open(relative) as handle:
            return handle.read()

    def sync(self, relative: str) -> None:
        """``relative``'s data on the disk (a checkpoint names it)."""
        with self.open(relative) as handle:
            os.fdatasync(handle.fileno())

    # -- the head's writes ----------------------------------------------------------------------------------

    def remove(self, relative: str) -> None:
        """``relative``'s name unlinked (if there), then the folders that emptied, up to the root; a folder on
        the way that is not one (a link) means nothing to remove."""
        parts = parts_of(relative)
        folder = self._folder(parts[:-1])
        if folder is None:
            return
        with contextlib.suppress(FileNotFoundError):
            os.unlink(parts[-1], dir_fd=folder)
        for cut in range(len(parts) - 1, 0, -1):  # folders a removal emptied (a memory snapshot taken again)
            parent = self._folder(parts[: cut - 1])
            if parent is None:
                return
            try:
                os.rmdir(parts[cut - 1], dir_fd=parent)  # a link there is ENOTDIR: never followed
            except OSError:
                return
            self._forget(parts[:cut])


def regular(folder: int, name: str) -> BinaryIO | None:
    """``name`` in ``folder`` opened for reading if it is a regular file (not a link: never followed), else None."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=folder)
    except OSError as exc:
        if exc.errno in NOT_THERE:
            return None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    return os.fdopen(fd, "rb")


@contextlib.contextmanager
def new_file(folder: int, name: str, prefix: str) -> Iterator[BinaryIO]:
    """A new file (``O_EXCL``, a random name starting ``prefix``) that replaces ``name`` once written, however
    the name is now (a link is replaced, never followed); removed if the writing fails."""
    temp, fd = _temp(folder, prefix)
    try:
        with os.fdopen(fd, "r+b") as handle:
            yield handle
        os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp, dir_fd=folder)
        raise


def _temp(folder: int, prefix: str) -> tuple[str, int]:
    for _ in range(ATTEMPTS):
        temp = f"{prefix}{secrets.token_hex(8)}"
        with contextlib.suppress(FileExistsError):
            return temp, os.open(temp, NEW_FLAGS, 0o600, dir_fd=folder)
    raise FileExistsError(errno.EEXIST, "no free temporary name", prefix)


def writable(folder: int, name: str, prefix: str) -> BinaryIO:
    """``name`` in ``folder`` opened to write in place, made if missing; a link or a special file at the name
    is unlinked first (never followed), and a file with other names (a hard link) is copied apart first."""
    for _ in range(ATTEMPTS):
        try:
            fd = os.open(name, APPEND_FLAGS, 0o666, dir_fd=folder)
        except OSError as exc:
            if exc.errno not in (errno.ELOOP, errno.ENXIO):  # a link or a socket at the name
                raise
            fd = None
        if fd is not None:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_nlink == 1:
                return os.fdopen(fd, "r+b")
            if stat.S_ISREG(info.st_mode):  # shared with another name: this one gets a copy of its own
                with os.fdopen(fd, "rb") as shared, new_file(folder, name, prefix) as copy:
                    shutil.copyfileobj(shared, copy)
                continue
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder)
    raise OSError(errno.EAGAIN, f"{name!r} kept changing while it was opened to be written")
