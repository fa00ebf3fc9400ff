"""Premises from the transcript: whether what a check asks was told to the agent, in its current form.

"Told" compares values, never wording (``engine/grading/told.py``, over the messages of ``sent.py``):
``5,100 EUR``, ``€5,100`` and ``5.1k euros`` are one amount, ``Mon–Thu`` names Tuesday, ``6:30 pm`` is 18:30.
When a check is graded, the values its correct answer states (the parts of a KEY.md ``sum:`` line instead of
its total; the facts its ``uses:`` names) must each have been carried before the question, and a value a change
brought in after that change. A total no sheet states and no ``sum:`` explains is followed to the live facts it
rests on (``engine/grading/totals.py``): their values must be told as those of the facts are. A value found
nowhere in the benchmark's sheets and phase texts cannot be told and is not looked for; a check whose answer
is that nothing was told (VOID) has no premise. Each fault has its evidence (for the transcript and the
report) and advice for the persona that names the fact to tell, never the value.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from functools import lru_cache

from engine.benchmark.answer_key import KEY_FILE, dependencies_of
from engine.benchmark.directives import cached
from engine.benchmark.key_parse import parse_key
from engine.benchmark.model import DELETED, Benchmark, Check
from engine.benchmark.templates import render_templates
from engine.grading.changes import introduced
from engine.grading.sent import Window, carriers, covered, last_sent, log_sent, since_change
from engine.grading.told import Untold, before_change, names_of, source_keys, told_problem, untold
from engine.grading.told_values import Value, base_key, message_keys, plain_values, strong_values
from engine.grading.totals import Part, decompositions
from engine.state import RunState

__all__ = ["Premise", "log_sent", "premise_of", "set_aside_note", "told_problem", "untold"]

_NOTHING_TOLD = re.compile(
    r"\b(never|not|didn't|did not|haven't|have not|wasn't|was not)\b.{0,20}\b(told|mentioned|said|shared)\b",
    re.IGNORECASE,
)
_UNITS = frozenset({"n:0", "n:1"})


@dataclass
class Premise:
    """A grade's premise as found in the transcript: the values looked for, why it failed (if it did), and
    what the persona should tell (naming facts, never values)."""

    checked: list[str]
    faults: list[str]
    advice: list[str] = field(default_factory=list)

    def fault(self, evidence: str, advice: str) -> None:
        self.faults.append(evidence)
        if advice not in self.advice:
            self.advice.append(advice)


def _sum_parts(bench: Benchmark, check_id: str) -> tuple[list[Value], set[str]] | None:
    """The parts of the check's KEY.md ``sum:`` line as values, and the keys of its total; None: no sum."""

    def read(b: Benchmark) -> dict[str, tuple[str, str]]:
        try:
            text = (b.path / KEY_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return {}
        return {line.check_id: (line.expression, line.total) for line in parse_key(text).sums}

    found = cached("sums", bench, read).get(check_id)
    if found is None:
        return None
    expression, total = found
    # a part of 0 or 1 (a count's unit: ``1 + 1 + 1``) states nothing to tell
    parts = [
        v
        for v in strong_values(expression, frozenset())
        if v.kind in ("amount", "number") and base_key(v) not in _UNITS
    ]
    return parts, {base_key(v) for v in strong_values(total, frozenset())}


def nothing_told(check: Check) -> bool:
    """A check whose correct answer is that it was never told (VOID): it has no premise to look for."""
    return "VOID" in check.types or bool(_NOTHING_TOLD.search(check.answer))


def premise_of(state: RunState, bench: Benchmark, check: Check, question_no: int) -> Premise:
    """The premise of grading ``check`` whose question was message ``question_no``, from the transcript."""
    premise = Premise([], [])
    if not covered(state) or nothing_told(check):
        return premise
    names = names_of(bench)
    answer = render_templates(check.answer, state.start_date)
    question = render_templates(check.question, state.start_date)
    question_keys = message_keys(question)
    sources = source_keys(bench, state)
    summed = _sum_parts(bench, check.id)
    parts, totals = summed or ([], set())
    stated = [
        v
        for v in strong_values(answer, names)
        if not question_keys.intersection(v.keys) and base_key(v) not in totals
    ]
    values = [v for v in stated if sources.intersection(v.keys)]
    values += [
        p for p in parts if sources.intersection(p.keys) and base_key(p) not in {base_key(v) for v in values}
    ]
    premise.checked = [v.label for v in values]
    for value in values:
        _value_fault(state, bench, value, question_no, premise)
    uses = dependencies_of(bench, check.id)
    for sheet_name, fact_id in uses:
        sheet = state.sheets.get(sheet_name)
        fact = sheet.find(fact_id) if sheet else None
        if fact is None or fact.text.strip() == DELETED:
            continue
        premise.checked.append(f"{sheet_name} {fact_id}")
        missing = untold(state, bench, sheet_name, fact, question_no)
        if missing:
            premise.fault(
                f"{sheet_name} {fact_id} as it stands was not told before the question ({missing.labels()} not "
                f"sent{' after its change' if missing.changed else ''})",
                _tell(sheet_name, fact_id, bool(missing.changed)),
            )
    if summed is None:
        for total in _unexplained_totals(stated, sources):
            _total_faults(state, bench, total, question, question_no, set(uses), premise)
    premise.checked = list(dict.fromkeys(premise.checked))  # a range of days is one label
    if not premise.checked:
        _words_premise(state, answer, question_keys, sources, question_no, premise)
    return premise


def _tell(sheet: str, fact_id: str, changed: bool) -> str:
    """Advice naming the fact to tell (never its value: the persona may not learn the answer from a grade)."""
    what = "what changed in " if changed else ""
    return (
        f"send {what}{sheet} {fact_id} as your sheet has it now to the assistant with send_message, then "
        f"facts_mark_told({sheet}, [{fact_id}])"
    )


_FROM_PHASE = "tell the assistant what the phase text says about it with send_message"


def _value_fault(state: RunState, bench: Benchmark, value: Value, question_no: int, premise: Premise) -> None:
    last = last_sent(state, value, question_no)
    if last is None:
        holder = _fact_holding(state, value)
        advice = _tell(*holder, False) if holder else _FROM_PHASE
        premise.fault(f"{value.label!r} was never sent to the assistant before the question", advice)
        return
    change = _latest_change_bringing(state, bench, value)
    if change is not None and not carriers(state, value, since_change(state, question_no, change)):
        sheet, _, fact_id = change.rpartition(" ")
        premise.fault(
            f"{value.label!r} was last sent in #{last}, before {change} was changed to hold it",
            _tell(sheet, fact_id, True),
        )


def _fact_holding(state: RunState, value: Value) -> tuple[str, str] | None:
    """The live fact stating ``value`` (a changed one first), if any."""
    found = [
        (state.changed_at.get(f"{sheet.name} {fact.id}", -1), sheet.name, fact.id)
        for sheet in state.sheets.values()
        for category in sheet.categories
        for fact in category.facts
        if fact.text.strip() != DELETED and set(value.keys) & _fact_keys(fact.text)
    ]
    return max(found)[1:] if found else None


@lru_cache(maxsize=4096)
def _fact_keys(text: str) -> frozenset[str]:
    return frozenset(message_keys(text))


def _latest_change_bringing(state: RunState, bench: Benchmark, value: Value) -> str | None:
    """The live fact, changed in this run, whose last change brought ``value`` in (module docstring)."""
    best: tuple[int, str] | None = None
    names = names_of(bench)
    for sheet in state.sheets.values():
        for category in sheet.categories:
            for fact in category.facts:
                key = f"{sheet.name} {fact.id}"
                changed = state.changed_at.get(key)
                prior = before_change(state, bench, sheet.name, fact) if changed is not None else None
                if changed is None or prior is None or fact.text.strip() == DELETED:
                    continue
                if any(set(value.keys) & set(v.keys) for v in introduced(prior, fact.text, names)):
                    if best is None or changed > best[0]:
                        best = (changed, key)
    return best[1] if best else None


def _unexplained_totals(stated: list[Value], sources: set[str]) -> list[Value]:
    """The answer's figures no text states (totals) that its other figures do not add up to."""
    figures = [v for v in stated if v.kind in ("amount", "number") and v.amount is not None]
    totals = []
    for total in (v for v in figures if not sources.intersection(v.keys)):
        others = [v.amount for v in figures if v is not total and v.amount is not None]
        sums = (
            sum(c) for size in range(2, min(len(others), 8) + 1) for c in itertools.combinations(others, size)
        )
        if not any(s == total.amount for s in sums):
            totals.append(total)
    return totals


def _total_faults(
    state: RunState,
    bench: Benchmark,
    total: Value,
    question: str,
    question_no: int,
    declared: set[tuple[str, str]],
    premise: Premise,
) -> None:
    """A total's parts found in the live sheets (``engine/grading/totals.py``): told as a fact's values are.
    Any way of making the total that was told in full holds the premise; else the way missing least is the
    fault."""
    ways = decompositions(state.sheets, total, question, names_of(bench))
    best: tuple[int, list[tuple[Part, Untold]], list[tuple[Part, int]]] | None = None
    for way in ways:
        missing = [
            (part, gap) for part, cents in way if (gap := _part_gap(state, bench, part, cents, question_no))
        ]
        if best is None or len(missing) < best[0]:
            best = (len(missing), missing, way)
    if best is None:
        return
    premise.checked += [f"{part.sheet} {part.fact.id}" for part, _ in best[2]]
    for part, gap in best[1]:
        if (part.sheet, part.fact.id) in declared:
            continue  # its ``uses:`` line was checked already
        when = f"after its change (#{gap.changed})" if gap.changed else "to the assistant before the question"
        premise.fault(
            f"the total {total.label!r} rests on {part.sheet} {part.fact.id}, whose {gap.labels()} was not sent {when}",
            _tell(part.sheet, part.fact.id, bool(gap.changed)) + " (the total asked adds it up)",
        )


def _part_gap(state: RunState, bench: Benchmark, part: Part, cents: int, question_no: int) -> Untold | None:
    """What of the amount a fact gives a total was not told: for the way of stating it that misses least."""
    key = f"{part.sheet} {part.fact.id}"
    prior = before_change(state, bench, part.sheet, part.fact)
    new = (
        {k for v in introduced(prior, part.fact.text, names_of(bench)) for k in v.keys}
        if prior is not None
        else set()
    )
    since, anytime = since_change(state, question_no, key), Window(question_no)
    gaps: list[tuple[int, int, Untold]] = []
    for term in (t for t in part.terms if t.cents == cents):
        missing = tuple(
            v for v in term.values if not carriers(state, v, since if new & set(v.keys) else anytime)
        )
        changed = state.changed_at.get(key, 0) if any(new & set(v.keys) for v in missing) else 0
        # a tie goes to a product's factors: "$55" says what changed better than "$1,375"
        gaps.append((len(missing), -len(term.values), Untold(part.sheet, part.fact.id, missing, changed)))
    gap = min(gaps, key=lambda g: g[:2])[2]
    return gap if gap.missing else None


def _words_premise(
    state: RunState,
    answer: str,
    question_keys: set[str],
    sources: set[str],
    question_no: int,
    premise: Premise,
) -> None:
    """No number, date or name in the answer: its own words, half of them at least."""
    words = plain_values(answer, exclude={k[2:] for k in question_keys if k[:2] == "s:"})
    words = [v for v in words if v.key in sources]
    if not words:
        return
    premise.checked = [v.label for v in words]
    carried = [v for v in words if last_sent(state, v, question_no) is not None]
    if len(carried) < (len(words) + 1) // 2:
        unsent = ", ".join(repr(v.label) for v in words if v not in carried)
        premise.fault(
            f"the answer's words {unsent} were never sent to the assistant",
            _FROM_PHASE,
        )


def set_aside_note(premise: Premise) -> str:
    """The persona's word on a grade set aside: what to tell (facts named, never values or the answer)."""
    advice = premise.advice or [
        "make each fact the phase's Edit and Add lines change hold exactly their text (facts_edit), then tell "
        "it with send_message and mark it told"
    ]
    return (
        " This grade is set aside (not the assistant's score): what the check asks was not told to the "
        f"assistant before the question. To do: {'; '.join(advice)}. Tell each change the phase describes "
        "before you ask about it; carry on with the next step."
    )
