"""Whether a fact was told: the values of it the messages to the agent carried (``untold``), compared as values
(``engine/grading/told_values.py``), never as wording.

A fact never changed in the run is told when the messages carry all its numbers, dates, times and weekdays
and half its names (or, having none, of its words). A fact changed in the run is told when the values its last
change brought in (``engine/grading/changes.py``: what its text before the change lacked, old values kept for
history left out) were carried after the change or in the phase it was made in (a persona may tell, then
edit), and the rest of it at any time before: its unchanged parts are never demanded again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.benchmark.directives import cached, phase_lines
from engine.benchmark.model import DELETED, Benchmark, Fact
from engine.benchmark.templates import render_templates
from engine.grading.changes import history_spans, introduced, introduced_words, outside
from engine.grading.sent import Window, carriers, covered, since_change
from engine.grading.told_values import Value, known_names, message_keys, plain_values, strong_values
from engine.state import RunState

_CHECK_LINE = re.compile(r"❓|Correct answer:")


def names_of(bench: Benchmark) -> frozenset[str]:
    """The names a benchmark uses (capitalised mid-sentence in its sheets or phase texts)."""
    return cached("names", bench, lambda b: known_names(_source_texts(b)))


def _source_texts(bench: Benchmark) -> list[str]:
    texts = [f.text for sheet in bench.sheets.values() for c in sheet.categories for f in c.facts]
    for phase in bench.phases:
        texts += [line for _, line in phase_lines(bench, phase) if not _CHECK_LINE.search(line)]
    return texts


def source_keys(bench: Benchmark, state: RunState) -> set[str]:
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


def before_change(state: RunState, bench: Benchmark, sheet: str, fact: Fact) -> str | None:
    """A fact's text before its last change in this run ("" for a fact added in it); None if it never changed
    (a state written before the text was kept falls back on the benchmark's own text)."""
    key = f"{sheet} {fact.id}"
    if key not in state.changed_at:
        return None
    prior = state.changed_from.get(key)
    if prior is None:
        original = bench.sheets[sheet].find(fact.id) if sheet in bench.sheets else None
        prior = render_templates(original.text, state.start_date) if original else ""
    return "" if prior.strip() == DELETED else prior


@dataclass(frozen=True)
class Untold:
    """What of a fact the messages did not carry: its values missing, and since when they were looked for."""

    sheet: str
    fact_id: str
    missing: tuple[Value, ...]
    changed: int  # the message count at its last change; 0: never changed in this run

    def labels(self) -> str:
        return ", ".join(repr(label) for label in dict.fromkeys(v.label for v in self.missing))

    def send(self) -> str:
        """What to send, for the persona: ``oven 1.2's new amount 5,100 EUR`` (a range of days said once)."""
        what = dict.fromkeys(f"{_KIND_WORDS.get(v.kind, 'value')} {v.label}" for v in self.missing)
        return f"{self.sheet} {self.fact_id}'s {'new ' if self.changed else ''}{' and '.join(what)}"


_KIND_WORDS = {"amount": "amount", "number": "figure", "date": "date", "time": "time", "day": "day"}
_KIND_WORDS |= {"currency": "currency", "name": "name", "word": "word"}


def untold(
    state: RunState, bench: Benchmark, sheet: str, fact: Fact, before: int | None = None
) -> Untold | None:
    """What of ``fact`` as it stands the messages before ``before`` did not carry (module docstring); None: told."""
    if not covered(state) or fact.text.strip() == DELETED:
        return None
    before = state.messages_sent + 1 if before is None else before
    key = f"{sheet} {fact.id}"
    since, anytime = since_change(state, before, key), Window(before)
    prior = before_change(state, bench, sheet, fact)
    exact, new, groups = _content(fact.text, prior, names_of(bench))
    missing = [v for v in exact if not carriers(state, v, since if v.key in new else anytime)]
    after_change = any(v.key in new for v in missing)  # some of it is what the change brought in
    for values, needed, fresh in groups:
        got = [v for v in values if carriers(state, v, since if fresh else anytime)]
        lacking = [v for v in values if v not in got][: max(0, needed - len(got))]
        missing += lacking
        after_change |= fresh and bool(lacking)
    if not missing:
        return None
    return Untold(sheet, fact.id, tuple(missing), state.changed_at.get(key, 0) if after_change else 0)


def _half(values: list[Value] | tuple[Value, ...]) -> int:
    return (len(values) + 1) // 2


def _content(
    text: str, prior: str | None, names: frozenset[str]
) -> tuple[list[Value], set[str], list[tuple[list[Value], int, bool]]]:
    """What telling a fact takes: the values each to be carried, the keys its last change brought in (carried
    after it), and groups of names or words of which a number must be carried (fresh: after the change).
    Never changed: all its values and half its names (or, having none, of its words). Changed: its values,
    history left out, those the change brought in after it, and half its new names or words; a change that
    brought in nothing (a part struck out) is told by any message about the fact after it."""
    values = strong_values(text, names)
    if prior is None:
        exact = [v for v in values if v.kind != "name"]
        loose = [v for v in values if v.kind == "name"] or ([] if exact else plain_values(text))
        return exact, set(), [(loose, _half(loose), False)]
    spans = history_spans(text)
    brought = introduced(prior, text, names)
    new = {v.key for v in brought}
    exact = [v for v in outside(values, spans) if v.kind != "name"] + [
        v for v in brought if v.kind == "currency"
    ]
    loose = [v for v in outside(values, spans) if v.kind == "name"]
    fresh = [v for v in loose if v.key in new]
    old = [v for v in loose if v.key not in new]
    groups = [(fresh, _half(fresh), True), (old, _half(old), False)]
    if not brought:
        words = list(introduced_words(prior, text))
        new = {v.key for v in words}
        groups.append((words, _half(words), True) if words else (outside(plain_values(text), spans), 1, True))
    return exact, new, groups


def told_problem(state: RunState, bench: Benchmark, sheet: str, fact: Fact) -> str:
    """What to send of ``fact`` before it can be marked told (``oven 1.2's new amount 5,100 EUR``); "": told."""
    found = untold(state, bench, sheet, fact)
    return found.send() if found else ""
