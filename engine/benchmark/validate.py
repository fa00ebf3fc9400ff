"""``mmb-tui validate`` (SPEC §3.3): every problem of a benchmark as ``file:line: message``, its warnings,
and a summary.

The loader reports what it meets while reading (benchmark.json, chapter files, fact ids, checks, templates,
dates and anchors); here come the checks that need the whole benchmark: JS dry runs and the sheets they
name, duplicate check ids, directives naming missing sheets, categories or facts, the time gate, and KEY.md
(answers, sums, traps and every check's ``uses:``). Problems fail validate and refuse a run; warnings
(``engine/benchmark/lints.py``: directive words the scripted persona would misread, sheet changes told only
in prose; a benchmark without KEY.md) are printed and never fail anything.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from engine.benchmark.answer_key import answer_key_warnings, check_answer_key
from engine.benchmark.check_kinds import INFERRED_MARK, kinds_of
from engine.benchmark.directives import directive_text, phase_lines, replay_problems
from engine.benchmark.facts import is_fact_id
from engine.benchmark.jsblock import dry_run_block
from engine.benchmark.lints import SHEET_MENTION, directive_placement, prose_changes
from engine.benchmark.loader import load_with_problems
from engine.benchmark.model import CHECK_TYPES, Benchmark, BenchmarkError, Phase, Problem
from engine.benchmark.telling import untold_edits

_EDIT = re.compile(r"Edit (\S+) (\S+):")
_ADD = re.compile(r"Add to (\S+) category (\S+):")


@dataclass
class Validation:
    """What validating a benchmark folder found: problems fail it (and refuse a run), warnings never do."""

    bench: Benchmark | None
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)


def load_benchmark(path: Path) -> Benchmark:
    """The benchmark at ``path``, checked; raises ``BenchmarkError`` with every problem found (warnings
    never stop it)."""
    bench, problems = validate_benchmark(path)
    if problems or bench is None:
        raise BenchmarkError(problems or [Problem(file=str(path), message="cannot load benchmark")])
    return bench


def validate_benchmark(path: Path) -> tuple[Benchmark | None, list[Problem]]:
    """Load ``path`` and run every check; the benchmark (None if unloadable) and its problems by file and
    line, warnings left out (``validate`` gives both)."""
    found = validate(path, warnings=False)
    return found.bench, found.problems


def validate(path: Path, warnings: bool = True) -> Validation:
    """Load ``path`` and run every check: problems and (unless ``warnings`` is false) warnings, each sorted
    by file and line, KEY.md last (a chapter's mistake is the cause of a key's)."""
    bench, problems = load_with_problems(path)
    found = Validation(bench=bench, problems=problems)
    if bench is not None:
        errors, lints = _findings(bench, warnings)
        found.problems += errors
        found.warnings = sorted(lints, key=_order)
    found.problems.sort(key=_order)
    return found


def _order(problem: Problem) -> tuple[bool, str, int]:
    return problem.file.endswith("KEY.md"), problem.file, problem.line


def check_benchmark(bench: Benchmark) -> list[Problem]:
    """The whole-benchmark checks on an already loaded benchmark: its problems (warnings left out)."""
    return _findings(bench, warnings=False)[0]


def benchmark_warnings(bench: Benchmark) -> list[Problem]:
    """The warnings of an already loaded benchmark: directive words the scripted persona would misread,
    sheet changes told only in prose, a missing KEY.md."""
    return sorted(_findings(bench, warnings=True)[1], key=_order)


def _findings(bench: Benchmark, warnings: bool) -> tuple[list[Problem], list[Problem]]:
    """(problems, warnings) of the whole-benchmark checks; the prose lints only when ``warnings``."""
    problems: list[Problem] = []
    lints: list[Problem] = []
    for phase in bench.phases:
        problems += _check_js(bench, phase)
        problems += _check_directives(bench, phase)
        errors, placement = directive_placement(bench, phase)
        problems += errors
        if warnings:
            lints += placement + prose_changes(bench, phase)
    problems += [
        Problem(file=_chapter_file(bench, phase), line=line, message=message)
        for phase, line, message in replay_problems(bench) + untold_edits(bench)
    ]
    problems += _check_duplicate_checks(bench)
    problems += _check_time_gate(bench)
    for name, sheet in bench.sheets.items():
        if not sheet.live_facts():
            problems.append(Problem(file=str(bench.path / f"{name}.md"), message="fact file has no facts"))
    problems += check_answer_key(bench)
    if warnings:
        lints += answer_key_warnings(bench) + _untagged_checks(bench)
    return problems, lints


def _untagged_checks(bench: Benchmark) -> list[Problem]:
    """One warning, at the first check without a ``[TYPE]`` tag, naming how many there are and what they lose."""
    phases = [(phase, check) for phase in bench.phases for check in phase.checks if not check.types]
    if not phases:
        return []
    phase, first = phases[0]
    count, total = len(phases), len(bench.checks())
    untagged = (
        f"none of the {total} checks has a [TYPE] tag"
        if count == total
        else f"{count} of {total} checks have no [TYPE] tag"
    )
    tags = " ".join(f"[{t}]" for t in kinds_of(first).types)  # its inferred kinds, as a start
    message = (
        f"{untagged} (the first: {first.id}): the report's per-type averages and its type filter then rest on "
        f"kinds inferred from each question and correct answer (marked AGG{INFERRED_MARK}), which can miss one "
        f"(a NEG whose cancellation neither text names); tag each check ('❓ {first.id} {tags} …') to declare "
        "its kinds"
    )
    return [Problem(file=_chapter_file(bench, phase), line=first.line, message=message)]


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
    for number, raw in phase_lines(bench, phase):
        names = SHEET_MENTION.findall(raw)
        line = directive_text(raw)
        if edit := _EDIT.match(line):
            names.append(edit.group(1))
            if not is_fact_id(edit.group(2)):
                problems.append(
                    Problem(file=file, line=number, message=f"Edit: malformed fact id {edit.group(2)!r}")
                )
        if add := _ADD.match(line):
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
    """Chapters, phases, live facts per sheet, checks in total and per type (a kind inferred for an untagged
    check counted apart, marked ``AGG~``), JS blocks and time anchors."""
    checks = bench.checks()
    per_type = Counter(t for c in checks for t in kinds_of(c).shown())
    type_parts = [
        f"{shown} {per_type[shown]}"
        for t in CHECK_TYPES
        for shown in (t, t + INFERRED_MARK)
        if per_type[shown]
    ]
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
    except (ValueError, OSError, RuntimeError):  # RuntimeError: a symbolic link loop
        return file


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def main_validate(paths: list[Path]) -> int:
    """Validate each benchmark folder: print its problems, then its warnings (``file:line: warning: …``),
    its summary and a verdict; 1 if any folder has a problem, else 0. A plain file among the paths (``mmb-tui
    validate benchmarks/*`` meets any file kept beside the folders) is skipped with a note."""
    failed = False
    for path in paths:
        if path.is_file():
            print(f"{_relative(str(path))}: skipped (a file, not a benchmark folder)")
            continue
        found = validate(path)
        for problem in found.problems:
            print(problem.model_copy(update={"file": _relative(problem.file)}))
        for warning in found.warnings:
            print(
                warning.model_copy(
                    update={"file": _relative(warning.file), "message": f"warning: {warning.message}"}
                )
            )
        if found.bench is not None:
            print(summary(found.bench))
        warned = _count(len(found.warnings), "warning") if found.warnings else ""
        if found.problems:
            verdict = _count(len(found.problems), "problem") + (f", {warned}" if warned else "")
        else:
            verdict = "OK" + (f" ({warned})" if warned else "")
        print(f"{_relative(str(path))}: {verdict}")
        failed = failed or bool(found.problems)
    return 1 if failed else 0
