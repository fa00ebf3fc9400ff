"""The memory autopsy on a real Hermes (issue 33): each class of memory failure planted in its own memory
files with its own ``memory`` tool (``scripted/agent?plan=…``), named by the report entry with the file and line;
the answer with nothing to look up said "not decidable". Marked ``agents`` (slow: a real gateway per run)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from autopsy_runs import PLANTED, memory_line, play_planted

from adapters.local.install import install_hermes

pytestmark = pytest.mark.agents


@pytest.mark.parametrize("plan", sorted(PLANTED))
async def test_a_planted_memory_failure_is_named_with_its_file_and_line(tmp_path: Path, plan: str) -> None:
    install_hermes()
    entry, actions = await play_planted(tmp_path, "hermes", plan)
    line = memory_line(entry, "3.1")
    assert line.startswith(PLANTED[plan] + " — "), line
    assert re.search(r"\b(MEMORY|USER)\.md:\d+", line), line
    # the not-decidable case: a colour, no value to look up in any memory, never a guess (an invented
    # answer to it is named as such)
    undecided = "invented — " if plan == "invent" else "not decidable — "
    assert memory_line(entry, "3.3").startswith(undecided), entry.text()
    # its memory writes are in the transcript, read from its own session store
    writes = [a for a in actions if a.tool == "memory" and a.action == "memory write"]
    assert writes and {a.target for a in writes} <= {"MEMORY.md", "USER.md"}
    assert any(line.startswith("Agent actions: ") and "memory write" in line for line in entry.lines)
