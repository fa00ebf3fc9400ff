"""A transparent rules judge for the scripted persona and ``mmb-tui judge-eval`` (model name ``scripted/judge``).

Deterministic; its comment says what it found. It grades by the rules of ``engine/persona/system.md``. The
correct answer is cut into parts (at commas, semicolons and "and"; a parenthesis is context, never
required); a part with figures needs all of them in the reply (``judge_figures.py`` reads any format), a
part of words needs half of its key words. Parts of words count only when the answer has no figures or the
question asks two things ("…, and how much?"). Then, as a careful human grades:

- a total shown as its parts counts ("$5,100 plus $300 delivery" for $5,400), and a product as its factors
  ("5 by 4 m" for 5 × 4 m, 20 m²) or the other way round;
- a figure beside the right one is fine when it is a part of it ("$2,190 including the $70 insurance"),
  a product of figures given, a step of working that holds and leads to a figure that is fine
  ("72 km × 3 EUR = 216 EUR", ``judge_working.py``), or a value of another time marked as such ("it was
  55 g before the vet's note"; for a question about the past, "later corrected to $1,100");
- a hedge between the right figure and another ("either 55 or 50 g", "$200–$240") fails that part, and so
  does a part of words said as one of two ("the RAV4 or the CX-5");
- any other competing figure of the same kind fails a one-part answer;
- for "when" or "which day", the weekday of the right date names it ("on the Tuesday" for Tuesday,
  10 March) when the reply names no other day or date;
- non-answers (``judge_nonanswers.py``): the right figure offered only as a question after an honest "not
  told" is not knowing (0, flagged for a second attempt); a list of the options where a decision was asked
  scores 0; a "you never told me" answer scores 10 for an honest "not told" with no figure or guess offered
  for it (figures of other things, said as such or only asked about, are fine), else 0.
Scores are proportional to the parts right (3 of 4 → 7.5), rounded to halves; one part scores 0 or 10.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from engine.models.judge_figures import (
    Clauses,
    Figure,
    addends,
    close,
    compatible,
    durations_in_days,
    find_figures,
    key_words,
    number_key,
    spell_out_numbers,
    subset_sum,
    weekdays,
)
from engine.models.judge_nonanswers import DONT_KNOW, VOID, never_told, not_knowing, undecided
from engine.models.judge_working import Working, find_workings

_HEDGE = re.compile(
    r"\bor\b(?!\s+so\b)|\beither\b|\bmaybe\b|\bperhaps\b|\bpossibly\b|\bnot sure\b|\bunsure\b|\bmight\b"
    r"|^\s*[–-]\s*$",
    re.IGNORECASE,
)
_PAST = re.compile(
    r"\b(?:was|were|had|used to|before|previously|previous|originally|original|first|initially|earlier|old|"
    r"from)\b",
    re.IGNORECASE,
)
_LATER = re.compile(
    r"\b(?:now|later|new|newer|corrected|changed|update|updated|moved|went up|rose|raised|increased|dropped|then|"
    r"currently|final|finally|after)\b",
    re.IGNORECASE,
)
_ASKS_PAST = re.compile(r"\b(?:before|first|original\w*|used to|previous\w*|earlier|initial\w*)\b", re.I)
_TWO_QUESTIONS = re.compile(r"\band\s+(?:\w+\s+){0,2}(?:what|how|which|when|where|who|whose)\b", re.I)
_INCLUDED = re.compile(r"\b(?:includ\w*|incl|of which|with|plus)\b|\+", re.IGNORECASE)
_SEPARATOR = re.compile(r";|,(?!\d)|\band\b", re.IGNORECASE)
_PARENS = re.compile(r"\([^)]*\)")
_NEAR = 60  # characters around a figure searched for a time marker
_MAX_FIGURES = 200  # figures of a reply looked at: a long reply stays fast
_WHEN = re.compile(r"\bwhen\b|\b(?:which|what)\s+day\b", re.IGNORECASE)
_OR = re.compile(r"\bor\b(?!\s+(?:so|rather|more|less|two|three)\b)", re.IGNORECASE)
_PHRASE_BREAK = re.compile(r"[.;:!?()\[\]—,]|\s[–-]\s")


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
    return parts


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
        expected = durations_in_days(expected)
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
    reply = durations_in_days(spell_out_numbers(reply))
    if VOID.search(expected):
        score, comment = never_told(question, expected, reply, set(key_words(question)))
        return Verdict(score, False, comment)
    key = _Key.read(question, expected)
    figures = find_figures(reply)[:_MAX_FIGURES]
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
    explained = _explained(reply, key, figures, clauses, hits, notes)
    _products(key.figures, hits)
    explained |= _steps(workings, {id(f) for f in hits.values()} | explained)
    explained |= _given_products(key, figures)
    if hits and not_knowing(reply, [f for f in figures if any(f.same(w) for w in key.figures)]):
        return Verdict(0.0, True, "offers the answer only as a question back: not knowing")
    if undecided(question, reply):
        return Verdict(0.0, False, "lists the options, names no decision")
    hedged, competing = _rivals(reply, question, key, figures, clauses, hits, explained, workings, notes)

    reply_words = set(key_words(reply))
    good = 0
    missing: list[str] = []
    for part in key.parts:
        if part.figures:
            ok = all(id(f) in hits and id(f) not in hedged for f in part.figures)
        else:
            ok = 2 * len([w for w in part.words if w in reply_words]) >= len(part.words)
            if ok and _one_of_two(reply, part.words):
                ok = False
                notes.append(f"'{' '.join(part.text.split())}' said as one of two")
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


def _with_weekdays(reply: str, key: _Key, figures: list[Figure]) -> list[Figure]:
    """The reply's figures and its bare weekdays as dates: the weekday of an asked date names that date
    ("on the Tuesday" for Tuesday, 10 March), another weekday is another day (a rival, a hedge, a day of
    another time like any date)."""
    days: list[Figure] = []
    for day, start, end in weekdays(reply, figures):
        keys = frozenset(k for w in key.figures if key.days.get(id(w)) == day for k in w.keys)
        days.append(Figure(keys or frozenset({f"weekday:{day}"}), "date", start, end))
    return sorted(figures + days, key=lambda f: f.start)


def _one_of_two(reply: str, words: list[str]) -> bool:
    """The part's words stand on one side of an "or" whose other side names something else."""
    wanted = set(words)
    for m in _OR.finditer(reply):
        left = _PHRASE_BREAK.split(reply[max(0, m.start() - 40) : m.start()])[-1].split()[-3:]
        right = _PHRASE_BREAK.split(reply[m.end() : m.end() + 40])[0].split()[:3]
        left_words, right_words = set(key_words(" ".join(left))), set(key_words(" ".join(right)))
        if (left_words & wanted and right_words - wanted) or (right_words & wanted and left_words - wanted):
            return True
    return False


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


