"""A run's transcript as a virtual list: the widget (feeding, rendering, cursor keys, jumps, search).

Only the visible lines are rendered; the events held and their lines are a bounded ``TranscriptWindow``
(no widget per event). Appends are coalesced: at most one repaint per interval of the process's
``RepaintPace`` (20 a second, fewer while the process is busy), and a repaint styles only the new lines
(``TailScrollView``). The view follows the tail only while the user is at the bottom; appends below a view
the user reads paint nothing but the scrollbar. A window loaded around an older event
(``load(..., detached=True)``) takes no live events: End asks its column to load the tail again
(``TailWanted``). A reply of megabytes is held by its head (``held_events.py``) and an expanded event renders
a capped part of it (``event_render.py``), so the line cache holds a few hundred lines per expanded event at
most.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from textual.binding import Binding
from textual.cache import LRUCache
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip

from engine.events import Event
from mmb_tui.transcript.event_render import FILTER_MODES, FilterMode
from mmb_tui.transcript.lines import Entry, entry_strips, pick_match
from mmb_tui.transcript.repaint_pace import FASTEST, PACE, RepaintPace
from mmb_tui.transcript.window import TranscriptWindow
from mmb_tui.widgets.tail_scroll_view import TailScrollView

_MATCH = Binding.Group("Match", compact=True)  # n N in the footer while a search is on


class TranscriptView(TailScrollView, can_focus=True):
    """Scrollable, filterable, foldable transcript of one run."""

    FLUSH_INTERVAL = FASTEST  # seconds between repaints under a flood of events, while the process is idle
    pace: RepaintPace = PACE  # and as it goes: slower while the process uses much CPU

    BINDINGS = [
        Binding("up,k", "cursor_up", "Up", show=False),
        Binding("down,j", "cursor_down", "Down", show=False),
        Binding("enter", "toggle_fold", "Fold/unfold", show=False, tooltip="Fold or unfold the event"),
        Binding("end,G", "follow", "Follow tail", show=False, tooltip="Jump to the tail and follow it"),
        Binding("home", "top", "Top", show=False),
        Binding("f", "cycle_filter", "Filter", show=False),
        Binding("A", "toggle_actions", "Agent actions", show=False),
        Binding("n", "next_match", "Next match", tooltip="The next match of the search", group=_MATCH),
        Binding("N", "previous_match", "Previous match", tooltip="The match before", group=_MATCH),
        Binding("escape", "clear_search", "End search", show=False, tooltip="Clear the search"),
    ]

    COMPONENT_CLASSES = {"transcript-view--cursor"}  # styled in app.tcss

    @dataclass
    class TailWanted(Message):
        """End was pressed in a window that does not reach the transcript's end: load the tail."""

    filter_mode: reactive[FilterMode] = reactive("all")
    following: reactive[bool] = reactive(True)
    search_query: reactive[str] = reactive("")
    match_label: reactive[str] = reactive("")  # "2/5", "no match"
    detached: reactive[bool] = reactive(False)  # the window does not reach the end: live events not added

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
        self._window = TranscriptWindow(measure=self._expanded_height)
        self._pending: list[Event] = []
        self._flush_scheduled = False
        self._last_flush = 0.0
        self._width = 0
        self._cache: LRUCache[tuple[int, int, bool, bool, str], list[Strip]] = LRUCache(2048)

    # ---- feeding -------------------------------------------------------------------------------

    @property
    def events(self) -> list[Event]:
        """The events held in the window (oldest first, long texts cut to their head), pending ones included."""
        return self._window.events + list(self._pending)

    @property
    def pending(self) -> int:
        return len(self._pending)

    @property
    def span(self) -> tuple[int, int]:
        """The numbers (``n``) of the first and the last event held, (0, 0) when empty."""
        events = self.events
        return (events[0].n, events[-1].n) if events else (0, 0)

    def clear(self) -> None:
        self._pending.clear()
        self._cache.clear()
        self._window.clear(self.content_width(), self.filter_mode)
        self.detached = False
        self.following = True
        self._update_size(follow=True)  # repaint now: an empty transcript must not show the last one's lines

    def load(self, events: Iterable[Event], *, detached: bool = False) -> None:
        """Replace the content with ``events`` (a run's past), rendered at once; ``detached``: they do not
        reach the transcript's end, so live events are not added until the tail is loaded again."""
        self.clear()
        self.detached = detached
        self._pending.extend(events)
        self.flush()

    def append(self, event: Event) -> None:
        """Queue a live event; repaints are coalesced."""
        if self.detached:
            return  # it is in the file; End loads the tail with it
        self._pending.append(event)
        if self._flush_scheduled:
            return
        self._flush_scheduled = True
        delay = self._last_flush + self.pace.next_interval() - time.monotonic()
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
        width = self.content_width()
        first_new_line = self._window.add(pending, width, self.filter_mode)
        if len(self._window.entries) > self.max_entries + self.max_entries // 10:
            removed = self._window.trim(self.max_entries, width, self.filter_mode)
            if not self.following:
                self.scroll_to(y=max(0, self.scroll_y - removed), animate=False, immediate=True)
            first_new_line = 0
        self._update_size(follow=self.following, changed_from=first_new_line)

    def _update_size(self, *, follow: bool, changed_from: int = 0) -> None:
        self.update_lines(self._window.total, follow=follow, changed_from=changed_from)

    # ---- rendering -----------------------------------------------------------------------------

    def _expanded_height(self, entry: Entry, width: int) -> int:
        return len(self._strips(entry, width))

    def _strips(self, entry: Entry, width: int) -> list[Strip]:
        key = (entry.uid, width, entry.expanded, entry.day_break, self.search_query)
        strips = self._cache.get(key)
        if strips is None:
            strips = entry_strips(self.app.console, self.rich_style, entry, width, self.search_query)
            self._cache[key] = strips
        return strips

    def render_line(self, y: int) -> Strip:
        width = self.content_width()
        line_no = round(self.scroll_offset.y) + y
        window = self._window
        if line_no >= window.total or not window.visible:
            return Strip.blank(width, self.rich_style)
        index = window.index_at(line_no)
        strips = self._strips(window.visible[index], width)
        offset = line_no - window.starts[index]
        strip = strips[offset] if offset < len(strips) else Strip.blank(width, self.rich_style)
        if index == window.cursor and not (offset == 0 and window.visible[index].day_break):
            strip = strip.apply_style(self.get_component_rich_style("transcript-view--cursor"))
        return strip

    def on_resize(self) -> None:
        width = self.content_width()
        if width != self._width:
            self._width = width
            if any(e.expanded for e in self._window.visible):
                self._window.rebuild(width, self.filter_mode)
        self._update_size(follow=self.following)  # a shorter view (a dashboard above it) keeps the tail

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        # a cursor on an event means the user is reading it: stay put until End
        self.following = self._window.cursor is None and round(new_value) >= self.max_scroll_y

    def watch_filter_mode(self) -> None:
        self._window.cursor = None
        self._window.rebuild(self.content_width(), self.filter_mode)
        self._update_size(follow=True)

    # ---- cursor, folding, jumps ----------------------------------------------------------------

    @property
    def cursor_event(self) -> Event | None:
        return self._window.cursor_event

    def _show_cursor(self, *, top: bool = False) -> None:
        cursor = self._window.cursor
        if cursor is None:
            return
        self.following = False
        start = self._window.starts[cursor]
        height = self._window.entry_height(cursor)
        viewport = self.scrollable_content_region.height
        if top or start < self.scroll_y:
            self.scroll_to(y=start, animate=False, immediate=True)
        elif start + height > self.scroll_y + viewport:
            self.scroll_to(y=start + height - viewport, animate=False, immediate=True)
        self.refresh()

    def _bottom_visible_index(self) -> int:
        return self._window.index_at(round(self.scroll_y) + max(0, self.scrollable_content_region.height - 1))

    def _move_cursor(self, step: int) -> None:
        if not self._window.visible:
            return
        self._window.move_cursor(step, self._bottom_visible_index())
        self._show_cursor()

    def action_cursor_up(self) -> None:
        self._move_cursor(-1)

    def action_cursor_down(self) -> None:
        self._move_cursor(1)

    def action_toggle_fold(self) -> None:
        if self._window.cursor is None:
            self.action_cursor_up()
        if self._window.cursor is None:
            return
        self._window.toggle_fold(self._window.cursor, self.content_width())
        self._update_size(follow=False)
        self._show_cursor()

    def action_follow(self) -> None:
        if self.detached:
            self.post_message(self.TailWanted())
            return
        self._window.cursor = None
        self.following = True
        self.scroll_end(animate=False, immediate=True)
        self.refresh()

    def action_top(self) -> None:
        self.scroll_home(animate=False, immediate=True)

    def action_cycle_filter(self) -> None:
        self.filter_mode = FILTER_MODES[(FILTER_MODES.index(self.filter_mode) + 1) % len(FILTER_MODES)]

    def action_toggle_actions(self) -> None:
        """The agent's own actions (with the messages they came between), or every event again."""
        self.filter_mode = "all" if self.filter_mode == "actions" else "actions"

    def jump_to(self, matches: Callable[[Event], bool]) -> bool:
        """Put the cursor on the latest event that ``matches``, expanded and scrolled to the top."""
        self.flush()
        if self.filter_mode != "all":
            self.filter_mode = "all"
        index = self._window.latest(matches)
        if index is None:
            return False
        self._window.cursor = index
        if not self._window.visible[index].expanded:
            self.action_toggle_fold()
        self.following = False
        self.call_after_refresh(self._show_cursor, top=True)
        self._show_cursor(top=True)
        return True

    # ---- search --------------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("next_match", "previous_match", "clear_search"):
            return bool(self.search_query)  # otherwise n, N and Esc are the screen's
        return True

    def watch_search_query(self) -> None:
        self.refresh_bindings()
        self.refresh()

    def search(self, query: str) -> bool:
        """Highlight ``query`` (any case) and put the cursor on the nearest match at or above the cursor (or
        the bottom of the view); n and N step through the matches."""
        self.flush()
        self.search_query = query.strip()
        self.match_label = ""
        return bool(self.search_query) and self._go_to_match(0)

    def _go_to_match(self, step: int) -> bool:
        matches = self._window.matches(self.search_query.casefold())
        if not matches:
            self.match_label = "no match"
            return False
        cursor = self._window.cursor
        origin = cursor if cursor is not None else self._bottom_visible_index()
        self._window.cursor = pick_match(matches, origin, step)
        self.match_label = f"{matches.index(self._window.cursor) + 1}/{len(matches)}"
        self._show_cursor()
        return True

    def action_next_match(self) -> None:
        self._go_to_match(1)

    def action_previous_match(self) -> None:
        self._go_to_match(-1)

    def action_clear_search(self) -> None:
        self.search_query = ""
        self.match_label = ""
