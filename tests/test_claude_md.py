"""``CLAUDE.md`` is where the seed sends a coding agent for the rules of writing a benchmark; the rules are
AGENTS.md's, so CLAUDE.md is a link to it (one source, never a copy that drifts)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_claude_md_is_a_link_to_agents_md() -> None:
    claude = ROOT / "CLAUDE.md"
    assert claude.is_symlink(), "CLAUDE.md must be a symlink to AGENTS.md, not a copy"
    assert os.readlink(claude) == "AGENTS.md"  # relative: it resolves in any checkout
    assert claude.resolve() == (ROOT / "AGENTS.md").resolve()
    assert claude.read_text(encoding="utf-8") == (ROOT / "AGENTS.md").read_text(encoding="utf-8")
    assert "## Writing benchmarks" in claude.read_text(encoding="utf-8")
