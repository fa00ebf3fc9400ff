"""The report says what can be trusted (issue 21, points 6 and 14): a persona line counted while the run plays
(refused calls by tool, guard trips, regrades, faults), a context line (cleared by a new session, by the agent's
compaction, or never: in-context recall), and a memory score beside the headline with an amnesiac's beside it."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from engine_helpers import FORGETFUL, ROOT, events, headless_command, make_config, play

from engine.benchmark.check_kinds import kinds_of
from engine.benchmark.model import Check
from engine.benchmark.validate import load_benchmark
from engine.config import Config
from engine.events import (
    AgentCompacted,
    EvaluationLogged,
    HookFired,
    JudgeGraded,
    SessionSwitched,
    ToolCalled,
)
from engine.models.rules_judge import Verdict
from engine.persona_record import PersonaRecord, PersonaTally, SessionMark, second_attempt
from engine.report.entries import ReportEntry, parse_report_entries
from engine.report.filter import EntryFilter
from engine.report.trust import (
    amnesiac_grades,
    amnesiac_part,
    clearings,
    context_line,
    memory_line,
    persona_line,
)
from engine.report.writer import format_entry
from engine.run.build import build_run
from engine.run.loop import Run
from engine.state import RunState, load_state
from engine.transcript import read_events

SLIPS = "scripted/persona?slips=grade_ahead,attempt2_first,echo,skip_retell"
# the test benchmark ``full``: check 1.1 in phase 2; 2.1, 2.2, 2.3 [VOID], 2.4 in phase 3, after a new session
FULL = ROOT / "tests" / "benchmarks" / "full"
# written the seed's way: no [TYPE] tags, no KEY.md; 1.1 before a new session, 3.1-3.7 after it, 3.6 never told
SEED = ROOT / "tests" / "benchmarks" / "seed_untagged"


def _entry(config: Config) -> ReportEntry:
    return parse_report_entries((config.results_path() / "report.md").read_text())[-1]


def _line(text: str, prefix: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("📊 " + prefix)).removeprefix("📊 ")


async def test_the_persona_line_counts_what_the_transcript_shows(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "persona": SLIPS}})
    run = await play(config, "r")
    seen = events(config, "r")
    refused = Counter(e.name for e in seen if isinstance(e, ToolCalled) and e.error)
    guards = Counter(e.hook for e in seen if isinstance(e, HookFired))
    assert refused["log_evaluation"] and guards["echo_guard"]  # the slips were played, and refused
    record = run.state.persona_record
    assert record is not None and record.since == 0
    assert (record.refused, record.guards) == (dict(refused), dict(guards))
    entry = _entry(config)
    calls = run.meter.get("persona").calls
    assert entry.persona_counts == {
        "model calls": calls,
        "refused calls": sum(refused.values()),
        "guard trips": sum(guards.values()),
        # every later grade was an attempt 2 after its attempt 1: each one counted (issue 31)
        "replaced grades": sum(1 for e in seen if isinstance(e, EvaluationLogged) and e.replaces),
        "persona faults": len(entry.persona_faults),
    }
    assert entry.refused_calls == dict(refused)
    saved = load_state(config.results_path() / "r" / "state.json")  # kept in state.json, not journaled
    assert saved is not None and saved.persona_record == record


async def test_a_new_session_that_clears_the_context_puts_a_memory_score_beside_the_headline(
    tmp_path: Path,
) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = await play(config, "r")
    switch = next(e for e in events(config, "r") if isinstance(e, SessionSwitched))
    text = (config.results_path() / "report.md").read_text()
    assert _line(text, "Context:") == (
        f"Context: cleared by a new session at phase 3 [transcript #{switch.n}];"
        " 1 check graded before it measures in-context recall"
    )
    exam = [run.state.evaluations[c] for c in ("2.1", "2.2", "2.3", "2.4")]
    assert all(e.n > switch.n for e in exam) and run.state.evaluations["1.1"].n < switch.n
    memory = sum(e.effective for e in exam) / 4
    entry = _entry(config)
    assert (entry.memory, entry.memory_checks, entry.amnesiac) == (round(memory, 2), 4, 2.5)  # 2.3 is VOID
    assert entry.context_cleared is True
    lines = text.splitlines()  # beside the headline, which is as it was
    assert lines[1].startswith("📊 Score: ") and lines[2].startswith("📊 Memory: ")
    assert entry.score == round(sum(e.effective for e in run.state.evaluations.values()) / 5, 2)


async def test_chatbot_keeps_its_context_so_the_run_measures_in_context_recall(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}}
    )
    await play(config, "r")
    switch = next(e for e in events(config, "r") if isinstance(e, SessionSwitched))
    text = (config.results_path() / "report.md").read_text()
    assert _line(text, "Context:") == (
        "Context: never cleared: this run measures in-context recall · the new session at phase 3"
        f" [transcript #{switch.n}] kept it (this agent's new session keeps its history)"
    )
    assert _line(text, "Memory:") == "Memory: — (no check was asked after the agent's context was cleared)"
    entry = _entry(config)
    assert (entry.memory, entry.memory_checks, entry.context_cleared) == (None, 0, False)


async def test_the_agents_compaction_clears_the_context_too(tmp_path: Path) -> None:
    run_cfg = {"benchmark": "full", "agent": FORGETFUL, "ignore_session_break": True, "compact_every": 3}
    config = make_config(tmp_path, {"r": run_cfg})
    run = await play(config, "r")
    compactions = run.state.agent_observations
    assert compactions
    line = _line((config.results_path() / "report.md").read_text(), "Context:")
    last = max(
        (o for o in compactions if o.n < max(e.n for e in run.state.evaluations.values())), key=lambda o: o.n
    )
    assert line.startswith(
        f"Context: cleared by the agent's compaction at phase {last.phase_index + 1} [transcript #{last.n}]"
    )
    assert line.endswith("] ignored (ignore_session_break)")  # the benchmark's new session, not played


async def test_on_an_untagged_seed_benchmark_the_amnesiac_passes_its_never_told_check(tmp_path: Path) -> None:
    """Issue 31, item 5: the baseline grades the amnesiac's answer to each check, not the check's tags."""
    config = make_config(tmp_path, {"r": {"benchmark": "seed_untagged", "agent": FORGETFUL}})
    run = await play(config, "r")
    bench = load_benchmark(SEED)
    assert not any(c.types for c in bench.checks())
    switch = next(e for e in events(config, "r") if isinstance(e, SessionSwitched))
    exam = [c.id for c in bench.checks() if run.state.evaluations[c.id].n > switch.n]
    assert exam == ["3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7"]
    text = (config.results_path() / "report.md").read_text()
    assert _line(text, "Memory:").endswith(
        f"· an agent that remembers nothing: {10 / 7:.2f}/10 (passes 1 of 7: 3.6)"  # "you never told me …"
    )
    entry = _entry(config)
    assert (entry.amnesiac, entry.memory_checks) == (round(10 / 7, 2), 7)
    # the kinds inferred, marked wherever the entry shows them, and read back as the kinds they are
    per_type = _line(text, "Average per type:")
    assert per_type.startswith("Average per type: AGG~ ") and "VOID~ 10.00 (1)" in per_type
    assert per_type.endswith("(~: kinds inferred from the questions and answers of untagged checks)")
    assert set(entry.type_averages) == {"RECALL", "AGG", "NEG", "VOID", "HIST", "SERIES"}
    assert entry.type_averages["VOID"] == run.state.evaluations["3.6"].effective == 10
    checks = {c.id: c for c in bench.checks()}
    assert entry.imperfect and all(a.types == kinds_of(checks[a.check_id]).shown() for a in entry.imperfect)
    assert [a.types for a in entry.imperfect if a.check_id == "3.5"] == [["AGG~", "NEG~"]]
    wanted = EntryFilter.parse("type:AGG")
    assert wanted.matches(entry)
    listed = [a.check_id for a in wanted.answers_of(entry)[0]]
    assert listed == [a.check_id for a in entry.imperfect if "AGG" in kinds_of(checks[a.check_id]).types]
    assert "3.3" in listed and "3.1" not in listed


def test_the_amnesiac_is_graded_by_the_rules_judge_whatever_the_tags_say() -> None:
    def check(cid: str, answer: str, types: list[str] | None = None) -> Check:
        return Check(id=cid, types=types or [], question="What is the gate code?", answer=answer)

    checks = [
        check("1.1", "4417."),
        check("1.2", "You never told me the gate code."),  # untagged: passed
        check("1.3", "you didn't tell me", ["RECALL"]),  # tagged wrong: still passed
        check("1.4", "4417.", ["VOID"]),  # tagged VOID, a code to give: 0
    ]
    assert amnesiac_grades(checks) == {"1.1": 0.0, "1.2": 10.0, "1.3": 10.0, "1.4": 0.0}
    assert amnesiac_part(checks) == "5.00/10 (passes 2 of 4: 1.2, 1.3)"
    assert amnesiac_part(checks[:1]) == "0.00/10 (passes 0 of 1)"
    many = [check(f"2.{n}", "you never told me") for n in range(1, 9)]
    assert amnesiac_part(many) == "10.00/10 (passes 8 of 8: 2.1, 2.2, 2.3, 2.4, 2.5, 2.6 and 2 more)"


def test_a_part_of_an_answer_the_amnesiac_gets_is_named_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """A judge may give part of a two-part answer to "I don't know" (none of the shipped checks gets one)."""
    given = {"1.1": 0.0, "1.2": 5.0, "1.3": 10.0}
    monkeypatch.setattr("engine.report.trust.judge", lambda q, a, r: Verdict(given[q], False, "parts"))
    checks = [Check(id=cid, question=cid, answer="x") for cid in given]
    assert amnesiac_part(checks) == "5.00/10 (passes 1 of 3: 1.3; partly 1.2)"


def _bench_grades(scores: dict[str, tuple[float, int]]) -> dict[str, EvaluationLogged]:
    """Grades of the ``full`` benchmark's checks: check id -> (score, transcript number)."""
    return {
        cid: EvaluationLogged(check_id=cid, score=s, attempt=1, effective=s, n=n)
        for cid, (s, n) in scores.items()
    }


