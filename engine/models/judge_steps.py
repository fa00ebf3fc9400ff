"""Steps toward the final figures of a reply, for the rules judge: which figures lead to a settled one (the
right answer stated, or a figure of the correct answer's context) and so are no competing answers.

Working back from what is settled, step by step, a figure is a step when it is
- an operand of shown working whose result is settled (``judge_working``: "25 m² × $55 = $1,375");
- one of the terms that add up to a settled total: the lines of a breakdown next to it (before "Total:", or
  in a parenthesis after it), else any set of them ("$4,800 sofa, $350 delivery … $5,150");
- a partial total: the sum of the settled terms just before or after it ("$1,740 so far" after $780 and $960),
  or the product of two settled figures, unless working concludes it (then it is a step only as a term of a
  settled total);
- a factor of a settled figure ("60 guests at $110 a head ($6,600)"), a percentage applied to one ("£450 plus
  20%" for £540, "15% off $1,800" for $1,530), or the two sides of a difference ("$1,800 minus $270");
- a smaller figure said to be included ("$2,190 including the $70 insurance", "£540 incl. VAT (£450 net)").

A figure that restates the right one rounded, said as approximate ("$5,150, or roughly $5.2k"), is no rival
either (``roundings``).

Never a step: a figure offered as another possibility (``alternative``: "or $4,800", "maybe", "if you
collect it", "without …"; a condition that adds up is none: "if you add the $350 delivery") — it stays a
final figure, a hedge or a competing answer; nor, as a side of a difference, a figure concluded by working
("$4,090 + $300 = $4,390": the answer leads to another final figure).
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Iterable

from engine.models.judge_figures import Clauses, Figure, addends, close, subset_sum
from engine.models.judge_working import Working

_ALTERNATIVE_BEFORE = re.compile(
    r"\bor\b(?!\s+so\b)|\beither\b|\bmaybe\b|\bperhaps\b|\bpossibly\b|\bmight\b|\bcould\b|\botherwise\b"
    r"|\balternatively\b|\bunless\b",
    re.IGNORECASE,
)
_ALTERNATIVE_CLAUSE = re.compile(
    r"\b(?:if|unless|without|excluding|except|depending)\b|\bor\s+(?:was|is)\s+it\b", re.IGNORECASE
)
_ADDING_UP = re.compile(r"\b(?:add\w*|plus|put\w* together|combin\w*|sum\w*|total\w*)\b", re.IGNORECASE)
_APPROXIMATELY = re.compile(
    r"(?:\b(?:about|around|roughly|approximately|approx|nearly|almost|some|call it|just (?:under|over))"
    r"|[~≈])\s*$",
    re.IGNORECASE,
)
_INCLUDED = re.compile(r"\b(?:includ\w*|incl|inclusive|of which|net|made up of)\b", re.IGNORECASE)
_TAKEN_OFF = re.compile(  # words of a subtraction between its two sides
    r"\b(?:minus|less|off|discount\w*|deduct\w*|take\w* off|subtract\w*|refund\w*|back|saving|after|"
    r"down)\b|−|\s[-–]\s",
    re.IGNORECASE,
)
_PHRASE_BREAK = re.compile(r"[.;:!?()\[\]—,\n]|\s[–-]\s")
_NEAR = 30  # characters between a total and a part said to be included in it
_RUN = 30  # terms of a breakdown a partial total may sum
_SUBTRACTION = 80  # characters between the two sides of a subtraction


def alternative(text: str, figure: Figure, clauses: Clauses) -> bool:
    """The figure is offered as another possibility: a hedge word in its phrase before it, or a condition
    anywhere in its clause ("if you collect it"; not one that adds up: "if you add the $350 delivery")."""
    start, end = clauses.around(figure)
    phrase = _PHRASE_BREAK.split(text[max(0, figure.start - 60) : figure.start])[-1]
    clause = text[start:end]
    conditional = _ALTERNATIVE_CLAUSE.search(clause) and not _ADDING_UP.search(clause)
    return bool(_ALTERNATIVE_BEFORE.search(phrase) or conditional)


def roundings(text: str, figures: list[Figure], stated: list[Figure]) -> set[int]:
    """Figures that restate a stated one rounded, said as approximate ("$5,150, or roughly $5.2k")."""
    found: set[int] = set()
    for figure in figures:
        if not figure.amounts or not _APPROXIMATELY.search(text[max(0, figure.start - 20) : figure.start]):
            continue
        value = figure.amounts[0]
        unit = 10 ** (len(str(int(value))) - len(str(int(value)).rstrip("0"))) if value == int(value) else 0
        for said in stated:
            if said is figure or said.shape != figure.shape or not said.amounts or not unit:
                continue
            rounded = math.floor(said.amounts[0] / unit + 0.5) * unit
            if close(rounded, value) and not close(said.amounts[0], value):
                found.add(id(figure))
    return found


class Steps:
    """The closure of steps over a reply's figures (see the module doc)."""

    def __init__(
        self,
        text: str,
        figures: list[Figure],
        workings: list[Working],
        free: set[int],
        clauses: Clauses,
    ) -> None:
        self._text = text
        self._numbers = [f for f in figures if f.amounts]
        self._workings = workings
        self._free = free  # ids of the figures that may be steps (not alternatives)
        self._clauses = clauses
        self._operands = {id(f) for w in workings for f in w.operands}
        self._conclusions = {id(w.result) for w in workings}
        self._by_value: dict[float, list[Figure]] = {}
        for f in self._numbers:
            for amount in f.amounts:
                self._by_value.setdefault(round(amount, 4), []).append(f)
        self._percents = [f for f in self._numbers if f.shape == "%"]
        self._addends = addends(text, self._numbers)
        self._terms_of: dict[str, list[tuple[list[Figure], float]]] = {}  # addends per shape
        self._roots: set[int] = set()  # the settled figures steps lead to
        self._said_included = {  # figures whose clause says they are included in something
            id(f) for f in self._numbers if _INCLUDED.search(text[slice(*clauses.around(f))])
        }

    def of(self, settled: Iterable[Figure]) -> set[int]:
        """Ids of the figures that are steps toward ``settled`` (the settled ones not included)."""
        queue = [f for f in settled if f.amounts]
        known = {id(f) for f in queue}
        self._roots = set(known)
        by_id = {id(f): f for f in self._numbers}
        steps: set[int] = set()
        while queue:
            while queue:
                new = self._down(queue.pop()) - known - steps
                steps |= new
                queue.extend(by_id[i] for i in new)
            subtotals = self._partial_totals(known | steps) - steps
            steps |= subtotals
            queue = [by_id[i] for i in subtotals]
        return steps

    def _down(self, total: Figure) -> set[int]:
        """The free figures that make up ``total``, by every relation of the module doc."""
        found: set[int] = set()
        for working in self._workings:
            if working.result is total:
                found.update(id(f) for f in working.operands)
        if id(total) in self._roots or id(total) not in self._conclusions:  # a step's operands are its parts
            found |= self._parts(total)
        found.update(  # the same figure said again ("216 EUR, plus the toll: 216 + 50 = 266 EUR")
            id(f) for f in self._by_value.get(round(total.amounts[0], 4), []) if f.shape == total.shape
        )
        found |= self._factors(total)
        found |= self._difference(total)
        found |= self._included(total)
        return found & self._free

    def _terms(self, total: Figure) -> list[tuple[list[Figure], float]]:
        """The addends that may make up ``total``: its kind, not a working's operands (its result stands for
        them), not offered as an alternative."""
        if total.shape not in self._terms_of:
            terms = []
            for group, value in self._addends:
                if any(id(f) in self._operands or id(f) not in self._free for f in group):
                    continue
                kinds = {f.shape for f in group}
                if total.shape in kinds or (not total.shape and kinds == {""}):
                    terms.append((group, value))
            self._terms_of[total.shape] = terms
        return [t for t in self._terms_of[total.shape] if not any(f is total for f in t[0])]

    def _parts(self, total: Figure) -> set[int]:
        """Terms adding up to ``total``: a run next to it, else (for a settled figure, not a step: a set of
        many terms sums to a step's value by chance) the largest set of them."""
        amount = total.amounts[0]
        terms = self._terms(total)
        before = [t for t in terms if t[0][-1].end <= total.start][::-1]
        after = [t for t in terms if t[0][0].start >= total.end]
        for run in (before, after):
            acc = 0.0
            for i, (_, value) in enumerate(run):
                acc += value
                if i and close(acc, amount):
                    return {id(f) for group, _ in run[: i + 1] for f in group}
                if acc > amount + 1e-6:
                    break
        if id(total) not in self._roots:
            return set()
        return {id(f) for f in subset_sum(terms, amount) or []}

    def _partial_totals(self, settled: set[int]) -> set[int]:
        """Free figures that are the sum of a run of settled terms right before or after them, or the product
        of two settled figures ("€124 … (2 × €62)" when the run was read as 2 × €62)."""
        found: set[int] = set()
        by_shape: dict[str, list[Figure]] = {}
        for f in self._numbers:
            if not f.per:
                by_shape.setdefault(f.shape, []).append(f)
        products = {
            round(a.amounts[0] * b.amounts[0], 4)
            for a, b in itertools.combinations([f for f in self._numbers if id(f) in settled], 2)
        }
        for same in by_shape.values():
            for k, figure in enumerate(same):
                if id(figure) in settled or id(figure) not in self._free or id(figure) in self._conclusions:
                    continue
                if round(figure.amounts[0], 4) in products:
                    found.add(id(figure))
                for run in (same[max(0, k - _RUN) : k][::-1], same[k + 1 : k + 1 + _RUN]):
                    acc = 0.0
                    for count, f in enumerate(run, start=1):
                        if id(f) not in settled:
                            break
                        acc += f.amounts[0]
                        if count > 1 and close(acc, figure.amounts[0]):
                            found.add(id(figure))
        return found

    def _factors(self, total: Figure) -> set[int]:
        """Factors whose product is ``total``; a base a percentage was applied to."""
        amount = total.amounts[0]
        found: set[int] = set()
        for a in self._numbers:
            if a is total or not a.amounts[0]:
                continue
            for b in self._by_value.get(round(amount / a.amounts[0], 4), []):
                if b is not total and b is not a:
                    found.update((id(a), id(b)))
        for p in self._percents:
            rate = p.amounts[0] / 100
            for factor in (rate, 1 + rate, 1 - rate):
                for base in self._by_value.get(round(amount / factor, 4), []) if factor else []:
                    if base is not total and base is not p:
                        found.update((id(base), id(p)))
        return found

    def _difference(self, total: Figure) -> set[int]:
        """``total`` = a − b, said as a subtraction, neither side concluded by working: "$1,800 minus
        $270 … $1,530"."""
        amount = total.amounts[0]
        found: set[int] = set()
        for a in self._numbers:
            if a is total or a.shape != total.shape or id(a) in self._conclusions or a.amounts[0] <= amount:
                continue
            for b in self._by_value.get(round(a.amounts[0] - amount, 4), []):
                if b is total or b is a or id(b) in self._conclusions:
                    continue
                between = self._text[min(a.end, b.end) : max(a.start, b.start)]
                if len(between) <= _SUBTRACTION and _TAKEN_OFF.search(between):
                    found.update((id(a), id(b)))
        return found

    def _included(self, total: Figure) -> set[int]:
        """A smaller figure of its kind said to be part of ``total`` ("including the $70 insurance")."""
        found: set[int] = set()
        for f in self._numbers:
            if f is total or f.shape != total.shape or f.per or f.amounts[0] >= total.amounts[0]:
                continue
            between = self._text[min(total.end, f.end) : max(total.start, f.start)]
            near = len(between) <= _NEAR and _INCLUDED.search(between)
            if (near or id(f) in self._said_included) and not _ALTERNATIVE_BEFORE.search(between):
                found.add(id(f))
        return found
