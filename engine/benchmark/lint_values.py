"""Values and words in a benchmark's text, for the prose-change lint (``lint_prose.py``): the values a text
states, which of them it says as the old value, and the content words that name what it is about.

Values are compared as values: figures with their unit or currency in any notation (a rate with its
denominator: "£25 a month"), dates (an ordinal "the 14th" as a day of the month, a date template as its
offset), times, weekdays, counts of a thing ("65 people"), and names (capitalised words inside a sentence).
The figures come from the rules judge's parser (``engine/models/judge_figures.py``), number words from
``engine/models/judge_text.py``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace
from functools import lru_cache

from engine.models.judge_figures import find_figures, key_words, weekdays
from engine.models.judge_text import spell_out_numbers

_TEMPLATE = re.compile(r"\{\{\s*(TODAY|FUTURE|PAST)\s*(?::\s*(\d+)\s*:\s*(\w+))?\s*\}\}")
_TEMPLATE_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}  # {{FUTURE:2:weeks}} is 14 days on
_ORDINAL = re.compile(r"(?:st|nd|rd|th)\b")
_UNIT_WORD = re.compile(r"[\s-]?([a-z]{3,})\b")
_NAME = re.compile(r"(?<![\w'’])[A-ZÀ-ÖØ-Þ][\w'’&.-]*(?:\s+(?:&\s+)?[A-ZÀ-ÖØ-Þ][\w'’&.-]*)*")
_ONE = re.compile(  # "one puff", not "the one", "one of", "one more", "one day"
    r"(?<!\bthe )(?<!\bno )(?<!\bany )(?<!\bevery )\bone(?=\s+(?!(?:of|more|less|day|time|thing|way|other|last"
    r"|another|hand|side|who|that|which)\b)[a-z]{3,}\b)"
)
_OLD_BEFORE = re.compile(
    r"(?:\bfrom|\binstead of|\brather than|\bnot|\bno longer|\bused to(?: be| cost)?|\bpreviously|\boriginally"
    r"|\bat first|\bfirst (?:said|told|quoted)|\bhad (?:been|said|quoted)|\bquoted(?: us| me)?|\bbudgeted"
    r"|\bplanned on|\bexpected|\(\s*was|\bthe old|\bwas)\s+(?:(?:the|a|an|only|just|about|around|on|at|for)\s+)*$",
    re.IGNORECASE,
)
_OLD_AFTER = re.compile(
    r"^[\s,]*(?:(?:was|were|is|as)\s+)?(?:before|earlier|originally|at first|previously|back then|last time"
    r"|in the (?:first|old) quote|first)\b|^\s*(?:→|->|=>)",
    re.IGNORECASE,
)
_FROM_TO = re.compile(r"^\s*(?:to|until|till|→|->|=>)\b|^\s*(?:→|->|=>)", re.IGNORECASE)
_PLACEHOLDER = re.compile(  # a fact waiting for its value: a new value is a change even without a word of it
    r"\bnot (?:\w+ )?yet\b|\bt\.?b\.?[cd]\.?\b|\bto be (?:decided|confirmed|booked|announced|chosen|agreed)\b"
    r"|\bundecided\b|\bunknown\b|\bpending\b|\bno \w+ yet\b|\?",
    re.IGNORECASE,
)
_META = frozenset(  # words that say a change or a unit, never what changed
    "now new instead tell told say said ask asked mention assistant sheet fact update updated change changed "
    "please also again just really still actually today yesterday tomorrow move moved moving switch switched "
    "cancel cancelled canceled drop dropped went gone goes turn turned turns correct correction rose fell "
    "rise raise raised longer anymore decided decide wrong mistake misremembered first down "
    "eur euro euros usd dollar dollars gbp pound pounds quid bucks chf km kg mg iu cm mm ml lb lbs sqm".split()
)
_STOPS = frozenset(  # words after a number that are no unit of it
    "and or to by for the a an of in on at per each from with now then instead too more less ago already "
    "not but so is are was were this that these those all total extra only just again".split()
)
_SYNONYMS = {"price": "cost", "prices": "cost", "priced": "cost", "costs": "cost", "costing": "cost"}
_MONTHS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr "
    "jun jul aug sep sept oct nov dec".split()
)
_WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mon tue tues wed thu thur thurs fri sat sun".split()
)
_NOT_NAMES = frozenset(  # capitalised words that name nothing (a wrapped line's first word, a directive)
    "i i'm i'd i'll i've ok co the a an this that these those it it's its we we're our you your he she his her "
    "they their there here and but so or then if when while after before also just my me say tell ask add "
    "edit mention day days dear hi hello thanks".split()
)
_LIGHT = frozenset(  # words too light to tell one fact from another
    "out off over back away get got take took make made put let keep want need see look come going thing "
    "things lot bit way also even still yet after before since until during above below between through "
    "across near far very much many more most less least some other another such own same than too can "
    "could will would should might must shall under into onto within without per via plus minus together "
    "current currently usual usually really quite".split()
)


@dataclass(frozen=True)
class Value:
    """A value a text states: ``keys`` compare it, ``kind`` says what it measures (a currency, a unit, "date",
    "time", "weekday", "name", "w:<counted word>", "" for a bare number)."""

    keys: frozenset[str]
    kind: str
    start: int
    end: int
    amount: float | None = None
    old: bool = False


def stem(word: str) -> str:
    """A content word folded for comparison, cut to five letters: a plural made singular, -ing and -ed off
    ("booked" book, "running" run, "baking" bake), "price" as "cost"."""
    w = word.lower().replace("’", "'").removesuffix("'s")
    w = _SYNONYMS.get(w, w)
    for suffix in ("ings", "ing", "ed"):
        if len(w) > len(suffix) + 2 and w.endswith(suffix):
            w = w[: -len(suffix)]
            if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
                w = w[:-1]  # "planned", "swimming"
            elif len(w) == 3 and w[-1] not in "aeiouwxy" and w[-2] in "aeiou":
                w += "e"  # "moved", "baking"
            return w[:5]
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif re.search(r"(?:s|x|z|ch|sh)es$", w):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    return w[:5]


_META_STEMS = frozenset(stem(w) for w in _META)  # words that say a change, not what changed


def content_stems(text: str) -> set[str]:
    """The stems of a text's content words: no stop words nor values (months, weekdays)."""
    return set(_content_stems(text))


