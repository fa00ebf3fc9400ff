"""The machine reading of a phase's directive lines, and the replay of the sheets they lead to.

A phase's ``Edit``/``Add to`` lines say exactly how the persona's live sheets change::

    Edit bathroom 1.2: Wall tile — … $55 per m² …      <- replace the fact's whole text ("—" deletes it)
    Add to kitchen category 1: Pull-out pantry unit — $320   <- a new fact in category 1

A line is read after stripping leading list marks (``- • *``), whitespace and an ``HH:MM —`` anchor, the
way the scripted persona reads it. An added fact gets the id ``next_fact_id`` gives when every directive of
the benchmark is replayed in order from the original sheets: the lowest deleted id of its category, else the
highest + 1. ``expected_facts`` is that replay up to a point: what each fact should hold when a check is
asked. Results are computed once per ``Benchmark`` object (the engine asks at every evaluation).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal, TypeVar, cast

from engine.benchmark.facts import next_fact_id
from engine.benchmark.model import Benchmark, Fact, Phase, Sheet

EDIT = re.compile(r"^Edit\s+(?P<sheet>[\w-]+)\s+(?P<id>\d+\.\d+)\s*:\s*(?P<text>.+)$")
ADD = re.compile(r"^Add to\s+(?P<sheet>[\w-]+)\s+category\s+(?P<cat>\d+)\s*:\s*(?P<text>.+)$")
_ANCHOR = re.compile(r"^\d{1,2}:\d{2}\s+")

T = TypeVar("T")


@dataclass(frozen=True)
class Directive:
    """One ``Edit``/``Add to`` line of a phase."""

    kind: Literal["edit", "add"]
    sheet: str
    fact_id: (
        str  # for "add": the id it gets in the replay of the whole benchmark ("" if its category is missing)
    )
    text: str  # the new full fact text ("—" deletes), templates not rendered
    line: int  # line in the chapter file
    category: int | None = None  # for "add"


def directive_text(raw: str) -> str:
    """A phase line as the scripted persona reads it: list marks, whitespace and an ``HH:MM —`` anchor off."""
    line = raw.strip().lstrip("-•* ").strip()
    if anchor := _ANCHOR.match(line):
        line = line[anchor.end() :].strip().lstrip("—–-").strip()
    return line


def phase_lines(bench: Benchmark, phase: Phase) -> list[tuple[int, str]]:
    """The phase's text lines with their line numbers in the chapter file, its js block left out."""
    return cached(f"phase_lines:{phase.index}", bench, lambda b: _phase_lines(b, phase))


def _chapter_lines(bench: Benchmark, chapter: str) -> list[str]:
    """A chapter file's lines, read once per benchmark object (a phase reads its own slice of them)."""

    def read(b: Benchmark) -> list[str]:
        try:
            return (b.path / chapter).read_text(encoding="utf-8").removeprefix("\ufeff").splitlines()
        except (OSError, UnicodeDecodeError):
            return []

    return cached(f"chapter_lines:{chapter}", bench, read)


def _phase_lines(bench: Benchmark, phase: Phase) -> list[tuple[int, str]]:
    lines = _chapter_lines(bench, phase.chapter)
    if not lines:
        return []
    js_end = phase.js_line + len((phase.js or "").splitlines())  # the closing fence
    result: list[tuple[int, str]] = []
    for number in range(phase.line + 1, len(lines) + 1):
        line = lines[number - 1]
        if line.startswith("## ") or line.rstrip() == "##":
            break
        if phase.js is None or not phase.js_line - 1 <= number <= js_end:
            result.append((number, line))
    return result


def parse_directive(raw: str, line: int) -> Directive | None:
    """An ``Edit``/``Add to`` line as a Directive (the fact id of an add still empty), else None."""
    text = directive_text(raw)
    if edit := EDIT.match(text):
        return Directive("edit", edit.group("sheet"), edit.group("id"), edit.group("text").strip(), line)
    if add := ADD.match(text):
        category = int(add.group("cat"))
        return Directive("add", add.group("sheet"), "", add.group("text").strip(), line, category)
    return None


