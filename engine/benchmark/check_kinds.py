"""A check's kind (RECALL, AGG, NEG, VOID, HIST, SERIES: AGENTS.md "Traps and checks"): the ``[TYPE]`` tags of
its ``❓`` line where it has them, else inferred from its question and correct answer.

A benchmark written the seed's way has no tags; its per-type figures would vanish. ``kinds_of`` keeps the
declared tags authoritative and infers the rest, marked as inferred (``AGG~``) wherever a kind is shown.
The inference reads the words an author uses for each kind:

- **VOID**: the correct answer says it was never told ("you never told me", "there's no record", "not
  mentioned"); a VOID check is nothing else.
- **HIST**: the question asks for a value of before a change ("originally", "at first", "used to", "the old
  price", "before the price rise" with a past tense).
- **SERIES**: the correct answer lists dated values (three dated items, or two when the question asks for a
  log: "with their dates", "readings", "oldest first").
- **AGG**: the question asks for a total ("total", "in all", "altogether", "add up", "the full cost"; "together",
  "the whole", "so far", "over these two weeks" with "how much"/"how many"/a price), or the correct answer
  shows a sum (``5,100 + 350``).
- **NEG**: the question or the answer names a cancellation ("struck out", "cancelled", "no longer").
- **RECALL**: none of these.
A pure function of the text, so it can be wrong; a tag on the check line settles it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.benchmark.model import CHECK_TYPES, Check

INFERRED_MARK = "~"  # after a kind that was inferred, not declared: ``AGG~``

_VOID = re.compile(
    r"(?:\b(?:never|not|nothing|nobody|no one)|n't)\W+(?!to\b)(?:\w+\W+){0,3}?"
    r"(?:told|tell|mention\w*|said|say|gave|give|given|shar\w*|record\w*|discuss\w*|specif\w*|provid\w*|"
    r"stat\w*|brought up|came up|noted|logged|known)\b"
    r"|\bno (?:record|mention|information|info|data|details?|such)\b|\bunknown\b"
    r"|\byou (?:never did|never have|didn't|did not|haven't|have not)\s*(?:[.!,;—–-]|$)",
    re.IGNORECASE,
)
_LEADING_NO = re.compile(r"^\W*(?:no|nope|nothing|none|not known)\b[\s,.!:;—–-]*", re.IGNORECASE)
_FIRST_SENTENCE = re.compile(r"[.;!?](?:\s|$)")

_HIST_WORDS = re.compile(
    r"\b(?:originally|original|initially|initial|at first|in the beginning|at the start|to begin with|"
    r"previously|previous|formerly|used to|(?:did|didn't)\b.{0,40}\buse to|"
    r"first (?:said|say|told|tell|gave|give|quoted|planned|estimated?|price|quote|budget\w*|plan|figure|"
    r"booking|booked|version|offer)|"
    r"(?:old|earlier|former|prior) (?:price|rate|value|figure|amount|dose|number|plan|quote|date|time|budget|"
    r"fare|cost|estimate|address|size|dimensions?|salary|rent|fee))\b",
    re.IGNORECASE,
)
_BEFORE = re.compile(r"\bbefore\b(?P<rest>.*)$", re.IGNORECASE)
_PAST = re.compile(r"\b(?:was|were|did|had|used|paid|cost|costed|said|told|quoted|planned)\b", re.IGNORECASE)
_CHANGE = re.compile(
    r"\b(?:ris\w*|rose|rais\w*|chang\w*|correct\w*|edit\w*|updat\w*|re\w*book\w*|mov\w*|switch\w*|"
    r"increas\w*|cut|drop\w*|new|fix\w*|sync\w*|advi[cs]\w*|note|quot\w*|revis\w*|adjust\w*|reduc\w*|lower\w*|"
    r"went (?:up|down)|go(?:es)? (?:up|down)|put \w+ (?:up|down)|cancel\w*|replac\w*|swap\w*|amend\w*|"
    r"renegotiat\w*|discount\w*|upgrad\w*|downgrad\w*|reschedul\w*|postpon\w*|delay\w*|extend\w*|shorten\w*|"
    r"fell|decid\w*|decision|rebook\w*|renew\w*|hike\w*|markdown|price list|offer)\b"
    r"|^\s*(?:that|then|it changed)?\s*\??\s*$",
    re.IGNORECASE,
)

_TOTAL = re.compile(
    r"\b(?:total\w*|altogether|all together|grand total|add(?:s|ed)? up|sum|all told|all-in|all in all|"
    r"full (?:cost|price|amount)|in all(?=\s*[?,.!;]|\s*$)|how much (?:in all|overall))\b",
    re.IGNORECASE,
)
_WEAK_TOTAL = re.compile(
    r"\b(?:together|combined|overall|whole|entire|so far|to date|cumulative\w*|"
    r"(?:over|across|during|in) (?:these|those|the (?:last|past|whole)|this|the) (?:\w+ )?"
    r"(?:days?|weeks?|months?|years?|fortnight|trip|holiday|period)|"
    r"this (?:week|month|year)|since \w+)\b",
    re.IGNORECASE,
)
_QUANTITY = re.compile(
    r"\bhow (?:much|many|far|long)\b|\b(?:cost\w*|price\w*|pay|paid|spen[dt]\w*|come to|comes to|budget\w*|"
    r"estimate\w*|amount|sum|kilomet\w*|km|miles|hours|lost|gained|saved|earn\w*)\b",
    re.IGNORECASE,
)
_SHOWN_SUM = re.compile(r"\d\S*\s*(?:[^\W\d]+\s*){0,4}(?:\+|\bplus\b)\s*[$€£]?\s*\d", re.IGNORECASE)

_CANCELLED = re.compile(
    r"\b(?:cancel\w*|struck|strike (?:it |them )?out|striking|crossed (?:out|off)|scrapped|ditched|"
    r"called off|dropped(?! (?:to|by|from)\b)|removed|taken out|no longer|not any ?more|(?:doesn't|don't|didn't) count any ?more)\b",
    re.IGNORECASE,
)

_MONTH = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_WEEKDAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_DATE = re.compile(
    r"\{\{(?:TODAY|PAST:[^}]*|FUTURE:[^}]*)\}\}"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[./]\d{1,2}[./]\d{2,4}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}(?!\w)|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b"
    rf"|\b{_WEEKDAY}\b|\b(?:yesterday|today|tonight|(?:last|this|next) (?:week|month|{_WEEKDAY}))\b"
    r"|\b\d+ (?:days?|weeks?|months?) ago\b|\b(?:day|week) \d+\b"
    r"|(?-i:\b(?:January|February|March|April|May|June|July|August|September|October|November|December)\b)",
    re.IGNORECASE,
)
_WEEKDAY_ONLY = re.compile(_WEEKDAY, re.IGNORECASE)
_BETWEEN_DATES = re.compile(r"^[\s,]*(?:the\s+)?$", re.IGNORECASE)  # "Tuesday, 10 March": one date
_CONNECTOR = re.compile(r"^[\W\s]*(?:(?:and|or|then|also|plus|on|at|the)\b[\W\s]*)*$", re.IGNORECASE)
_LOG = re.compile(
    r"\b(?:readings?|measurements?|weigh-ins?|with (?:their |the |its )?dates?|dated|dates and|log(?:ged)?|"
    r"chronolog\w*|oldest|newest|in order|over time|history|each time|every time|timeline|trend|list\w*|"
    r"each (?:day|week|month|run|ride|visit))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Kinds:
    """A check's kinds and whether they were inferred (no ``[TYPE]`` tag on its line)."""

    types: tuple[str, ...]
    inferred: bool

    def shown(self) -> list[str]:
        """As a report shows them: ``["AGG~", "NEG~"]`` when inferred, the tags as written otherwise."""
        mark = INFERRED_MARK if self.inferred else ""
        return [t + mark for t in self.types]


