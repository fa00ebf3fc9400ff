"""A run folder mirrored from where it is played (a Ray actor's scratch copy, ``engine/placement/ray_executor.py``) to the
head's ``results/<run>/``, so the head's files are byte for byte what a local run writes. The player's side, what
changed and travels, is ``engine/placement/watcher.py`` (``FolderWatcher`` is imported from here too); this
module is the head's side, the whole folder copied either way (``read_tree``, ``write_tree``, a resume's
``snapshot_for_resume``) and the new events of a mirrored transcript (``new_events``).

``apply_changes`` writes a shipment in the order a local run writes: appended, whole and patched files (a
patched copy replaces the file; all synced when a checkpoint comes with them, as the journal is before
``state.json`` names it), then the report entries (once each), then ``state.json`` (atomically), then what was
removed (journals a newer checkpoint replaced). A shipment applied twice changes nothing the second time, so
the head's folder is one complete checkpoint at every moment, and a run played there can be resumed anywhere.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from engine.events import Event, parse_event
from engine.placement.watcher import STATE, TEMP_PREFIX, TRANSCRIPT, Changes, FileChange, run_files
from engine.placement.watcher import FolderWatcher as FolderWatcher  # imported from here (the actor, tests)
from engine.report.writer import append_once
from engine.state import atomic_write, load_state
from engine.transcript import Transcript


def read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (a run's own lock and socket left out), to write elsewhere."""
    tree: dict[str, bytes] = {}
    for relative in sorted(run_files(folder)):
        try:
            tree[relative] = (folder / relative).read_bytes()
        except FileNotFoundError:
            continue
    return tree


def write_tree(folder: Path, tree: dict[str, bytes]) -> None:
    for relative, data in tree.items():
        path = _inside(folder, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def snapshot_for_resume(run_dir: Path) -> dict[str, bytes]:
    """The run folder as a player resumes it: the transcript first cut back to the last checkpoint, as a
    resume does (so the player never cuts what the head already has), then every file."""
    state = load_state(run_dir / STATE) if (run_dir / STATE).exists() else None
    if state is not None and (run_dir / TRANSCRIPT).exists():
        transcript = Transcript(run_dir / TRANSCRIPT)
        transcript.rollback(state.transcript_bytes)
        transcript.close()
    return read_tree(run_dir) if run_dir.is_dir() else {}


def _inside(folder: Path, relative: str) -> Path:
    """``folder / relative``, refusing a path that leaves the folder."""
    parts = Path(relative).parts
    if not parts or Path(relative).is_absolute() or ".." in parts:
        raise ValueError(f"{relative!r}: not a path inside the run folder")
    return folder / relative


def apply_changes(run_dir: Path, report: Path, changes: Changes) -> None:
    """Write a shipment into the head's run folder, in the order a local run writes (module doc)."""
    state = next((c for c in changes.files if c.path == STATE), None)
    written: list[Path] = []
    for change in changes.files:
        if change is not state:
            written.append(_write(run_dir, change))
    if state is not None:  # a checkpoint: what it names is on disk before it
        for path in written:
            _sync(path)
    for entry in changes.entries:
        append_once(report, entry)
    if state is not None:
        atomic_write(_inside(run_dir, STATE), state.data.decode("utf-8"))
    for relative in changes.deleted:
        path = _inside(run_dir, relative)
        path.unlink(missing_ok=True)
        for parent in path.parents:  # folders a removal emptied (an agent's memory snapshot taken again)
            if parent == run_dir or not parent.is_relative_to(run_dir):
                break
            try:
                parent.rmdir()
            except OSError:
                break


def _write(run_dir: Path, change: FileChange) -> Path:
    path = _inside(run_dir, change.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if change.whole or change.patch is not None:  # a new file replaces it, atomically
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path.parent)
        with os.fdopen(fd, "r+b") as handle:
            if change.patch is None:
                handle.write(change.data)
            else:  # the head's file is the version the blocks were compared with
                with open(path, "rb") as old:
                    shutil.copyfileobj(old, handle)
                handle.truncate(change.size)
                for offset, piece in change.patch:
                    handle.seek(offset)
                    handle.write(piece)
        os.replace(tmp, path)
        return path
    with open(path, "r+b" if path.exists() else "wb") as handle:
        handle.seek(change.offset)
        handle.truncate()
        handle.write(change.data)
    return path


def _sync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fdatasync(fd)
    finally:
        os.close(fd)


def new_events(transcript: Path, offset: int) -> tuple[list[Event], int]:
    """The events written to ``transcript`` from byte ``offset`` on (whole lines), and where they end."""
    try:
        with open(transcript, "rb") as handle:
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return [], offset
    end = data.rfind(b"\n") + 1
    events: list[Event] = []
    for line in data[:end].splitlines():
        try:
            events.append(parse_event(line.decode("utf-8")))
        except ValueError:
            continue
    return events, offset + end
