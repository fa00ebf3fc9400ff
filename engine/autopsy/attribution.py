"""An imperfect answer traced to the agent's memory: one class, with its evidence (issue 33).

The expected values and the answer's own (``values.py``) are looked up in the memory as it was when the
question was sent (the last snapshot at or before it) and across its history before that:

- ``never written``: an expected value is in no memory file at any snapshot up to the question;
- ``lost``: written, then lost or overwritten (an older value put back): it was in a file and is not any more;
- ``diverged``: stored twice, the copies diverged: the expected value is in memory and the answer's value is
  too, on another line about the same thing;
- ``unused``: present and current at the question but not used in the answer;
- ``invented``: the answer's value is in no memory file, ever;
- ``not decidable``: there is nothing to look up (the correct answer states no value, no snapshot before the
  question): said why, never guessed;
- ``no memory access``: the agent exposes no memory files.

Evidence names the file and line, the phase, and the agent's own action that wrote or changed it where the
transcript has one (``memory replace #212``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from engine.autopsy.history import MemoryHistory, Snapshot
from engine.autopsy.run_facts import RunFacts, action_label, read_facts
from engine.autopsy.values import (
    MemoryLines,
    Place,
    answer_values,
    content_stems,
    expected_values,
    holds,
    line_keys,
    part_values,
)
from engine.events import EvaluationLogged
from engine.grading.told_values import Value

AutopsyClass = Literal[
    "never written", "lost", "diverged", "unused", "invented", "not decidable", "no memory access"
]
CLASSES: tuple[AutopsyClass, ...] = (
    "never written",
    "lost",
    "diverged",
    "unused",
    "invented",
    "not decidable",
    "no memory access",
)
EVIDENCE = 360  # characters of evidence on an entry's line
QUOTE = 60  # characters of a memory line quoted


@dataclass(frozen=True)
class Focus:
    """The memory line that matters and the change that mattered: the snapshots (``seq``) before and after it."""

    file: str
    line: int  # 1-based, where it was found (the question's memory; for a line lost, the last that held it)
    text: str  # the line as it read there
    before: int | None  # None: the file began with it
    after: int


@dataclass(frozen=True)
class Attribution:
    check_id: str
    cls: AutopsyClass
    evidence: str
    focus: Focus | None = None  # where a viewer shows the memory beside the answer (``excerpt.py``)


def shown(value: Value) -> str:
    """A value as the evidence names it: as written, without the sentence's full stop."""
    return value.label.rstrip(".,;:!? ")


def labels(values: Iterable[Value]) -> str:
    return ", ".join(dict.fromkeys(shown(v) for v in values))


def quote(text: str) -> str:
    flat = " ".join(text.split())
    return f'"{flat if len(flat) <= QUOTE else flat[: QUOTE - 1] + "…"}"'


