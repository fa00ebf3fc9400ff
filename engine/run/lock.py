"""One owner per run: an OS lock in ``results/<run>/`` taken before anything of the run is written.

The lock is ``flock`` on ``results/<run>/run.lock``, so it dies with its process: a run whose owner was
killed is taken over by the next engine with nothing to clean. The file says who owns it (pid, host, start
time, which front end), for the one-line error a second engine gives and for the TUI's runs table, and
where its control socket is (``socket``, ``engine/placement/remote.py``), for a viewer in another process.

Everything under ``results/`` is its user's only (issue 23): taking the lock sets the process's umask to 077
(``private_umask``: every file 0600, every folder 0700, whoever writes it: the engine, a library caller's run,
the agents it starts), makes the results folder and the run folder 0700, and tightens once what a run of an
older version left open to others (``tighten``). A control socket a killed owner left in a private folder of
its own is removed with that folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import stat
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

LOCK_NAME = "run.lock"
OTHERS = 0o077  # the rights of group and others: none under results/
TIGHTEN_DEPTH = 64  # folders ``tighten`` walks into (each level holds a descriptor)
_LOOK_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
SOCKET_FOLDER_PREFIX = "mmb-"  # a control socket's own folder, made by mkdtemp (``private_folder_for``)


def private_umask() -> None:
    """From now on this process creates files 0600 and folders 0700: its umask gains 077 (bits the host had
    set are kept). Process-wide on purpose, so no writer can forget it; agent processes inherit it."""
    os.umask(os.umask(OTHERS) | OTHERS)


def make_private(path: Path, folder: int | None = None) -> None:
    """Take group's and others' rights off ``path`` (a name in the folder open as ``folder``) when it is this
    user's own (a symbolic link, another user's file or a shared sticky folder such as ``/tmp`` is left as it
    is). The name is opened without following a link and changed through that descriptor: a link the agent
    swapped in after a look is never followed to a host file."""
    try:
        fd = os.open(path, _LOOK_FLAGS, dir_fd=folder)
    except OSError:  # a link (ELOOP), a socket (ENXIO), gone: nothing of ours to tighten
        return
    try:
        _tighten_open(fd)
    finally:
        os.close(fd)


def _tighten_open(fd: int) -> None:
    info = os.fstat(fd)
    mode = stat.S_IMODE(info.st_mode)
    if info.st_uid != os.geteuid() or mode & stat.S_ISVTX or not mode & OTHERS:
        return
    with contextlib.suppress(OSError):
        os.fchmod(fd, mode & ~OTHERS)


def open_to_others(path: Path) -> bool:
    """Whether ``path`` exists with rights for group or others (a run folder of an older version: 0755)."""
    try:
        return bool(os.lstat(path).st_mode & OTHERS)
    except OSError:
        return False


def tighten(folder: Path) -> None:
    """Make everything in ``folder`` and the folder itself private (``make_private``), the folder last: an
    interrupted pass is done again at the next start, since the folder is still open then. Walked from
    descriptors, never through a link, ``TIGHTEN_DEPTH`` folders deep (what lies deeper is behind the
    folder, private at the end)."""
    try:
        top = os.open(folder, _LOOK_FLAGS | os.O_DIRECTORY)
    except OSError:
        return
    stack = [(top, _names(top))]  # a folder open at each level, with the names still to look at
    try:
        while stack:
            fd, names = stack[-1]
            if not names:
                stack.pop()
                _tighten_open(fd)  # a folder after what it holds
                os.close(fd)
                continue
            name = names.pop()
            if len(stack) <= TIGHTEN_DEPTH:
                with contextlib.suppress(OSError):
                    inner = os.open(name, _LOOK_FLAGS | os.O_DIRECTORY, dir_fd=fd)
                    stack.append((inner, _names(inner)))
                    continue
            make_private(Path(name), fd)
    finally:
        for fd, _ in stack:
            os.close(fd)


def _names(folder: int) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


def own_folder(folder: Path, closed: int = OTHERS) -> bool:
    """Whether ``folder`` is a folder of this user's in which others have none of the ``closed`` rights."""
    try:
        info = os.stat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & closed


