"""Figures in free text for the rules judge (already made plain by ``judge_text``): numbers in any format,
currencies and units, rates, dates, times and blood-pressure-style readings, each with its place in the text
and the clause around it.

``5,400``, ``5.400``, ``5 400 $``, ``5400``, ``US$5,400`` and ``USD 5,400`` are all 5400 (a lone group of
three digits after a point or a comma may also be a decimal: both readings are kept). ``28 May``,
``May 28th, 2026``, ``Thursday, 28 May`` and ``2026-05-28`` are one date (the year is not compared);
"Friday the 14th" is a day of a month not named (``day:14``, settled by the judge against the correct
answer). ``27:40`` and ``27 min 40 s`` are one time; ``7:30`` is 7:30 or 19:30, ``19:30`` and ``07:30`` one
of them, ``12:15`` a quarter past noon. ``142/95`` is one reading. Units and currencies are folded to one spelling (``kilometres`` → ``km``,
``dollars``/``USD`` → ``$``); a rate keeps its denominator (``per``: "$90 a night", "$70/m", "$280 each").
A bare number joined to a figure by "or", "and", "by", "×" or a dash takes its unit ("either 55 or 50 g":
two weights), except a count times a price ("5 × $90": 5 stays a count). ``Clauses`` cuts a text at
punctuation, line breaks, dashes and "but" (never inside a figure); ``addends`` and ``subset_sum`` add
figures up ("5 × $90" is one addend, 450). ``key_words`` gives a text's content words (stemmed),
``weekdays`` the weekdays it names.
"""

from __future__ import annotations

import bisect
import itertools
import math
import re
from dataclasses import dataclass, replace

_MONTHS = "january february march april may june july august september october november december".split()
_MONTH = (
    r"(?:january|jan|february|feb|march|mar|april|apr|may|june|jun|july|jul|august|aug|september|sept|sep"
    r"|october|oct|november|nov|december|dec)\.?"
)
WEEKDAY_NAMES = "monday tuesday wednesday thursday friday saturday sunday".split()
WEEKDAY_SHORT = {"mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun"}
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues|tue|thurs|thur|thu|mon|wed|fri|sat|sun)\.?"
_ORD = r"(?:st|nd|rd|th)?"
_DATE = re.compile(
    rf"\b(?P<iso>(?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}}))\b"
    rf"|\b(?P<num>(?P<n1>\d{{1,2}})[/.](?P<n2>\d{{1,2}})[/.](?P<ny>\d{{4}}))\b"
    rf"|(?:\b{_WEEKDAY},?\s+)?\b(?:the\s+)?(?P<dd>\d{{1,2}}){_ORD}(?:\s+of)?\s+(?P<dm>{_MONTH})(?![a-z])(?:,?\s+\d{{4}}\b)?"
    rf"|(?:\b{_WEEKDAY},?\s+)?\b(?P<mm>{_MONTH})(?![a-z])\s+(?:the\s+)?(?P<md>\d{{1,2}}){_ORD}\b(?![:/.,]?\d)(?:,?\s+\d{{4}}\b)?"
    rf"|\b{_WEEKDAY},?\s+the\s+(?P<od>\d{{1,2}})(?:st|nd|rd|th)\b"
    rf"|\bon\s+the\s+(?P<ond>\d{{1,2}})(?:st|nd|rd|th)\b(?=\s*(?:[.,;:!?)]|$|at\b|\())",
    re.IGNORECASE,
)
_TIME = re.compile(
    r"\b(?P<a>\d{1,2}):(?P<b>\d{2})\b(?!:\d)"
    r"|\b(?P<m>\d{1,3})\s*(?:minutes?|mins?|m)\s*(?:and\s+)?(?P<s>\d{1,2})\s*(?:seconds?|secs?|s)\b",
    re.IGNORECASE,
)
_READING = re.compile(r"\b(?P<a>\d{2,3})/(?P<b>\d{2,3})\b")
_CURRENCY = r"(?:us|au|a|c|nz)?[$€£]|(?:usd|eur|gbp|chf)(?![a-z])"
_CODES = {"usd": "$", "eur": "€", "gbp": "£", "chf": "chf"}
_MONEY = ("$", "€", "£", "chf")
_CURRENCY_WORD = r"(?:usd|us dollars|dollars?|bucks|eur|euros?|gbp|pounds?|chf)\b"
_NUMBER = re.compile(
    rf"(?P<cur>{_CURRENCY})?\s?"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?"
    rf"|\d{{1,3}}(?:[ \u00a0\u202f]\d{{3}})+(?=\s?(?:{_CURRENCY}|{_CURRENCY_WORD}))|\d+(?:[.,]\d+)?)"
    r"(?P<k>k\b)?",
    re.IGNORECASE,
)
_UNITS: dict[str, str] = {
    "km": "km", "kms": "km", "kilometre": "km", "kilometres": "km", "kilometer": "km", "kilometers": "km",
    "m²": "m2", "m2": "m2", "sqm": "m2", "sq m": "m2", "sq. m": "m2", "square metres": "m2",
    "square meters": "m2", "square metre": "m2", "square meter": "m2",
    "m": "m", "metre": "m", "metres": "m", "meter": "m", "meters": "m",
    "g": "g", "gram": "g", "grams": "g", "gr": "g", "kg": "kg", "kilo": "kg", "kilos": "kg", "kilograms": "kg",
    "mg": "mg", "milligrams": "mg", "iu": "iu", "%": "%", "percent": "%",
    "min": "min", "mins": "min", "minute": "min", "minutes": "min", "h": "h", "hour": "h", "hours": "h",
    "day": "day", "days": "day", "night": "night", "nights": "night", "bpm": "bpm",
    "usd": "$", "us dollars": "$", "dollar": "$", "dollars": "$", "bucks": "$", "$": "$",
    "€": "€", "eur": "€", "euro": "€", "euros": "€", "£": "£", "gbp": "£", "pound": "£", "pounds": "£",
    "quid": "£", "chf": "chf", "per cent": "%", "mile": "mi", "miles": "mi", "mi": "mi", "lb": "lb",
    "lbs": "lb", "hr": "h", "hrs": "h",
}  # fmt: skip
_DENOMINATORS = (  # what a price is "a …" of: "$90 a night", "$110 a head"
    "night day week month year hour head person guest adult child kid piece unit seat ticket session "
    "lesson visit class litre liter bottle pack box room metre meter mile km kilometre kilometer kilo kg "
    "m² m2 sqm square"
).split()
_PER = re.compile(
    r"\s*(?:/\s*|\s(?:per|an?)\s+|\s?(?:each|apiece)\b)(?P<den>(?:m²|m2|sq\.?\s?m|square\s+\w+|[a-z]+)?)",
    re.IGNORECASE,
)
_UNIT = re.compile(
    r"\s?(?P<unit>"
    + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
    + r")(?![a-z0-9])",
    re.IGNORECASE,
)
_JOINER = re.compile(
    r"(?:st|nd|rd|th)?\s*(?:,|or|and|to|by|x|×|\*|-|–)?\s*(?:the\s+)?(?:either\s+)?", re.IGNORECASE
)

