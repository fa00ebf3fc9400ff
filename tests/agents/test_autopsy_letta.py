"""The memory autopsy on a real Letta Code (issue 33, 34): each class of memory failure planted in its MemFS with
its own ``Read``/``Write``/``Edit`` and committed with its own ``Bash`` (``scripted/agent?plan=…``), named by the
report entry with the file and line; the answer with nothing to look up said "not decidable". Marked ``agents``
(slow: a Letta Code call per message)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from autopsy_runs import PLANTED, memory_line, play_planted

from adapters.local.install import install_letta

pytestmark = pytest.mark.agents


@pytest.mark.parametrize("plan", sorted(PLANTED))
async def test_a_planted_memory_failure_is_named_with_its_file_and_line(tmp_path: Path, plan: str) -> None:
    install_letta()
    entry, actions = await play_planted(tmp_path, "letta", plan)
    line = memory_line(entry, "3.1")
    assert line.startswith(PLANTED[plan] + " — "), line
    assert re.search(r"\b(MEMORY\.md|notes\.md):\d+", line), line
    undecided = "invented — " if plan == "invent" else "not decidable — "
    assert memory_line(entry, "3.3").startswith(undecided), entry.text()
    # its memory writes, read from its conversation's transcript, and the commits that make them its memory
    writes = [a for a in actions if a.tool in ("Write", "Edit") and a.action == "memory write"]
    assert writes and {a.target for a in writes} <= {"MEMORY.md", "notes.md"}, actions
    assert any(a.tool == "Bash" and a.summary.startswith("git -C ") for a in actions), actions
    assert any(line.startswith("Agent actions: ") and "memory write" in line for line in entry.lines)
