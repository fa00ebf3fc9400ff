"""A new text in a ``Static`` without laying the screen out again when nothing moves.

``Static.update`` asks Textual for a layout of the whole screen, then a repaint of every widget whose place
changed, though a status line that ticks ("waiting 3 s" → "4 s") or a phase pane that gains an evaluation
keeps its height. ``show_text`` repaints the widget alone and asks for the layout only when the new text takes
another number of lines at the widget's width; a widget that is not on the screen (hidden, or not laid out yet)
is measured when a layout shows it.
"""

from __future__ import annotations

from textual.visual import VisualType
from textual.widgets import Static


def show_text(static: Static, content: VisualType) -> None:
    """Put ``content`` in ``static``; a layout only when its height changes."""
    shown = static.content_size  # empty when the widget is not on the screen
    static.update(content, layout=False)
    if not shown.width:
        return
    height = static.get_content_height(static.container_size, static.app.size, shown.width)
    if height != shown.height:
        static.refresh(layout=True)
