"""The player's side of a run folder mirrored to the head (``engine/placement/sync.py`` is the head's side): what
travels (a ``Changes`` shipment of ``FileChange``s, removals and report entries), which files of a run folder
are mirrored (``run_files``), and the ``FolderWatcher`` that tells what changed since the last shipment the
head acknowledged (a lost one is sent again, merged into the next).

The changes are read as one consistent moment: ``state.json`` is looked at before and after the rest, and
everything is read again when a checkpoint landed in between (a newer checkpoint may have pruned the journal
the older one names). A file that only grew since it was shipped (same inode, its first bytes and the bytes
before its old end unchanged: the transcript, the journal, an agent's log) sends what was appended; a file
rewritten in place (an agent's SQLite: its header changes with every write) sends the whole file the first
time, then, if it is big, only the ``BLOCK``s that changed; any other change sends the whole file; a small file
changed twice within the file system's timestamp tick is caught by its digest. New report entries (the
player's own ``report.md``) travel as entries.

The agent writes in the folder with its own tools: nothing is listed or read through a link it planted, even one
swapped in after the listing (``engine/placement/no_follow.py``); a file that became a link is not there.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine.placement.no_follow import PinnedFolder
from engine.placement.remote import SOCKET_NAME
from engine.run.lock import LOCK_NAME

STATE = "state.json"
TRANSCRIPT = "transcript.jsonl"
SKIPPED = frozenset({LOCK_NAME, SOCKET_NAME})  # each process has its own
TAIL = 64  # bytes before a file's old end that must be unchanged for an append
RACY_NS = 2_000_000_000  # a file modified this recently may change again without its stat changing
RACY_MAX = 1024 * 1024  # … and is then compared by digest when it is this small
BLOCK = 16 * 1024  # a file rewritten in place (an agent's SQLite) travels as the blocks that changed …
PATCH_MIN = 4 * BLOCK  # … once it is this big
TEMP_PREFIX = ".mmb-sync-"  # a whole file being replaced at the head
_ENTRY = re.compile(rb"\n?(.*?\xf0\x9f\x93\x8a Entry: [0-9a-f]+\n)", re.DOTALL)  # ends "📊 Entry: <id>"


@dataclass(frozen=True)
class FileChange:
    path: str  # relative to the run folder, POSIX
    offset: int  # ``data`` goes here and what followed is cut; 0 for a whole file
    data: bytes
    whole: bool = False  # replaces the file (atomically)
    patch: tuple[tuple[int, bytes], ...] | None = None  # or: these ranges rewritten in the head's file, …
    size: int = 0  # … cut or grown to ``size`` (atomically: a patched copy replaces it)


@dataclass
class Changes:
    """One shipment: files (``state.json`` last), removed files and new report entries."""

    files: list[FileChange] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.files or self.deleted or self.entries)


@dataclass(frozen=True)
class _Seen:
    """A file as last shipped."""

    size: int
    mtime_ns: int
    ino: int
    tail: bytes  # its last ``TAIL`` bytes
    digest: bytes | None  # of its whole content, when it was read whole
    head: bytes  # its first ``TAIL`` bytes (a file that grew is an append only if they and ``tail`` stayed)
    blocks: tuple[bytes, ...] = ()  # each ``BLOCK``'s digest, once it was rewritten in place (big enough)


def _skipped(relative: str) -> bool:
    name = relative.rsplit("/", 1)[-1]
    return name in SKIPPED or name.startswith((".state.json.", TEMP_PREFIX))  # files being written


def run_files(folder: Path) -> dict[str, os.stat_result]:
    """Every regular file under ``folder`` by its relative POSIX path, with its stat (no link followed)."""
    with PinnedFolder(folder) as pinned:
        return mirrored_files(pinned)


def mirrored_files(pinned: PinnedFolder) -> dict[str, os.stat_result]:
    """``run_files`` of a folder already held."""
    return pinned.files(_skipped)


class FolderWatcher:
    """The player's side: what changed in ``run_dir`` (and ``report``) since the head's last acknowledged
    shipment. ``seq`` numbers the shipments; the head acknowledges the last one it wrote."""

    def __init__(self, run_dir: Path, report: Path) -> None:
        self.run_dir = run_dir
        self.report = report
        self.seq = 0
        self._base = self._seen_now()  # the folder as the head has it (it was just written from there)
        self._report_base = _size(report)
        self._sent: tuple[dict[str, _Seen], int] = (self._base, self._report_base)

    def _seen_now(self) -> dict[str, _Seen]:
        seen: dict[str, _Seen] = {}
        with PinnedFolder(self.run_dir) as pinned:
            for relative, stat in run_files(self.run_dir).items():
                try:
                    with pinned.open(relative) as handle:
                        small = stat.st_size <= RACY_MAX
                        head = b"" if small else handle.read(TAIL)
                        handle.seek(0 if small else stat.st_size - TAIL)
                        data = handle.read()
                except FileNotFoundError:  # removed, or made a link, since it was listed: not there
                    continue
                seen[relative] = _seen(stat, data, whole=small, head=head)
        return seen

    def changes(self, acked: int) -> tuple[int, Changes]:
        """Shipment number ``seq`` with everything changed since shipment ``acked`` reached the head (since
        the one before, when a shipment was lost on the way)."""
        if acked == self.seq:
            self._base, self._report_base = self._sent
        for _ in range(20):
            before = _stat_key(self.run_dir / STATE)
            changes, seen, report_end = self._changes_since_base()
            if _stat_key(self.run_dir / STATE) == before:
                break
        self.seq += 1
        self._sent = (seen, report_end)
        return self.seq, changes

    def _changes_since_base(self) -> tuple[Changes, dict[str, _Seen], int]:
        changes, seen = Changes(), {}
        now = time.time_ns()
        with PinnedFolder(self.run_dir) as pinned:
            listed = sorted(run_files(self.run_dir).items(), key=lambda item: item[0] == STATE)
            for relative, stat in listed:
                old = self._base.get(relative)
                try:
                    change, seen[relative] = self._change(pinned, relative, stat, old, now)
                except FileNotFoundError:  # removed or made a link meanwhile: as if it had never been seen
                    continue
                if change is not None:
                    changes.files.append(change)
        changes.deleted = sorted(set(self._base) - set(seen))
        changes.entries, report_end = self._new_entries()
        return changes, seen, report_end

    def _change(
        self, pinned: PinnedFolder, relative: str, stat: os.stat_result, old: _Seen | None, now: int
    ) -> tuple[FileChange | None, _Seen]:
        size, mtime, ino = stat.st_size, stat.st_mtime_ns, stat.st_ino
        if old is not None and (old.size, old.mtime_ns, old.ino) == (size, mtime, ino):
            if old.digest is None or size > RACY_MAX or now - mtime > RACY_NS:
                return None, old
            data = pinned.read(relative)  # modified within the tick: its stat cannot tell
            if _digest(data) == old.digest:
                return None, old
            return FileChange(relative, 0, data, whole=True), _seen(stat, data, whole=True, blocks=True)
        in_place = old is not None and ino == old.ino
        if old is not None and in_place and size > old.size and not old.blocks:
            start = old.size - len(old.tail)
            with pinned.open(relative) as handle:
                head = handle.read(len(old.head))
                handle.seek(start)
                data = handle.read(size - start)
            if head == old.head and data[: len(old.tail)] == old.tail:
                appended = data[len(old.tail) :]
                new = _Seen(
                    old.size + len(appended),
                    mtime,
                    ino,
                    (old.tail + appended)[-TAIL:],
                    None,
                    (old.head + appended[:TAIL])[:TAIL],
                )
                return FileChange(relative, old.size, appended), new
        data = pinned.read(relative)
        seen = _seen(stat, data, whole=True, blocks=in_place)
        if old is not None and old.blocks and seen.blocks:
            if seen.blocks == old.blocks and seen.size == old.size:
                return None, seen  # touched, not changed
            change = _patch(relative, data, old.blocks, seen.blocks)
            if change.patch and change.patch[0][0] >= old.size // BLOCK * BLOCK and size >= old.size:
                seen = replace(seen, blocks=())  # it grew at its end: told from its head and tail again
            return change, seen
        return FileChange(relative, 0, data, whole=True), seen

    def _new_entries(self) -> tuple[list[str], int]:
        """Report entries appended since the acknowledged shipment, and the report's length they end at."""
        try:
            with open(self.report, "rb") as handle:
                handle.seek(self._report_base)
                text = handle.read()
        except FileNotFoundError:
            return [], self._report_base
        entries, end = [], 0
        for match in _ENTRY.finditer(text):
            if (
                match.start() != end
            ):  # not an entry as ``engine/report/writer.py`` writes one: left to the next look
                break
            entries.append(match[1].decode("utf-8"))
            end = match.end()
        return entries, self._report_base + end


