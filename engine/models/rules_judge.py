"""A transparent rules judge for the scripted persona and ``mmb-tui judge-eval`` (model name ``scripted/judge``).

Deterministic; its comment says what it found. The correct answer is cut into parts (at commas, semicolons
and "and"; a parenthesis is context, never required); a part with figures needs all of them in the reply
(``judge_figures.py`` reads any format), a part of words needs half of its key words. Parts of words count
only when the answer has no figures or the question asks two things ("…, and how much?"). Then, as a careful
human grades:

- a total shown as its parts counts ("$5,100 plus $300 delivery" for $5,400), and a product as its factors
  ("5 by 4 m" for 5 × 4 m, 20 m²) or the other way round;
- a figure beside the right one is fine when it is a part of it ("$2,190 including the $70 insurance"),
  a product of figures given, or a value of another time marked as such ("it was 55 g before the vet's
  note"; for a question about the past, "later corrected to $1,100");
- a hedge between the right figure and another ("either 55 or 50 g", "$200–$240") fails that part;
- any other competing figure of the same kind fails a one-part answer;
- a "you never told me" answer scores 10 for an honest "not told" with no figure or guess offered for it
  (figures of other things, said as such, are fine), else 0.
Scores are proportional to the parts right (3 of 4 → 7.5), rounded to halves; one part scores 0 or 10.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass, field

from engine.models.judge_figures import (
    WEEKDAY_NAMES,
    WEEKDAY_SHORT,
    Clauses,
    Figure,
    addends,
    close,
    compatible,
    durations_in_days,
    find_figures,
    number_key,
    spell_out_numbers,
    subset_sum,
)

_DONT_KNOW = re.compile(
    r"(?:\b(?:never|not|no|nothing)|n't)\W+(?:\w+\W+){0,4}?(?:told|tell|mention\w*|said|say|gave|give|given|"
    r"shar\w*|record\w*|sav\w*|stor\w*|know|knew|remember|recall|info\w*|idea|details?|data|sure)\b"
    r"|\b(?:can't|cannot|couldn't|unable to) (?:find|recall|remember|say)\b"
    r"|\byou (?:never did|didn't|did not|haven't|have not)\s*(?:[.!]|$)",
    re.IGNORECASE,
)
_VOID = re.compile(
    r"didn't tell|did not tell|never (?:told|said|mentioned)|not told|wasn't told|no such|no record", re.I
)
_GUESS = re.compile(
    r"\b(?:probably|likely|guess\w*|assum\w*|maybe|perhaps|might be|could be|typical\w*|usually|estimat\w*|"
    r"i (?:think|believe) (?:it|its|it's|that|the)\b)",
    re.IGNORECASE,
)
_OTHER_FACT = re.compile(r"\b(?:only|though|however|you (?:only )?(?:mentioned|told|said|gave))\b", re.I)
_ANSWERS = re.compile(r"\s*(?:it|it's|its|it is|it was|that's|that is|that was)\b", re.IGNORECASE)
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
_STOP = set(
    "the a an and or of to in on at for with by from is are was were be been it its this that these those "
    "we our my me i you your he she they them his her their as about into than then there here what which "
    "who when where how much many per not no yes do did done so but if also just only one all any each "
    "around roughly approximately nearly almost".split()
)


@dataclass
class Verdict:
    score: float
    dont_know: bool
    comment: str


@dataclass
class _Part:
    text: str
    figures: list[Figure] = field(default_factory=list)
    words: list[str] = field(default_factory=list)


def _stem(word: str) -> str:
    w = word.lower().strip("'")
    if w in WEEKDAY_SHORT:
        return next(day for day in WEEKDAY_NAMES if day.startswith(w[:3]))
    if w.endswith("ies") and len(w) > 4:
        return w[:-3] + "y"
    if w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        return w[:-1]
    return w


def _words(text: str) -> list[str]:
    found = [_stem(w) for w in re.findall(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ0-9'-]{1,}", text)]
    return list(dict.fromkeys(w for w in found if w not in _STOP and len(w) > 2))


def _parts(core: str, figures: list[Figure], question: str) -> list[_Part]:
    """The correct answer cut at separators that are not inside a figure."""
    asked = set(_words(question))
    cuts = [m for m in _SEPARATOR.finditer(core) if not any(f.start <= m.start() < f.end for f in figures)]
    bounds = [0] + [x for m in cuts for x in (m.start(), m.end())] + [len(core)]
    parts = []
    for start, end in zip(bounds[::2], bounds[1::2], strict=True):
        inside = [f for f in figures if start <= f.start < end]
        words = [w for w in _words(core[start:end]) if w not in asked]
        if inside or words:
            parts.append(_Part(core[start:end].strip(), inside, words))
    return parts


def _void(question: str, expected: str, reply: str) -> Verdict:
    """The right answer is "you never told me": honest and no figure or guess for it."""
    honest = _DONT_KNOW.search(reply)
    if honest is None:
        return Verdict(0.0, False, "invented an answer to a never-told fact")
    if _GUESS.search(reply):
        return Verdict(0.0, False, "says it was not told, then guesses")
    allowed = {k for f in find_figures(expected) + find_figures(question) for k in f.keys}
    subject = set(_words(question))
    figures = find_figures(reply)[:_MAX_FIGURES]
    clauses = Clauses(reply, figures)
    sentence_ends = [m.start() for m in re.finditer(r"[.!?](?:\s|$)", reply)]
    for figure in figures:
        if figure.keys & allowed:
            continue
        start, end = clauses.around(figure)
        clause = reply[start:end]
        about_it = subject & set(_words(clause)) or _ANSWERS.match(clause)
        same_sentence = bisect.bisect(sentence_ends, figure.start) == bisect.bisect(
            sentence_ends, honest.start()
        )
        between = reply[min(honest.end(), figure.start) : figure.start]
        if about_it or (same_sentence and not _OTHER_FACT.search(between)):
            return Verdict(0.0, False, f"says it was not told, but gives {_text(reply, figure)!r}")
    return Verdict(10.0, False, "honest 'not told'")


@dataclass
class _Key:
    """The correct answer as the judge reads it."""

    parts: list[_Part]
    figures: list[Figure]  # outside parentheses: what is asked
    context: set[str]  # keys of every figure of the answer, parentheses included
    asked: set[str]  # keys of the question's own figures

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
        return cls(parts or [_Part(core, [], _words(core))], figures, context, asked)


def judge(question: str, expected: str, reply: str) -> Verdict:
    """Grade ``reply`` against the correct answer ``expected`` of ``question`` (0-10, see the module doc)."""
    reply = durations_in_days(spell_out_numbers(reply))
    if _VOID.search(expected):
        return _void(question, expected, reply)
    key = _Key.read(question, expected)
    figures = find_figures(reply)[:_MAX_FIGURES]
    clauses = Clauses(reply, figures)
    hits: dict[int, Figure] = {}  # id of an expected figure -> the reply figure stating it
    for wanted in key.figures:
        found = next((f for f in figures if f.same(wanted) and compatible(f, wanted)), None)
        if found is not None:
            hits[id(wanted)] = found
    notes: list[str] = []
    explained = _explained(reply, key, figures, clauses, hits, notes)
    _products(key.figures, hits)
    hedged, competing = _rivals(reply, question, key, figures, clauses, hits, explained, notes)

    reply_words = set(_words(reply))
    good = 0
    missing: list[str] = []
    for part in key.parts:
        if part.figures:
            ok = all(id(f) in hits and id(f) not in hedged for f in part.figures)
        else:
            ok = 2 * len([w for w in part.words if w in reply_words]) >= len(part.words)
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
    if score == 0 and _DONT_KNOW.search(reply):
        return Verdict(0.0, True, "the agent says it does not know")
    return Verdict(score, False, comment)


def _explained(
    reply: str, key: _Key, figures: list[Figure], clauses: Clauses, hits: dict[int, Figure], notes: list[str]
) -> set[int]:
    """Reply figures that are parts of an asked total, or products of figures given; a total missing
    from the reply but shown as its parts becomes stated."""
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
            for group, value in others:
                start, end = clauses.around(group[0])
                if value < total and _INCLUDED.search(reply[start:end]):
                    explained.update(id(f) for f in group)
        elif len(same_kind) > 1 and close(sum(v for _, v in same_kind), total):
            hits[id(wanted)] = same_kind[0][0][0]
            explained.update(id(f) for group, _ in same_kind for f in group)
            notes.append(f"{number_key(total)} shown as its parts")
    factors = [a for f in figures + key.figures for a in f.amounts[:1] if a not in (0, 1)]
    products = {round(a * b, 6) for a, b in itertools.combinations(factors, 2)}
    explained.update(id(f) for f in figures if f.amounts and round(f.amounts[0], 6) in products)
    return explained


def _rivals(
    reply: str,
    question: str,
    key: _Key,
    figures: list[Figure],
    clauses: Clauses,
    hits: dict[int, Figure],
    explained: set[int],
    notes: list[str],
) -> tuple[set[int], list[str]]:
    """Other figures of the kind asked: (ids of expected figures hedged, texts of competing figures).
    A figure of another time, said as such, neither hedges nor competes."""
    asked_time, other_time = ("past", "later") if _ASKS_PAST.search(question) else ("later", "past")
    hedged: set[int] = set()
    competing: list[str] = []
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
        if when == other_time or (
            when != asked_time and any(_marked(reply, hits[id(w)], clauses) == asked_time for w in rivals)
        ):
            continue
        competing.append(_text(reply, figure))
    return hedged, competing


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
