"""A sloppy persona cannot change the agent's score unseen: ``max`` played with each typical LLM slip.

Each slip (``scripted/persona?slips=…``) must be refused with an error the model can act on — after which
the run ends with the clean run's grades — or recorded as a persona fault, out of the agent's score.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import ROOT, fast, kinds, make_config, play

from engine.commands import NextPhase
from engine.events import Event, PhaseStarted, TerminationReason
from engine.models.scripted_persona import SLIPS
from engine.persona_record import second_attempt
from engine.run.build import build_run
from engine.run.loop import Run
from engine.transcript import read_events

BENCHMARKS = ROOT / "benchmarks"
# how each slip shows up in the transcript: a refused tool call's error text, or the echo guard
NOTICED = {
    "grade_ahead": "was not asked since the last grade",
    "attempt2_first": "needs an attempt 1 first",
    "skip_edit": "does not hold the directed text",
    "skip_retell": "no message to the assistant since the last change carried",
    "echo": "echo guard",
    "skip_check": "ungraded checks",
}


def grades(run: Run) -> dict[str, float]:
    return {cid: e.effective for cid, e in run.state.evaluations.items() if not e.persona_fault}


async def play_max(tmp_path: Path, persona: str, **kwargs: Any) -> Run:
    config = make_config(
        tmp_path, {"max": {"benchmark": "max", "agent": "chatbot", "persona": persona}}, benchmarks=BENCHMARKS
    )
    run = await play(config, "max", **kwargs)
    assert run.termination is TerminationReason.FINISHED, run.state.reason
    return run


@pytest.fixture(scope="module")
async def clean(tmp_path_factory: pytest.TempPathFactory) -> dict[str, float]:
    run = await play_max(tmp_path_factory.mktemp("clean"), "scripted/persona")
    assert len(run.state.evaluations) == 36
    return grades(run)


def test_every_slip_has_a_test() -> None:
    assert set(NOTICED) == set(SLIPS)


@pytest.mark.parametrize("slip", SLIPS)
async def test_a_slip_is_refused_and_the_agents_grades_stay_the_clean_runs(
    tmp_path: Path, slip: str, clean: dict[str, float]
) -> None:
    run = await play_max(tmp_path, f"scripted/persona?slips={slip}")
    evts = list(read_events(run.run_dir / "transcript.jsonl"))
    noticed = [e.result for e in kinds(evts, "tool_called") if e.error] + [
        f"echo guard {e.detail}" for e in kinds(evts, "hook_fired")
    ]
    assert any(NOTICED[slip] in text for text in noticed), f"{slip} was never refused"
    faults = {cid for cid, e in run.state.evaluations.items() if e.persona_fault}
    assert len(run.state.evaluations) == len(clean)  # every check graded
    # the agent's grades are the clean run's; a grade that differs is set apart as a persona fault, or the
    # agent was told what it asks in other words (a Say line that carried the change the slip left untold)
    sent = [(e.n, e.text.replace(",", "")) for e in kinds(evts, "message_sent")]
    differs = {c: s for c, s in grades(run).items() if clean.get(c) != s}
    for check_id in differs:
        grade = run.state.evaluations[check_id]
        figures = re.findall(r"\d+(?:\.\d+)?", grade.expected.replace(",", ""))
        told = all(any(f in text for n, text in sent if n < grade.n) for f in figures)
        assert figures and told, f"{slip}: {check_id} changed from the clean run's grade unseen"
    # every grade that replaced an earlier one is counted, the attempt 2s after their attempt 1 among them
    replaced = [e for e in kinds(evts, "evaluation_logged") if e.replaces]
    record = run.state.persona_record
    assert record is not None and record.replaced_total == len(replaced)
    assert record.second_attempts == sum(1 for e in replaced if second_attempt(e))
    assert record.guards.get("echo_guard", 0) == len(kinds(evts, "hook_fired"))
    if slip == "skip_check":  # asked late, after the phase's edits: its premise no longer held
        assert faults
    else:
        assert not faults, f"{slip}: a refused slip leaves no persona fault"


async def test_a_skipped_chapter_becomes_persona_faults_out_of_the_agents_score(tmp_path: Path) -> None:
    class SkipChapter8:
        def on_event(self, run_id: str, event: Event) -> None:
            if isinstance(event, PhaseStarted) and event.chapter == "chapter8.md":
                holder["run"].command(NextPhase(force=True))

    holder: dict[str, Run] = {}
    config = make_config(tmp_path, {"max": {"benchmark": "max", "agent": "chatbot"}}, benchmarks=BENCHMARKS)
    run = build_run(config, "max", tune=fast)
    holder["run"] = run
    run.observers.append(SkipChapter8())
    assert await run.run() is TerminationReason.FINISHED
    faults = {cid: e.persona_fault for cid, e in run.state.evaluations.items() if e.persona_fault}
    assert "20.3" in faults and "health 3.1" in faults["20.3"]  # vitamin D stayed at 2000 IU in the sheet
    report = (config.results_path() / "report.md").read_text()
    assert "Persona faults" in report and "(20.3)" in report.split("Persona faults", 1)[1]
