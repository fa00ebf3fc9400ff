"""Files in a folder the agent under test can write in (its run's ``agent`` folder), touched by the engine
without following anything the agent planted there.

The engine runs with its user's rights (root on a server); the agent, boxed, writes only in its folder and may
replace any file there, between two turns, with a symbolic link or a hard link to a host file, a FIFO or a
folder. So every path below the folder (``AgentFolder``) is reached one name at a time from the folder's own
descriptor (``O_DIRECTORY|O_NOFOLLOW``, then ``openat`` of each name with ``O_NOFOLLOW``): a link anywhere on
the way is refused by the very open that would follow it, so no link swapped in after a check gets through.

- A file **read** must be a regular file with a single name (``st_nlink == 1``: a hard link may be a host
  file's other name), opened non-blocking (a FIFO never holds the engine) and read up to a bound.
- A file **written** is a new file (``O_EXCL``, a random name) renamed over the name: nothing is written
  through what was there. A link, a folder or a shared file at that name is refused all the same, so that it
  is reported.
- A **copy** out of the folder reads as above and writes a new file where the engine alone writes.
- A **removal** unlinks names, never what they point to; a whole tree's removal and the folder's size are
  ``adapters/local/files/safe_tree.py``'s.

Each refusal is an ``UnsafePath`` (an ``AdapterError``: the run waits, naming the file); any other failure of
the file system here is an ``AgentFileError``.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import secrets
import stat
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

from adapters.base import AdapterError

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
CHUNK = 1024 * 1024
P = ParamSpec("P")
R = TypeVar("R")


class AgentFileError(AdapterError):
    """A file of the agent's folder the engine could not read, write or remove."""


