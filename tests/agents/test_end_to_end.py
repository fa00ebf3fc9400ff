"""Whole headless runs of a small benchmark against each real agent (Hermes, OpenClaw), through the CLI.

The scripted persona plays ``tests/benchmarks/agent_smoke`` (two phases, a fact saved with the agent's own
memory tool, a sheet told in context, a ``bench.newSession()``) against the real agent on ``scripted/agent``.
Checked: exit code 0, a report entry with full check coverage, the memory snapshots, the fact recalled from
memory in the new conversation, and no agent process left behind. Marked ``agents`` (slow: real gateways).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from adapters.install import install_hermes, install_openclaw

pytestmark = pytest.mark.agents

ROOT = Path(__file__).resolve().parent.parent.parent
BENCH = ROOT / "tests" / "benchmarks" / "agent_smoke"
INSTALLERS: dict[str, Callable[[], object]] = {"hermes": install_hermes, "openclaw": install_openclaw}


def _config(tmp_path: Path, agent: str) -> Path:
    config = {
        "persona": {"model": "scripted/persona"},
        "runs": {"smoke": {"benchmark": str(BENCH), "agent": agent, "model": "scripted/agent"}},
    }
    path = tmp_path / "config.jsonc"
    path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return path


def _processes_under(folder: Path) -> list[str]:
    """Live processes (other than this one) whose working directory or environment points into ``folder``."""
    marker = str(folder)
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
            environ = (entry / "environ").read_bytes().decode("utf-8", errors="replace")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", errors="replace")
        except OSError:  # gone meanwhile, or not ours to read
            continue
        if cwd.startswith(marker) or marker in environ:
            found.append(f"{entry.name}: {cmdline.strip()[:200]}")
    return found


@pytest.mark.parametrize("agent", ["hermes", "openclaw"])
def test_scripted_run_end_to_end(agent: str, tmp_path: Path) -> None:
    INSTALLERS[agent]()
    config = _config(tmp_path, agent)

    # `mmb-tui run --headless` as a user runs it (a subprocess: the headless printer binds sys.stdout once)
    done = subprocess.run(
        [sys.executable, "-m", "mmb_tui.cli", "--config", str(config), "run", "smoke", "--headless"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    out = done.stdout
    assert done.returncode == 0, (out + done.stderr)[-4000:]
    assert "ended: finished" in out  # the headless line "⏹️ run ended: finished"
    assert "🔄" in out  # the new agent session of phase 2 (the adapter's start_new_conversation)

    report = (tmp_path / "results" / "report.md").read_text(encoding="utf-8")
    assert f"smoke: agent_smoke @ {agent}" in report
    assert "Check coverage: 3/3" in report
    assert "Agent compactions:" in report

    run_dir = tmp_path / "results" / "smoke"
    memory = run_dir / "memory"
    assert sorted(p.name for p in memory.iterdir()) == ["before-session-phase-2", "end"]
    # the fact the agent saved with its own memory tool in phase 1 ...
    assert "4417" in (memory / "before-session-phase-2" / "MEMORY.md").read_text(encoding="utf-8")
    # ... is what it answers from memory in the new conversation of phase 2 (the context is gone)
    state = json.loads((run_dir / "state.json").read_text(encoding="utf-8"))
    evaluations = state["evaluations"]
    assert set(evaluations) == {"1.1", "2.1", "2.2"}
    assert evaluations["2.1"]["score"] == 10, evaluations["2.1"]

    assert _processes_under(tmp_path) == []