def _session(n: int, phase: int, **extra: Any) -> PersonaRecord:
    return PersonaRecord(sessions=[SessionMark(n=n, phase_index=phase, **extra)], sessions_total=1)


def test_the_memory_score_counts_from_the_last_clearing_before_the_last_grade() -> None:
    bench = load_benchmark(FULL)
    grades = _bench_grades({"1.1": (10, 10), "2.1": (10, 50), "2.2": (0, 60), "2.3": (10, 70)})  # 2.4: never
    session = _session(40, 2)
    late = AgentCompacted(phase_index=2, n=90)  # after the last grade: it cleared nothing the exam saw
    cleared = clearings(session, [late])
    line = memory_line(bench, grades, {}, None, cleared)
    # 2.1-2.4 after the session (2.4 ungraded, in a phase that began after it: 0); 1.1 before it
    assert line == (
        "Memory: 5.00/10 over 4 checks asked after the context was last cleared (graded 3, ungraded 1 counted"
        " as 0) · an agent that remembers nothing: 2.50/10 (passes 1 of 4: 2.3)"  # 2.3: "you never told me"
    )
    mid = AgentCompacted(
        phase_index=2, n=55
    )  # mid-exam: only the checks after it (2.4's phase began before it)
    line = memory_line(bench, grades, {}, None, clearings(session, [mid, late]))
    assert line.startswith(
        "Memory: 5.00/10 over 2 checks asked after the context was last cleared (graded 2,"
    )
    assert context_line(session, clearings(session, [mid, late]), list(grades.values())) == (
        "Context: cleared by the agent's compaction at phase 3 [transcript #55]; 2 checks graded before it"
        " measure in-context recall · earlier also by a new session at phase 3 [transcript #40] · after the last"
        " graded check by the agent's compaction at phase 3 [transcript #90]"
    )
    grades["2.2"].persona_fault = "pets 1.2 never sent"  # left out, as from the headline
    judged = {"2.1": JudgeGraded(check_id="2.1", evaluation_n=50, judge="j", score=0)}
    line = memory_line(bench, grades, judged, "judge", cleared)  # under the judge's grades, as the headline
    assert line.startswith(
        "Memory: 0.00/10 over 2 of 4 checks asked after the context was last cleared (graded 1, ungraded 1"
        " counted as 0, persona faults 1 excluded, not graded by the judge 1 excluded) · an agent that"
        " remembers nothing: 0.00/10 (passes 0 of 2)"  # 2.3, the never-told check, lacks a judge grade
    )
    assert memory_line(bench, grades, {}, None, clearings(None, [late])).startswith("Memory: — (no check")