# ---- per-benchmark cache ---------------------------------------------------------------------------

_CACHE: dict[tuple[str, int], tuple[weakref.ref[Any], Any]] = {}


def cached(name: str, bench: Benchmark, compute: Callable[[Benchmark], T]) -> T:
    """``compute(bench)`` once per benchmark object (dropped when the object goes away)."""
    key = (name, id(bench))
    hit = _CACHE.get(key)
    if hit is not None and hit[0]() is bench:
        return cast(T, hit[1])
    value = compute(bench)
    _CACHE[key] = (weakref.ref(bench), value)
    weakref.finalize(bench, _CACHE.pop, key, None)
    return value


# ---- the replay ------------------------------------------------------------------------------------


@dataclass
class _Replay:
    directives: dict[int, list[Directive]]
    original: dict[tuple[str, str], str]
    problems: list[tuple[Phase, int, str]]


def _apply(sheets: dict[str, Sheet], directive: Directive) -> str:
    """Apply one directive to working copies of the sheets; the id it touched ("" when it cannot apply)."""
    sheet = sheets.get(directive.sheet)
    if sheet is None:
        return ""
    if directive.kind == "edit":
        fact = sheet.find(directive.fact_id)
        if fact is None:
            return ""
        fact.text = directive.text
        return directive.fact_id
    assert directive.category is not None
    try:
        fact_id = next_fact_id(sheet, directive.category)
    except ValueError:
        return ""
    existing = sheet.find(fact_id)
    if existing is not None:  # a deleted id reused
        existing.text = directive.text
    else:
        target = next(c for c in sheet.categories if c.number == directive.category)
        target.facts.append(Fact(id=fact_id, text=directive.text))
    return fact_id


def _replay(bench: Benchmark) -> _Replay:
    sheets = {name: sheet.model_copy(deep=True) for name, sheet in bench.sheets.items()}
    original = {
        (name, f.id): f.text for name, s in bench.sheets.items() for c in s.categories for f in c.facts
    }
    per_phase: dict[int, list[Directive]] = {}
    problems: list[tuple[Phase, int, str]] = []
    for phase in bench.phases:
        found: list[Directive] = []
        for number, raw in phase_lines(bench, phase):
            directive = parse_directive(raw, number)
            if directive is None:
                continue
            fact_id = _apply(sheets, directive)
            if directive.kind == "edit" and not fact_id and directive.sheet in sheets:
                message = (
                    f"Edit {directive.sheet} {directive.fact_id}: the sheet has no fact {directive.fact_id} at "
                    f"this point (the original sheet and the Add lines before it); use 'Add to' for a new fact"
                )
                problems.append((phase, number, message))
            if directive.kind == "add":
                directive = Directive(
                    "add", directive.sheet, fact_id, directive.text, number, directive.category
                )
            found.append(directive)
        per_phase[phase.index] = found
    return _Replay(directives=per_phase, original=original, problems=problems)


def phase_directives(bench: Benchmark) -> dict[int, list[Directive]]:
    """Per phase index (every phase, possibly with an empty list), its Edit/Add directives in text order;
    the ids of adds resolved by replaying the whole benchmark from its original sheets."""
    replay = cached("replay", bench, _replay)
    return {index: list(found) for index, found in replay.directives.items()}


