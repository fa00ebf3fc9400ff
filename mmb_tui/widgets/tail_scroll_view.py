"""A line-API scroll view for content that grows at its end (a transcript), cheap to repaint on an append.

Textual's own path would make one appended line cost three full repaints of the screen region: setting
``virtual_size`` lays out the whole screen, the scrollbar is repainted in a frame of its own, and scrolling
restyles every line of the view. Here, while the vertical scrollbar stays, the size is set without a
layout; the scrollbar is repainted only in the cells its thumb left or reached, in the same frame; and the
lines Textual styled last time are moved up by the scroll, so only the new lines are styled again. This
reaches into Textual's ``ScrollBarRender`` arithmetic and ``StylesCache``: Textual is pinned exactly, and
``tests/test_tui_transcript_repaint.py`` holds every shortcut to a full repaint of the screen.
``bench/tui_transcript.py`` measures an append.
"""

from __future__ import annotations

from math import ceil

from textual.geometry import Region, Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip


class TailScrollView(ScrollView):
    """A ``ScrollView`` whose subclass renders lines (``render_line``) and calls ``update_lines``."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._render_width = 0  # the content width during one repaint (computed once, not per line)
        self._thumb_before: tuple[int, int, int] | None = None  # the scrollbar before ``update_lines``

    def content_width(self) -> int:
        """The width lines are rendered at (80 before the view is mounted)."""
        return self._render_width or (max(1, self.scrollable_content_region.width) if self.is_mounted else 80)

    def render_lines(self, crop: Region) -> list[Strip]:
        self._render_width = self.content_width()
        try:
            return super().render_lines(crop)
        finally:
            self._render_width = 0

    def update_lines(self, total: int, *, follow: bool, changed_from: int = 0) -> None:
        """There are ``total`` lines now, the ones from ``changed_from`` on are new or changed: scroll to the
        end if ``follow``, and repaint what shows a change."""
        bar = self.vertical_scrollbar if self.show_vertical_scrollbar else None
        before = self._thumb_before = thumb(bar) if bar is not None else None  # the scrollbar: once, below
        top_before = round(self.scroll_y)
        try:
            self._set_virtual_size(Size(self.content_width(), total))
            viewport = self.scrollable_content_region.height
            if follow and viewport > 0:
                self.scroll_to(y=max(0, total - viewport), animate=False, immediate=True, force=True)
            elif follow:
                self.scroll_end(animate=False)  # not laid out yet: after the first refresh
            if bar is not None:  # in step even if it appeared after a scroll (Textual leaves it at 0)
                bar.set_reactive(ScrollBar.position, bar.validate_position(self.scroll_y))
        finally:
            self._thumb_before = None
        if bar is not None and before is not None:
            repaint_thumb(bar, before)
        self._repaint(top_before, changed_from)

    def _set_virtual_size(self, size: Size) -> None:
        if size == self.virtual_size:
            return
        if (
            size.width == self.virtual_size.width
            and self.show_vertical_scrollbar
            and size.height > self.container_size.height
        ):  # the scrollbar stays: no layout of the screen (``update_lines`` repaints the thumb)
            self.set_reactive(ScrollView.virtual_size, size)
            self.vertical_scrollbar.set_reactive(ScrollBar.window_virtual_size, size.height)
            self.scroll_y = self.validate_scroll_y(self.scroll_y)
        else:
            self.virtual_size = size

    def _repaint(self, top_before: int, changed_from: int) -> None:
        """Repaint after the lines from ``changed_from`` on changed and the view scrolled from line
        ``top_before``: not at all when they are below the view; else keep the styled lines still shown."""
        top, height = round(self.scroll_y), self.size.height
        first = changed_from - top  # the first line of the view that shows something new
        shift = top - top_before
        gutter = self.styles.gutter
        if first >= height > 0:
            return
        if first <= 0 or not 0 <= shift < height or gutter.top or gutter.bottom:
            self.refresh()
            return
        self.refresh(self.size.region if shift else Region(0, first, self.size.width, height - first))
        cache = self._styles_cache
        cache._cache = {y - shift: line for y, line in cache._cache.items() if shift <= y < first + shift}
        cache._dirty_lines = set(range(first, height))

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        if self.show_vertical_scrollbar:  # what ScrollView does, with the scrollbar repainted as needed
            bar = self.vertical_scrollbar
            before = thumb(bar)
            bar.set_reactive(ScrollBar.position, bar.validate_position(new_value))
            if self._thumb_before is None:  # else ``update_lines`` repaints it once
                repaint_thumb(bar, before)
        if round(old_value) != round(new_value):
            self.refresh(self.size.region)


def thumb(bar: ScrollBar) -> tuple[int, int, int]:
    """What a vertical scrollbar shows: its height and its thumb's ends in eighths of a cell (-1 without a
    thumb), by ``ScrollBarRender.render_bar``'s arithmetic."""
    size = bar.size.height
    virtual = ceil(bar.window_virtual_size)
    window = ceil(bar.window_size) if bar.window_size < bar.window_virtual_size else 0
    if not (window and size and virtual and size != virtual):
        return size, -1, -1
    length = max(1, window / (virtual / size))
    start = int((size - length) * (bar.position / (virtual - window)) * 8)
    return size, start, start + ceil(length * 8)


def repaint_thumb(bar: ScrollBar, before: tuple[int, int, int]) -> None:
    """Repaint the cells of ``bar`` its thumb left or reached since ``before`` (a ``thumb``), if any."""
    size, start, end = after = thumb(bar)
    if after == before:
        return
    if before[0] != size or -1 in (start, before[1]):
        bar.refresh()
        return
    low, high = min(start, before[1]) // 8, min(size - 1, max(end, before[2]) // 8)
    bar.refresh(Region(0, low, bar.size.width, high - low + 1))
