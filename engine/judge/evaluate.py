"""``mmb-tui judge-eval``: a judge held against labeled answers (issue 14).

A case file is JSON Lines, one labeled answer per line::

    {"check": "max 20.10", "type": "RECALL", "question": "How much food a day are we giving Boss in the end?",
     "expected": "50 g.", "answer": "Either 55 or 50 g.", "correct": false, "score": 0, "note": "hedge"}

``check``, ``question``, ``expected`` and ``answer`` are strings, ``correct`` is true or false (would a careful
human pass it); ``score`` (0-10, the human's grade), ``type`` (one of the benchmarks' check types, or several
separated by commas: ``"AGG, NEG"``), ``kind`` (a short label of what the answer does, shared by cases alike:
``"stale value"``, ``"hedge"``, ``"shown working"``, ``"non-answer"``…) and ``note`` (free text) are optional.
A bad line is a one-line error naming ``file:line`` and the field; nothing is judged then. The shipped cases
(``DEFAULT_CASES``, ``engine/models/judge_cases.jsonl``, beside the rules judge) are read when no file is given.

Each answer is graded 0-10 by a judge (``engine/models/judges.py``): the rules judge (``scripted/judge``,
offline, the default) or a configured OpenAI-compatible model with the persona's grading rules; a score of
``PASS_SCORE`` (7) or more counts as correct. The output gives agreement, false accepts (judged correct, labeled wrong) and false rejects
(judged wrong, labeled correct) overall, per check type and per case kind (the cases without a kind, when some
have one, in a row of their own, then all: the rows add up), lists every disagreement, and ends with the line
``agreement: 96.7% (145/150)``. A judge reply that cannot be read is an error, counted as a
disagreement and listed, never a crash.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from engine.benchmark.model import CHECK_TYPES
from engine.config import Config
from engine.models.base import ModelError
from engine.models.judges import PASS_SCORE, RULES_JUDGE, Grade, Judge, make_judge
from engine.models.usage import UsageMeter
from engine.sanitize import printable

_REQUIRED = ("check", "question", "expected", "answer", "correct")
DEFAULT_CASES = Path(__file__).resolve().parent.parent / "models" / "judge_cases.jsonl"
NO_KIND = "(no kind)"  # the row of the cases without a kind in the table per kind


class CaseError(Exception):
    """Bad lines of a case file, each ``file:line: field: message``."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class Case:
    """One labeled answer."""

    line: int
    check: str
    question: str
    expected: str
    answer: str
    correct: bool
    score: float | None = None
    types: tuple[str, ...] = ()
    note: str = ""
    kind: str = ""


# --- reading cases -------------------------------------------------------------------------------


def _parse_case(raw: Any, line: int) -> Case | str:
    """The case on one line, or ``"field: message"``."""
    if not isinstance(raw, dict):
        return "(line): not a JSON object"
    for key in _REQUIRED:
        if key not in raw:
            return f"{key}: missing"
        if key == "correct" and not isinstance(raw[key], bool):
            return "correct: must be true or false"
        if key != "correct" and (not isinstance(raw[key], str) or not raw[key].strip()):
            return f"{key}: must be a non-empty string"
    score = raw.get("score")
    if score is not None and (
        isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 10
    ):
        return "score: must be a number from 0 to 10"
    if score is not None and (score >= PASS_SCORE) != raw["correct"]:
        return f"score: {score:g} contradicts correct: {str(raw['correct']).lower()} (a score of {PASS_SCORE:g} or more is correct)"
    kinds = raw.get("type")
    types: tuple[str, ...] = ()
    if kinds is not None:
        if not isinstance(kinds, str) or not kinds.strip():
            return f"type: must be a check type ({', '.join(CHECK_TYPES)})"
        types = tuple(t.strip().upper() for t in re.split(r"[,\s]+", kinds.strip()) if t.strip())
        unknown = [t for t in types if t not in CHECK_TYPES]
        if unknown:
            return f"type: unknown check type {unknown[0]!r} (known: {', '.join(CHECK_TYPES)})"
    note = raw.get("note", "")
    if not isinstance(note, str):
        return "note: must be a string"
    kind = raw.get("kind", "")
    if not isinstance(kind, str) or ("kind" in raw and not kind.strip()):
        return "kind: must be a non-empty string"
    return Case(
        line=line,
        check=raw["check"].strip(),
        question=raw["question"],
        expected=raw["expected"],
        answer=raw["answer"],
        correct=raw["correct"],
        score=None if score is None else float(score),
        types=types,
        note=note,
        kind=" ".join(kind.split()),
    )