def _seen(stat: os.stat_result, data: bytes, whole: bool, head: bytes = b"", blocks: bool = False) -> _Seen:
    """``data``: the whole file, or (``whole`` false) at least its tail, ``head`` then its first bytes;
    ``blocks``: it was rewritten in place (appends are cheaper to tell for the files that only grow)."""
    size = len(data) if whole else stat.st_size
    digest = _digest(data) if whole else None
    first = data[:TAIL] if whole else head
    digests = _blocks(data) if whole and blocks and size >= PATCH_MIN else ()
    return _Seen(size, stat.st_mtime_ns, stat.st_ino, data[-TAIL:], digest, first, digests)


def _blocks(data: bytes) -> tuple[bytes, ...]:
    view = memoryview(data)
    return tuple(
        hashlib.blake2b(view[start : start + BLOCK], digest_size=16).digest()
        for start in range(0, len(data), BLOCK)
    )


def _patch(relative: str, data: bytes, old: tuple[bytes, ...], new: tuple[bytes, ...]) -> FileChange:
    """``data`` as the runs of blocks that differ from ``old`` (or the whole file, when most of it does)."""
    patch: list[tuple[int, bytes]] = []
    run_start: int | None = None
    for index in range(len(new) + 1):
        changed = index < len(new) and (index >= len(old) or new[index] != old[index])
        if changed and run_start is None:
            run_start = index
        elif not changed and run_start is not None:
            patch.append((run_start * BLOCK, data[run_start * BLOCK : index * BLOCK]))
            run_start = None
    if sum(len(piece) for _, piece in patch) * 2 > len(data):
        return FileChange(relative, 0, data, whole=True)
    return FileChange(relative, 0, b"", patch=tuple(patch), size=len(data))


def _digest(data: bytes) -> bytes | None:
    return hashlib.blake2b(data, digest_size=16).digest() if len(data) <= RACY_MAX else None


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        stat = path.stat(follow_symlinks=False)
    except FileNotFoundError:
        return None
    return stat.st_ino, stat.st_mtime_ns, stat.st_size


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
