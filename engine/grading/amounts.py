"""Numbers as people write them, each reduced to the key a premise is matched on (``n:<number>``), and the
currency beside them (``c:<code>``).

- ``5,100``, ``5.100``, ``5 100 €``, ``5'100``, ``5.1k``, ``5 grand``, ``1.2 million``, ``$1.2m``: read by
  price-parser (which separator is the decimal one), the multiplier applied; a lone group of three digits after
  a point or a comma keeps its other reading too (``1,740`` may be 1.74);
- the currency written before or after a number (a code, a symbol or a name from price-parser's table of the
  world's currencies: ``EUR``, ``€``, ``euros``; ``$``, ``USD``, ``dollars``, ``bucks``) is its unit, never a
  name; so is a unit (``m²``, ``km``);
- number words: ``six``, ``twenty-five``, ``five thousand one hundred``, ``a dozen``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache

from price_parser import parse_price
from price_parser._currencies import CURRENCIES  # price-parser's own table: codes, symbols, names


@dataclass(frozen=True)
class Found:
    """A value in a text: as written (``label``), the key it is matched on (and other readings), its span."""

    label: str
    key: str
    start: int
    end: int
    kind: str  # "amount" (a number with a currency), "number", "date", "time", "day", "currency"
    alts: tuple[str, ...] = ()  # other keys that state it (the other reading of "5.100")
    amount: Decimal | None = None
    unit: str = ""  # an amount's currency code, or a number's unit ("m2", "km")

    @property
    def keys(self) -> tuple[str, ...]:
        return (self.key, *self.alts)


def canonical(value: Decimal) -> str:
    """A number as its key writes it: ``5100``, ``4.5``."""
    text = format(value.normalize(), "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


# ---- currencies -------------------------------------------------------------------------------------

_EVERYDAY = {  # the names people say, beside the table's full ones ("Swiss francs", "US dollars")
    **dict.fromkeys(["dollar", "dollars", "buck", "bucks"], "USD"),
    **dict.fromkeys(["pound", "pounds", "quid"], "GBP"),
    **dict.fromkeys(["franc", "francs"], "CHF"),
    **dict.fromkeys(["yen"], "JPY"),
    **dict.fromkeys(["yuan", "renminbi"], "CNY"),
    **dict.fromkeys(["rupee", "rupees"], "INR"),
    **dict.fromkeys(["krone", "kroner"], "DKK"),
    **dict.fromkeys(["krona", "kronor"], "SEK"),
    **dict.fromkeys(["zloty", "zlotys", "zlotych"], "PLN"),
    **dict.fromkeys(["ruble", "rubles", "rouble", "roubles"], "RUB"),
    **dict.fromkeys(["peso", "pesos"], "MXN"),
}
_PREFERRED = ("USD", "EUR", "GBP", "JPY", "CHF", "CNY", "INR", "CAD", "AUD", "SEK", "DKK", "NOK", "PLN")
_SHORT_WORDS = frozenset(
    {"kr", "rs", "rp", "zł", "kč"}
)  # the two-letter currency words kept (not km, ft, g…)


def _rank(code: str) -> tuple[int, str]:
    return (_PREFERRED.index(code) if code in _PREFERRED else len(_PREFERRED), code)


@lru_cache(maxsize=1)
def _currency_forms() -> dict[str, str]:
    """Every symbol and name of price-parser's table, lowercased, to one code ("$" → USD, "kr" → DKK)."""
    codes: dict[str, set[str]] = {}
    for code, info in CURRENCIES.items():
        for form in {info["s"], info["sn"], *info.get("sn2", []), info["n"], info["np"]}:
            form = form.strip().lower()
            letters = form.rstrip(".").replace(" ", "")
            if (
                not form
                or form == "-"
                or (letters.isalpha() and len(letters) <= 2 and form not in _SHORT_WORDS)
            ):
                continue  # single letters and two-letter words are units ("km", "g") or initials
            codes.setdefault(form, set()).add(code)
    forms = {form: min(found, key=_rank) for form, found in codes.items()}
    return forms | _EVERYDAY


def currency_code(token: str) -> str:
    """The code of a currency as written (``EUR``, ``€``, ``euros``, ``US$``, ``bucks``); "" when none."""
    token = token.strip()
    if token.endswith(".") and (token[:-1] in CURRENCIES or token[:-1].lower() in _currency_forms()):
        token = token[:-1]  # "5,100 EUR." ends a sentence
    if token in CURRENCIES:
        return token  # an ISO code, as written: upper case ("ALL" is a code, "all" a word)
    forms = _currency_forms()
    lower = token.lower()
    if lower in forms:
        return forms[lower]
    if lower.endswith("$") and lower[:-1].isalpha() and len(lower) <= 4:
        return "USD" if lower == "us$" else forms.get(lower, "")
    return ""


