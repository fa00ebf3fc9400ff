"""How the scripted persona reads a phase: its lines as actions, in the order of the text.

``Edit <sheet> <id>: <text>`` and ``Add to <sheet> category <n>: <text>`` directives, sheets to tell (named
in backticks), ``Say``/``Tell`` lines (sent without the verb), ``HH:MM`` anchors (a ``wait`` first) and
check lines (``❓ <id> … Correct answer: …``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

CHECK = re.compile(
    r"❓\s*(?P<id>\d+(?:\.\d+)+)\s*(?P<types>(?:\[[^\]]*\]\s*)*)(?P<q>.*?)\s*Correct answer:\s*(?P<a>.*)$"
)
EDIT = re.compile(r"^Edit\s+(?P<sheet>[\w-]+)\s+(?P<id>\d+\.\d+)\s*:\s*(?P<text>.+)$")
ADD = re.compile(r"^Add to\s+(?P<sheet>[\w-]+)\s+category\s+(?P<cat>\d+)\s*:\s*(?P<text>.+)$")
ANCHOR = re.compile(r"^(?P<time>\d{1,2}:\d{2})\s+(?P<rest>.*)$")
SAY = re.compile(
    r"^(?:Say|Tell|Mention|Reply|Answer|Write)\b(?:\s+(?:the assistant|them))?(?:\s+that)?[\s:,]*",
    re.IGNORECASE,
)
BACKTICK = re.compile(r"`([\w-]+)`")


@dataclass
class Action:
    kind: str  # edit, add, tell, say, wait, check
    args: dict[str, Any] = field(default_factory=dict)


def joined_lines(text: str) -> list[str]:
    """Lines with a check's continuation lines (indented, or up to its ``Correct answer:``) joined."""
    lines: list[str] = []
    for raw in text.splitlines():
        previous = lines[-1] if lines else ""
        if "❓" in previous and "Correct answer:" not in previous and raw.strip():
            lines[-1] = previous.rstrip() + " " + raw.strip()
        else:
            lines.append(raw)
    return lines


def plan_phase(phase_text: str, sheets: set[str]) -> list[Action]:
    actions: list[Action] = []
    for raw in joined_lines(phase_text)[1:]:
        line = raw.strip().lstrip("-•* ").strip()
        if not line:
            continue
        anchor = ANCHOR.match(line)
        if anchor:
            actions.append(Action("wait", {"until": anchor.group("time")}))
            line = anchor.group("rest").strip().lstrip("—–-").strip()
        check = CHECK.search(line)
        if check:
            actions.append(
                Action(
                    "check",
                    {"id": check.group("id"), "q": check.group("q").strip(), "a": check.group("a").strip()},
                )
            )
            continue
        if m := EDIT.match(line):
            actions.append(
                Action(
                    "edit", {"sheet": m.group("sheet"), "id": m.group("id"), "text": m.group("text").strip()}
                )
            )
            continue
        if m := ADD.match(line):
            actions.append(
                Action(
                    "add",
                    {
                        "sheet": m.group("sheet"),
                        "category": int(m.group("cat")),
                        "text": m.group("text").strip(),
                    },
                )
            )
            continue
        named = [s for s in BACKTICK.findall(line) if s in sheets and s != "profile"]
        for sheet in named:
            actions.append(Action("tell", {"sheet": sheet}))
        if named or line.startswith("Before next_phase"):
            continue
        if SAY.match(line) or anchor:
            text = SAY.sub("", line, count=1).strip()
            if text and not text.endswith(":"):  # "ask about it:" introduces the lines below
                actions.append(Action("say", {"text": text[0].upper() + text[1:]}))
    return actions
