"""Shown working in a reply, for the rules judge: arithmetic written out with its result, such as
``72 km × 3 EUR = 216 EUR``, ``80 km at 3 EUR per km, so 240 EUR``, ``$288 + $1,350 + $250 = $1,888`` or
``$560 (2 × $280)``.

A ``Working`` is a chain of figures joined by operators (``×``, ``x``, ``*``, ``by``, ``at``, ``times``,
``+``, ``plus``, ``and``, ``−``, ``minus``, ``less``, ``/``, ``divided by``), a unit qualifier allowed after an
operand ("3 EUR per km", "$280 each"), and a result joined to it by a connector ("=", "so", "that's",
"comes to", a dash, a colon, a parenthesis…), before or after the chain. It counts only when the
arithmetic holds (× and / before + and −) to the precision the result is written with, so a stale
operand ("80 km × 3 EUR = 216 EUR") makes no working. The judge reads the operands of a working as steps
towards its result: they stand or fall with it, never as answers of their own.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from engine.models.judge_figures import Figure

_QUALIFIER = (  # what may follow an operand: "3 EUR per km", "$280 each", "2 adults", "350 for delivery"
    r"(?:\s*(?:per|a|an|each|every)\b(?:\s*(?:m²|m2|[a-z]+)\b)?)?"
    r"(?:\s+(?!(?:or|either|maybe|perhaps|and|plus|minus|less|times|by|at|so|is|for|that|which|gives?|makes?"
    r"|comes?|equals?|total\w*)\b)[^\W\d_]+){0,2}"
)
_OPERATOR = re.compile(
    _QUALIFIER
    + r"\s*,?\s*(?P<op>×|\*|\bx\b|\bby\b|\bat\b|\btimes\b|\+|\bplus\b|\band\b|−|\s-\s|\s–\s|\bminus\b|\bless\b"
    r"|/|\bdivided by\b|\bover\b)\s*(?:the\s+|a\s+)?",
    re.IGNORECASE,
)
_CONNECTOR = re.compile(
    _QUALIFIER
    + r"\s*[,;]?\s*(?:=|≈|→|:|—|–|-|\(|\bso\b|\bthat's\b|\bthat is\b|\bwhich is\b|\bwhich makes\b|\bmakes?\b"
    r"|\bcomes? to\b|\bgives?\b|\bequals?\b|\bis\b|\bfor\b|\btotal\w*\b|\bi\.e\.)"
    r"[^.;!?0-9$€£]{0,24}?",
    re.IGNORECASE,
)
_SIGN = {"×": "*", "*": "*", "x": "*", "by": "*", "at": "*", "times": "*", "+": "+", "plus": "+", "and": "+"}
_SIGN |= {"−": "-", "-": "-", "–": "-", "minus": "-", "less": "-", "/": "/", "divided by": "/", "over": "/"}


@dataclass(frozen=True)
class Working:
    """Arithmetic shown in a text: ``operands`` lead to ``result``."""

    operands: tuple[Figure, ...]
    result: Figure


def _sign(gap: str) -> str | None:
    match = _OPERATOR.fullmatch(gap)
    return _SIGN[" ".join(match.group("op").lower().split())] if match else None


def _value(operands: list[Figure], signs: list[str]) -> float | None:
    """The chain's value, × and / before + and −; None for a division by zero."""
    terms: list[float] = [operands[0].amounts[0]]
    plus: list[str] = []
    for sign, figure in zip(signs, operands[1:], strict=True):
        value = figure.amounts[0]
        if sign == "*":
            terms[-1] *= value
        elif sign == "/":
            if value == 0:
                return None
            terms[-1] /= value
        else:
            terms.append(value)
            plus.append(sign)
    total = terms[0]
    for sign, term in zip(plus, terms[1:], strict=True):
        total = total + term if sign == "+" else total - term
    return total


def _holds(value: float | None, text: str, result: Figure) -> bool:
    """The chain's value is the result as written (to its last decimal)."""
    if value is None or not result.amounts:
        return False
    written = re.search(r"\d+(?:[.,](\d+))?", text[result.start : result.end])
    decimals = len(written.group(1) or "") if written and result.amounts[0] % 1 else 0
    return any(math.isclose(value, a, abs_tol=0.5 * 10**-decimals + 1e-9) for a in result.amounts)


def find_workings(text: str, figures: list[Figure]) -> list[Working]:
    """Every working of ``text`` whose arithmetic holds; a result may start the next step."""
    numbers = [f for f in figures if f.amounts]
    found: list[Working] = []
    chain: list[Figure] = []
    signs: list[str] = []

    def close_chain(before: Figure | None) -> None:
        if len(chain) > 1 and before is not None and _CONNECTOR.fullmatch(text[before.end : chain[0].start]):
            if _holds(_value(chain, signs), text, before):
                found.append(Working(tuple(chain), before))

    previous: Figure | None = None  # the figure just before the chain
    for figure in numbers:
        gap = text[chain[-1].end : figure.start] if chain else ""
        sign = _sign(gap) if chain else None
        if sign is not None:
            chain.append(figure)
            signs.append(sign)
            continue
        if len(chain) > 1 and _CONNECTOR.fullmatch(gap) and _holds(_value(chain, signs), text, figure):
            found.append(Working(tuple(chain), figure))
            chain, signs, previous = [figure], [], None
            continue
        close_chain(previous)
        previous = chain[-1] if chain else None
        chain, signs = [figure], []
    close_chain(previous)
    return found
