"""What a text says, as keys a premise can be matched on: numbers in any usual format, dates, names, words.

A message sent to the agent is reduced to its keys once (``message_keys``); a premise value of a check's
correct answer (``answer_values``) or a fact's key content (``fact_content``) is told when a key of it is
among a message's keys. The keys are chosen so that a human reading the transcript would agree:

- ``n:<number>``: ``5,100``, ``5100``, ``5.100`` (also 5.1), ``5.1k``, ``$95``, ``95 EUR``, ``six`` (number words
  up to twenty and the tens); the parts of a date are not numbers of their own.
- ``d:<month>-<day>``: ``19 August 2026`` (as templates expand), ``August 19th``, ``Aug 19``, ``2026-08-19``;
  in a message, ``today``/``tonight``/``this morning``, ``yesterday``/``last night`` and ``tomorrow`` name a
  day from the one it was sent on.
- ``w:<word>``: every word, lowercased, possessive dropped (names are matched on these);
  ``s:<stem>``: the same words cut to a stem (``wears``/``wear``, ``helmets``/``helmet``) for plain words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal, InvalidOperation

_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = {name: i + 1 for i, name in enumerate(_MONTHS)} | {name[:3]: i + 1 for i, name in enumerate(_MONTHS)}
_MONTH["sept"] = 9
_MONTH_RE = r"(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY_RE = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATES = [
    re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"),  # ISO
    re.compile(rf"\b{_DAY_RE}(?:\s+of)?\s+{_MONTH_RE}(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE),  # 19 August 2026
    re.compile(rf"\b{_MONTH_RE}\s+{_DAY_RE}(?:,?\s+(\d{{4}}))?\b", re.IGNORECASE),  # August 19, 2026
]
_RELATIVE = re.compile(
    r"\b(?:(today|tonight|this (?:morning|afternoon|evening))|(yesterday|last night)|(tomorrow))\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(\s?[kK]\b)?(?!\.\d)"
)  # 5,100 · 4.5 · 5.1k
_NUMBER_WORDS = {
    word: n
    for n, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
        "sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_NUMBER_WORDS |= {"a dozen": 12, "dozen": 12, "hundred": 100, "thousand": 1000}
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


def _canonical(value: Decimal) -> str:
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def stem(word: str) -> str:
    """A plain word's stem: lowercased, a plural or -ing/-ed ending dropped, cut to five letters."""
    word = _plain(word)
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word[:STEM]


@dataclass(frozen=True)
class Found:
    """A value found in a text: as written (``label``), its key, and where it sits."""

    label: str
    key: str
    start: int
    end: int


def _dates(text: str) -> list[Found]:
    found: list[Found] = []
    taken: list[tuple[int, int]] = []
    for index, pattern in enumerate(_DATES):
        for match in pattern.finditer(text):
            if any(s < match.end() and match.start() < e for s, e in taken):
                continue
            groups = match.groups()
            if index == 0:
                month, day = int(groups[1]), int(groups[2])
            elif index == 1:
                day, month = int(groups[0]), _MONTH[groups[1].lower().rstrip(".")]
            else:
                month, day = _MONTH[groups[0].lower().rstrip(".")], int(groups[1])
            if not (1 <= month <= 12 and 1 <= day <= 31):
                continue
            taken.append((match.start(), match.end()))
            found.append(Found(match.group(0), f"d:{month:02d}-{day:02d}", match.start(), match.end()))
    return found


def _numbers(text: str, skip: list[tuple[int, int]]) -> list[Found]:
    found: list[Found] = []
    for match in _NUMBER.finditer(text):
        if any(s <= match.start() < e for s, e in skip):
            continue
        digits, thousands = match.group(1), match.group(2)
        try:
            value = Decimal(digits.replace(",", ""))
        except InvalidOperation:  # pragma: no cover - the pattern yields numbers
            continue
        if thousands:
            value *= 1000
        found.append(Found(match.group(0).strip(), f"n:{_canonical(value)}", match.start(), match.end()))
        if re.fullmatch(r"\d{1,3}\.\d{3}", digits) and not thousands:  # 5.100: European thousands, maybe
            found.append(Found(digits, f"n:{digits.replace('.', '')}", match.start(), match.end()))
    return found


