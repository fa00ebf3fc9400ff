"""The memory beside an answer, for a viewer (the report browser): the file of an attribution's focus at the
line that matters, before and after the change that mattered (``Attribution.focus``), a few lines around it,
numbered, the line itself marked. Read from the run's memory history; None where there is nothing to show (no
memory access, nothing to look up)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.autopsy.attribution import Attribution, Autopsy
from engine.autopsy.history import Snapshot
from engine.autopsy.values import Place, content_stems
from engine.events import EvaluationLogged

AROUND = 3  # lines shown on each side of the line that matters


@dataclass(frozen=True)
class Version:
    label: str  # the snapshot's: "end of phase 2", "phase 3 after event #57"
    lines: list[str]  # ``"> 12  text"`` for the line that matters, ``"  11  text"`` around it


@dataclass(frozen=True)
class Excerpt:
    file: str
    attribution: Attribution
    before: Version | None  # None: the file did not exist before the change
    after: Version


def memory_excerpt(run_dir: Path, evaluation: EvaluationLogged, around: int = AROUND) -> Excerpt | None:
    """The memory file beside ``evaluation``'s answer, before and after the change that mattered."""
    autopsy = Autopsy(run_dir)
    found = autopsy.attribute(evaluation)
    focus = found.focus
    if focus is None:
        return None
    kept = {s.seq: s for s in autopsy.history.snapshots()}
    after = kept[focus.after]
    anchor = Place(focus.file, focus.line, focus.text)
    before = kept.get(focus.before) if focus.before is not None else None
    return Excerpt(
        focus.file,
        found,
        _version(autopsy, before, anchor, around) if before is not None else None,
        _version(autopsy, after, anchor, around),
    )


def _version(autopsy: Autopsy, snapshot: Snapshot, anchor: Place, around: int) -> Version:
    """The file in ``snapshot`` around the line most about ``anchor`` (its number when none shares a word)."""
    lines = (autopsy.history.text(snapshot, anchor.file) or "").splitlines()
    wanted = content_stems(anchor.text)
    shared = [
        (len(wanted & content_stems(line)), -abs(i + 1 - anchor.line), i) for i, line in enumerate(lines)
    ]
    best = max(shared)[2] + 1 if shared and max(shared)[0] else min(anchor.line, max(len(lines), 1))
    first, last = max(1, best - around), min(len(lines), best + around)
    shown = [f"{'>' if n == best else ' '} {n:>3}  {lines[n - 1]}" for n in range(first, last + 1)]
    return Version(snapshot.label, shown)
