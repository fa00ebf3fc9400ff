"""Premises from the transcript: whether what a check asks was told to the agent, in its current form.

Every message the agent received is logged as its keys (``log_sent``, ``engine/grading/told_values.py``) with the
phase it was sent in and its transcript number. When a check is graded, the values its correct answer
states (dates, numbers, names; the parts of a KEY.md ``sum:`` line instead of its total; the key content
of the facts its ``uses:`` names) must each have been carried by a message sent before the question, and a
value a sheet change brought in (a fact edited or added during the run whose benchmark text lacked it)
by a message sent after that change or in the phase it was made in (a persona may tell, then edit). A
value found nowhere in the benchmark's sheets and phase texts (a total, a derived figure) cannot be
told and is not looked for; a check whose answer is that nothing was told (VOID) has no premise.

``told_problem`` is the same test for ``facts_mark_told``: a fact is told when the messages since its last
change carry its numbers and dates, and at least half of its names (or, having none, of its words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from engine.benchmark.answer_key import KEY_FILE, dependencies_of
from engine.benchmark.directives import cached, phase_lines
from engine.benchmark.key_parse import parse_key
from engine.benchmark.model import DELETED, Benchmark, Check, Fact
from engine.benchmark.templates import render_templates
from engine.grading.told_values import Value, known_names, message_keys, plain_values, strong_values
from engine.state import RunState, SentMessage

_CHECK_LINE = re.compile(r"❓|Correct answer:")
_NOTHING_TOLD = re.compile(
    r"\b(never|not|didn't|did not|haven't|have not|wasn't|was not)\b.{0,20}\b(told|mentioned|said|shared)\b",
    re.IGNORECASE,
)
_EXACT = ("n:", "d:")
_UNITS = frozenset({"n:0", "n:1"})


def log_sent(state: RunState, n: int, text: str, sent_on: date) -> None:
    """Log a message the agent received (transcript number ``n``, sent on the run's day ``sent_on``) as the
    keys a premise is matched on."""
    keys = message_keys(text, sent_on=sent_on)
    state.sent_log.append(SentMessage(n=n, phase=state.phase_index, keys=" ".join(sorted(keys))))


def covered(state: RunState) -> bool:
    """Whether the log holds every message of the run (a run begun before the log existed is not checked)."""
    return len(state.sent_log) == state.messages_sent


@dataclass(frozen=True)
class _Window:
    """The messages that may carry a value: numbers ``1 … before-1``; after a change at message ``c``, only
    those after it or of the phase message ``c`` was sent in."""

    before: int
    changed: int = 0
    phase: int = -1

    def admits(self, number: int, message: SentMessage) -> bool:
        return number < self.before and (number > self.changed or message.phase == self.phase)


def _window(state: RunState, before: int, fact_key: str | None) -> _Window:
    changed = state.changed_at.get(fact_key, 0) if fact_key else 0
    if changed <= 0 or changed > len(state.sent_log):
        return _Window(before)
    return _Window(before, changed, state.sent_log[changed - 1].phase)


def _carriers(state: RunState, key: str, window: _Window) -> list[int]:
    """Transcript numbers of the admitted messages carrying ``key``."""
    token = f" {key} "
    return [
        message.n
        for number, message in enumerate(state.sent_log, start=1)
        if window.admits(number, message) and token in f" {message.keys} "
    ]


def _last_sent(state: RunState, key: str, before: int) -> int | None:
    found = _carriers(state, key, _Window(before))
    return found[-1] if found else None


def names_of(bench: Benchmark) -> frozenset[str]:
    """The names a benchmark uses (capitalised mid-sentence in its sheets or phase texts)."""
    return cached("names", bench, lambda b: known_names(_source_texts(b)))


def _source_texts(bench: Benchmark) -> list[str]:
    texts = [f.text for sheet in bench.sheets.values() for c in sheet.categories for f in c.facts]
    for phase in bench.phases:
        texts += [line for _, line in phase_lines(bench, phase) if not _CHECK_LINE.search(line)]
    return texts


def _source_keys(bench: Benchmark, state: RunState) -> set[str]:
    """Keys of what a persona could tell: the benchmark's sheets and phase texts (check lines left out, with
    templates rendered from the run's start) and the live sheets."""
    static: set[str] = cached(
        f"source_keys:{state.start_date}",
        bench,
        lambda b: set().union(
            *(message_keys(render_templates(t, state.start_date)) for t in _source_texts(b))
        ),
    )
    live = [f.text for sheet in state.sheets.values() for c in sheet.categories for f in c.facts]
    return static.union(*(message_keys(t) for t in live))


def _content(fact_text: str, names: frozenset[str]) -> tuple[list[Value], list[Value], int]:
    """A fact's key content: the values a message must all carry, the values of which it needs ``k``."""
    strong = strong_values(fact_text, names)
    exact = [v for v in strong if v.key.startswith(_EXACT)]
    loose = [v for v in strong if not v.key.startswith(_EXACT)] or ([] if exact else plain_values(fact_text))
    return exact, loose, (len(loose) + 1) // 2


def told_problem(state: RunState, bench: Benchmark, sheet: str, fact: Fact, before: int | None = None) -> str:
    """What of ``fact``'s current text no message since its last change carried (empty: told)."""
    if not covered(state) or fact.text.strip() == DELETED:
        return ""
    before = state.messages_sent + 1 if before is None else before
    window = _window(state, before, f"{sheet} {fact.id}")
    exact, loose, needed = _content(fact.text, names_of(bench))
    missing = [v.label for v in exact if not _carriers(state, v.key, window)]
    carried = [v for v in loose if _carriers(state, v.key, window)]
    if len(carried) < needed:
        missing += [v.label for v in loose if v not in carried][: needed - len(carried)]
    return ", ".join(repr(label) for label in missing)


@dataclass
class Premise:
    """A grade's premise as found in the transcript: the values looked for, and why it failed (if it did)."""

    checked: list[str]
    faults: list[str]


def _sum_parts(bench: Benchmark, check_id: str) -> tuple[list[Value], set[str]]:
    """The parts of the check's KEY.md ``sum:`` line as values, and the keys of its total."""

    def read(b: Benchmark) -> dict[str, tuple[str, str]]:
        try:
            text = (b.path / KEY_FILE).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return {}
        return {line.check_id: (line.expression, line.total) for line in parse_key(text).sums}

    found = cached("sums", bench, read).get(check_id)
    if found is None:
        return [], set()
    expression, total = found
    # a part of 0 or 1 (a count's unit: ``1 + 1 + 1``) states nothing to tell
    parts = [
        v for v in strong_values(expression, frozenset()) if v.key.startswith("n:") and v.key not in _UNITS
    ]
    return parts, {v.key for v in strong_values(total, frozenset())}


def nothing_told(check: Check) -> bool:
    """A check whose correct answer is that it was never told (VOID): it has no premise to look for."""
    return "VOID" in check.types or bool(_NOTHING_TOLD.search(check.answer))


def premise_of(state: RunState, bench: Benchmark, check: Check, question_no: int) -> Premise:
    """The premise of grading ``check`` whose question was message ``question_no``, from the transcript."""
    if not covered(state) or nothing_told(check):
        return Premise([], [])
    names = names_of(bench)
    answer = render_templates(check.answer, state.start_date)
    question_keys = message_keys(render_templates(check.question, state.start_date))
    sources = _source_keys(bench, state)
    parts, totals = _sum_parts(bench, check.id)
    values = [
        v
        for v in strong_values(answer, names)
        if v.key in sources and v.key not in question_keys and v.key not in totals
    ]
    values += [p for p in parts if p.key in sources and p.key not in {v.key for v in values}]
    faults: list[str] = []
    checked = [v.label for v in values]
    for value in values:
        fault = _value_fault(state, bench, value, question_no)
        if fault:
            faults.append(fault)
    for sheet_name, fact_id in dependencies_of(bench, check.id):
        sheet = state.sheets.get(sheet_name)
        fact = sheet.find(fact_id) if sheet else None
        if fact is None or fact.text.strip() == DELETED:
            continue
        checked.append(f"{sheet_name} {fact_id}")
        missing = told_problem(state, bench, sheet_name, fact, question_no)
        if missing:
            faults.append(
                f"{sheet_name} {fact_id} as it stands was not told before the question ({missing} not sent)"
            )
    if not checked:  # no number, date or name: the answer's own words, half of them at least
        words = [v for v in plain_values(answer, exclude={k[2:] for k in question_keys if k[:2] == "s:"})]
        words = [v for v in words if v.key in sources]
        if words:
            checked = [v.label for v in words]
            carried = [v for v in words if _last_sent(state, v.key, question_no) is not None]
            if len(carried) < (len(words) + 1) // 2:
                unsent = ", ".join(repr(v.label) for v in words if v not in carried)
                faults.append(f"the answer's words {unsent} were never sent to the assistant")
    return Premise(checked, faults)


def _value_fault(state: RunState, bench: Benchmark, value: Value, question_no: int) -> str:
    last = _last_sent(state, value.key, question_no)
    if last is None:
        return f"{value.label!r} was never sent to the assistant before the question"
    change = _latest_change_bringing(state, bench, value)
    if change is None:
        return ""
    fact_key, window = change, _window(state, question_no, change)
    if _carriers(state, value.key, window):
        return ""
    return f"{value.label!r} was last sent in #{last}, before {fact_key} was changed to hold it"


def _latest_change_bringing(state: RunState, bench: Benchmark, value: Value) -> str | None:
    """The live fact, changed in this run, whose change brought ``value`` in (its benchmark text lacked it)."""
    best: tuple[int, str] | None = None
    for sheet in state.sheets.values():
        for category in sheet.categories:
            for fact in category.facts:
                key = f"{sheet.name} {fact.id}"
                changed = state.changed_at.get(key)
                if changed is None or value.key not in message_keys(fact.text):
                    continue
                first = bench.sheets[sheet.name].find(fact.id) if sheet.name in bench.sheets else None
                if first is not None and value.key in message_keys(
                    render_templates(first.text, state.start_date)
                ):
                    continue
                if best is None or changed > best[0]:
                    best = (changed, key)
    return best[1] if best else None