@lru_cache(maxsize=16384)
def _content_stems(text: str) -> frozenset[str]:
    words = {w for part in key_words(text) for w in part.split("-") if len(w) > 2}
    plain = words - _MONTHS - _WEEKDAYS - _LIGHT
    return frozenset(stem(w) for w in plain) - _META_STEMS


def without_figures(text: str, values: list[Value], offset: int = 0) -> str:
    """``text`` with its figures blanked (names and counted things kept): "£400 a month" says no subject,
    "Spotify" and "50 guests" do."""
    chars = list(text)
    for value in values:
        if value.kind != "name" and not value.kind.startswith("w:"):  # "50 guests" keeps its guests
            chars[value.start - offset : value.end - offset] = " " * (value.end - value.start)
    return "".join(chars)


def spell_out(text: str) -> str:
    """Number words as digits ("five hundred" → 500), "one" too before a noun ("one puff" → 1 puff)."""
    return spell_out_numbers(_ONE.sub("1", text))


def mask_templates(text: str) -> tuple[str, list[Value]]:
    """The text with each date template blanked out (same length), and the templates as date values."""
    values: list[Value] = []
    for match in _TEMPLATE.finditer(text):
        kind, number, unit = match.groups()
        days = (
            0
            if kind == "TODAY"
            else int(number or 0) * _TEMPLATE_DAYS.get((unit or "").lower().rstrip("s"), 1)
        )
        values.append(Value(frozenset({f"tpl:{-days if kind == 'PAST' else days}"}), "date", *match.span()))
    return _TEMPLATE.sub(lambda m: " " * len(m.group(0)), text), values


