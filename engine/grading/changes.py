"""What a fact's change brought in: the values of its new text that its text before the change lacked.

An edited fact often keeps its old value for the record, as the README advises for ``Edit`` lines:
``… $55 per m² (new price list; was $42)``, ``(we had budgeted $400)``, ``instead of decorative stone``,
``moved from 10 June to 3 July``. Such values are history (``history_spans``): a change never brings them
in, so they are never demanded again once the change is told. Everything else is compared by value
(``engine/grading/told_values.py``): ``5,100 EUR`` and ``5100 euros`` are the same amount, ``Mon–Thu`` names
Tuesday, and a fact whose change is one figure brought in only that figure.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engine.grading.told_values import Value, plain_values, stem, strong_values

_BRACKET = re.compile(r"\(([^()]*)\)")
_BRACKET_CLAUSE = re.compile(r"[^;—–]+")  # a bracket's clauses: "(new price list; was $42)"
# words that set what follows them (inside a bracket: the whole clause) at a time before the change
_CHANGED_FROM = r"(?:moved|changed|cut|raised|reduced|increased|dropped|rose|went up|went down|pushed|shifted|up|down)\s+from"
_PAST_IN_BRACKET = re.compile(
    r"\b(?:was|were|had|used to|previously|formerly|originally|initially|first|earlier|old|instead of|rather than"
    rf"|no longer|not|expired|replaced|budgeted|quoted|misremembered|mistake|wrong|{_CHANGED_FROM})\b",
    re.IGNORECASE,
)
_PAST_OUTSIDE = re.compile(
    rf"\b(?:instead of|rather than|no longer|previously|formerly|originally|used to be|misremembered"
    rf"|(?:I\s+)?first said|(?:we\s+)?had budgeted|budgeted|{_CHANGED_FROM})\b"
    r"|\b(?:was|were)\s+(?=(?:about\s+|only\s+|just\s+|around\s+)?(?:[$€£¥₹]|\d|(?-i:[A-Z])))",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[;:.!?()]|\s[—–-]\s|,\s+(?:and|but|so|while|plus)\b|\s(?:to|→|->)\s")
_FROM_TO = re.compile(_CHANGED_FROM, re.IGNORECASE)


def history_spans(text: str) -> list[tuple[int, int]]:
    """The parts of a fact's text that keep an old value for the record (module docstring)."""
    spans: list[tuple[int, int]] = []
    for bracket in _BRACKET.finditer(text):
        for clause in _BRACKET_CLAUSE.finditer(text, bracket.start(1), bracket.end(1)):
            if _PAST_IN_BRACKET.search(clause.group(0)):
                spans.append((clause.start(), clause.end()))
    for marker in _PAST_OUTSIDE.finditer(text):
        if any(s <= marker.start() < e for s, e in spans):
            continue
        end = _clause_end(text, marker)
        spans.append((marker.start(), end))
    return spans


def _clause_end(text: str, marker: re.Match[str]) -> int:
    """Where the old value after ``marker`` ends: the clause's end; "… from X to Y" stops before "to"; a
    list after "instead of" runs on over its commas."""
    for found in _CLAUSE_END.finditer(text, marker.end()):
        is_to = found.group(0).strip() in ("to", "→", "->")
        if is_to and not _FROM_TO.fullmatch(marker.group(0).strip()):
            continue  # "instead of 6 to 8 people": a range, still the old value
        return found.start()
    return len(text)


def outside(values: tuple[Value, ...] | list[Value], spans: list[tuple[int, int]]) -> list[Value]:
    """The values that stand outside every span."""
    return [v for v in values if not any(s <= v.start < e for s, e in spans)]


@lru_cache(maxsize=4096)
def introduced(before: str, after: str, names: frozenset[str]) -> tuple[Value, ...]:
    """The values of ``after`` (a fact's text) that ``before`` (its text before the change) lacked: amounts,
    numbers, dates, times, weekdays, currencies and names, history left out."""
    old = {key for value in strong_values(before, names, currencies=True) for key in value.keys}
    old |= {"w:" + w.label.lower() for w in plain_values(before)}
    current = outside(strong_values(after, names, currencies=True), history_spans(after))
    return tuple(v for v in current if not old.intersection(v.keys))


@lru_cache(maxsize=4096)
def introduced_words(before: str, after: str) -> tuple[Value, ...]:
    """The plain words of ``after`` that ``before`` lacked (by stem), history left out: what a change of
    words only ("microcement instead of decorative stone") brought in."""
    old = {stem(w.label) for w in plain_values(before)}
    return tuple(v for v in outside(plain_values(after), history_spans(after)) if v.key[2:] not in old)