def private_folder_for(name: str, max_bytes: int) -> Path:
    """A new folder only this user may enter (0700, a random name: ``mkdtemp``, never one another user could
    take first) where ``folder/name`` fits in ``max_bytes``: under ``$XDG_RUNTIME_DIR`` when it is this user's
    private one, else the temp folder, else ``/tmp``. For a control socket whose run folder's path is too
    long."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    bases = [runtime] if os.path.isabs(runtime) and own_folder(Path(runtime)) else []
    bases += [tempfile.gettempdir(), "/tmp"]
    for base in bases:
        if len(os.fsencode(Path(base, SOCKET_FOLDER_PREFIX + "x" * 8, name))) <= max_bytes:
            with contextlib.suppress(OSError):
                return Path(tempfile.mkdtemp(prefix=SOCKET_FOLDER_PREFIX, dir=base))
    raise OSError(f"no private folder for {name} under {', '.join(bases)}")


def check_socket(path: Path) -> None:
    """Refuse (``PermissionError``) a control socket that is not this user's, or in a folder others may write
    in: whoever put it there would read the commands sent to the run and could answer for it."""
    if not own_folder(path.parent, 0o022):
        raise PermissionError(f"{path}: its folder is not this user's own or others may write in it")
    info = os.lstat(path)
    if not stat.S_ISSOCK(info.st_mode) or info.st_uid != os.geteuid():
        raise PermissionError(f"{path}: not a socket of this user's")


def _remove_stale_socket(run_dir: Path, info: dict[str, object]) -> None:
    """The control socket a killed owner named in the lock, when it is in a private folder of its own
    (``SOCKET_FOLDER_PREFIX``): removed with that folder. One in the run folder is replaced by the next
    server."""
    named = info.get("socket")
    if not isinstance(named, str) or not named or info.get("host") != socket.gethostname():
        return
    path = Path(named)
    folder = path.parent
    if not folder.name.startswith(SOCKET_FOLDER_PREFIX) or folder == run_dir.resolve():
        return
    with contextlib.suppress(OSError):
        found = os.lstat(path)
        if stat.S_ISSOCK(found.st_mode) and found.st_uid == os.geteuid():
            path.unlink()
    with contextlib.suppress(OSError):
        if os.lstat(folder).st_uid == os.geteuid():
            folder.rmdir()  # only when empty


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
        """Take the lock or raise ``RunLocked`` naming its owner; the run's files are its user's only from
        here on (``private_umask``; the results and run folders 0700, a run folder of an older version
        tightened: ``tighten``)."""
        private_umask()
        run_dir = self.path.parent
        older = open_to_others(run_dir)
        run_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        make_private(run_dir.parent)  # the results folder
        handle = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 - held until release
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise RunLocked(
                f"run {self.path.parent.name} is being played by {owner_of(self.path.parent) or 'another engine'}"
            ) from None
        if older:
            tighten(run_dir)
        handle.seek(0)
        with contextlib.suppress(ValueError):
            previous = json.loads(handle.read() or "{}")
            if isinstance(previous, dict):
                _remove_stale_socket(run_dir, previous)
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

    def relabel(self, front_end: str) -> None:
        """Say from now on that ``front_end`` plays the run (an app gone headless on a hang-up), lock kept."""
        self.front_end = front_end
        if self._handle is not None:
            self.announce(front_end=front_end)

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


def held(run_dir: Path) -> bool:
    """Whether a process (this one included) holds the run's lock: the run plays and has not ended (paused,
    backing off, played by another process or on a Ray node too). What the comparison marks as playing."""
    return owner_info(run_dir) is not None


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
