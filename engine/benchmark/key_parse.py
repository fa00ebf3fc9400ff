"""KEY.md's machine-read lines (``parse_key``): every check's entry with its answer and dependencies, sums and
traps; malformed lines are reported, never raised.

A benchmark may ship a ``KEY.md`` for reviewers and for grading (without one, the checks stand alone): for
every check, its answer, the chain of facts and edits that produces it, and the facts it depends on. Free
text is allowed anywhere; these lines are machine-read:

```
## 20.5 [AGG] Hallway estimate total          <- an entry: "## <check id>" starts it
answer: $1,740                                 <- required: equal to the check's Correct answer
uses: hallway 1.2, 1.3, 1.4, 1.5, 1.6, 1.7     <- required: the facts the correct answer depends on
sum: 20.5 = 6 × 30 + 5 × 40 + 1,050 + 160 + 150 = 1,740
trap: RECONSIDER | hallway 1.3, ch3 | stone → microcement | 20.5, 20.21
```

* ``uses: <sheet> <id>[, <id>…][; <sheet> <id>…]`` — the facts (sheet and fact id, as they are when the
  check is asked, ids of added facts included) whose current value, or for a HIST check whose edit history,
  the correct answer reads; ``uses: none`` for a check that depends on no fact (VOID checks, things told only
  in a phase's text). Several ``uses:`` lines in one entry add up.
* ``sum: <check id> = <expression> = <total>`` — the expression holds numbers (``$`` and thousands
  commas allowed) joined by ``+``, ``-``, ``×`` or ``*``.
* ``trap: <TYPE> | <where> | <what> | <check ids>`` — a trap write of SPEC §3.4 and the checks matching it.

What these lines must hold against the benchmark is checked by ``engine/benchmark/answer_key.py``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.benchmark.facts import is_fact_id

_ENTRY = re.compile(r"##\s+([1-9]\d*\.[1-9]\d*)(?!\d)")
_FIELD = re.compile(r"(answer|sum|trap|uses):\s*(.*)", re.IGNORECASE)


@dataclass
class SumLine:
    check_id: str
    expression: str
    total: str
    line: int


@dataclass
class TrapLine:
    type: str
    where: str
    what: str
    checks: list[str]
    line: int


@dataclass
class KeyEntry:
    check_id: str
    line: int
    answer: str | None = None
    answer_line: int = 0
    uses: list[tuple[str, str]] | None = None  # None: no 'uses:' line; []: 'uses: none'
    uses_line: int = 0  # the first 'uses:' line
    uses_lines: list[tuple[int, list[tuple[str, str]]]] = field(default_factory=list)  # per 'uses:' line
    uses_none: bool = False  # a 'uses: none' line was met


@dataclass
class AnswerKey:
    entries: dict[str, KeyEntry] = field(default_factory=dict)
    sums: list[SumLine] = field(default_factory=list)
    traps: list[TrapLine] = field(default_factory=list)
    problems: list[tuple[int, str]] = field(default_factory=list)  # (line, message) met while parsing


def parse_key(text: str) -> AnswerKey:
    """Read the machine lines of a KEY.md text; malformed ones are reported in ``problems``."""
    key = AnswerKey()
    current: KeyEntry | None = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("#"):
            entry = _ENTRY.match(line)
            current = None
            if entry:
                check_id = entry.group(1)
                if check_id in key.entries:
                    first = key.entries[check_id].line
                    key.problems.append(
                        (number, f"duplicate entry for check {check_id} (first at line {first})")
                    )
                else:
                    current = KeyEntry(check_id=check_id, line=number)
                    key.entries[check_id] = current
            continue
        field_match = _FIELD.match(line)
        if field_match is None:
            continue
        name, value = field_match.group(1).lower(), field_match.group(2).strip()
        if name == "answer":
            if current is None:
                key.problems.append(
                    (number, "'answer:' outside an entry: put it under a '## <check id>' heading")
                )
            else:
                current.answer, current.answer_line = value, number
        elif name == "uses":
            if current is None:
                key.problems.append(
                    (number, "'uses:' outside an entry: put it under a '## <check id>' heading")
                )
            else:
                _parse_uses(value, number, current, key)
        elif name == "sum":
            _parse_sum(value, number, key)
        else:
            _parse_trap(value, number, key)
    return key


_USES_FORM = "write 'uses: <sheet> <id>, <id>; <sheet> <id>' or 'uses: none'"


def _parse_uses(value: str, number: int, entry: KeyEntry, key: AnswerKey) -> None:
    """One ``uses:`` line of ``entry``: ``none`` or ``sheet id, id; sheet id``; malformed parts reported."""
    if value.lower().rstrip(".") == "none":
        if entry.uses:
            key.problems.append(
                (number, f"entry {entry.check_id}: 'uses: none' beside facts in another 'uses:' line")
            )
        if entry.uses is None:
            entry.uses, entry.uses_line = [], number
        entry.uses_none = True
        entry.uses_lines.append((number, []))
        return
    if entry.uses_none:
        key.problems.append((number, f"entry {entry.check_id}: facts beside an earlier 'uses: none'"))
    found: list[tuple[str, str]] = []
    for group in (g.strip() for g in value.split(";")):
        words = [w for w in re.split(r"[,\s]+", group) if w]
        if len(words) < 2:
            key.problems.append((number, f"entry {entry.check_id}: malformed uses {group!r}: {_USES_FORM}"))
            continue
        sheet, ids = words[0].removesuffix(".md"), words[1:]
        for fact_id in ids:
            if not is_fact_id(fact_id):
                key.problems.append(
                    (
                        number,
                        f"entry {entry.check_id}: {fact_id!r} in uses is not a fact id "
                        f"like 1.2: {_USES_FORM}",
                    )
                )
            elif (sheet, fact_id) not in found:
                found.append((sheet, fact_id))
    if entry.uses is None:
        entry.uses, entry.uses_line = [], number
    entry.uses += [dep for dep in found if dep not in entry.uses]
    entry.uses_lines.append((number, found))


def _parse_sum(value: str, number: int, key: AnswerKey) -> None:
    parts = [part.strip() for part in value.split("=")]
    if len(parts) != 3 or not all(parts):
        key.problems.append(
            (number, f"malformed sum line: write 'sum: <check id> = <a> + <b> = <total>', got {value!r}")
        )
        return
    key.sums.append(SumLine(check_id=parts[0], expression=parts[1], total=parts[2], line=number))


def _parse_trap(value: str, number: int, key: AnswerKey) -> None:
    fields = [part.strip() for part in value.split("|")]
    if len(fields) != 4:
        message = f"malformed trap line: write 'trap: <TYPE> | <where> | <what> | <check ids>', got {value!r}"
        key.problems.append((number, message))
        return
    checks = [c for c in re.split(r"[,\s]+", fields[3]) if c]
    key.traps.append(TrapLine(type=fields[0], where=fields[1], what=fields[2], checks=checks, line=number))
