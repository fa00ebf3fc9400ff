"""``mmb-tui memory RUN [--at MOMENT] [FILE]`` and ``mmb-tui memory RUN --diff A B [FILE]``: the agent's memory
files at any moment of a saved run, from its memory history (``engine/autopsy/history.py``).

A moment is a 1-based phase (the memory at its end, or as far as the run got in it), ``start``, ``end`` (the
default: the last snapshot), or ``#N``, the memory as it was when transcript event N happened. Without FILE the
files of that moment are listed with their size and when each last changed; ``--snapshots`` lists every
snapshot. Every mistake is one line naming what was asked and what there is.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from engine.autopsy.history import HistoryError, MemoryHistory, Snapshot
from engine.config import Config


class MomentError(Exception):
    """A moment that names no snapshot: one line."""


def moment(history: MemoryHistory, spec: str) -> Snapshot:
    """The snapshot a moment names (see the module's docstring)."""
    kept = history.snapshots()
    if not kept:
        raise MomentError(f"{history.index}: no snapshot yet")
    spec = spec.strip()
    if spec == "end":
        return kept[-1]
    if spec == "start":
        return kept[0]
    if spec.startswith("#") and spec[1:].isdigit():
        found = history.before(int(spec[1:]))
        if found is None:
            raise MomentError(f"--at {spec}: the first snapshot is after event #{kept[0].n}")
        return found
    if spec.isdigit():
        phases = sorted({s.phase + 1 for s in kept})
        found = history.at_phase(int(spec)) if 1 <= int(spec) <= phases[-1] else None
        if found is None:
            raise MomentError(f"--at {spec}: the memory history has phases {phases[0]}–{phases[-1]}")
        return found
    raise MomentError(f"--at {spec!r}: a phase number, start, end or #EVENT")


def last_change(history: MemoryHistory, snapshot: Snapshot, name: str) -> Snapshot | None:
    """The snapshot at or before ``snapshot`` in which ``name`` took the text it has there."""
    found = None
    for s in history.snapshots()[: snapshot.seq]:
        if name in s.changed:
            found = s
    return found


def file_lines(history: MemoryHistory, snapshot: Snapshot) -> list[str]:
    """The files of a snapshot: name, characters, lines, when it last changed."""
    if not snapshot.files:
        return [f"(no memory files at {snapshot.label})"]
    lines = []
    for name in sorted(snapshot.files):
        text = history.text(snapshot, name) or ""
        changed = last_change(history, snapshot, name)
        when = f"last changed {changed.label}{_event(changed)}" if changed else ""
        lines.append(f"{name}  {len(text):,} characters, {len(text.splitlines())} lines  {when}".rstrip())
    return lines


def snapshot_lines(history: MemoryHistory) -> list[str]:
    return [
        f"{s.seq:>4}  #{s.n:<6} {s.label:<34} {', '.join(s.changed) or '—'}"
        + (f"  removed {', '.join(s.removed)}" if s.removed else "")
        for s in history.snapshots()
    ]


def main_memory(
    config: Config,
    run_id: str,
    at: str | None = None,
    name: str | None = None,
    diff: list[str] | None = None,
    snapshots: bool = False,
    out: TextIO | None = None,
) -> int:
    """The command; 0, or 1 with one line on stderr."""
    out = out or sys.stdout
    run_dir: Path = config.results_path() / run_id
    history = MemoryHistory(run_dir)
    try:
        if not run_dir.is_dir():
            raise MomentError(f"no run {run_id!r} in {config.results_path()}")
        if not history.exists():
            raise MomentError(
                f"{run_id}: no memory history ({history.index} is missing: its agent exposes no memory files,"
                " or it played before the history was kept)"
            )
        out.write("".join(f"{line}\n" for line in _lines(history, at, name, diff, snapshots)))
    except (MomentError, HistoryError) as exc:
        print(f"mmb-tui memory: {exc}", file=sys.stderr)
        return 1
    return 0


def _lines(
    history: MemoryHistory, at: str | None, name: str | None, diff: list[str] | None, snapshots: bool
) -> list[str]:
    if snapshots:
        return snapshot_lines(history)
    if diff:
        a, b = moment(history, diff[0]), moment(history, diff[1])
        if name is not None and name not in a.files and name not in b.files:
            raise MomentError(f"{name}: in neither {a.label} nor {b.label} ({_names(a, b)})")
        changes = history.diff(a, b, None if name is None else [name])
        return [line.rstrip("\n") for line in changes] or [f"no change from {a.label} to {b.label}"]
    snapshot = moment(history, at or "end")
    if name is None:
        return [f"memory at {snapshot.label}{_event(snapshot)}:", *file_lines(history, snapshot)]
    text = history.text(snapshot, name)
    if text is None:
        raise MomentError(f"{name}: not in the memory at {snapshot.label} ({_names(snapshot)})")
    return text.splitlines()


def _event(snapshot: Snapshot) -> str:
    return f" (after event #{snapshot.n - 1})" if snapshot.n > 0 and snapshot.kind != "message" else ""


def _names(*snapshots: Snapshot) -> str:
    names = sorted({name for s in snapshots for name in s.files})
    return "files then: " + ", ".join(names) if names else "no memory files then"
