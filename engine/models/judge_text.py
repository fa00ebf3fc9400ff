"""Text made plain for the rules judge before any figure is read: chat markup dropped, number words and
time phrases spelled as digits, weeks as days.

- Markup (``plain``): bold, code and heading marks go, list bullets and numbers at the start of a line go (a
  "1." is no figure), a table's rows become clauses (cells split by ";") and its ruler row goes.
- Numbers (``spell_out_numbers``): "five thousand four hundred" → 5400, "forty-two" → 42.
- Times (``spell_out_times``): "half past seven", "a quarter to eight", "seven thirty pm", "7.30pm", "19h30",
  "noon", "12 o'clock" → ``H:MM``. A time marked as afternoon or evening ("pm", "in the evening", "tonight")
  is written on the 24-hour clock (19:30), one marked as morning zero-padded (07:30); an unmarked one stays
  ``7:30``, which ``judge_figures`` reads as either (half past seven is 7:30 and 19:30).
- Durations (``durations_in_days``): "a week" → 7 days, "a fortnight" → 14 days.
"""

from __future__ import annotations

import re

_SMALL = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen".split()
)
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_WORD = "|".join(_SMALL + _TENS + list(_SCALES))
_NUMBER_WORDS = re.compile(
    rf"\b(?:a\s+(?=hundred|thousand))?(?:{_WORD})(?:(?:[\s-]+(?:and\s+)?)(?:{_WORD}))*\b", re.I
)
_RATE_BEFORE = re.compile(  # a figure and its unit right before "a week": "350 g a week", "twice a week"
    r"(?:(?:[$€£]\s?)?\d(?:[\d.,]*\d)?\s*(?:%|(?!(?:for|in|within|about|after|over|under|than|last|next|and|or|of|to|by)\b)"
    r"[^\W\d_]{1,12})?|\btwice|\bonce)\s*\Z",
    re.IGNORECASE,
)
_DURATION = re.compile(r"\b(?:a|one|1)\s+(week|fortnight)\b|\b(\d+)\s+(weeks?|fortnights?)\b", re.IGNORECASE)

_HOUR = r"(?:1[0-2]|0?[1-9])"
_HOUR_WORD = "|".join(_SMALL[1:13])
_MINUTE_WORD = r"(?:oh[\s-]+(?:one|two|three|four|five|six|seven|eight|nine)|fifteen|thirty|forty[\s-]+five|fifty|forty|twenty(?:[\s-]+five)?|ten|five)"
_MARK = (
    r"(?P<mark>\s*(?:a\.?m\.?|p\.?m\.?)(?![a-z])|\s+in\s+the\s+(?:morning|afternoon|evening)|\s+at\s+night"
    r"|\s+tonight|\s+this\s+(?:morning|afternoon|evening))?"
)
_WORD_TIME = re.compile(  # "seven thirty pm", "at six fifteen": before the number words are spelled out
    rf"(?P<at>\b(?:at|by|from|until|till|around|about)\s+)?\b(?P<h>{_HOUR_WORD})[\s-]+(?P<m>{_MINUTE_WORD})\b"
    rf"(?=(?P<mark>\s*(?:a\.?m\.?|p\.?m\.?)(?![a-z])|\s+in\s+the\s+(?:morning|afternoon|evening)|\s+tonight)?)",
    re.IGNORECASE,
)
_PAST_TO = re.compile(
    rf"\b(?:a\s+)?(?P<m>quarter|half|\d{{1,2}})(?:\s+minutes?)?\s+(?P<dir>past|to|after|before)\s+(?P<h>{_HOUR})\b"
    rf"(?:\s+o'clock)?{_MARK}",
    re.IGNORECASE,
)
_CLOCK = re.compile(  # 7:30 pm, 7.30pm, 7pm, 19h30, 7 o'clock, at 6.45
    rf"(?P<at>\b(?:at|by|from|until|till|around|about)\s+)?\b(?P<h>\d{{1,2}})"
    rf"(?:(?P<sep>[:.h])(?P<m>[0-5]\d))?(?P<oclock>\s+o'clock)?{_MARK}(?![\d:.,]?\d)",
    re.IGNORECASE,
)
_NAMED = re.compile(r"\b(?:(?P<noon>noon|midday)|(?P<midnight>midnight))\b", re.IGNORECASE)
_UNIT_AFTER = re.compile(r"\s*(?:[$€£%]|[a-z²]+\b)", re.IGNORECASE)
_MARKS = re.compile(r"\*\*|__|`+")
_RULER = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$", re.MULTILINE)
_BULLET = re.compile(r"^(?P<indent>[ \t]*)(?:[-*•+▪◦]|\d{1,2}[.)]|#{1,6})[ \t]+", re.MULTILINE)


