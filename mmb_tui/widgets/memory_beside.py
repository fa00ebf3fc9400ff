"""The agent's memory beside an imperfect answer in the report browser (issue 33): the memory file of the
answer's attribution at the line that matters, before and after the change that mattered
(``engine.autopsy.excerpt.memory_excerpt``), as lines of a ``Text`` under the answer.

Read from the run's memory history (``results/<run>/memory/``) and its transcript (the answer's own
``evaluation_logged`` event, found by its ``[transcript #N]``); ``MemoryShelf`` keeps what it read per answer,
so moving the cursor back and forth reads nothing twice. The report browser reads it in a worker thread (a
long history is never read on the app's loop) and shows ``READING`` meanwhile. An answer whose run kept no memory history, whose
event is gone or whose attribution has nothing to show gets no lines (its ``↳ memory:`` line still says why);
a history that cannot be read says so in one line, never a traceback.
"""

from __future__ import annotations

from pathlib import Path

from rich.text import Text

from engine.autopsy.blobs import BlobError
from engine.autopsy.excerpt import Excerpt, Version, memory_excerpt
from engine.autopsy.history import FOLDER, HistoryError
from engine.events import EvaluationLogged
from engine.report.entries import ImperfectAnswer, ReportEntry
from mmb_tui.transcript.seek import events_around

READING = Text("memory file: reading…", "dim")
AROUND = 1  # lines of the file on each side of the line that matters: before and after fit an 80×24 pane


def evaluation_of(run_dir: Path, answer: ImperfectAnswer) -> EvaluationLogged | None:
    """The answer's own ``evaluation_logged`` event (None: no event number, or the transcript no longer holds
    it there)."""
    if answer.transcript_n is None:
        return None
    events, _ = events_around(run_dir / "transcript.jsonl", answer.transcript_n, 1)
    found = [e for e in events if e.n == answer.transcript_n]
    if found and isinstance(found[0], EvaluationLogged) and found[0].check_id == answer.check_id:
        return found[0]
    return None


def memory_lines(run_dir: Path, answer: ImperfectAnswer) -> Text | None:
    """The memory file beside ``answer`` (before and after the change), or one line saying why it cannot be
    read; None when there is nothing to show."""
    if not (run_dir / FOLDER).is_dir():
        return None
    try:
        evaluation = evaluation_of(run_dir, answer)
        excerpt = memory_excerpt(run_dir, evaluation, AROUND) if evaluation is not None else None
    except (
        OSError,
        ValueError,
        BlobError,
        HistoryError,
    ) as exc:  # a damaged history or transcript: say so, the answer still shows
        return Text(f"memory file: cannot read results/{run_dir.name}/{FOLDER}: {exc}", "red")
    return excerpt_text(excerpt) if excerpt is not None else None


def excerpt_text(excerpt: Excerpt) -> Text:
    """``MEMORY.md before — phase 3 after event #19:`` and its numbered lines (the one that matters marked
    ``>``), then the same after the change; a file that began with the line has no "before"."""
    text = Text()
    if excerpt.before is not None:
        _append_version(text, excerpt.file, "before", excerpt.before)
    _append_version(text, excerpt.file, "after" if excerpt.before is not None else "at", excerpt.after)
    text.rstrip()
    return text


def _append_version(text: Text, file: str, when: str, version: Version) -> None:
    text.append(f"{file} {when} — {version.label}:\n", "bold cyan")
    for line in version.lines:
        text.append(line + "\n", "bold" if line.startswith(">") else "dim")


class MemoryShelf:
    """What the report browser has read of the runs' memory, per answer (an answer's memory never changes
    once its run ended; a reload of the report starts a new shelf)."""

    def __init__(self, results_dir: Path) -> None:
        self.results_dir = results_dir
        self._read: dict[tuple[str, str, int | None, str], Text | None] = {}

    def beside(self, entry: ReportEntry, answer: ImperfectAnswer) -> Text | None:
        """The memory beside ``answer``, read now if it was not yet (blocking: from a worker thread)."""
        if not answer.memory:  # no attribution in the entry: nothing it could point at
            return None
        key = self._key(entry, answer)
        if key not in self._read:
            self._read[key] = memory_lines(self.results_dir / entry.run_id, answer)
        return self._read[key]

    def known(self, entry: ReportEntry, answer: ImperfectAnswer) -> tuple[bool, Text | None]:
        """Whether ``beside`` would answer without reading, and its answer then."""
        if not answer.memory:
            return True, None
        key = self._key(entry, answer)
        return key in self._read, self._read.get(key)

    @staticmethod
    def _key(entry: ReportEntry, answer: ImperfectAnswer) -> tuple[str, str, int | None, str]:
        return entry.run_id, answer.check_id, answer.transcript_n, entry.entry_id
