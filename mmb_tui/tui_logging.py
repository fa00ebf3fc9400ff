"""Diagnostics go to ``results/mmb-tui.log`` while the app runs, never to the terminal under it."""

from __future__ import annotations

import logging
from pathlib import Path

_handler: logging.Handler | None = None
_previous_level = logging.NOTSET
_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def attach_file_log(path: Path) -> None:
    """Route every logger (engine included) and Python warnings to ``path``."""
    global _handler, _previous_level
    if _handler is not None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()  # a read-only folder must not break the app
    handler.setFormatter(logging.Formatter(_FORMAT))
    root = logging.getLogger()
    root.addHandler(handler)
    _previous_level = root.level
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)
    logging.captureWarnings(True)
    _handler = handler


def detach_file_log() -> None:
    global _handler
    if _handler is None:
        return
    root = logging.getLogger()
    root.removeHandler(_handler)
    root.setLevel(_previous_level)
    _handler.close()
    logging.captureWarnings(False)
    _handler = None
