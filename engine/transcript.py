"""``results/<run-id>/transcript.jsonl``: append-only typed events, one JSON object per line.

A checkpoint names the transcript's length, number of events and the SHA-256 of the bytes it covers; a resume
cuts the bytes after that length (a kill's, replayed) once ``checkpointed_problem`` found the part before it
whole and ``digest_problem`` found it unchanged. The digest is kept up to date as events are appended (each save
hashes only the bytes since the last one), so a save costs the same at event 20,000 as at event 200.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from engine.events import Event, parse_event


class Transcript:
    """Appends events; ``rollback`` cuts back to the length committed in the last saved state."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "ab")  # noqa: SIM115 - kept open for the run's life
        self._hash = hashlib.sha256()
        self._hashed = 0  # the bytes ``_hash`` covers, from the start

    @property
    def size(self) -> int:
        return self._handle.tell()

    def digest(self) -> str:
        """The SHA-256 of the transcript as written so far (hex): only the bytes since the last call are read."""
        size = self.size
        if size > self._hashed:
            with open(self.path, "rb") as handle:
                handle.seek(self._hashed)
                self._hash.update(handle.read(size - self._hashed))
            self._hashed = size
        return self._hash.hexdigest()

    def append(self, event: Event) -> None:
        self._handle.write(event.model_dump_json().encode("utf-8") + b"\n")
        self._handle.flush()  # survives kill -9 (the OS has it); fsync is left to state saves

    def rollback(self, size: int) -> None:
        """Drop events written after the last saved state (they are replayed on resume)."""
        if self.size > size:
            self._handle.truncate(size)
            self._handle.seek(size)
        if self._hashed > size:  # hashed past the cut: hashed again from the start when next asked
            self._hash, self._hashed = hashlib.sha256(), 0

    def close(self) -> None:
        self._handle.close()


def read_events(path: Path) -> Iterator[Event]:
    """Every event of a transcript; a torn last line (a kill mid-write) is skipped."""
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                try:
                    yield parse_event(line)
                except ValueError:
                    continue


def checkpointed_problem(path: Path, size: int, events: int) -> str:
    """What is wrong with the part of the transcript at ``path`` a checkpoint covers (its first ``size`` bytes,
    ``events`` events): shorter than that, or its last event (the line ending at byte ``size``) torn, unreadable
    or not numbered ``events - 1``; "" when nothing."""
    if size == 0:
        return ""
    try:
        with open(path, "rb") as handle:
            length = handle.seek(0, os.SEEK_END)
            if length < size:
                return f"{length} bytes, shorter than the {size} bytes the checkpoint covers"
            line = _line_ending_at(handle, size)
    except FileNotFoundError:
        return f"missing, but the checkpoint covers {size} bytes of it"
    except OSError as exc:
        return exc.strerror or str(exc)
    if line is None:
        return f"byte {size}, where the checkpoint ends, does not end an event"
    try:
        event = json.loads(line)
    except ValueError as exc:
        return f"the last checkpointed event, the line ending at byte {size}, is not JSON ({exc})"
    n = event.get("n") if isinstance(event, dict) else None
    if type(n) is not int:
        return f"the last checkpointed event, the line ending at byte {size}, has no event number"
    if n != events - 1:
        return f"the last checkpointed event, the line ending at byte {size}, is #{n}, not #{events - 1}"
    return ""


def _line_ending_at(handle: BinaryIO, end: int) -> bytes | None:
    """The line whose newline is the byte before ``end`` (without it), read backwards; None if that byte is
    no newline."""
    handle.seek(end - 1)
    if handle.read(1) != b"\n":
        return None
    chunks: list[bytes] = []
    position = end - 1
    while position > 0:
        step = min(1 << 16, position)
        position -= step
        handle.seek(position)
        chunk = handle.read(step)
        cut = chunk.rfind(b"\n")
        chunks.append(chunk[cut + 1 :])
        if cut >= 0:
            break
    return b"".join(reversed(chunks))


def digest_problem(path: Path, size: int, sha256: str) -> str:
    """What is wrong with the first ``size`` bytes of the transcript at ``path`` against the digest a checkpoint
    recorded of them (bytes changed inside the checkpointed part, whatever its length); "" when they match or
    no digest was recorded (a state written before digests)."""
    if not sha256:
        return ""
    found = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            left = size
            while left > 0 and (block := handle.read(min(left, 1 << 20))):
                found.update(block)
                left -= len(block)
    except OSError as exc:
        return exc.strerror or str(exc)
    if found.hexdigest() != sha256:
        return (
            f"its first {size} bytes, which the checkpoint covers, differ from what was written "
            "(SHA-256 mismatch): changed after it was saved"
        )
    return ""
