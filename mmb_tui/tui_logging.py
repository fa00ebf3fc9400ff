"""Diagnostics go to ``results/mmb-tui.log`` while the app runs, never to the terminal under it."""

from __future__ import annotations

import logging
import os
from pathlib import Path

_handler: logging.Handler | None = None
_attached = False
_previous_level = logging.NOTSET
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _logs_to(path: Path) -> bool:
    """Whether the root logger already writes to ``path`` (the command line's ``basicConfig`` does)."""
    target = os.path.abspath(path)
    return any(
        isinstance(handler, logging.FileHandler) and handler.baseFilename == target
        for handler in logging.getLogger().handlers
    )


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
    if _logs_to(path):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()  # a read-only folder must not break the app
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