@lru_cache(maxsize=512)
def family(code: str) -> str:
    """The currency a code is matched as: those written with the same sign are one (``AUD``, ``CAD``: ``$``,
    USD; ``DKK``, ``NOK``: ``kr``, SEK), so "300 kr" tells "DKK 300"."""
    sign = CURRENCIES[code]["sn"].strip().lower() if code in CURRENCIES else ""
    return _currency_forms().get(sign, code)


_BEFORE = re.compile(r"(?:^|(?<=[\s(~≈/]))(?P<cur>[^\s\d(~≈/]{1,12})[ \u00a0]?$")
_AFTER_WORDS = re.compile(r"[ \u00a0]?(?P<two>(?P<one>[^\W\d_]+\.?)(?: [^\W\d_]+)?)")
_AFTER_SYMBOL = re.compile(r"[ \u00a0]?(?P<cur>[^\w\s.,;:!?()\[\]'\"/-]{1,3})")


def currency_before(text: str, start: int) -> tuple[str, int]:
    """The currency written right before ``start`` and where it begins; ("", start) when none."""
    m = _BEFORE.search(text, max(0, start - 14), start)
    if m is None:
        return "", start
    code = currency_code(m.group("cur"))
    return (family(code), m.start("cur")) if code else ("", start)


def currency_after(text: str, end: int) -> tuple[str, int]:
    """The currency written right after ``end`` and where it ends; ("", end) when none."""
    m = _AFTER_WORDS.match(text, end)
    if m is not None:
        for group in ("two", "one"):
            word = m.group(group)
            if code := currency_code(word):
                return family(code), m.end(group) - (word.endswith(".") and currency_code(word[:-1]) == code)
    m = _AFTER_SYMBOL.match(text, end)
    code = currency_code(m.group("cur")) if m else ""
    return (family(code), m.end("cur")) if m and code else ("", end)


# ---- amounts and numbers ----------------------------------------------------------------------------

_AMOUNT = re.compile(
    r"(?<![\d.,'’])"
    r"(?P<num>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d{1,3}(?:['’]\d{3})+(?:[.,]\d+)?"
    r"|\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?=[ \u00a0]?[^\W\d_$€£¥₹]*[$€£¥₹]|[ \u00a0]?(?:[A-Z]{3}|eur|euro|dollar)\w*)"
    r"|\d+(?:[.,]\d+)?)(?![\d])(?:,-)?"
)
_MULTIPLIER = re.compile(r"[ \u00a0]?(?P<m>k|thousand|grand|million|mio|mn|bn|billion)\b", re.IGNORECASE)
_MILLIONS = re.compile(r"(?P<m>m)\b", re.IGNORECASE)  # "$1.2m": millions only beside a currency
_SCALE = {"k": 1000, "thousand": 1000, "grand": 1000, "million": 10**6, "mio": 10**6, "mn": 10**6, "m": 10**6}
_SCALE |= {"bn": 10**9, "billion": 10**9}
_UNITS = {
    **dict.fromkeys(["m²", "m2", "sqm", "sq m", "sq. m", "square metres", "square meters"], "m2"),
    **dict.fromkeys(["km", "kilometres", "kilometers"], "km"),
    **dict.fromkeys(["m", "metres", "meters", "metre", "meter"], "m"),
    **dict.fromkeys(["cm"], "cm"),
    **dict.fromkeys(["kg", "kilos", "kilograms", "kilo"], "kg"),
    **dict.fromkeys(["g", "grams", "gram"], "g"),
    **dict.fromkeys(["mg"], "mg"),
    **dict.fromkeys(["l", "litres", "liters", "litre", "liter"], "l"),
    **dict.fromkeys(["ml"], "ml"),
    **dict.fromkeys(["iu"], "iu"),
    **dict.fromkeys(["%", "percent", "per cent"], "%"),
    **dict.fromkeys(["h", "hours", "hour", "hrs"], "h"),
    **dict.fromkeys(["min", "mins", "minutes", "minute"], "min"),
    **dict.fromkeys(["nights", "night"], "night"),
    **dict.fromkeys(["days", "day"], "day"),
}
UNIT = re.compile(
    r"[ \u00a0]?(?P<unit>"
    + "|".join(re.escape(u) for u in sorted(_UNITS, key=len, reverse=True))
    + r")(?!\w)",
    re.IGNORECASE,
)
_AMBIGUOUS_GROUP = re.compile(r"\d{1,3}[.,]\d{3}")  # 5.100, 1,740: thousands, or a decimal


def _readings(raw: str) -> list[Decimal]:
    """What a written number may mean, the likeliest first (price-parser decides the separators)."""
    amount = parse_price(raw.replace("\u202f", " ").replace("\u00a0", " ")).amount
    readings = [amount] if amount is not None else []
    if _AMBIGUOUS_GROUP.fullmatch(raw):
        readings.append(Decimal(raw.replace(",", ".")))
        readings.append(Decimal(raw.replace(",", "").replace(".", "")))
    return list(dict.fromkeys(readings))


