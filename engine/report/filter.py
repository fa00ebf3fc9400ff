"""The report browser's order and filter over report entries: ``newest_first`` (real finish time),
``latest_per_run`` (what ``mmb-tui report`` and the browser show unless asked for every entry) and
``EntryFilter`` (run, score range, check type)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol, TypeVar

from engine.benchmark.check_kinds import INFERRED_MARK
from engine.report.parse import ImperfectAnswer, PersonaFault, ReportEntry


class _Dated(Protocol):
    @property
    def position(self) -> int: ...

    @property
    def finished_at(self) -> datetime | None: ...


_E = TypeVar("_E", bound=_Dated)


def newest_first(entries: Iterable[_E]) -> list[_E]:
    """By real finish time, the latest first; an entry dated in virtual time (before issue 9) has none and
    keeps its place after the entry written before it; entries of the same minute keep their file order."""
    keyed = []
    latest = datetime.min.replace(tzinfo=UTC)
    for entry in sorted(entries, key=lambda e: e.position):
        at = entry.finished_at
        if at is not None:
            latest = at
        keyed.append(((at or latest), entry.position, entry))
    keyed.sort(key=lambda k: (k[0], k[1]), reverse=True)
    return [entry for _, _, entry in keyed]


class _OfRun(_Dated, Protocol):
    @property
    def run_id(self) -> str: ...

    @property
    def regrade(self) -> str: ...


_R = TypeVar("_R", bound=_OfRun)


def run_key(run_id: str, regrade: str) -> tuple[str, str]:
    """What an entry is the latest of: its run, or for a regrade its run and judge (``<judge> of …``)."""
    return run_id, regrade.partition(" of ")[0]


def latest_per_run(entries: Iterable[_R]) -> list[_R]:
    """The latest entry of each run, in file order: a run's newer entry (its final one after an ``Incomplete``
    one, which it says it supersedes, or one after a restart) hides its older ones; a regrade's entries are
    kept apart from the run's own, the latest by each judge."""
    latest = {run_key(e.run_id, e.regrade): e for e in sorted(entries, key=lambda e: e.position)}
    return sorted(latest.values(), key=lambda e: e.position)


FILTER_HELP = "run:NAME  score:<7 | >=8 | 5-8  type:AGG  (a bare word is a run; an empty filter shows all)"
_RANGE = re.compile(r"^(?P<op><=|>=|<|>|=)?(?P<a>\d+(?:\.\d+)?)(?:-(?P<b>\d+(?:\.\d+)?))?$")


@dataclass(frozen=True)
class EntryFilter:
    """Which entries the report browser shows: a run (part of its id), a score range, a check type.

    With a check type the score range applies to that type's average, and only the answers of that type are
    listed (``answers_of``); a kind inferred for an untagged check (``[AGG~]``) counts as that kind."""

    run: str = ""
    low: float | None = None
    high: float | None = None
    strict_low: bool = False
    strict_high: bool = False
    check_type: str = ""

    @classmethod
    def parse(cls, text: str) -> EntryFilter:
        """``run:openclaw score:<7 type:AGG``; a bare word is a run. ``ValueError`` says what is wrong."""
        run, check_type = "", ""
        low: float | None = None
        high: float | None = None
        strict_low = strict_high = False
        for word in text.split():
            key, sep, value = word.partition(":")
            if not sep:
                key, value = "run", word
            key = key.lower()
            if not value:
                raise ValueError(f"{key}: needs a value ({FILTER_HELP})")
            if key == "run":
                run = value
            elif key == "type":
                check_type = value.upper()
            elif key == "score":
                match = _RANGE.match(value)
                if match is None:
                    raise ValueError(
                        f"score:{value}: not a score or a range (score:<7, score:>=8, score:5-8)"
                    )
                a, b, op = float(match["a"]), match["b"], match["op"] or ""
                if b is not None:
                    low, high, strict_low, strict_high = a, float(b), False, False
                elif op.startswith(">"):
                    low, strict_low = a, op == ">"
                elif op.startswith("<"):
                    high, strict_high = a, op == "<"
                else:
                    low = high = a
                    strict_low = strict_high = False
            else:
                raise ValueError(f"{key}: no such filter ({FILTER_HELP})")
        return cls(run, low, high, strict_low, strict_high, check_type)

    @property
    def active(self) -> bool:
        return self != EntryFilter()

    def describe(self) -> str:
        """The filter as the browser's header shows it ("" when it shows everything)."""
        parts = []
        if self.run:
            parts.append(f"run {self.run}")
        if self.check_type:
            parts.append(f"type {self.check_type}")
        if self.low is not None and self.low == self.high:
            parts.append(f"score {self.low:g}")
        else:
            if self.low is not None:
                parts.append(f"score {'>' if self.strict_low else '≥'}{self.low:g}")
            if self.high is not None:
                parts.append(f"score {'<' if self.strict_high else '≤'}{self.high:g}")
        return ", ".join(parts)

    def score_of(self, entry: ReportEntry) -> float | None:
        """The score the range applies to: the check type's average with a type, else the headline."""
        return entry.type_averages.get(self.check_type) if self.check_type else entry.headline

    def matches(self, entry: ReportEntry) -> bool:
        if self.run and self.run.lower() not in entry.run_id.lower():
            return False
        if self.check_type and self.check_type not in kinds(entry.check_types):
            return False
        if self.low is None and self.high is None:
            return True
        score = self.score_of(entry)
        if score is None:
            return False
        if self.low is not None and (score <= self.low if self.strict_low else score < self.low):
            return False
        return self.high is None or (score < self.high if self.strict_high else score <= self.high)

    def answers_of(self, entry: ReportEntry) -> tuple[list[ImperfectAnswer], list[PersonaFault]]:
        """The entry's imperfect answers and persona faults this filter lists."""
        if not self.check_type:
            return entry.imperfect, entry.persona_faults
        return (
            [a for a in entry.imperfect if self.check_type in kinds(a.types)],
            [f for f in entry.persona_faults if self.check_type in kinds(f.types)],
        )


def kinds(types: Iterable[str]) -> set[str]:
    """Check types as a filter names them: a kind inferred for an untagged check (``AGG~``) is its kind."""
    return {t.removesuffix(INFERRED_MARK) for t in types}
