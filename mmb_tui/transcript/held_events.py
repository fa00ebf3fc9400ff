"""What the TUI holds of an event: every text longer than ``HELD_CHARS`` cut to its first part.

An agent may answer megabytes; ``transcript.jsonl`` keeps every reply whole, but the app never shows more of
one than its first part (``event_render.py`` folds it and caps an expanded one), so the transcript's reader
and its views hold each event with every longer text (a field, an item of a list, a value of a dict) cut to
its head: a ``HeldText``, a ``str`` that knows how many characters were left out. An event with no longer
text is held as it is (the same object), and holding a held event again changes nothing.
"""

from __future__ import annotations

from engine.events import Event

HELD_CHARS = 20_000
"""Characters of one text an event is held with: as many as an expanded event shows at most."""


class HeldText(str):
    """The first part of a longer text; ``cut`` is how many of its characters are not held."""

    cut: int

    def __new__(cls, text: str, cut: int) -> HeldText:
        held = super().__new__(cls, text)
        held.cut = cut
        return held


def held(event: Event) -> Event:
    """``event`` with each of its texts longer than ``HELD_CHARS`` cut to its head (``event`` itself when
    none is longer)."""
    update: dict[str, object] = {}
    for name, value in event:
        kept = _held_value(value)
        if kept is not value:
            update[name] = kept
    return event.model_copy(update=update) if update else event


def cut_chars(event: Event) -> int:
    """How many characters of ``event``'s texts were left out when it was held (0 for a whole event)."""
    return sum(_cut_of(value) for _name, value in event)


def _held_value(value: object) -> object:
    """``value`` with its long texts cut (the same object when there is none)."""
    if isinstance(value, str):
        if len(value) <= HELD_CHARS or isinstance(value, HeldText):
            return value
        return HeldText(value[:HELD_CHARS], len(value) - HELD_CHARS)
    if isinstance(value, list):
        items = [_held_value(item) for item in value]
        return items if any(a is not b for a, b in zip(items, value, strict=True)) else value
    if isinstance(value, dict):
        entries = {key: _held_value(item) for key, item in value.items()}
        return entries if any(entries[key] is not item for key, item in value.items()) else value
    return value


def _cut_of(value: object) -> int:
    if isinstance(value, HeldText):
        return value.cut
    if isinstance(value, list):
        return sum(_cut_of(item) for item in value)
    if isinstance(value, dict):
        return sum(_cut_of(item) for item in value.values())
    return 0
