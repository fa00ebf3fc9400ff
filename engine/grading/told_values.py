"""What a text says, as keys a premise is matched on: values in any usual notation, names, words.

A message sent to the agent is reduced to its keys once (``message_keys``); a value a premise needs (a
check's correct answer, a fact's content: ``strong_values``) is told when one of its keys is among a
message's keys. The keys are chosen so that a human reading the transcript would agree:

- ``n:<number>``: ``5,100``, ``5100``, ``5.100``, ``5.1k``, ``€5,100``, ``5100 euros``, ``six``
  (``engine/grading/amounts.py``); ``c:<code>`` the currency beside a number (``EUR``, ``€``, ``euros``);
- ``d:<MM-DD>``: ``19 August 2026``, ``Aug 19th``, ``2026-08-19``, ``19/08/2026``; in a message,
  ``today``/``tonight``/``this morning``, ``yesterday``/``last night`` and ``tomorrow`` name a day from the one
  it was sent on; ``t:<H:MM>`` a time of day (``18:30``, ``6:30 pm``); ``wd:<day>`` a weekday, abbreviated, in a
  range or a group (``Thu``, ``Mon–Thu``, ``weekdays``) (``engine/grading/days.py``);
- ``w:<word>``: every word, lowercased, possessive dropped (names are matched on these);
  ``s:<stem>``: the same words cut to a stem (``wears``/``wear``, ``helmets``/``helmet``) for plain words.

A currency code or a unit is never a name; a weekday or a month is a value of its own, never a name.
"""

from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from functools import lru_cache

from engine.grading.amounts import Found, amounts, currency_code, number_words
from engine.grading.days import DAY_NAMES, WEEKDAYS, dates, day_word, loose_hours, times, weekdays

_MONTHS = "january february march april may june july august september october november december".split()
_MONTH_WORDS = frozenset(_MONTHS) | {m[:3] for m in _MONTHS} | {"sept"}
_RELATIVE = re.compile(
    r"\b(?:(today|tonight|this (?:morning|afternoon|evening))|(yesterday|last night)|(tomorrow))\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?")
_SUFFIXES = ("ings", "ing", "ies", "es", "ed", "s")
STEM = 5

FUNCTION_WORDS = frozenset(
    "a an the and or but if of in on at to for by with from as is are was were be been it its this that these "
    "those you your yours i me my we our us he she him her his they them their there here what which who whom "
    "when where why how yes no not never none all any some each every both either neither one also just only "
    "so then than too very still again now today tonight yesterday tomorrow please thanks thank hi hello okay "
    "ok well sure about into over under after before since until while do does did done have has had having "
    "will would can could should may might must shall let lets told tell said say know remember correct answer "
    "about around approximately roughly nothing something anything everything per".split()
)


def stem(word: str) -> str:
    """A plain word's stem: lowercased, a plural or -ing/-ed ending dropped, cut to five letters."""
    word = _plain(word)
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:STEM]


def _plain(word: str) -> str:
    return word.lower().replace("’", "'").removesuffix("'s")


def scan(text: str, message: bool = False) -> list[Found]:
    """Every value of ``text`` in reading order: dates, times, numbers (none inside a date or a time) with
    their currencies, number words, weekdays. ``message``: a sent message, read generously (``at 6``,
    ``daily``)."""
    found = dates(text) + times(text)
    found += amounts(text, [(f.start, f.end) for f in found])
    found += [w for w in number_words(text) if not any(f.start <= w.start < f.end for f in found)]
    found += weekdays(text, message)
    if message:
        found += loose_hours(text)
    return sorted(found, key=lambda f: (f.start, f.end))


def _words(text: str) -> list[tuple[str, str, int]]:
    """Every word: as written, its ``w:`` key, where it starts."""
    return [(m.group(0), "w:" + _plain(m.group(0)), m.start()) for m in _WORD.finditer(text)]


_NUMBER_KINDS = ("amount", "number")
KEYS_VERSION = "v:2"  # on every message logged since numbers carry their unit: older ones match on ``legacy``


def _unit_keys(found: Found) -> list[str]:
    """A number's keys with its unit (``u:55:USD``; a bare number ``u:55:``), one per reading."""
    return [f"u:{key[2:]}:{found.unit}" for key in found.keys]


def message_keys(text: str, sent_on: date | None = None) -> set[str]:
    """Every key of a message: values (a number also with its unit), words and stems, and dates relative to
    the day it was sent on."""
    keys = {KEYS_VERSION}
    for found in scan(text, message=True):
        keys.update(found.keys)
        if found.kind in _NUMBER_KINDS:
            keys.update(_unit_keys(found))
    for label, key, _ in _words(text):
        keys.add(key)
        keys.add("s:" + stem(label))
    for match in _RELATIVE.finditer(text) if sent_on is not None else ():
        assert sent_on is not None
        day = sent_on + timedelta(days=0 if match.group(1) else -1 if match.group(2) else 1)
        keys.add(f"d:{day.month:02d}-{day.day:02d}")
    return keys


