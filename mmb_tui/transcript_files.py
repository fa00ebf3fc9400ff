"""Reading a run's past from ``results/<id>/transcript.jsonl``: only its tail, never the whole file."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from engine.events import Event, parse_event

log = logging.getLogger(__name__)

_CHUNK = 1 << 16


def tail_lines(path: Path, max_lines: int) -> list[bytes]:
    """The last ``max_lines`` complete lines of ``path`` (read backwards in chunks)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return []
    with handle:
        handle.seek(0, os.SEEK_END)
        position = handle.tell()
        buffer = b""
        while position > 0 and buffer.count(b"\n") <= max_lines:
            step = min(_CHUNK, position)
            position -= step
            handle.seek(position)
            buffer = handle.read(step) + buffer
    lines = buffer.split(b"\n")
    if position > 0:
        lines = lines[1:]  # the first piece may be a partial line
    return [line for line in lines if line.strip()][-max_lines:]


def read_tail_events(path: Path, max_events: int) -> list[Event]:
    """The last ``max_events`` events; a torn or unreadable line is skipped (and logged)."""
    events: list[Event] = []
    for line in tail_lines(path, max_events + 1):  # one spare for a torn last line
        try:
            events.append(parse_event(line.decode("utf-8", errors="replace")))
        except ValueError as exc:
            log.warning("%s: skipped an unreadable line: %s", path, str(exc).splitlines()[0])
    return events[-max_events:]