def _letters_before(text: str, start: int) -> str:
    end = start
    while start > 0 and text[start - 1].isalpha():
        start -= 1
    return text[start:end]


def amounts(text: str, taken: list[tuple[int, int]]) -> list[Found]:
    """Every number written in digits outside ``taken`` spans, with its multiplier, currency or unit."""
    found: list[Found] = []
    for m in _AMOUNT.finditer(text):
        start, end = m.start(), m.end()
        if any(s <= start < e for s, e in taken):
            continue
        glued = _letters_before(text, start)
        if glued and not currency_code(glued):
            continue  # "A4", "v2": a name, not a figure
        readings = _readings(m.group("num"))
        if not readings:
            continue
        code, begin = currency_before(text, start)
        scale = _MULTIPLIER.match(text, end) or (_MILLIONS.match(text, end) if code else None)
        if scale is not None:
            readings = [r * _SCALE[scale.group("m").lower()] for r in readings]
            end = scale.end()
        unit = ""
        if not code:
            code, end = currency_after(text, end)
        if not code and (u := UNIT.match(text, end)):
            unit, end = _UNITS[u.group("unit").lower()], u.end()
        keys = [f"n:{canonical(r)}" for r in readings]
        kind = "amount" if code else "number"
        found.append(
            Found(text[begin:end], keys[0], begin, end, kind, tuple(keys[1:]), readings[0], code or unit)
        )
        if code:
            found.append(Found(code, f"c:{code}", begin, end, "currency"))
    return found


_SMALL = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million"
).split()
_NUMBER_WORD = "(?:" + "|".join(_SMALL) + ")"
_WORD_RUN = re.compile(
    rf"\b(?:half\s+a\s+dozen|a\s+dozen|(?:a\s+(?=hundred|thousand))?{_NUMBER_WORD}"
    rf"(?:[\s-]+(?:and\s+)?{_NUMBER_WORD})*(?:\s+dozen)?)\b",
    re.IGNORECASE,
)


def _kind(word: str) -> str:
    index = _SMALL.index(word)
    return "unit" if index < 10 else "teen" if index < 20 else "tens" if index < 28 else word


_FITS = {  # which word may follow which inside one number ("twenty five", "one hundred and fifty")
    "unit": {"hundred", "thousand", "million"},
    "teen": {"hundred", "thousand", "million"},
    "tens": {"unit", "thousand", "million"},
    "hundred": {"unit", "teen", "tens", "thousand", "million"},
    "thousand": {"unit", "teen", "tens", "hundred"},
    "million": {"unit", "teen", "tens", "hundred", "thousand"},
}


def _spoken_numbers(run: str, offset: int) -> list[tuple[int, int, int]]:
    """The numbers a run of number words says, with their spans: "five and six" is two, "one hundred and
    fifty" one."""
    numbers: list[tuple[int, int, int]] = []
    total = current = 0
    start = end = -1
    last = ""
    for m in re.finditer(r"[a-z]+", run.lower()):
        word = m.group(0)
        if word in ("and", "a"):
            continue
        kind = _kind(word)
        if last and kind not in _FITS[last]:
            numbers.append((total + current, offset + start, offset + end))
            total = current = 0
            last = ""
        if not last:
            start = m.start()
        index = _SMALL.index(word)
        if kind in ("unit", "teen"):
            current += index
        elif kind == "tens":
            current += 10 * (index - 18)
        elif kind == "hundred":
            current = max(current, 1) * 100
        else:
            total += max(current, 1) * (1000 if kind == "thousand" else 10**6)
            current = 0
        last, end = kind, m.end()
    if last:
        numbers.append((total + current, offset + start, offset + end))
    return numbers


def number_words(text: str) -> list[Found]:
    """Numbers written as words: ``six``, ``twenty-five``, ``five thousand one hundred``, ``a dozen``, with the
    currency said after them (``five hundred euros``)."""
    found: list[Found] = []
    for m in _WORD_RUN.finditer(text):
        run = m.group(0)
        dozens = run.lower().endswith("dozen")
        head = re.sub(r"\s*dozen$", "", run, flags=re.IGNORECASE)
        if head.lower() in ("a", "half a"):
            numbers = [(Decimal(1) if head.lower() == "a" else Decimal("0.5"), m.start(), m.end())]
        else:
            numbers = [(Decimal(value), start, end) for value, start, end in _spoken_numbers(head, m.start())]
        for value, start, end in numbers:
            amount = value * (12 if dozens else 1)
            end = m.end() if dozens else end
            code, end = currency_after(text, end)
            key = f"n:{canonical(amount)}"
            found.append(
                Found(text[start:end], key, start, end, "amount" if code else "number", (), amount, code)
            )
    return found
