"""Reading the events around event ``n`` of ``transcript.jsonl``: a binary search over the file by the events'
``n`` fields (ascending), so a jump into a long transcript reads a few lines, never the whole file."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import BinaryIO

from engine.events import Event, parse_event

log = logging.getLogger(__name__)


def _number(line: bytes) -> int | None:
    try:
        value = json.loads(line).get("n")
    except (ValueError, AttributeError):
        return None  # a torn or foreign line
    return value if isinstance(value, int) else None


def _first_line_at(handle: BinaryIO, offset: int) -> tuple[int, bytes]:
    """The first complete line starting at or after ``offset``: its start and its bytes (b"" at the end)."""
    handle.seek(max(0, offset - 1))
    if offset > 0 and handle.read(1) != b"\n":
        handle.readline()  # the rest of the line that holds ``offset``
    start = handle.tell()
    return start, handle.readline()


def _start_of(handle: BinaryIO, size: int, target: int) -> int:
    """The file offset of the first line whose event number is ``target`` or more (``size`` when none is)."""
    low, high = 0, size
    while low < high:
        middle = (low + high) // 2
        start, line = _first_line_at(handle, middle)
        number = _number(line) if line else None
        while line and number is None:  # an unreadable line: decide by the next one
            line = handle.readline()
            number = _number(line) if line else None
        if not line or (number is not None and number >= target):
            high = middle
        else:
            low = start + 1  # every offset up to this line's start finds an earlier event
    return _first_line_at(handle, low)[0]


def events_around(path: Path, n: int, count: int) -> tuple[list[Event], bool]:
    """Up to ``count`` events around event ``n`` (centred, or the last ``count`` near the end), and whether
    they reach the end of the file."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return [], True
    with handle:
        size = handle.seek(0, 2)
        events, at_end = _read(handle, _start_of(handle, size, max(1, n - count // 2)), count, path)
        if at_end and events and len(events) < count and events[0].n > 1:  # near the end: fill from before
            first = max(1, events[-1].n - count + 1)
            events, at_end = _read(handle, _start_of(handle, size, first), count, path)
    return events, at_end


def _read(handle: BinaryIO, offset: int, count: int, path: Path) -> tuple[list[Event], bool]:
    handle.seek(offset)
    events: list[Event] = []
    while len(events) < count:
        line = handle.readline()
        if not line:
            return events, True
        if not line.strip():
            continue
        try:
            events.append(parse_event(line.decode("utf-8", errors="replace")))
        except ValueError as exc:
            log.warning("%s: skipped an unreadable line: %s", path, str(exc).splitlines()[0])
    for line in handle:
        if line.strip():
            return events, False
    return events, True
