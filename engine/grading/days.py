"""Days and times as people write them, each reduced to the key a premise is matched on.

- dates as the rules judge reads them (``judge_figures``: ``19 August``, ``Aug 19th``, ``2026-08-19``,
  ``19/08/2026``, ``Tuesday, 10 March``): ``d:<MM-DD>``, one key per reading;
- times of day on a 24-hour clock (``18:30``, ``18h30``, ``6:30 pm``, ``6pm``, ``noon``): ``t:<H:MM>``; in a
  message also ``at 6`` (either half of the day: a reader takes it as the time meant);
- weekdays whole, plural or cut short (``Thursday``, ``Thursdays``, ``Thu``, ``Thurs``), in ranges (``Mon–Thu``,
  ``Monday through Thursday``, ``from Monday to Thursday``) and groups (``weekdays``, ``weekends``, ``every day
  except Sunday``): ``wd:<mon…sun>``, one key per day.
"""

from __future__ import annotations

import re

from engine.grading.amounts import UNIT, Found, currency_after
from engine.models.judge_figures import find_figures

_MAYBE_DATE = re.compile(
    r"\d{4}-\d|\d[/.]\d{1,2}[/.]\d{2}|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?"
    r"|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\b",
    re.IGNORECASE,
)  # the judge reads every figure of a text: only one that may hold a date is handed to it


def dates(text: str) -> list[Found]:
    """Dates as the rules judge reads them: one key per reading (``10/03`` is 10 March or 3 October)."""
    found = []
    for figure in find_figures(text) if _MAYBE_DATE.search(text) else ():
        if figure.shape == "date":
            keys = sorted("d:" + k.removeprefix("date:") for k in figure.keys)
            label = text[figure.start : figure.end]
            found.append(Found(label, keys[0], figure.start, figure.end, "date", tuple(keys[1:])))
    return found


_CLOCK = re.compile(
    r"(?<![\d.:,])(?P<h>\d{1,2})(?:[:.h](?P<m>\d{2}))?[ \u00a0]?(?P<ap>[ap])\.?m\b\.?"
    r"|(?<![\d.:,])(?P<h24>\d{1,2})(?::|h)(?P<m24>\d{2})(?![\d:])"
    r"|\b(?P<word>noon|midday|midnight)\b",
    re.IGNORECASE,
)
_LOOSE_HOUR = re.compile(
    r"\b(?:at|by|until|till|til|before|after|around|from)\s+(?P<h>\d{1,2})(?:\s?o['’]?clock)?(?![\d.,:%])"
)


def _time(hour: int, minute: int) -> str:
    return f"t:{hour}:{minute:02d}"


def times(text: str) -> list[Found]:
    """Times of day as ``t:H:MM`` on a 24-hour clock."""
    found: list[Found] = []
    for m in _CLOCK.finditer(text):
        if m.group("word"):
            hour, minute = (0, 0) if m.group("word").lower() == "midnight" else (12, 0)
        elif m.group("ap"):
            hour, minute = int(m.group("h")) % 12, int(m.group("m") or 0)
            hour += 12 if m.group("ap").lower() == "p" else 0
        else:
            hour, minute = int(m.group("h24")), int(m.group("m24"))
        if hour <= 24 and minute < 60:
            found.append(Found(m.group(0), _time(hour, minute), m.start(), m.end(), "time"))
    return found


def loose_hours(text: str) -> list[Found]:
    """``at 6``, ``until 7 o'clock`` in a message: the hour, in either half of the day."""
    found: list[Found] = []
    for m in _LOOSE_HOUR.finditer(text):
        hour = int(m.group("h"))
        if 0 < hour <= 12 and not (UNIT.match(text, m.end()) or currency_after(text, m.end())[0]):
            keys = (_time(hour % 12, 0), _time(hour % 12 + 12, 0))
            found.append(Found(m.group(0), keys[0], m.start("h"), m.end(), "time", keys[1:]))
    return found


