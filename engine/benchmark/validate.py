"""``mmb-tui validate`` (SPEC §3.3): every problem of a benchmark as ``file:line: message``, and a summary.

The loader reports what it meets while reading (benchmark.json, chapter files, fact ids, checks, templates,
dates and anchors); here come the checks that need the whole benchmark: JS dry runs and the sheets they
name, duplicate check ids, scripted directives naming missing sheets, the time gate, and KEY.md.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from engine.benchmark.answer_key import check_answer_key
from engine.benchmark.facts import is_fact_id
from engine.benchmark.jsblock import dry_run_block
from engine.benchmark.loader import load_with_problems
from engine.benchmark.model import CHECK_TYPES, Benchmark, Phase, Problem

_SHEET_MENTION = re.compile(r"`([\w-]+)` sheet")
_EDIT = re.compile(r"Edit (\S+) (\S+):")
_ADD = re.compile(r"Add to (\S+) category (\S+):")


def validate_benchmark(path: Path) -> tuple[Benchmark | None, list[Problem]]:
    """Load ``path`` and run every check; the benchmark (None if unloadable) and problems by file and line."""
    bench, problems = load_with_problems(path)
    if bench is not None:
        problems += check_benchmark(bench)
    return bench, sorted(problems, key=lambda p: (p.file, p.line))


def check_benchmark(bench: Benchmark) -> list[Problem]:
    """The whole-benchmark checks on an already loaded benchmark."""
    problems: list[Problem] = []
    for phase in bench.phases:
        problems += _check_js(bench, phase)
        problems += _check_directives(bench, phase)
    problems += _check_duplicate_checks(bench)
    problems += _check_time_gate(bench)
    for name, sheet in bench.sheets.items():
        if not sheet.live_facts():
            problems.append(Problem(file=str(bench.path / f"{name}.md"), message="fact file has no facts"))
    problems += check_answer_key(bench)
    return problems


def _chapter_file(bench: Benchmark, phase: Phase) -> str:
    return str(bench.path / phase.chapter)


def _check_js(bench: Benchmark, phase: Phase) -> list[Problem]:
    if phase.js is None:
        return []
    file = _chapter_file(bench, phase)

    def file_line(line: int) -> int:  # block line 0 means the whole block: point at its fence
        return phase.js_line + line - 1 if line else phase.js_line - 1

    result = dry_run_block(phase.js)
    problems = [
        Problem(file=file, line=file_line(line), message=f"js: {message}")
        for line, message in result.problems
    ]
    for line, name in result.sheet_refs:
        if name not in bench.sheets:
            message = f"js: require_all_facts names sheet {name!r}, but there is no {name}.md"
            problems.append(Problem(file=file, line=file_line(line), message=message))
    if result.vars.get("require_all_checks") is True and not phase.checks:
        message = f"js: require_all_checks is set but phase {phase.title!r} has no checks"
        problems.append(Problem(file=file, line=file_line(0), message=message))
    return problems


def _check_directives(bench: Benchmark, phase: Phase) -> list[Problem]:
    """Sheets named in ``Tell the `x` sheet``, ``Edit x 1.2:`` and ``Add to x category 2:`` lines must exist."""
    problems: list[Problem] = []
    file = _chapter_file(bench, phase)
    for number, line in _phase_lines(bench, phase):
        names = _SHEET_MENTION.findall(line)
        if edit := _EDIT.match(line.strip()):
            names.append(edit.group(1))
            if not is_fact_id(edit.group(2)):
                problems.append(
                    Problem(file=file, line=number, message=f"Edit: malformed fact id {edit.group(2)!r}")
                )
        if add := _ADD.match(line.strip()):
            names.append(add.group(1))
            sheet = bench.sheets.get(add.group(1))
            known = {c.number for c in sheet.categories} if sheet else set()
            if sheet and (not add.group(2).isdigit() or int(add.group(2)) not in known):
                message = f"Add: sheet {add.group(1)!r} has no category {add.group(2)}"
                problems.append(Problem(file=file, line=number, message=message))
        for name in names:
            if name not in bench.sheets:
                message = f"phase refers to sheet {name!r}, but there is no {name}.md"
                problems.append(Problem(file=file, line=number, message=message))
    return problems


def _phase_lines(bench: Benchmark, phase: Phase) -> list[tuple[int, str]]:
    """The phase's text lines with their line numbers in the chapter file, its js block left out."""
    try:
        lines = (bench.path / phase.chapter).read_text(encoding="utf-8").splitlines()
    except OSError:
        return []
    js_end = phase.js_line + len((phase.js or "").splitlines())  # the closing fence
    result: list[tuple[int, str]] = []
    for number in range(phase.line + 1, len(lines) + 1):
        line = lines[number - 1]
        if line.startswith("## "):
            break
        if phase.js is None or not phase.js_line - 1 <= number <= js_end:
            result.append((number, line))
    return result


