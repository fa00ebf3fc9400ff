"""What the memory autopsy's real-agent tests share (issue 33): a run of ``tests/benchmarks/memory_autopsy``
against a real agent on ``scripted/agent?plan=…`` (one class of memory failure planted in its own memory with
its own tools), played in process, and its report entry read back."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_helpers import scaled
from engine_helpers import TEST_BENCHMARKS, make_config

from engine.events import AgentActed, TerminationReason
from engine.report.parse import ReportEntry, parse_report_entries
from engine.run.build import build_run
from engine.run.parts import RunSettings
from engine.transcript import read_events

PLANTED = {  # plan -> the class the entry must name for 3.1 (the locker code after its change)
    "skip": "never written",
    "revert": "lost",
    "twice": "diverged",
    "ignore": "unused",
    "invent": "invented",
}


def _quick(settings: RunSettings) -> None:
    settings.fault_backoff = 0.5


async def play_planted(tmp_path: Path, agent: str, plan: str) -> tuple[ReportEntry, list[AgentActed]]:
    """The run's report entry and the agent's actions recorded in its transcript."""
    run_config = {"benchmark": "memory_autopsy", "agent": agent, "model": f"scripted/agent?plan={plan}"}
    config = make_config(tmp_path, {"planted": run_config}, TEST_BENCHMARKS)
    run = build_run(config, "planted", tune=_quick)
    ended = await asyncio.wait_for(run.run(), scaled(400))
    assert ended is TerminationReason.FINISHED, run.state.reason
    results = config.results_path()
    entries = parse_report_entries((results / "report.md").read_text(encoding="utf-8"))
    transcript = results / "planted" / "transcript.jsonl"
    actions = [e for e in read_events(transcript) if isinstance(e, AgentActed)]
    return entries[-1], actions


def memory_line(entry: ReportEntry, check_id: str) -> str:
    """The memory autopsy's line under an imperfect answer ("<class> — <evidence>")."""
    found = {a.check_id: a.memory for a in entry.imperfect}
    assert check_id in found, f"{check_id} is not among the imperfect answers: {entry.text()}"
    return found[check_id]