def test_a_run_from_before_the_counts_says_so() -> None:
    assert context_line(None, [], []) == (
        "Context: never cleared: this run measures in-context recall · new sessions not recorded (a run from"
        " before they were)"
    )
    assert persona_line(None, {"persona": {"calls": 7}}, 1) == (
        "Persona reliability: model calls 7 · persona faults 1 · refused calls, guard trips and replaced grades"
        " not recorded"
    )
    state = RunState(run_id="r", benchmark="full", agent="x", start_date=date(2026, 1, 1))
    tally = PersonaTally(state, clears=True)
    tally.on_event("r", ToolCalled(name="next_phase", error=True, n=120))  # resumed with this code at #120
    assert state.persona_record is not None and state.persona_record.since == 120
    assert persona_line(state.persona_record, {}, 0).endswith("counted from transcript #120")
    ignored = _session(5, 1, ignored=True)
    assert context_line(ignored, clearings(ignored, []), []).endswith(
        "the new session at phase 2 [transcript #5] ignored (ignore_session_break)"
    )


def test_a_regrade_is_not_an_attempt_2_after_its_attempt_1() -> None:
    def graded(attempt: int, replaces: str) -> EvaluationLogged:
        return EvaluationLogged(check_id="1.1", score=5, attempt=attempt, effective=5, replaces=replaces)

    record = PersonaRecord()
    for e in (
        graded(2, "0/10, attempt 1 (#5)"),
        graded(1, "10/10, attempt 1 (#5)"),
        graded(1, "5/10, attempt 2 (#9)"),
    ):
        record.note(e, 0, True)
    assert record.replaced == 2 and second_attempt(graded(2, "0/10, attempt 1 (#5)"))


