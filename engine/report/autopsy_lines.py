"""The memory autopsy in a report entry (issue 33), written and read back:

    📊 Memory autopsy: 3 imperfect answers — never written 1 · lost 1 · not decidable 1
    📊 [0/10] (2.1) [RECALL] What is my locker code? | expected: 4417. | got: … [transcript #40]
    📊 ↳ memory: lost — 4417 was at MEMORY.md:1 (written in phase 1 by memory add #5); gone at end of phase 1 …
    📊 Agent actions: 13 — memory write 9 · memory read 2 · command 2

The summary line stands with the figures beside the score; an attribution line stands under each imperfect
answer (``engine/autopsy/attribution.py``); the actions line beside the agent's compactions. An agent without
memory files is "no memory access" once, never a guess per answer; one that exposes no actions says so once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from engine.autopsy.attribution import CLASSES, Attribution
from engine.autopsy.run_autopsy import RunAutopsy

ATTRIBUTION_MARK = "↳ memory:"
_ATTRIBUTION = re.compile(rf"^{ATTRIBUTION_MARK}\s*(?P<cls>{'|'.join(CLASSES)})\s+—\s+(?P<evidence>.*)$")
_SUMMARY = re.compile(r"^Memory autopsy:\s*(?P<text>.+)$")
_COUNT = re.compile(rf"(?P<cls>{'|'.join(CLASSES)})\s+(?P<n>\d+)")


@dataclass(frozen=True)
class AttributionLine:
    cls: str
    evidence: str


def attribution_line(a: Attribution) -> str:
    return f"{ATTRIBUTION_MARK} {a.cls} — {a.evidence}"


def parse_attribution(line: str) -> AttributionLine | None:
    """An entry's ``↳ memory:`` line (marker stripped), or None."""
    match = _ATTRIBUTION.match(line)
    return AttributionLine(match["cls"], match["evidence"]) if match else None


def summary_line(autopsy: RunAutopsy, imperfect: Iterable[str]) -> str:
    """``Memory autopsy: <n> imperfect answers — <class> <count> · …`` over the answers the entry lists."""
    shown = [autopsy.attributions[cid] for cid in imperfect if cid in autopsy.attributions]
    if not autopsy.access:
        return "Memory autopsy: no memory access (the agent exposes no memory files)"
    if not shown:
        return "Memory autopsy: no imperfect answer"
    counts = {cls: sum(1 for a in shown if a.cls == cls) for cls in CLASSES}
    parts = " · ".join(f"{cls} {n}" for cls, n in counts.items() if n)
    return f"Memory autopsy: {len(shown)} imperfect answer{'s' if len(shown) != 1 else ''} — {parts}"


def summary_counts(line: str) -> dict[str, int] | None:
    """The counts per class of a ``Memory autopsy:`` line (marker stripped); None when it is not one."""
    match = _SUMMARY.match(line)
    if match is None:
        return None
    return {m["cls"]: int(m["n"]) for m in _COUNT.finditer(match["text"].partition(" — ")[2])}


def actions_line(autopsy: RunAutopsy) -> str:
    """``Agent actions: 13 — memory write 9 · memory read 2 · command 2``, or that the agent exposes none."""
    if not autopsy.actions_exposed:
        return "Agent actions: none exposed by this agent"
    total = sum(autopsy.actions.values())
    if not total:
        return "Agent actions: none recorded"
    parts = " · ".join(f"{kind} {n}" for kind, n in autopsy.actions.most_common())
    return f"Agent actions: {total} — {parts}"
