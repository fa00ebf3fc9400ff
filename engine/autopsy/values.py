"""The values an attribution looks for, and where a memory snapshot holds them.

An answer is matched the way a premise check matches the transcript (``engine/grading/told_values.py``): the
values the correct answer states (numbers in any notation with their units, dates, times, weekdays, names),
less those its question already says; the answer's own values are the figures the rules judge reads in the
agent's reply (``engine/models/judge_figures.py`` ``find_figures``, over the reply made plain), less those
the question says. A memory line holds a value when one of the value's keys is among the line's keys, so
``$5,100`` in the answer is found as ``5100 USD`` or ``5.1k dollars`` in a file. A file's lines are read
into keys once per version (``MemoryLines``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from engine.autopsy.history import MemoryHistory, Snapshot
from engine.events import EvaluationLogged
from engine.grading.told_values import FUNCTION_WORDS, Value, message_keys, stem, strong_values
from engine.models.judge_figures import find_figures
from engine.models.judge_text import plain, spell_out_numbers

_NEVER_TOLD = re.compile(
    r"\b(never|not|didn't|did not|haven't|have not|wasn't|was not)\b.{0,20}\b(told|mentioned|said|shared)\b",
    re.IGNORECASE,
)
_FACT_REF = re.compile(r"^[\w-]+(?: [\w-]+)* \d+\.\d+$")  # a premise's ``sheet 1.2``: a fact, not a value
_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True)
class Place:
    """A line of a memory file holding a value, in one snapshot."""

    file: str
    line: int  # 1-based
    text: str

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"


def holds(keys: frozenset[str], value: Value) -> bool:
    return not keys.isdisjoint(value.keys)


def expected_values(e: EvaluationLogged) -> list[Value]:
    """The values the check's correct answer states that its question does not (none for a never-told check)."""
    if "VOID" in e.types or _NEVER_TOLD.search(e.expected):
        return []
    asked = message_keys(e.question)
    return [v for v in strong_values(e.expected, frozenset()) if asked.isdisjoint(v.keys)]


def part_values(e: EvaluationLogged, expected: list[Value]) -> list[Value]:
    """The values the grade's premise looked for besides the expected ones (a total's parts)."""
    shown = {k for v in expected for k in v.keys}
    parts = []
    for label in e.premise:
        if _FACT_REF.match(label):
            continue
        parts += [v for v in strong_values(label, frozenset()) if shown.isdisjoint(v.keys)]
    return parts


def answer_values(e: EvaluationLogged, expected: list[Value]) -> list[Value]:
    """The figures the agent's reply states that are neither the expected values nor in the question."""
    text = spell_out_numbers(plain("\n".join(e.replies)))
    spans = [(f.start, f.end) for f in find_figures(text)]
    asked = message_keys(e.question)
    right = {k for v in expected for k in v.keys}
    found: list[Value] = []
    for value in strong_values(text, frozenset()):
        in_figure = any(start <= value.start < end for start, end in spans)
        if in_figure and asked.isdisjoint(value.keys) and right.isdisjoint(value.keys):
            found.append(value)
    return found


@lru_cache(maxsize=65536)
def line_keys(text: str) -> frozenset[str]:
    return frozenset(message_keys(text))


def content_stems(text: str) -> frozenset[str]:
    """A line's content words as stems (what it is about), without function words."""
    return frozenset(
        stem(w) for w in _WORD.findall(text) if w.lower() not in FUNCTION_WORDS and not w.isupper()
    )


class MemoryLines:
    """The lines of a run's memory files, by version, each read into keys once."""

    def __init__(self, history: MemoryHistory) -> None:
        self.history = history
        self._lines: dict[str, list[str]] = {}

    def lines(self, blob: str) -> list[str]:
        if blob not in self._lines:
            self._lines[blob] = self.history.read(blob).splitlines()
        return self._lines[blob]

    def places(self, snapshot: Snapshot, value: Value) -> list[Place]:
        """Every line of the snapshot's files holding ``value``."""
        found = []
        for name, blob in sorted(snapshot.files.items()):
            for number, text in enumerate(self.lines(blob), start=1):
                if text.strip() and holds(line_keys(text), value):
                    found.append(Place(name, number, text.strip()))
        return found

    def first_place(self, snapshots: Iterable[Snapshot], value: Value) -> tuple[Snapshot, Place] | None:
        """The first snapshot (of ``snapshots``, in order) holding ``value``, and where."""
        for snapshot in snapshots:
            found = self.places(snapshot, value)
            if found:
                return snapshot, found[0]
        return None
