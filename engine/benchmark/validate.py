"""``mmb-tui validate`` (SPEC §3.3): every problem of a benchmark as ``file:line: message``, and a summary.

The loader reports what it meets while reading (benchmark.json, chapter files, fact ids, checks, templates,
dates and anchors); here come the checks that need the whole benchmark: JS dry runs and the sheets they
name, duplicate check ids, directives naming missing sheets, categories or facts, directive words where the
scripted persona would misread them (at the start of a wrapped prose line, or inside one), the time gate,
and KEY.md (answers, sums, traps and every check's ``uses:``).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from engine.benchmark.answer_key import check_answer_key
from engine.benchmark.directives import directive_text, phase_lines, replay_problems
from engine.benchmark.facts import is_fact_id
from engine.benchmark.jsblock import dry_run_block
from engine.benchmark.loader import load_with_problems
from engine.benchmark.model import CHECK_TYPES, Benchmark, BenchmarkError, Phase, Problem

_SHEET_MENTION = re.compile(r"`([\w-]+)` sheet")
_EDIT = re.compile(r"Edit (\S+) (\S+):")
_ADD = re.compile(r"Add to (\S+) category (\S+):")


def load_benchmark(path: Path) -> Benchmark:
    """The benchmark at ``path``, checked; raises ``BenchmarkError`` with every problem found."""
    bench, problems = validate_benchmark(path)
    if problems or bench is None:
        raise BenchmarkError(problems or [Problem(file=str(path), message="cannot load benchmark")])
    return bench


def validate_benchmark(path: Path) -> tuple[Benchmark | None, list[Problem]]:
    """Load ``path`` and run every check; the benchmark (None if unloadable) and problems by file and line."""
    bench, problems = load_with_problems(path)
    if bench is not None:
        problems += check_benchmark(bench)
    return bench, sorted(problems, key=lambda p: (p.file.endswith("KEY.md"), p.file, p.line))  # causes first


def check_benchmark(bench: Benchmark) -> list[Problem]:
    """The whole-benchmark checks on an already loaded benchmark."""
    problems: list[Problem] = []
    for phase in bench.phases:
        problems += _check_js(bench, phase)
        problems += _check_directives(bench, phase)
        problems += _check_directive_placement(bench, phase)
    problems += [
        Problem(file=_chapter_file(bench, phase), line=line, message=message)
        for phase, line, message in replay_problems(bench)
    ]
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
    for number, raw in phase_lines(bench, phase):
        names = _SHEET_MENTION.findall(raw)
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


_SAY_WORDS = r"(?i:say|tell|mention|reply|answer|write)\b"  # what the scripted persona sends (any case)
_DIRECTIVE_START = re.compile(rf"(?:{_SAY_WORDS}|Ask\b|Edit\s|Add to\s)")
_LOWER_SAY_START = re.compile(r"(?:say|tell|mention|reply|answer|write)\b")
_SAY_START = re.compile(_SAY_WORDS)
_MID_LINE = (
    re.compile(r"[.!?…][\"”’)]*\s+(?P<word>Say|Tell)\b(?!\s+(?:the\s+)?`)"),  # "… today. Say …", "… so. Say"
    re.compile(r"\s(?P<word>Say|Tell):?\s*[\"“]"),  # '… Say: "…"'
    re.compile(r"\s(?P<word>Edit)\s+[\w-]+\s+\d+\.\d+\s*:"),
    re.compile(r"\s(?P<word>Add to)\s+[\w-]+\s+category\s+\d+\s*:"),
)
_ANCHOR_LINE = re.compile(r"\d{1,2}:\d{2}(?!\d)")
_DATE_LINE = re.compile(r"\d{4}-\d{2}-\d{2}\b")
_WRAPPED = (
    "a directive word starts a wrapped line: put the directive on its own line (blank line before) or re-wrap "
    "the paragraph"
)


def _line_kinds(lines: list[tuple[int, str]]) -> list[str]:
    """Each phase line as blank, heading, fence, check, anchor, directive or prose."""
    kinds: list[str] = []
    in_fence = False
    for raw in (text for _, text in lines):
        stripped = raw.strip()
        previous = kinds[-1] if kinds else "blank"
        if stripped.startswith("```") or in_fence:
            kinds.append("fence")  # a code block, its fences included
            in_fence = in_fence != stripped.startswith("```")
        elif not stripped:
            kinds.append("blank")
        elif stripped.startswith("#"):
            kinds.append("heading")
        elif "❓" in stripped[:3] or (
            previous == "check" and (raw[:1].isspace() or stripped.lower().startswith("correct answer:"))
        ):
            kinds.append("check")
        elif _ANCHOR_LINE.match(stripped) or _DATE_LINE.match(stripped):
            kinds.append("anchor")  # a date line counts as one here
        elif _DIRECTIVE_START.match(directive_text(raw)):
            kinds.append("directive")
        else:
            kinds.append("prose")
    return kinds


def _check_directive_placement(bench: Benchmark, phase: Phase) -> list[Problem]:
    """Directive words where the scripted persona misreads them: starting a line that continues a prose
    paragraph (it would send a fragment of the prose), inside a prose line (never carried out), or a
    ``Say`` that continues on the next line (only its first line is sent)."""
    lines = phase_lines(bench, phase)
    kinds = _line_kinds(lines)
    file = _chapter_file(bench, phase)
    problems: list[Problem] = []
    for k, ((number, raw), kind) in enumerate(zip(lines, kinds, strict=True)):
        previous = kinds[k - 1] if k else "blank"
        text = raw.strip()
        bullet = text[:1] in "-•*" and text[1:2] == " "
        if kind == "directive" and not bullet:
            lower_wrap = _LOWER_SAY_START.match(text) and previous in ("prose", "anchor", "directive")
            if previous == "prose" or lower_wrap:
                problems.append(Problem(file=file, line=number, message=_WRAPPED))
                continue
        if kind == "prose" and previous == "directive" and not bullet:
            said = directive_text(lines[k - 1][1])
            unclosed = said.count('"') % 2 == 1 or said.count("“") > said.count("”")
            if (
                (text[:1].islower() or unclosed)
                and _SAY_START.match(said)
                and not _SHEET_MENTION.search(said)
            ):
                message = (
                    "a Say/Tell line continues on this line, but only its own line is sent: keep each "
                    "Say on one line"
                )
                problems.append(Problem(file=file, line=number, message=message))
                continue
        if kind in ("prose", "anchor", "directive"):
            body = directive_text(raw)
            for pattern in _MID_LINE:
                if match := pattern.search(body, 1):
                    message = (
                        f"'{match.group('word')}' in the middle of a line is never carried out as a directive "
                        f"by the scripted persona: put the directive on its own line (blank line before)"
                    )
                    problems.append(Problem(file=file, line=number, message=message))
                    break
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
