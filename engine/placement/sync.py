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

No link is followed either way (``engine/placement/no_follow.py``): a link left in the head's folder where a
shipment writes is replaced by what the node has there (a real folder, a regular file), a removal unlinks
names, and ``read_tree``/``snapshot_for_resume`` read no file through a link.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from engine.events import Event, parse_event
from engine.placement.no_follow import (
    NOT_THERE,
    READ_FLAGS,
    PinnedFolder,
    new_file,
    parts_of,
    regular,
    writable,
)
from engine.placement.watcher import STATE, TEMP_PREFIX, TRANSCRIPT, Changes, FileChange, mirrored_files
from engine.placement.watcher import FolderWatcher as FolderWatcher  # imported from here (the actor, tests)
from engine.report.writer import append_once
from engine.state import atomic_write, load_state
from engine.transcript import Transcript


def read_tree(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (a run's own lock and socket left out), to write elsewhere; ``folder`` itself
    may be a link (a benchmark folder), nothing below it is read through one."""
    return _read_tree(folder, follow_root=True)


def _read_tree(folder: Path, follow_root: bool) -> dict[str, bytes]:
    tree: dict[str, bytes] = {}
    with PinnedFolder(folder, follow_root=follow_root) as pinned:
        for relative in sorted(mirrored_files(pinned)):
            try:
                tree[relative] = pinned.read(relative)
            except FileNotFoundError:  # removed, or not a regular file any more
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
    _refuse_linked_run_files(run_dir)
    state = load_state(run_dir / STATE) if (run_dir / STATE).exists() else None
    if state is not None and (run_dir / TRANSCRIPT).exists():
        transcript = Transcript(run_dir / TRANSCRIPT)
        transcript.rollback(state.transcript_bytes)
        transcript.close()
    return _read_tree(run_dir, follow_root=False) if run_dir.is_dir() else {}


def _refuse_linked_run_files(run_dir: Path) -> None:
    """The run's own files, read and cut by path above, must be what they seem: a link (or anything but a
    regular file) at one of them is an error naming it, never followed."""
    if run_dir.is_symlink():
        raise ValueError(
            f"{run_dir}: a symbolic link, not the run's folder (the Ray mirror never follows a link)"
        )
    names = [STATE, TRANSCRIPT, *sorted(path.name for path in run_dir.glob("journal.*.jsonl"))]
    for name in names:
        try:
            mode = os.lstat(run_dir / name).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISREG(mode):
            kind = "a symbolic link" if stat.S_ISLNK(mode) else "not a regular file"
            raise ValueError(
                f"{run_dir / name}: {kind}, not the run's own file (the Ray mirror never follows a link); "
                "remove it to resume the run"
            )


def _inside(folder: Path, relative: str) -> Path:
    """``folder / relative``, refusing a path that leaves the folder."""
    parts_of(relative)
    return folder / relative


def apply_changes(run_dir: Path, report: Path, changes: Changes) -> None:
    """Write a shipment into the head's run folder, in the order a local run writes (module doc)."""
    state = next((c for c in changes.files if c.path == STATE), None)
    with PinnedFolder(run_dir, make=True) as pinned:
        written: list[str] = []
        for change in changes.files:
            if change is not state:
                _write(pinned, change)
                written.append(change.path)
        if state is not None:  # a checkpoint: what it names is on disk before it
            for relative in written:
                pinned.sync(relative)
        for entry in changes.entries:
            append_once(report, entry)
        if state is not None:
            atomic_write(_inside(run_dir, STATE), state.data.decode("utf-8"))
        for relative in changes.deleted:
            pinned.remove(relative)  # and the folders it emptied (an agent's memory snapshot taken again)


def _write(pinned: PinnedFolder, change: FileChange) -> None:
    folder, name = pinned.parent(change.path, make=True)
    if change.whole or change.patch is not None:  # a new file replaces it, atomically
        with new_file(folder, name, TEMP_PREFIX) as handle:
            if change.patch is None:
                handle.write(change.data)
            else:  # the head's file is the version the blocks were compared with (a link is none)
                old = regular(folder, name)
                if old is not None:
                    with old:
                        shutil.copyfileobj(old, handle)
                handle.truncate(change.size)
                for offset, piece in change.patch:
                    handle.seek(offset)
                    handle.write(piece)
        return
    with writable(folder, name, TEMP_PREFIX) as handle:
        handle.seek(change.offset)
        handle.truncate()
        handle.write(change.data)


def new_events(transcript: Path, offset: int) -> tuple[list[Event], int]:
    """The events written to ``transcript`` from byte ``offset`` on (whole lines), and where they end."""
    try:
        fd = os.open(transcript, READ_FLAGS)  # never through a link
    except OSError as exc:  # not there yet (or a link: the next shipment of it replaces it)
        if exc.errno not in NOT_THERE:
            raise
        return [], offset
    with os.fdopen(fd, "rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    events: list[Event] = []
    for line in data[:end].splitlines():
        try:
            events.append(parse_event(line.decode("utf-8")))
        except ValueError:
            continue
    return events, offset + end
