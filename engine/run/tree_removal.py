"""A folder the agent under test could write in (a run's folder, a player's scratch copy of it, a sandbox's
support folder) removed as the engine must remove it: without following a link, however deep the agent
nested its folders. ``shutil.rmtree`` follows no link either, but it recurses: 5,000 nested folders raise
``RecursionError`` in the engine (a fresh run's reset, a player's end). ``adapters/local/files/safe_tree.py``
re-exports it for the adapters.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(path: Path) -> None:
    """Delete ``path`` and everything below it without following a link: names are unlinked folder by
    folder, each folder opened with ``O_NOFOLLOW``; a folder's own folders are moved up before it is emptied,
    so the descriptors held stay two however deep the agent nested them. A link at ``path`` itself is removed,
    not what it names. ``OSError`` as the file system says it."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(info.st_mode):
        path.unlink()
        return
    top = os.open(path, DIR_FLAGS)
    try:
        pending = os.listdir(top)
        while pending:
            _remove_entry(top, pending.pop(), pending)
    finally:
        os.close(top)
    os.rmdir(path)


def remove_tree_quietly(path: Path) -> None:
    """``remove_tree``, what cannot be removed left in place (``shutil.rmtree(…, ignore_errors=True)``)."""
    with contextlib.suppress(OSError):
        remove_tree(path)


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