def values_in(text: str, skip_names: frozenset[str] = frozenset(), fact: bool = False) -> list[Value]:
    """Every value a text (numbers spelled out) states, in order, old ones marked; in a ``fact``'s text a
    name may follow a dash or a colon ("Race shoes — Nike Pegasus")."""
    text, found = mask_templates(text)
    figures = find_figures(text)
    for figure in figures:
        kind, keys, end = figure.shape, set(figure.keys), figure.end
        if figure.per and kind:
            kind += "/" + figure.per  # "£25 a month", "€130 a night"
        if kind == "date":
            keys |= {f"day:{int(k[-2:])}" for k in figure.keys if k.startswith("date:")}
        elif (
            not kind and _ORDINAL.match(text, figure.end) and figure.amounts and 1 <= figure.amounts[0] <= 31
        ):
            kind, keys = "date", {f"day:{int(figure.amounts[0])}"}  # "the 14th"
        elif (
            not kind and (word := _UNIT_WORD.match(text, figure.end)) and word.group(1) not in _STOPS | _META
        ):
            kind, end = "w:" + stem(word.group(1)), word.end()  # "65 people", "8 sessions"
        amount = figure.amounts[0] if figure.amounts and kind not in ("date", "time") else None
        found.append(Value(frozenset(keys), kind, figure.start, end, amount))
    for day, start, end in weekdays(text, figures):
        found.append(Value(frozenset({f"wd:{day}"}), "weekday", start, end))
    found += _names(text, found, skip_names, ".!?\n" if fact else ".!?:;—–-\n")
    found.sort(key=lambda v: v.start)
    return [_marked(text, found, k) for k in range(len(found))]


def _names(text: str, taken: list[Value], skip: frozenset[str], starts: str) -> list[Value]:
    """Capitalised words inside a sentence (not its first word, a month, a weekday or a unit) as names;
    ``starts``: the marks after which a capital starts a sentence."""
    names: list[Value] = []
    for match in _NAME.finditer(text):
        start, written = match.start(), match.group(0)
        before = text[:start].rstrip(" \"'“‘(")
        if not before or before[-1] in starts or before[-1].isdigit():
            first = re.match(r"\S+\s+(?:&\s+)?", written)  # "Booked Zipvans": the sentence's first word off
            if first is None or before[-1:].isdigit():
                continue
            start, written = start + first.end(), written[first.end() :]
        if any(v.start <= start < v.end for v in taken):
            continue
        words = {re.sub(r"['’]s$", "", w.lower()).strip(".'’&") for w in written.split()} - {"", "&"}
        words -= _MONTHS | _WEEKDAYS | skip | _NOT_NAMES
        if words:
            end = start + len(written.rstrip("."))  # "… is Birgit Sand."
            names.append(Value(frozenset(words), "name", start, end))
    return names


def _marked(text: str, values: list[Value], k: int) -> Value:
    """Value ``k`` marked old when the words around it say so: "from X to Y", "not X", "X before", "X → Y"."""
    value = values[k]
    before = text[max(values[k - 1].end if k else 0, value.start - 40) : value.start]
    after = text[value.end : value.end + 40]
    old = bool(_OLD_AFTER.match(after))  # "42 before the rise", "$42 → $55"
    if not old and (match := _OLD_BEFORE.search(before)):
        said = match.group(0).split()[0].lower()
        if said == "from":  # "from X to Y", "up from X"; not "from Monday" (when it starts)
            old = bool(_FROM_TO.match(after) or re.search(r"\b(?:up|down) from\s", before, re.IGNORECASE))
        else:
            old = said != "was"  # "it was 8.4 km" says no old value; "(was $42)" does
    return replace(value, old=True) if old else value


def placeholder(text: str) -> bool:
    """Whether a fact's text waits for its value ("Hotel — not booked yet", "Venue: TBD")."""
    return bool(_PLACEHOLDER.search(text))


def same(a: Value, b: Value) -> bool:
    """Whether two values say the same: names when every word of ``a`` is in ``b``, others by a key."""
    if a.kind == "name" or b.kind == "name":
        return a.kind == b.kind and a.keys <= b.keys
    return bool(a.keys & b.keys)


def kind_fit(a: Value, b: Value) -> float:
    """How well two values measure the same thing: 1 the same kind, less for a bare number, 0 none."""
    if a.kind == b.kind:
        return 1.0
    if a.kind.split("/")[0] == b.kind.split("/")[0] and a.kind and b.kind:
        return 0.6  # "£95" for "£22 a head"
    kinds = {a.kind, b.kind}
    if kinds == {"date", "weekday"}:
        return 0.5  # "moved to Friday" for a dated fact
    if kinds & {"date", "weekday", "time", "name"}:
        return 0.0
    return 0.3 if "" in kinds or all(k.startswith("w:") for k in kinds) else 0.0


def near(a: Value, b: Value) -> bool:
    """Two amounts of the same order (a new price is rarely ten times the old one)."""
    if a.amount is None or b.amount is None or a.amount <= 0 or b.amount <= 0:
        return False
    return abs(math.log(a.amount / b.amount)) <= math.log(3)