@dataclass(frozen=True)
class Value:
    """A value a premise needs told: as written, the key a message must carry (or one of ``alts``), what kind
    of value it is, and where it stands in its text."""

    label: str
    key: str
    alts: tuple[str, ...] = ()
    kind: str = "name"  # "amount", "number", "date", "time", "day", "currency", "name", "word"
    start: int = -1
    end: int = -1
    amount: Decimal | None = None
    unit: str = ""
    legacy: tuple[str, ...] = ()  # the keys that state it in a message logged before ``KEYS_VERSION``

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.alts)


def _value(found: Found) -> Value:
    """A value as a premise looks for it: a number by its likeliest reading (``5,100`` is not 5.1), with a unit
    (``$55``, ``25 m²``) in that unit or bare (``55 dollars``, ``55``; not ``55 euros``), a bare one in any unit."""
    keys, legacy = list(found.keys), found.keys[:0]
    if found.kind in _NUMBER_KINDS:
        number = found.key[2:]
        keys, legacy = (
            ([f"u:{number}:{found.unit}", f"u:{number}:"], (found.key,)) if found.unit else ([found.key], ())
        )
    elif found.kind == "day":
        legacy = (f"w:{DAY_NAMES[WEEKDAYS.index(found.key[3:])]}",)
    elif found.kind == "time":
        legacy = (f"n:{found.key[2:].split(':')[0]}",)
    return Value(
        found.label,
        keys[0],
        tuple(keys[1:]),
        found.kind,
        found.start,
        found.end,
        found.amount,
        found.unit,
        legacy,
    )


def base_key(value: Value) -> str:
    """A value's key without its unit (``n:55`` for ``$55``)."""
    return value.legacy[0] if value.key.startswith("u:") else value.key


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \"'“(«")
    return not before or before[-1] in ".!?:;\n"


def _not_a_name(lower: str, label: str) -> bool:
    """Function words, months, weekdays and currency codes are never names."""
    return (
        lower in FUNCTION_WORDS
        or lower in _MONTH_WORDS
        or day_word(lower)
        or (label.isupper() and currency_code(label) == label)
    )


@lru_cache(maxsize=4096)
def strong_values(text: str, names: frozenset[str], currencies: bool = False) -> tuple[Value, ...]:
    """The dates, times, weekdays, numbers and names a text states, in order, each once (``currencies``: the
    currency of each amount too). A capitalised word is a name when it is not a function word, a month, a
    weekday, a currency or a unit (right after a number), nor part of a value, and either stands
    mid-sentence or is a known name (``names``, lowercased)."""
    found = [f for f in scan(text) if currencies or f.kind != "currency"]
    spans = [(f.start, f.end) for f in found]
    values = [_value(f) for f in found]
    for label, key, start in _words(text):
        lower = key[2:]
        if not label[:1].isupper() or _not_a_name(lower, label) or any(s <= start < e for s, e in spans):
            continue
        if text[:start].rstrip()[-1:].isdigit():
            continue  # a unit: 12 Km
        if lower in names or not _sentence_initial(text, start):
            values.append(Value(label, key, start=start, end=start + len(label)))
    kept: list[Value] = []
    seen: set[str] = set()
    for value in sorted(values, key=lambda v: v.start):
        same = base_key(value)  # "4000 IU", then "4000": one value
        if same not in seen:
            seen.add(same)
            kept.append(value)
    return tuple(kept)


def plain_values(text: str, exclude: Set[str] = frozenset()) -> list[Value]:
    """The plain content words of a text as stems (function words and ``exclude`` stems left out)."""
    values: list[Value] = []
    seen: set[str] = set()
    for label, key, start in _words(text):
        lower = key[2:]
        key = "s:" + stem(label)
        if lower in FUNCTION_WORDS or len(lower) < 3 or key in seen or key[2:] in exclude:
            continue
        seen.add(key)
        values.append(Value(label, key, kind="word", start=start, end=start + len(label)))
    return values


def known_names(texts: list[str]) -> frozenset[str]:
    """Words written capitalised mid-sentence somewhere in ``texts`` (lowercased): the names a benchmark uses."""
    names: set[str] = set()
    for text in texts:
        for label, key, start in _words(text):
            if label[:1].isupper() and not _sentence_initial(text, start) and not _not_a_name(key[2:], label):
                names.add(key[2:])
    return frozenset(names)