def _explained(
    reply: str, key: _Key, figures: list[Figure], clauses: Clauses, hits: dict[int, Figure], notes: list[str]
) -> set[int]:
    """Reply figures that are parts of an asked total; a total missing from the reply but shown as its
    parts becomes stated."""
    explained: set[int] = set()
    candidates = addends(reply, figures)
    for wanted in key.figures:
        if not wanted.amounts:
            continue
        total = wanted.amounts[0]
        same_kind = [
            t for t in candidates if all(compatible(f, wanted) and not (f.keys & key.asked) for f in t[0])
        ]
        if id(wanted) in hits:
            others = [t for t in same_kind if hits[id(wanted)] not in t[0]]
            explained.update(id(f) for f in subset_sum(others, total) or [])
            said = hits[id(wanted)]
            for group, value in others:
                start, end = clauses.around(group[0])
                apart = reply[min(said.end, group[0].end) : max(said.start, group[0].start)]
                if value < total and _INCLUDED.search(reply[start:end]) and not _HEDGE.search(apart):
                    explained.update(id(f) for f in group)
        elif len(same_kind) > 1 and close(sum(v for _, v in same_kind), total):
            hits[id(wanted)] = same_kind[0][0][0]
            explained.update(id(f) for group, _ in same_kind for f in group)
            notes.append(f"{number_key(total)} shown as its parts")
    return explained


def _given_products(key: _Key, figures: list[Figure]) -> set[int]:
    """Reply figures that are products of two figures given (in the reply or the correct answer)."""
    factors = [a for f in figures + key.figures for a in f.amounts[:1] if a not in (0, 1)]
    products = {round(a * b, 6) for a, b in itertools.combinations(factors, 2)}
    return {id(f) for f in figures if f.amounts and round(f.amounts[0], 6) in products}


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
        if not rivals and not any(figure.shape == w.shape for w in key.figures):
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
