"""When the story tells a sheet's facts, and the ``Edit`` lines that come before it (issue 31, item 9).

An ``Edit`` of a fact the agent was never told makes the story contradict its answer key: the persona tells
the edited value first, and later a "change" from a value the agent never heard (a HIST check of it has no
answer). So ``validate`` holds every ``Edit`` (a deletion, ``Edit … : —``, too) to a fact told before its
line. The replay reads the phases in order, each phase's lines in order, the way the scripted persona acts:

- a line naming a sheet in backticks (``Tell the `car` sheet``, ``Introduce yourself from your `profile`
  sheet``, an anchor's ``19:00 — Tell the `work` sheet``) tells that whole sheet from its line on;
- ``vars.require_all_facts`` naming a sheet tells it by the end of its phase (the gate holds the phase until
  then, but in any order: an ``Edit`` inside that phase needs a ``Tell`` line above it);
- a line the persona sends (``Say``/``Tell``/``Mention``/``Reply``/``Answer``/``Write``, an anchor's
  action) tells the facts it states: every number of the fact and half of its words;
- an ``Edit``/``Add to`` line tells its own fact (its gate holds the phase until the new text is told).

No sheet is told at the start, ``profile`` included: it is always in the persona's context, not the agent's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from engine.benchmark.directives import (
    Directive,
    directive_text,
    directives_of,
    expected_fact,
    expected_facts,
    phase_lines,
)
from engine.benchmark.jsblock import dry_run_block
from engine.benchmark.model import DELETED, Benchmark, Phase

_BACKTICK = re.compile(r"`([\w-]+)`")
_SENT = re.compile(r"(?i:say|tell|mention|reply|answer|write)\b")
_ANCHORED = re.compile(r"^\s*[-•*]?\s*\d{1,2}:\d{2}(?!\d)")
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")
_WORD = re.compile(r"[^\W\d_]{4,}")
_TEMPLATE = re.compile(r"\{\{[^}]*\}\}")


@dataclass
class _Told:
    """What the agent has been told so far: whole sheets and single facts."""

    sheets: set[str] = field(default_factory=set)
    facts: set[tuple[str, str]] = field(default_factory=set)

    def holds(self, sheet: str, fact_id: str) -> bool:
        return sheet in self.sheets or (sheet, fact_id) in self.facts


def untold_edits(bench: Benchmark) -> list[tuple[Phase, int, str]]:
    """(phase, line, message) for each ``Edit`` of a fact the story has not told at its line."""
    told = _Told()
    problems: list[tuple[Phase, int, str]] = []
    for phase in bench.phases:
        required = _required_sheets(phase.js or "")
        directives = {d.line: d for d in directives_of(bench, phase.index)}
        for number, raw in phase_lines(bench, phase):
            directive = directives.get(number)
            if directive is not None:
                message = _untold(bench, phase, directive, told, required)
                if message:
                    problems.append((phase, number, message))
                if directive.fact_id:
                    told.facts.add((directive.sheet, directive.fact_id))
                continue
            line = directive_text(raw)
            if line.startswith("❓"):
                continue
            named = {name for name in _BACKTICK.findall(line) if name in bench.sheets}
            told.sheets |= named
            if not named and (_SENT.match(line) or _ANCHORED.match(raw)):
                told.facts |= _stated(bench, phase, number, line, told)
        told.sheets |= {name for name in required if name in bench.sheets}
    return problems


def _untold(
    bench: Benchmark, phase: Phase, directive: Directive, told: _Told, required: tuple[str, ...]
) -> str:
    """The problem of an ``Edit`` of a fact not told at its line ("" when it was told, or is no such fact:
    the replay reports that one)."""
    sheet, fact_id = directive.sheet, directive.fact_id
    if directive.kind != "edit" or sheet not in bench.sheets or told.holds(sheet, fact_id):
        return ""
    if expected_fact(bench, phase.index, directive.line, sheet, fact_id) is None:
        return ""
    deletion = directive.text.strip() == DELETED
    what = f"Edit {sheet} {fact_id}: {DELETED}" if deletion else f"Edit {sheet} {fact_id}"
    heard = (
        "the agent would hear of the cancellation of a fact it never heard"
        if deletion
        else "the agent would hear the new text first, then a change from a value it never heard"
    )
    late = (
        " (this phase's vars.require_all_facts tells it only by the phase's end)" if sheet in required else ""
    )
    instead = f"remove the fact from {sheet}.md" if deletion else f"write the new text in {sheet}.md"
    return (
        f"{what}: the `{sheet}` sheet is not told before this line{late}, so {heard}; tell it first ('Tell the "
        f'`{sheet}` sheet.\' on a line above, or vars.require_all_facts = "{sheet}" in an earlier phase), '
        f"or {instead}"
    )


def _stated(bench: Benchmark, phase: Phase, number: int, line: str, told: _Told) -> set[tuple[str, str]]:
    """The facts of sheets not yet told that a sent line states: every number of the fact and half of its
    words of four letters or more."""
    said_numbers = set(_numbers(line))
    said_words = {w.lower() for w in _WORD.findall(line)}
    found: set[tuple[str, str]] = set()
    for (sheet, fact_id), text in expected_facts(bench, phase.index, before_line=number).items():
        if sheet in told.sheets or text.strip() == DELETED:
            continue
        numbers = _numbers(text)
        words = {w.lower() for w in _WORD.findall(_TEMPLATE.sub(" ", text))}
        if numbers and not set(numbers) <= said_numbers:
            continue
        if words and 2 * len(words & said_words) < len(words):
            continue
        if numbers or words:
            found.add((sheet, fact_id))
    return found


def _numbers(text: str) -> list[str]:
    return [n.replace(",", "") for n in _NUMBER.findall(_TEMPLATE.sub(" ", text))]


@lru_cache(maxsize=256)
def _required_sheets(code: str) -> tuple[str, ...]:
    """The sheets a js block's ``vars.require_all_facts`` names (a dry run; none for no block)."""
    if not code.strip():
        return ()
    return tuple(name for _, name in dry_run_block(code).sheet_refs)
