"""A compositor that renders only the widgets that show in the region being repainted.

Textual's compositor renders, for a repaint of one region, every widget whose *clip* overlaps it: the
containers under a transcript (the screen, the work area, the columns, the column) and the widgets beside it
(the runs table, the footer, a column's header), though the transcript hides the first and the second lie
outside the region. Their lines are rendered, divided at the cuts and thrown away, on every append of a
followed transcript. Here a widget is rendered only if its visible part meets the region and is not wholly
behind one widget in front of it: the frame painted is the same (the widget in front fills every cut there
first, and cuts outside the region are not painted), at a third of the work. ``RunsScreen`` uses it; Textual is
pinned exactly (this overrides its private ``_get_renders``) and ``tests/test_tui_render_paths.py`` compares
it with Textual's on whole screens and on each widget's region.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import Compositor
from textual.geometry import Region
from textual.strip import Strip


class FrontCompositor(Compositor):
    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None:
            yield from super()._get_renders(crop)
            return
        in_front: list[Region] = []  # the visible parts of the widgets in front, front first
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            wanted = visible.intersection(crop)
            if not wanted.area:
                continue
            hidden = any(front.contains_region(wanted) for front in in_front)
            in_front.append(visible)
            if hidden:
                continue
            x, y, width, height = visible
            yield region, clip, widget.render_lines(Region(x - region.x, y - region.y, width, height))