def _built(config: Config) -> Run:
    run = build_run(config, "r")
    run.recorder.transcript.close()
    if run.lock is not None:
        run.lock.release()
    return run


def test_a_persona_fault_shows_the_judges_grade_too(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, judge={"model": "scripted/judge"}
    )
    run = _built(config)
    fault = "pets 1.2: '250 g' never sent"
    faulted = EvaluationLogged(check_id="2.1", score=0, attempt=1, effective=0, n=42, persona_fault=fault)
    run.state.evaluations = {"2.1": faulted}
    run.state.judge_grades = {
        "2.1": JudgeGraded(
            check_id="2.1", evaluation_n=42, judge="scripted/judge", score=10, comment="parts 1/1"
        )
    }
    run.state.finished = True
    entry = format_entry(run.summary())
    assert f"| fault: {fault} | judge: [10/10] parts 1/1 [transcript #42]" in entry
    parsed = parse_report_entries(entry)[0]
    (shown,) = parsed.persona_faults
    assert (shown.fault, shown.judge_score, shown.judge, shown.transcript_n) == (fault, 10.0, "parts 1/1", 42)
    assert "Score: 0.00/10 by the persona's grades over 4 of 5 planned checks" in entry  # still not counted


def _kill_config(folder: Path) -> Path:
    shutil.copytree(ROOT / "benchmarks" / "demo", folder / "benchmarks" / "demo")
    config = {
        "models": {"slow-persona": {"model": SLIPS, "latency": 0.02}},
        "persona": {"model": "slow-persona"},
        "runs": {"r": {"benchmark": "demo", "agent": "chatbot", "model": "scripted/recall"}},
    }
    (folder / "config.jsonc").write_text(json.dumps(config))
    return folder / "config.jsonc"


def _play_killed(config: Path, kill_after: list[int]) -> RunState:
    """Plays run ``r`` in a subprocess, killed with SIGKILL once the transcript has grown by each of
    ``kill_after`` events (a resume each time), then to its end; its last state."""
    command = headless_command(config)
    transcript = config.parent / "results" / "r" / "transcript.jsonl"

    def length() -> int:
        return transcript.read_bytes().count(b"\n") if transcript.exists() else 0

    for count in [*kill_after, 10**9]:
        process = subprocess.Popen(
            command, cwd=config.parent, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        target, deadline = length() + count, time.monotonic() + 120
        while process.poll() is None and time.monotonic() < deadline:
            if length() >= target:
                process.send_signal(signal.SIGKILL)
                break
            time.sleep(0.01)
        process.wait(timeout=120)
    state = load_state(transcript.parent / "state.json")
    assert state is not None and state.finished
    return state


def test_the_counts_survive_kills_each_event_counted_once(tmp_path: Path) -> None:
    """A run whose persona slips, killed at random points and resumed, counts what an uninterrupted one counts
    (the events after a checkpoint are lost with their counts, and counted again when replayed)."""
    rng = random.Random(20261202)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    reference = _play_killed(_kill_config(tmp_path / "a"), [])
    killed = _play_killed(_kill_config(tmp_path / "b"), [rng.randint(10, 60) for _ in range(4)])
    assert reference.persona_record is not None and killed.persona_record is not None
    assert reference.persona_record.refused_total and reference.persona_record.guards_total

    def counts(
        record: PersonaRecord,
    ) -> dict[str, Any]:  # transcript numbers shift by the resumed runs' starts
        return record.model_dump(exclude={"sessions"}) | {
            "sessions": [s.phase_index for s in record.sessions]
        }

    assert counts(killed.persona_record) == counts(reference.persona_record)
    assert killed.usage["persona"]["calls"] == reference.usage["persona"]["calls"]
    resumed = [
        e
        for e in read_events(tmp_path / "b" / "results" / "r" / "transcript.jsonl")
        if e.kind == "run_started"
    ]
    assert len(resumed) > 1  # it was killed mid-run
