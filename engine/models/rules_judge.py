"""A transparent rules judge for the scripted persona: expected numbers and key words present, no
competing numbers. Deterministic; its comment says exactly what it found."""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUMBER = re.compile(r"(?P<cur>[$€£])?\s?(?P<num>\d+(?:[.,]\d+)*)(?:\s?(?P<unit>[a-zA-Z²%]+))?")
_DONT_KNOW = re.compile(
    r"don't know|do not know|didn't tell|did not tell|haven't told|have not told|no record|not sure|"
    r"don't have|do not have|can't find|cannot find|no information|never told|never mentioned|didn't mention",
    re.IGNORECASE,
)
_VOID = re.compile(
    r"didn't tell|did not tell|never (?:told|said|mentioned)|not told|wasn't told|no such", re.IGNORECASE
)
_STOP = set(
    "the a an and or of to in on at for with by from is are was were be been it its this that these those "
    "we our my me i you your he she they them his her their as about into than then there here what which "
    "who when where how much many per not no yes do did done so but if also just only one all any each".split()
)


@dataclass
class Verdict:
    score: float
    dont_know: bool
    comment: str


def _numbers(text: str) -> list[tuple[str, str]]:
    """(normalised value, shape) pairs; shape is the currency or unit that makes numbers comparable."""
    found = []
    for m in _NUMBER.finditer(text):
        raw = m.group("num")
        value = (
            raw.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+(\.\d+)?", raw) else raw.replace(",", ".")
        )
        value = value.rstrip("0").rstrip(".") if "." in value else value
        shape = m.group("cur") or (m.group("unit") or "").lower()
        found.append((value, shape))
    return found


def _keywords(text: str) -> list[str]:
    words = re.findall(r"[A-Za-zÀ-ÿ][A-Za-zÀ-ÿ0-9'-]{2,}", text)
    seen: list[str] = []
    for word in words:
        w = word.lower()
        if w not in _STOP and w not in seen:
            seen.append(w)
    return seen


def judge(question: str, expected: str, reply: str) -> Verdict:
    dont_know = bool(_DONT_KNOW.search(reply))
    if _VOID.search(expected):  # the right answer is "you didn't tell me"
        score = 10.0 if dont_know and not _numbers(reply) else 0.0
        return Verdict(
            score, False, "honest 'not told'" if score else "invented an answer to a never-told fact"
        )
    expected_numbers = _numbers(expected)
    reply_numbers = _numbers(reply)
    reply_values = {v for v, _ in reply_numbers}
    if expected_numbers:
        wanted = list(dict.fromkeys(v for v, _ in expected_numbers))
        hit = [v for v in wanted if v in reply_values]
        shapes = {s for _, s in expected_numbers if s}
        question_values = {v for v, _ in _numbers(question)}
        competing = sorted(
            {v for v, s in reply_numbers if s in shapes and v not in wanted and v not in question_values}
        )
        parts = len(wanted)
        good = max(0, len(hit) - (len(competing) if parts == 1 else 0))
        comment = f"numbers {len(hit)}/{parts}" + (
            f", missing {', '.join(v for v in wanted if v not in hit)}" if len(hit) < parts else ""
        )
        if competing:
            comment += f", competing {', '.join(competing)}"
    else:
        wanted = _keywords(expected)
        reply_words = set(_keywords(reply))
        hit = [w for w in wanted if w in reply_words]
        parts, good = len(wanted) or 1, len(hit)
        comment = f"key words {len(hit)}/{len(wanted)}" + (
            f", missing {', '.join(w for w in wanted if w not in hit)}" if len(hit) < len(wanted) else ""
        )
    score = 10.0 * good / parts
    score = 10.0 if parts == 1 and good else round(score * 2) / 2
    if score == 0 and dont_know:
        return Verdict(0.0, True, "the agent says it does not know")
    return Verdict(score, False, comment)
