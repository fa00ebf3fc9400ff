"""An answer's line of a report entry read back (``engine/report/parse.py`` reads the rest): an imperfect
answer (``[score] (id) …``), a persona fault (``⚠ (id) …``) and, in a run with a judge, a disagreement
(``≠ (id) …``), with both grades where the entry has them (``… | persona: [10/10] … | judge: [0/10] …``; a
persona fault: ``… | fault: <why> | judge: [10/10] …``).
Entries written before the judge, before issue 9 (``got:`` the persona's summary) and before the check
types read as they always did.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_IMPERFECT = re.compile(
    r"^\[(?P<score>[\d.]+)/10(?:,\s*(?P<note>[^\]]*))?\]\s*\((?P<id>[^)]+)\)\s*(?P<rest>.*)$"
)
_FAULT = re.compile(r"^⚠\s*\((?P<id>[^)]+)\)\s*(?P<rest>.*)$")
_DISAGREEMENT = re.compile(r"^≠\s*\((?P<id>[^)]+)\)\s*(?P<rest>.*)$")
_GRADE = re.compile(r"^\[(?:(?P<score>[\d.]+)/10|error|none)\]\s?")  # "[6/10] " before a grader's words
_TYPES = re.compile(r"^((?:\[[A-Z][A-Z-]*~?\]\s*)+)")  # "[AGG] [NEG] " after the check id; "[AGG~]" inferred
_LINK = "[transcript #"


@dataclass
class ImperfectAnswer:
    score: float
    check_id: str
    question: str
    expected: str
    got: str
    comment: str
    attempt: int = 1
    note: str = ""  # "2nd attempt", as written
    transcript_n: int | None = None  # the evaluation's event number in the run's transcript
    persona: str = ""  # the persona's summary of the answer (entries before issue 9 had it in ``got``)
    types: list[str] = field(default_factory=list)  # the check's types (entries before issue 12 have none)
    persona_score: float | None = None  # with a judge: the persona's grade, as it counts
    judge_score: float | None = None  # with a judge: its grade, as it counts (None: it gave none)
    judge: str = ""  # with a judge: its comment, or why it gave no grade
    memory: str = ""  # the memory autopsy's line under it: "<class> — <evidence>" (issue 33; "" before it)


@dataclass
class PersonaFault:
    """A grade whose premise the persona broke: kept, listed, not counted in the agent's score."""

    check_id: str
    question: str
    graded: str  # "5/10", as written
    fault: str
    transcript_n: int | None = None
    types: list[str] = field(default_factory=list)
    judge_score: float | None = None  # with a judge: its grade of the same answer, as it would count
    judge: str = ""  # with a judge: its comment, or why it gave no grade


def _link(text: str) -> tuple[str, int | None]:
    """``text`` without its trailing ``[transcript #N]``, and N."""
    stripped = text.rstrip()
    if not stripped.endswith("]"):
        return text, None
    head, sep, number = stripped[:-1].rpartition(_LINK)
    if not sep or not number.isdigit():
        return text, None
    return head.rstrip(), int(number)


def _types(rest: str) -> tuple[list[str], str]:
    """The ``[AGG] [NEG]`` check types at the start of ``rest``, and what follows them."""
    match = _TYPES.match(rest)
    if match is None:
        return [], rest
    return re.findall(r"\[([A-Z][A-Z-]*~?)\]", match.group(1)), rest[match.end() :]


def parse_imperfect(line: str) -> ImperfectAnswer | None:
    match = _IMPERFECT.match(line)
    if match is None:
        return None
    note = (match["note"] or "").strip()
    answer = _answer(float(match["score"]), match["id"], match["rest"])
    answer.attempt, answer.note = 2 if note.startswith("2") else 1, note
    return answer


def parse_disagreement(line: str) -> ImperfectAnswer | None:
    """A ``≠`` line: an answer the judge and the persona gave different verdicts, in full."""
    match = _DISAGREEMENT.match(line)
    if match is None:
        return None
    answer = _answer(0.0, match["id"], match["rest"])
    answer.score = answer.persona_score if answer.persona_score is not None else 0.0
    return answer


def _grade(text: str) -> tuple[float | None, str]:
    """A grader's ``[6/10] words``: the score (None for ``[error]``/``[none]``) and the words."""
    match = _GRADE.match(text)
    if match is None:
        return None, text
    return (float(match["score"]) if match["score"] else None), text[match.end() :]


def _answer(score: float, check_id: str, rest: str) -> ImperfectAnswer:
    """An answer's line after its score and check id: types, question, expected, got, the graders' words."""
    types, rest = _types(rest)
    question, _, after = rest.partition(" | expected: ")
    expected, _, got_part = after.partition(" | got: ")
    got_part, transcript_n = _link(got_part)
    persona_score: float | None = None
    judge_score: float | None = None
    judged = ""
    head, judge_sep, judge_part = got_part.rpartition(" | judge: ")
    has_judge = bool(judge_sep) and _GRADE.match(judge_part) is not None
    if has_judge:  # a run with a judge: both grades, side by side
        got_part = head
        judge_score, judged = _grade(judge_part)
    got, has_persona, persona_part = got_part.rpartition(" | persona: ")
    if has_persona and has_judge:
        persona_score, persona_part = _grade(persona_part)
    if has_persona:  # the agent's verbatim reply, then the persona's summary and comment
        persona, sep, comment = persona_part.rpartition(" — ")
        if not sep:
            persona, comment = persona_part, ""
    else:  # before issue 9: the persona's summary was the "got"
        persona = ""
        got, sep, comment = got_part.rpartition(" — ")
        if not sep:
            got, comment = got_part, ""
    return ImperfectAnswer(
        score=score,
        check_id=check_id.strip(),
        question=question.strip(),
        expected=expected.strip(),
        got=got.strip(),
        comment=comment.strip(),
        transcript_n=transcript_n,
        persona=persona.strip(),
        types=types,
        persona_score=persona_score,
        judge_score=judge_score,
        judge=judged.strip(),
    )


def parse_fault(line: str) -> PersonaFault | None:
    match = _FAULT.match(line)
    if match is None:
        return None
    types, rest = _types(match["rest"])
    rest, transcript_n = _link(rest)
    question, _, after = rest.partition(" | graded: ")
    graded, _, fault = after.partition(" | fault: ")
    judge_score: float | None = None
    judged = ""
    head, judge_sep, judge_part = fault.rpartition(" | judge: ")
    if judge_sep and _GRADE.match(judge_part) is not None:  # a run with a judge: its grade, never counted
        fault = head
        judge_score, judged = _grade(judge_part)
    return PersonaFault(
        check_id=match["id"].strip(),
        question=question.strip(),
        graded=graded.split(",")[0].strip(),
        fault=fault.strip(),
        transcript_n=transcript_n,
        types=types,
        judge_score=judge_score,
        judge=judged.strip(),
    )


def is_answer_line(line: str) -> bool:
    """An imperfect answer's or a persona fault's line (a disagreement's stays with the entry's figures)."""
    return _IMPERFECT.match(line) is not None or _FAULT.match(line) is not None
