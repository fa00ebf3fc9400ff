"""The events a transcript view holds and the lines they take, without Textual: ``TranscriptWindow``.

A bounded window of entries (older events stay in ``transcript.jsonl``), the ones the filter shows with the
line each starts at, a date line above the first shown event of each day, and the cursor among them. Folded
entries have a width-independent height, so adding one is O(1); only an expanded entry is measured, by the
view that renders it (``measure``). Events already held are skipped when they come again (from the file, then
live); a ``run_started`` at or below the last number held means a resume cut the transcript back. An event
is held with its long texts cut to their head (``held_events.py``): a window of megabyte replies stays small.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable

from engine.events import Event
from mmb_tui.transcript.event_render import FilterMode, folded_lines, passes
from mmb_tui.transcript.held_events import held
from mmb_tui.transcript.lines import Entry, day_of, searchable


class TranscriptWindow:
    """The entries of one ``TranscriptView``: those held, those shown and their lines, and the cursor (an index
    into ``visible``, ``None`` while the view follows the tail or shows no event in particular)."""

    def __init__(self, measure: Callable[[Entry, int], int]) -> None:
        self.measure = measure  # the lines of an expanded entry at a width
        self.entries: deque[Entry] = deque()  # every event held, oldest first
        self.visible: list[Entry] = []  # those the filter shows
        self.starts: list[int] = []  # the first line of each visible entry
        self.total = 0  # the lines of all the visible entries
        self.cursor: int | None = None
        self.last_n = 0  # the number of the last event held
        self._last_day = ""
        self._uid = 0

    @property
    def events(self) -> list[Event]:
        """The events held, oldest first."""
        return [entry.event for entry in self.entries]

    @property
    def cursor_event(self) -> Event | None:
        return self.visible[self.cursor].event if self.cursor is not None else None

    def clear(self, width: int, mode: FilterMode) -> None:
        self.entries.clear()
        self.last_n = 0
        self.cursor = None
        self.rebuild(width, mode)

    def add(self, events: Iterable[Event], width: int, mode: FilterMode) -> int:
        """Add ``events`` at the end (held: long texts cut), those already held skipped; returns the first line
        that changed."""
        first_new_line = self.total
        for event in events:
            if event.n and event.n <= self.last_n:
                if event.kind != "run_started":
                    continue  # already loaded from the file
                # a resume cut the transcript back to its checkpoint: replayed from here
                self._cut_back(event.n, width, mode)
                first_new_line = 0
            self.last_n = max(self.last_n, event.n)
            self._uid += 1
            event = held(event)
            entry = Entry(self._uid, event, folded_lines(event))
            self.entries.append(entry)
            if passes(event, mode):
                self._show(entry, width)
        return first_new_line

    def _cut_back(self, n: int, width: int, mode: FilterMode) -> None:
        """Forget the events from number ``n`` on (the file no longer has them); the cursor leaves them."""
        while self.entries and self.entries[-1].event.n >= n:
            self.entries.pop()
        self.last_n = self.entries[-1].event.n if self.entries else 0
        self.cursor = None
        self.rebuild(width, mode)

    def trim(self, max_entries: int, width: int, mode: FilterMode) -> int:
        """Forget the oldest entries beyond ``max_entries``, the cursor kept on its entry while it is held;
        returns how many lines went."""
        cursor_entry = self.visible[self.cursor] if self.cursor is not None else None
        before = self.total
        while len(self.entries) > max_entries:
            self.entries.popleft()
        self.rebuild(width, mode)
        if cursor_entry is not None:
            self.cursor = next((i for i, e in enumerate(self.visible) if e is cursor_entry), None)
        return before - self.total

    def rebuild(self, width: int, mode: FilterMode) -> None:
        """Lay out again the entries ``mode`` shows (the cursor is left as it is)."""
        self.visible, self.starts, self.total, self._last_day = [], [], 0, ""
        for entry in self.entries:
            if passes(entry.event, mode):
                self._show(entry, width)

    def _show(self, entry: Entry, width: int) -> None:
        day = day_of(entry.event)
        entry.day_break = bool(day) and day != self._last_day
        self._last_day = day or self._last_day
        self.visible.append(entry)
        self.starts.append(self.total)
        self.total += self.height(entry, width)

    # ---- lines ---------------------------------------------------------------------------------

    def height(self, entry: Entry, width: int) -> int:
        if entry.expanded:
            return self.measure(entry, width)
        return len(entry.folded) + entry.day_break

    def entry_height(self, index: int) -> int:
        """The lines of the visible entry ``index`` as laid out."""
        end = self.starts[index + 1] if index + 1 < len(self.starts) else self.total
        return end - self.starts[index]

    def index_at(self, line: int) -> int:
        """The visible entry on ``line`` (the last one below the end, 0 when none is shown)."""
        return max(0, min(len(self.visible) - 1, bisect_right(self.starts, line) - 1))

    def toggle_fold(self, index: int, width: int) -> None:
        """Fold or unfold the visible entry ``index``; the entries after it move by its change of height."""
        entry = self.visible[index]
        before = self.height(entry, width)
        entry.expanded = not entry.expanded
        delta = self.height(entry, width) - before
        for i in range(index + 1, len(self.starts)):
            self.starts[i] += delta
        self.total += delta

    # ---- cursor and search -----------------------------------------------------------------------

    def move_cursor(self, step: int, origin: int) -> None:
        """Move the cursor by ``step`` entries, staying on one; it starts at ``origin`` when there is none."""
        if self.cursor is None:
            self.cursor = origin
        else:
            self.cursor = max(0, min(len(self.visible) - 1, self.cursor + step))

    def latest(self, matches: Callable[[Event], bool]) -> int | None:
        """The last visible entry whose event ``matches``, as an index."""
        return next((i for i in range(len(self.visible) - 1, -1, -1) if matches(self.visible[i].event)), None)

    def matches(self, query: str) -> list[int]:
        """The visible entries whose text holds ``query`` (case-folded), as indexes."""
        matches = []
        for index, entry in enumerate(self.visible):
            if entry.text is None:
                entry.text = searchable(entry.event)
            if query in entry.text:
                matches.append(index)
        return matches
