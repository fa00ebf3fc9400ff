"""A transparent rules judge for the scripted persona and ``mmb-tui judge-eval`` (model name ``scripted/judge``).

Deterministic; its comment says what it found. It grades by the rules of ``engine/persona/system.md``, on the
**final figures** of a reply. The reply is read plain (``judge_text.py``: markup dropped, number words and
time phrases as digits), the correct answer is cut into parts (at commas, semicolons and "and"; a
parenthesis is context, never required); a part with figures needs all of them in the reply
(``judge_figures.py`` reads any format: "half past seven" is 19:30, "Tues 3 March" is Tuesday, March 3rd,
"US$5,150" is $5,150), a part of words half of its key words and no other name in place of one of its names
(``judge_words.py``: "the Madrid office" is no "Lisbon office"). Parts of words count only when the answer has
no figures or the question asks two things ("…, and how much?"); a part holding both is cut in two when the
question asks more things than the answer has parts ("When and where?" — "19:30 at the Lisbon office").
Then, as a careful human grades:

- a total shown as its parts counts ("$5,100 plus $300 delivery" for $5,400), and a product as its factors
  ("5 by 4 m" for 5 × 4 m, 20 m²) or the other way round;
- the steps toward the right figure are no competing figures (``judge_steps.py``): operands of shown working
  ("25 m² × $55 = $1,375", "3 nights at 120 each comes to 360"), the lines of a breakdown ending in its
  total, partial totals, factors, percentages applied, a part said to be included ("$2,190 including the $70
  insurance"); nor is a rate or unit price beside a total ("$70 a metre"), or a value of another time marked
  as such ("was 42, now 55"; for a question about the past, "later corrected to $1,100");
- a hedge between the right figure and another ("either 55 or 50 g", "$200–$240") fails that part, and so
  does a part of words said as one of two ("the RAV4 or the CX-5");
- any other final figure of the same kind competes and fails a one-part answer: a figure offered as an
  alternative ("or $4,800 if you collect it") is never a step, and the right figure used as a step toward
  another final figure ("$4,090 + $300 labour = $4,390") is not the answer;
- for "when" or "which day", the weekday of the right date names it ("on the Tuesday" for Tuesday,
  10 March) when the reply names no other day or date, and so does its day of the month ("on Friday the 14th");
- non-answers (``judge_nonanswers.py``): the right figure offered only as a question after an honest "not
  told" is not knowing (0, flagged for a second attempt); a list of the options where a decision was asked
  scores 0; a "you never told me" answer scores 10 for an honest "not told" with no figure or guess offered
  for it (figures of other things, said as such or only asked about, are fine), else 0.
Scores are proportional to the parts right (3 of 4 → 7.5), rounded to halves; one part scores 0 or 10.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field, replace

from engine.models.judge_figures import (
    Clauses,
    Figure,
    addends,
    close,
    compatible,
    find_figures,
    key_words,
    number_key,
    weekdays,
)
from engine.models.judge_nonanswers import DONT_KNOW, VOID, never_told, not_knowing, undecided
from engine.models.judge_steps import Steps, alternative, roundings
from engine.models.judge_text import normalise
from engine.models.judge_words import words_stated
from engine.models.judge_working import Working, find_workings

_HEDGE = re.compile(
    r"\bor\b(?!\s+so\b)|\beither\b|\bmaybe\b|\bperhaps\b|\bpossibly\b|\bnot sure\b|\bunsure\b|\bmight\b"
    r"|^\s*[–-]\s*$",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|had|used to|before|previously|previous|originally|original|first|initially|earlier|old|"
    r"from|would have|would've)\b",
    re.IGNORECASE,
)
_LATER = re.compile(
    r"\b(?:now|later|new|newer|corrected|changed|update|updated|moved|went up|rose|raised|increased|dropped|then|"
    r"currently|final|finally|after)\b",
    re.IGNORECASE,
)
_ASKS_PAST = re.compile(r"\b(?:before|first|original\w*|used to|previous\w*|earlier|initial\w*)\b", re.I)
_TWO_QUESTIONS = re.compile(r"\band\s+(?:\w+\s+){0,2}(?:what|how|which|when|where|who|whose)\b", re.I)
_ASKS = re.compile(r"\b(?:what|how|which|when|where|who|whose)\b", re.IGNORECASE)
_SEPARATOR = re.compile(r";|,(?!\d)|\band\b", re.IGNORECASE)
_PARENS = re.compile(r"\([^)]*\)")
_NEAR = 60  # characters around a figure searched for a time marker
_MAX_FIGURES = 200  # figures of a reply looked at: a long reply stays fast
_WHEN = re.compile(r"\bwhen\b|\b(?:which|what)\s+day\b", re.IGNORECASE)


@dataclass
class Verdict:
    """A grade: ``score`` 0-10, ``dont_know`` when the reply says it does not know (worth a second
    attempt), ``comment`` what the judge found."""

    score: float
    dont_know: bool
    comment: str


@dataclass
class _Part:
    text: str
    figures: list[Figure] = field(default_factory=list)
    words: list[str] = field(default_factory=list)


def _parts(core: str, figures: list[Figure], question: str) -> list[_Part]:
    """The correct answer cut at separators that are not inside a figure."""
    asked = set(key_words(question))
    cuts = [m for m in _SEPARATOR.finditer(core) if not any(f.start <= m.start() < f.end for f in figures)]
    bounds = [0] + [x for m in cuts for x in (m.start(), m.end())] + [len(core)]
    parts = []
    for start, end in zip(bounds[::2], bounds[1::2], strict=True):
        inside = [f for f in figures if start <= f.start < end]
        words = [w for w in key_words(core[start:end]) if w not in asked]
        if inside or words:
            parts.append(_Part(core[start:end].strip(), inside, words))
    asks = len(_ASKS.findall(question)) if _TWO_QUESTIONS.search(question) else 1
    if len(parts) < asks:  # "When and where?" — "19:30 at the Lisbon office": a time and a place
        parts = [q for p in parts for q in _split(p)]
    return parts


def _split(part: _Part) -> list[_Part]:
    """A part holding figures and words as two parts, its figures and its words."""
    if not part.figures or not part.words:
        return [part]
    return [_Part(part.text, part.figures, []), _Part(" ".join(part.words), [], part.words)]


@dataclass
class _Key:
    """The correct answer as the judge reads it."""

    parts: list[_Part]
    figures: list[Figure]  # outside parentheses: what is asked
    context: set[str]  # keys of every figure of the answer, parentheses included
    asked: set[str]  # keys of the question's own figures
    days: dict[int, str] = field(
        default_factory=dict
    )  # id of an asked date -> the weekday it is written with

    @classmethod
    def read(cls, question: str, expected: str) -> _Key:
        expected = normalise(expected, numbers=False)
        core = _PARENS.sub(lambda m: " " * len(m.group(0)), expected)
        figures = find_figures(core)
        parts = _parts(core, figures, question)
        if any(p.figures for p in parts) and not _TWO_QUESTIONS.search(question):
            parts = [p for p in parts if p.figures]  # one question: its words are context
        context = {k for f in find_figures(expected) for k in f.keys}
        asked = {k for f in find_figures(question) for k in f.keys}
        days = {
            id(f): d[0][0] for f in figures if f.shape == "date" and (d := weekdays(core[f.start : f.end]))
        }
        return cls(parts or [_Part(core, [], key_words(core))], figures, context, asked, days)


def judge(question: str, expected: str, reply: str) -> Verdict:
    """Grade ``reply`` against the correct answer ``expected`` of ``question`` (0-10, see the module doc)."""
    reply = normalise(reply)
    if VOID.search(expected):
        score, comment = never_told(question, expected, reply, set(key_words(question)))
        return Verdict(score, False, comment)
    key = _Key.read(question, expected)
    figures = _days_of_month(find_figures(reply)[:_MAX_FIGURES], key)
    if key.days and _WHEN.search(question):
        figures = _with_weekdays(reply, key, figures)
    clauses = Clauses(reply, figures)
    hits: dict[int, Figure] = {}  # id of an expected figure -> the reply figure stating it
    for wanted in key.figures:
        found = next((f for f in figures if f.same(wanted) and compatible(f, wanted)), None)
        if found is not None:
            hits[id(wanted)] = found
    notes: list[str] = []
    workings = find_workings(reply, figures)
    free = {id(f) for f in figures if not alternative(reply, f, clauses)}
    explained = _shown_as_parts(reply, key, figures, free, hits, notes)
    _products(key.figures, hits)
    settled = [f for f in figures if id(f) in {id(h) for h in hits.values()} or f.keys & key.context]
    explained |= Steps(reply, figures, workings, free, clauses).of(settled)
    explained |= roundings(reply, figures, list(hits.values()))
    if hits and not_knowing(reply, [f for f in figures if any(f.same(w) for w in key.figures)]):
        return Verdict(0.0, True, "offers the answer only as a question back: not knowing")
    if undecided(question, reply):
        return Verdict(0.0, False, "lists the options, names no decision")
    hedged, competing = _rivals(reply, question, key, figures, clauses, hits, explained, workings, notes)

    good = 0
    missing: list[str] = []
    for part in key.parts:
        if part.figures:
            ok = all(id(f) in hits and id(f) not in hedged for f in part.figures)
        else:
            ok, why = words_stated(reply, part.words, expected, question)
            if why:
                notes.append(f"'{' '.join(part.text.split())}' {why}")
        good += ok
        if not ok:
            missing.append(" ".join(part.text.split()))
    count = len(key.parts)
    if count == 1 and competing:
        good = 0
    score = 10.0 if count == 1 and good else round(20.0 * good / count) / 2
    comment = f"parts {good}/{count}"
    comment += f", missing {'; '.join(missing)}" if missing else ""
    comment += f", competing {', '.join(competing)}" if competing else ""
    comment += "".join(f", {n}" for n in dict.fromkeys(notes))
    if score == 0 and DONT_KNOW.search(reply):
        return Verdict(0.0, True, "the agent says it does not know")
    return Verdict(score, False, comment)


def _days_of_month(figures: list[Figure], key: _Key) -> list[Figure]:
    """ "Friday the 14th" names the asked date of that day, if there is one (the month goes without saying)."""
    settled = []
    for figure in figures:
        day = next((k[4:] for k in figure.keys if k.startswith("day:")), None)
        dates = {k for w in key.figures if w.shape == "date" for k in w.keys if day and k.endswith(f"-{day}")}
        settled.append(replace(figure, keys=frozenset(dates)) if dates else figure)
    return settled


def _with_weekdays(reply: str, key: _Key, figures: list[Figure]) -> list[Figure]:
    """The reply's figures and its bare weekdays as dates: the weekday of an asked date names that date
    ("on the Tuesday" for Tuesday, 10 March), another weekday is another day (a rival, a hedge, a day of
    another time like any date)."""
    days: list[Figure] = []
    for day, start, end in weekdays(reply, figures):
        keys = frozenset(k for w in key.figures if key.days.get(id(w)) == day for k in w.keys)
        days.append(Figure(keys or frozenset({f"weekday:{day}"}), "date", start, end))
    return sorted(figures + days, key=lambda f: f.start)


def _steps(workings: list[Working], settled: set[int]) -> set[int]:
    """Operands of shown working whose result is settled (stated or explained), step by step back."""
    steps: set[int] = set()
    grew = True
    while grew:
        grew = False
        for working in workings:
            if id(working.result) in settled or id(working.result) in steps:
                new = {id(f) for f in working.operands} - steps - settled
                steps |= new
                grew = grew or bool(new)
    return steps


def _shown_as_parts(
    reply: str, key: _Key, figures: list[Figure], free: set[int], hits: dict[int, Figure], notes: list[str]
) -> set[int]:
    """An asked total missing from the reply but shown as all its parts becomes stated; the ids of those
    parts."""
    explained: set[int] = set()
    candidates = [t for t in addends(reply, figures) if all(id(f) in free for f in t[0])]
    for wanted in key.figures:
        if not wanted.amounts or id(wanted) in hits:
            continue
        total = wanted.amounts[0]
        same_kind = [
            t for t in candidates if all(compatible(f, wanted) and not (f.keys & key.asked) for f in t[0])
        ]
        if len(same_kind) > 1 and close(sum(v for _, v in same_kind), total):
            hits[id(wanted)] = same_kind[0][0][0]
            explained.update(id(f) for group, _ in same_kind for f in group)
            notes.append(f"{number_key(total)} shown as its parts")
    return explained


def _rivals(
    reply: str,
    question: str,
    key: _Key,
    figures: list[Figure],
    clauses: Clauses,
    hits: dict[int, Figure],
    explained: set[int],
    workings: list[Working],
    notes: list[str],
) -> tuple[set[int], list[str]]:
    """Other figures of the kind asked: (ids of expected figures hedged, texts of competing figures).
    A figure of another time, said as such, neither hedges nor competes, nor do the steps of working that
    leads to one."""
    asked_time, other_time = ("past", "later") if _ASKS_PAST.search(question) else ("later", "past")
    hedged: set[int] = set()
    competing: list[Figure] = []
    other: set[int] = set()  # figures of another time, said as such
    stated = {id(f) for f in hits.values()}
    for figure in figures:
        if id(figure) in stated or id(figure) in explained or figure.keys & key.asked:
            continue
        rivals = [w for w in key.figures if id(w) in hits and figure.shape == hits[id(w)].shape]
        shaped = rivals or [w for w in key.figures if figure.shape == w.shape]
        if not shaped:
            continue
        for wanted in rivals:
            said = hits[id(wanted)]
            left, right = (said, figure) if said.start < figure.start else (figure, said)
            before = reply[max(0, left.start - 10) : left.start]
            if _HEDGE.search(reply[left.end : right.start]) or re.search(r"\beither\b", before, re.I):
                hedged.add(id(wanted))
                notes.append(f"hedges between {_text(reply, said)} and {_text(reply, figure)}")
        if figure.keys & key.context or any(id(w) in hedged for w in rivals):
            continue
        if not any(bool(figure.per) == bool(w.per or (id(w) in hits and hits[id(w)].per)) for w in shaped):
            continue  # a unit price beside a total, or a total beside a unit price: another quantity
        when = _marked(reply, figure, clauses)
        if when == other_time:
            other.add(id(figure))
        elif when != asked_time and any(_marked(reply, hits[id(w)], clauses) == asked_time for w in rivals):
            continue
        else:
            competing.append(figure)
    steps = _steps(workings, other)
    return hedged, [_text(reply, f) for f in competing if id(f) not in steps]


def _products(wanted: list[Figure], hits: dict[int, Figure]) -> None:
    """'5 × 4 m, 20 m²': the factors state the product, the product states its factors."""
    numbers = [f for f in wanted if f.amounts]
    for a, b, p in itertools.permutations(numbers, 3):
        if id(a) < id(b) and close(a.amounts[0] * b.amounts[0], p.amounts[0]):
            if id(a) in hits and id(b) in hits and id(p) not in hits:
                hits[id(p)] = hits[id(a)]
            if id(p) in hits:
                hits.setdefault(id(a), hits[id(p)])
                hits.setdefault(id(b), hits[id(p)])


def _marked(text: str, figure: Figure, clauses: Clauses) -> str | None:
    """'past' or 'later' when the figure's clause sets it at another time (the nearest marker wins)."""
    start, end = clauses.around(figure)
    if text[max(0, start - 2) : start].strip() == "(":  # "from $260 each ($520)": the host's clause
        start = clauses.around(replace(figure, start=start - 2, end=start - 1))[0]
    start, end = max(start, figure.start - _NEAR), min(end, figure.end + _NEAR)
    best: tuple[int, str] | None = None
    for kind, pattern in (("past", _PAST), ("later", _LATER)):
        for m in pattern.finditer(text, start, end):
            distance = figure.start - m.end() if m.end() <= figure.start else m.start() - figure.end + 20
            if best is None or distance < best[0]:
                best = (distance, kind)
    return best[1] if best else None


def _text(text: str, figure: Figure) -> str:
    return text[figure.start : figure.end].strip()
