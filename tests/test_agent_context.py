"""The agent's context sizes kept as a series (issue 24): journaled with the run, and the report entry's
``Agent context:`` line (the size before the exam and the peak), omitted when the adapter reports none."""

from __future__ import annotations

import json
from pathlib import Path

from engine_helpers import FORGETFUL, events, make_config, play
from fixture_agents import MeasuredAgent

from engine.events import Event
from engine.report.entries import parse_report_entries
from engine.report.writer import agent_context_line
from engine.state import ContextReading, load_state

PER_MESSAGE = MeasuredAgent.TOKENS_PER_MESSAGE


def _brought_into_the_exam(evts: list[Event], chapter: str) -> int:
    """What ``MeasuredAgent`` held once it answered the exam's first message: two messages (the message and its
    reply) per message sent since the last new session."""
    held, exam = 0, False
    for event in evts:
        if event.kind == "session_switched" and not event.ignored:
            held = 0
        elif event.kind == "phase_started" and event.chapter == chapter:
            exam = True
        elif event.kind == "message_sent":
            held += 2
            if exam:
                return held * PER_MESSAGE
    raise AssertionError("the exam was not reached")


async def test_the_agents_context_sizes_are_kept_and_the_entry_gives_the_size_before_the_exam_and_the_peak(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": "fixture_agents:MeasuredAgent"}})
    run = await play(config, "r")
    readings = run.state.agent_context
    assert readings and all(a.tokens != b.tokens for a, b in zip(readings, readings[1:], strict=False))
    assert all(a.n <= b.n for a, b in zip(readings, readings[1:], strict=False))
    evts = events(config, "r")
    before = _brought_into_the_exam(evts, "chapter2.md")  # the exam, opened by a new session
    peak = max(readings, key=lambda r: r.tokens)
    sent = [e for e in evts if e.kind == "message_sent"]
    switch = next(e.n for e in evts if e.kind == "session_switched")
    assert peak.tokens == 2 * PER_MESSAGE * max(
        sum(1 for e in sent if e.n < switch), sum(1 for e in sent if e.n > switch)
    )
    assert 0 < before < peak.tokens

    text = (config.results_path() / "report.md").read_text(encoding="utf-8")
    line = f"📊 Agent context: {before:,} tokens before the exam · peak {peak.tokens:,} (phase {peak.phase + 1})\n"
    assert line in text
    entry = parse_report_entries(text)[0]
    assert (entry.context_before_exam, entry.context_peak) == (before, peak.tokens)

    run_dir = config.results_path() / "r"
    assert "agent_context" not in json.loads((run_dir / "state.json").read_text())  # in the journal
    saved = load_state(run_dir / "state.json")
    assert saved is not None and saved.agent_context == readings


async def test_no_sizes_no_line_and_an_exam_not_reached_is_said(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = await play(config, "r")
    assert not run.state.agent_context and agent_context_line(run.bench, run.state) == ""
    assert "Agent context" not in (config.results_path() / "report.md").read_text(encoding="utf-8")
    run.state.agent_context = [
        ContextReading(n=3, phase=0, tokens=900),
        ContextReading(n=9, phase=1, tokens=4200),
    ]
    run.state.sent_log = [sent for sent in run.state.sent_log if sent.phase < 2]  # ended before chapter2.md
    line = agent_context_line(run.bench, run.state)
    assert line == "Agent context: — before the exam (not reached) · peak 4,200 (phase 2)"
    entry = parse_report_entries(f"## 2026-08-19 10:00 UTC — r: full @ forgetful\n📊 {line}\n")[0]
    assert (entry.context_before_exam, entry.context_peak) == (None, 4200)
