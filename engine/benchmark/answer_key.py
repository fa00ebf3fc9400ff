"""KEY.md answer keys checked against the benchmark: every check's answer and declared dependencies
(``uses:``), declared aggregates recomputed (``sum:``), traps named; and ``check_dependencies`` for grading.

A key is optional: a benchmark in the seed's format (checks with their ``Correct answer:``, no KEY.md) is
valid and plays, its premises checked from the checks' correct answers; validate warns once
(``answer_key_warnings``) naming what a key would add. Where a KEY.md exists it must be complete.

The lines are read by ``engine/benchmark/key_parse.py`` (the format is described there). The engine checks
each check's ``uses:`` when the check is graded (``check_dependencies``): a fact that does not hold what the
directives lead to, or was not told since its last change, makes the grade a persona fault. A ``sum:`` total
must equal its expression and appear in the check's ``Correct answer:``.

Problems (of a KEY.md that exists): a check without an entry or without a ``uses:`` declaration (reported at
its ``❓`` line), an entry without ``answer:``, a ``uses:`` naming an unknown sheet or a fact id that never
exists, a wrong total, a total missing from the answer, an ``answer:`` that differs from the check, an entry,
sum or trap naming an unknown check, and an unknown trap type.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal, InvalidOperation

from engine.benchmark.directives import cached, ever_existing_facts, expected_facts
from engine.benchmark.key_parse import AnswerKey, SumLine, parse_key
from engine.benchmark.model import TRAP_TYPES, Benchmark, Check, Problem

KEY_FILE = "KEY.md"
ProblemReporter = Callable[[int, str], None]  # (line, message)

_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?")
_TOKEN = re.compile(r"\s*(?:(\$?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)|([-+×*]))")


def parse_number(text: str) -> Decimal:
    """``$1,050`` → 1050; raises ValueError when ``text`` is not one number."""
    cleaned = text.strip().lstrip("$").replace(",", "")
    if not re.fullmatch(r"\d+(?:\.\d+)?", cleaned):
        raise ValueError(f"not a number: {text!r}")
    return Decimal(cleaned)


def evaluate(expression: str) -> Decimal:
    """The value of ``a + b × c - d`` (× and * bind tighter); raises ValueError when malformed."""
    tokens: list[str] = []
    position = 0
    expression = expression.rstrip()
    while position < len(expression):
        match = _TOKEN.match(expression, position)
        if match is None or match.end() == position:
            raise ValueError(f"cannot read {expression[position:].strip()!r}")
        tokens.append(match.group(1) or match.group(2))
        position = match.end()
    if not tokens:
        raise ValueError("empty expression")
    total = Decimal(0)
    sign = Decimal(1)
    term: Decimal | None = None
    expect_number = True
    for token in tokens:
        if expect_number:
            if token in "+-×*":
                raise ValueError(f"operator {token!r} where a number was expected")
            value = parse_number(token)
            term = value if term is None else term * value
            expect_number = False
        elif token in "×*":
            expect_number = True
        elif token in "+-":
            total += sign * (term or Decimal(0))
            sign, term, expect_number = (Decimal(1) if token == "+" else Decimal(-1)), None, True
        else:
            raise ValueError(f"number {token!r} where an operator was expected")
    if expect_number:
        raise ValueError("expression ends with an operator")
    return total + sign * (term or Decimal(0))


def numbers_in(text: str) -> list[Decimal]:
    """Every number in free text, thousands commas removed: ``$1,740 (20.8 m²)`` → [1740, 20.8]."""
    result = []
    for token in _NUMBER.findall(text):
        try:
            result.append(Decimal(token.replace(",", "")))
        except InvalidOperation:  # pragma: no cover - the pattern only yields numbers
            continue
    return result


def _same_text(a: str, b: str) -> bool:
    return " ".join(a.split()) == " ".join(b.split())


def check_key_text(
    text: str,
    checks: Sequence[Check],
    file: str = KEY_FILE,
    facts: Mapping[str, set[str]] | None = None,
    chapter_of: Mapping[str, str] | None = None,
) -> list[Problem]:
    """Problems of a KEY.md ``text`` against the benchmark's ``checks``, reported against ``file``.

    ``facts`` (sheet -> every fact id it ever has) enables the check of the facts named in ``uses:``;
    ``chapter_of`` (check id -> chapter file) places a missing ``uses:`` at the check's line in its chapter.
    """
    key = parse_key(text)
    by_id = {check.id: check for check in checks}
    problems = [Problem(file=file, line=line, message=message) for line, message in key.problems]

    def problem(line: int, message: str) -> None:
        problems.append(Problem(file=file, line=line, message=message))

    for entry in key.entries.values():
        check = by_id.get(entry.check_id)
        if check is None:
            problem(entry.line, f"entry {entry.check_id} names no check in the chapters")
        elif entry.answer is None:
            problem(
                entry.line,
                f"entry {entry.check_id} has no 'answer:' line (write 'answer: {check.answer}', the check's "
                f"Correct answer)",
            )
        elif not _same_text(entry.answer, check.answer):
            problem(
                entry.answer_line,
                f"entry {entry.check_id}: answer {entry.answer!r} differs from the check's "
                f"Correct answer {check.answer!r}",
            )
    for line in key.sums:
        _check_sum(line, by_id, problem)
    for trap in key.traps:
        if trap.type not in TRAP_TYPES:
            problem(trap.line, f"unknown trap type {trap.type!r} (known: {', '.join(TRAP_TYPES)})")
        if not trap.checks:
            problem(trap.line, f"trap {trap.type} names no check: every trap is matched by a check")
        for check_id in trap.checks:
            if check_id not in by_id:
                problem(trap.line, f"trap {trap.type} names check {check_id}, which is not in the chapters")
    problems += _uses_problems(key, checks, file, facts, chapter_of)
    return problems


def _no_uses(check_id: str) -> str:
    return (
        f"check {check_id} declares no dependencies (add 'uses: <sheet> <id>, …' naming the facts its answer "
        f"reads under '## {check_id}' in {KEY_FILE}; 'uses: none' only when it reads no fact, e.g. a VOID check)"
    )


def _uses_problems(
    key: AnswerKey,
    checks: Sequence[Check],
    file: str,
    facts: Mapping[str, set[str]] | None,
    chapter_of: Mapping[str, str] | None,
) -> list[Problem]:
    """Every check declares its dependencies; each names a known sheet and a fact id that exists at some point."""
    problems: list[Problem] = []
    for check in checks:
        entry = key.entries.get(check.id)
        if entry is None or entry.uses is None:
            where = (chapter_of or {}).get(check.id)
            problems.append(
                Problem(file=where or file, line=check.line if where else 0, message=_no_uses(check.id))
            )
    if facts is None:
        return problems
    for entry in key.entries.values():
        for number, found in entry.uses_lines:
            for sheet, fact_id in found:
                if sheet not in facts:
                    known = ", ".join(sorted(facts)) or "none"
                    message = f"entry {entry.check_id}: uses names sheet {sheet!r}, which does not exist (sheets: {known})"
                    problems.append(Problem(file=file, line=number, message=message))
                elif fact_id not in facts[sheet]:
                    message = (
                        f"entry {entry.check_id}: uses names {sheet} {fact_id}, which is neither in {sheet}.md "
                        f"nor added by any 'Add to {sheet}' line"
                    )
                    problems.append(Problem(file=file, line=number, message=message))
    return problems


def _check_sum(line: SumLine, by_id: dict[str, Check], problem: ProblemReporter) -> None:
    check = by_id.get(line.check_id)
    if check is None:
        problem(line.line, f"sum names check {line.check_id!r}, which is not in the chapters")
        return
    try:
        value = evaluate(line.expression)
    except ValueError as error:
        problem(line.line, f"sum {line.check_id}: cannot compute {line.expression!r}: {error}")
        return
    try:
        total = parse_number(line.total)
    except ValueError:
        problem(line.line, f"sum {line.check_id}: declared total {line.total!r} is not a number")
        return
    if value != total:
        problem(
            line.line,
            f"sum {line.check_id}: the components add up to {_show(value)}, not the declared {line.total}",
        )
    if total not in numbers_in(check.answer):
        problem(
            line.line,
            f"sum {line.check_id}: the check's Correct answer {check.answer!r} does not contain "
            f"the total {_show(total)}",
        )


def _show(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _chapter_of(bench: Benchmark) -> dict[str, str]:
    return {check.id: str(bench.path / phase.chapter) for phase in bench.phases for check in phase.checks}


NO_KEY = (
    "no KEY.md: the premise of each grade is checked from the checks' correct answers alone. A key would add "
    "the facts each check reads ('uses:', checked when the check is graded), its sums recomputed ('sum:') and "
    "the traps named with the checks that read them ('trap:')"
)


def has_answer_key(bench: Benchmark) -> bool:
    """Whether the benchmark ships a ``KEY.md`` (optional: without one the checks' answers stand alone)."""
    return (bench.path / KEY_FILE).is_file()


def answer_key_warnings(bench: Benchmark) -> list[Problem]:
    """One warning for a benchmark with checks and no KEY.md, naming what a key would add; else none."""
    if has_answer_key(bench) or not bench.checks():
        return []
    return [Problem(file=str(bench.path / KEY_FILE), message=NO_KEY)]


def check_answer_key(bench: Benchmark) -> list[Problem]:
    """Problems found in ``bench.path / "KEY.md"``; none without the file (a key is optional)."""
    file = bench.path / KEY_FILE
    if not file.is_file():
        return []
    try:
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return [Problem(file=str(file), message=f"cannot read: {error}")]
    known = ever_existing_facts(bench)
    problems = check_key_text(text, bench.checks(), str(file), known, _chapter_of(bench))
    return problems + _not_yet_problems(parse_key(text), bench, known, str(file))


def _not_yet_problems(
    key: AnswerKey, bench: Benchmark, known: Mapping[str, set[str]], file: str
) -> list[Problem]:
    """A ``uses:`` fact that exists in the benchmark but is added only after its check is asked."""
    problems: list[Problem] = []
    for phase in bench.phases:
        for check in phase.checks:
            entry = key.entries.get(check.id)
            if entry is None:
                continue
            present = expected_facts(bench, phase.index, check.line)
            for number, found in entry.uses_lines:
                for sheet, fact_id in found:
                    if fact_id in known.get(sheet, set()) and (sheet, fact_id) not in present:
                        message = (
                            f"entry {check.id}: uses names {sheet} {fact_id}, which is added only after "
                            f"check {check.id} is asked"
                        )
                        problems.append(Problem(file=file, line=number, message=message))
    return problems


def _read_dependencies(bench: Benchmark) -> dict[str, list[tuple[str, str]]]:
    try:
        text = (bench.path / KEY_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    return {cid: list(e.uses) for cid, e in parse_key(text).entries.items() if e.uses is not None}


def check_dependencies(bench: Benchmark) -> dict[str, list[tuple[str, str]]]:
    """Check id -> the (sheet, fact id) pairs its ``uses:`` declares in KEY.md, in order; an empty list for
    ``uses: none``; a check without a declaration (or without KEY.md) is absent. Read once per benchmark."""
    found = cached("dependencies", bench, _read_dependencies)
    return {check_id: list(deps) for check_id, deps in found.items()}


def dependencies_of(bench: Benchmark, check_id: str) -> list[tuple[str, str]]:
    """``check_dependencies`` of one check (empty when undeclared), without copying every check's."""
    return list(cached("dependencies", bench, _read_dependencies).get(check_id, ()))