def read_cases(path: Path) -> list[Case]:
    """Every case of a JSONL file; CaseError with a one-line ``file:line: field: message`` per bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CaseError([f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}"]) from None
    cases: list[Case] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(f"{path}:{number}: (line): not valid JSON: {exc.msg} at column {exc.colno}")
            continue
        parsed = _parse_case(raw, number)
        if isinstance(parsed, str):
            problems.append(f"{path}:{number}: {parsed}")
        else:
            cases.append(parsed)
    if not cases and not problems:
        problems.append(f"{path}: no cases")
    if problems:
        raise CaseError(problems)
    return cases


# --- evaluating ----------------------------------------------------------------------------------


@dataclass
class Tally:
    """Agreement counts over a group of cases."""

    cases: int = 0
    agreed: int = 0
    false_accepts: int = 0
    false_rejects: int = 0
    errors: int = 0

    def add(self, case: Case, grade: Grade) -> None:
        self.cases += 1
        if grade.score is None:
            self.errors += 1
        elif grade.passed == case.correct:
            self.agreed += 1
        elif grade.passed:
            self.false_accepts += 1
        else:
            self.false_rejects += 1

    def agreement(self) -> str:
        percent = 100.0 * self.agreed / self.cases if self.cases else 0.0
        return f"{percent:.1f}% ({self.agreed}/{self.cases})"


@dataclass
class Evaluation:
    """Every case with its grade, and the tallies."""

    judge: str
    graded: list[tuple[Case, Grade]] = field(default_factory=list)

    def total(self) -> Tally:
        return _tally(self.graded)

    def by_type(self) -> dict[str, Tally]:
        present = [t for t in CHECK_TYPES if any(t in case.types for case, _ in self.graded)]
        return {t: _tally((c, g) for c, g in self.graded if t in c.types) for t in present}

    def by_kind(self) -> dict[str, Tally]:
        """A tally per case kind, in the order kinds first appear; cases without a kind, when some have one,
        under ``NO_KIND`` (last), so the rows add up to all the cases; none when no case has a kind."""
        kinds = dict.fromkeys(case.kind for case, _ in self.graded if case.kind)
        if not kinds:
            return {}
        tallies = {k: _tally((c, g) for c, g in self.graded if c.kind == k) for k in kinds}
        if any(not c.kind for c, _ in self.graded):
            tallies[NO_KIND] = _tally((c, g) for c, g in self.graded if not c.kind)
        return tallies

    def disagreements(self) -> list[tuple[Case, Grade]]:
        return [(c, g) for c, g in self.graded if g.score is None or g.passed != c.correct]


def _tally(graded: Iterable[tuple[Case, Grade]]) -> Tally:
    tally = Tally()
    for case, grade in graded:
        tally.add(case, grade)
    return tally


async def evaluate(cases: list[Case], case_judge: Judge, concurrency: int = 4) -> Evaluation:
    """Grade every case (a few at a time) in file order."""
    gate = asyncio.Semaphore(concurrency)

    async def one(case: Case) -> Grade:
        async with gate:
            try:
                return await case_judge.grade(case.question, case.expected, case.answer)
            except Exception as exc:  # a judge must never end the evaluation: its failure is a result
                return Grade(None, error=f"{type(exc).__name__}: {exc}")

    grades = await asyncio.gather(*(one(case) for case in cases))
    return Evaluation(case_judge.name, list(zip(cases, grades, strict=True)))


# --- printing ------------------------------------------------------------------------------------


def _row(label: str, tally: Tally, width: int = 8) -> str:
    return (
        f"  {label:<{width}} {tally.cases:>5}  {tally.agreement():<18} "
        f"{tally.false_accepts:>13}  {tally.false_rejects:>13}  {tally.errors:>6}"
    )


def _header(label: str, width: int = 8) -> str:
    counts = f"{'false accepts':>13}  {'false rejects':>13}  {'errors':>6}"
    return f"  {label:<{width}} {'cases':>5}  {'agreement':<18} {counts}"


def _kind_table(evaluation: Evaluation) -> list[str]:
    """Agreement per case kind (none when no case has a kind)."""
    kinds = evaluation.by_kind()
    if not kinds:
        return []
    width = max(8, *(len(k) for k in kinds))
    rows = [_row(kind, tally, width) for kind, tally in kinds.items()]
    return ["", _header("kind", width), *rows, _row("all", evaluation.total(), width)]


def _outcome(case: Case, grade: Grade) -> str:
    if grade.score is None:
        return "judge error"
    return "false accept" if grade.passed else "false reject"


def _score_line(evaluation: Evaluation) -> str | None:
    pairs = [(c.score, g.score) for c, g in evaluation.graded if c.score is not None and g.score is not None]
    if not pairs:
        return None
    gap = sum(abs(label - judged) for label, judged in pairs) / len(pairs)
    return f"score: mean difference from the labeled score {gap:.1f} points over {len(pairs)} cases"


def format_report(evaluation: Evaluation, source: str, notes: list[str] | None = None) -> list[str]:
    """The printed evaluation, line by line (``notes`` just before the end); the last line is the agreement."""
    total = evaluation.total()
    lines = [
        f"judge-eval: {source}: {total.cases} cases, judge {evaluation.judge} "
        f"(a score of {PASS_SCORE:g}/10 or more counts as correct)",
        "",
        _header("type"),
    ]
    lines += [_row(kind, tally) for kind, tally in evaluation.by_type().items()]
    lines.append(_row("all", total))
    lines += _kind_table(evaluation)
    score = _score_line(evaluation)
    if score:
        lines += ["", score]
    disagreements = evaluation.disagreements()
    lines += ["", f"disagreements: {len(disagreements)}"]
    for case, grade in disagreements:
        kinds = f" [{', '.join(case.types)}]" if case.types else ""
        judged = f"{grade.score:g}/10" if grade.score is not None else "no grade"
        label = "correct" if case.correct else "wrong"
        if case.score is not None:
            label += f", {case.score:g}/10"
        about = "; ".join(x for x in (case.kind, case.note) if x)
        lines += [
            f"- line {case.line}: {case.check}{kinds}: {_outcome(case, grade)} — labeled {label}, judged {judged}"
            + (f" ({about})" if about else ""),
            f"    question: {_one_line(case.question)}",
            f"    expected: {_one_line(case.expected)}",
            f"    answer:   {_one_line(case.answer)}",
            f"    judge:    {_one_line(grade.error or grade.comment or '-')}",
        ]
    lines += [""] + (notes or []) + [f"agreement: {total.agreement()}"]
    return lines


def _shown(path: Path) -> str:
    """A path as given, the shipped cases relative to the working directory when they are under it."""
    if path != DEFAULT_CASES:
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _one_line(text: str) -> str:
    return printable(" ".join(text.split()))


def main_judge_eval(
    cases: Path | None,
    judge: str | None,
    config: Config | None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """``mmb-tui judge-eval [--cases FILE.jsonl] [--judge MODEL]`` (the shipped cases by default): 0 when
    evaluated, 2 for bad input."""
    out = out or sys.stdout
    err = err or sys.stderr
    cases = cases or DEFAULT_CASES
    try:
        loaded = read_cases(cases)
    except CaseError as exc:
        for problem in exc.problems:
            print(problem, file=err)
        return 2
    meter = UsageMeter()
    try:
        case_judge = make_judge(judge, config, meter)
    except ModelError as exc:
        print(f"--judge: {exc}; the offline rules judge is {RULES_JUDGE}", file=err)
        return 2
    evaluation = asyncio.run(evaluate(loaded, case_judge))
    used = meter.get("judge")
    tokens = (
        [f"judge tokens: {used.prompt_tokens} in, {used.completion_tokens} out, {used.calls} calls"]
        if used.calls
        else []
    )
    print("\n".join(format_report(evaluation, _shown(cases), tokens)), file=out)
    return 0