class Autopsy:
    """A run's memory history and transcript, read once, to attribute its answers."""

    def __init__(self, run_dir: Path, facts: RunFacts | None = None) -> None:
        self.history = MemoryHistory(run_dir)
        self.access = self.history.exists()
        self.facts = facts if facts is not None else read_facts(run_dir / "transcript.jsonl")
        self.lines = MemoryLines(self.history)

    def attribute(self, e: EvaluationLogged) -> Attribution:
        self._origins: dict[Place, Focus] = {}  # each place's origin found while the evidence is written
        self._focus: Focus | None = None
        cls, evidence = self._classify(e)
        cut = evidence if len(evidence) <= EVIDENCE else evidence[:EVIDENCE] + "…"
        return Attribution(e.check_id, cls, cut, self._focus)

    def _classify(self, e: EvaluationLogged) -> tuple[AutopsyClass, str]:
        if not self.access:
            return "no memory access", "the agent exposes no memory files"
        asked = self.facts.question_of(e.n)
        kept = [s for s in self.history.snapshots() if s.n <= asked]
        if not kept:
            return "not decidable", f"no memory snapshot before the question (event #{asked})"
        expected = expected_values(e)
        answered = answer_values(e, expected)
        if not expected:
            return self._nothing_expected(answered, kept)
        now = kept[-1]
        present = {v.key: self.lines.places(now, v) for v in expected}
        if all(present.values()):
            return self._present(expected, answered, present, kept)
        parts = part_values(e, expected)
        if parts and all(self.lines.places(now, p) for p in parts):
            where = ", ".join(f"{shown(p)} at {self.lines.places(now, p)[0].where}" for p in parts)
            return "unused", f"{labels(expected)} not stored, but its parts are at the question: {where}"
        missing = [v for v in expected if not present[v.key]]
        never = [v for v in missing if self.lines.first_place(kept, v) is None]
        if never:
            return "never written", self._never(never, answered, kept)
        return "lost", self._lost(missing[0], answered, kept)

    # --- the classes ------------------------------------------------------------------------------

    def _nothing_expected(self, answered: list[Value], kept: list[Snapshot]) -> tuple[AutopsyClass, str]:
        if not answered:
            return "not decidable", (
                "the correct answer states no value to look up (a number, date, time or name), nor does the answer"
            )
        seen = [(v, found) for v in answered if (found := self.lines.first_place(kept, v))]
        if not seen:
            return "invented", f"the answer's {labels(answered)} in no memory file up to the question"
        value, (snapshot, place) = seen[0]
        origin = self._origin(value, place, kept)
        self._focus = self._origins.get(place)
        return (
            "not decidable",
            f"the correct answer states no value to look up; the answer's {shown(value)} is at "
            f"{place.where} ({origin})",
        )

    def _present(
        self,
        expected: list[Value],
        answered: list[Value],
        present: dict[str, list[Place]],
        kept: list[Snapshot],
    ) -> tuple[AutopsyClass, str]:
        now = kept[-1]
        value = expected[0]
        right = present[value.key][0]
        right_keys = {k for v in expected for k in v.keys}
        origin = self._origin(value, right, kept)
        self._focus = self._origins.get(right)
        for wrong in answered:
            for place in self.lines.places(now, wrong):
                other_line = right_keys.isdisjoint(line_keys(place.text))
                if other_line and _about_the_same(place.text, right.text):
                    return "diverged", (
                        f"{shown(value)} at {right.where} ({origin}); the answer's "
                        f"{shown(wrong)} at {place.where} ({self._origin(wrong, place, kept)}): "
                        f"{quote(place.text)}"
                    )
        if answered and all(self.lines.first_place(self.history.snapshots(), v) is None for v in answered):
            return "invented", (
                f"the answer's {labels(answered)} in no memory file, ever; {shown(value)} was at "
                f"{right.where} ({origin})"
            )
        return "unused", f"{shown(value)} at {right.where} at the question ({origin}): {quote(right.text)}"

    def _never(self, never: list[Value], answered: list[Value], kept: list[Snapshot]) -> str:
        now = kept[-1]
        text = f"{labels(never)} in no memory file at any of {len(kept)} snapshots up to the question ({now.label})"
        for wrong in answered:
            places = self.lines.places(now, wrong)
            if places:
                origin = self._origin(wrong, places[0], kept)
                self._focus = self._origins.get(places[0])
                return f"{text}; the answer's {shown(wrong)} is at {places[0].where} ({origin})"
        return text

    def _lost(self, value: Value, answered: list[Value], kept: list[Snapshot]) -> str:
        last = max(i for i, s in enumerate(kept) if self.lines.places(s, value))
        before, gone = kept[last], kept[last + 1]
        place = self.lines.places(before, value)[0]
        self._focus = Focus(place.file, place.line, place.text, before.seq, gone.seq)
        actions = self.facts.actions_between(before.n, gone.n + 1, place.file)
        naming = [a for a in actions if holds(line_keys(a.summary), value)]  # the call that took it out
        by = f" by {action_label((naming or actions)[-1])}" if actions else ""
        text = (
            f"{shown(value)} was at {place.where} ({self._origin(value, place, kept)}); gone at "
            f"{gone.label}{by}"
        )
        now_line = self._line_about(gone, place)
        if now_line is not None:
            older = self._older(now_line, kept[: last + 1])
            text += f"; {now_line.where} now reads {quote(now_line.text)}"
            if older:
                text += f", an older value (stored {older.label})"
        elif wrong := [w for w in answered if self.lines.places(gone, w)]:
            text += f"; the answer's {shown(wrong[0])} is at {self.lines.places(gone, wrong[0])[0].where}"
        return text

    # --- evidence ---------------------------------------------------------------------------------

    def _origin(self, value: Value, place: Place, kept: list[Snapshot]) -> str:
        """When ``value`` came into ``place.file``: the phase and the action that wrote it."""
        previous: Snapshot | None = None
        for snapshot in kept:
            blob = snapshot.files.get(place.file)
            if blob is not None and any(holds(line_keys(t), value) for t in self.lines.lines(blob)):
                actions = self.facts.actions_between(
                    previous.n if previous else 0, snapshot.n + 1, place.file
                )
                by = f" by {action_label(actions[-1])}" if actions else ""
                before = previous.seq if previous is not None and place.file in previous.files else None
                self._origins[place] = Focus(place.file, place.line, place.text, before, snapshot.seq)
                return f"written in phase {snapshot.phase + 1}{by}"
            previous = snapshot
        return "in memory"

    def _line_about(self, snapshot: Snapshot, place: Place) -> Place | None:
        """The line of ``place.file`` in ``snapshot`` most about what ``place`` said (a shared content word)."""
        blob = snapshot.files.get(place.file)
        if blob is None:
            return None
        wanted = content_stems(place.text)
        best: tuple[int, Place] | None = None
        for number, text in enumerate(self.lines.lines(blob), start=1):
            shared = len(wanted & content_stems(text))
            if shared and (best is None or shared > best[0]):
                best = (shared, Place(place.file, number, text.strip()))
        return best[1] if best else None

    def _older(self, place: Place, earlier: list[Snapshot]) -> Snapshot | None:
        """The first of ``earlier`` snapshots that held ``place``'s line as it reads now (an older value)."""
        for snapshot in earlier:
            blob = snapshot.files.get(place.file)
            if blob is not None and place.text in (t.strip() for t in self.lines.lines(blob)):
                return snapshot
        return None


def _about_the_same(a: str, b: str) -> bool:
    """Two memory lines about the same thing: a content word in common."""
    return not content_stems(a).isdisjoint(content_stems(b))


def class_counts(attributions: Iterable[Attribution]) -> Counter[str]:
    return Counter(a.cls for a in attributions)