def _check_duplicate_checks(bench: Benchmark) -> list[Problem]:
    problems: list[Problem] = []
    first: dict[str, str] = {}
    for phase in bench.phases:
        for check in phase.checks:
            where = f"{phase.chapter}:{check.line}"
            if check.id in first:
                message = f"duplicate check id {check.id} (first at {first[check.id]})"
                problems.append(Problem(file=_chapter_file(bench, phase), line=check.line, message=message))
            else:
                first[check.id] = where
    return problems


def _check_time_gate(bench: Benchmark) -> list[Problem]:
    if not bench.time_gate:
        return []
    problems: list[Problem] = []
    for phase in bench.phases:
        if phase.anchors and phase.date is None:
            message = "time anchors without a date line ('2026-03-10, Tue'): the time gate cannot apply"
            problems.append(Problem(file=_chapter_file(bench, phase), line=phase.line, message=message))
    if bench.phases and not any(phase.anchors for phase in bench.phases):
        message = "time_gate is on but no phase has time anchors (lines starting 'HH:MM')"
        problems.append(Problem(file=str(bench.path / "benchmark.json"), message=message))
    return problems


def summary(bench: Benchmark) -> str:
    """Chapters, phases, live facts per sheet, checks in total and per type, JS blocks and time anchors."""
    checks = bench.checks()
    per_type = Counter(t for c in checks for t in c.types)
    untyped = sum(1 for c in checks if not c.types)
    type_parts = [f"{t} {per_type[t]}" for t in CHECK_TYPES if per_type[t]]
    if untyped:
        type_parts.append(f"untyped {untyped}")
    facts = ", ".join(f"{name} {len(sheet.live_facts())}" for name, sheet in sorted(bench.sheets.items()))
    js_blocks = sum(1 for p in bench.phases if p.js is not None)
    anchors = sum(len(p.anchors) for p in bench.phases)
    return "\n".join(
        [
            f"{bench.name}: {len(bench.chapters)} chapters, {len(bench.phases)} phases, "
            f"{js_blocks} js blocks, {anchors} time anchors",
            f"  facts: {facts or 'none'}",
            f"  checks: {len(checks)}" + (f" ({', '.join(type_parts)})" if type_parts else ""),
        ]
    )


def _relative(file: str) -> str:
    try:
        return str(Path(file).resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return file


def main_validate(paths: list[Path]) -> int:
    """Validate each benchmark folder, print problems and summaries; 1 if any problem, else 0."""
    failed = False
    for path in paths:
        bench, problems = validate_benchmark(path)
        for problem in problems:
            print(problem.model_copy(update={"file": _relative(problem.file)}))
        if bench is not None:
            print(summary(bench))
        verdict = f"{len(problems)} problem{'s' if len(problems) != 1 else ''}" if problems else "OK"
        print(f"{_relative(str(path))}: {verdict}")
        failed = failed or bool(problems)
    return 1 if failed else 0
