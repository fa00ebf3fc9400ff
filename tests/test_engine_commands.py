"""Operator commands at engine level: applied between persona turns and recorded in the transcript."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from engine_helpers import FORGETFUL, TEST_BENCHMARKS, events, fast, kinds, make_config, scaled

from engine.commands import AddFact, EditFact, NewSession, NextPhase, Pause, PersonaNote, Resume
from engine.config import BuildError
from engine.events import Event, TerminationReason
from engine.placement.scheduler import Scheduler
from engine.run.build import build_run


async def _until(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    async with asyncio.timeout(scaled(timeout)):
        while not predicate():
            await asyncio.sleep(0.005)


async def test_every_operator_command_is_applied_and_recorded(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r", tune=fast)
    run.command(Pause())
    task = asyncio.create_task(run.run())
    await _until(lambda: run.state.status == "paused")
    turns = run.state.persona_turns_in_phase
    run.command(EditFact(sheet="pets", fact_id="1.3", text="Rex's vet is Dr Morgan on Cathedral Road"))
    run.command(AddFact(sheet="profile", category=1, text="Works night shifts at the Heath hospital"))
    run.command(PersonaNote(text="You are looping; tell the remaining facts."))
    run.command(NewSession())
    run.command(NextPhase(force=False))  # refused: the gate wants every pets fact told
    await _until(lambda: len(kinds(events(config, "r"), "operator")) >= 6)
    assert run.state.persona_turns_in_phase == turns  # nothing ran while paused
    assert run.state.sheets["pets"].find("1.3").text.endswith("Cathedral Road")  # type: ignore[union-attr]
    assert run.state.sheets["profile"].find("1.3") is not None
    notes = [m["content"] for m in run.state.persona_messages if m["role"] == "user"]
    assert any("You are looping" in n for n in notes) and any("Dr Morgan" in n for n in notes)
    assert run.adapter.context == []  # type: ignore[attr-defined]
    run.command(NextPhase(force=True))
    await _until(lambda: run.state.phase_index == 1)
    run.command(Resume())
    assert await task is TerminationReason.FINISHED
    actions = [(e.action, e.detail) for e in kinds(events(config, "r"), "operator")]
    names = [a for a, _ in actions]
    assert names[:6] == ["pause", "edit_fact", "add_fact", "persona_note", "new_session", "next_phase"]
    assert "refused" in actions[5][1]
    assert ("next_phase", "forced") in actions and names[-1] == "resume"
    assert any(e.by_operator for e in kinds(events(config, "r"), "session_switched"))


async def test_scheduler_runs_several_runs_on_one_loop(tmp_path: Path) -> None:
    runs = {f"r{i}": {"benchmark": "full", "agent": FORGETFUL} for i in range(4)}
    runs["c"] = {"benchmark": "full", "agent": "chatbot"}
    config = make_config(tmp_path, runs)
    scheduler = Scheduler(config, tune=fast)
    seen: list[str] = []
    scheduler.add_observer(type("Obs", (), {"on_event": lambda self, run_id, event: seen.append(run_id)})())
    for run_id in runs:
        await scheduler.start(run_id)
    results = await scheduler.wait()
    assert set(results.values()) == {TerminationReason.FINISHED}
    assert set(seen) == set(runs)
    view = scheduler.view("r2")
    assert view.status == "finished" and view.evaluations == 5 and view.total_phases == 3
    report = (config.results_path() / "report.md").read_text()
    assert report.count("## ") == 5


async def test_restart_from_scratch_and_view_of_a_stopped_run(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    scheduler = Scheduler(config, tune=fast)
    await scheduler.start("r")
    await scheduler.wait(["r"])
    assert Scheduler(config).view("r").status == "finished"
    await scheduler.restart("r")
    await scheduler.wait(["r"])
    assert len(kinds(events(config, "r"), "run_started")) == 1  # a fresh transcript
    assert (config.results_path() / "report.md").read_text().count("## ") == 2


async def test_an_edited_phase_not_yet_started_is_picked_up_and_a_broken_edit_is_refused(
    tmp_path: Path,
) -> None:
    bench_root = tmp_path / "benches"
    shutil.copytree(TEST_BENCHMARKS / "full", bench_root / "full")
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, benchmarks=bench_root)
    scheduler = Scheduler(config, tune=fast)
    await scheduler.start("r")
    run = scheduler.slots["r"].run
    assert run is not None
    run.command(Pause())
    await _until(lambda: run.state.status == "paused")
    chapter2 = bench_root / "full" / "chapter2.md"
    chapter2.write_text(chapter2.read_text().replace("busy week", "long trip to Skye"))
    await scheduler.reload(config)
    good = chapter2.read_text()
    chapter2.write_text(good.replace("Correct answer: 250 g.", ""))  # a check without an answer
    with pytest.raises(BuildError, match=r"chapter2.md:\d+: .*Correct answer.*goes on"):
        await scheduler.reload(config)
    assert scheduler.running("r")
    chapter2.write_text(good)
    run.command(Resume())
    assert (await scheduler.wait(["r"]))["r"] is TerminationReason.FINISHED
    said = [e.text for e in kinds(events(config, "r"), "message_sent")]
    assert any("long trip to Skye" in text for text in said)


async def test_every_command_says_what_became_of_it(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL}, "c": {"benchmark": "full", "agent": "chatbot"}},
    )
    scheduler = Scheduler(config, tune=fast)
    await scheduler.start("r")
    assert (await scheduler.command("r", Resume())).ok is False  # not paused: said so, nothing queued
    paused = await scheduler.command("r", Pause())
    assert paused.ok and "paused" in paused.message
    refused = await scheduler.command("r", EditFact(sheet="pets", fact_id="9.9", text="x"))
    assert not refused.ok and "no fact 9.9" in refused.message
    gated = await scheduler.command("r", NextPhase())
    assert not gated.ok and "untold facts" in gated.message
    edited = await scheduler.command(
        "r", EditFact(sheet="pets", fact_id="1.3", text="Rex's vet is Dr Morgan")
    )
    assert edited.ok and "now: Rex's vet is Dr Morgan" in edited.message
    assert (await scheduler.command("r", Resume())).message == "resumed"
    assert (await scheduler.wait(["r"]))["r"] is TerminationReason.FINISHED
    late = await scheduler.command("r", PersonaNote(text="too late"))
    assert not late.ok and "has finished" in late.message

    await scheduler.start("c")  # the chatbot has no sessions: the operator is told what really happens
    await scheduler.command("c", Pause())
    switched = await scheduler.command("c", NewSession())
    assert switched.ok and "has no sessions" in switched.message
    await scheduler.stop_all()


async def test_resume_of_a_run_that_is_not_playing_starts_it_from_its_checkpoint(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    scheduler = Scheduler(config, tune=fast)
    assert not (await scheduler.command("r", Pause())).ok  # never started: nothing to pause
    resumed = await scheduler.command("r", Resume())
    assert resumed.ok and scheduler.running("r")
    assert (await scheduler.wait(["r"]))["r"] is TerminationReason.FINISHED


def test_a_bad_run_config_shows_as_error_with_the_reason_when_loaded(tmp_path: Path) -> None:
    runs = {
        "good": {"benchmark": "full", "agent": FORGETFUL},
        "agent": {"benchmark": "full", "agent": "chatbott"},
        "model": {"benchmark": "full", "agent": "chatbot", "model": "scripted/recal"},
        "key": {"benchmark": "full", "agent": "chatbot", "sytem_prompt": "x"},
        "bench": {"benchmark": "ful", "agent": "chatbot"},
    }
    scheduler = Scheduler(make_config(tmp_path, runs), tune=fast)
    views = {run_id: scheduler.view(run_id) for run_id in runs}
    assert views["good"].status == "idle"
    assert {run_id for run_id, view in views.items() if view.status == "error"} == set(runs) - {"good"}
    assert "did you mean 'chatbot'" in views["agent"].reason
    assert "scripted/recal" in views["model"].reason
    assert "sytem_prompt" in views["key"].reason
    assert views["bench"].reason.startswith("runs.bench.benchmark")
    assert not (tmp_path / "results" / "agent").exists()  # checking writes nothing


async def test_a_pause_is_a_pause_a_run_stopped_and_resumed_three_times_has_one_report_entry(
    tmp_path: Path,
) -> None:
    """A stop the operator asks for (Ctrl-C, quit) writes no report entry: only the run's own end does."""
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    scheduler = Scheduler(config, tune=fast)
    sent: list[int] = []

    class Counter:
        def on_event(self, run_id: str, event: Event) -> None:
            if event.kind == "message_sent":
                sent.append(event.n)

    scheduler.add_observer(Counter())
    for stop in range(1, 4):
        await scheduler.start("r")
        await _until(lambda: len(sent) >= 3 * stop)  # noqa: B023 - awaited at once
        await scheduler.stop("r")
        assert (await scheduler.wait(["r"]))["r"] is TerminationReason.STOPPED
    report = config.results_path() / "report.md"
    assert not report.exists()  # three stops, no entry
    await scheduler.start("r")
    assert (await scheduler.wait(["r"]))["r"] is TerminationReason.FINISHED
    assert report.read_text().count("## ") == 1 and "Incomplete" not in report.read_text()
    assert len(kinds(events(config, "r"), "run_started")) == 4  # started once, resumed three times