def _number_words(text: str) -> list[Found]:
    found = []
    for match in re.finditer(r"\b(a dozen|[a-z]+)\b", text.lower()):
        value = _NUMBER_WORDS.get(match.group(1))
        if value is not None:
            found.append(Found(match.group(0), f"n:{value}", match.start(), match.end()))
    return found


def _plain(word: str) -> str:
    return word.lower().replace("’", "'").removesuffix("'s")


def _words(text: str) -> list[Found]:
    return [Found(m.group(0), "w:" + _plain(m.group(0)), m.start(), m.end()) for m in _WORD.finditer(text)]


def message_keys(text: str, sent_on: date | None = None) -> set[str]:
    """Every key of a message: numbers, dates (relative ones from the day it was sent), words and stems."""
    dates = _dates(text)
    keys = {f.key for f in dates}
    keys |= {f.key for f in _numbers(text, [(f.start, f.end) for f in dates])}
    keys |= {f.key for f in _number_words(text)}
    for word in _words(text):
        keys.add(word.key)
        keys.add("s:" + stem(word.label))
    for match in _RELATIVE.finditer(text) if sent_on is not None else ():
        assert sent_on is not None
        day = sent_on + timedelta(days=0 if match.group(1) else -1 if match.group(2) else 1)
        keys.add(f"d:{day.month:02d}-{day.day:02d}")
    return keys


@dataclass(frozen=True)
class Value:
    """A value a premise needs told: as written, and the key a message must carry."""

    label: str
    key: str


def _sentence_initial(text: str, start: int) -> bool:
    before = text[:start].rstrip(" \"'“(«")
    return not before or before[-1] in ".!?:;\n"


def strong_values(text: str, names: frozenset[str]) -> list[Value]:
    """The dates, numbers and names a text states, in order, each once. A capitalised word is a name when it
    is not a function word nor a unit (right after a number), and either stands mid-sentence or is a known
    name (``names``, lowercased)."""
    dates = _dates(text)
    found = dates + _numbers(text, [(f.start, f.end) for f in dates]) + _number_words(text)
    for word in _words(text):
        lower = word.key[2:]
        if not word.label[:1].isupper() or lower in FUNCTION_WORDS or lower in _MONTH:
            continue
        if text[: word.start].rstrip()[-1:].isdigit():
            continue  # a unit: 4,800 EUR, 12 Km
        if lower in names or not _sentence_initial(text, word.start):
            found.append(word)
    values: list[Value] = []
    seen: set[str] = set()
    for item in sorted(found, key=lambda f: f.start):
        if item.key not in seen:
            seen.add(item.key)
            values.append(Value(item.label, item.key))
    return values


def plain_values(text: str, exclude: set[str] = frozenset()) -> list[Value]:  # type: ignore[assignment]
    """The plain content words of a text as stems (function words and ``exclude`` stems left out)."""
    values: list[Value] = []
    seen: set[str] = set()
    for word in _words(text):
        lower = word.key[2:]
        key = "s:" + stem(word.label)
        if lower in FUNCTION_WORDS or len(lower) < 3 or key in seen or key[2:] in exclude:
            continue
        seen.add(key)
        values.append(Value(word.label, key))
    return values


def known_names(texts: list[str]) -> frozenset[str]:
    """Words written capitalised mid-sentence somewhere in ``texts`` (lowercased): the names a benchmark uses."""
    names: set[str] = set()
    for text in texts:
        for word in _words(text):
            if word.label[:1].isupper() and not _sentence_initial(text, word.start):
                names.add(word.key[2:])
    return frozenset(names - FUNCTION_WORDS)