def plain(text: str) -> str:
    """Chat markup dropped: what a reader sees, with a table's cells as clauses."""
    text = _MARKS.sub("", text)
    text = _RULER.sub("", text)
    text = _BULLET.sub(lambda m: m.group("indent"), text)
    return re.sub(r"[ \t]*\|[ \t]*", " ; ", text)


def _words_value(words: str) -> int | None:
    total = current = 0
    seen = False
    for word in re.split(r"[\s-]+", words.lower()):
        if word in ("and", "a", ""):
            continue
        seen = True
        if word in _SMALL:
            current += _SMALL.index(word)
        elif word in _TENS:
            current += 10 * (_TENS.index(word) + 2)
        elif word == "hundred":
            current = max(current, 1) * 100
        elif word in _SCALES:
            total += max(current, 1) * _SCALES[word]
            current = 0
    return total + current if seen else None


def spell_out_numbers(text: str) -> str:
    """Number words as digits: 'five thousand four hundred' → '5400', 'forty-two' → '42'."""

    def digits(match: re.Match[str]) -> str:
        value = _words_value(match.group(0))
        if value is None or match.group(0).lower() == "one":  # "no one", "the one": rarely a figure
            return match.group(0)
        return str(value)

    return _NUMBER_WORDS.sub(digits, text)


def durations_in_days(text: str) -> str:
    """'a week', 'one week', '2 weeks', 'a fortnight' → '7 days', '7 days', '14 days', '14 days'; a rate's
    "a week" stays ("350 g a week")."""

    def days(match: re.Match[str]) -> str:
        if match.group(1):
            if _RATE_BEFORE.search(text, max(0, match.start() - 30), match.start()):
                return match.group(0)
            return "7 days" if match.group(1).lower() == "week" else "14 days"
        per = 7 if match.group(3).lower().startswith("week") else 14
        return f"{int(match.group(2)) * per} days"

    return _DURATION.sub(days, text)


def _clock(hour: int, minute: int, mark: str | None) -> str:
    """A time written for ``judge_figures``: 24-hour when marked, zero-padded in the morning."""
    mark = (mark or "").lower()
    if re.search(r"p\.?m|afternoon|evening|night", mark):
        return f"{hour % 12 + 12}:{minute:02d}"
    if re.search(r"a\.?m|morning", mark):
        return f"{hour % 12:02d}:{minute:02d}"
    return f"{hour}:{minute:02d}"


def _word_time(match: re.Match[str]) -> str:
    """ "seven thirty" is a time after "at" or before "pm", else the number words it says."""
    if not match.group("at") and not match.group("mark"):
        return match.group(0)
    hour = _SMALL.index(match.group("h").lower())
    minute = _words_value(re.sub(r"\boh\b", "", match.group("m"), flags=re.I)) or 0
    return (match.group("at") or "") + f"{hour}:{minute:02d}"


def _past_to(match: re.Match[str]) -> str:
    word = match.group("m").lower()
    backwards = match.group("dir").lower() in ("to", "before")
    if word.isdigit() and backwards and not match.group("mark"):
        return match.group(0)  # "from 10 to 8 km": a range, not ten to eight
    minutes = {"quarter": 15, "half": 30}.get(word) or int(word)
    hour = int(match.group("h"))
    if backwards:
        hour, minutes = hour - 1 if hour > 1 else 12, 60 - minutes
    if not 0 < minutes < 60:
        return match.group(0)
    return _clock(hour, minutes, match.group("mark"))


def _clock_time(match: re.Match[str]) -> str:
    """A written time, or the text as it was when it is no time (a price, a count, a decimal)."""
    hour, sep, mark = int(match.group("h")), match.group("sep"), match.group("mark")
    minute = int(match.group("m") or 0)
    at = match.group("at") or ""
    if hour > 24 or (sep == ":" and not mark):
        return match.group(0)  # already H:MM; judge_figures reads it
    if sep == "." and not mark and not (at and not _UNIT_AFTER.match(match.string, match.end())):
        return match.group(0)  # 7.30 alone is a number; "at 7.30" is a time
    if not sep and not mark and not match.group("oclock"):
        return match.group(0)
    if mark and hour > 12:
        mark = None  # "19:30 pm": the 24-hour figure says it already
    return at + _clock(hour, minute, mark)


def spell_out_times(text: str, numbers: bool = True) -> str:
    """Time phrases as ``H:MM`` (see the module doc); number words are spelled out on the way (with
    ``numbers``)."""
    text = _WORD_TIME.sub(_word_time, text)
    if numbers:
        text = spell_out_numbers(text)
    text = _NAMED.sub(lambda m: "12:00" if m.group("noon") else "0:00", text)
    text = _PAST_TO.sub(_past_to, text)
    return _CLOCK.sub(_clock_time, text)


def normalise(text: str, numbers: bool = True) -> str:
    """A reply (or, without ``numbers``, a correct answer: its "for two" is no figure asked) as the judge
    reads it."""
    return durations_in_days(spell_out_times(plain(text), numbers))
