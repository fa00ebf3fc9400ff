"""A transcript event as screen lines (folded or expanded, a date line opening each day so that times never
seem to go back after a night, search matches highlighted) and finding text in a transcript."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from datetime import date

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual.strip import Strip

from engine.events import Event
from mmb_tui.transcript.event_render import body, expanded_parts, headline

MATCH_STYLE = "bold reverse"


@dataclass(eq=False)
class Entry:
    """One event held by a transcript view."""

    uid: int
    event: Event
    folded: list[Text]
    expanded: bool = False
    day_break: bool = False  # the first shown event of its day: a date line above it
    text: str | None = field(default=None, repr=False)  # searchable text, computed on the first search


def searchable(event: Event) -> str:
    """Everything the transcript shows of ``event`` (headline and full body), case-folded."""
    return f"{headline(event).plain}\n{body(event)}".casefold()


def highlighted(text: Text, query: str) -> Text:
    """A copy of ``text`` with every occurrence of ``query`` (any case) highlighted."""
    if not query:
        return text
    marked = text.copy()
    marked.highlight_words([query], MATCH_STYLE, case_sensitive=False)
    return marked


def pick_match(matches: list[int], origin: int, step: int) -> int:
    """The match to go to from ``origin`` (sorted indexes, not empty): ``step`` 1 the next one after it,
    -1 the one before, 0 the nearest at or before it; both directions wrap around."""
    if step > 0:
        after = bisect_right(matches, origin)
        return matches[after] if after < len(matches) else matches[0]
    before = bisect_left(matches, origin + 1 if step == 0 else origin)
    return matches[before - 1] if before > 0 else matches[-1]


def day_of(event: Event) -> str:
    """``2026-08-19`` of an event stamped ``2026-08-19T10:03:05`` ("" when unstamped)."""
    return event.t[:10] if len(event.t) >= 10 else ""


def day_line(day: str) -> Text:
    """The line above the first event of a day: ``── Wed 19 Aug 2026 ──``."""
    try:
        label = date.fromisoformat(day).strftime("%a %d %b %Y")
    except ValueError:
        label = day
    return Text(f"── {label} ──", style="bold dim", no_wrap=True, overflow="ellipsis", end="")


def one_line(console: Console, style: Style, text: Text, width: int) -> Strip:
    """``text`` as one line of ``width`` cells, cropped with an ellipsis, on ``style``: what
    ``console.render_lines`` makes of it, without its wrapping machinery (a folded line is rendered for every
    appended event). Tabs and line breaks take that machinery."""
    if "\t" in text.plain or "\n" in text.plain:
        options = console.options.update(width=width, no_wrap=True, overflow="ellipsis")
        return Strip(console.render_lines(text, options, style=style)[0]).adjust_cell_length(width, style)
    cropped = text.copy()
    cropped.truncate(width, overflow="ellipsis")
    if cropped.style:  # a base style is a span under the others (``Text.render`` leaves it out)
        cropped = Text(cropped.plain, spans=[Span(0, len(cropped), cropped.style), *cropped.spans])
    return Strip(Segment.apply_style(cropped.render(console), style)).adjust_cell_length(width, style)


def entry_strips(console: Console, style: Style, entry: Entry, width: int, query: str) -> list[Strip]:
    """The lines of ``entry`` at ``width``: folded (each line cropped) or expanded (wrapped), after a date
    line when it opens a day, with ``query`` highlighted."""
    strips = [one_line(console, style, day_line(day_of(entry.event)), width)] if entry.day_break else []
    if not entry.expanded:
        return strips + [one_line(console, style, highlighted(text, query), width) for text in entry.folded]
    head, rest = expanded_parts(entry.event)
    renderable: RenderableType = highlighted(head, query)
    if rest is not None:
        renderable = Group(renderable, Padding(highlighted(rest, query), (0, 0, 0, 8)))
    lines = console.render_lines(renderable, console.options.update_width(width), style=style)
    return strips + [Strip(rendered, width) for rendered in lines]