def expected_facts(
    bench: Benchmark, phase_index: int, before_line: int | None = None
) -> dict[tuple[str, str], str]:
    """(sheet, fact id) -> expected text after replaying every directive of the phases before
    ``phase_index``, plus those of that phase whose line is before ``before_line`` (all of them when None).

    Every fact of every sheet that exists at that point is included, deleted ones as ``"—"``; facts added
    only later are absent. Templates are not rendered.
    """
    replay = cached("replay", bench, _replay)
    marks = cached("replay_marks", bench, _marks)
    start = min(phase_index // MARK_STRIDE, len(marks) - 1)  # replay from the mark before, not from the start
    facts = dict(marks[start])
    for index in range(start * MARK_STRIDE, phase_index + 1):
        last = index == phase_index
        _apply_phase(facts, replay.directives.get(index, ()), before_line if last else None)
    return facts


MARK_STRIDE = 32  # phases between two kept states of the replay: validate stays linear in the phases


def _apply_phase(
    facts: dict[tuple[str, str], str], found: Iterable[Directive], before_line: int | None
) -> None:
    for directive in found:
        if before_line is not None and directive.line >= before_line:
            break
        if directive.fact_id and (directive.kind == "add" or (directive.sheet, directive.fact_id) in facts):
            facts[(directive.sheet, directive.fact_id)] = directive.text


def _marks(bench: Benchmark) -> list[dict[tuple[str, str], str]]:
    """The expected facts at the start of phases 0, ``MARK_STRIDE``, 2 × ``MARK_STRIDE`` …"""
    replay = cached("replay", bench, _replay)
    facts = dict(replay.original)
    marks = [dict(facts)]
    last = max(replay.directives, default=-1)
    for index in range(last + 1):
        _apply_phase(facts, replay.directives.get(index, ()), None)
        if (index + 1) % MARK_STRIDE == 0:
            marks.append(dict(facts))
    return marks


def directives_of(bench: Benchmark, phase_index: int) -> list[Directive]:
    """The Edit/Add directives of one phase, in text order (``phase_directives`` without copying them all)."""
    return list(cached("replay", bench, _replay).directives.get(phase_index, ()))


def expected_fact(
    bench: Benchmark, phase_index: int, before_line: int | None, sheet: str, fact_id: str
) -> str | None:
    """What ``expected_facts`` says of one fact (``None``: it does not exist at that point), from the
    directives of that fact alone: the same at the last phase of a long benchmark as at the first."""
    replay = cached("replay", bench, _replay)
    history = cached("fact history", bench, _fact_history)
    text = replay.original.get((sheet, fact_id))
    for index, directive in history.get((sheet, fact_id), ()):
        if index > phase_index or (
            index == phase_index and before_line is not None and directive.line >= before_line
        ):
            break
        if directive.kind == "add" or text is not None:
            text = directive.text
    return text


def _fact_history(bench: Benchmark) -> dict[tuple[str, str], list[tuple[int, Directive]]]:
    """(sheet, fact id) -> its directives with their phase index, in the replay's order."""
    replay = cached("replay", bench, _replay)
    history: dict[tuple[str, str], list[tuple[int, Directive]]] = {}
    for index in sorted(replay.directives):
        for directive in replay.directives[index]:
            if directive.fact_id:
                history.setdefault((directive.sheet, directive.fact_id), []).append((index, directive))
    return history


def ever_existing_facts(bench: Benchmark) -> dict[str, set[str]]:
    """Sheet name -> every fact id it ever has: the original ones and those any Add directive creates (computed
    once per benchmark object; the caller must not change it)."""
    return cached("ever_existing", bench, _ever_existing_facts)


def _ever_existing_facts(bench: Benchmark) -> dict[str, set[str]]:
    known = {name: {f.id for c in sheet.categories for f in c.facts} for name, sheet in bench.sheets.items()}
    for found in phase_directives(bench).values():
        for directive in found:
            if directive.kind == "add" and directive.fact_id and directive.sheet in known:
                known[directive.sheet].add(directive.fact_id)
    return known


def replay_problems(bench: Benchmark) -> list[tuple[Phase, int, str]]:
    """(phase, line, message) for each ``Edit`` naming a fact its sheet does not have at that point."""
    return list(cached("replay", bench, _replay).problems)
