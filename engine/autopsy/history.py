"""The history of the agent's memory files in ``results/<run>/memory/``: any file's text at any moment of a run.

A snapshot is one line of ``index.jsonl`` naming, for each memory file that changed since the snapshot before,
the version of its whole text (``blobs.py``: content-addressed, in ``blobs.pack``; only new texts are stored)
and the files removed::

    {"n":0,"p":0,"k":"start","t":"2026-03-02T09:00:00"}
    {"n":57,"p":2,"c":{"MEMORY.md":"1f0c…"}}
    {"n":80,"p":2,"k":"phase"}

``n`` is the number of transcript events before it (the memory as it was after event ``n - 1``), ``p`` the
0-based phase, ``k`` what took it (``KINDS``): the run's start or resume, a message answered (kept only when
a file changed; the kind left out), the end of a phase, a session switch, an agent compaction, the run's end;
``t`` the run's clock at a start or the end (any other moment is its transcript event's). What is empty is
left out.

Written append-only and idempotently: the versions first, each whole or ignored, then the line (a line a kill tore is
skipped on reading, and the next line starts on a line of its own). A run's start or resume writes a ``start``
line holding every file; a reader drops the lines before it taken after its ``n`` (the transcript was cut back
there, so they describe events replayed since), so a ``kill -9`` and a resume leave one consistent history.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from engine.autopsy.blobs import BlobError, BlobStore

FOLDER = "memory"
INDEX = "index.jsonl"
SnapshotKind = Literal["start", "message", "phase", "session", "compaction", "end"]
KINDS: tuple[str, ...] = ("start", "message", "phase", "session", "compaction", "end")


class HistoryError(Exception):
    """A memory history that cannot be read as asked: one line naming the file or the moment."""


@dataclass(frozen=True)
class Snapshot:
    """The agent's memory files at one moment of a run."""

    seq: int  # 1, 2, 3 … in the history as kept
    n: int  # transcript events before it
    phase: int  # 0-based
    kind: str
    t: str  # the run's clock, ISO, at a start or the end ("" elsewhere: the time of its event ``n``)
    files: dict[str, str] = field(default_factory=dict)  # name -> blob
    changed: tuple[str, ...] = ()  # files new or changed since the snapshot before
    removed: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """How a person names it: ``end of phase 3``, ``phase 3 after event #57``, ``session switch in phase 4``."""
        phase = self.phase + 1
        return {
            "start": f"start (phase {phase})",
            "message": f"phase {phase} after event #{self.n - 1}",
            "phase": f"end of phase {phase}",
            "session": f"session switch in phase {phase}",
            "compaction": f"agent compaction in phase {phase}",
            "end": "end of the run",
        }.get(self.kind, f"{self.kind} in phase {phase}")


