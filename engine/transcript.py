"""``results/<run-id>/transcript.jsonl``: append-only typed events, one JSON object per line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from engine.events import Event, parse_event


class Transcript:
    """Appends events; ``rollback`` cuts back to the length committed in the last saved state."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "ab")  # noqa: SIM115 - kept open for the run's life

    @property
    def size(self) -> int:
        return self._handle.tell()

    def append(self, event: Event) -> None:
        self._handle.write(event.model_dump_json().encode("utf-8") + b"\n")
        self._handle.flush()  # survives kill -9 (the OS has it); fsync is left to state saves

    def rollback(self, size: int) -> None:
        """Drop events written after the last saved state (they are replayed on resume)."""
        if self.size > size:
            self._handle.truncate(size)
            self._handle.seek(size)

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
