"""A run's transcript as a virtual list: only the visible lines are rendered, the window is bounded.

Events live in a bounded deque (older ones stay in ``transcript.jsonl``); there is no widget per event.
Folded entries have a width-independent height, so appending is O(1); only expanded entries are wrapped.
Appends are coalesced: at most one repaint per ``FLUSH_INTERVAL``. The view follows the tail only while
the user is at the bottom.
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.geometry import Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from engine.events import Event
from mmb_tui.event_render import FILTER_MODES, FilterMode, expanded_parts, folded_lines, passes


@dataclass(eq=False)
class _Entry:
    uid: int
    event: Event
    folded: list[Text]
    expanded: bool = False


class TranscriptView(ScrollView, can_focus=True):
    """Scrollable, filterable, foldable transcript of one run."""

    FLUSH_INTERVAL = 1 / 20  # seconds between repaints under a flood of events

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("enter", "toggle_fold", "Fold/unfold"),
        Binding("end,G", "follow", "Follow tail"),
        Binding("home", "top", "Top", show=False),
        Binding("f", "cycle_filter", "Filter"),
    ]

    COMPONENT_CLASSES = {"transcript-view--cursor"}

    DEFAULT_CSS = """
    TranscriptView {
        overflow-x: hidden;
        overflow-y: auto;
    }
    TranscriptView > .transcript-view--cursor {
        background: $accent 30%;
    }
    TranscriptView:focus > .transcript-view--cursor {
        background: $accent 50%;
        text-style: bold;
    }
    """

    filter_mode: reactive[FilterMode] = reactive("all")
    following: reactive[bool] = reactive(True)

    def __init__(
        self,
        *,
        max_entries: int = 4000,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.max_entries = max_entries
        self._entries: deque[_Entry] = deque()
        self._visible: list[_Entry] = []
        self._starts: list[int] = []
        self._total = 0
        self._cursor: int | None = None
        self._uid = 0
        self._last_n = 0
        self._pending: list[Event] = []
        self._flush_scheduled = False
        self._last_flush = 0.0
        self._width = 0
        self._cache: LRUCache[tuple[int, int, bool], list[Strip]] = LRUCache(2048)

    # ---- feeding -------------------------------------------------------------------------------

    @property
    def events(self) -> list[Event]:
        """The events held in the window (oldest first), pending ones included."""
        return [entry.event for entry in self._entries] + list(self._pending)

    @property
    def pending(self) -> int:
        return len(self._pending)

    def clear(self) -> None:
        self._entries.clear()
        self._pending.clear()
        self._last_n = 0
        self._cursor = None
        self._cache.clear()
        self._rebuild()
        self.following = True

    def load(self, events: Iterable[Event]) -> None:
        """Replace the content with ``events`` (a run's past), rendered at once."""
        self.clear()
        self._pending.extend(events)
        self.flush()

    def append(self, event: Event) -> None:
        """Queue a live event; repaints are coalesced."""
        self._pending.append(event)
        if self._flush_scheduled:
            return
        self._flush_scheduled = True
        delay = self._last_flush + self.FLUSH_INTERVAL - time.monotonic()
        if delay <= 0 or not self.is_mounted:
            self.call_later(self.flush)
        else:
            self.set_timer(delay, self.flush)

    def flush(self) -> None:
        """Move pending events into the window and repaint (called by the throttle, or by tests)."""
        self._flush_scheduled = False
        self._last_flush = time.monotonic()
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        width = self._content_width()
        for event in pending:
            if event.n and event.n <= self._last_n:
                continue  # already loaded from the file
            self._last_n = max(self._last_n, event.n)
            self._uid += 1
            entry = _Entry(self._uid, event, folded_lines(event))
            self._entries.append(entry)
            if passes(event, self.filter_mode):
                self._visible.append(entry)
                self._starts.append(self._total)
                self._total += self._height(entry, width)
        if len(self._entries) > self.max_entries + self.max_entries // 10:
            self._trim()
        self._update_size(follow=self.following)

    def _trim(self) -> None:
        cursor_entry = self._visible[self._cursor] if self._cursor is not None else None
        before = self._total
        while len(self._entries) > self.max_entries:
            self._entries.popleft()
        self._rebuild()
        if cursor_entry is not None:
            self._cursor = next((i for i, e in enumerate(self._visible) if e is cursor_entry), None)
        if not self.following:
            self.scroll_to(y=max(0, self.scroll_y - (before - self._total)), animate=False, immediate=True)

    def _rebuild(self) -> None:
        width = self._content_width()
        self._visible = [e for e in self._entries if passes(e.event, self.filter_mode)]
        self._starts = []
        total = 0
        for entry in self._visible:
            self._starts.append(total)
            total += self._height(entry, width)
        self._total = total

    def _update_size(self, *, follow: bool) -> None:
        self.virtual_size = Size(self._content_width(), self._total)
        if follow:
            viewport = self.scrollable_content_region.height
            if viewport > 0:
                self.scroll_to(y=max(0, self._total - viewport), animate=False, immediate=True, force=True)
            else:
                self.scroll_end(animate=False)  # not laid out yet: after the first refresh
        self.refresh()

    # ---- rendering -----------------------------------------------------------------------------

    def _content_width(self) -> int:
        return max(1, self.scrollable_content_region.width) if self.is_mounted else 80

    def _height(self, entry: _Entry, width: int) -> int:
        return len(self._strips(entry, width)) if entry.expanded else len(entry.folded)

    def _strips(self, entry: _Entry, width: int) -> list[Strip]:
        key = (entry.uid, width, entry.expanded)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        console = self.app.console
        style = self.rich_style
        if entry.expanded:
            head, body = expanded_parts(entry.event)
            renderable: RenderableType = head if body is None else Group(head, Padding(body, (0, 0, 0, 8)))
            lines = console.render_lines(renderable, console.options.update_width(width), style=style)
            strips = [Strip(line, width) for line in lines]
        else:
            options = console.options.update(width=width, no_wrap=True, overflow="ellipsis")
            strips = []
            for text in entry.folded:
                line = console.render_lines(text, options, style=style)[0]
                strips.append(Strip(line).adjust_cell_length(width, style))
        self._cache[key] = strips
        return strips

    def render_line(self, y: int) -> Strip:
        width = self._content_width()
        line_no = round(self.scroll_offset.y) + y
        if line_no >= self._total or not self._visible:
            return Strip.blank(width, self.rich_style)
        index = bisect_right(self._starts, line_no) - 1
        strips = self._strips(self._visible[index], width)
        offset = line_no - self._starts[index]
        strip = strips[offset] if offset < len(strips) else Strip.blank(width, self.rich_style)
        if index == self._cursor:
            strip = strip.apply_style(self.get_component_rich_style("transcript-view--cursor"))
        return strip

    def on_resize(self) -> None:
        width = self._content_width()
        if width != self._width:
            self._width = width
            if any(e.expanded for e in self._visible):
                self._rebuild()
            self._update_size(follow=self.following)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # a cursor on an event means the user is reading it: stay put until End
        self.following = self._cursor is None and round(new_value) >= self.max_scroll_y

    def watch_filter_mode(self) -> None:
        self._cursor = None
        self._rebuild()
        self._update_size(follow=True)

    # ---- cursor, folding, jumps ----------------------------------------------------------------

    @property
    def cursor_event(self) -> Event | None:
        return self._visible[self._cursor].event if self._cursor is not None else None

    def _entry_height(self, index: int) -> int:
        end = self._starts[index + 1] if index + 1 < len(self._starts) else self._total
        return end - self._starts[index]

    def _show_cursor(self, *, top: bool = False) -> None:
        if self._cursor is None:
            return
        self.following = False
        start = self._starts[self._cursor]
        height = self._entry_height(self._cursor)
        viewport = self.scrollable_content_region.height
        if top or start < self.scroll_y:
            self.scroll_to(y=start, animate=False, immediate=True)
        elif start + height > self.scroll_y + viewport:
            self.scroll_to(y=start + height - viewport, animate=False, immediate=True)
        self.refresh()

    def _bottom_visible_index(self) -> int:
        line = round(self.scroll_y) + max(0, self.scrollable_content_region.height - 1)
        return max(0, min(len(self._visible) - 1, bisect_right(self._starts, line) - 1))

    def action_cursor_up(self) -> None:
        if not self._visible:
            return
        if self._cursor is None:
            self._cursor = self._bottom_visible_index()
        else:
            self._cursor = max(0, self._cursor - 1)
        self._show_cursor()

    def action_cursor_down(self) -> None:
        if not self._visible:
            return
        if self._cursor is None:
            self._cursor = self._bottom_visible_index()
        else:
            self._cursor = min(len(self._visible) - 1, self._cursor + 1)
        self._show_cursor()

    def action_toggle_fold(self) -> None:
        if self._cursor is None:
            self.action_cursor_up()
        if self._cursor is None:
            return
        entry = self._visible[self._cursor]
        width = self._content_width()
        before = self._height(entry, width)
        entry.expanded = not entry.expanded
        delta = self._height(entry, width) - before
        for i in range(self._cursor + 1, len(self._starts)):
            self._starts[i] += delta
        self._total += delta
        self._update_size(follow=False)
        self._show_cursor()

    def action_follow(self) -> None:
        self._cursor = None
        self.following = True
        self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def action_top(self) -> None:
        self.scroll_home(animate=False, immediate=True)

    def action_cycle_filter(self) -> None:
        self.filter_mode = FILTER_MODES[(FILTER_MODES.index(self.filter_mode) + 1) % len(FILTER_MODES)]

    def jump_to(self, matches: Callable[[Event], bool]) -> bool:
        """Put the cursor on the latest event that ``matches``, expanded and scrolled to the top."""
        self.flush()
        if self.filter_mode != "all":
            self.filter_mode = "all"
        for index in range(len(self._visible) - 1, -1, -1):
            if matches(self._visible[index].event):
                self._cursor = index
                if not self._visible[index].expanded:
                    self.action_toggle_fold()
                self.following = False
                self.call_after_refresh(self._show_cursor, top=True)
                self._show_cursor(top=True)
                return True
        return False