def kinds_of(check: Check) -> Kinds:
    """The check's declared tags (authoritative), else its kinds inferred from its question and answer."""
    if check.types:
        return Kinds(tuple(check.types), inferred=False)
    return Kinds(tuple(infer_kinds(check.question, check.answer)), inferred=True)


def infer_kinds(question: str, answer: str) -> list[str]:
    """The kinds a check with this question and correct answer reads, in ``CHECK_TYPES`` order (see the
    module doc); never empty: RECALL when nothing else fits."""
    if never_told(answer):
        return ["VOID"]
    found = set()
    if _asks_history(question):
        found.add("HIST")
    if _lists_dated_values(question, answer):
        found.add("SERIES")
    if _asks_total(question, answer):
        found.add("AGG")
    if _CANCELLED.search(question) or _CANCELLED.search(answer):
        found.add("NEG")
    return [t for t in CHECK_TYPES if t in found] or ["RECALL"]


def never_told(answer: str) -> bool:
    """The correct answer's first sentence (or the one after a leading "No.") says it was never told."""
    text = answer.strip()
    return _says_not_told(text) or _says_not_told(_LEADING_NO.sub("", text, count=1))


def _says_not_told(text: str) -> bool:
    end = _FIRST_SENTENCE.search(text)
    return bool(_VOID.search(text[: end.start()] if end else text))


def _asks_history(question: str) -> bool:
    """A value of before a change: its words, or "before <a change>" asked in the past tense."""
    if _HIST_WORDS.search(question):
        return True
    before = _BEFORE.search(question)
    return bool(before and _PAST.search(question) and _CHANGE.search(before.group("rest")))


def _asks_total(question: str, answer: str) -> bool:
    """A total asked for, or a sum shown in the answer; the weaker words only with an amount asked."""
    if _TOTAL.search(question) or _SHOWN_SUM.search(answer):
        return True
    return bool(_WEAK_TOTAL.search(question) and _QUANTITY.search(question))


def _lists_dated_values(question: str, answer: str) -> bool:
    """The answer lists values each with its date: three such items, or two when the question asks for a log."""
    dates = _date_groups(answer)
    valued = 0
    for i, (_, end) in enumerate(dates):
        after = answer[end : dates[i + 1][0] if i + 1 < len(dates) else len(answer)]
        before = answer[dates[i - 1][1] if i else 0 : dates[i][0]]
        if not _CONNECTOR.match(after) or (i == 0 and not _CONNECTOR.match(before)):
            valued += 1
    needed = 2 if _LOG.search(question) else 3
    return len(dates) >= needed and valued >= len(dates) - 1 and valued >= 2


def _date_groups(text: str) -> list[tuple[int, int]]:
    """The spans of the dates in ``text``, a weekday written beside its date ("Tuesday, 10 March") counted
    once; weekdays side by side ("Monday, Wednesday") are dates of their own."""
    groups: list[tuple[int, int]] = []
    last_weekday = False
    for match in _DATE.finditer(text):
        weekday = bool(_WEEKDAY_ONLY.fullmatch(match.group(0)))
        beside = groups and _BETWEEN_DATES.match(text[groups[-1][1] : match.start()])
        if beside and weekday != last_weekday:
            groups[-1] = (groups[-1][0], match.end())
        else:
            groups.append((match.start(), match.end()))
        last_weekday = weekday
    return groups
