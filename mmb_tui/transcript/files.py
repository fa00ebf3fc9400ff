"""Reading a run's past from ``results/<id>/transcript.jsonl``: only its tail, never the whole file.

The file is read backwards in chunks, each byte once, and only as far back as the lines asked for reach; a
line is parsed as soon as it is whole and held with its long texts cut (``held_events.py``), so a reply of
megabytes costs its parse, never a copy kept or a copy per chunk read.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from engine.events import EVENT_ADAPTER, Event, parse_event
from mmb_tui.transcript.held_events import held

log = logging.getLogger(__name__)

_CHUNK = 1 << 16


def lines_from_end(handle: BinaryIO) -> Iterator[bytes]:
    """The lines of the file behind ``handle``, the last first (without their line breaks; a torn last line
    and blank lines included). Each chunk is read once; only the line being gathered is kept."""
    position = handle.seek(0, os.SEEK_END)
    pieces: list[bytes] = []  # the line being gathered, its last piece first
    while position > 0:
        step = min(_CHUNK, position)
        position -= step
        handle.seek(position)
        chunk = handle.read(step)
        end = len(chunk)
        while (newline := chunk.rfind(b"\n", 0, end)) >= 0:
            pieces.append(chunk[newline + 1 : end])
            yield b"".join(reversed(pieces))
            pieces.clear()
            end = newline
        pieces.append(chunk[:end])
    if pieces:
        yield b"".join(reversed(pieces))  # the first line of the file


def tail_lines(path: Path, max_lines: int) -> list[bytes]:
    """The last ``max_lines`` non-blank lines of ``path``, oldest first."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return []
    lines: list[bytes] = []
    with handle:
        for line in lines_from_end(handle) if max_lines > 0 else ():
            if line.strip():
                lines.append(line)
                if len(lines) == max_lines:
                    break  # nothing before it is read
    return lines[::-1]


def read_tail_events(path: Path, max_events: int) -> list[Event]:
    """The last ``max_events`` events, each held with its long texts cut; a torn or unreadable line is skipped
    (and logged)."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError:
        return []
    events: list[Event] = []
    with handle:
        for line in lines_from_end(handle) if max_events > 0 else ():
            if not line.strip():
                continue
            try:
                events.append(held(_parsed(line)))
            except ValueError as exc:
                log.warning("%s: skipped an unreadable line: %s", path, str(exc).splitlines()[0])
                continue
            if len(events) == max_events:
                break  # nothing before it is read
    return events[::-1]


def _parsed(line: bytes) -> Event:
    """The event on ``line``: its bytes parsed as they are (no decoded copy of a megabyte reply), or, when
    they are not valid UTF-8, decoded with replacement characters first."""
    try:
        return EVENT_ADAPTER.validate_json(line)
    except ValueError:
        return parse_event(line.decode("utf-8", errors="replace"))