# ---- weekdays ---------------------------------------------------------------------------------------

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_FORMS = {name: i for i, name in enumerate(DAY_NAMES)} | {short: i for i, short in enumerate(WEEKDAYS)}
_FORMS |= {"tues": 1, "weds": 2, "thur": 3, "thurs": 3}
_WORDLIKE = frozenset({"sat", "sun", "wed"})  # also plain words: a weekday only capitalised or in a range
_DAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tues|thurs|thur|weds|mon|tue|wed|thu|fri|sat|sun)"
_DAY_WORD = re.compile(rf"\b(?P<d>{_DAY})s?\b", re.IGNORECASE)
_RANGE = re.compile(
    rf"\b(?P<a>{_DAY})s?\.?\s*(?:-|–|—|to|through|thru|till|until|'?til)\s*(?P<b>{_DAY})s?\b"
    rf"|\bbetween\s+(?P<c>{_DAY})s?\s+and\s+(?P<d>{_DAY})s?\b",
    re.IGNORECASE,
)
_MOVED = re.compile(
    r"\b(?:moved|changed|shifted|pushed|switched|swapped|rescheduled)\s+(?:it\s+)?from\s*$", re.IGNORECASE
)
_GROUPS = [
    (
        re.compile(
            r"\b(?:week\s?days?|work(?:ing)?\s?days?|business days?|(?:during|in) the week)\b", re.IGNORECASE
        ),
        range(5),
    ),
    (re.compile(r"\bweekends?\b", re.IGNORECASE), range(5, 7)),
    (re.compile(r"\b(?:every\s+day|all week|(?:seven|7) days a week)\b", re.IGNORECASE), range(7)),
]
_LOOSE_GROUP = re.compile(
    r"\b(?:daily|everyday)\b", re.IGNORECASE
)  # in a message; in a fact, often "daily dose"
_EXCEPT = re.compile(
    rf"\s*,?\s*(?:except(?:\s+(?:on|for))?|but(?:\s+not)?(?:\s+on)?|apart from|other than|besides)\s+"
    rf"(?P<days>{_DAY}s?\.?(?:\s*(?:,|and|or|&)\s*{_DAY}s?\.?)*)",
    re.IGNORECASE,
)


def day_word(word: str) -> bool:
    """Whether a word (lowercased) names a weekday: ``thursday``, ``thursdays``, ``thu``, ``thurs``."""
    return word.rstrip(".") in _FORMS or (word.endswith("s") and word[:-1] in _FORMS)


def _day(word: str) -> int:
    return _FORMS[word.lower().rstrip(".")]


def weekdays(text: str, message: bool = False) -> list[Found]:
    """The weekdays a text names, one ``wd:`` key each, ranges and groups spelled out day by day ("every day
    except Sunday" is Monday to Saturday). In a message a day named as an exception is still a day said."""
    found: list[Found] = []
    covered: list[tuple[int, int]] = []
    for m in _RANGE.finditer(text):
        if _MOVED.search(text, max(0, m.start() - 40), m.start()):
            continue  # "moved from Tuesday to Thursday": two days, not a range
        a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        first, last = _day(a), _day(b)
        spanned = [(first + i) % 7 for i in range((last - first) % 7 + 1)]
        found += [Found(m.group(0), f"wd:{WEEKDAYS[d]}", m.start(), m.end(), "day") for d in spanned]
        covered.append((m.start(), m.end()))
    groups = [*_GROUPS, (_LOOSE_GROUP, range(7))] if message else _GROUPS
    for pattern, days in groups:
        for m in pattern.finditer(text):
            end, left = m.end(), set(days)
            if exception := _EXCEPT.match(text, end):
                left -= {_day(d.group("d")) for d in _DAY_WORD.finditer(exception.group("days"))}
                if not message:
                    covered.append((exception.start("days"), exception.end("days")))
            found += [Found(m.group(0), f"wd:{WEEKDAYS[d]}", m.start(), end, "day") for d in sorted(left)]
    for m in _DAY_WORD.finditer(text):
        word = m.group("d")
        if any(s <= m.start() < e for s, e in covered):
            continue
        if word.lower() in _WORDLIKE and word.islower() and not _listed_with_days(text, m.start(), m.end()):
            continue  # "we sat down", "the sun": not a weekday
        found.append(Found(m.group(0), f"wd:{WEEKDAYS[_day(word)]}", m.start(), m.end(), "day"))
    return found


def _listed_with_days(text: str, start: int, end: int) -> bool:
    """Whether another weekday stands right beside this word (a list: "mon, wed and sat")."""
    near = text[max(0, start - 12) : start] + " " + text[end : end + 12]
    return any(w.group("d").lower() not in _WORDLIKE for w in _DAY_WORD.finditer(near))
