"""Diagnostics go to ``results/mmb-tui.log`` (the app's and the headless runner's), never to the terminal
under it, each line once.

A log that cannot be written (a full disk, a removed folder) never raises into the program nor prints
``--- Logging error ---`` with a traceback: ``SafeFileHandler`` counts the lines it lost, tells its first
failure once to whoever watches (``watch_log_failures``: the headless output, the app's notifications), and
writes the count into the log once it can be written again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

_handler: logging.Handler | None = None
_attached = False
_previous_level = logging.NOTSET
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

LogFailure = Callable[[str], object]  # told once, from the thread that logged: must be quick, never log


class SafeFileHandler(logging.FileHandler):
    """A file handler whose failures are counted, never raised or printed.

    A failed write drops the line (and the stream with whatever it buffered, reopened on the next line), so
    ``lost`` is exactly the lines missing from the file; the first failure is told to the listeners once.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(path, encoding="utf-8", delay=True)
        self.lost = 0  # lines not written since the last line that was
        self.lost_total = 0
        self.error = ""  # why the latest write failed
        self.listeners: list[LogFailure] = []
        self.told = False
        try:  # made at once (users look for it), but never raising: a read-only folder is told like a full disk
            self.stream = self._open()
        except OSError as exc:
            self._failed(exc, line=False)

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = self.format(record) + self.terminator
        except Exception:  # a call with the wrong arguments: its line as it came, not a failure of the file
            text = f"{record.levelname} {record.name}: {str(record.msg)[:500]!r} (not formatted)\n"
        try:
            if self.stream is None:
                self.stream = self._open()
            if self.lost:
                text = f"({self.lost} earlier lines of this log could not be written: {self.error})\n" + text
            self.stream.write(text)
            self.stream.flush()
        except RecursionError:
            raise
        except Exception as exc:
            self._failed(exc)
        else:
            self.lost = 0

    def handleError(self, record: logging.LogRecord) -> None:  # noqa: N802 - logging's name
        """What ``logging`` calls on an error of its own: counted like a failed write, never printed."""
        self._failed(sys.exc_info()[1])

    def flush(self) -> None:
        try:
            super().flush()
        except Exception as exc:
            self._failed(exc)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            super().close()

    def describe(self) -> str:
        """The failure as told: the file, why, and that lines are dropped."""
        return (
            f"cannot write the log {self.baseFilename}: {self.error}; "
            "its lines are dropped (and counted) until it can be written again"
        )

    def _failed(self, exc: BaseException | None, line: bool = True) -> None:
        self.lost += line
        self.lost_total += line
        self.error = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__) if exc else "error"
        stream, self.stream = self.stream, None  # what it buffered is dropped with it
        if stream is not None:
            with contextlib.suppress(Exception):
                stream.close()
        if not self.told:
            self.told = True
            for listener in list(self.listeners):
                with contextlib.suppress(Exception):
                    listener(self.describe())


def _handlers_of(path: Path) -> list[logging.FileHandler]:
    """The root logger's handlers that write to ``path`` (the command line's, or the app's)."""
    target = os.path.abspath(path)
    return [
        handler
        for handler in logging.getLogger().handlers
        if isinstance(handler, logging.FileHandler) and handler.baseFilename == target
    ]


def watch_log_failures(listener: LogFailure) -> Callable[[], None]:
    """Tell ``listener`` the first failure of each log file the root logger writes (at once if one has
    failed already); returns what stops it."""
    handlers = [h for h in logging.getLogger().handlers if isinstance(h, SafeFileHandler)]
    for handler in handlers:
        handler.listeners.append(listener)
        if handler.told:
            with contextlib.suppress(Exception):
                listener(handler.describe())

    def stop() -> None:
        for handler in handlers:
            with contextlib.suppress(ValueError):
                handler.listeners.remove(listener)

    return stop


@contextlib.contextmanager
def file_log(path: Path) -> Iterator[None]:
    """The command line's log: every logger (engine included) at INFO into ``path`` while the block runs,
    then the root logger as it was (a test calling ``main`` leaves nothing behind)."""
    root = logging.getLogger()
    level = root.level
    added: SafeFileHandler | None = None
    if not _handlers_of(path):
        added = SafeFileHandler(path)
        added.setFormatter(logging.Formatter(_FORMAT))
        root.addHandler(added)
    if level > logging.INFO or level == logging.NOTSET:
        root.setLevel(logging.INFO)
    try:
        yield
    finally:
        root.setLevel(level)
        if added is not None:
            root.removeHandler(added)
            added.close()


def attach_file_log(path: Path) -> None:
    """Route every logger (engine included) and Python warnings to ``path`` — once: a handler already
    writing there is kept, not doubled (each line would be written twice)."""
    global _handler, _attached, _previous_level
    if _attached:
        return
    root = logging.getLogger()
    _previous_level = root.level
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    _attached = True
    if _handlers_of(path):
        return
    handler: logging.Handler = SafeFileHandler(path)
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)  # a read-only folder must not break the app
    handler.setFormatter(logging.Formatter(_FORMAT))
    root.addHandler(handler)
    _handler = handler


def detach_file_log() -> None:
    """Undo ``attach_file_log``: its handler removed (one it found in place stays), the level restored."""
    global _handler, _attached
    if not _attached:
        return
    root = logging.getLogger()
    if _handler is not None:
        root.removeHandler(_handler)
        _handler.close()
    root.setLevel(_previous_level)
    logging.captureWarnings(False)
    _handler, _attached = None, False
