"""What a total rests on, found in the live sheets when no KEY.md ``sum:`` line names its parts.

A check whose correct answer is a total (``$3,175``: a figure no sheet or phase text states) rests on the facts
whose current values add up to it: one term per fact, a figure of it or a product written in it (``25 m² at
$55 per m²`` is 1,375), of the total's currency or unit (a bare total takes any). ``decompositions`` looks for
them sheet by sheet, the sheets the question names first (``the bathroom total``), then those sheets together,
then every sheet: a subset sum over whole cents, bounded (at most ``MAX_FACTS`` facts, ``MAX_SUMS`` partial
sums, ``MAX_WAYS`` ways), so a total that too many sets of facts make is left unjudged rather than guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal

from engine.benchmark.model import DELETED, Fact, Sheet
from engine.grading.changes import history_spans, outside
from engine.grading.told_values import Value, plain_values, stem, strong_values

MAX_FACTS = 80
MAX_SUMS = 50_000
MAX_WAYS = 24
_PRODUCT = re.compile(r"\s*(?:×|x|\*|at|by)\s*", re.IGNORECASE)  # "25 m² at $55", "5 × 4 m"
_NUMBERS = ("amount", "number")


@dataclass(frozen=True)
class Term:
    """One way a fact states an amount: a figure, or the factors of a product."""

    cents: int
    values: tuple[Value, ...]
    unit: str


@dataclass(frozen=True)
class Part:
    """A fact a total rests on, and the ways it states the amount the total takes from it."""

    sheet: str
    fact: Fact
    terms: tuple[Term, ...]


def _cents(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value())


def _is_currency(unit: str) -> bool:
    return len(unit) == 3 and unit.isupper()


def terms(text: str, names: frozenset[str]) -> list[Term]:
    """The amounts a fact's text states (history left out): each figure, and each product of two figures
    joined by ×, x, "at" or "by" (its unit the currency of either, else the first one's)."""
    values = [
        v
        for v in outside(strong_values(text, names), history_spans(text))
        if v.kind in _NUMBERS and v.amount is not None and v.amount > 0
    ]
    found = [Term(_cents(v.amount), (v,), v.unit) for v in values if v.amount is not None]
    for left, right in zip(values, values[1:], strict=False):
        if (
            left.amount is None
            or right.amount is None
            or not _PRODUCT.fullmatch(text[left.end : right.start])
        ):
            continue
        unit = next((v.unit for v in (left, right) if _is_currency(v.unit)), left.unit)
        found.append(Term(_cents(left.amount * right.amount), (left, right), unit))
    return found


def _fits(term: Term, total: Value) -> bool:
    return not total.unit or term.unit == total.unit


def _relevance(sheet: Sheet, question: set[str]) -> int:
    words = " ".join(
        [sheet.name.replace("-", " ").replace("_", " "), sheet.title, *(c.name for c in sheet.categories)]
    )
    return len(question & {v.key[2:] for v in plain_values(words)})


def _scopes(sheets: dict[str, Sheet], question: str) -> Iterator[list[Sheet]]:
    """The sheets to look in, in order: each sheet the question names, those together, then all of them."""
    asked = {stem(v.label) for v in plain_values(question)}
    ranked = sorted((s for s in sheets.values() if _relevance(s, asked)), key=lambda s: -_relevance(s, asked))
    yield from ([s] for s in ranked)
    if len(ranked) > 1:
        yield ranked
    yield list(sheets.values())


def decompositions(
    sheets: dict[str, Sheet], total: Value, question: str, names: frozenset[str]
) -> list[list[tuple[Part, int]]]:
    """The ways (at most ``MAX_WAYS``, two facts or more each) the live facts of the first scope that has any
    add up to ``total``: each a list of (part, the cents it takes). Empty: none found, or too many to judge."""
    if total.amount is None or total.amount <= 0:
        return []
    target = _cents(total.amount)
    for scope in _scopes(sheets, question):
        parts = _parts(scope, total, target, names)
        if len(parts) > MAX_FACTS:
            continue
        ways = _subset_sums(parts, target)
        if ways is None:
            return []  # too many ways: the total is not judged
        if ways:
            return ways
    return []


def _parts(scope: list[Sheet], total: Value, target: int, names: frozenset[str]) -> list[Part]:
    parts = []
    for sheet in scope:
        for category in sheet.categories:
            for fact in category.facts:
                if fact.text.strip() == DELETED:
                    continue
                usable = tuple(
                    t for t in terms(fact.text, names) if 0 < t.cents <= target and _fits(t, total)
                )
                if usable:
                    parts.append(Part(sheet.name, fact, usable))
    return parts


def _subset_sums(parts: list[Part], target: int) -> list[list[tuple[Part, int]]] | None:
    """Every way (up to ``MAX_WAYS``) to reach ``target`` taking at most one amount from each part; None when
    the search grows past its bounds."""
    reach: list[set[int]] = [{0}]
    for part in parts:
        amounts = {t.cents for t in part.terms}
        grown = reach[-1] | {s + a for s in reach[-1] for a in amounts if s + a <= target}
        if len(grown) > MAX_SUMS:
            return None
        reach.append(grown)
    if target not in reach[-1]:
        return []
    ways: list[list[tuple[Part, int]]] = []

    def walk(index: int, left: int, chosen: list[tuple[Part, int]]) -> None:
        if len(ways) > MAX_WAYS:
            return
        if left == 0:
            if len(chosen) >= 2:
                ways.append(list(chosen))
            return
        if index == 0:
            return
        if left in reach[index - 1]:
            walk(index - 1, left, chosen)
        part = parts[index - 1]
        for cents in sorted({t.cents for t in part.terms}):
            if cents <= left and left - cents in reach[index - 1]:
                chosen.append((part, cents))
                walk(index - 1, left - cents, chosen)
                chosen.pop()

    walk(len(parts), target, [])
    return None if len(ways) > MAX_WAYS else ways
