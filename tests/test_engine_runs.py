"""Whole scripted runs over the test benchmark `full`: phases, gates, JS, templates, fact edits, both
attempts, coverage, sessions, compaction, reports."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from engine_helpers import FORGETFUL, TEST_BENCHMARKS, events, fast, kinds, make_config, play

from engine.benchmark.templates import render_templates
from engine.events import TerminationReason
from engine.persona.notebook import ToolError
from engine.run.build import build_run


async def test_full_scenario_against_a_forgetful_agent(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    state = run.state
    assert state.finished and state.phases_started == 3
    # fact edits, a delete and an add that reuses the deleted id
    pets = state.sheets["pets"]
    assert pets.find("1.2").text == "Rex eats 250 g of dry food a day (the vet's advice)"  # type: ignore[union-attr]
    assert pets.find("2.2").text == "Two cherry shrimps joined the goldfish"  # type: ignore[union-attr]
    # the benchmark's own files are untouched
    assert "300 g" in (TEST_BENCHMARKS / "full" / "pets.md").read_text()
    # every check graded; after the new session the agent must search: attempt 2 counts half
    assert sorted(state.evaluations) == ["1.1", "2.1", "2.2", "2.3", "2.4"]
    second = state.evaluations["2.1"]
    assert (second.attempt, second.score, second.effective) == (2, 10.0, 5.0)
    assert state.evaluations["2.3"].effective == 10.0  # VOID: an honest "you didn't tell me"
    assert state.evaluations["1.1"].attempt == 1
    evts = events(config, "r")
    switched = kinds(evts, "session_switched")
    assert len(switched) == 1 and not switched[0].ignored
    assert [e.index for e in kinds(evts, "phase_started")] == [0, 1, 2]
    # templates are rendered in what the persona saw and said
    holiday = render_templates("{{FUTURE:2:weeks}}", state.start_date)
    assert any(holiday in e.text for e in kinds(evts, "message_sent"))
    assert "{{" not in "".join(e.text for e in kinds(evts, "phase_started"))
    report = (config.results_path() / "report.md").read_text()
    assert "r: full @ forgetful" in report
    assert "Check coverage: 5/5" in report
    assert "[5/10, 2nd attempt] (2.1)" in report
    assert "Average per type: HIST" in report


async def test_ignore_session_break_keeps_the_context(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "ignore_session_break": True}}
    )
    run = await play(config, "r")
    assert run.state.evaluations["2.1"].attempt == 1
    assert run.state.evaluations["2.1"].effective == 10.0
    switched = kinds(events(config, "r"), "session_switched")
    assert len(switched) == 1 and switched[0].ignored


async def test_chatbot_control_never_clears_its_context(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, {"c": {"benchmark": "full", "agent": "chatbot", "model": "scripted/recall"}}
    )
    run = await play(config, "c")
    assert run.termination is TerminationReason.FINISHED
    assert run.state.evaluations["2.1"].attempt == 1  # the "new session" was a no-op
    history = (config.results_path() / "c" / "agent" / "chatbot.jsonl").read_text().splitlines()
    assert len(history) == 2 * run.state.agent_seq


async def test_gates_block_next_phase_until_facts_are_told(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}})
    run = build_run(config, "r", tune=fast)
    await run._initialise()
    with pytest.raises(ToolError, match=r"untold facts in `pets`: 1.1, 1.2, 1.3, 2.1, 2.2"):
        await run.tool_next_phase()
    await run.tool_send_message(" ".join(f.text + "." for f in run.state.sheets["pets"].live_facts()))
    run.notebook.mark_told("pets", ["1.1", "1.2", "1.3", "2.1", "2.2"])
    assert (await run.tool_next_phase()).startswith("Phase 2/3")
    with pytest.raises(ToolError, match=r"`pets` 1.2 does not hold the directed text.*ungraded checks: 1.1"):
        await run.tool_next_phase()  # phase 2: its Edit/Add lines and its check gate it
    await run.tool_next_phase(force=True)
    with pytest.raises(ToolError, match=r"ungraded checks: 2.1, 2.2, 2.3, 2.4"):
        await run.tool_next_phase()
    assert "Phase" not in await run.tool_next_phase(force=True)
    assert run.state.finished
    await run.adapter.close()


async def test_persona_compaction_reinjects_profile_and_sheets(tmp_path: Path) -> None:
    config = make_config(
        tmp_path,
        {"r": {"benchmark": "full", "agent": FORGETFUL}},
        compaction={"max_tokens": 2500, "trim_to_tokens": 800},
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    compactions = kinds(events(config, "r"), "persona_compacted")
    assert compactions and all(c.tokens_after < c.tokens_before for c in compactions)
    note = run.state.persona_messages[0]["content"]
    assert "Your profile (current)" in note and "Kim Park, 41" in note
    assert "Sheet `pets`" in note and "250 g" in note  # the live sheet, edits included
    assert len(run.state.evaluations) == 5


async def test_appending_a_chapter_continues_a_finished_run(tmp_path: Path) -> None:
    bench_root = tmp_path / "benches"
    shutil.copytree(TEST_BENCHMARKS / "full", bench_root / "full")
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, benchmarks=bench_root)
    await play(config, "r")
    (bench_root / "full" / "chapter3.md").write_text(
        "## Epilogue\nSay that Rex passed his check-up.\n❓ 3.1 [RECALL] Who is Rex's vet? Correct answer: Dr Hughes.\n"
    )
    with open(bench_root / "full" / "KEY.md", "a") as key:
        key.write("\n## 3.1\nanswer: Dr Hughes.\nuses: pets 1.3\n")
    (bench_root / "full" / "benchmark.json").write_text(
        '{"chapters": ["chapter1.md", "chapter2.md", "chapter3.md"]}'
    )
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED
    assert "3.1" in run.state.evaluations and len(run.state.evaluations) == 6
    assert run.state.phases_started == 4
    assert (config.results_path() / "report.md").read_text().count("## ") == 2


async def test_agent_compactions_are_observed_and_reported(tmp_path: Path) -> None:
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL, "compact_every": 5}})
    run = await play(config, "r")
    observed = kinds(events(config, "r"), "agent_compacted")
    assert observed and len(run.state.agent_observations) == len(observed)
    assert "Agent compactions: " + str(len(observed)) in (config.results_path() / "report.md").read_text()


async def test_templates_are_rendered_in_sheets_and_instructions(tmp_path: Path) -> None:
    bench_root = tmp_path / "benches"
    shutil.copytree(TEST_BENCHMARKS / "full", bench_root / "full")
    pets = bench_root / "full" / "pets.md"
    pets.write_text(pets.read_text() + "2.3 The next tank clean is on {{FUTURE:3:days}}\n")
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, benchmarks=bench_root)
    run = await play(config, "r")
    said = " ".join(e.text for e in kinds(events(config, "r"), "message_sent"))
    assert render_templates("{{FUTURE:3:days}}", run.state.start_date) in said
    assert "{{" not in said
    system = run.notebook.system_prompt(run.bench.instructions, run.bench.time_master)
    assert render_templates("{{TODAY}}", run.state.start_date) in system and "{{" not in system


async def test_a_freed_id_reused_in_the_phase_that_told_the_old_fact_is_told_again(tmp_path: Path) -> None:
    bench_root = tmp_path / "benches"
    shutil.copytree(TEST_BENCHMARKS / "full", bench_root / "full")
    chapter = bench_root / "full" / "chapter1.md"
    text = chapter.read_text()
    # phase 1 tells the sheet (2.2 marked told), then deletes 2.2 and adds a fact under the freed id
    chapter.write_text(
        text.replace(
            "Tell the `pets` sheet.\n",
            "Tell the `pets` sheet.\n\nEdit pets 2.2: —\n\nAdd to pets category 2: A snail cleans the tank glass\n",
            1,
        )
    )
    config = make_config(tmp_path, {"r": {"benchmark": "full", "agent": FORGETFUL}}, benchmarks=bench_root)
    run = await play(config, "r")
    assert run.termination is TerminationReason.FINISHED, run.state.reason
    assert run.state.phases_started == 3 and run.state.persona_turns_in_phase < 50