class UnsafePath(AgentFileError):
    """A path of the agent's folder the engine refuses to touch: ``path`` and why."""

    def __init__(self, path: Path, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(
            f"refused {path}: {why} (the engine never follows a link, nor opens a shared or special file, "
            "in the agent's folder)"
        )


def kind_of(info: os.stat_result) -> str:
    """What a file is, as a refusal names it."""
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if info.st_nlink != 1:
        return f"a file with {info.st_nlink} names (a hard link)"
    return "a regular file"


def _reported(method: Callable[P, R]) -> Callable[P, R]:
    """A failure of the file system in ``method`` (a full disk, a name swapped for a folder mid-way) as an
    ``AgentFileError`` naming the file, as a refusal is; ``FileNotFoundError`` (absent) is left as it is."""

    @functools.wraps(method)
    def reporting(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (FileNotFoundError, AdapterError):
            raise
        except OSError as exc:
            where = Path(getattr(args[0], "root", "")) / str(args[1]) if len(args) > 1 else exc.filename
            raise AgentFileError(
                f"cannot {method.__name__.strip('_')} {where}: {exc.strerror or exc}"
            ) from None

    return reporting


@contextlib.contextmanager
def reported(where: Path) -> Iterator[None]:
    """A failure of the file system inside the block as an ``AgentFileError`` naming ``where``."""
    try:
        yield
    except OSError as exc:
        raise AgentFileError(f"cannot use {where}: {exc.strerror or exc}") from None


def _single_regular(info: os.stat_result) -> bool:
    return stat.S_ISREG(info.st_mode) and info.st_nlink == 1


@dataclass(frozen=True)
class AgentFolder:
    """A folder the agent can write in; every path below it taken without following a link."""

    root: Path

    # --- paths and descriptors ----------------------------------------------------------------------

    def parts(self, relative: str | Path) -> tuple[str, ...]:
        """The names of ``relative`` below the folder (an absolute path inside it is taken too)."""
        path = Path(relative)
        if path.is_absolute():
            try:
                path = path.relative_to(self.root)
            except ValueError:
                raise UnsafePath(path, f"outside the agent's folder {self.root}") from None
        if not path.parts or ".." in path.parts:
            raise UnsafePath(self.root / path, "not a name inside the agent's folder")
        return path.parts

    def path(self, relative: str | Path) -> Path:
        return self.root.joinpath(*self.parts(relative))

    @contextlib.contextmanager
    def directory(self, names: Sequence[str], create: bool = False) -> Iterator[int]:
        """A descriptor of the folder ``names`` (each opened with ``O_NOFOLLOW``; made 0700 when ``create``)."""
        if create:
            self.root.mkdir(parents=True, exist_ok=True)  # its parents are the engine's own
        fd = open_at(self.root, DIR_FLAGS, self.root)
        try:
            for depth, name in enumerate(names):
                where = self.root.joinpath(*names[: depth + 1])
                if create:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(name, 0o700, dir_fd=fd)
                below = open_at(name, DIR_FLAGS, where, fd)
                os.close(fd)
                fd = below
            yield fd
        finally:
            os.close(fd)

    @_reported
    def make_dirs(self, relative: str | Path) -> None:
        with self.directory(self.parts(relative), create=True):
            pass

    # --- reading --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def opened(self, relative: str | Path) -> Iterator[int | None]:
        """A read descriptor of a regular file with one name (None when it does not exist)."""
        names = self.parts(relative)
        where = self.root.joinpath(*names)
        try:
            with self.directory(names[:-1]) as folder:
                info = os.stat(names[-1], dir_fd=folder, follow_symlinks=False)
                if not _single_regular(info):  # refused unopened: a FIFO or a device has no business here
                    raise UnsafePath(where, kind_of(info))
                # the open refuses what may have been swapped in since, the descriptor is checked again below
                fd = open_at(names[-1], READ_FLAGS, where, folder)
        except FileNotFoundError:
            yield None
            return
        try:
            info = os.fstat(fd)
            if not _single_regular(info):
                raise UnsafePath(where, kind_of(info))
            yield fd
        finally:
            os.close(fd)

    @_reported
    def read(self, relative: str | Path, limit: int) -> bytes | None:
        """The whole file (None when absent); refused when longer than ``limit`` bytes."""
        with self.opened(relative) as fd:
            if fd is None:
                return None
            data = _read_up_to(fd, limit + 1)
        if len(data) > limit:
            raise UnsafePath(self.path(relative), f"longer than {limit:,} bytes")
        return data

    def read_text(self, relative: str | Path, limit: int = 1024 * 1024) -> str | None:
        data = self.read(relative, limit)
        return None if data is None else data.decode("utf-8", errors="replace")

    @_reported
    def read_appended(self, relative: str | Path, offset: int, limit: int = 4 * CHUNK) -> tuple[int, bytes]:
        """A growing file (a log) from ``offset``: ``(where it was read from, at most limit bytes)``; from 0
        when the file is shorter than ``offset`` (a new file), ``(0, b"")`` when it does not exist."""
        with self.opened(relative) as fd:
            if fd is None:
                return 0, b""
            start = offset if os.fstat(fd).st_size >= offset else 0
            os.lseek(fd, start, os.SEEK_SET)
            return start, _read_up_to(fd, limit)

    @_reported
    def size(self, relative: str | Path) -> int:
        """A regular file's length (0 when absent)."""
        with self.opened(relative) as fd:
            return 0 if fd is None else os.fstat(fd).st_size

    @_reported
    def lstat(self, relative: str | Path) -> os.stat_result | None:
        """The entry at ``relative`` itself (a link is not followed); None when absent."""
        names = self.parts(relative)
        try:
            with self.directory(names[:-1]) as folder:
                return os.stat(names[-1], dir_fd=folder, follow_symlinks=False)
        except FileNotFoundError:
            return None

    def is_file(self, relative: str | Path) -> bool:
        """Whether a regular file with one name is there; anything else but nothing is refused."""
        info = self.lstat(relative)
        if info is not None and not _single_regular(info):
            raise UnsafePath(self.path(relative), kind_of(info))
        return info is not None

    @_reported
    def names(self, relative: str | Path) -> list[str]:
        """The names in a folder, sorted ([] when it does not exist)."""
        try:
            with self.directory(self.parts(relative)) as folder:
                return sorted(os.listdir(folder))
        except FileNotFoundError:
            return []

    @_reported
    def copy_out(self, relative: str | Path, destination: Path, limit: int) -> None:
        """Copy a regular file to a new ``destination`` outside the folder (its times kept); refused when
        longer than ``limit`` bytes, nothing left behind."""
        with self.opened(relative) as fd:
            if fd is None:
                raise FileNotFoundError(errno.ENOENT, "no such file", str(self.path(relative)))
            info = os.fstat(fd)
            if info.st_size > limit:
                raise UnsafePath(self.path(relative), f"longer than {limit:,} bytes")
            out = os.open(destination, NEW_FILE_FLAGS, 0o600)
            try:
                with os.fdopen(out, "wb") as target:
                    copied = 0
                    while copied <= limit and (chunk := os.read(fd, CHUNK)):
                        target.write(chunk)
                        copied += len(chunk)
                if copied > limit:  # it grew while copied
                    raise UnsafePath(self.path(relative), f"longer than {limit:,} bytes")
            except BaseException:
                destination.unlink(missing_ok=True)
                raise
        os.utime(destination, ns=(info.st_atime_ns, info.st_mtime_ns))

    # --- writing and removing -------------------------------------------------------------------------

    @_reported
    def write(self, relative: str | Path, data: bytes, mode: int = 0o600) -> None:
        """Replace the file at ``relative`` (its folders made) with ``data``, atomically: a new file renamed
        over the name. A link, a folder or a shared file at the name is refused."""
        names = self.parts(relative)
        where = self.root.joinpath(*names)
        with self.directory(names[:-1], create=True) as folder:
            with contextlib.suppress(FileNotFoundError):
                info = os.stat(names[-1], dir_fd=folder, follow_symlinks=False)
                if not _single_regular(info):
                    raise UnsafePath(where, kind_of(info))
            temp = f".{names[-1][:100]}.{secrets.token_hex(6)}.mmb-tmp"
            fd = open_at(temp, NEW_FILE_FLAGS, where, folder, mode)
            try:
                with os.fdopen(fd, "wb") as handle:
                    handle.write(data)
                os.replace(temp, names[-1], src_dir_fd=folder, dst_dir_fd=folder)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=folder)
                raise

    def write_text(self, relative: str | Path, text: str, mode: int = 0o600) -> None:
        self.write(relative, text.encode("utf-8"), mode)

    @_reported
    def unlink(self, relative: str | Path) -> None:
        """Remove the name (a link itself, never what it names); nothing when absent."""
        names = self.parts(relative)
        try:
            with self.directory(names[:-1]) as folder:
                os.unlink(names[-1], dir_fd=folder)
        except FileNotFoundError:
            return
        except IsADirectoryError:
            raise UnsafePath(self.path(relative), "a folder") from None


def open_at(name: str | Path, flags: int, where: Path, folder: int | None = None, mode: int = 0o600) -> int:
    """``os.open`` of ``name`` (in the folder ``folder``); a refusal naming ``where`` when a link, or a file
    where a folder should be, stood in the way; ``FileNotFoundError`` as it is; any other failure an
    ``AgentFileError``."""
    try:
        return os.open(name, flags, mode, dir_fd=folder)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO, errno.EEXIST):
            what = "in the way"
            with contextlib.suppress(OSError):
                what = kind_of(os.stat(name, dir_fd=folder, follow_symlinks=False))
            if flags & os.O_DIRECTORY and what == "a regular file":
                what = "a file where a folder should be"
            raise UnsafePath(where, what) from None
        raise AgentFileError(f"cannot open {where}: {exc.strerror or exc}") from None


def _read_up_to(fd: int, limit: int) -> bytes:
    chunks: list[bytes] = []
    left = limit
    while left > 0 and (chunk := os.read(fd, min(CHUNK, left))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
