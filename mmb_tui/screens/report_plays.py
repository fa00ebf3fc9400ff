"""Which play of its run a report entry is of: a run restarted since (``R``) has a new ``results/<run>/``,
whose transcript may hold, at the entry's event number, an evaluation of the same check (a scripted run plays
the same), so the event alone cannot tell. The run's state lists the ids of the entries its play wrote
(``RunState.report_entries``, saved before the entry reaches the report): an entry with an id it does not list
is of an earlier play. A regrade's entry is of the play of the run's entry before it in the file."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from engine.report.entries import LazyEntry, ReportEntry
from engine.state import StateError, load_state

log = logging.getLogger(__name__)


class Plays:
    """Asked per entry; each run's state is read once (the browser's ``ctrl+r`` makes a new one)."""

    def __init__(self, results_dir: Path, entries: Sequence[LazyEntry]) -> None:
        self.results_dir = results_dir
        self._entries = entries  # the whole report, in file order
        self._ids: dict[str, frozenset[str] | None] = {}

    def of_another_play(self, entry: ReportEntry) -> bool:
        """``entry`` was written by a play of its run that is not the one on disk; False when unknown (no state,
        an unreadable one, an entry written before entries had ids)."""
        entry_id = self._play_entry_id(entry)
        ids = self._entry_ids(entry.run_id) if entry_id else None
        return ids is not None and entry_id not in ids

    def _play_entry_id(self, entry: ReportEntry) -> str:
        """The id of the run's entry that ``entry`` stands for: its own, or for a regrade the run's entry before it."""
        if not entry.regrade:
            return entry.entry_id
        before = [
            lazy
            for lazy in self._entries[: entry.position]
            if lazy.run_id == entry.run_id and not lazy.regrade
        ]
        return before[-1].entry.entry_id if before else ""

    def _entry_ids(self, run_id: str) -> frozenset[str] | None:
        if run_id not in self._ids:
            try:
                state = load_state(self.results_dir / run_id / "state.json")
            except StateError as exc:
                log.warning("report browser: %s", exc)
                state = None
            self._ids[run_id] = frozenset(state.report_entries) if state is not None else None
        return self._ids[run_id]