class MemoryHistory:
    """One run's memory history: ``record`` a snapshot, read the snapshots and any file's text back."""

    def __init__(self, run_dir: Path) -> None:
        self.folder = run_dir / FOLDER
        self.index = self.folder / INDEX
        self.blobs = BlobStore(self.folder)
        self._kept: list[Snapshot] | None = None

    # --- writing ------------------------------------------------------------------------------------

    def record(
        self, files: dict[str, bytes], n: int, phase: int, kind: SnapshotKind, t: str, force: bool = True
    ) -> Snapshot | None:
        """Keep the memory ``files`` as they are at transcript event ``n``; None when nothing changed and not
        ``force`` (a message that wrote nothing). A ``start`` holds every file (the history before it may be
        cut back to its ``n``)."""
        kept = self.snapshots()
        if kind == "start":
            kept = _cut_back(kept, n)
        current = kept[-1].files if kept else {}
        names: dict[str, str] = {}
        changed: dict[str, str] = {}
        for name, data in sorted(files.items()):
            blob, _ = self.blobs.put(data, base=current.get(name))
            names[name] = blob
            if kind == "start" or current.get(name) != blob:
                changed[name] = blob
        removed = [] if kind == "start" else sorted(set(current) - set(files))
        if not (changed or removed or force):
            return None
        line: dict[str, Any] = {"n": n, "p": phase}
        line.update({"k": kind} if kind != "message" else {})
        line.update({"t": t} if kind in ("start", "end") else {})  # else the time of its event ``n``
        line.update({"c": changed} if changed else {})
        line.update({"r": removed} if removed else {})
        self._append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
        snapshot = Snapshot(len(kept) + 1, n, phase, kind, t, names, tuple(changed), tuple(removed))
        self._kept = [*kept, snapshot]
        return snapshot

    def _append(self, line: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.index, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "ab") as handle:
            torn = os.fstat(fd).st_size > 0 and not _ends_with_newline(self.index)
            handle.write(("\n" if torn else "").encode() + line.encode("utf-8") + b"\n")

    # --- reading ------------------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.index.is_file()

    def snapshots(self) -> list[Snapshot]:
        """The snapshots as kept (a resume's ``start`` drops those taken after its moment before it)."""
        if self._kept is None:
            try:
                text = self.index.read_text(encoding="utf-8", errors="replace")
            except FileNotFoundError:
                text = ""
            self._kept = fold(text.splitlines())
        return list(self._kept)

    def before(self, n: int) -> Snapshot | None:
        """The memory as it was when event ``n`` happened: the last snapshot taken at or before it."""
        found = [s for s in self.snapshots() if s.n <= n]
        return found[-1] if found else None

    def at_phase(self, phase: int) -> Snapshot | None:
        """The memory at the end of 1-based ``phase`` (or as far as the run got in it)."""
        found = [s for s in self.snapshots() if s.phase <= phase - 1]
        return found[-1] if found else None

    def text(self, snapshot: Snapshot, name: str) -> str | None:
        """The text of file ``name`` in ``snapshot`` (None: not there then)."""
        blob = snapshot.files.get(name)
        return None if blob is None else self.read(blob)

    def read(self, blob: str) -> str:
        try:
            return self.blobs.get(blob).decode("utf-8", errors="replace")
        except BlobError as exc:
            raise HistoryError(f"memory history {self.folder}: {exc}") from None

    def stored_bytes(self) -> int:
        """What the history takes on disk: its index and its pack of versions."""
        index = self.index.stat().st_size if self.index.is_file() else 0
        return index + self.blobs.stored_bytes()

    def diff(self, a: Snapshot, b: Snapshot, names: Iterable[str] | None = None) -> list[str]:
        """A unified diff of the files (all, or ``names``) from snapshot ``a`` to ``b``."""
        wanted = sorted(set(a.files) | set(b.files)) if names is None else list(names)
        lines: list[str] = []
        for name in wanted:
            if a.files.get(name) == b.files.get(name):
                continue
            before = (self.text(a, name) or "").splitlines(keepends=True)
            after = (self.text(b, name) or "").splitlines(keepends=True)
            lines += [
                line if line.endswith("\n") else line + "\n"
                for line in difflib.unified_diff(
                    before, after, f"{name} @ {a.label}", f"{name} @ {b.label}", n=2
                )
            ]
        return lines


def fold(lines: Iterable[str]) -> list[Snapshot]:
    """Index lines to the snapshots they keep; a line that cannot be read (torn by a kill) is skipped."""
    kept: list[Snapshot] = []
    for raw in lines:
        line = _line(raw)
        if line is None:
            continue
        if line["k"] == "start":
            kept = _cut_back(kept, line["n"])
        files = {} if line["k"] == "start" or not kept else dict(kept[-1].files)
        files.update(line["c"])
        for name in line["r"]:
            files.pop(name, None)
        kept.append(
            Snapshot(
                len(kept) + 1,
                line["n"],
                line["p"],
                line["k"],
                line["t"],
                files,
                tuple(line["c"]),
                tuple(line["r"]),
            )
        )
    return kept


def _cut_back(kept: list[Snapshot], n: int) -> list[Snapshot]:
    """The snapshots taken at or before event ``n``, numbered again."""
    return [
        Snapshot(i + 1, s.n, s.phase, s.kind, s.t, s.files, s.changed, s.removed)
        for i, s in enumerate(x for x in kept if x.n <= n)
    ]


def _line(raw: str) -> dict[str, Any] | None:
    """One index line, checked; None when it is not one."""
    with contextlib.suppress(ValueError):
        line = json.loads(raw)
        if isinstance(line, dict):
            line = {"k": "message", "t": "", "c": {}, "r": [], **line}
        ok = (
            isinstance(line, dict)
            and isinstance(line.get("n"), int)
            and isinstance(line.get("p"), int)
            and line.get("k") in KINDS
            and isinstance(line.get("t"), str)
            and isinstance(line.get("c"), dict)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in line["c"].items())
            and isinstance(line.get("r"), list)
            and all(isinstance(name, str) for name in line["r"])
        )
        return line if ok else None
    return None


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) == b"\n"