_PRODUCT = re.compile(r"\s*(?:×|x|\*|by|at)\s*", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[;:!?()\[\]—\n→]|\.(?!\d)|,(?!\d)|\s[–-]\s|\bbut\b", re.IGNORECASE)
_WEEKDAY_WORD = re.compile(rf"\b(?:{'|'.join(WEEKDAY_NAMES)})s?\b", re.IGNORECASE)
_STOP = set(
    "the a an and or of to in on at for with by from is are was were be been it its this that these those "
    "we our my me i you your he she they them his her their as about into than then there here what which "
    "who when where how much many per not no yes do did done so but if also just only one all any each "
    "around roughly approximately nearly almost".split()
)


@dataclass(frozen=True)
class Figure:
    """A figure in a text: ``keys`` compare it (several when a format is ambiguous), ``amounts`` add it up."""

    keys: frozenset[str]
    shape: str  # "$", "km", "m2", …; "date", "time", "reading"; "" for a bare number
    start: int
    end: int
    amounts: tuple[float, ...] = ()
    per: str = ""  # a rate's denominator ("night", "m2", "each"): "$90 a night" is a price of one night

    def same(self, other: Figure) -> bool:
        return bool(self.keys & other.keys)


def stem(word: str) -> str:
    """A word folded for comparison: lower case, a plural made singular, a short weekday made whole."""
    w = word.lower().strip("'").removesuffix("'s")
    if w in WEEKDAY_SHORT:
        return next(day for day in WEEKDAY_NAMES if day.startswith(w[:3]))
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def key_words(text: str) -> list[str]:
    """The content words of a text, stemmed, in order, each once (no stop words, none shorter than 3)."""
    found = [stem(w) for w in re.findall(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ0-9'-]{1,}", text)]
    return list(dict.fromkeys(w for w in found if w not in _STOP and len(w) > 2))


def weekdays(text: str, figures: list[Figure] | None = None) -> list[tuple[str, int, int]]:
    """The weekdays a text names (whole names, lower case) with their spans; with ``figures``, only those
    outside every figure (a weekday of "Tuesday, 10 March" belongs to its date)."""
    spans = [(f.start, f.end) for f in figures or []]
    return [
        (stem(m.group(0)), m.start(), m.end())
        for m in _WEEKDAY_WORD.finditer(text)
        if not any(s <= m.start() < e for s, e in spans)
    ]


def number_key(value: float) -> str:
    return f"{round(value, 6):g}"


def _readings(raw: str) -> tuple[float, ...]:
    """The values a written number may mean: '1,740' is 1740 (or 1.74); '11,5' is 11.5; '7.590' 7590 or 7.59."""
    if re.fullmatch(r"\d{1,3}(?:,\d{3}){2,}(?:\.\d+)?", raw):
        return (float(raw.replace(",", "")),)
    if re.fullmatch(r"\d{1,3}(?:\.\d{3}){2,}(?:,\d+)?", raw):
        return (float(raw.replace(".", "").replace(",", ".")),)
    if re.fullmatch(r"\d{1,3}[.,]\d{3}", raw):
        return float(re.sub(r"[.,]", "", raw)), float(raw.replace(",", "."))
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+\.\d+", raw):
        return (float(raw.replace(",", "")),)
    if re.fullmatch(r"\d{1,3}(?:\.\d{3})+,\d+", raw):
        return (float(raw.replace(".", "").replace(",", ".")),)
    return (float(re.sub(r"[\s\u00a0\u202f]", "", raw).replace(",", ".")),)


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, start=1) if m.startswith(name.lower().rstrip(".")[:3]))


def _date_keys(match: re.Match[str]) -> frozenset[str]:
    g = match.groupdict()
    if g["iso"]:
        pairs = [(int(g["im"]), int(g["id"]))]
    elif g["num"]:
        a, b = int(g["n1"]), int(g["n2"])
        pairs = [(b, a), (a, b)]
    elif g["dd"]:
        pairs = [(_month(g["dm"]), int(g["dd"]))]
    elif g["od"] or g["ond"]:  # "Friday the 14th": a day of a month not named, settled by the judge
        day = int(g["od"] or g["ond"])
        return frozenset({f"day:{day:02d}"}) if 1 <= day <= 31 else frozenset()
    else:
        pairs = [(_month(g["mm"]), int(g["md"]))]
    return frozenset(f"date:{m:02d}-{d:02d}" for m, d in pairs if 1 <= m <= 12 and 1 <= d <= 31)


def find_figures(text: str) -> list[Figure]:
    """Every figure of ``text`` (already spelled out) in reading order."""
    figures: list[Figure] = []
    taken = bytearray(len(text))  # characters already part of a figure

    def free(start: int, end: int) -> bool:
        return not any(taken[start:end])

    def add(figure: Figure) -> None:
        figures.append(figure)
        taken[figure.start : figure.end] = b"\x01" * (figure.end - figure.start)

    for m in _DATE.finditer(text):
        keys = _date_keys(m)
        if keys:
            add(Figure(keys, "date", m.start(), m.end()))
    for m in _TIME.finditer(text):
        if free(m.start(), m.end()):
            add(Figure(_time_keys(m), "time", m.start(), m.end()))
    for m in _READING.finditer(text):
        if free(m.start(), m.end()):
            add(Figure(frozenset({f"reading:{m.group('a')}/{m.group('b')}"}), "reading", m.start(), m.end()))
    for m in _NUMBER.finditer(text):
        start = m.start("cur") if m.group("cur") else m.start("num")
        if not free(start, m.end()) or (start > 0 and (text[start - 1].isalnum() or text[start - 1] == "/")):
            continue
        amounts = _readings(m.group("num"))
        if m.group("k"):
            amounts = tuple(a * 1000 for a in amounts)
        end = m.end()
        shape = _currency(m.group("cur"))
        unit = _UNIT.match(text, end)
        if unit is not None:
            end = unit.end() if not shape or _UNITS[unit.group("unit").lower()] == shape else end
            shape = shape or _UNITS[unit.group("unit").lower()]
        per, end = _rate(text, end)
        add(Figure(frozenset(number_key(a) for a in amounts), shape, start, end, amounts, per))
    figures.sort(key=lambda f: f.start)
    return _inherit_shapes(text, figures)


def _currency(written: str | None) -> str:
    """The shape of a currency as written: "US$" → "$", "EUR" → "€"."""
    if not written:
        return ""
    return _CODES.get(written.lower(), written[-1])


def _time_keys(match: re.Match[str]) -> frozenset[str]:
    """A time's keys: "7:30" is 7:30 or 19:30 unless zero-padded ("07:30"); "12:15" and "19:30" are one."""
    if not match.group("a"):
        return frozenset({f"time:{int(match.group('m'))}:{int(match.group('s')):02d}"})
    hour, minute = int(match.group("a")), int(match.group("b"))
    keys = {f"time:{hour}:{minute:02d}"}
    if 1 <= hour <= 11 and not match.group("a").startswith("0"):
        keys.add(f"time:{hour + 12}:{minute:02d}")
    return frozenset(keys)


def _rate(text: str, end: int) -> tuple[str, int]:
    """The denominator of a rate written after a figure ("/m²", "per night", "a head", "each") and where it
    ends; ("", end) for none."""
    match = _PER.match(text, end)
    if match is None:
        return "", end
    den = " ".join(match.group("den").lower().split())
    joiner = match.group(0)[: match.start("den") - match.start()].strip().lower()
    if joiner in ("each", "apiece"):
        return "each", match.start("den")
    if not den or (
        joiner in ("a", "an") and den.split()[0] not in _DENOMINATORS and stem(den) not in _DENOMINATORS
    ):
        return "", end
    unit = _UNITS.get(den)
    return unit or stem(den.split()[-1]), match.end()


def _joined(text: str, left: Figure, right: Figure) -> bool:
    gap = text[left.end : right.start]
    match = _JOINER.fullmatch(gap)
    return match is not None and len(gap) <= 12


def _inherit_shapes(text: str, figures: list[Figure]) -> list[Figure]:
    """A bare number joined to a figure takes its shape: '55 or 50 g', '5 by 4 m', 'the 9th or 10th of March'."""
    result = list(figures)
    for _ in range(2):  # right to left, then left to right
        for i in range(len(result) - 1, -1, -1):
            figure = result[i]
            if figure.shape:
                continue
            for j in (i + 1, i - 1):
                if not 0 <= j < len(result) or not result[j].shape:
                    continue
                left, right = (figure, result[j]) if j > i else (result[j], figure)
                if not _joined(text, left, right):
                    continue
                if result[j].shape == "date":
                    day = int(min(figure.amounts)) if figure.amounts else 0
                    month = sorted(result[j].keys)[0][5:7]
                    if 1 <= day <= 31:
                        result[i] = replace(figure, keys=frozenset({f"date:{month}-{day:02d}"}), shape="date")
                elif result[j].shape in _MONEY and _PRODUCT.fullmatch(text[left.end : right.start]):
                    pass  # "5 × $90": a count times a price
                elif result[j].shape not in ("time", "reading"):
                    result[i] = replace(figure, shape=result[j].shape)
                break
    return result


class Clauses:
    """The clauses of a text: breaks are punctuation, dashes and 'but', never a point or comma inside a figure."""

    def __init__(self, text: str, figures: list[Figure]) -> None:
        inside = sorted((f.start, f.end) for f in figures)
        starts = [s for s, _ in inside]
        self._starts: list[int] = []
        self._ends: list[int] = []
        for m in _CLAUSE_BREAK.finditer(text):
            k = bisect.bisect_right(starts, m.start()) - 1
            if k >= 0 and inside[k][0] <= m.start() < inside[k][1]:
                continue
            self._starts.append(m.start())
            self._ends.append(m.end())
        self._length = len(text)

    def around(self, figure: Figure) -> tuple[int, int]:
        """The span of the clause holding ``figure``."""
        k = bisect.bisect_right(self._ends, figure.start)
        start = self._ends[k - 1] if k else 0
        j = bisect.bisect_left(self._starts, figure.end)
        end = self._starts[j] if j < len(self._starts) else self._length
        return start, end


def compatible(a: Figure, b: Figure) -> bool:
    return a.shape == b.shape or not a.shape or not b.shape


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-6)


def addends(text: str, figures: list[Figure]) -> list[tuple[list[Figure], float]]:
    """Figures as addends: 'A × B' (joined by ×, x, by, at) is one term, their product."""
    terms: list[tuple[list[Figure], float]] = []
    for figure in figures:
        if not figure.amounts:
            continue
        if terms and _PRODUCT.fullmatch(text[terms[-1][0][-1].end : figure.start]):
            group, value = terms.pop()
            terms.append((group + [figure], value * figure.amounts[0]))
        else:
            terms.append(([figure], figure.amounts[0]))
    return terms


def subset_sum(terms: list[tuple[list[Figure], float]], total: float) -> list[Figure] | None:
    """Figures of a set of terms adding up to ``total`` (the largest such set), or None."""
    if len(terms) > 14:
        return None
    for size in range(len(terms), 0, -1):
        for combo in itertools.combinations(terms, size):
            if close(sum(value for _, value in combo), total):
                return [f for group, _ in combo for f in group]
    return None
